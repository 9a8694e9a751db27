// The commands of analysis/, as functions of their arguments (their command
// line: scenarios/cli/analysis_commands.hpp):
//
//   sluice compare A.json B.json ... [--metric M]... [--ignore-param P]...
//                  [--measured hw|emulate] [--json OUT.json]
//       aligns runs of the same scenario and params from different backends;
//       prints predicted vs measured and the overall median/p90 error.
//   sluice calibrate --fit A.json... / --synthetic: run_fit_calibration below;
//       the calibrate command itself (with its SCRIPT and --gpu-sweep modes,
//       which run the simulator and measure) is scenarios/calibrate's.
//   sluice report RESULTS.json... --out DIR [--x PARAM] [--phase read] [--title T]
//       the Markdown report with plots (run_report.hpp).
//   sluice fidelity RESULTS.json... [--markdown FILE]
//       the seed studies' claims against their published figures, RESULT F3
//       (fidelity.hpp).
//   sluice import FILE... --out DIR [--tool T] [--scenario NAME] [--label TEXT]
//       fio/elbencho/IOR/mdtest/gdsio measurements as DIR/results.json
//       (run_import, import_command.hpp).
//
// Exit codes as scenarios/cli/command.hpp: 0 ok, 1 the command failed, 2 usage error.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace sluice::analysis {

struct CompareArgs {
  std::vector<std::string> files;
  std::vector<std::string> metrics;
  std::vector<std::string> ignored_params;
  std::string measured_backend;
  std::string json_out;
};
int run_compare(const CompareArgs& args, std::ostream& out, std::ostream& err);

// `sluice calibrate --fit A.json... [--holdout C.json...] [--phase read]
//  [--name NAME] [--base sim/profiles/default.json] [--profile-out sim/profiles/NAME.json]
//  [--machine M] [--scenario S]`: fits the transfer model (transfer_model.hpp) to
// the measured runs, writes the profile, prints the fit and, with held-out
// runs, "RESULT F1 median_err=<pct> p90_err=<pct>". `--synthetic [--seed N]
// [--noise 0.03]`: the same loop on synthetic data (f1_synthetic.hpp).
struct FitCalibrationArgs {
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
};
int run_fit_calibration(const FitCalibrationArgs& args, std::ostream& out, std::ostream& err);

struct ReportArgs {
  std::vector<std::string> files;
  std::string out_dir;
  std::string x_param;
  std::string phase = "read";
  std::string title = "sluice run report";
};
int run_report(const ReportArgs& args, std::ostream& out, std::ostream& err);

}  // namespace sluice::analysis
