// ScenarioSpec: one fully-resolved run point of a scenario, as plain data.
//
// This is the seam between the Lua layer (scenarios/lua/: turns a script and
// its --set overrides into one ScenarioSpec per sweep point) and the runner
// (scenarios/runner/: deploys the services of a ScenarioSpec onto an Env —
// SimEnv today, HwEnv and the netns emulation later — runs it and returns a
// RunResult). Neither side includes the other; both include this header.
//
// Everything here is data the core already understands (core/services and
// core/workloads configs); endpoints (mgmt, barrier) are filled in by the
// runner when it deploys, not by the Lua layer.
#pragma once

#include <cmath>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/faults/fault_plan.hpp"
#include "core/namespace/dir_placement.hpp"
#include "core/services/client.hpp"
#include "core/services/meta_service.hpp"
#include "core/services/mgmt_service.hpp"
#include "core/services/storage_service.hpp"
#include "core/topology/topology.hpp"
#include "core/workloads/checkpoint_burst.hpp"
#include "core/workloads/file_sweep.hpp"
#include "core/workloads/gpu_stream.hpp"
#include "core/workloads/md_bench.hpp"
#include "core/workloads/stage_in.hpp"
#include "core/workloads/train_epoch.hpp"

namespace sluice::scenario {

// sim: SimGrid; hw: every service a thread of one process; emulate: one
// process per node in network namespaces of this machine; cluster: one
// process per node on real hosts under mpirun/srun (scenarios/deploy/cluster_point_run.hpp).
enum class Backend : std::uint8_t { sim, hw, emulate, cluster };

// GDS mode (KvikIO's CompatMode): on = GPU-direct or fail; auto = direct
// where the topology allows it, else bounce; off = always bounce.
enum class GdsMode : std::uint8_t { on, off, automatic };

// How the simulator carries bulk bytes (issue 50; sim/fluid_net.hpp): chunk =
// every communication a SimGrid activity; fluid = communications as flows of
// the runtime's fluid network, solved less often; automatic = fluid where the
// fluid run measures that it did not stray from per chunk (its rate
// deviation within k_sim_fluid_max_deviation), per chunk otherwise
// (SimPointRun; deployment.sim_mode says which and why).
enum class SimMode : std::uint8_t { chunk, fluid, automatic };
inline constexpr SimMode k_sim_modes[] = {SimMode::chunk, SimMode::fluid, SimMode::automatic};
// Its name in scripts, on the command line and in results: chunk, fluid, auto.
constexpr const char* sim_mode_name(SimMode mode) {
  switch (mode) {
    case SimMode::chunk: return "chunk";
    case SimMode::fluid: return "fluid";
    case SimMode::automatic: return "auto";
  }
  return "chunk";
}

// One storage server: a node and the NVMe drives (by index on that node) that
// become its targets, one target per drive.
struct StorageServerSpec {
  NodeId node = 0;
  std::vector<std::uint32_t> nvme;
};

// Where the file system's services run and how they are configured.
struct FsSpec {
  std::string preset;  // "beeond", "lustre_like", "gekkofs_like", "beegfs" or "custom": for the record
  NodeId mgmt_node = 0;
  MetaPolicy policy = MetaPolicy::dir_owner;
  std::vector<NodeId> meta_nodes;  // one metadata server (shard) per entry, shard = index
  // Metadata buddy mirroring: the second server of shard i on meta_mirror_nodes[i]
  // (empty: shards are not mirrored). Needs mgmt.meta_mirror and meta.mirror.
  std::vector<NodeId> meta_mirror_nodes;
  std::vector<StorageServerSpec> storage;
  GdsMode gds = GdsMode::automatic;
  // Templates; the runner fills in endpoints, shard ids and the namespace.
  MgmtConfig mgmt;
  MetaServiceConfig meta;  // default stripe (chunk, count, chooser) lives here
  StorageServiceConfig storage_config;
  ClientConfig client;  // incl. planner (window, rails) and verify_reads
};

using WorkloadConfig =
    std::variant<FileSweepConfig, MdBenchConfig, TrainEpochConfig, CheckpointConfig, StageInConfig, StreamConfig>;

// Client ranks: ranks_per_node ClientHosts on each node, rank r on
// nodes[r / ranks_per_node] using GPU r % ranks_per_node.
struct ClientPlacement {
  std::vector<NodeId> nodes;
  std::uint32_t ranks_per_node = 1;
};

// One workload of the scenario; workloads run one after the other, in order,
// on the same deployed file system.
struct WorkloadSpec {
  std::string label;  // e.g. "file_sweep"; prefixes metric and phase names
  WorkloadConfig config;
  ClientPlacement clients;
};

struct ScenarioSpec {
  std::string scenario;  // script name, e.g. "beeond_azure_sweep"
  // This point's parameter values, as text: the script's sl.params values,
  // then sl.run's own params = {...} (what a Lua loop set, as scalars), then
  // one entry per sweep axis.
  std::map<std::string, std::string> params;
  std::string label;  // sl.run's label = "4 MDS" ("" when none)
  std::uint64_t seed = 1;
  std::vector<Backend> backends = {Backend::sim};
  std::shared_ptr<const topo::Topology> cluster;
  std::string cluster_description;  // e.g. "4 x azure_nd40rs_v2, star 100 Gb/s"
  FsSpec fs;
  std::vector<WorkloadSpec> workloads;
  // Simulation options.
  std::string sim_profile = "default";       // sim/profiles/<name>.json
  bool sim_coalesce = false;                 // flow coalescing (sim/)
  SimMode sim_mode = SimMode::chunk;         // per chunk, fluid or chosen per point
  std::uint64_t max_events = 2'000'000'000;  // event budget of one simulated run
  // Faults applied while the workloads run (sl.run's faults; issue 9); times
  // count from the start of the first workload. Applied in sim only.
  faults::FaultPlan faults;
};

// Whether a workload puts buffers in GPU memory (file_sweep, stage_in or a
// training epoch with buffer_kind gpu, a checkpoint from GPU memory, a GPU
// stream): only then do GPU and GDS matter to a run, and a hardware run
// speaks of them.
inline bool uses_gpu_memory(const WorkloadSpec& w) {
  return std::visit(
      [](const auto& c) {
        using C = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<C, FileSweepConfig> || std::is_same_v<C, StageInConfig> ||
                      std::is_same_v<C, TrainEpochConfig>) {
          return c.buffer_kind == MemKind::gpu;
        } else if constexpr (std::is_same_v<C, CheckpointConfig>) {
          return c.source_kind == MemKind::gpu;
        } else {
          return std::is_same_v<C, StreamConfig>;
        }
      },
      w.config);
}

// Whether any workload of the spec does.
inline bool uses_gpu_memory(const ScenarioSpec& spec) {
  return std::any_of(spec.workloads.begin(), spec.workloads.end(),
                     [](const WorkloadSpec& w) { return uses_gpu_memory(w); });
}

// ---- results ----

// One row per workload phase (results.csv), elbencho-like.
struct PhaseRow {
  std::string workload;  // WorkloadSpec::label
  std::string phase;     // "write", "read", "stat", "epoch", ...
  std::uint32_t ranks = 0;
  std::uint64_t bytes = 0;
  std::uint64_t ops = 0;
  double first_done_s = 0;
  double last_done_s = 0;
  double first_bytes_per_s = 0;
  double last_bytes_per_s = 0;
  double first_ops_per_s = 0;
  double last_ops_per_s = 0;
  // Not measured (no sample; a phase of no operation): NaN, written as null in
  // results.json and as an empty cell in results.csv, never as 0.
  double latency_us_p50 = std::numeric_limits<double>::quiet_NaN();
  double latency_us_p99 = std::numeric_limits<double>::quiet_NaN();
  std::map<std::string, double> extra;  // workload-specific, name carries its unit (e.g. "au_pct")
  // The hardware's ceiling for this phase's bytes (scenarios/runner/point_bound.hpp;
  // NaN: none) and what binds it, or why there is none ("" for a phase that moves no bulk bytes).
  double bound_bytes_per_s = std::numeric_limits<double>::quiet_NaN();
  std::string binding_resource;
  // The same ceiling with each storage target's share set to the bytes it
  // moved in this run (its storage.<op>_bytes.target.<id> counter), not an
  // equal share: what the hardware allows with the file system's placement
  // of this run's files (NaN: no bound, or no per-target counts), and what binds.
  double placed_bound_bytes_per_s = std::numeric_limits<double>::quiet_NaN();
  std::string placed_binding_resource;
  // Throughput over time, all ranks together: window i covers
  // [i, i+1) x progress_window_s after the phase started (PhaseRecorder).
  double progress_window_s = 0;
  std::vector<double> progress_bytes_per_s;
};

struct RunResult {
  ScenarioSpec spec;  // what ran (params, seed, backend, ...)
  Backend backend = Backend::sim;
  bool ok = false;
  std::string error;                                              // why not ok
  double simulated_s = std::numeric_limits<double>::quiet_NaN();  // sim: simulated time at the end; else NaN (null)
  double wall_s = 0;                                              // wall time of the run
  std::vector<PhaseRow> phases;
  std::map<std::string, double> counters;            // every metric counter, name carries its unit
  std::map<std::string, std::uint64_t> paths_taken;  // "direct", "bounce", "gds_fallback:<why>"... -> chunks
  std::vector<std::string> log_tail;                 // last warnings/errors
  // How a measured run was deployed (transport, storage_backend,
  // storage_root, meta_store); in sim only "sim_coalesce" where sl.run asked
  // for it: "merged", or "per_chunk: <why>" (sim_point_run.hpp).
  // Authentication: the counter security.authenticated.
  std::map<std::string, std::string> deployment;
};

// A claim a study checks on its own results (sl.claim): a measured number
// (a rate, a ratio of two rates) against what the seed says of it. Two kinds:
//   * a seed figure: the seed publishes a value (one MDT ~200,000 ops/s); the
//     claim holds when |measured - seed_value| <= tolerance x |seed_value|;
//   * a shape: the seed gives only a direction or a bound ("stalls past ~8
//     threads", "> 15 GB/s"); the claim holds when at_least <= measured <=
//     at_most.
struct Claim {
  // The tolerance of a seed figure unless the script gives another, with the
  // reason next to it (tolerance_why): 15% (issue 19).
  static constexpr double k_default_tolerance = 0.15;

  std::string text;
  std::string where;  // the script's file:line
  double measured = 0;
  std::optional<double> at_least;          // shape: holds when measured >= at_least ...
  std::optional<double> at_most;           // ... and measured <= at_most
  std::optional<double> seed_value;        // seed figure: the published value
  double tolerance = k_default_tolerance;  // seed figure: relative tolerance
  std::string tolerance_why;               // why another tolerance than the default
  // The seed figure is also a parameter the study gives the run (a source
  // rate, a consumption rate): reproducing it checks the plumbing, not a
  // prediction, so the fidelity report shows it and leaves it out of F3.
  bool model_input = false;
  std::string seed_figure;  // the seed's own words, e.g. "~2x"
  bool holds = false;       // false also when measured is not finite

  bool is_seed_figure() const { return seed_value.has_value(); }
  // (measured - seed_value) / |seed_value|; NaN for a shape claim or a
  // measurement that is not finite.
  double relative_error() const;
  // Sets holds from measured and the bounds or the seed value.
  void judge();
  // "in [1.6, 2.2]", ">= 1e+10", "2 +- 15%": what the claim expects.
  std::string expectation() const;
};

inline double Claim::relative_error() const {
  if (!seed_value || !std::isfinite(measured) || *seed_value == 0) return std::numeric_limits<double>::quiet_NaN();
  return (measured - *seed_value) / std::fabs(*seed_value);
}

inline void Claim::judge() {
  if (seed_value) {
    const double e = relative_error();
    holds = std::isfinite(e) && std::fabs(e) <= tolerance;
    return;
  }
  holds = std::isfinite(measured) && (!at_least || measured >= *at_least) && (!at_most || measured <= *at_most);
}

inline std::string Claim::expectation() const {
  char out[96];
  if (seed_value) {
    std::snprintf(out, sizeof out, "%.4g +- %.4g%%", *seed_value, tolerance * 100);
  } else if (at_least && at_most) {
    std::snprintf(out, sizeof out, "in [%.4g, %.4g]", *at_least, *at_most);
  } else if (at_least) {
    std::snprintf(out, sizeof out, ">= %.4g", *at_least);
  } else if (at_most) {
    std::snprintf(out, sizeof out, "<= %.4g", *at_most);
  } else {
    return "nothing";
  }
  return out;
}

// What a script reports beside its runs: headline lines and shape claims.
// One answer of sl.mlperf (scenarios/lua/mlperf_search.hpp), as MLPerf
// Storage reports a training result: the most accelerators `clients` client
// nodes keep at the AU threshold, with what they read. results.json's
// "mlperf" and mlperf.csv (docs/results.md).
struct MlperfRow {
  std::string workload;  // the train_epoch's label (the DLIO model.name)
  std::uint64_t clients = 0;
  std::uint64_t accelerators = 0;  // all clients together (0: not even one per client kept AU)
  std::uint64_t accelerators_per_client = 0;
  double au_threshold = 0;                                                 // in (0, 1]
  double au = std::numeric_limits<double>::quiet_NaN();                    // at `accelerators`, in [0, 1]
  double throughput_mib_per_s = std::numeric_limits<double>::quiet_NaN();  // epoch bytes / elapsed, MiB = 2^20
  double samples_per_s = std::numeric_limits<double>::quiet_NaN();
  std::string binding_resource;  // what bounds the epoch's reads at that count
  std::uint64_t probes = 0;      // runs the search made for this client count
  std::string stopped;           // why the search ended: the count that failed, or max_accelerators
  // MLPerf Storage's dataset rule at this count (mlperf_search.hpp k_mlperf_datasize_*).
  std::uint64_t dataset_files = 0;
  std::uint64_t dataset_bytes = 0;
  std::uint64_t client_memory_bytes = 0;  // host memory of the `clients` client nodes
  std::uint64_t datasize_min_files = 0;   // the fewest files the rule allows here
  bool meets_datasize = false;            // dataset_files >= datasize_min_files
};

struct ScriptFindings {
  std::vector<std::string> headlines;
  std::vector<Claim> claims;
  std::vector<MlperfRow> mlperf;
};

}  // namespace sluice::scenario
