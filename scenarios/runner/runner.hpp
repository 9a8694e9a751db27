// The runner: ScenarioSpec points -> deployed services on an Env -> RunResults.
//
// run_points() is what the CLI binds ScriptOptions::run to (lua_script.hpp).
//
// Sim: every point runs in its own child process (SimGrid allows one engine
// per process and cannot reset it; sim/sim_process.hpp says why), up to
// RunnerOptions::jobs at once. The child deploys the point on a SimRuntime
// (sim_deployment.hpp), runs it and sends its RunResult back as JSON over a
// pipe (result_codec.hpp). A child that fails, crashes, is killed or runs past
// point_timeout_s becomes a RunResult with ok = false and the reason; it
// never hangs the caller and never fails the other points.
//
// Hw: the same, with each point on hw/'s HwWorld in its child
// (hw_point_run.hpp: every service a thread, loopback TCP, chunk files in a
// temporary directory); points still run up to `jobs` at once, so give hw
// runs jobs = 1 when they are measurements.
// Emulate: not here (the runner does not build namespaces): `sluice run`
// hands emulate points to scenarios/netns/emulated_point_run.hpp; points
// given to run_points come back ok = false saying so.
// run_points itself fails only for problems of the whole call (no child
// process could be made, too many points) and when it was asked to stop
// (RunnerOptions::stop_requested: unavailable; the points that finished
// before went to point_done).
//
// Results come back in the order of the points, each with its spec and the
// backend it ran on.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.hpp"
#include "scenarios/runner/hw_point_run.hpp"
#include "scenarios/runner/sweep_schedule.hpp"
#include "scenarios/scenario_spec.hpp"

namespace sluice::scenario {

// Limits (RunnerOptions defaults).
// One point's wall-clock limit: a full-scale seed study takes minutes; an
// hour means a runaway point, not a slow one.
inline constexpr double k_default_point_timeout_s = 3600;
// Parallel points at most, whatever jobs asks (each child is one process).
inline constexpr std::uint32_t k_max_runner_jobs = 256;
// Points in one call.
inline constexpr std::size_t k_max_points = 1'000'000;
// Bytes of one child's JSON result (sim/sim_process.hpp's limit).
inline constexpr std::size_t k_max_point_result_bytes = std::size_t{256} << 20;
// Event budget for the servers' registration with mgmt before any workload.
inline constexpr std::uint64_t k_setup_max_events = 10'000'000;
// Log lines of a run kept in RunResult::log_tail.
inline constexpr std::size_t k_log_tail_lines = 20;

// Progress of a run_points call, reported from the calling process.
struct RunnerProgress {
  std::size_t points = 0;                   // in the call
  std::size_t done = 0;                     // finished (ok or not)
  std::size_t failed = 0;                   // finished with ok = false
  std::size_t running = 0;                  // child processes now
  double wall_s = 0;                        // since run_points was called
  std::vector<std::size_t> running_points;  // indices (into the call's points) of the points running now
  double simulated_s_done = 0;              // simulated time of the finished points together (sim)
};

// Runs one point in this process and returns its result (ok = false with the
// reason for a point that failed). Sim: this process must not have run a
// simulation before. Exposed for tests and as RunnerOptions::run_point's default.
using RunPointFn = std::function<RunResult(const ScenarioSpec& spec, Backend backend)>;

struct RunnerOptions {
  std::uint32_t jobs = 0;                                    // parallel points; 0 = the number of cores
  double point_timeout_s = k_default_point_timeout_s;        // wall-clock limit per point; <= 0: none
  std::vector<std::string> profile_dirs = {"sim/profiles"};  // where sim profiles other than "default" are looked up
  // Called from the calling process when a point finishes and about every
  // progress_interval_s while points run; may be empty.
  std::function<void(const RunnerProgress&)> progress;
  double progress_interval_s = 0.25;
  // Called from the calling process as each point finishes (in the order
  // they finish), with its index in `points` and its result; may be empty.
  std::function<void(std::size_t index, const RunResult& result)> point_done;
  // Asked from the calling process while points run (ChildPool's contract):
  // true stops the call, killing the running points; run_points then gives
  // unavailable. May be empty.
  std::function<bool()> stop_requested;
  HwRunOptions hw;  // Backend::hw: transport, storage backend, temp dir
  // What a child runs (tests substitute a crashing or hanging body); empty: run_point.
  RunPointFn run_point;
  // The points spread over mpirun/srun ranks (sweep_schedule.hpp); null: all
  // here. point_done and progress then see every rank's points on rank 0 and
  // this rank's own elsewhere; the results are every point's on every rank.
  SweepSchedule* sweep = nullptr;
};

std::string_view to_string(Backend backend);  // "sim", "hw", "emulate", "cluster"
Result<Backend> parse_backend(std::string_view text);
std::string_view to_string(GdsMode mode);  // "on", "off", "auto"

// Runs one point here (see RunPointFn). Never throws.
RunResult run_point(const ScenarioSpec& spec, Backend backend, const RunnerOptions& options = {});

// Runs every point (see the header comment). Errors only for the call as a
// whole (invalid_argument: too many points; io_error: fork/pipe failed before
// any point ran; unavailable: stopped by stop_requested).
Result<std::vector<RunResult>> run_points(const std::vector<ScenarioSpec>& points, Backend backend,
                                          const RunnerOptions& options = {});

}  // namespace sluice::scenario
