// ScriptCalibration: `sluice calibrate SCRIPT --backend emulate|hw` (issue 8).
//
//   1. Runs SCRIPT with --set <set_param>=<fit_set> and with
//      <set_param>=<holdout_set> to learn the points each asks for (sl.run;
//      that pass's runs are simulated on the base profile and not reported).
//      Then measures them in --repeats rounds: round r measures repeat r of
//      every point of both sets, the sets interleaved, on the netns-emulated
//      cluster (EmulatedPointRun), this machine's hardware (the runner's
//      Backend::hw) or fio, one at a time. A drive's or a link's rate drifts
//      with time; in rounds the drift reaches the fit and the held-out points
//      alike instead of counting as model error. Then SCRIPT runs again per
//      set with its sl.run answered by the measurements, so its own report
//      shows them (it must ask for the same points again).
//   2. Fits the chosen profile fields with the simulator in the loop
//      (analysis/profile_fit.hpp): each candidate profile is written under
//      <out>/profiles/ and the same points run in sim with it (the runner's
//      Backend::sim, child processes).
//   3. Writes the fitted profile with its source (machine, date, scenario and
//      --set values, fit residuals, held-out error) where sim/ loads it by
//      name: <profile_dir>/<profile>.json (or <out>/profiles/calibrated.json).
//   4. Predicts the held-out points in sim with the base and with the fitted profile. Prints
//      a table and "RESULT F1 median_err=<pct> p90_err=<pct>": the median and
//      90th percentile of |sim - measured| / measured of each phase's
//      throughput (bytes_per_s, last done) over the held-out points and
//      phases. The held-out points are never seen by the fit.
//   Results: <out>/<set>_<backend>/results.json and <out>/<set>_sim_fitted/...,
//   so `sluice compare` can align them again later.
//
// Every point is annotated (both worlds alike) with params link_bits_per_s,
// link_latency_ns, stripe_count, chunk_bytes, file_bytes and block_bytes
// taken from the spec, so results of one script's different sl.run calls
// stay distinguishable by analysis::point_key.
//
// Exceptions: none escape; errors are messages on `err` and an exit code
// (0 ok, 1 failed or the held-out median above --max-median-err, 2 usage).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "scenarios/calibrate/calibrate.hpp"

namespace sluice::calibrate {

struct ScriptCalibrationEnv {
  std::vector<std::string> node_command;  // EmulatedPointOptions::node_command (tests: the sluice binary)
  int stop_fd = -1;                       // readable: stop the emulation and clean up
};

int run_script_calibration(const CalibrateArgs& args, const ScriptCalibrationEnv& env, std::ostream& out,
                           std::ostream& err);

}  // namespace sluice::calibrate
