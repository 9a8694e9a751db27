// EmulatedPointRun: one ScenarioSpec on the netns-emulated cluster
// (`sluice run --backend emulate`, `sluice calibrate SCRIPT --backend emulate`).
// The spec's cluster becomes one network namespace per node joined by links
// shaped to the cluster's network links (cluster_emulator.hpp), and the point
// runs on the cluster path itself: one rank process per node, each in its
// node's namespace, running run_cluster_point (cluster_point_run.hpp) as a
// rank under mpirun does, launched by netns_ranks.hpp. So what runs here is
// what runs on a real cluster, over links shaped to the spec's, and the
// result (backend emulate; its deployment says launcher "netns", the link
// and the MTU) has the same phases, counters and params as a simulated run of
// the same spec, so the two can be compared point by point
// (analysis/comparison.hpp) and the sim fitted to it.
//
// What a spec must be to run here (plan() says which rule a spec breaks):
// - what the cluster path runs (cluster_of below): workloads of any kind
//   (file_sweep, md_bench, train_epoch, checkpoint, stage_in, stream), each
//   with its client nodes and ranks per node (ranks_per_node), one after the
//   other on the same deployment as in simulation (the second's ranks start
//   once every rank of the first has finished: ClusterLaterWorkload); GPU
//   buffers where this host has a GPU (every rank runs here), else the point
//   fails saying why;
// - a cluster whose network links (topo::LinkClass::network) all have one
//   rate, the same both ways, and one latency (a star of identical links);
//   each node's link is shaped to it (tc tbf). A latency of at least
//   k_min_emulated_latency_ns is added with netem; a smaller one is left to
//   the veth pair and bridge, whose own round trip is already of that order;
// - at most k_max_cluster_nodes nodes;
// - storage and metadata buddy mirroring are carried (mgmt's heartbeat and
//   offline times from the spec; each shard's second server on a node of
//   its own: Role::meta_mirror), and so are the fault plan's kills of
//   storage and metadata servers (storage:N, meta:N, with their restart),
//   timed from the moment every server has registered (ClusterFault); the
//   plan's partitions and message loss are the launcher's: nftables drops in
//   the namespaces (LinkFaults), for every packet that crosses a link, from
//   the same moment (rank 0 says when), counted in faults.link_* counters;
//   extra delay and slow disks are refused; so are two metadata servers on
//   one node.
// Mapping: SpecDeployment::cluster_of (spec_deployment.hpp).
// Phases: per client rank, bytes, ops and elapsed time of each phase of each
// workload (rows named by the workload's label), summarised as the simulation does (core/workloads/phase_summary.hpp);
// latency percentiles are not gathered (null). Counters: the nodes' reported
// counters summed over nodes, plus emulate.link_bits_per_s and
// emulate.link_latency_ns (what the links were shaped to).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/status.hpp"
#include "core/common/units.hpp"
#include "scenarios/deploy/deploy.hpp"
#include "scenarios/netns/emulation_plan.hpp"
#include "scenarios/scenario_spec.hpp"

namespace sluice::emulate {

// Below this one-way latency no netem qdisc is added (see above).
inline constexpr TimeNs k_min_emulated_latency_ns = 50 * k_ns_per_us;
// How often the launcher looks whether a partition or loss of the fault plan
// is due (its lateness at most).
inline constexpr int k_link_fault_tick_ms = 5;

struct EmulatedPointOptions {
  // The program of a node run as a child process of its rank (a storage
  // server the fault plan kills: node_process.hpp); empty: this executable's
  // `node` subcommand.
  std::vector<std::string> node_command;
  DeploymentOptions deployment;  // as `--backend cluster` takes it
  std::string subnet = "10.213.0.0/24";
  std::uint32_t mtu_bytes = 1500;
  std::uint32_t max_wait_s = k_point_max_wait_s;
  std::string storage_root;                   // where the run's directory goes; empty: /tmp
  std::string work_dir;                       // empty: <storage_root>/<run prefix>, removed after the run unless keep
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
  // Plans, emulates and returns the result; never throws; a failure is
  // ok = false with the reason. Needs root (netns_permitted()).
  static scenario::RunResult run(const scenario::ScenarioSpec& spec, const EmulatedPointOptions& options = {});
};

}  // namespace sluice::emulate
