#include "scenarios/calibrate/script_compare.hpp"

#include <utility>

#include "analysis/comparison.hpp"
#include "scenarios/runner/result_codec.hpp"

namespace sluice::calibrate {
namespace {

scenario::ScriptComparison script_comparison(const analysis::Comparison& c) {
  scenario::ScriptComparison out;
  for (const analysis::ComparisonRow& r : c.rows) {
    out.rows.push_back(scenario::ScriptComparisonRow{r.point, r.workload, r.phase, r.metric, r.predicted_backend,
                                                     r.measured_backend, r.predicted, r.measured, r.rel_err});
  }
  out.median_rel_err = c.median_rel_err;
  out.p90_rel_err = c.p90_rel_err;
  out.unmatched = c.unmatched;
  out.text = analysis::comparison_text(c);
  return out;
}

}  // namespace

Result<std::vector<analysis::RunRecord>> to_run_records(const std::vector<scenario::RunResult>& results) {
  std::vector<analysis::RunRecord> out;
  for (const scenario::RunResult& r : results) {
    Result<std::vector<analysis::RunRecord>> parsed = analysis::parse_runs(scenario::to_json(r));
    if (!parsed.ok() || parsed->size() != 1) {
      return error(StatusCode::internal, "a run's result could not be read back: " +
                                             (parsed.ok() ? std::string("not one run") : parsed.status().message()));
    }
    out.push_back(std::move(parsed->front()));
  }
  return out;
}

Result<scenario::ScriptComparison> compare_script_runs(const std::vector<scenario::RunResult>& predicted,
                                                       const scenario::ScriptCompareRequest& request) {
  Result<std::vector<analysis::RunRecord>> records = to_run_records(predicted);
  if (!records.ok()) return records.status();
  std::vector<analysis::ResultsFile> files;
  std::string notes;
  for (const scenario::ScriptMeasuredFile& f : request.measured) {
    Result<analysis::ResultsFile> file = analysis::load_results(f.path);
    if (!file.ok()) {
      return error(StatusCode::invalid_argument,
                   f.argument + ": cannot read " + f.given + ": " + file.status().message());
    }
    file->path = f.given;  // messages name the file as the script does
    if (!file->complete) notes += "note: " + analysis::incomplete_note(*file) + "\n";
    files.push_back(std::move(file).value());
  }
  analysis::MeasuredMatch match;
  match.params = request.match;
  if (!request.metrics.empty()) match.metrics = request.metrics;
  Result<analysis::Comparison> c = analysis::compare_with_measured(*records, files, match);
  if (!c.ok()) return c.status();
  scenario::ScriptComparison out = script_comparison(*c);
  out.text = notes + out.text;
  return out;
}

}  // namespace sluice::calibrate
