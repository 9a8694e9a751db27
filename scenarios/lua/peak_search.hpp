// sl.peak (issue 48 item 4): what a configuration peaks at, not the rate at
// the concurrency a script happened to choose. The pure part: which
// concurrency axis a workload has, which phase is measured, each step's
// workload arguments, when the search stops and how a rate reads against its
// bound. The binding (sluice_module.cpp) runs the steps through sl.run's
// request reader and runner.
//
// The search: the axis starts at the workload's own value and doubles each
// step (k_peak_step_factor), at most k_peak_max_steps points in all (the
// script may ask for fewer, max_steps), until one step raises the phase's
// aggregate rate (last_bytes_per_s) by less than k_peak_min_growth: the knee
// is the step before it, the least concurrency that reaches the plateau.
//
// The concurrency must be usable at every step, never silently capped:
//   - a file sweep's threads are files in flight per rank, so a rank needs
//     at least as many files: files_per_rank is raised with threads (the
//     same factor), keeping the bytes per thread and so the length of each
//     thread's work the same, as elbencho's files per thread do; a start
//     with fewer files than threads is refused;
//   - a file sweep's iodepth is blocks in flight per file: the files and
//     bytes stay as given (the cheaper search where files cost run time), and
//     the search stops, and says so, where it would pass a file's blocks;
//   - a checkpoint burst's inflight_blocks are writes in flight per rank:
//     the search stops, and says so, where they would pass the blocks of a
//     rank's shard.
// A step that would pass a field's limit stops the search, and says so.
//
// LargestPassing is the same search turned to a yes-or-no test (sl.mlperf,
// mlperf_search.hpp: does AU stay at its threshold with this many
// accelerators?): the count doubles from 1 by k_peak_step_factor, as sl.peak's
// axis does, until a run fails the test or the count reaches its maximum;
// then bisection between the last count that passed and the first that
// failed. It assumes the test is monotone (passes up to some count, fails
// beyond), as AU falling with the accelerators sharing one storage is.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "scenarios/lua/script_value.hpp"
#include "scenarios/scenario_spec.hpp"

namespace sluice::scenario {

// Points one sl.peak runs at most: the start and 7 doublings (128x the start).
inline constexpr std::uint64_t k_peak_max_steps = 8;
// Each step multiplies the axis by this.
inline constexpr std::uint64_t k_peak_step_factor = 2;
// A step that raises the rate by less than this fraction ends the search (2%).
inline constexpr double k_peak_min_growth = 0.02;

// The axes sl.peak raises: "threads" and "iodepth" (file_sweep), "inflight_blocks" (checkpoint_burst).
const std::vector<std::string>& peak_axes();

struct PeakPlan {
  std::string axis;                   // one of peak_axes()
  std::string workload_type;          // "file_sweep"
  std::string workload;               // its label (WorkloadSpec::label): the phase rows' workload
  std::string phase;                  // the measured bulk phase: "read"
  std::uint64_t start = 0;            // the axis's value in the workload as given
  std::uint64_t files_per_rank = 0;   // file_sweep: as built, raised with the axis; else 0
  std::uint64_t blocks_per_rank = 0;  // checkpoint_burst: writes a rank has to issue; else 0
  std::uint64_t blocks_per_file = 0;  // file_sweep's iodepth: blocks of one file; else 0
  std::uint64_t inflight_factor = 1;  // operations in flight per unit of the axis (file_sweep: the other axis)
};

// The plan for `workload` (the object as the script made it, and built):
// `phase` empty picks the workload's first bulk phase. Throws ScriptError
// "sl.peak: <field>: ..." naming axis, phase or run.workload.
PeakPlan plan_peak(const ScriptObject& workload, const WorkloadSpec& built, const std::string& axis,
                   const std::string& phase);

// The axis's value at `step` (0: the start).
std::uint64_t peak_value(const PeakPlan& plan, std::uint64_t step);

// Why `step` cannot run (a limit it would pass, concurrency the workload
// could not use), or "" when it can.
std::string peak_stop(const PeakPlan& plan, std::uint64_t step);

// The workload of `step`: the script's object with the axis (and the files
// raised with it) set; `params` gets their values, as a sweep axis would.
std::shared_ptr<const ScriptObject> peak_workload(const ScriptObject& workload, const PeakPlan& plan,
                                                  std::uint64_t step, std::map<std::string, std::string>& params);

// Whether a step from `before` to `after` (bytes/s) grew by less than k_peak_min_growth.
bool peak_flat(double before, double after);

// The largest count in [1, max] whose run passes a test (above). Probes
// next() until done(), telling record() each outcome.
class LargestPassing {
 public:
  explicit LargestPassing(std::uint64_t max) : max_(max), fail_(max + 1) {}
  bool done() const { return fail_ == pass_ + 1; }
  // The count to run next (only before done()).
  std::uint64_t next() const;
  void record(std::uint64_t count, bool passed);
  // The largest count that passed (0: even 1 failed), and the least that failed (max + 1: none did).
  std::uint64_t largest() const { return pass_; }
  std::uint64_t least_failing() const { return fail_; }

 private:
  std::uint64_t max_;
  std::uint64_t pass_ = 0;
  std::uint64_t fail_;
  bool doubling_ = true;
};

// "0.95 of bound 100 GB/s" for a rate with a bound; "" where there is no
// finite bound or no rate (no bound is invented).
std::string of_bound_text(double bytes_per_s, double bound_bytes_per_s);

}  // namespace sluice::scenario
