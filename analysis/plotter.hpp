// Plots through gnuplot (http://gnuplot.info/docs/: `set terminal svg`,
// `pngcairo` or libgd `png`, `with yerrorbars`): one SVG and one PNG per plot.
// The data and the script are written next to the images (base.dat,
// base.gp), so a plot can be rerun or edited by hand.
#pragma once

#include <string>
#include <vector>

#include "analysis/run_record.hpp"
#include "core/common/status.hpp"

namespace sluice::analysis {

// Limits of a rendered image and of one gnuplot run.
inline constexpr int k_plot_width_px = 900;
inline constexpr int k_plot_height_px = 560;
inline constexpr int k_gnuplot_timeout_s = 60;

struct PlotSeries {
  std::string title;  // legend, e.g. "sim" or "emulate"
  std::vector<double> x;
  std::vector<double> y;
  std::vector<double> y_low;  // error bar ends; empty: no error bars
  std::vector<double> y_high;
};

struct RegimeMark {
  double x = 0;
  std::string label;  // e.g. "bandwidth-bound"
};

struct PlotSpec {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log_x = false;
  std::vector<PlotSeries> series;
  std::vector<RegimeMark> regimes;
};

// Whether `gnuplot` runs on this machine.
bool gnuplot_available();

// The gnuplot script that draws `spec` from `data_path` into the SVG and the
// PNG (pngcairo when the gnuplot has it, libgd png otherwise).
std::string gnuplot_script(const PlotSpec& spec, const std::string& data_path, const std::string& svg_path,
                           const std::string& png_path);
// The data file: one block per series (x y y_low y_high), blocks separated by
// two blank lines (gnuplot's `index`).
std::string gnuplot_data(const PlotSpec& spec);

// Writes out_base.{dat,gp,svg,png}; returns the SVG and PNG paths.
// invalid_argument: no series, or a series with x/y (or error bar) lengths
// that differ; unavailable: no gnuplot; io_error: gnuplot failed.
Result<std::vector<std::string>> render_plot(const PlotSpec& spec, const std::string& out_base);

// Bytes per GB: plots and reports give rates in decimal GB/s, as results.csv,
// the terminal table and the study scripts do (one unit family, issue 25 item 6).
inline constexpr double k_bytes_per_gb = 1e9;

// Throughput (GB/s, median over repeats, error bars min..max) of `phase`
// against the numeric param `x_param`, one series per backend, with the
// regime of the measured (hw, else emulate, else first) series marked: where
// it first reaches 90% of its peak it turns "bandwidth-bound", before that it
// is "latency-bound". Runs that lack the param or the phase are left out;
// invalid_argument when nothing is left.
Result<PlotSpec> throughput_plot(const std::vector<RunRecord>& runs, const std::string& x_param,
                                 const std::string& phase);
inline constexpr double k_regime_knee_fraction = 0.9;

}  // namespace sluice::analysis
