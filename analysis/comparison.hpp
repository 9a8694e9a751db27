// Predicted vs measured: aligns runs of the same scenario and parameter point
// (point_key) from different backends and reports the relative error of each
// metric of each phase. The reference ("measured") backend is hw if present,
// else emulate; every other backend of the point is a prediction of it.
// Relative error = |predicted - measured| / |measured| (undefined, and left
// out, where measured is 0 or either value is not finite). Repeats of one
// backend at one point (different seeds) are reduced to their median first.
//
// compare_with_measured (sl.compare, issue 22) aligns the runs of a study
// (the predictions) with runs measured elsewhere (`sluice import` of fio,
// elbencho, ...; another `sluice run`), whatever their backends, by the
// values of chosen params rather than by point_key: an imported fio file's
// scenario is "fio" and its params are fio's, the study's are its own.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/run_record.hpp"
#include "core/common/status.hpp"

namespace sluice::analysis {

struct ComparisonRow {
  std::string point;  // point_key
  std::string workload;
  std::string phase;
  std::string metric;
  std::string predicted_backend;
  std::string measured_backend;
  double predicted = 0;
  double measured = 0;
  double rel_err = 0;  // fraction, not percent
  std::size_t predicted_repeats = 0;
  std::size_t measured_repeats = 0;
};

struct Comparison {
  std::vector<ComparisonRow> rows;
  double median_rel_err = 0;  // over all rows; 0 when there is none
  double p90_rel_err = 0;
  std::vector<std::string> unmatched;              // points without a pair (compare_runs: one backend only)
  std::string unmatched_why = "one backend only";  // how comparison_text says why they have none
};

struct CompareOptions {
  std::vector<std::string> metrics = k_default_metrics;
  std::vector<std::string> ignored_params;  // left out of point_key (e.g. a backend-specific knob)
  std::string measured_backend;             // empty: cluster, else hw, else emulate
};

// invalid_argument when no point has two backends.
Result<Comparison> compare_runs(const std::vector<RunRecord>& runs, const CompareOptions& options = {});

// Which params place a measured run, and what to compare (compare_with_measured).
struct MeasuredMatch {
  std::vector<std::string> params;  // empty: every param of the measured run
  std::vector<std::string> metrics = k_default_metrics;
};

// The point of each measured run is its values of match.params (its rows'
// `point`: "bs_bytes=4096,rw=read", in match.params' order, else by name); a
// predicted run is at that point when it has an equal value for each of those
// params: the same text, or quantities of the same value (parse_quantity:
// "4KiB" and "4096"). Scenario names do not take part. Phases pair by
// workload and phase name. At each point the measured runs (of every file)
// are one side and the predicted runs of each backend another, each reduced
// to its median; failed runs take no part. `unmatched`: the measured points no
// predicted run is at.
// invalid_argument: a metric phase_metric does not know ("metrics: ..."); a
// match param a measured run lacks (naming its file) or no predicted run has
// ("match: ..."); no successful run on one side; no row at all.
Result<Comparison> compare_with_measured(const std::vector<RunRecord>& predicted,
                                         const std::vector<ResultsFile>& measured, const MeasuredMatch& match);

std::string comparison_text(const Comparison& comparison);
nlohmann::json comparison_json(const Comparison& comparison);

}  // namespace sluice::analysis
