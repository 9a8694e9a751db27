// EmulatedPointRun: one ScenarioSpec on the netns-emulated cluster
// (`sluice run --backend emulate`, `sluice calibrate SCRIPT --backend emulate`).
// The spec's cluster becomes one network namespace per node joined by links
// shaped to the cluster's network links (cluster_emulator.hpp), the spec's
// file system and file sweep a ClusterConfig (cluster_config.hpp), and the
// gathered node documents a RunResult with the same phases, counters and
// params as a simulated run of the same spec, so the two can be compared
// point by point (analysis/comparison.hpp) and the sim fitted to it.
//
// What a spec must be to run here (plan() says which rule a spec breaks):
// - one workload, a file sweep, one rank per client node;
// - a cluster whose network links (topo::LinkClass::network) all have one
//   rate, the same both ways, and one latency (a star of identical links);
//   each node's link is shaped to it (tc tbf). A latency of at least
//   k_min_emulated_latency_ns is added with netem; a smaller one is left to
//   the veth pair and bridge, whose own round trip is already of that order;
// - at most k_max_cluster_nodes nodes;
// - no metadata mirroring; storage buddy mirroring is carried (mgmt's
//   heartbeat and offline times from the spec), and so are the fault plan's
//   kills of storage servers (storage:N, with their restart), timed from the
//   moment every server has registered (ClusterFault); other faults are
//   refused.
// Mapping: mgmt, metadata (one shard per meta node, in node order), storage
// (one target per NVMe drive of a storage server, ids from 1 in the spec's
// order) and client roles from the spec's FsSpec and client placement;
// stripe chunk and count from the metadata server's defaults (a count above
// the number of targets is every target, as the chooser gives it). The servers'
// client's other settings are not carried (FsSpec::client, storage_config,
// mgmt): the nodes run the core defaults, which the script presets
// (beegfs, beeond, ...) leave as they are except where a script sets them.
// Phases: per client rank, bytes, ops and elapsed time of each phase,
// summarised as the simulation does (core/workloads/phase_summary.hpp);
// latency percentiles are not gathered (null). Counters: the nodes' reported
// counters summed over nodes, plus emulate.link_bits_per_s and
// emulate.link_latency_ns.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/status.hpp"
#include "core/common/units.hpp"
#include "scenarios/emulate/cluster_config.hpp"
#include "scenarios/emulate/emulation_plan.hpp"
#include "scenarios/scenario_spec.hpp"

namespace sluice::emulate {

// Below this one-way latency no netem qdisc is added (see above).
inline constexpr TimeNs k_min_emulated_latency_ns = 50 * k_ns_per_us;
// Default bound on every wait of one emulated point (bootstrap, phases).
inline constexpr std::uint32_t k_point_max_wait_s = 120;

struct EmulatedPointOptions {
  // The node program (see EmulateOptions::node_command); empty: this
  // executable's `node` subcommand.
  std::vector<std::string> node_command;
  std::string subnet = "10.213.0.0/24";
  std::uint32_t mtu_bytes = 1500;
  std::uint32_t max_wait_s = k_point_max_wait_s;
  std::string work_dir;                       // empty: /tmp/<run prefix>, removed after a clean run
  int stop_fd = -1;                           // readable: stop and clean up (the CLI's signal pipe)
  std::function<void(std::string_view)> log;  // may be empty
};

struct EmulatedPointSetup {
  ClusterConfig cluster;
  LinkSpec link;
};

class EmulatedPointRun {
 public:
  // The emulation of `spec`; invalid_argument naming the rule it breaks.
  static Result<EmulatedPointSetup> plan(const scenario::ScenarioSpec& spec);
  // The deployment of `spec` alone, by every rule above but the links' (a
  // real cluster's links are what they are: cluster_point_run.hpp).
  // any_workload: the workload may be of any kind with host buffers (the
  // cluster backend runs the spec's own WorkloadSpec; the config's sweep is
  // then unused); else it must be a file sweep (emulate's node processes run
  // the config's).
  static Result<ClusterConfig> cluster_of(const scenario::ScenarioSpec& spec, bool any_workload = false);

  // The RunResult of a gathered run (run_emulation's document) of `spec`.
  static scenario::RunResult result_of(const scenario::ScenarioSpec& spec, const nlohmann::json& gathered);

  // Plans, emulates and returns the result; never throws; a failure is
  // ok = false with the reason. Needs root (netns_permitted()).
  static scenario::RunResult run(const scenario::ScenarioSpec& spec, const EmulatedPointOptions& options = {});
};

}  // namespace sluice::emulate
