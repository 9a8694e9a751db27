#include "analysis/analysis_command.hpp"

#include <cstdlib>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "analysis/calibration.hpp"
#include "analysis/least_squares.hpp"
#include "analysis/comparison.hpp"
#include "analysis/f1_synthetic.hpp"
#include "analysis/fidelity.hpp"
#include "analysis/import_command.hpp"
#include "analysis/run_report.hpp"

namespace sluice::analysis {
namespace {

constexpr int k_exit_ok = 0;
constexpr int k_exit_failed = 1;
constexpr int k_exit_usage = 2;

// Every run of `files`; a file that is incomplete (results.json "complete":
// false) is read all the same, said on `err` and added to `incomplete`.
Result<std::vector<RunRecord>> load_all(const std::vector<std::string>& files, std::ostream& err,
                                        std::vector<std::string>* incomplete = nullptr) {
  std::vector<RunRecord> all;
  for (const std::string& f : files) {
    Result<ResultsFile> r = load_results(f);
    if (!r.ok()) return r.status();
    if (!r->complete) {
      err << "note: " << incomplete_note(*r) << "\n";
      if (incomplete != nullptr) incomplete->push_back(incomplete_note(*r));
    }
    all.insert(all.end(), r->runs.begin(), r->runs.end());
  }
  return all;
}

// A results file that cannot be read (missing, not JSON, wrong types, a
// version this sluice does not read) is bad input: exit 2, as for the CLI's
// other input files; anything else failing is 1.
int load_failure(const Status& s) {
  return s.code() == StatusCode::invalid_argument || s.code() == StatusCode::io_error ? k_exit_usage : k_exit_failed;
}

void print_fit(const Calibration& c, std::ostream& out) {
  const TransferParams& p = c.fit.params;
  out << fmt::format("fit: {} observations, {} iterations, converged={}\n", c.fit.observations, c.fit.iterations,
                     c.fit.converged);
  const double values[3] = {p.network_bandwidth_factor, p.chunk_overhead_bytes, p.request_service_s * 1e6};
  const char* names[3] = {"network_bandwidth_factor", "chunk_overhead_bytes", "request_service_us"};
  for (std::size_t k = 0; k < 3; ++k) {
    out << fmt::format("  {} = {}\n", names[k],
                       value_with_interval_text(values[k], c.fit.log_std_errors[k], c.fit.t95));
  }
  out << fmt::format("  residual rms = {:.2f}%, max = {:.2f}%\n", 100 * c.fit.rms_rel_residual,
                     100 * c.fit.max_rel_residual);
  if (c.holdout_median_rel_err >= 0) {
    out << fmt::format("held-out: {} points\n", c.holdout_rel_errors.size());
    out << f1_line(c) << "\n";
  }
}

}  // namespace

int run_compare(const CompareArgs& args, std::ostream& out, std::ostream& err) {
  Result<std::vector<RunRecord>> runs = load_all(args.files, err);
  if (!runs.ok()) {
    err << "compare: " << runs.status().message() << "\n";
    return load_failure(runs.status());
  }
  CompareOptions options;
  if (!args.metrics.empty()) options.metrics = args.metrics;
  options.ignored_params = args.ignored_params;
  options.measured_backend = args.measured_backend;
  Result<Comparison> c = compare_runs(*runs, options);
  if (!c.ok()) {
    err << c.status().message() << "\n";
    return k_exit_failed;
  }
  out << comparison_text(*c);
  if (!args.json_out.empty()) {
    if (Status st = write_json_file(args.json_out, comparison_json(*c)); !st.ok()) {
      err << st.message() << "\n";
      return k_exit_failed;
    }
  }
  return k_exit_ok;
}

int run_fit_calibration(const FitCalibrationArgs& args, std::ostream& out, std::ostream& err) {
  Result<Calibration> c = error(StatusCode::internal, "calibrate: nothing ran");
  std::string scenario = args.scenario;
  if (args.synthetic) {
    SyntheticF1Options o;
    o.seed = args.seed;
    o.noise_fraction = args.noise;
    c = run_synthetic_f1(o);
    if (scenario.empty()) scenario = "analysis/f1_synthetic.hpp (analytic model, not a measurement)";
  } else {
    if (args.fit_files.empty()) {
      err << "calibrate: give --fit results files or --synthetic\n";
      return k_exit_usage;
    }
    Result<std::vector<RunRecord>> fit_runs = load_all(args.fit_files, err);
    Result<std::vector<RunRecord>> hold_runs = load_all(args.holdout_files, err);
    if (!fit_runs.ok() || !hold_runs.ok()) {
      const Status& bad = fit_runs.ok() ? hold_runs.status() : fit_runs.status();
      err << "calibrate: " << bad.message() << "\n";
      return load_failure(bad);
    }
    Result<std::vector<Observation>> fit = observations_from_runs(*fit_runs, args.phase);
    Result<std::vector<Observation>> hold = observations_from_runs(*hold_runs, args.phase);
    if (!fit.ok() || !hold.ok()) {
      err << "calibrate: " << (fit.ok() ? hold.status() : fit.status()).message() << "\n";
      return k_exit_failed;
    }
    c = calibrate(*fit, *hold);
    if (scenario.empty()) {
      for (const std::string& f : args.fit_files) scenario += (scenario.empty() ? "" : " ") + f;
    }
  }
  if (!c.ok()) {
    err << c.status().message() << "\n";
    return k_exit_failed;
  }
  print_fit(*c, out);
  if (args.out.empty()) return k_exit_ok;
  Result<nlohmann::json> base = read_json_file(args.base);
  if (!base.ok()) {
    err << "calibrate: base profile: " << base.status().message() << "\n";
    return k_exit_failed;
  }
  Result<nlohmann::json> profile = calibrated_profile(*base, *c, {args.name, args.machine, "", scenario});
  if (!profile.ok()) {
    err << profile.status().message() << "\n";
    return k_exit_failed;
  }
  if (Status st = write_json_file(args.out, *profile); !st.ok()) {
    err << st.message() << "\n";
    return k_exit_failed;
  }
  out << "profile written: " << args.out << "\n";
  return k_exit_ok;
}

int run_report(const ReportArgs& args, std::ostream& out, std::ostream& err) {
  std::vector<std::string> incomplete;
  Result<std::vector<RunRecord>> runs = load_all(args.files, err, &incomplete);
  if (!runs.ok()) {
    err << "report: " << runs.status().message() << "\n";
    return load_failure(runs.status());
  }
  Result<std::string> path =
      write_run_report(*runs, {args.out_dir, args.title, args.x_param, args.phase, std::move(incomplete)});
  if (!path.ok()) {
    err << path.status().message() << "\n";
    return k_exit_failed;
  }
  out << "report written: " << *path << "\n";
  return k_exit_ok;
}

}  // namespace sluice::analysis
