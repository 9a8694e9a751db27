// What `sluice topo show` prints about one machine, and sl.machines.*:describe()
// returns: its devices and links with their path classes (topology_text),
// then per GPU the NICs by nvidia-fs rank and what core/sched does for a read
// into that GPU (with and without a GPU-direct capable transport).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/topology/topology.hpp"

namespace sluice::scenario {

struct MachineReport {
  std::string text;    // for a terminal
  nlohmann::json doc;  // the same, as data (topology.json)
};

// name: how the machine is called in the header ("dgx_a100", "generic at x.lua:12").
// Throws std::runtime_error when the topology is invalid or node does not exist.
MachineReport machine_report(const topo::Topology& t, NodeId node, const std::string& name);

}  // namespace sluice::scenario
