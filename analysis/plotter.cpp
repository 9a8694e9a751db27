#include "analysis/plotter.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "analysis/stats.hpp"

namespace sluice::analysis {
namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

// For a path inside a shell command line, single-quoted.
std::string shell_quoted(const std::string& s) {
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

Status write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return error(StatusCode::io_error, "plot: cannot create " + path);
  out << text;
  if (!out) return error(StatusCode::io_error, "plot: cannot write " + path);
  return ok_status();
}

}  // namespace

bool gnuplot_available() { return std::system("gnuplot --version >/dev/null 2>&1") == 0; }

std::string gnuplot_data(const PlotSpec& spec) {
  std::string d;
  for (std::size_t s = 0; s < spec.series.size(); ++s) {
    const PlotSeries& ps = spec.series[s];
    d += fmt::format("# {}\n", ps.title);
    for (std::size_t i = 0; i < ps.x.size(); ++i) {
      const bool bars = !ps.y_low.empty();
      d += fmt::format("{:.9g} {:.9g} {:.9g} {:.9g}\n", ps.x[i], ps.y[i], bars ? ps.y_low[i] : ps.y[i],
                       bars ? ps.y_high[i] : ps.y[i]);
    }
    d += "\n\n";
  }
  return d;
}

std::string gnuplot_script(const PlotSpec& spec, const std::string& data_path, const std::string& svg_path,
                           const std::string& png_path) {
  std::string g;
  g += fmt::format("set title {} noenhanced\nset xlabel {} noenhanced\nset ylabel {} noenhanced\n", quoted(spec.title),
                   quoted(spec.x_label), quoted(spec.y_label));
  g +=
      "set grid\nset key bottom right noenhanced\nset yrange [0:*]\nset offsets graph 0.03, graph 0.03, graph 0.1, 0\n";
  if (spec.log_x) g += "set logscale x 2\n";
  for (const RegimeMark& r : spec.regimes) {
    g += fmt::format("set arrow from {:.9g}, graph 0 to {:.9g}, graph 1 nohead dashtype 2 lc rgb 'gray40'\n", r.x, r.x);
    g += fmt::format("set label {} at {:.9g}, graph 0.95 offset 0.5,0 tc rgb 'gray30' noenhanced\n", quoted(r.label),
                     r.x);
  }
  std::string plot = "plot ";
  for (std::size_t s = 0; s < spec.series.size(); ++s) {
    const std::string t = quoted(spec.series[s].title);
    if (s > 0) plot += ", \\\n     ";
    plot +=
        fmt::format("{} index {} using 1:2 with linespoints lw 2 pt 7 lc {} title {}", quoted(data_path), s, s + 1, t);
    if (!spec.series[s].y_low.empty()) {
      plot += fmt::format(", \\\n     {} index {} using 1:2:3:4 with yerrorbars lc {} notitle", quoted(data_path), s,
                          s + 1);
    }
  }
  g += fmt::format("set terminal svg size {},{} dynamic background rgb 'white'\nset output {}\n{}\nset output\n",
                   k_plot_width_px, k_plot_height_px, quoted(svg_path), plot);
  g += fmt::format(
      "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {{ set terminal pngcairo size {},{} }} "
      "else {{ set terminal png size {},{} }}\nset output {}\nreplot\nset output\n",
      k_plot_width_px, k_plot_height_px, k_plot_width_px, k_plot_height_px, quoted(png_path));
  return g;
}

Result<std::vector<std::string>> render_plot(const PlotSpec& spec, const std::string& out_base) {
  if (spec.series.empty()) return error(StatusCode::invalid_argument, "render_plot: no series");
  for (const PlotSeries& s : spec.series) {
    if (s.x.empty() || s.x.size() != s.y.size() ||
        (!s.y_low.empty() && (s.y_low.size() != s.x.size() || s.y_high.size() != s.x.size()))) {
      return error(StatusCode::invalid_argument, "render_plot: series \"" + s.title +
                                                     "\" is empty or has x, y and error bar columns of different "
                                                     "lengths");
    }
  }
  if (!gnuplot_available()) return error(StatusCode::unavailable, "render_plot: gnuplot is not installed");
  const std::string dat = out_base + ".dat";
  const std::string gp = out_base + ".gp";
  const std::string svg = out_base + ".svg";
  const std::string png = out_base + ".png";
  if (Status st = write_text(dat, gnuplot_data(spec)); !st.ok()) return st;
  if (Status st = write_text(gp, gnuplot_script(spec, dat, svg, png)); !st.ok()) return st;
  const std::string cmd = fmt::format("timeout {} gnuplot {} >{} 2>&1", k_gnuplot_timeout_s, shell_quoted(gp),
                                      shell_quoted(out_base + ".log"));
  if (std::system(cmd.c_str()) != 0) {
    return error(StatusCode::io_error, "render_plot: gnuplot failed on " + gp + " (see " + out_base + ".log)");
  }
  return std::vector<std::string>{svg, png};
}

Result<PlotSpec> throughput_plot(const std::vector<RunRecord>& runs, const std::string& x_param,
                                 const std::string& phase) {
  // backend -> x -> samples (GB/s)
  std::map<std::string, std::map<double, std::vector<double>>> data;
  std::string workload;
  for (const RunRecord& run : runs) {
    auto it = run.params.find(x_param);
    if (!run.ok || it == run.params.end()) continue;
    Result<double> x = parse_quantity(it->second);
    if (!x.ok()) continue;
    for (const PhaseRecord& p : run.phases) {
      if (p.phase != phase || !std::isfinite(p.bytes_per_s)) continue;
      data[run.backend][*x].push_back(p.bytes_per_s / k_bytes_per_gb);
      workload = p.workload;
    }
  }
  if (data.empty()) {
    return error(StatusCode::invalid_argument,
                 "throughput_plot: no ok run has param " + x_param + " and a finite " + phase + " throughput");
  }
  PlotSpec spec;
  spec.title = fmt::format("{} {} throughput vs {}", workload, phase, x_param);
  spec.x_label = x_param;
  spec.y_label = "throughput (GB/s)";
  double lo = INFINITY;
  double hi = 0;
  for (const auto& [backend, points] : data) {
    PlotSeries s;
    s.title = backend;
    for (const auto& [x, ys] : points) {
      s.x.push_back(x);
      s.y.push_back(*median(ys));
      s.y_low.push_back(*std::min_element(ys.begin(), ys.end()));
      s.y_high.push_back(*std::max_element(ys.begin(), ys.end()));
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
    spec.series.push_back(std::move(s));
  }
  spec.log_x = lo > 0 && hi / lo >= 16;
  std::string ref = data.begin()->first;
  for (const char* b : {"emulate", "hw", "cluster"}) {
    if (data.contains(b)) ref = b;
  }
  const PlotSeries& m =
      *std::find_if(spec.series.begin(), spec.series.end(), [&](const PlotSeries& s) { return s.title == ref; });
  const double peak = *std::max_element(m.y.begin(), m.y.end());
  for (std::size_t i = 0; i < m.x.size(); ++i) {
    if (m.y[i] >= k_regime_knee_fraction * peak) {
      if (i > 0) spec.regimes.push_back({m.x.front(), "latency-bound"});
      spec.regimes.push_back({m.x[i], "bandwidth-bound (" + ref + ")"});
      break;
    }
  }
  return spec;
}

}  // namespace sluice::analysis
