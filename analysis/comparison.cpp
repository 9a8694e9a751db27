#include "analysis/comparison.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "analysis/stats.hpp"

namespace sluice::analysis {
namespace {

// (workload, phase, metric) -> samples over repeats
using PhaseSamples = std::map<std::tuple<std::string, std::string, std::string>, std::vector<double>>;

}  // namespace

Result<Comparison> compare_runs(const std::vector<RunRecord>& runs, const CompareOptions& options) {
  // point -> backend -> samples; and repeat counts
  std::map<std::string, std::map<std::string, PhaseSamples>> points;
  std::map<std::string, std::map<std::string, std::size_t>> repeats;
  for (const RunRecord& run : runs) {
    if (!run.ok) continue;
    const std::string key = point_key(run, options.ignored_params);
    repeats[key][run.backend] += 1;
    PhaseSamples& s = points[key][run.backend];
    for (const PhaseRecord& p : run.phases) {
      for (const std::string& m : options.metrics) s[{p.workload, p.phase, m}].push_back(phase_metric(p, m));
    }
  }
  Comparison out;
  std::vector<double> errs;
  for (const auto& [key, backends] : points) {
    std::string measured = options.measured_backend;
    if (measured.empty()) measured = backends.contains("hw") ? "hw" : "emulate";
    if (backends.size() < 2 || !backends.contains(measured)) {
      out.unmatched.push_back(key);
      continue;
    }
    const PhaseSamples& ref = backends.at(measured);
    for (const auto& [backend, samples] : backends) {
      if (backend == measured) continue;
      for (const auto& [id, values] : samples) {
        auto it = ref.find(id);
        if (it == ref.end()) continue;
        Result<double> p = median(values);
        Result<double> m = median(it->second);
        if (!p.ok() || !m.ok() || *m == 0) continue;
        ComparisonRow row{key,
                          std::get<0>(id),
                          std::get<1>(id),
                          std::get<2>(id),
                          backend,
                          measured,
                          *p,
                          *m,
                          std::fabs(*p - *m) / std::fabs(*m),
                          repeats[key][backend],
                          repeats[key][measured]};
        errs.push_back(row.rel_err);
        out.rows.push_back(std::move(row));
      }
    }
  }
  if (out.rows.empty()) {
    return error(StatusCode::invalid_argument,
                 "compare: no parameter point has both a measured (hw/emulate) and a predicted run with a common "
                 "finite metric (" +
                     std::to_string(out.unmatched.size()) + " points with one backend only)");
  }
  out.median_rel_err = *percentile(errs, 0.5);
  out.p90_rel_err = *percentile(errs, 0.9);
  return out;
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
  for (const std::string& u : c.unmatched) s += "unmatched (one backend only): " + u + "\n";
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
