// GpuCalibration: `sluice calibrate --gpu-sweep CSV` (issue 8, "on the GPU
// machine: calibrate the PCIe/host-memory model from make bench-gpu-style runs
// and predict another chunk size").
//
//   1. Reads bench_gpu's chunk-size sweep (tests/bench/gpu_bench.cpp,
//      SLUICE_BENCH_SWEEP_CSV: series,piece_bytes,lanes,depth,total_bytes,
//      run,bytes_per_s), one point per (series, piece, lanes), the median of
//      its runs.
//   2. Fits the profile fields (default pcie.bandwidth_factor,
//      pcie.latency_factor, staging.cpu_copy_bytes_per_s) to the points whose
//      piece size is a --fit-piece, with the simulator in the loop
//      (analysis/profile_fit.hpp; each point simulated by
//      scenario::simulate_staged_copy in a child process).
//   3. Predicts the points of every --holdout-piece size with the base and the
//      fitted profile and prints a table and
//      "RESULT F2 median_err=<pct> p90_err=<pct>" (|sim - measured| / measured
//      over the held-out points; the fit never saw them).
//   4. Writes the fitted profile with its source (<profile-dir>/NAME.json with
//      --profile, else <out>/profiles/gpu_calibrated.json), the table as
//      <out>/gpu_calibration.json and .csv, and a plot of throughput against
//      piece size (measured and fitted sim, per lanes) as
//      <out>/gpu_calibration.svg/.png where gnuplot exists.
//
// Exit code: 0 ok, 1 failed (or the held-out median above --max-median-err),
// 2 usage (a bad CSV names its line; an unknown piece size lists the known).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "scenarios/calibrate/calibrate.hpp"
#include "core/common/status.hpp"
#include "scenarios/runner/staged_copy_run.hpp"

namespace sluice::calibrate {

// Limits: rows of a sweep CSV and points one calibration fits or predicts.
inline constexpr std::size_t k_max_gpu_sweep_rows = 100'000;
inline constexpr std::size_t k_max_gpu_sweep_points = 512;

// One measured point: the median over its runs.
struct GpuSweepPoint {
  scenario::StagedCopyPoint point;  // depth: the staging depth the measured pipeline ran with
  double bytes_per_s = 0;           // median
  double min_bytes_per_s = 0;
  double max_bytes_per_s = 0;
  std::uint32_t runs = 0;
};

// Parses the CSV text; invalid_argument naming the line and column.
Result<std::vector<GpuSweepPoint>> parse_gpu_sweep(const std::string& csv_text);

int run_gpu_calibration(const CalibrateArgs& args, std::ostream& out, std::ostream& err);

}  // namespace sluice::calibrate
