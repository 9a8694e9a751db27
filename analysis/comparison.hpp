// Predicted vs measured: aligns runs of the same scenario and parameter point
// (point_key) from different backends and reports the relative error of each
// metric of each phase. The reference ("measured") backend is hw if present,
// else emulate; every other backend of the point is a prediction of it.
// Relative error = |predicted - measured| / |measured| (undefined, and left
// out, where measured is 0 or either value is not finite). Repeats of one
// backend at one point (different seeds) are reduced to their median first.
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
  std::vector<std::string> unmatched;  // points with one backend only
};

struct CompareOptions {
  std::vector<std::string> metrics = k_default_metrics;
  std::vector<std::string> ignored_params;  // left out of point_key (e.g. a backend-specific knob)
  std::string measured_backend;             // empty: hw, else emulate
};

// invalid_argument when no point has two backends.
Result<Comparison> compare_runs(const std::vector<RunRecord>& runs, const CompareOptions& options = {});

std::string comparison_text(const Comparison& comparison);
nlohmann::json comparison_json(const Comparison& comparison);

}  // namespace sluice::analysis
