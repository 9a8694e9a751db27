#include "scenarios/calibrate/calibrate.hpp"

#include "scenarios/calibrate/gpu_calibration.hpp"
#include "scenarios/calibrate/script_calibration.hpp"

namespace sluice::calibrate {
namespace {
constexpr int k_exit_usage = 2;
}  // namespace

int run_calibrate(const CalibrateArgs& args, const ScriptCalibrationEnv& env, std::ostream& out, std::ostream& err) {
  const int modes = (args.script.empty() ? 0 : 1) + (args.gpu_sweep.empty() ? 0 : 1) +
                    ((args.synthetic || !args.fit_files.empty() || !args.holdout_files.empty()) ? 1 : 0);
  if (modes > 1) {
    err << "calibrate: give a SCRIPT, or --gpu-sweep, or --fit/--holdout files, or --synthetic; not several\n";
    return k_exit_usage;
  }
  if (!args.gpu_sweep.empty()) return run_gpu_calibration(args, out, err);
  if (!args.script.empty()) return run_script_calibration(args, env, out, err);
  return analysis::run_fit_calibration(args, out, err);
}

}  // namespace sluice::calibrate
