// RunResult <-> JSON: one run as it appears in results.json's "runs" array
// (analysis/results.schema.json, "$defs/run"), and as a child process sends
// its result back to run_points over a pipe.
//
// A run's JSON holds what ran (scenario, label, params, seed, backend, the
// configuration scalars of run_config, and a summary of the spec: cluster,
// file system, workloads with their main settings, sim options) and what
// came back (ok, error, simulated_s, wall_s,
// paths_taken, phases, counters, log_tail). Every number's name carries its
// unit. Non-finite numbers (a rate over zero time) are written as null and
// read back as NaN.
//
// Decoding restores the measured part and the record of what ran (scenario,
// label, params, seed, backend); it cannot rebuild the cluster topology or the
// service configs, so the caller passes the spec it ran (run_points does) or
// gets a spec with only those fields.
#pragma once

#include <nlohmann/json.hpp>

#include "core/common/status.hpp"
#include "scenarios/runner/child_pool.hpp"
#include "scenarios/scenario_spec.hpp"

namespace sluice::scenario {

nlohmann::json to_json(const RunResult& result);
nlohmann::json to_json(const PhaseRow& row);
// The record of what ran (the "spec" object of a run).
nlohmann::json spec_summary(const ScenarioSpec& spec);
// A workload's settings as results.json records them: every field its
// config's fields() list gives (core/workloads), enums by name.
nlohmann::json workload_settings(const WorkloadConfig& config);
// The configuration of a point as a few scalars (issue 25 item 5), so that
// points of different sl.run calls differ in results.json ("config") and
// results.csv (config_<name>) even when the script passes neither label nor
// params. A fixed set, names with their units: cluster (description),
// cluster_nodes, fs_preset, meta_policy, meta_servers, meta_mirrored,
// storage_servers, storage_targets, storage_mirrored, gds, stripe_count,
// chunk_bytes, stripe_chooser, client_max_inflight_chunks,
// egress_limit_bytes_per_s, workloads (kinds, "+"-joined), client_ranks (the
// most of any workload), fault_count, sim_profile. Each value is a string,
// a number or a boolean.
nlohmann::json run_config(const ScenarioSpec& spec);
inline constexpr std::size_t k_run_config_entries = 19;

// invalid_argument naming the field that is missing or has the wrong type.
Result<RunResult> run_result_from_json(const nlohmann::json& json, const ScenarioSpec* ran = nullptr);
// The RunResult of a point whose child process ended with `job` (its payload
// is to_json of the point's RunResult): what it sent back, or ok = false
// with why there is none.
RunResult run_result_of_child(const ChildJobResult& job, const ScenarioSpec& spec, Backend backend);
Result<PhaseRow> phase_row_from_json(const nlohmann::json& json);

}  // namespace sluice::scenario
