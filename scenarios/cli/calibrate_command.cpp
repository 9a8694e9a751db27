#include "scenarios/cli/calibrate_command.hpp"

#include <cstdlib>
#include <iostream>
#include <memory>

#include "scenarios/calibrate/calibrate.hpp"
#include "scenarios/calibrate/script_calibration.hpp"
#include "scenarios/cli/emulate_command.hpp"

namespace sluice::cli {
namespace {

using calibrate::CalibrateArgs;

// What each mode does, after the options in `sluice calibrate --help`.
void add_help_footer(CLI::App* k) {
  k->footer(
      "SCRIPT mode (issue 8's F1 loop): sluice calibrate SCRIPT --backend emulate|hw|fio [--set name=value]...\n"
      "  [--profile NAME] [--fit-param F]... [--phase P]... [--out DIR] [--result F1]\n"
      "  1. runs SCRIPT with --set <set-param>=<fit-set> and measures its points (emulate: netns cluster, root;\n"
      "     fio: each point's file_sweep as fio jobs on the drive of --fio-dir, e.g. lua_scripts/calibrate_disk.lua),\n"
      "     then with <set-param>=<holdout-set> and measures those (before the fit: rates drift with time);\n"
      "  2. runs the same points in sim with the base profile, then fits the --fit-param fields of the profile\n"
      "     by Levenberg-Marquardt with the simulator in the loop (analysis/profile_fit.hpp);\n"
      "  3. writes the profile (<profile-dir>/NAME.json with --profile, else <out>/profiles/calibrated.json)\n"
      "     with its source (machine, date, scenario, fit residuals, held-out error);\n"
      "  4. predicts the held-out points in sim with the fitted profile (the fit never saw them) and prints\n"
      "     RESULT <result> median_err=<pct> p90_err=<pct> (|sim - measured| / measured of each phase's throughput).\n"
      "     Measured and predicted results.json go to <out>/<set>_<backend>/.\n"
      "  Fit parameters: network.bandwidth_factor network.latency_factor network.message_overhead_bytes\n"
      "  cpu.storage_request cpu.client_request disk.read_latency_ns disk.write_latency_ns disk.request_occupancy_ns\n"
      "  disk.batch_occupancy_ns disk.read_bandwidth_factor disk.write_bandwidth_factor disk.read_request_bytes_per_s\n"
      "  disk.write_request_bytes_per_s (make bench-f4 fits five: scripts/f4_fit_params.txt; disk.channels, an\n"
      "  integer, is not fitted: --estimate-channels sets it from the fit points first)\n"
      "  memory.memory_op_bytes_per_s (default: network.bandwidth_factor memory.memory_op_bytes_per_s\n"
      "  network.latency_factor)\n"
      "  e.g. sluice calibrate lua_scripts/calibrate_links.lua --backend emulate --profile netns\n"
      "GPU-sweep mode (the host-memory/PCIe model from bench_gpu's chunk-size sweep, make bench-gpu):\n"
      "  sluice calibrate --gpu-sweep gpu_sweep.csv --fit-piece 1MiB --fit-piece 16MiB --holdout-piece 4MiB\n"
      "  [--pcie-gen 5 --pcie-lanes 16] [--profile NAME] [--machine TEXT] [--fit-param F]...\n"
      "  fits pcie.bandwidth_factor pcie.latency_factor staging.cpu_copy_bytes_per_s (default; also\n"
      "  memory.bandwidth_factor) with the simulator's staged host->GPU copy in the loop, predicts the held-out\n"
      "  piece sizes and prints RESULT F2 median_err=<pct> p90_err=<pct>");
}

// SCRIPT mode's options.
void add_script_options(CLI::App* k, CalibrateArgs* cal) {
  k->add_option("script", cal->script, "SCRIPT mode: the calibration scenario (.lua)")->check(CLI::ExistingFile);
  k->add_option("--backend", cal->backend, "SCRIPT mode: where points are measured")
      ->check(CLI::IsMember({"emulate", "hw", "fio"}))
      ->capture_default_str();
  k->add_option("--fio-dir", cal->fio_dir, "SCRIPT mode, --backend fio: a directory on the drive measured");
  k->add_option("--fio", cal->fio_binary, "SCRIPT mode, --backend fio: the fio binary")->capture_default_str();
  k->add_option("--fio-ioengine", cal->fio_ioengine, "SCRIPT mode, --backend fio: fio's ioengine")
      ->capture_default_str();
  k->add_option("--fio-time-limit", cal->fio_time_limit_s, "SCRIPT mode, --backend fio: seconds per fio job at most")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 3600.0));
  k->add_option("--result", cal->result_name, "SCRIPT mode: the figure the RESULT line names (F1, F4)")
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
  k->add_option("--fit-param", cal->fit_params, "SCRIPT mode: profile field to fit (repeatable; see below)");
  k->add_flag("--estimate-channels", cal->estimate_channels,
              "SCRIPT mode: set the base profile's disk.channels from the fit points before the fit (the smallest "
              "block's rate at three depths; docs/sim.md, \"Disk model\")");
  k->add_option("--channels-block-param", cal->channels_block_param,
                "SCRIPT mode, --estimate-channels: the point parameter holding the block size in bytes")
      ->capture_default_str();
  k->add_option("--channels-depth-param", cal->channels_depth_param,
                "SCRIPT mode, --estimate-channels: the point parameter holding the queue depth")
      ->capture_default_str();
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
}

// GPU-sweep mode's options.
void add_gpu_sweep_options(CLI::App* k, CalibrateArgs* cal) {
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
}

// --fit / --synthetic mode's options (analysis::FitCalibrationArgs).
void add_fit_options(CLI::App* k, CalibrateArgs* cal) {
  k->add_option("--fit", cal->fit_files, "measured results used in the fit");
  k->add_option("--holdout", cal->holdout_files, "measured results only predicted (error reported)");
  k->add_option("--phase", cal->phases,
                "phase whose throughput is fitted (repeatable; --fit mode: the first, "
                "default read; SCRIPT mode default: write and read)");
  k->add_option("--name", cal->name, "profile name")->capture_default_str();
  k->add_option("--base", cal->base, "profile the fit starts from")->capture_default_str();
  k->add_option("--profile-out", cal->out, "--fit mode: write the profile here (e.g. sim/profiles/NAME.json)");
  k->add_option("--machine", cal->machine, "what was measured (profile source)");
  k->add_option("--scenario", cal->scenario, "calibration scenario (profile source)");
  k->add_flag("--synthetic", cal->synthetic, "run the F1 loop on synthetic data from the analytic model");
  k->add_option("--seed", cal->seed, "seed of the synthetic noise")->capture_default_str();
  k->add_option("--noise", cal->noise, "synthetic noise fraction")->capture_default_str();
}

}  // namespace

void add_calibrate_command(CLI::App& app, CommandExit& exit) {
  auto cal = std::make_shared<CalibrateArgs>();
  CLI::App* k = app.add_subcommand("calibrate", "fit sim profile parameters to measured runs");
  add_help_footer(k);
  add_script_options(k, cal.get());
  add_gpu_sweep_options(k, cal.get());
  add_fit_options(k, cal.get());

  on_parsed(k, exit, [cal] {
    if (!cal->phases.empty()) cal->phase = cal->phases.front();
    calibrate::ScriptCalibrationEnv env;
    // Ctrl-C removes the emulated cluster (the emulator polls stop_fd). Every other mode keeps the default
    // SIGINT and SIGTERM, which end it at once: its simulator and fio children die with it (PR_SET_PDEATHSIG).
    if (!cal->script.empty() && cal->backend == "emulate") env.stop_fd = emulate::install_emulate_stop_signals();
    return calibrate::run_calibrate(*cal, env, std::cout, std::cerr);
  });
}

}  // namespace sluice::cli
