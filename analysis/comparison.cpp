#include "analysis/comparison.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "analysis/stats.hpp"

namespace sluice::analysis {
namespace {

// (workload, phase, metric) -> samples over repeats
using PhaseSamples = std::map<std::tuple<std::string, std::string, std::string>, std::vector<double>>;

// One side of a point (one backend's predictions, or the measurements): the
// samples of its runs and how many runs they came from.
struct Side {
  PhaseSamples samples;
  std::size_t runs = 0;
};

void add_run(Side& side, const RunRecord& run, const std::vector<std::string>& metrics) {
  side.runs += 1;
  for (const PhaseRecord& p : run.phases) {
    for (const std::string& m : metrics) side.samples[{p.workload, p.phase, m}].push_back(phase_metric(p, m));
  }
}

// A row for each (workload, phase, metric) both sides have, with finite
// medians and a measured value that is not 0.
void append_rows(const std::string& point, const std::string& predicted_backend, const Side& predicted,
                 const std::string& measured_backend, const Side& measured, std::vector<ComparisonRow>& rows) {
  for (const auto& [id, values] : predicted.samples) {
    auto it = measured.samples.find(id);
    if (it == measured.samples.end()) continue;
    Result<double> p = median(values);
    Result<double> m = median(it->second);
    if (!p.ok() || !m.ok() || *m == 0) continue;
    rows.push_back(ComparisonRow{point, std::get<0>(id), std::get<1>(id), std::get<2>(id), predicted_backend,
                                 measured_backend, *p, *m, std::fabs(*p - *m) / std::fabs(*m), predicted.runs,
                                 measured.runs});
  }
}

// The rows' median and p90 relative error; invalid_argument `none` when there is no row.
Result<Comparison> with_error_percentiles(Comparison c, const std::string& none) {
  if (c.rows.empty()) return error(StatusCode::invalid_argument, none);
  std::vector<double> errs;
  for (const ComparisonRow& r : c.rows) errs.push_back(r.rel_err);
  c.median_rel_err = *percentile(errs, 0.5);
  c.p90_rel_err = *percentile(errs, 0.9);
  return c;
}

std::string joined(const std::vector<std::string>& items) {
  std::string s;
  for (const std::string& item : items) s += (s.empty() ? "" : ", ") + item;
  return s;
}

std::string param_names(const RunRecord& run) {
  std::vector<std::string> names;
  for (const auto& [k, v] : run.params) names.push_back(k);
  return names.empty() ? "none" : joined(names);
}

// Equal parameter values: the same text, or quantities of the same value ("4KiB" and "4096").
bool same_value(const std::string& a, const std::string& b) {
  if (a == b) return true;
  Result<double> x = parse_quantity(a);
  Result<double> y = parse_quantity(b);
  return x.ok() && y.ok() && *x == *y;
}

// A measured point: the params (and values) that place it, and its runs' samples.
struct MeasuredPoint {
  std::vector<std::pair<std::string, std::string>> at;
  Side side;
  std::set<std::string> backends;
};

std::string point_text(const std::vector<std::pair<std::string, std::string>>& at) {
  std::string s;
  for (const auto& [k, v] : at) s += (s.empty() ? "" : ",") + k + "=" + v;
  return s.empty() ? "(no params)" : s;
}

bool is_at(const RunRecord& run, const MeasuredPoint& point) {
  for (const auto& [k, v] : point.at) {
    auto it = run.params.find(k);
    if (it == run.params.end() || !same_value(it->second, v)) return false;
  }
  return true;
}

// The metrics are ones phase_metric knows; each match param is in every
// measured run and in some predicted run.
Status check_match(const std::vector<RunRecord>& predicted, const std::vector<ResultsFile>& measured,
                   const MeasuredMatch& match) {
  for (const std::string& m : match.metrics) {
    if (!is_phase_metric(m)) {
      return error(StatusCode::invalid_argument,
                   "metrics: \"" + m + "\" is not a metric (" + joined(k_default_metrics) + ", or extra.<name>)");
    }
  }
  for (const std::string& param : match.params) {
    for (const ResultsFile& file : measured) {
      for (std::size_t i = 0; i < file.runs.size(); ++i) {
        const RunRecord& run = file.runs[i];
        if (!run.ok || run.params.contains(param)) continue;
        return error(StatusCode::invalid_argument, "match: " + file.path + ": run " + std::to_string(i + 1) + " (" +
                                                       run.scenario + ") has no param \"" + param + "\" (it has " +
                                                       param_names(run) + ")");
      }
    }
    const auto has = [&](const RunRecord& r) { return r.ok && r.params.contains(param); };
    if (std::none_of(predicted.begin(), predicted.end(), has)) {
      const auto first_ok = std::find_if(predicted.begin(), predicted.end(), [](const RunRecord& r) { return r.ok; });
      return error(
          StatusCode::invalid_argument,
          "match: no predicted run has a param \"" + param + "\"" +
              (first_ok == predicted.end() ? std::string() : " (the first has " + param_names(*first_ok) + ")"));
    }
  }
  return ok_status();
}

// The measured runs of every file by point (point_text), each point's side filled.
std::map<std::string, MeasuredPoint> measured_points(const std::vector<ResultsFile>& measured,
                                                     const MeasuredMatch& match) {
  std::map<std::string, MeasuredPoint> points;
  for (const ResultsFile& file : measured) {
    for (const RunRecord& run : file.runs) {
      if (!run.ok) continue;
      std::vector<std::pair<std::string, std::string>> at;
      if (match.params.empty()) {
        for (const auto& [k, v] : run.params) at.emplace_back(k, v);
      } else {
        for (const std::string& k : match.params) at.emplace_back(k, run.params.at(k));
      }
      MeasuredPoint& point = points[point_text(at)];
      point.at = std::move(at);
      point.backends.insert(run.backend);
      add_run(point.side, run, match.metrics);
    }
  }
  return points;
}

// The measured side of a point when none is named: a real cluster, then one
// process on hardware, then the netns emulation.
std::string measured_backend_of(const std::map<std::string, Side>& backends) {
  for (const char* b : {"cluster", "hw", "emulate"}) {
    if (backends.contains(b)) return b;
  }
  return "emulate";
}

}  // namespace

Result<Comparison> compare_runs(const std::vector<RunRecord>& runs, const CompareOptions& options) {
  std::map<std::string, std::map<std::string, Side>> points;  // point -> backend -> its runs
  for (const RunRecord& run : runs) {
    if (!run.ok) continue;
    add_run(points[point_key(run, options.ignored_params)][run.backend], run, options.metrics);
  }
  Comparison out;
  for (const auto& [key, backends] : points) {
    std::string measured = options.measured_backend;
    if (measured.empty()) measured = measured_backend_of(backends);
    if (backends.size() < 2 || !backends.contains(measured)) {
      out.unmatched.push_back(key);
      continue;
    }
    for (const auto& [backend, side] : backends) {
      if (backend != measured) append_rows(key, backend, side, measured, backends.at(measured), out.rows);
    }
  }
  const std::string none =
      "compare: no parameter point has both a measured (hw/emulate) and a predicted run with a common "
      "finite metric (" +
      std::to_string(out.unmatched.size()) + " points with one backend only)";
  return with_error_percentiles(std::move(out), none);
}

Result<Comparison> compare_with_measured(const std::vector<RunRecord>& predicted,
                                         const std::vector<ResultsFile>& measured, const MeasuredMatch& match) {
  const auto first_ok = std::find_if(predicted.begin(), predicted.end(), [](const RunRecord& r) { return r.ok; });
  if (first_ok == predicted.end()) return error(StatusCode::invalid_argument, "no successful predicted run to compare");
  if (Status s = check_match(predicted, measured, match); !s.ok()) return s;
  const std::map<std::string, MeasuredPoint> points = measured_points(measured, match);
  if (points.empty()) return error(StatusCode::invalid_argument, "no successful measured run to compare with");
  Comparison out;
  out.unmatched_why = "no predicted run there";
  for (const auto& [key, point] : points) {
    std::map<std::string, Side> by_backend;
    for (const RunRecord& run : predicted) {
      if (run.ok && is_at(run, point)) add_run(by_backend[run.backend], run, match.metrics);
    }
    if (by_backend.empty()) out.unmatched.push_back(key);
    std::string measured_backend;
    for (const std::string& b : point.backends) measured_backend += (measured_backend.empty() ? "" : "+") + b;
    for (const auto& [backend, side] : by_backend) {
      append_rows(key, backend, side, measured_backend, point.side, out.rows);
    }
  }
  const MeasuredPoint& first = points.begin()->second;
  std::vector<std::pair<std::string, std::string>> first_predicted;
  for (const auto& [k, v] : first.at) {
    auto it = first_ok->params.find(k);
    first_predicted.emplace_back(k, it == first_ok->params.end() ? "(none)" : it->second);
  }
  const std::string none = "no measured point has a predicted run at it with a common finite metric (" +
                           std::to_string(points.size()) + " measured point" + (points.size() == 1 ? "" : "s") +
                           ", the first at " + point_text(first.at) + "; the first predicted run is at " +
                           point_text(first_predicted) + ")";
  return with_error_percentiles(std::move(out), none);
}

std::string comparison_text(const Comparison& c) {
  std::string s = fmt::format("{:<40} {:<18} {:<16} {:>14} {:>14} {:>8}\n", "point", "phase", "metric", "predicted",
                              "measured", "err_%");
  for (const ComparisonRow& r : c.rows) {
    s += fmt::format("{:<40} {:<18} {:<16} {:>14.6g} {:>14.6g} {:>8.2f}\n", r.point, r.workload + "/" + r.phase,
                     r.metric, r.predicted, r.measured, 100 * r.rel_err);
  }
  s += fmt::format("{} rows, median_err={:.2f}% p90_err={:.2f}%\n", c.rows.size(), 100 * c.median_rel_err,
                   100 * c.p90_rel_err);
  for (const std::string& u : c.unmatched) s += "unmatched (" + c.unmatched_why + "): " + u + "\n";
  return s;
}

nlohmann::json comparison_json(const Comparison& c) {
  nlohmann::json rows = nlohmann::json::array();
  for (const ComparisonRow& r : c.rows) {
    rows.push_back({{"point", r.point},
                    {"workload", r.workload},
                    {"phase", r.phase},
                    {"metric", r.metric},
                    {"predicted_backend", r.predicted_backend},
                    {"measured_backend", r.measured_backend},
                    {"predicted", r.predicted},
                    {"measured", r.measured},
                    {"rel_err_pct", 100 * r.rel_err},
                    {"predicted_repeats", r.predicted_repeats},
                    {"measured_repeats", r.measured_repeats}});
  }
  return {{"format", "sluice-comparison"},
          {"version", 1},
          {"rows", rows},
          {"median_err_pct", 100 * c.median_rel_err},
          {"p90_err_pct", 100 * c.p90_rel_err},
          {"unmatched", c.unmatched}};
}

}  // namespace sluice::analysis
