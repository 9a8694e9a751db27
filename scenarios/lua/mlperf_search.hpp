// sl.mlperf (issue 52 item 2): how many accelerators does this storage feed?
// MLPerf Storage's training question, answered as its submissions answer it:
// for each number of client nodes, the most simulated accelerators that keep
// the accelerator utilisation (AU, train_epoch.hpp) at the workload's
// threshold (DLIO metric.au: 0.90 for unet3d and resnet50, 0.70 for
// cosmoflow), reported with the throughput (MiB/s) and samples per second at
// that count.
//
// Each probe is one run of the train_epoch workload (sl.workload.dlio or
// sl.workload.train_epoch) on the first `clients` client nodes of the
// workload's placement with ranks_per_node = accelerators per client: one rank
// is one accelerator, reading into its own GPU's memory. The search over the
// accelerators per client is peak_search.hpp's LargestPassing (doubling from
// 1, then bisection), its test AU >= threshold; so accelerators = clients x
// the largest count per client that passes.
//
// The pure part lives here: sl.mlperf's own fields, the checks of the plan,
// each probe's workload, a probe read from its run, the rows and the lines
// printed. The binding (sluice_module.cpp) runs the probes through sl.run's
// request reader and runner, as sl.peak does.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/common/ids.hpp"
#include "core/topology/topology.hpp"
#include "core/workloads/workload_limits.hpp"
#include "scenarios/lua/field_reader.hpp"
#include "scenarios/lua/script_value.hpp"
#include "scenarios/scenario_spec.hpp"

namespace sluice::scenario {

// Accelerators per client: ranks_per_node's own limit.
inline constexpr std::uint64_t k_mlperf_max_accelerators = k_workload_max_inflight;
// Client node counts one sl.mlperf searches at most.
inline constexpr std::size_t k_mlperf_max_client_counts = 16;
// Steps a probe's epoch needs at least: AU leaves out the first (it fills the pipeline).
inline constexpr std::uint64_t k_mlperf_min_steps = 2;
// MLPerf Storage reports throughput in MiB/s (DLIO: "MB/second" of 2^20 bytes).
inline constexpr double k_bytes_per_mib = 1024.0 * 1024.0;
// MLPerf Storage's dataset rule for a closed training result (mlcommons/storage,
// mlpstorage rules: calculate_training_data_size, "Dataset needs to be 5x the amount
// of total memory", "Training needs to do at least 500 steps per epoch"): the files
// are at least 5 x the clients' host memory / the bytes of a file, and at least
// 500 x the accelerators x the batch / the samples of a file. The first keeps the
// clients' page cache from serving the epoch; the second keeps the epoch long.
inline constexpr std::uint64_t k_mlperf_datasize_memory_factor = 5;
inline constexpr std::uint64_t k_mlperf_datasize_min_steps = 500;

// How sl.mlperf treats a dataset below that rule (its `datasize` field).
enum class MlperfDatasize {
  report,   // every row says whether the dataset meets it; a line warns where it does not
  require,  // the search refuses to start unless it is met at every client count
};

struct MlperfPlan {
  std::vector<std::uint64_t> clients;  // client node counts, each searched on its own
  std::uint64_t max_accelerators = 0;  // per client node
  double au_threshold = 0;             // in (0, 1]; the DLIO config's metric.au unless given
  bool au_given = false;
  std::vector<NodeId> nodes;  // the workload's client nodes: `clients` uses the first ones
  std::string workload;       // its label: the probe's epoch row
  MlperfDatasize datasize = MlperfDatasize::report;
  // The dataset, for the datasize rule: its files and bytes (the mean sample
  // size times the samples), and each client node's host memory (nodes' order).
  std::uint64_t dataset_files = 0;
  std::uint64_t dataset_bytes = 0;
  std::uint64_t samples_per_file = 1;
  std::uint64_t batch_samples = 1;
  std::uint64_t file_bytes = 0;
  std::vector<std::uint64_t> node_memory_bytes;
};

// The fewest files MLPerf's datasize rule allows for `clients` client nodes and
// `accelerators` accelerators in all (k_mlperf_datasize_*), and the clients' memory.
struct MlperfDatasizeNeed {
  std::uint64_t client_memory_bytes = 0;
  std::uint64_t min_files = 0;
  bool met = false;  // the dataset has min_files or more
};
MlperfDatasizeNeed mlperf_datasize_need(const MlperfPlan& plan, std::uint64_t clients, std::uint64_t accelerators);

// Reads sl.mlperf's own fields (clients, max_accelerators, au) and removes
// them from `args`, leaving sl.run's fields. Throws ScriptError
// "sl.mlperf: <field>: ..." (an empty list, a threshold outside (0, 1], a
// maximum below 1).
MlperfPlan read_mlperf_fields(ScriptTable& args);

// Completes and checks the plan against the workload (the object as the
// script made it, and built) on its cluster: a train_epoch, a threshold (given,
// or the DLIO config's), enough client nodes, enough samples for every probe,
// and with datasize = "require" MLPerf's dataset rule at every client count
// (max_accelerators per client).
void check_mlperf_plan(MlperfPlan& plan, const ScriptObject& workload, const WorkloadSpec& built,
                       const topo::Topology& cluster);

// The probe's workload: the script's object on the first `clients` nodes
// with ranks_per_node = per_client; `params` gets clients and accelerators.
std::shared_ptr<const ScriptObject> mlperf_workload(const ScriptObject& workload, const MlperfPlan& plan,
                                                    std::uint64_t clients, std::uint64_t per_client,
                                                    std::map<std::string, std::string>& params);

struct MlperfProbe {
  std::uint64_t clients = 0;
  std::uint64_t per_client = 0;
  double au = 0;  // [0, 1]
  double throughput_mib_per_s = 0;
  double samples_per_s = 0;
  std::string binding_resource;
  bool passed = false;  // au >= the threshold
};

// The probe as its run measured it; throws ScriptError when the run failed
// or measured no AU (the search cannot tell a pass from a fail).
MlperfProbe mlperf_probe(const RunResult& run, const MlperfPlan& plan, std::uint64_t clients, std::uint64_t per_client);

// The answer for one client count: the probe at `largest` per client (0:
// none passed), the probes made and why the search ended.
MlperfRow mlperf_row(const MlperfPlan& plan, std::uint64_t clients, std::uint64_t largest, std::uint64_t least_failing,
                     const std::vector<MlperfProbe>& probes);

// "mlperf probe: clients=1 accelerators=8 (8 per client): AU 93.21% >= 90%, ..."
std::string mlperf_probe_text(const MlperfProbe& probe, const MlperfPlan& plan);
// The answers as MLPerf Storage's results table: one line per client count.
std::string mlperf_table(const MlperfPlan& plan, const std::vector<MlperfRow>& rows);

// sl.mlperf's own fields (sl.run's follow them), for FieldReader and docs/lua-api.md.
const FieldTable& mlperf_fields();

}  // namespace sluice::scenario
