// FioPointRun: a calibration point measured by fio on a real drive
// (issue 22, F4: `sluice calibrate SCRIPT --backend fio`).
//
// The point's workload is one file_sweep of one rank; fio runs what the
// sweep asks the drive for, in a job file written next to its output:
//   - one fio job per measured phase (write, read), in the sweep's order,
//     each behind a stonewall (one reporting group each, group_reporting);
//   - numjobs = threads: each clone works on its own file of file_bytes, in
//     block_bytes requests, one request at a time (ioengine psync by default),
//     so the drive sees `threads` requests in flight as the sweep's rank
//     keeps `threads` files in flight; files = threads is required;
//   - direct=1 (O_DIRECT: the page cache is not measured);
//   - rw = write/read, or randwrite/randread when the point's param
//     "access" is "random" (the simulator's drive model has no seek cost:
//     on flash a random and a sequential request cost the same, and the
//     calibration's held-out error shows where that is wrong);
//   - each job bounded by runtime (time_limit_s), the command by a deadline.
// fio's JSON output is read by `sluice import`'s reader (analysis/import_fio)
// into the results layout, so the measured phases are exactly what `sluice
// import` makes of the same file; its params are replaced by the point's, so
// the measurement aligns with the simulated point.
// Files: <work_dir>/job.fio, fio.json, fio.log; fio's data files go to
// `directory` (on the drive measured) and are removed after the point.
#pragma once

#include <cstdint>
#include <string>

#include "core/common/status.hpp"
#include "scenarios/scenario_spec.hpp"

namespace sluice::calibrate {

// Limits: one fio job's runtime, and the command's deadline beyond the jobs' runtimes.
inline constexpr double k_fio_default_job_time_limit_s = 120;
inline constexpr double k_fio_max_job_time_limit_s = 3600;
inline constexpr std::uint32_t k_fio_command_slack_ms = 60'000;

struct FioPointOptions {
  std::string fio = "fio";                               // the fio binary
  std::string directory;                                 // where fio's data files go: a directory on the drive measured
  std::string work_dir;                                  // job file, JSON output and log of this point
  std::string ioengine = "psync";                        // one request at a time per clone, as a sweep thread
  double time_limit_s = k_fio_default_job_time_limit_s;  // fio runtime= of each job
};

// The job file for `point` (invalid_argument naming the field the point cannot be measured by).
Result<std::string> fio_job_file(const scenario::ScenarioSpec& point, const FioPointOptions& options);

// Runs fio for the point; a failed fio or an unreadable output is a failed
// run (ok = false, error naming the cause), never an exception.
scenario::RunResult run_fio_point(const scenario::ScenarioSpec& point, const FioPointOptions& options);

}  // namespace sluice::calibrate
