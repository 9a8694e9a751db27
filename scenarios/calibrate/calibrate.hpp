// `sluice calibrate` (its command line: scenarios/cli/calibrate_command.hpp): fits sim profile parameters to
// measurements, in three modes (issue 8), one command:
//   sluice calibrate SCRIPT --backend emulate|hw ...   the F1 loop with the
//       simulator in the loop (script_calibration.hpp);
//   sluice calibrate --gpu-sweep CSV ...               the host-memory/PCIe
//       model from bench_gpu's sweep (gpu_calibration.hpp);
//   sluice calibrate --fit A.json... | --synthetic     the transfer model fitted
//       to results files (analysis::run_fit_calibration).
// Calibration coordinates the Lua layer, the runner, the emulator and the
// fitting, so it lives here, above all of them; analysis/ stays fitting and
// statistics, and sluice-node (scenarios/cli, scenarios/netns) links none of it.
//
// Exit codes as scenarios/cli/command.hpp: 0 ok, 1 the command failed (or the
// held-out median above --max-median-err), 2 usage error.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/analysis_command.hpp"

namespace sluice::calibrate {

struct CalibrateArgs : analysis::FitCalibrationArgs {
  // SCRIPT mode (script_calibration.hpp).
  std::string script;
  std::string backend = "emulate";      // where the points are measured: emulate, hw or fio (fio_point_run.hpp)
  std::vector<std::string> sets;        // --set name=value for the script
  std::string set_param = "set";        // the script parameter that selects the point set
  std::string fit_set = "fit";          // ... its value for the fit points
  std::string holdout_set = "holdout";  // ... and for the held-out points
  std::string profile;                  // write <profile_dir>/<profile>.json; empty: <out>/profiles/calibrated.json
  std::string profile_dir = "sim/profiles";  // where the base profile is read and --profile written
  std::string base_profile = "default";      // the profile the fit starts from (and the sim baseline)
  std::vector<std::string> fit_params;       // empty: ProfileFitOptions' default
  // Set disk.channels of the base profile from the fit points before the fit
  // (analysis/disk_channels.hpp), their block size and depth in these parameters.
  bool estimate_channels = false;
  std::string channels_block_param = "bs_bytes";
  std::string channels_depth_param = "qd";
  std::vector<std::string> phases;        // empty: write and read
  std::string out_dir = "out/calibrate";  // measured and predicted results.json, per set
  std::uint32_t jobs = 0;                 // parallel sim points (0: the number of cores)
  int max_iterations = 12;
  std::uint32_t repeats = 3;       // measurements of each point; the fit and F1 use their median
  double max_median_err_pct = -1;  // >= 0: exit 1 when the held-out median error is above
  std::string result_name = "F1";  // the figure the RESULT line names (F1: links; F4: a drive under fio)
  // --backend fio: where fio's data files go (a directory on the drive measured), the fio binary,
  // its ioengine and each job's time limit (fio_point_run.hpp).
  std::string fio_dir;
  std::string fio_binary = "fio";
  std::string fio_ioengine = "psync";
  double fio_time_limit_s = 120;
  // GPU-sweep mode (gpu_calibration.hpp): bench_gpu's chunk-size sweep CSV;
  // fit on the --fit-piece sizes, predict the --holdout-piece sizes; the
  // machine the simulator models.
  std::string gpu_sweep;
  std::vector<std::string> fit_pieces;      // e.g. 1MiB 16MiB
  std::vector<std::string> holdout_pieces;  // e.g. 256KiB 4MiB
  int pcie_gen = 5;
  int pcie_lanes = 16;
  double host_memory_bytes_per_s = 204.8e9;
};

struct ScriptCalibrationEnv;  // script_calibration.hpp: where SCRIPT mode's emulated points run

// Runs the mode `args` asks for (one of the three; several at once is a usage error).
int run_calibrate(const CalibrateArgs& args, const ScriptCalibrationEnv& env, std::ostream& out, std::ostream& err);

// Adds the calibrate command; its callback ends the process with the exit code.

}  // namespace sluice::calibrate
