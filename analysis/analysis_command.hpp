// The CLI of analysis/ (wired into `sluice` by scenarios/main.cpp with
// `sluice::analysis::add_analysis_commands(app);`):
//
//   sluice compare A.json B.json ... [--metric M]... [--ignore-param P]...
//                  [--measured hw|emulate] [--json OUT.json]
//       aligns runs of the same scenario and params from different backends;
//       prints predicted vs measured and the overall median/p90 error.
//   sluice calibrate --fit A.json... [--holdout C.json...] [--phase read]
//                    [--name NAME] [--base sim/profiles/default.json]
//                    [--out sim/profiles/NAME.json] [--machine M] [--scenario S]
//       fits the transfer model (transfer_model.hpp) to the measured runs,
//       writes the profile, prints the fit and, with held-out runs,
//       "RESULT F1 median_err=<pct> p90_err=<pct>".
//   sluice calibrate --synthetic [--seed N] [--noise 0.03]
//       the same loop on synthetic data (f1_synthetic.hpp).
//   sluice calibrate SCRIPT --backend emulate|hw [--set name=value]... [--profile NAME]
//                    [--fit-param F]... [--phase write --phase read] [--out DIR] ...
//       the end-to-end loop of issue 8: measures the script's fit points,
//       fits the profile with the simulator in the loop (profile_fit.hpp),
//       writes it, then measures the held-out points and prints the
//       simulator's error on them: "RESULT F1 median_err=<pct> p90_err=<pct>".
//       It needs the runner and the emulator, which analysis does not link:
//       the `sluice` program passes it in (ScriptCalibrateFn).
//   sluice report RESULTS.json... --out DIR [--x PARAM] [--phase read] [--title T]
//       the Markdown report with plots (run_report.hpp).
//
// Exit codes as scenarios/main.cpp: 0 ok, 1 the command failed, 2 usage error.
// The callbacks end the process with the exit code (std::exit), as
// add_emulate_commands' do.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace sluice::analysis {

struct CompareArgs {
  std::vector<std::string> files;
  std::vector<std::string> metrics;
  std::vector<std::string> ignored_params;
  std::string measured_backend;
  std::string json_out;
};
int run_compare(const CompareArgs &args, std::ostream &out, std::ostream &err);

struct CalibrateArgs {
  std::vector<std::string> fit_files;
  std::vector<std::string> holdout_files;
  std::string phase = "read";
  std::string name = "calibrated";
  std::string base = "sim/profiles/default.json";
  std::string out;  // empty: no profile written
  std::string machine;
  std::string scenario;
  bool synthetic = false;
  std::uint64_t seed = 1;
  double noise = 0.03;
  // SCRIPT mode (see the header comment; scenarios/emulate/script_calibration.hpp).
  std::string script;
  std::string backend = "emulate";             // where the points are measured: emulate or hw
  std::vector<std::string> sets;               // --set name=value for the script
  std::string set_param = "set";               // the script parameter that selects the point set
  std::string fit_set = "fit";                 // ... its value for the fit points
  std::string holdout_set = "holdout";         // ... and for the held-out points
  std::string profile;                         // write <profile_dir>/<profile>.json; empty: <out>/profiles/calibrated.json
  std::string profile_dir = "sim/profiles";    // where the base profile is read and --profile written
  std::string base_profile = "default";        // the profile the fit starts from (and the sim baseline)
  std::vector<std::string> fit_params;         // empty: ProfileFitOptions' default
  std::vector<std::string> phases;             // empty: write and read
  std::string out_dir = "out/calibrate";       // measured and predicted results.json, per set
  std::uint32_t jobs = 0;                      // parallel sim points (0: the number of cores)
  int max_iterations = 12;
  std::uint32_t repeats = 3;                   // measurements of each point; the fit and F1 use their median
  double max_median_err_pct = -1;              // >= 0: exit 1 when the held-out median error is above
  // GPU-sweep mode (scenarios/emulate/gpu_calibration.hpp): bench_gpu's
  // chunk-size sweep CSV; fit on the --fit-piece sizes, predict the
  // --holdout-piece sizes; the machine the simulator models.
  std::string gpu_sweep;
  std::vector<std::string> fit_pieces;         // e.g. 1MiB 16MiB
  std::vector<std::string> holdout_pieces;     // e.g. 256KiB 4MiB
  int pcie_gen = 5;
  int pcie_lanes = 16;
  double host_memory_bytes_per_s = 204.8e9;
};
// SCRIPT and GPU-sweep modes' implementation, supplied by the program that
// links the runner and the emulator (scenarios/main.cpp); returns the exit code.
using ScriptCalibrateFn = std::function<int(const CalibrateArgs &, std::ostream &, std::ostream &)>;
int run_calibrate(const CalibrateArgs &args, std::ostream &out, std::ostream &err,
                  const ScriptCalibrateFn &script_calibrate = {});

// Adds compare, calibrate and report; `script_calibrate` serves calibrate's SCRIPT mode.
void add_analysis_commands(CLI::App &app, ScriptCalibrateFn script_calibrate = {});

struct ReportArgs {
  std::vector<std::string> files;
  std::string out_dir;
  std::string x_param;
  std::string phase = "read";
  std::string title = "sluice run report";
};
int run_report(const ReportArgs &args, std::ostream &out, std::ostream &err);

}  // namespace sluice::analysis
