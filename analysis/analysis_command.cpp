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

void add_analysis_commands(CLI::App& app) {
  auto compare = std::make_shared<CompareArgs>();
  CLI::App* c = app.add_subcommand("compare", "predicted (sim) vs measured (hw/emulate) runs, per metric and point");
  c->add_option("files", compare->files,
                "results files (results.json; also the single-file emulate output of earlier versions)")
      ->required();
  c->add_option("--metric", compare->metrics, "metric to compare (default: throughput, ops, time, latencies)");
  c->add_option("--ignore-param", compare->ignored_params, "param left out when aligning runs");
  c->add_option("--measured", compare->measured_backend, "reference backend (default cluster, else hw, else emulate)");
  c->add_option("--json", compare->json_out, "also write the comparison as JSON here");
  c->callback([compare] { std::exit(run_compare(*compare, std::cout, std::cerr)); });

  auto rep = std::make_shared<ReportArgs>();
  CLI::App* r = app.add_subcommand("report", "Markdown report with gnuplot plots of results");
  r->add_option("files", rep->files, "results files")->required();
  r->add_option("--out", rep->out_dir, "output directory")->required();
  r->add_option("--x", rep->x_param, "param on the x axis (default: the first that varies)");
  r->add_option("--phase", rep->phase, "phase plotted")->capture_default_str();
  r->add_option("--title", rep->title, "report title")->capture_default_str();
  r->callback([rep] { std::exit(run_report(*rep, std::cout, std::cerr)); });

  // sluice fidelity (fidelity.hpp): the seed studies' claims against their published figures.
  auto fid = std::make_shared<FidelityArgs>();
  CLI::App* f = app.add_subcommand("fidelity", "the seed studies' figures, published vs simulated; RESULT F3");
  f->add_option("files", fid->files, "the studies' results.json files")->required();
  f->add_option("--markdown", fid->markdown, "also write the report as Markdown here (with the studies' plots)");
  f->callback([fid] { std::exit(run_fidelity(*fid, std::cout, std::cerr)); });

  // sluice import (import_command.hpp): other tools' measurements as a results.json.
  auto imp = std::make_shared<ImportArgs>();
  CLI::App* i = app.add_subcommand("import", "fio/elbencho/IOR/mdtest/gdsio measurements as DIR/results.json");
  i->add_option("files", imp->files, "the tools' output files")->required();
  i->add_option("--out", imp->out_dir, "output directory (results.json)")->required();
  i->add_option("--tool", imp->tool, "fio|elbencho|ior|mdtest|gdsio (default: detected from the content)");
  i->add_option("--scenario", imp->scenario, "the runs' scenario (default: the tool's name)");
  i->add_option("--label", imp->label, "the runs' label (default: the tool's job name)");
  i->callback([imp] { std::exit(run_import(*imp, std::cout, std::cerr)); });
}

}  // namespace sluice::analysis
