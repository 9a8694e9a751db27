// ClusterEmulator: the deployment of `sluice mount`. One network namespace per node on this
// machine, joined through a bridge in a namespace of its own, links shaped
// with tc (emulation_plan.hpp); each node's process (`<binary> node ...`)
// runs inside its namespace with `ip netns exec`, the bootstrap goes through
// a socket per node (bootstrap_coordinator.hpp), and the results of every
// node are gathered into one document.
//
// Clean-up: everything the run created (processes, namespaces and with them
// every veth, the bridge and the qdiscs, the storage files) is removed when
// run() returns, on success, on failure and when `stop_fd` becomes readable
// (the command's SIGINT/SIGTERM pipe); run() then checks that none of its
// namespaces is left and says so in the error if one is. A launcher killed
// with SIGKILL leaves namespaces behind (its node processes die with it,
// PR_SET_PDEATHSIG): the next command sweeps those of runs whose launcher is
// gone (dead_runs.hpp).
//
// Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN for `ip netns`); check with
// netns_permitted() first.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenarios/deploy/deploy.hpp"
#include "scenarios/netns/emulation_plan.hpp"
#include "scenarios/netns/netns_cluster.hpp"

namespace sluice::emulate {

inline constexpr std::uint32_t k_node_stop_grace_ms = 3'000;
inline constexpr std::uint32_t k_iperf_seconds_max = 120;

struct EmulateOptions {
  std::uint32_t nodes = 3;
  LinkSpec link;  // required
  std::string subnet = "10.213.0.0/24";
  std::uint32_t mtu_bytes = 1500;
  // The cluster (roles, workload); addresses and storage_root are set per
  // run. Empty nodes: default_cluster(nodes).
  ClusterConfig cluster;
  // The node program: `<node_command...> --config F --rank R --bootstrap-fd 3`.
  // Empty: this executable with the `node` subcommand.
  std::vector<std::string> node_command;
  std::string work_dir;                       // empty: /tmp/<prefix>
  bool keep_work_dir = false;                 // keep logs and storage after a successful run (marked kept)
  std::uint32_t iperf_seconds = 0;            // > 0: iperf3 node 1 -> node 0 through the same links first
  std::string tag;                            // run tag; empty: derived from the time
  std::function<void(std::string_view)> log;  // progress lines; may be empty
};

// A run tag from the clock (PlanOptions::tag: 6 of [a-z0-9]).
std::string default_run_tag();
// Makes `dir` (and its parents) marked as this process's run
// (base/run_marker.hpp): sweep_dead_runs() removes it once this process died.
Status make_marked_work_dir(const std::string& dir);

// Whether `ip netns` may be used here: "" if so, else why not.
std::string netns_permitted();

// Runs the emulation; the gathered results plus an "emulation" section
// ({prefix, nodes, link, mtu_bytes, subnet, addresses, iperf_bits_per_s}).
Result<nlohmann::json> run_emulation(const EmulateOptions& options, int stop_fd);

}  // namespace sluice::emulate
