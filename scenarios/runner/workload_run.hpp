// WorkloadRun: one WorkloadSpec as deployed, whatever the Env: it makes the
// Workload object of each rank, and when the ranks are done turns what they
// measured into PhaseRows (results.csv rows).
//
// Ranks: rank r runs on clients.nodes[r / ranks_per_node] and feeds GPU
// r % ranks_per_node there (scenario_spec.hpp, ClientPlacement). Its threads
// run on (and its host buffers live in) the NUMA nodes rank_host_numa gives: a
// node's only rank spreads over all its sockets (an unpinned benchmark: the
// scheduler spreads its threads, and first touch puts each thread's buffer on
// its node); a rank with a GPU of its own is bound to that GPU's socket (as
// mpirun/srun bind GPU ranks by affinity); other ranks split the sockets
// between them (socket s to rank s % ranks_per_node). The bound
// (point_bound.hpp) places the rank's buffers by the same rule.
//
// Rows, per phase in the order the ranks ran them:
// - the elbencho-style aggregate of the ranks' RankPhaseResults
//   (core/workloads/phase_summary.hpp);
// - latency percentiles (p50, p99 in microseconds; core/common/percentile.hpp:
//   linear interpolation between closest ranks) over the phase's
//   "<workload>.<phase>.op_latency_ns" samples of this workload's run;
// - extras: every other per-phase counter of this run ("<workload>.<phase>.
//   <name>", its name keeps its unit), the mean of every other per-phase
//   sample ("<name>_mean"), and per workload: train_epoch's accelerator
//   utilisation over all ranks and epochs ("au_pct", on the "epoch" row) and
//   checkpoint's imbalance over every target of the file system
//   ("target_max_over_mean", "target_cv", "targets" on the "write" row).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/common/status.hpp"
#include "core/workloads/workload.hpp"
#include "scenarios/scenario_spec.hpp"

namespace sluice::scenario {

// A run's metrics, as the Env collected them while one workload ran (the
// counters' growth and the samples added in that time).
struct MetricWindow {
  std::map<std::string, double> counters;
  std::map<std::string, std::vector<double>> samples;
};

// The NUMA nodes of `rank`'s threads in `cluster` (the rule above); empty
// when its node has no host memory in the topology.
std::vector<std::uint16_t> rank_host_numa(const ClientPlacement& clients, std::uint32_t rank,
                                          const topo::Topology& cluster);

class WorkloadRun {
 public:
  // Checks the placement against the cluster and the config with the
  // workload's own validate(); invalid_argument naming the workload.
  // `index` (position in ScenarioSpec::workloads) makes barrier names unique
  // when the config has no run_tag.
  static Result<WorkloadRun> create(const WorkloadSpec& spec, std::size_t index, const topo::Topology& cluster);

  const WorkloadSpec& spec() const { return spec_; }
  std::uint32_t ranks() const;
  NodeId node_of(std::uint32_t rank) const;
  std::uint16_t gpu_of(std::uint32_t rank) const;
  // The metric prefix of the workload ("file_sweep", "md_bench", ...).
  std::string metric_name() const;

  // A new Workload for `rank` (kept: results are read from it later).
  std::unique_ptr<Workload> make(std::uint32_t rank);

  // Rows of the finished (or failed) ranks. `targets`: every storage target
  // of the file system, for checkpoint's imbalance.
  std::vector<PhaseRow> rows(const MetricWindow& window, const std::vector<TargetId>& targets) const;
  // What rank `rank`'s workload (made here) measured; empty when none was.
  std::vector<RankPhaseResult> rank_results(std::uint32_t rank) const;

 private:
  explicit WorkloadRun(WorkloadSpec spec) : spec_(std::move(spec)) {}

  void add_workload_extras(std::vector<PhaseRow>& rows, const std::vector<TargetId>& targets) const;

  WorkloadSpec spec_;
  std::vector<Workload*> made_;  // by rank; owned by the hosts
};

}  // namespace sluice::scenario
