#include "scenarios/calibrate/script_calibration.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <filesystem>
#include <map>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "analysis/calibration.hpp"
#include "analysis/disk_channels.hpp"
#include "analysis/profile_fit.hpp"
#include "analysis/run_record.hpp"
#include "analysis/stats.hpp"
#include "scenarios/calibrate/fio_point_run.hpp"
#include "scenarios/calibrate/script_compare.hpp"
#include "scenarios/netns/emulated_point_run.hpp"
#include "scenarios/lua/lua_script.hpp"
#include "scenarios/runner/results_writer.hpp"
#include "scenarios/runner/runner.hpp"

namespace sluice::calibrate {
using emulate::EmulatedPointOptions;
using emulate::EmulatedPointRun;
using emulate::LinkSpec;

namespace {

constexpr int k_exit_ok = 0;
constexpr int k_exit_failed = 1;
constexpr int k_exit_usage = 2;
// Points one calibration may measure (each is a real run of seconds).
constexpr std::size_t k_max_measured_points = 256;
// Wall-clock limit of one simulated point (a calibration point simulates in
// well under a second; this only stops a runaway).
constexpr double k_sim_point_timeout_s = 600;

// A failure the user caused (bad --set, bad parameter name): exit 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using scenario::Backend;
using scenario::RunResult;
using scenario::ScenarioSpec;

// Params that make a point's key say what ran (see the header).
void annotate(ScenarioSpec& spec) {
  if (spec.cluster != nullptr) {
    for (topo::EdgeId e = 0; e < spec.cluster->link_count(); ++e) {
      const topo::LinkSpec& s = spec.cluster->link(e).spec;
      if (s.link_class != topo::LinkClass::network) continue;
      spec.params["link_bits_per_s"] = fmt::format("{}", std::llround(s.bandwidth_ab_bytes_per_s * 8));
      spec.params["link_latency_ns"] = std::to_string(s.latency_ns);
      break;
    }
  }
  spec.params["stripe_count"] = std::to_string(spec.fs.meta.default_stripe_count);
  spec.params["chunk_bytes"] = std::to_string(spec.fs.meta.default_chunk_bytes);
  if (spec.workloads.size() == 1) {
    if (const auto* sweep = std::get_if<FileSweepConfig>(&spec.workloads.front().config)) {
      spec.params["file_bytes"] = std::to_string(sweep->file_bytes);
      spec.params["block_bytes"] = std::to_string(sweep->block_bytes);
    }
  }
}

std::vector<analysis::RunRecord> to_records(const std::vector<RunResult>& results) {
  Result<std::vector<analysis::RunRecord>> records = to_run_records(results);
  if (!records.ok()) throw std::runtime_error("calibrate: " + records.status().message());
  return std::move(records).value();
}

std::string hostname() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "unknown-host";
  return host;
}

struct MeasuredSet {
  std::vector<ScenarioSpec> points;
  std::vector<RunResult> results;            // every repeat of every point
  std::vector<analysis::RunRecord> medians;  // one per point: median_of_repeats
  std::string scenario;
};

// A point as the progress lines and the held-out table name it: the run's label, else its link, stripe and file.
std::string point_label(const ScenarioSpec& point) {
  if (!point.label.empty()) return point.label;
  auto param = [&](const char* k) { return point.params.count(k) != 0 ? point.params.at(k) : std::string("?"); };
  return fmt::format("link {} b/s, stripe {}, file {} B", param("link_bits_per_s"), param("stripe_count"),
                     param("file_bytes"));
}

class Calibrator {
 public:
  Calibrator(const CalibrateArgs& args, const ScriptCalibrationEnv& env, std::ostream& out, std::ostream& err)
      : args_(args), env_(env), out_(out), err_(err) {
    for (const std::string& set : args.sets) {
      const std::size_t eq = set.find('=');
      if (eq == std::string::npos || eq == 0) throw UsageError("--set " + set + ": expected name=value");
      sets_[set.substr(0, eq)] = set.substr(eq + 1);
    }
    if (sets_.count(args.set_param) != 0) {
      throw UsageError("--set " + args.set_param + "=...: calibrate sets " + args.set_param +
                       " itself (--fit-set, "
                       "--holdout-set)");
    }
    fio_ = args.backend == "fio";
    Result<Backend> b = fio_ ? Result<Backend>(Backend::hw) : scenario::parse_backend(args.backend);
    if (!b.ok() || *b == Backend::sim) {
      throw UsageError("--backend: measure on emulate, hw or fio, not " + args.backend);
    }
    if (fio_ && args.fio_dir.empty())
      throw UsageError("--backend fio: give --fio-dir, a directory on the drive measured");
    backend_ = *b;
    phases_ = args.phases.empty() ? std::vector<std::string>{"write", "read"} : args.phases;
    for (const std::string& p : args.fit_params) {
      if (!analysis::find_profile_param(p).ok()) throw UsageError(analysis::find_profile_param(p).status().message());
    }
    std::filesystem::create_directories(std::filesystem::path(args.out_dir) / "profiles");
    profiles_dir_ = (std::filesystem::path(args.out_dir) / "profiles").string();
  }

  int run() {
    const std::string base_path = args_.profile_dir + "/" + args_.base_profile + ".json";
    Result<nlohmann::json> base = analysis::read_json_file(base_path);
    if (!base.ok()) throw UsageError("base profile: " + base.status().message());
    base_ = *base;

    // 1. The fit points and the held-out points, measured in rounds: round r
    // measures repeat r of every point of both sets, the two sets interleaved,
    // before the fit. A drive's or a link's rate drifts with time (the 2-core
    // VM's virtio disk doubled its 4 KiB rate within 15 minutes, and wrote
    // 465-520 MB/s at the end of a run against 550-700 MB/s at its start,
    // 2026-11-28); measured one set after the other, the drift between the
    // sets counted as model error. In rounds it reaches both sets alike. The
    // fit still never sees the held-out points.
    const std::vector<ScenarioSpec> fit_points = collect_points(args_.fit_set);
    const std::vector<ScenarioSpec> hold_points = collect_points(args_.holdout_set);
    if (args_.estimate_channels) check_channel_design(fit_points);
    const Rounds rounds = measure_in_rounds(fit_points, hold_points);
    const MeasuredSet fit = replay_set(args_.fit_set, fit_points, rounds.fit);
    const std::vector<analysis::RunRecord>& fit_measured = fit.medians;
    write_set(args_.fit_set + "_" + args_.backend, fit.scenario, fit.results);
    const MeasuredSet hold = replay_set(args_.holdout_set, hold_points, rounds.holdout);
    const std::vector<analysis::RunRecord>& hold_measured = hold.medians;
    write_set(args_.holdout_set + "_" + args_.backend, hold.scenario, hold.results);

    // 2. The fit, with the simulator in the loop (from the drive's channel
    // count the fit points give, with --estimate-channels).
    if (args_.estimate_channels) estimate_channels(fit_measured);
    analysis::ProfileFitOptions fo;
    if (!args_.fit_params.empty()) fo.params = args_.fit_params;
    fo.phases = phases_;
    fo.max_iterations = args_.max_iterations;
    fo.log = [this](std::string_view line) { err_ << "calibrate: " << line << "\n"; };
    const analysis::PredictFn predict_fit =
        [&](const nlohmann::json& profile) -> Result<std::vector<analysis::RunRecord>> {
      try {
        return to_records(simulate(fit.points, profile, "f1-candidate"));
      } catch (const std::exception& e) {  // a candidate the simulator cannot run: the fit steps back
        return error(StatusCode::unavailable, e.what());
      }
    };
    out_ << fmt::format("\nfitting {} to {} measured points x {} phases (simulator in the loop)\n", join(fo.params),
                        fit.points.size(), phases_.size());
    Result<analysis::ProfileFit> fitted = analysis::fit_profile(base_, fit_measured, predict_fit, fo);
    if (!fitted.ok()) throw std::runtime_error("calibrate: the fit failed: " + fitted.status().message());
    print_fit(*fitted);
    write_set(args_.fit_set + "_sim_fitted", fit.scenario, simulate(fit.points, fitted->profile, "f1-fitted"));

    // 3. The held-out points, predicted.
    const std::vector<RunResult> hold_base = simulate(hold.points, base_, "f1-base");
    const std::vector<RunResult> hold_fitted = simulate(hold.points, fitted->profile, "f1-fitted");
    write_set(args_.holdout_set + "_sim_fitted", hold.scenario, hold_fitted);
    Result<std::vector<double>> base_errs =
        analysis::paired_rel_errors(to_records(hold_base), hold_measured, phases_, "bytes_per_s");
    Result<std::vector<double>> errs =
        analysis::paired_rel_errors(to_records(hold_fitted), hold_measured, phases_, "bytes_per_s");
    if (!errs.ok() || !base_errs.ok()) {
      throw std::runtime_error("calibrate: held-out points: " + (errs.ok() ? base_errs : errs).status().message());
    }
    print_holdout(hold, hold_measured, to_records(hold_base), to_records(hold_fitted),
                  holdout_intervals(*fitted, hold, to_records(hold_fitted)));
    std::vector<double> abs_errs;
    for (double e : *errs) abs_errs.push_back(std::fabs(e));
    std::vector<double> abs_base;
    for (double e : *base_errs) abs_base.push_back(std::fabs(e));
    const double median = *analysis::percentile(abs_errs, 0.5);
    const double p90 = *analysis::percentile(abs_errs, 0.9);
    out_ << fmt::format("held-out, base profile \"{}\": median error {:.2f}%, p90 {:.2f}%\n", args_.base_profile,
                        100 * *analysis::percentile(abs_base, 0.5), 100 * *analysis::percentile(abs_base, 0.9));

    const std::string written = write_profile(*fitted, fit, hold, median, p90);
    out_ << "profile written: " << written << "\n";
    out_ << fmt::format("RESULT {} median_err={:.2f} p90_err={:.2f}\n", args_.result_name, 100 * median, 100 * p90);
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

  // The script's options with <set_param>=<set_value> and `run` as its sl.run.
  scenario::ScriptOptions script_options(const std::string& set_value, const std::string& out_dir,
                                         std::ostream* out) const {
    scenario::ScriptOptions o;
    o.sets = sets_;
    o.sets[args_.set_param] = set_value;
    o.out_dir = out_dir;
    o.out = out;
    o.compare = compare_script_runs;  // the script's own sl.compare, over the measured points
    return o;
  }

  scenario::ScriptOutcome run_script(const scenario::ScriptOptions& o) const {
    Result<scenario::ScriptOutcome> outcome = scenario::run_script(args_.script, o);
    if (!outcome.ok()) {
      if (outcome.status().code() == StatusCode::invalid_argument) throw UsageError(outcome.status().message());
      throw std::runtime_error(outcome.status().to_string());
    }
    return std::move(outcome).value();
  }

  // The points SCRIPT asks for with <set_param>=<set_value>, annotated. The
  // script runs once for them with its runs simulated on the base profile
  // (its report of that pass is not shown; it runs again on the measurements).
  std::vector<ScenarioSpec> collect_points(const std::string& set_value) {
    std::vector<ScenarioSpec> collected;
    std::ostringstream discarded;
    const std::string scratch = args_.out_dir + "/." + set_value + "_collect";
    scenario::ScriptOptions o = script_options(set_value, scratch, &discarded);
    o.run = [&](const std::vector<ScenarioSpec>& points, Backend) -> Result<std::vector<RunResult>> {
      if (collected.size() + points.size() > k_max_measured_points) {
        return error(StatusCode::invalid_argument,
                     "calibrate: more than " + std::to_string(k_max_measured_points) + " points to measure");
      }
      std::vector<ScenarioSpec> annotated = points;
      for (ScenarioSpec& s : annotated) annotate(s);
      collected.insert(collected.end(), annotated.begin(), annotated.end());
      try {
        return simulate(annotated, base_, "f1-collect");
      } catch (const std::exception& e) {
        return error(StatusCode::unavailable, e.what());
      }
    };
    run_script(o);
    std::error_code ignored;  // a report left there is the simulated pass's, of no use
    std::filesystem::remove_all(scratch, ignored);
    if (collected.empty()) throw UsageError(args_.script + " made no runs with " + args_.set_param + "=" + set_value);
    return collected;
  }

  // Every repeat of every point of both sets: [point][repeat].
  struct Rounds {
    std::vector<std::vector<RunResult>> fit;
    std::vector<std::vector<RunResult>> holdout;
  };

  // args_.repeats rounds; each measures every point once, the two sets
  // interleaved by their position in their set (so the held-out points are
  // spread over the round as the fit points are). Stops at a failure.
  Rounds measure_in_rounds(const std::vector<ScenarioSpec>& fit, const std::vector<ScenarioSpec>& hold) {
    struct Slot {
      double position;  // (index + 0.5) / set size: where in the round
      bool holdout;
      std::size_t index;
    };
    std::vector<Slot> order;
    for (std::size_t i = 0; i < fit.size(); ++i) order.push_back({(i + 0.5) / fit.size(), false, i});
    for (std::size_t i = 0; i < hold.size(); ++i) order.push_back({(i + 0.5) / hold.size(), true, i});
    std::stable_sort(order.begin(), order.end(), [](const Slot& a, const Slot& b) { return a.position < b.position; });

    Rounds rounds;
    rounds.fit.resize(fit.size());
    rounds.holdout.resize(hold.size());
    const std::uint32_t repeats = std::max<std::uint32_t>(1, args_.repeats);
    out_ << fmt::format("\n== {} {} points and {} {} points, measured on {} in {} rounds ==\n", fit.size(),
                        args_.fit_set, hold.size(), args_.holdout_set, args_.backend, repeats);
    for (std::uint32_t r = 0; r < repeats; ++r) {
      for (const Slot& slot : order) {
        const std::string& set_value = slot.holdout ? args_.holdout_set : args_.fit_set;
        const ScenarioSpec& point = slot.holdout ? hold[slot.index] : fit[slot.index];
        RunResult one = measure_once(point, fmt::format("{}_point{}", set_value, slot.index), r);
        if (!one.ok) {  // the rest would fail the same way
          throw std::runtime_error("calibrate: a " + set_value + " point failed on " + args_.backend + ": " +
                                   one.error);
        }
        (slot.holdout ? rounds.holdout : rounds.fit)[slot.index].push_back(std::move(one));
      }
    }
    return rounds;
  }

  // Runs SCRIPT again with <set_param>=<set_value>, its sl.run answered by the
  // measurements (the first repeat of each point; the medians of all repeats
  // go to the fit), so its own report shows them. The script must ask for the
  // same points as when they were collected.
  MeasuredSet replay_set(const std::string& set_value, const std::vector<ScenarioSpec>& points,
                         const std::vector<std::vector<RunResult>>& measured) {
    MeasuredSet set;
    scenario::ScriptOptions o = script_options(set_value, args_.out_dir + "/" + set_value + "_script", &out_);
    o.run = [&](const std::vector<ScenarioSpec>& asked, Backend) -> Result<std::vector<RunResult>> {
      std::vector<RunResult> first;
      for (ScenarioSpec point : asked) {
        annotate(point);
        const std::size_t k = set.points.size();
        if (k >= points.size() || point.label != points[k].label || point.params != points[k].params) {
          return error(StatusCode::invalid_argument,
                       fmt::format("calibrate: {} asked for other points on its second pass ({}={}, point {}: "
                                   "\"{}\"); calibrate measures in rounds and needs the same points each pass",
                                   args_.script, args_.set_param, set_value, k + 1, point_label(point)));
        }
        const std::vector<RunResult>& repeats = measured[k];
        first.push_back(repeats.front());
        set.points.push_back(point);
        set.results.insert(set.results.end(), repeats.begin(), repeats.end());
        Result<analysis::RunRecord> m = analysis::median_of_repeats(to_records(repeats));
        if (!m.ok()) return m.status();
        set.medians.push_back(std::move(m).value());
      }
      return first;
    };
    out_ << fmt::format("\n== {} points ({}={}), measured on {} ==\n", set_value, args_.set_param, set_value,
                        args_.backend);
    set.scenario = run_script(o).scenario;
    if (set.points.size() != points.size()) {
      throw UsageError(fmt::format("{} asked for {} points on its second pass with {}={}, {} on its first",
                                   args_.script, set.points.size(), args_.set_param, set_value, points.size()));
    }
    return set;
  }

  // One measurement of one point (repeat `repeat`; `name` names its fio work directory).
  RunResult measure_once(const ScenarioSpec& point, const std::string& name, std::uint32_t repeat) {
    RunResult r;
    if (fio_) {
      r = run_fio_point(point, fio_options(name, repeat));
    } else if (backend_ == Backend::hw) {
      scenario::RunnerOptions ro;
      ro.jobs = 1;
      Result<std::vector<RunResult>> one = scenario::run_points({point}, Backend::hw, ro);
      if (!one.ok()) throw std::runtime_error("calibrate: " + one.status().to_string());
      r = std::move(one->front());
    } else {
      EmulatedPointOptions eo;
      eo.node_command = env_.node_command;
      eo.stop_fd = env_.stop_fd;
      r = EmulatedPointRun::run(point, eo);
    }
    std::string rates;
    for (const auto& ph : r.phases) {
      if (ph.phase == "write" || ph.phase == "read")
        rates += fmt::format(" {} {:.2f} MB/s", ph.phase, ph.last_bytes_per_s / 1e6);
    }
    err_ << fmt::format("calibrate: {} {} ({}), repeat {}: {}{} ({:.1f} s)\n", args_.backend, point_label(point), name,
                        repeat + 1, r.ok ? "ok" : "FAILED: " + r.error, rates, r.wall_s);
    return r;
  }

  // What the measurements are of, for the profile's source.
  std::string measured_what() const {
    if (fio_)
      return fmt::format("the drive of {} under fio (ioengine {}, O_DIRECT)", args_.fio_dir, args_.fio_ioengine);
    if (backend_ == Backend::emulate) return "netns-emulated cluster (tc tbf links, TCP transport, posix targets)";
    return "this machine (sluice run --backend hw)";
  }

  FioPointOptions fio_options(const std::string& name, std::uint32_t repeat) const {
    FioPointOptions o;
    o.fio = args_.fio_binary;
    o.directory = args_.fio_dir;
    o.ioengine = args_.fio_ioengine;
    o.time_limit_s = args_.fio_time_limit_s;
    o.work_dir = fmt::format("{}/fio/{}_{}", args_.out_dir, name, repeat + 1);
    return o;
  }

  // Runs `points` in sim with `profile` (written as <out>/profiles/<name>.json).
  std::vector<RunResult> simulate(const std::vector<ScenarioSpec>& points, const nlohmann::json& profile,
                                  const std::string& name) {
    nlohmann::json p = profile;
    p["name"] = name;
    if (Status st = analysis::write_json_file(profiles_dir_ + "/" + name + ".json", p); !st.ok()) {
      throw std::runtime_error("calibrate: " + st.message());
    }
    std::vector<ScenarioSpec> sim_points = points;
    for (ScenarioSpec& s : sim_points) s.sim_profile = name;
    scenario::RunnerOptions ro;
    ro.jobs = args_.jobs;
    ro.point_timeout_s = k_sim_point_timeout_s;
    ro.profile_dirs = {profiles_dir_};
    Result<std::vector<RunResult>> r = scenario::run_points(sim_points, Backend::sim, ro);
    if (!r.ok()) throw std::runtime_error("calibrate: sim: " + r.status().to_string());
    for (const RunResult& one : *r) {
      if (!one.ok) throw std::runtime_error("calibrate: a sim point failed with profile " + name + ": " + one.error);
    }
    return *r;
  }

  void write_set(const std::string& dir_name, const std::string& scenario_name, const std::vector<RunResult>& results) {
    const std::string dir = args_.out_dir + "/" + dir_name;
    if (Status st = scenario::write_results(dir, scenario_name, results); !st.ok()) {
      throw std::runtime_error("calibrate: " + st.message());
    }
  }

  void print_fit(const analysis::ProfileFit& f) {
    out_ << fmt::format("fit: {} iterations, {} simulator calls, converged={}\n", f.iterations, f.evaluations,
                        f.converged);
    if (!f.failed_candidates.empty())
      out_ << "  (some candidates could not be simulated: " << f.failed_candidates << ")\n";
    for (std::size_t i = 0; i < f.names.size(); ++i) {
      out_ << fmt::format("  {:<32} {:>12.5g} -> {}\n", f.names[i], f.start_values[i],
                          analysis::fitted_value_text(f, i));
    }
    out_ << fmt::format("  (standard errors from the Jacobian at the fit, {} degrees of freedom)\n",
                        f.rel_errors.size() > f.names.size() ? f.rel_errors.size() - f.names.size() : 0);
    auto rms = [](const std::vector<double>& v) {
      double sq = 0;
      for (double e : v) sq += e * e;
      return v.empty() ? 0.0 : std::sqrt(sq / static_cast<double>(v.size()));
    };
    out_ << fmt::format("  fit points: rms error {:.2f}% with the base profile, {:.2f}% fitted (max {:.2f}%)\n",
                        100 * rms(f.start_rel_errors), 100 * f.rms_rel_residual, 100 * f.max_rel_residual);
  }

  // 95% prediction intervals of the fitted profile's held-out predictions
  // (analysis::prediction_intervals: one more simulation of the held-out
  // points per fitted parameter); empty, said why, when they cannot be had.
  std::vector<analysis::PredictionInterval> holdout_intervals(const analysis::ProfileFit& fitted,
                                                              const MeasuredSet& hold,
                                                              const std::vector<analysis::RunRecord>& predicted) {
    const analysis::PredictFn predict = [&](const nlohmann::json& profile) -> Result<std::vector<analysis::RunRecord>> {
      try {
        return to_records(simulate(hold.points, profile, "f1-interval"));
      } catch (const std::exception& e) {
        return error(StatusCode::unavailable, e.what());
      }
    };
    Result<std::vector<analysis::PredictionInterval>> intervals =
        analysis::prediction_intervals(base_, fitted, predicted, predict, phases_, "bytes_per_s");
    if (!intervals.ok()) {
      out_ << "held-out prediction intervals: none (" << intervals.status().message() << ")\n";
      return {};
    }
    return *intervals;
  }

  void print_holdout(const MeasuredSet& hold, const std::vector<analysis::RunRecord>& measured,
                     const std::vector<analysis::RunRecord>& base, const std::vector<analysis::RunRecord>& fitted,
                     const std::vector<analysis::PredictionInterval>& intervals) {
    out_ << fmt::format("\nheld-out points ({} on {}; sim with the base and the fitted profile), MB/s:\n",
                        hold.points.size(), args_.backend);
    out_ << fmt::format("  {:<44} {:<6} {:>10} {:>10} {:>10} {:>8}  {}\n", "point", "phase", "measured", "sim base",
                        "sim fit", "error", "95% prediction interval");
    std::size_t row = 0;
    std::size_t inside = 0;
    for (std::size_t i = 0; i < measured.size(); ++i) {
      const std::string label = point_label(hold.points[i]);
      for (const std::string& phase : phases_) {
        auto value = [&](const analysis::RunRecord& r) {
          for (const auto& ph : r.phases) {
            if (ph.phase == phase) return ph.bytes_per_s;
          }
          return 0.0;
        };
        const double m = value(measured[i]);
        const double f = value(fitted[i]);
        std::string interval;
        if (row < intervals.size() && std::isfinite(intervals[row].low) && std::isfinite(intervals[row].high)) {
          const bool in = m >= intervals[row].low && m <= intervals[row].high;
          inside += in ? 1 : 0;
          interval = fmt::format("{:.2f} .. {:.2f}{}", intervals[row].low / 1e6, intervals[row].high / 1e6,
                                 in ? "" : " (measured outside)");
        }
        ++row;
        out_ << fmt::format("  {:<44} {:<6} {:>10.2f} {:>10.2f} {:>10.2f} {:>7.2f}%  {}\n", label, phase, m / 1e6,
                            value(base[i]) / 1e6, f / 1e6, m > 0 ? 100 * (f - m) / m : 0.0, interval);
      }
    }
    if (!intervals.empty()) {
      out_ << fmt::format("held-out measurements inside their 95% prediction interval: {} of {}\n", inside, row);
    }
  }

  // --estimate-channels: the fit points give what the estimate reads (checked
  // before they are measured: a design without three depths of one block
  // would fail only after minutes of fio).
  void check_channel_design(const std::vector<ScenarioSpec>& fit_points) const {
    std::vector<analysis::RunRecord> points(fit_points.size());
    for (std::size_t i = 0; i < fit_points.size(); ++i) {
      points[i].label = fit_points[i].label;
      points[i].params = fit_points[i].params;
    }
    const Status st = analysis::check_channel_design(points, args_.channels_block_param, args_.channels_depth_param);
    if (!st.ok()) throw UsageError("--estimate-channels: the fit points (--fit-set): " + st.message());
  }

  // --estimate-channels: the base profile's disk.channels from the fit points
  // (analysis/disk_channels.hpp); the held-out points are not read.
  void estimate_channels(const std::vector<analysis::RunRecord>& fit_measured) {
    Result<analysis::ChannelEstimate> e =
        analysis::estimate_disk_channels(fit_measured, args_.channels_block_param, args_.channels_depth_param, phases_);
    if (!e.ok()) throw std::runtime_error("calibrate: --estimate-channels: " + e.status().message());
    out_ << "\nthe drive's channels, from the fit points (--estimate-channels):\n" << analysis::describe(*e);
    base_["disk"]["channels"] = e->channels;
    channels_text_ = fmt::format(
        "disk.channels {} estimated from the fit points ({}-byte blocks, worst error at the "
        "middle depth {:.1f}%)",
        e->channels, e->block_bytes, 100 * e->worst_rel_error);
    if (base_.contains("sources") && base_["sources"].is_object()) {
      base_["sources"]["disk.channels"] = "measured: sluice calibrate --estimate-channels: " + channels_text_;
    }
  }

  std::string write_profile(const analysis::ProfileFit& f, const MeasuredSet& fit, const MeasuredSet& hold,
                            double median, double p90) {
    const std::string name = args_.profile.empty() ? "calibrated" : args_.profile;
    const std::string dir = args_.profile.empty() ? profiles_dir_ : args_.profile_dir;
    nlohmann::json p = f.profile;
    p["name"] = name;
    std::string sets_text;
    for (const auto& [k, v] : sets_) sets_text += " --set " + k + "=" + v;
    const std::string fitted_text = analysis::fitted_values_text(f);
    p["source"] = {
        {"kind", "fit"},
        {"machine", fmt::format("{}: {}", hostname(), measured_what())},
        {"date", analysis::today_utc()},
        {"scenario",
         fmt::format("{}{} ({}={}: {} points, {}={}: {} held-out points)", args_.script, sets_text, args_.set_param,
                     args_.fit_set, fit.points.size(), args_.set_param, args_.holdout_set, hold.points.size())},
        {"fit_error_pct", 100 * median},
        {"note",
         fmt::format("analysis/profile_fit.hpp (LM, simulator in the loop) from profile {}: {}; phases {}; "
                     "fit residuals rms {:.2f}% max {:.2f}% over {} observations ({} iterations, {} sim calls, "
                     "converged={}); held-out |error| median {:.2f}% p90 {:.2f}%",
                     args_.base_profile, fitted_text, join(phases_), 100 * f.rms_rel_residual, 100 * f.max_rel_residual,
                     f.rel_errors.size(), f.iterations, f.evaluations, f.converged, 100 * median, 100 * p90) +
             (channels_text_.empty() ? "" : "; " + channels_text_)}};
    std::filesystem::create_directories(dir);
    const std::string path = dir + "/" + name + ".json";
    if (Status st = analysis::write_json_file(path, p); !st.ok())
      throw std::runtime_error("calibrate: " + st.message());
    return path;
  }

  const CalibrateArgs& args_;
  const ScriptCalibrationEnv& env_;
  std::ostream& out_;
  std::ostream& err_;
  std::map<std::string, std::string> sets_;
  Backend backend_ = Backend::emulate;
  bool fio_ = false;  // --backend fio: points measured by fio (results say hw: this machine's drive)
  std::vector<std::string> phases_;
  std::string profiles_dir_;
  nlohmann::json base_;
  std::string channels_text_;  // --estimate-channels: what it set, for the profile's note
};

}  // namespace

int run_script_calibration(const CalibrateArgs& args, const ScriptCalibrationEnv& env, std::ostream& out,
                           std::ostream& err) {
  try {
    Calibrator c(args, env, out, err);
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
