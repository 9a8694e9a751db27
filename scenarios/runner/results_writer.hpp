// Results files of a `sluice run` (issue 7, "Results"; read back by analysis/):
//
// results.json — one document (analysis/results.schema.json):
//   { "format": "sluice-results", "version": 1, "scenario": "...",
//     "complete": true, "sluice_version": "...", "created_utc": "2026-01-01T00:00:00Z",
//     "machine": { "hostname": "...", "cores": 16, "os": "Linux 6.1 x86_64" },
//     "versions": { "sluice": "0.1.0", "simgrid": "3.32.0", "nlohmann_json": ..., "compiler": ... },
//     "runs": [ <result_codec.hpp's run>, ... ],
//     "headlines": ["...", ...], "claims": [ {text, where, measured, kind,
//       at_least?, at_most?, seed_value?, tolerance?, tolerance_why?,
//       relative_error?, seed_figure, holds}, ... ] }   (the script's findings)
//   "complete" is false while the script runs (the file is rewritten as
//   points finish: results_journal.hpp) and when it was stopped: "runs" then
//   holds the points that finished.
// results.csv — one row per workload phase per run (a run with no phase, e.g.
//   one that failed at deployment, gets one row with its error), columns with
//   units in their names, after elbencho's CSV in spirit:
//   run, scenario, label, backend, seed, ok, error, param_<name>...,
//   config_<name>... (result_codec.hpp's run_config), workload, phase,
//   ranks, bytes, ops, first_done_s, elapsed_s (= last done),
//   throughput_GB_per_s (last done), first_throughput_GB_per_s, ops_per_s,
//   first_ops_per_s, latency_us_p50, latency_us_p99, then every extra of any
//   row (its name carries its unit), sorted. A param_/config_ column whose
//   every value is a size, rate or duration with a unit ("256KiB") is
//   followed by its number (param_block_bytes, _bytes_per_s, _s); a column
//   whose every value is a list (a script's own axis, "{4MiB, 12MiB}") is
//   left out (each point's own value has its column; results.json keeps it).
//   What was not measured (NaN) is an empty cell, never 0. docs/results.md
//   documents every column.
// results_table — the terminal summary: one line per phase per run.
//
// Rates: one unit family everywhere a person reads them (issue 25 item 6):
// decimal GB/s, as storage and the seed figures quote them and as the
// script helpers print (sl.format_rate, sl.report, lua_scripts/lib/study.lua);
// results.json keeps bytes_per_s.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/status.hpp"
#include "scenarios/scenario_spec.hpp"

namespace sluice::scenario {

// sluice's version (CMakeLists.txt project(VERSION)).
inline constexpr std::string_view k_sluice_version = "0.1.0";
inline constexpr std::string_view k_results_format = "sluice-results";
inline constexpr int k_results_version = 1;
// Bytes per GB: the unit of every rate in results.csv, progress.csv and the table.
inline constexpr double k_bytes_per_gb = 1e9;

// Whether results.json holds every run of the script ("complete": true) or
// the points finished so far (a script still running, or stopped).
enum class Completeness : std::uint8_t { complete, incomplete };

struct MachineInfo {
  std::string hostname;
  unsigned cores = 0;
  std::string os;  // uname: sysname release machine
};
MachineInfo this_machine();
// The versions of sluice and of what it was built with.
nlohmann::json build_versions();

nlohmann::json results_document(std::string_view scenario, const std::vector<RunResult>& runs,
                                const ScriptFindings& findings = {},
                                Completeness completeness = Completeness::complete);
std::string results_csv(const std::vector<RunResult>& runs);
// sl.mlperf's answers, one row each (mlperf.csv, written beside results.csv when a script has any).
std::string mlperf_csv(const std::vector<MlperfRow>& rows);
// Throughput over time, one row per run, phase and window (progress.csv).
std::string progress_csv(const std::vector<RunResult>& runs);
std::string results_table(const std::vector<RunResult>& runs);

// Replaces `path` with `text` through a temporary file in the same folder
// (rename is atomic there); io_error naming the file.
Status write_atomically(const std::filesystem::path& path, const std::string& text);

// Writes <dir>/results.json, <dir>/results.csv and <dir>/progress.csv (creating dir; and
// <dir>/mlperf.csv when findings hold sl.mlperf rows), each to a
// temporary file renamed over the old one, so a reader sees the old file or the new one, never
// half of one; io_error naming the file.
Status write_results(const std::string& dir, std::string_view scenario, const std::vector<RunResult>& runs,
                     const ScriptFindings& findings = {}, Completeness completeness = Completeness::complete);

}  // namespace sluice::scenario
