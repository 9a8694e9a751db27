#include "analysis/run_report.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>

#include "analysis/comparison.hpp"
#include "analysis/plotter.hpp"
#include "analysis/stats.hpp"

namespace sluice::analysis {
namespace {

std::string first_varying_param(const std::vector<RunRecord>& runs) {
  std::map<std::string, std::set<std::string>> values;
  for (const RunRecord& r : runs) {
    for (const auto& [k, v] : r.params) {
      if (parse_quantity(v).ok()) values[k].insert(v);
    }
  }
  for (const auto& [k, vs] : values) {
    if (vs.size() > 1) return k;
  }
  return values.empty() ? std::string{} : values.begin()->first;
}

// "**Incomplete results.** FILE is incomplete: ..." lines, or "".
std::string incomplete_text(const std::vector<std::string>& notes) {
  std::string out;
  for (const std::string& note : notes) out += "**Incomplete results.** " + note + ".\n\n";
  return out;
}

// The Markdown sections of the report (write_run_report).
std::string throughput_section(const std::vector<RunRecord>& runs) {
  std::string md;
  // Summary per point, backend, phase.
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<double>> rates;
  for (const RunRecord& r : runs) {
    if (!r.ok) continue;
    for (const PhaseRecord& p : r.phases) {
      rates[{point_key(r), r.backend, p.workload + "/" + p.phase}].push_back(p.bytes_per_s / k_bytes_per_gb);
    }
  }
  md +=
      "## Throughput per point\n\n| point | backend | phase | n | median GB/s | IQR | MAD |\n"
      "|---|---|---|---:|---:|---:|---:|\n";
  for (const auto& [id, ys] : rates) {
    Result<Summary> s = summarize(ys);
    if (!s.ok()) continue;
    md += fmt::format("| `{}` | {} | {} | {} | {:.4g} | {:.4g} | {:.4g} |\n", std::get<0>(id), std::get<1>(id),
                      std::get<2>(id), s->n, s->median, s->iqr, s->mad);
  }
  for (const RunRecord& r : runs) {
    if (!r.ok) md += fmt::format("\nFailed run `{}` ({}): {}\n", point_key(r), r.backend, r.error);
  }
  return md;
}

std::string plot_section(const std::vector<RunRecord>& runs, const ReportOptions& options) {
  std::string md;
  const std::string x = options.x_param.empty() ? first_varying_param(runs) : options.x_param;
  md += "\n## Plot\n\n";
  Result<PlotSpec> spec = x.empty() ? Result<PlotSpec>(error(StatusCode::invalid_argument, "no numeric param"))
                                    : throughput_plot(runs, x, options.phase);
  if (!spec.ok()) {
    md += "No plot: " + spec.status().message() + "\n";
  } else {
    const std::string base = "throughput_" + options.phase;
    Result<std::vector<std::string>> files = render_plot(*spec, options.out_dir + "/" + base);
    if (files.ok()) {
      md += fmt::format("![{}]({}.svg)\n\n[PNG]({}.png) · data `{}.dat` · script `{}.gp`\n", spec->title, base, base,
                        base, base);
    } else {
      md += "No plot: " + files.status().message() + "\n";
    }
  }
  return md;
}

std::string over_time_section(const std::vector<RunRecord>& runs, const ReportOptions& options) {
  std::string md;
  // Throughput over time of the report's phase, one line per run (at most
  // k_max_progress_series runs, the first ones, so the plot stays readable).
  PlotSpec over_time;
  over_time.title = "throughput over time, phase " + options.phase;
  over_time.x_label = "time since the phase started (s)";
  over_time.y_label = "GB/s";
  for (std::size_t i = 0; i < runs.size() && over_time.series.size() < k_max_progress_series; ++i) {
    for (const PhaseRecord& p : runs[i].phases) {
      if (p.phase != options.phase || p.progress_bytes_per_s.empty() || !(p.progress_window_s > 0)) continue;
      // Plotted in at most k_max_plotted_windows windows (adjacent windows
      // averaged), so a phase of few ops per window does not draw as noise;
      // progress.csv keeps every window.
      const std::size_t n = p.progress_bytes_per_s.size();
      const std::size_t merge = (n + k_max_plotted_windows - 1) / k_max_plotted_windows;
      PlotSeries line;
      line.title = fmt::format("run {} {}", i, runs[i].backend);
      for (std::size_t first = 0; first < n; first += merge) {
        const std::size_t last = std::min(n, first + merge);
        double sum = 0;
        for (std::size_t w = first; w < last; ++w) sum += p.progress_bytes_per_s[w];
        line.x.push_back(0.5 * static_cast<double>(first + last) * p.progress_window_s);
        line.y.push_back(sum / static_cast<double>(last - first) / k_bytes_per_gb);
      }
      over_time.series.push_back(std::move(line));
    }
  }
  md += "\n## Throughput over time\n\n";
  if (over_time.series.empty()) {
    md += "No phase " + options.phase + " with progress windows.\n";
  } else {
    const std::string base = "progress_" + options.phase;
    Result<std::vector<std::string>> files = render_plot(over_time, options.out_dir + "/" + base);
    if (files.ok()) {
      md += fmt::format("![{}]({}.svg)\n\n[PNG]({}.png) · data `{}.dat`\n", over_time.title, base, base, base);
    } else {
      md += "No plot: " + files.status().message() + "\n";
    }
  }
  return md;
}

std::string comparison_section(const std::vector<RunRecord>& runs) {
  std::string md;
  Result<Comparison> cmp = compare_runs(runs);
  if (cmp.ok()) {
    md += fmt::format("\n## Predicted vs measured\n\nmedian error {:.2f}%, p90 {:.2f}% over {} metrics.\n\n",
                      100 * cmp->median_rel_err, 100 * cmp->p90_rel_err, cmp->rows.size());
    md += "| point | phase | metric | predicted | measured | error % |\n|---|---|---|---:|---:|---:|\n";
    for (const ComparisonRow& r : cmp->rows) {
      md += fmt::format("| `{}` | {}/{} | {} | {:.6g} ({}) | {:.6g} ({}) | {:.2f} |\n", r.point, r.workload, r.phase,
                        r.metric, r.predicted, r.predicted_backend, r.measured, r.measured_backend, 100 * r.rel_err);
    }
  }
  return md;
}

}  // namespace

Result<std::string> write_run_report(const std::vector<RunRecord>& runs, const ReportOptions& options) {
  if (runs.empty()) return error(StatusCode::invalid_argument, "report: no run");
  std::error_code ec;
  std::filesystem::create_directories(options.out_dir, ec);
  if (ec) return error(StatusCode::io_error, "report: cannot create " + options.out_dir + ": " + ec.message());
  std::string md = "# " + options.title + "\n\n";
  std::size_t ok = 0;
  for (const RunRecord& r : runs) ok += r.ok ? 1 : 0;
  md += fmt::format("{} runs, {} ok.\n\n", runs.size(), ok) + incomplete_text(options.incomplete_notes);

  md += throughput_section(runs);
  md += plot_section(runs, options);
  md += over_time_section(runs, options);
  md += comparison_section(runs);
  const std::string path = options.out_dir + "/report.md";
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return error(StatusCode::io_error, "report: cannot create " + path);
  out << md;
  if (!out) return error(StatusCode::io_error, "report: cannot write " + path);
  return path;
}

}  // namespace sluice::analysis
