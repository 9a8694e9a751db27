// RunRecord: the measured part of one run, as analysis/ reads it back from a
// results file. Independent of scenarios/runner (analysis links neither the
// runner nor SimGrid), it reads two layouts:
//  - `sluice run`'s results.json ("format": "sluice-results",
//    analysis/results.schema.json; one record per element of "runs"), or a
//    single run object of that layout (result_codec.hpp);
//  - `sluice emulate`'s output (scenarios/netns/cluster_emulator.hpp: "nodes"
//    with per-rank "phases" and an "emulation" block): one record, backend
//    "emulate", scenario "emulate_file_sweep" (or the document's "scenario"),
//    params link_bits_per_s and link_latency_ns from "emulation" plus any
//    top-level "params" object; per phase, bytes and ops are summed over
//    ranks and the phase lasts until its slowest rank (elbencho's "last done").
// A results.json with "complete": false holds only the points that finished
// before its run was stopped (or while it still runs); load_results says so,
// and the commands that read files (compare, report, calibrate --fit) print it.
// A sluice-results document's "claims" are read too (fidelity reports them):
// every command reads results through load_results, so a file one refuses,
// every one refuses.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/status.hpp"

namespace sluice::analysis {

// Limit: results files larger than this are refused.
inline constexpr std::size_t k_max_results_file_bytes = std::size_t{256} << 20;
// The newest results.json version this sluice reads (the writer's
// k_results_version, scenarios/runner/results_writer.hpp; a test keeps the
// two equal). Newer files are refused rather than half understood.
inline constexpr std::uint64_t k_max_results_version = 1;

struct PhaseRecord {
  std::string workload;
  std::string phase;
  std::uint32_t ranks = 0;
  std::uint64_t bytes = 0;
  std::uint64_t ops = 0;
  double last_done_s = 0;
  double bytes_per_s = 0;  // last done
  double ops_per_s = 0;    // last done
  double latency_us_p50 = 0;
  double latency_us_p99 = 0;
  std::map<std::string, double> extra;
  // Throughput over time (results.json "progress"): window i is [i, i+1) x progress_window_s.
  double progress_window_s = 0;
  std::vector<double> progress_bytes_per_s;
};

struct RunRecord {
  std::string scenario;
  std::string label;    // sl.run's label ("" when none)
  std::string backend;  // "sim" | "hw" | "emulate" | "cluster"
  std::map<std::string, std::string> params;
  std::map<std::string, std::string> config;  // results.json's "config" (result_codec.hpp run_config), as text
  std::uint64_t seed = 0;
  bool ok = false;
  std::string error;
  std::vector<PhaseRecord> phases;
  std::map<std::string, double> counters;
};

// The metrics compare/plot look at, by name: bytes_per_s, ops_per_s,
// last_done_s, latency_us_p50, latency_us_p99, or extra.<name>. NaN when absent.
double phase_metric(const PhaseRecord& phase, const std::string& metric);
inline const std::vector<std::string> k_default_metrics = {"bytes_per_s", "ops_per_s", "last_done_s", "latency_us_p50",
                                                           "latency_us_p99"};
// Whether phase_metric knows the name (one of k_default_metrics, or extra.<name>).
bool is_phase_metric(const std::string& metric);

// The largest relative tolerance a claim may give (1e6: 100,000,000%); a
// larger one is no tolerance (1e308 printed as "inf%").
inline constexpr double k_max_claim_tolerance = 1e6;

// One claim a script checked on its results (results.json "claims", sl.claim;
// results.schema.json $defs/claim).
struct ClaimRecord {
  std::string text;
  std::string seed_words;  // "seed_figure": the seed's own words ("~2x"), may be empty
  bool holds = false;
  double measured = 0;  // NaN when the run wrote null
  // kind "seed_figure": the published value (nonzero) and the relative
  // tolerance (0..k_max_claim_tolerance) it holds within.
  std::optional<double> seed_value;
  double tolerance = 0;
  std::string tolerance_why;
  bool model_input = false;  // the figure is a parameter of the run
  // kind "shape" (or none): the bounds, at least one of them.
  std::optional<double> at_least;
  std::optional<double> at_most;
};

// A results file: its runs, its claims and whether it holds every run of its script.
struct ResultsFile {
  std::string path;  // "" for a document parsed from memory
  std::vector<RunRecord> runs;
  bool complete = true;         // results.json "complete" (absent: true; emulate output: true)
  std::string scenario;         // the document's "scenario" ("" when it has none: emulate output, a run object)
  bool sluice_results = false;  // the layout of `sluice run` (the only one with claims)
  std::vector<ClaimRecord> claims;
};

// Parses either layout; invalid_argument naming the missing/mistyped field
// ("results: runs[0].ok: expected a boolean, got string").
Result<ResultsFile> parse_results(const nlohmann::json& document);
// parse_results' runs.
Result<std::vector<RunRecord>> parse_runs(const nlohmann::json& document);
// Reads and parses a file: every command that reads results reads them here.
// io_error naming the path when it cannot be read; invalid_argument "PATH:
// ..." when it is not JSON (naming the line and column: base/json_text.hpp)
// or not results (naming the field).
Result<ResultsFile> load_results(const std::string& path);
Result<std::vector<RunRecord>> load_runs(const std::string& path);
// False only for a sluice-results document that says "complete": false.
bool results_complete(const nlohmann::json& document);
// "FILE is incomplete: its run was stopped before every point finished (N runs in it)".
std::string incomplete_note(const ResultsFile& file);

// The parameter point of a run: "scenario|k1=v1,k2=v2" (params sorted by
// name, `ignored` ones left out). Runs of different backends with the same key
// are the same experiment.
std::string point_key(const RunRecord& run, const std::vector<std::string>& ignored = {});

// A parameter as a number: a plain number ("4", "200000000.0"), a size in the
// tree's one size grammar (core/common/byte_size.hpp: "4MiB", "2KiB", "4096";
// "4MB", "1M" and "1.5k" are refused, as ambiguous), or a rate ending in
// "/s" or "bit" with a decimal (k/M/G/T) or binary (Ki/Mi/Gi) prefix
// ("200mbit", "1Gbit", "12.5GB/s"; "bit" rates stay in bits).
// invalid_argument naming the text otherwise.
Result<double> parse_quantity(const std::string& text);

}  // namespace sluice::analysis
