// Running a Lua 5.4 scenario script (the contract between the CLI and the
// Lua layer; the implementation is scenarios/lua/*.cpp).
//
// A script does `local sl = require "sluice"`, declares its parameters, builds
// clusters / file systems / workloads, and calls `sl.run{...}`. sl.run turns
// its arguments (and every sweep point) into ScenarioSpecs and hands them to
// ScriptOptions::run, which the CLI binds to the runner (scenarios/runner);
// the RunResults come back to the script as tables, so the script can print
// its headline numbers next to the seed figures (`sl.report`).
//
// Errors: a mistake in the script (syntax, unknown field, bad size, node that
// does not exist, limit hit) is Status invalid_argument whose message starts
// with "<file>:<line>: "; a run that fails is Status with the runner's
// message. The CLI maps the first to exit code 2, the second to 1.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/common/status.hpp"
#include "scenarios/scenario_spec.hpp"

namespace sluice::scenario {

// A parameter the script declares: `params = { nodes = {"storage nodes", 4}, ... }`
// (or sl.params{...}); `--set nodes=8` overrides the default.
struct ParamDecl {
  std::string name;
  std::string description;
  std::string default_text;  // the default, as the user would type it
  std::string type;          // "number", "string", "boolean", "size", "list"
};

// Runs the given points (one per sweep point) on `backend`; returns one
// RunResult per point, in order. Called from inside the script (sl.run).
using RunPointsFn =
    std::function<Result<std::vector<RunResult>>(const std::vector<ScenarioSpec>& points, Backend backend)>;

// A plot a script asks for (report:plot("name.svg")): curves of one metric
// against one parameter, drawn by whoever the CLI binds (analysis/plotter).
struct ScriptPlotSeries {
  std::string title;
  std::vector<double> x;
  std::vector<double> y;
};
struct ScriptPlot {
  std::string out_base;  // <out_dir>/<name without .svg/.png>
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log_x = false;
  std::vector<ScriptPlotSeries> series;
};
// Draws the plot; returns the files written. unavailable (no gnuplot) and
// other errors are reported by the script's run as "not drawn: why".
using DrawPlotFn = std::function<Result<std::vector<std::string>>(const ScriptPlot& plot)>;
inline constexpr std::size_t k_max_plot_series = 64;
inline constexpr std::size_t k_max_plot_points = 4096;  // per series

// sl.compare{results, measured = "fio.json", match = {...}, metrics = {...}}:
// the script's runs (the predictions) next to results files measured
// elsewhere (`sluice import` output, another run's results.json), compared by
// whoever the CLI binds (scenarios/calibrate/script_compare.hpp, over
// analysis/comparison.hpp's compare_with_measured).
struct ScriptMeasuredFile {
  std::string argument;  // how messages name it: "measured", "measured[2]"
  std::string given;     // the path as the script wrote it
  std::string path;      // where it was found: as given, else in the script's folder
};
struct ScriptCompareRequest {
  std::vector<ScriptMeasuredFile> measured;
  std::vector<std::string> match;    // params that place a measured run; empty: all of its params
  std::vector<std::string> metrics;  // empty: those `sluice compare` compares by default
};
struct ScriptComparisonRow {
  std::string point;  // the measured run's values of the matched params: "rw=read,bs_bytes=4096"
  std::string workload;
  std::string phase;
  std::string metric;
  std::string predicted_backend;
  std::string measured_backend;
  double predicted = 0;  // medians over the runs at the point
  double measured = 0;
  double rel_err = 0;  // |predicted - measured| / |measured|, a fraction
};
struct ScriptComparison {
  std::vector<ScriptComparisonRow> rows;
  double median_rel_err = 0;
  double p90_rel_err = 0;
  std::vector<std::string> unmatched;  // measured points no run of the script is at
  std::string text;                    // the table as `sluice compare` prints it (and notes on the files)
};
// Compares `predicted` (the runs the script passed, in the order it made
// them) with the request's files. invalid_argument naming the argument for
// what the script got wrong (a file that cannot be read, a param no run has,
// an unknown metric, no point in common); sl.compare raises it as a script
// error. Called from inside the script, like RunPointsFn.
using CompareFn = std::function<Result<ScriptComparison>(const std::vector<RunResult>& predicted,
                                                         const ScriptCompareRequest& request)>;
inline constexpr std::size_t k_max_compare_files = 64;  // files one sl.compare reads

// Limits on a script (a runaway script stops with an error naming the limit).
inline constexpr std::uint64_t k_lua_default_memory_bytes = 256ULL << 20;
inline constexpr std::uint64_t k_lua_default_instructions = 2'000'000'000ULL;

struct ScriptOptions {
  std::map<std::string, std::string> sets;  // --set name=value
  std::optional<std::uint64_t> seed;        // --seed (else the script's, else 1)
  std::optional<Backend> backend;           // --backend overrides the script's choice
  std::string out_dir = "out";              // where reports/plots the script asks for go
  std::uint64_t memory_limit_bytes = k_lua_default_memory_bytes;
  std::uint64_t instruction_limit = k_lua_default_instructions;
  RunPointsFn run;              // required for scripts that call sl.run
  DrawPlotFn draw_plot;         // report:plot(); empty: plots are not drawn (said so)
  CompareFn compare;            // sl.compare; empty: sl.compare is a script error saying so
  std::ostream* out = nullptr;  // where print/sl.report write (null: std::cout)
};

struct ScriptOutcome {
  std::string scenario;                             // script name without .lua
  std::vector<ParamDecl> params;                    // declared parameters
  std::map<std::string, std::string> param_values;  // after --set
  std::vector<RunResult> results;                   // every run the script made, in order
  std::vector<std::string> headlines;               // lines the script reported as headline figures
  std::vector<Claim> claims;                        // shape claims the script checked (sl.claim), in order
  std::vector<MlperfRow> mlperf;                    // sl.mlperf's answers, in order
};

// Runs the script. invalid_argument ("file:line: ...") for script errors.
Result<ScriptOutcome> run_script(const std::string& path, const ScriptOptions& options);

// The parameters a script declares, without running anything.
Result<std::vector<ParamDecl>> describe_script(const std::string& path);

// A machine a script builds (sl.machines.generic{...}, import_nvidia_smi).
struct ScriptMachine {
  std::string type;   // "generic", "dgx_a100", "import_nvidia_smi", ...
  std::string where;  // "file:line" of the call
  std::shared_ptr<const topo::Topology> topology;
};

// The machines a script builds before its first sl.run, in order, without
// running anything (`sluice topo show SCRIPT.lua`); sets are --set values.
Result<std::vector<ScriptMachine>> script_machines(const std::string& path,
                                                   const std::map<std::string, std::string>& sets = {});

}  // namespace sluice::scenario
