// `sluice calibrate`: one command, three modes (calibrate.hpp, its command line
// scenarios/cli/calibrate_command.hpp); a
// request for several at once is a usage error naming the modes, before
// anything runs. The modes themselves: script_calibration_test.cpp,
// gpu_calibration_test.cpp, tests/analysis/analysis_command_test.cpp.
#include <gtest/gtest.h>

#include <sstream>

#include "scenarios/calibrate/calibrate.hpp"
#include "scenarios/calibrate/script_calibration.hpp"
#include "scenarios/cli/calibrate_command.hpp"

namespace sluice::calibrate {
namespace {

int run(const CalibrateArgs& args, std::string* err_text) {
  std::ostringstream out, err;
  const int code = run_calibrate(args, ScriptCalibrationEnv{}, out, err);
  *err_text = err.str();
  return code;
}

TEST(CalibrateCommand, SeveralModesAtOnceAreAUsageError) {
  std::string err;
  CalibrateArgs script;
  script.script = "lua_scripts/calibrate_links.lua";
  CalibrateArgs script_and_sweep = script;
  script_and_sweep.gpu_sweep = "sweep.csv";
  EXPECT_EQ(run(script_and_sweep, &err), 2);
  EXPECT_NE(err.find("not several"), std::string::npos) << err;
  CalibrateArgs script_and_synthetic = script;
  script_and_synthetic.synthetic = true;
  EXPECT_EQ(run(script_and_synthetic, &err), 2);
  CalibrateArgs sweep_and_fit;
  sweep_and_fit.gpu_sweep = "sweep.csv";
  sweep_and_fit.fit_files = {"a.json"};
  EXPECT_EQ(run(sweep_and_fit, &err), 2);
}

TEST(CalibrateCommand, NoModeAsksForOne) {
  std::string err;
  EXPECT_EQ(run(CalibrateArgs{}, &err), 2);
  EXPECT_NE(err.find("give --fit results files or --synthetic"), std::string::npos) << err;
}

TEST(CalibrateCommand, TheFitModeReachesAnalysis) {
  std::string err;
  CalibrateArgs missing;
  missing.fit_files = {"/nonexistent/sluice/results.json"};
  EXPECT_EQ(run(missing, &err), 2) << "a results file that cannot be read is bad input";
  EXPECT_NE(err.find("/nonexistent/sluice/results.json"), std::string::npos) << err;
}

TEST(CalibrateCommand, IsRegistered) {
  CLI::App app;
  cli::CommandExit exit;
  cli::add_calibrate_command(app, exit);
  EXPECT_NE(app.get_subcommand("calibrate"), nullptr);
}

}  // namespace
}  // namespace sluice::calibrate
