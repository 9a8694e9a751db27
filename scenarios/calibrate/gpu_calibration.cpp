#include "scenarios/calibrate/gpu_calibration.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/calibration.hpp"
#include "analysis/plotter.hpp"
#include "analysis/profile_fit.hpp"
#include "analysis/run_record.hpp"
#include "analysis/stats.hpp"
#include "core/common/byte_size.hpp"
#include "scenarios/runner/child_pool.hpp"

namespace sluice::calibrate {
namespace {

constexpr int k_exit_ok = 0;
constexpr int k_exit_failed = 1;
constexpr int k_exit_usage = 2;
// Wall-clock limit of one simulated point (a sweep point simulates in well
// under a second; this only stops a runaway).
constexpr double k_sim_point_timeout_s = 300;
constexpr const char* k_sweep_header = "series,piece_bytes,lanes,depth,total_bytes,run,bytes_per_s";
// The same with the GPUs filled at once (issue 19 item 5: a multi-GPU host).
const std::string k_sweep_header_gpus = std::string(k_sweep_header) + ",gpus";
constexpr const char* k_scenario = "gpu_sweep";
constexpr const char* k_phase = "copy";
// The default fit: the PCIe link class (rate and per-copy latency) and the
// read() copy of a staged byte; the host memory link rarely binds here.
const std::vector<std::string> k_default_gpu_fit_params = {"pcie.bandwidth_factor", "pcie.latency_factor",
                                                           "staging.cpu_copy_bytes_per_s"};

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ',')) cells.push_back(cell);
  if (!line.empty() && line.back() == ',') cells.emplace_back();
  return cells;
}

Result<double> number_cell(const std::string& text, std::size_t line, const char* column) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(v) || v < 0) {
    return error(StatusCode::invalid_argument,
                 fmt::format("gpu sweep line {}: {} \"{}\" is not a non-negative number", line, column, text));
  }
  return v;
}

analysis::RunRecord record_of(const scenario::StagedCopyPoint& p, double bytes_per_s, const std::string& backend) {
  analysis::RunRecord r;
  r.scenario = k_scenario;
  r.backend = backend;
  r.params = {{"series", std::string(scenario::to_string(p.series))},
              {"piece_bytes", std::to_string(p.piece_bytes)},
              {"lanes", std::to_string(p.lanes)},
              {"gpus", std::to_string(p.gpus)}};
  r.ok = true;
  analysis::PhaseRecord ph;
  ph.workload = "staged_copy";
  ph.phase = k_phase;
  ph.ranks = p.lanes;
  ph.bytes = p.total_bytes;
  ph.bytes_per_s = bytes_per_s;
  ph.last_done_s = bytes_per_s > 0 ? static_cast<double>(p.total_bytes) / bytes_per_s : 0;
  r.phases.push_back(ph);
  return r;
}

class GpuCalibrator {
 public:
  GpuCalibrator(const CalibrateArgs& args, std::ostream& out, std::ostream& err) : args_(args), out_(out), err_(err) {
    machine_.pcie_gen = args.pcie_gen;
    machine_.gpu_lanes = args.pcie_lanes;
    machine_.memory_bytes_per_s = args.host_memory_bytes_per_s;
    if (args.fit_pieces.empty() || args.holdout_pieces.empty()) {
      throw UsageError("--gpu-sweep needs at least one --fit-piece and one --holdout-piece");
    }
    params_ = args.fit_params.empty() ? k_default_gpu_fit_params : args.fit_params;
    for (const std::string& p : params_) {
      if (!analysis::find_profile_param(p).ok()) throw UsageError(analysis::find_profile_param(p).status().message());
    }
    if (Result<topo::Topology> t = scenario::staged_copy_topology(machine_); !t.ok()) {
      throw UsageError("the GPU machine (--pcie-gen, --pcie-lanes, --host-memory-bw): " + t.status().message());
    }
  }

  int run() {
    std::ifstream in(args_.gpu_sweep);
    if (!in) throw UsageError("--gpu-sweep " + args_.gpu_sweep + ": cannot read it");
    std::stringstream text;
    text << in.rdbuf();
    Result<std::vector<GpuSweepPoint>> points = parse_gpu_sweep(text.str());
    if (!points.ok()) throw UsageError(args_.gpu_sweep + ": " + points.status().message());
    // A sweep of several GPUs at once (issue 19 item 5): its one-GPU points
    // are fitted and its several-GPU points predicted, what the one-GPU model
    // says of a multi-GPU host.
    const bool multi_gpu =
        std::any_of(points->begin(), points->end(), [](const GpuSweepPoint& p) { return p.point.gpus > 1; });
    std::vector<GpuSweepPoint> fit = select(*points, args_.fit_pieces, "--fit-piece");
    std::erase_if(fit, [](const GpuSweepPoint& p) { return p.point.gpus > 1; });
    std::vector<GpuSweepPoint> hold = select(*points, args_.holdout_pieces, "--holdout-piece");
    if (multi_gpu) std::erase_if(hold, [](const GpuSweepPoint& p) { return p.point.gpus == 1; });
    for (const GpuSweepPoint& h : hold) {
      for (const GpuSweepPoint& f : fit) {
        if (!multi_gpu && h.point.piece_bytes == f.point.piece_bytes) {
          throw UsageError("a piece size is both fitted and held out");
        }
      }
    }
    if (fit.empty()) throw UsageError("--fit-piece selects no one-GPU point of the sweep");
    if (hold.empty()) throw UsageError("--holdout-piece selects no point to predict");

    const std::string base_path = args_.profile_dir + "/" + args_.base_profile + ".json";
    Result<nlohmann::json> base = analysis::read_json_file(base_path);
    if (!base.ok()) throw UsageError("base profile: " + base.status().message());

    std::vector<analysis::RunRecord> fit_measured;
    for (const GpuSweepPoint& p : fit) fit_measured.push_back(record_of(p.point, p.bytes_per_s, "hw"));
    analysis::ProfileFitOptions fo;
    fo.params = params_;
    fo.phases = {k_phase};
    fo.max_iterations = args_.max_iterations;
    fo.log = [this](std::string_view line) { err_ << "calibrate: " << line << "\n"; };
    const analysis::PredictFn predict = [&](const nlohmann::json& profile) -> Result<std::vector<analysis::RunRecord>> {
      Result<std::vector<double>> rates = simulate(fit, profile);
      if (!rates.ok()) return rates.status();
      std::vector<analysis::RunRecord> out;
      for (std::size_t i = 0; i < fit.size(); ++i) out.push_back(record_of(fit[i].point, (*rates)[i], "sim"));
      return out;
    };
    out_ << fmt::format("fitting {} to {} measured points (piece sizes {}) with the simulator in the loop\n",
                        join(params_), fit.size(), join(args_.fit_pieces));
    Result<analysis::ProfileFit> fitted = analysis::fit_profile(*base, fit_measured, predict, fo);
    if (!fitted.ok()) throw std::runtime_error("calibrate: the fit failed: " + fitted.status().message());
    for (std::size_t i = 0; i < fitted->names.size(); ++i) {
      out_ << fmt::format("  {:<30} {} (from {:.5g})\n", fitted->names[i], analysis::fitted_value_text(*fitted, i),
                          fitted->start_values[i]);
    }
    out_ << fmt::format("  fit residuals: rms {:.2f}%, max {:.2f}% ({} iterations, {} simulator calls, converged={})\n",
                        100 * fitted->rms_rel_residual, 100 * fitted->max_rel_residual, fitted->iterations,
                        fitted->evaluations, fitted->converged);

    const std::vector<double> fit_pred = must(simulate(fit, fitted->profile), "fitted profile on the fit points");
    const std::vector<double> hold_base = must(simulate(hold, *base), "base profile on the held-out points");
    const std::vector<double> hold_pred =
        must(simulate(hold, fitted->profile), "fitted profile on the held-out points");

    std::vector<double> abs_err;
    std::vector<double> abs_base;
    for (std::size_t i = 0; i < hold.size(); ++i) {
      abs_err.push_back(std::fabs(hold_pred[i] - hold[i].bytes_per_s) / hold[i].bytes_per_s);
      abs_base.push_back(std::fabs(hold_base[i] - hold[i].bytes_per_s) / hold[i].bytes_per_s);
    }
    print_table(fit, fit_pred, {}, "fit");
    print_table(hold, hold_pred, hold_base, "held-out");
    const double median = *analysis::percentile(abs_err, 0.5);
    const double p90 = *analysis::percentile(abs_err, 0.9);
    // Per held-out piece size: interpolation and extrapolation differ.
    std::map<std::uint64_t, std::vector<double>> by_piece;
    for (std::size_t i = 0; i < hold.size(); ++i) by_piece[hold[i].point.piece_bytes].push_back(abs_err[i]);
    for (const auto& [piece, errs] : by_piece) {
      out_ << fmt::format("held-out {}: median error {:.2f}%, max {:.2f}% ({} points)\n", format_size(piece),
                          100 * *analysis::percentile(errs, 0.5), 100 * *std::max_element(errs.begin(), errs.end()),
                          errs.size());
    }
    out_ << fmt::format("held-out, base profile \"{}\": median error {:.2f}%, p90 {:.2f}%\n", args_.base_profile,
                        100 * *analysis::percentile(abs_base, 0.5), 100 * *analysis::percentile(abs_base, 0.9));

    std::filesystem::create_directories(args_.out_dir);
    write_results(fit, fit_pred, hold, hold_pred, hold_base);
    plot(fit, fit_pred, hold, hold_pred);
    out_ << "profile written: " << write_profile(*fitted, fit.size(), hold.size(), median, p90) << "\n";
    out_ << fmt::format("RESULT F2 median_err={:.2f} p90_err={:.2f}\n", 100 * median, 100 * p90);
    out_.flush();
    if (args_.max_median_err_pct >= 0 && 100 * median > args_.max_median_err_pct) {
      err_ << fmt::format("calibrate: held-out median error {:.2f}% is above --max-median-err {:.2f}%\n", 100 * median,
                          args_.max_median_err_pct);
      return k_exit_failed;
    }
    return k_exit_ok;
  }

 private:
  static std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  }

  static std::vector<double> must(Result<std::vector<double>> r, const char* what) {
    if (!r.ok())
      throw std::runtime_error(std::string("calibrate: simulating the ") + what + ": " + r.status().message());
    return *r;
  }

  std::vector<GpuSweepPoint> select(const std::vector<GpuSweepPoint>& all, const std::vector<std::string>& pieces,
                                    const char* option) const {
    std::set<std::uint64_t> known;
    for (const GpuSweepPoint& p : all) known.insert(p.point.piece_bytes);
    std::vector<GpuSweepPoint> out;
    for (const std::string& text : pieces) {
      const Result<std::uint64_t> bytes = parse_size(text);
      if (!bytes.ok()) throw UsageError(std::string(option) + ": " + bytes.status().message());
      if (*bytes == 0) throw UsageError(std::string(option) + " " + text + ": a piece is at least 1 byte");
      const std::uint64_t piece = *bytes;
      if (known.count(piece) == 0) {
        std::string list;
        for (std::uint64_t k : known) list += (list.empty() ? "" : ", ") + format_size(k);
        throw UsageError(fmt::format("{} {}: the sweep has no such piece size (it has {})", option, text, list));
      }
      for (const GpuSweepPoint& p : all) {
        if (p.point.piece_bytes == piece) out.push_back(p);
      }
    }
    return out;
  }

  // Every point in its own child process (one SimGrid engine per process).
  Result<std::vector<double>> simulate(const std::vector<GpuSweepPoint>& points, const nlohmann::json& profile) const {
    const std::string text = profile.dump();
    scenario::ChildPoolOptions o;
    o.jobs = args_.jobs != 0 ? args_.jobs : std::max(1u, std::thread::hardware_concurrency());
    o.timeout_s = k_sim_point_timeout_s;
    Result<std::vector<scenario::ChildJobResult>> jobs = scenario::ChildPool::run(
        points.size(),
        [&](std::size_t i) -> std::string {
          Result<double> r = scenario::simulate_staged_copy(text, machine_, points[i].point);
          if (!r.ok()) throw std::runtime_error(r.status().message());
          return fmt::format("{:.17g}", *r);
        },
        o);
    if (!jobs.ok()) return jobs.status();
    std::vector<double> rates;
    for (std::size_t i = 0; i < jobs->size(); ++i) {
      const scenario::ChildJobResult& j = (*jobs)[i];
      if (!j.ok) {
        return error(StatusCode::unavailable,
                     fmt::format("sim point {} {} lanes {}: {}", to_string(points[i].point.series),
                                 format_size(points[i].point.piece_bytes), points[i].point.lanes, j.error));
      }
      rates.push_back(std::stod(j.payload));
    }
    return rates;
  }

  void print_table(const std::vector<GpuSweepPoint>& pts, const std::vector<double>& fitted,
                   const std::vector<double>& base, const char* set) {
    out_ << fmt::format("\n{} points{}\n", set, base.empty() ? "" : " (never seen by the fit)");
    out_ << fmt::format("  {:<7} {:>8} {:>5} {:>5} {:>4} {:>12} {:>12} {:>8}{}\n", "series", "piece", "lanes", "depth",
                        "gpus", "meas GB/s", "sim GB/s", "err %", base.empty() ? "" : "   base GB/s  base err %");
    for (std::size_t i = 0; i < pts.size(); ++i) {
      const GpuSweepPoint& p = pts[i];
      std::string b;
      if (!base.empty()) {
        b = fmt::format(" {:>12.2f} {:>11.1f}", base[i] / 1e9, 100 * (base[i] - p.bytes_per_s) / p.bytes_per_s);
      }
      out_ << fmt::format("  {:<7} {:>8} {:>5} {:>5} {:>4} {:>12.2f} {:>12.2f} {:>8.1f}{}\n", to_string(p.point.series),
                          format_size(p.point.piece_bytes), p.point.lanes, p.point.depth, p.point.gpus,
                          p.bytes_per_s / 1e9, fitted[i] / 1e9, 100 * (fitted[i] - p.bytes_per_s) / p.bytes_per_s, b);
    }
  }

  void write_results(const std::vector<GpuSweepPoint>& fit, const std::vector<double>& fit_pred,
                     const std::vector<GpuSweepPoint>& hold, const std::vector<double>& hold_pred,
                     const std::vector<double>& hold_base) {
    nlohmann::json rows = nlohmann::json::array();
    std::ofstream csv(args_.out_dir + "/gpu_calibration.csv");
    csv << "set,series,piece_bytes,lanes,depth,gpus,runs,measured_bytes_per_s,measured_min_bytes_per_s,"
           "measured_max_bytes_per_s,sim_fitted_bytes_per_s,sim_base_bytes_per_s,rel_err_pct\n";
    const auto add = [&](const char* set, const GpuSweepPoint& p, double pred, double base) {
      const double err = 100 * (pred - p.bytes_per_s) / p.bytes_per_s;
      rows.push_back({{"set", set},
                      {"series", to_string(p.point.series)},
                      {"piece_bytes", p.point.piece_bytes},
                      {"lanes", p.point.lanes},
                      {"depth", p.point.depth},
                      {"gpus", p.point.gpus},
                      {"runs", p.runs},
                      {"measured_bytes_per_s", p.bytes_per_s},
                      {"measured_min_bytes_per_s", p.min_bytes_per_s},
                      {"measured_max_bytes_per_s", p.max_bytes_per_s},
                      {"sim_fitted_bytes_per_s", pred},
                      {"sim_base_bytes_per_s", base},
                      {"rel_err_pct", err}});
      csv << fmt::format("{},{},{},{},{},{},{},{:.6g},{:.6g},{:.6g},{:.6g},{},{:.3f}\n", set, to_string(p.point.series),
                         p.point.piece_bytes, p.point.lanes, p.point.depth, p.point.gpus, p.runs, p.bytes_per_s,
                         p.min_bytes_per_s, p.max_bytes_per_s, pred, base > 0 ? fmt::format("{:.6g}", base) : "", err);
    };
    for (std::size_t i = 0; i < fit.size(); ++i) add("fit", fit[i], fit_pred[i], 0);
    for (std::size_t i = 0; i < hold.size(); ++i) add("holdout", hold[i], hold_pred[i], hold_base[i]);
    nlohmann::json doc = {{"format", "sluice-gpu-calibration"}, {"version", 1},          {"sweep", args_.gpu_sweep},
                          {"machine", args_.machine},           {"fit_params", params_}, {"points", rows}};
    if (Status s = analysis::write_json_file(args_.out_dir + "/gpu_calibration.json", doc); !s.ok()) {
      throw std::runtime_error("calibrate: " + s.message());
    }
  }

  // Bounce throughput against piece size, measured (points, min..max bars)
  // and simulated with the fitted profile, for 1 lane and the most lanes.
  void plot(const std::vector<GpuSweepPoint>& fit, const std::vector<double>& fit_pred,
            const std::vector<GpuSweepPoint>& hold, const std::vector<double>& hold_pred) {
    if (!analysis::gnuplot_available()) {
      out_ << "plot: skipped (no gnuplot)\n";
      return;
    }
    std::map<std::tuple<std::string, std::uint32_t>, std::map<std::uint64_t, std::array<double, 4>>> by;
    const auto add = [&](const std::vector<GpuSweepPoint>& pts, const std::vector<double>& pred) {
      for (std::size_t i = 0; i < pts.size(); ++i) {
        by[{std::string(to_string(pts[i].point.series)), pts[i].point.lanes}][pts[i].point.piece_bytes] = {
            pts[i].bytes_per_s, pts[i].min_bytes_per_s, pts[i].max_bytes_per_s, pred[i]};
      }
    };
    add(fit, fit_pred);
    add(hold, hold_pred);
    analysis::PlotSpec spec;
    spec.title = "host -> GPU: bench_gpu sweep vs simulator (fitted)";
    spec.x_label = "piece (KiB)";
    spec.y_label = "GB/s";
    spec.log_x = true;
    for (const auto& [key, row] : by) {
      const auto& [series, lanes] = key;
      // Four curves of each: enough to see the regimes, few enough to read.
      if ((series == "bounce" && lanes != 1 && lanes != 4 && lanes != 16) || (series == "dma" && lanes != 1)) continue;
      analysis::PlotSeries m;
      analysis::PlotSeries s;
      m.title = fmt::format("{} x{} measured", series, lanes);
      s.title = fmt::format("{} x{} sim", series, lanes);
      for (const auto& [piece, v] : row) {
        const double kib = static_cast<double>(piece) / 1024.0;
        m.x.push_back(kib);
        m.y.push_back(v[0] / 1e9);
        m.y_low.push_back(v[1] / 1e9);
        m.y_high.push_back(v[2] / 1e9);
        s.x.push_back(kib);
        s.y.push_back(v[3] / 1e9);
      }
      spec.series.push_back(std::move(m));
      spec.series.push_back(std::move(s));
    }
    Result<std::vector<std::string>> files = analysis::render_plot(spec, args_.out_dir + "/gpu_calibration");
    if (files.ok()) {
      out_ << "plot: " << join(*files) << "\n";
    } else {
      out_ << "plot: " << files.status().message() << "\n";
    }
  }

  std::string write_profile(const analysis::ProfileFit& f, std::size_t fit_points, std::size_t hold_points,
                            double median, double p90) {
    const std::string name = args_.profile.empty() ? "gpu_calibrated" : args_.profile;
    const std::string dir = args_.profile.empty() ? args_.out_dir + "/profiles" : args_.profile_dir;
    nlohmann::json p = f.profile;
    p["name"] = name;
    const std::string fitted_text = analysis::fitted_values_text(f);
    p["source"] = {
        {"kind", "fit"},
        {"machine", args_.machine.empty() ? std::string("the GPU machine of the sweep") : args_.machine},
        {"date", analysis::today_utc()},
        {"scenario", fmt::format("bench_gpu chunk-size sweep {} (fit pieces {}: {} points; held-out pieces {}: {} "
                                 "points); PCIe gen{} x{}",
                                 args_.gpu_sweep, join(args_.fit_pieces), fit_points, join(args_.holdout_pieces),
                                 hold_points, machine_.pcie_gen, machine_.gpu_lanes)},
        {"fit_error_pct", 100 * median},
        {"note", fmt::format("analysis/profile_fit.hpp (LM, simulator in the loop: scenario::simulate_staged_copy) "
                             "from profile {}: {}; fit residuals rms {:.2f}% max {:.2f}% ({} iterations, {} sim "
                             "calls, converged={}); held-out |error| median {:.2f}% p90 {:.2f}%",
                             args_.base_profile, fitted_text, 100 * f.rms_rel_residual, 100 * f.max_rel_residual,
                             f.iterations, f.evaluations, f.converged, 100 * median, 100 * p90)}};
    std::filesystem::create_directories(dir);
    const std::string path = dir + "/" + name + ".json";
    if (Status st = analysis::write_json_file(path, p); !st.ok())
      throw std::runtime_error("calibrate: " + st.message());
    return path;
  }

  const CalibrateArgs& args_;
  std::ostream& out_;
  std::ostream& err_;
  scenario::StagedCopyMachine machine_;
  std::vector<std::string> params_;
};

}  // namespace

namespace {

// One data row of the sweep CSV (7 cells, or 8 with gpus): its point, and
// the run's rate in bytes_per_s.
Result<GpuSweepPoint> parse_sweep_row(const std::vector<std::string>& c, std::size_t line_no) {
  Result<scenario::StagedCopySeries> series = scenario::parse_staged_copy_series(c[0]);
  if (!series.ok()) {
    return error(StatusCode::invalid_argument,
                 fmt::format("gpu sweep line {}: {}", line_no, series.status().message()));
  }
  double v[6] = {};
  const char* names[6] = {"piece_bytes", "lanes", "depth", "total_bytes", "run", "bytes_per_s"};
  for (int i = 0; i < 6; ++i) {
    Result<double> n = number_cell(c[static_cast<std::size_t>(i) + 1], line_no, names[i]);
    if (!n.ok()) return n.status();
    v[i] = *n;
  }
  GpuSweepPoint p;
  p.point.series = *series;
  p.point.piece_bytes = static_cast<std::uint64_t>(v[0]);
  p.point.lanes = static_cast<std::uint32_t>(std::min(v[1], 1e9));
  p.point.depth = static_cast<std::uint32_t>(std::min(v[2], 1e9));
  p.point.total_bytes = static_cast<std::uint64_t>(v[3]);
  if (c.size() > 7) {
    Result<double> g = number_cell(c[7], line_no, "gpus");
    if (!g.ok()) return g.status();
    p.point.gpus = static_cast<std::uint32_t>(std::min(*g, 1e9));
  }
  if (Status s = scenario::validate(p.point); !s.ok()) {
    return error(StatusCode::invalid_argument, fmt::format("gpu sweep line {}: {}", line_no, s.message()));
  }
  if (v[5] <= 0) {
    return error(StatusCode::invalid_argument, fmt::format("gpu sweep line {}: bytes_per_s must be above 0", line_no));
  }
  p.bytes_per_s = v[5];
  return p;
}

}  // namespace

Result<std::vector<GpuSweepPoint>> parse_gpu_sweep(const std::string& csv_text) {
  std::istringstream in(csv_text);
  std::string line;
  std::size_t line_no = 0;
  if (!std::getline(in, line)) return error(StatusCode::invalid_argument, "gpu sweep: empty file");
  ++line_no;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  const bool has_gpus = line == k_sweep_header_gpus;
  if (line != k_sweep_header && !has_gpus) {
    return error(StatusCode::invalid_argument,
                 fmt::format("gpu sweep line 1: header \"{}\", expected \"{}\" (or with \",gpus\" after it)", line,
                             k_sweep_header));
  }
  const std::size_t columns = has_gpus ? 8 : 7;
  struct Acc {
    GpuSweepPoint first;
    std::vector<double> rates;
  };
  std::map<std::tuple<int, std::uint64_t, std::uint32_t, std::uint32_t>, Acc> points;
  std::size_t rows = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (++rows > k_max_gpu_sweep_rows) {
      return error(StatusCode::invalid_argument,
                   fmt::format("gpu sweep: more than {} rows (k_max_gpu_sweep_rows)", k_max_gpu_sweep_rows));
    }
    const std::vector<std::string> c = split_csv_line(line);
    if (c.size() != columns) {
      return error(StatusCode::invalid_argument,
                   fmt::format("gpu sweep line {}: {} columns, expected {}", line_no, c.size(), columns));
    }
    Result<GpuSweepPoint> row = parse_sweep_row(c, line_no);
    if (!row.ok()) return row.status();
    const GpuSweepPoint& p = *row;
    const auto key =
        std::make_tuple(static_cast<int>(p.point.series), p.point.piece_bytes, p.point.lanes, p.point.gpus);
    auto [it, added] = points.try_emplace(key, Acc{p, {}});
    if (!added &&
        (it->second.first.point.total_bytes != p.point.total_bytes || it->second.first.point.depth != p.point.depth)) {
      return error(StatusCode::invalid_argument,
                   fmt::format("gpu sweep line {}: total_bytes {} / depth {} differ from an earlier run of the same "
                               "point ({} / {})",
                               line_no, p.point.total_bytes, p.point.depth, it->second.first.point.total_bytes,
                               it->second.first.point.depth));
    }
    it->second.rates.push_back(p.bytes_per_s);
  }
  if (points.empty()) return error(StatusCode::invalid_argument, "gpu sweep: no data rows");
  if (points.size() > k_max_gpu_sweep_points) {
    return error(StatusCode::invalid_argument,
                 fmt::format("gpu sweep: more than {} points (k_max_gpu_sweep_points)", k_max_gpu_sweep_points));
  }
  std::vector<GpuSweepPoint> out;
  for (auto& [key, acc] : points) {
    GpuSweepPoint p = acc.first;
    p.runs = static_cast<std::uint32_t>(acc.rates.size());
    p.bytes_per_s = *analysis::percentile(acc.rates, 0.5);
    p.min_bytes_per_s = *std::min_element(acc.rates.begin(), acc.rates.end());
    p.max_bytes_per_s = *std::max_element(acc.rates.begin(), acc.rates.end());
    out.push_back(p);
  }
  return out;
}

int run_gpu_calibration(const CalibrateArgs& args, std::ostream& out, std::ostream& err) {
  try {
    GpuCalibrator c(args, out, err);
    return c.run();
  } catch (const UsageError& e) {
    err << "calibrate: " << e.what() << "\n";
    return k_exit_usage;
  } catch (const std::exception& e) {
    err << e.what() << "\n";
    return k_exit_failed;
  }
}

}  // namespace sluice::calibrate
