// The results of a multi-process run in the standard layout (docs/results.md):
// `sluice node --mpi --config C --out DIR` (rank 0) writes
// DIR/results.json, DIR/results.csv and DIR/progress.csv as `sluice run` does,
// so compare, report and calibrate --fit read them like any other run, plus
// DIR/nodes.json, the gathered per-node document (each node's roles,
// addresses, status, counters and per-rank phases; cluster_emulator.hpp).
// The run's spec is made from the ClusterConfig the processes ran: its
// services' placement, stripe and file sweep; params name the point as the
// simulated side does (nodes, stripe_count, chunk_bytes, file_bytes,
// block_bytes, files_per_rank, threads, and link_bits_per_s and
// link_latency_ns where links were shaped). Phases and counters: as
// SpecDeployment::result_of summarises them.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "core/common/status.hpp"
#include "scenarios/deploy/cluster_config.hpp"
#include "scenarios/scenario_spec.hpp"

namespace sluice::emulate {

// What the launcher knows of the run beyond its ClusterConfig.
struct GatheredRunInfo {
  std::string scenario;  // "emulate_file_sweep", "mpi_file_sweep"
  scenario::Backend backend = scenario::Backend::emulate;
  std::string cluster_description;            // e.g. "3 nodes in network namespaces, 1 Gbit/s links"
  std::map<std::string, std::string> params;  // added to the point's own (link rate, ...)
  double wall_s = 0;
};

// The point's parameters, under the names the simulated side uses.
std::map<std::string, std::string> point_params(const ClusterConfig& config);

// The spec the processes ran (placement, stripe, the file sweep).
scenario::ScenarioSpec gathered_spec(const ClusterConfig& config, const GatheredRunInfo& info);

// RunResult::deployment's "authenticated" of a gathered run: "true" when it has
// nodes and every one authenticated its connections, else "false".
std::string authenticated_of(const nlohmann::json& gathered);

// Writes DIR/results.json, results.csv, progress.csv and nodes.json (creating
// DIR); io_error naming the file.
Status write_gathered_results(const std::string& dir, const nlohmann::json& gathered, const ClusterConfig& config,
                              const GatheredRunInfo& info);

}  // namespace sluice::emulate
