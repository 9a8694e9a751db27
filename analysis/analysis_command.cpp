#include "analysis/analysis_command.hpp"

#include <cstdlib>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "analysis/calibration.hpp"
#include "analysis/comparison.hpp"
#include "analysis/f1_synthetic.hpp"
#include "analysis/run_report.hpp"

namespace sluice::analysis {
namespace {

constexpr int k_exit_ok = 0;
constexpr int k_exit_failed = 1;
constexpr int k_exit_usage = 2;

Result<std::vector<RunRecord>> load_all(const std::vector<std::string> &files) {
  std::vector<RunRecord> all;
  for (const std::string &f : files) {
    Result<std::vector<RunRecord>> r = load_runs(f);
    if (!r.ok()) return r.status();
    all.insert(all.end(), r->begin(), r->end());
  }
  return all;
}

void print_fit(const Calibration &c, std::ostream &out) {
  const TransferParams &p = c.fit.params;
  out << fmt::format("fit: {} observations, {} iterations, converged={}\n", c.fit.observations, c.fit.iterations,
                     c.fit.converged);
  out << fmt::format("  network_bandwidth_factor = {:.4f}\n  chunk_overhead_bytes = {:.1f}\n"
                     "  request_service_us = {:.2f}\n",
                     p.network_bandwidth_factor, p.chunk_overhead_bytes, p.request_service_s * 1e6);
  out << fmt::format("  residual rms = {:.2f}%, max = {:.2f}%\n", 100 * c.fit.rms_rel_residual,
                     100 * c.fit.max_rel_residual);
  if (c.holdout_median_rel_err >= 0) {
    out << fmt::format("held-out: {} points\n", c.holdout_rel_errors.size());
    out << f1_line(c) << "\n";
  }
}

}  // namespace

int run_compare(const CompareArgs &args, std::ostream &out, std::ostream &err) {
  Result<std::vector<RunRecord>> runs = load_all(args.files);
  if (!runs.ok()) {
    err << "compare: " << runs.status().message() << "\n";
    return k_exit_failed;
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

int run_calibrate(const CalibrateArgs &args, std::ostream &out, std::ostream &err,
                  const ScriptCalibrateFn &script_calibrate) {
  if (!args.script.empty() || !args.gpu_sweep.empty()) {
    if (args.synthetic || !args.fit_files.empty() || !args.holdout_files.empty() ||
        (!args.script.empty() && !args.gpu_sweep.empty())) {
      err << "calibrate: give a SCRIPT, or --gpu-sweep, or --fit/--holdout files, or --synthetic; not several\n";
      return k_exit_usage;
    }
    if (!script_calibrate) {
      err << "calibrate: this program cannot run the simulator (SCRIPT and --gpu-sweep modes need the sluice CLI)\n";
      return k_exit_usage;
    }
    return script_calibrate(args, out, err);
  }
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
    Result<std::vector<RunRecord>> fit_runs = load_all(args.fit_files);
    Result<std::vector<RunRecord>> hold_runs = load_all(args.holdout_files);
    if (!fit_runs.ok() || !hold_runs.ok()) {
      err << "calibrate: " << (fit_runs.ok() ? hold_runs.status() : fit_runs.status()).message() << "\n";
      return k_exit_failed;
    }
    Result<std::vector<Observation>> fit = observations_from_runs(*fit_runs, args.phase);
    Result<std::vector<Observation>> hold = observations_from_runs(*hold_runs, args.phase);
    if (!fit.ok() || !hold.ok()) {
      err << "calibrate: " << (fit.ok() ? hold.status() : fit.status()).message() << "\n";
      return k_exit_failed;
    }
    c = calibrate(*fit, *hold);
    if (scenario.empty()) {
      for (const std::string &f : args.fit_files) scenario += (scenario.empty() ? "" : " ") + f;
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

int run_report(const ReportArgs &args, std::ostream &out, std::ostream &err) {
  Result<std::vector<RunRecord>> runs = load_all(args.files);
  if (!runs.ok()) {
    err << "report: " << runs.status().message() << "\n";
    return k_exit_failed;
  }
  Result<std::string> path = write_run_report(*runs, {args.out_dir, args.title, args.x_param, args.phase});
  if (!path.ok()) {
    err << path.status().message() << "\n";
    return k_exit_failed;
  }
  out << "report written: " << *path << "\n";
  return k_exit_ok;
}

void add_analysis_commands(CLI::App &app, ScriptCalibrateFn script_calibrate) {
  auto compare = std::make_shared<CompareArgs>();
  CLI::App *c = app.add_subcommand("compare", "predicted (sim) vs measured (hw/emulate) runs, per metric and point");
  c->add_option("files", compare->files, "results files (results.json or emulate output)")->required();
  c->add_option("--metric", compare->metrics, "metric to compare (default: throughput, ops, time, latencies)");
  c->add_option("--ignore-param", compare->ignored_params, "param left out when aligning runs");
  c->add_option("--measured", compare->measured_backend, "reference backend (default hw, else emulate)");
  c->add_option("--json", compare->json_out, "also write the comparison as JSON here");
  c->callback([compare] { std::exit(run_compare(*compare, std::cout, std::cerr)); });

  auto cal = std::make_shared<CalibrateArgs>();
  CLI::App *k = app.add_subcommand("calibrate", "fit sim profile parameters to measured runs");
  k->footer(
      "SCRIPT mode (issue 8's F1 loop): sluice calibrate SCRIPT --backend emulate|hw [--set name=value]...\n"
      "  [--profile NAME] [--fit-param F]... [--phase P]... [--out DIR]\n"
      "  1. runs SCRIPT with --set <set-param>=<fit-set> and measures its points (emulate: netns cluster, root);\n"
      "  2. runs the same points in sim with the base profile, then fits the --fit-param fields of the profile\n"
      "     by Levenberg-Marquardt with the simulator in the loop (analysis/profile_fit.hpp);\n"
      "  3. writes the profile (<profile-dir>/NAME.json with --profile, else <out>/profiles/calibrated.json)\n"
      "     with its source (machine, date, scenario, fit residuals, held-out error);\n"
      "  4. runs SCRIPT with <set-param>=<holdout-set>, measures those points, predicts them in sim with the\n"
      "     fitted profile and prints RESULT F1 median_err=<pct> p90_err=<pct> (|sim - measured| / measured\n"
      "     of each phase's throughput). Measured and predicted results.json go to <out>/<set>_<backend>/.\n"
      "  Fit parameters: network.bandwidth_factor network.latency_factor network.message_overhead_bytes\n"
      "  cpu.storage_request cpu.client_request disk.read_latency_ns disk.write_latency_ns disk.request_occupancy_ns\n"
      "  memory.memory_op_bytes_per_s (default: network.bandwidth_factor memory.memory_op_bytes_per_s\n"
      "  network.latency_factor)\n"
      "  e.g. sluice calibrate lua_scripts/calibrate_links.lua --backend emulate --profile netns\n"
      "GPU-sweep mode (the host-memory/PCIe model from bench_gpu's chunk-size sweep, make bench-gpu):\n"
      "  sluice calibrate --gpu-sweep gpu_sweep.csv --fit-piece 1MiB --fit-piece 16MiB --holdout-piece 4MiB\n"
      "  [--pcie-gen 5 --pcie-lanes 16] [--profile NAME] [--machine TEXT] [--fit-param F]...\n"
      "  fits pcie.bandwidth_factor pcie.latency_factor staging.cpu_copy_bytes_per_s (default; also\n"
      "  memory.bandwidth_factor) with the simulator's staged host->GPU copy in the loop, predicts the held-out\n"
      "  piece sizes and prints RESULT F2 median_err=<pct> p90_err=<pct>");
  k->add_option("script", cal->script, "SCRIPT mode: the calibration scenario (.lua)")->check(CLI::ExistingFile);
  k->add_option("--backend", cal->backend, "SCRIPT mode: where points are measured")
      ->check(CLI::IsMember({"emulate", "hw"}))
      ->capture_default_str();
  k->add_option("--set", cal->sets, "SCRIPT mode: override a script parameter, name=value (repeatable)");
  k->add_option("--set-param", cal->set_param, "SCRIPT mode: the parameter that selects the point set")
      ->capture_default_str();
  k->add_option("--fit-set", cal->fit_set, "SCRIPT mode: its value for the fit points")->capture_default_str();
  k->add_option("--holdout-set", cal->holdout_set, "SCRIPT mode: its value for the held-out points")
      ->capture_default_str();
  k->add_option("--profile", cal->profile, "SCRIPT mode: write the fitted profile as <profile-dir>/NAME.json");
  k->add_option("--profile-dir", cal->profile_dir, "SCRIPT mode: where profiles are read and written")
      ->capture_default_str();
  k->add_option("--base-profile", cal->base_profile, "SCRIPT mode: the profile the fit starts from")
      ->capture_default_str();
  k->add_option("--fit-param", cal->fit_params,
                "SCRIPT mode: profile field to fit (repeatable; see below)");
  k->add_option("--out", cal->out_dir, "SCRIPT mode: where measured/predicted results go")->capture_default_str();
  k->add_option("--jobs", cal->jobs, "SCRIPT mode: sim points at once (default: the number of cores)");
  k->add_option("--max-iterations", cal->max_iterations, "SCRIPT mode: Levenberg-Marquardt iterations at most")
      ->capture_default_str()
      ->check(CLI::Range(1, 50));
  k->add_option("--repeats", cal->repeats, "SCRIPT mode: measure each point this often; use the median")
      ->capture_default_str()
      ->check(CLI::Range(1, 9));
  k->add_option("--max-median-err", cal->max_median_err_pct,
                "SCRIPT mode: exit 1 when the held-out median error (percent) is above this");
  k->add_option("--gpu-sweep", cal->gpu_sweep, "GPU-sweep mode: bench_gpu's sweep CSV (SLUICE_BENCH_SWEEP_CSV)")
      ->check(CLI::ExistingFile);
  k->add_option("--fit-piece", cal->fit_pieces, "GPU-sweep mode: piece size whose points are fitted (repeatable)");
  k->add_option("--holdout-piece", cal->holdout_pieces,
                "GPU-sweep mode: piece size whose points are only predicted (repeatable)");
  k->add_option("--pcie-gen", cal->pcie_gen, "GPU-sweep mode: the GPU's PCIe generation")
      ->capture_default_str()
      ->check(CLI::Range(1, 5));
  k->add_option("--pcie-lanes", cal->pcie_lanes, "GPU-sweep mode: the GPU's PCIe lanes")
      ->capture_default_str()
      ->check(CLI::Range(1, 32));
  k->add_option("--host-memory-bw", cal->host_memory_bytes_per_s, "GPU-sweep mode: host memory bytes/s per socket")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  k->add_option("--fit", cal->fit_files, "measured results used in the fit");
  k->add_option("--holdout", cal->holdout_files, "measured results only predicted (error reported)");
  k->add_option("--phase", cal->phases, "phase whose throughput is fitted (repeatable; --fit mode: the first, "
                                        "default read; SCRIPT mode default: write and read)");
  k->add_option("--name", cal->name, "profile name")->capture_default_str();
  k->add_option("--base", cal->base, "profile the fit starts from")->capture_default_str();
  k->add_option("--profile-out", cal->out, "--fit mode: write the profile here (e.g. sim/profiles/NAME.json)");
  k->add_option("--machine", cal->machine, "what was measured (profile source)");
  k->add_option("--scenario", cal->scenario, "calibration scenario (profile source)");
  k->add_flag("--synthetic", cal->synthetic, "run the F1 loop on synthetic data from the analytic model");
  k->add_option("--seed", cal->seed, "seed of the synthetic noise")->capture_default_str();
  k->add_option("--noise", cal->noise, "synthetic noise fraction")->capture_default_str();
  k->callback([cal, script_calibrate] {
    if (!cal->phases.empty()) cal->phase = cal->phases.front();
    std::exit(run_calibrate(*cal, std::cout, std::cerr, script_calibrate));
  });

  auto rep = std::make_shared<ReportArgs>();
  CLI::App *r = app.add_subcommand("report", "Markdown report with gnuplot plots of results");
  r->add_option("files", rep->files, "results files")->required();
  r->add_option("--out", rep->out_dir, "output directory")->required();
  r->add_option("--x", rep->x_param, "param on the x axis (default: the first that varies)");
  r->add_option("--phase", rep->phase, "phase plotted")->capture_default_str();
  r->add_option("--title", rep->title, "report title")->capture_default_str();
  r->callback([rep] { std::exit(run_report(*rep, std::cout, std::cerr)); });
}

}  // namespace sluice::analysis
