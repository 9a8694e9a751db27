// ChildPool: runs N jobs, each in its own forked child process, up to `jobs`
// at once, each under a wall-clock limit, and collects what each sent back.
//
// Why processes: SimGrid allows one engine per process and cannot reset it
// (sim/sim_process.hpp); a process is also the unit that can be killed when a
// point runs away, and whose crash cannot take the caller down.
//
// Contract:
// - body(index) runs in the child and returns the bytes to send back (the
//   child then ends with _exit after flushing stdio and, in coverage builds,
//   gcov's counters); an exception it throws comes back as the job's error.
// - A child that crashes, is killed by a signal, exits early, sends more than
//   max_payload_bytes or runs past timeout_s (then SIGKILL) gives a job with
//   ok = false and the reason, and the last lines its world logged (each
//   child gets a CrashLog before fork). Other jobs go on.
// - A child dies with its parent (PR_SET_PDEATHSIG, SIGKILL): a killed
//   `sluice run` leaves no point running (and writing) behind it.
// - run() blocks until every job is done; it fails as a whole only when no
//   pipe or child process could be made (io_error), after ending the children
//   it started. The caller must hold no other threads (fork copies only the
//   calling one).
// - progress (if set) is called from the calling process when a job ends and
//   about every progress_interval_s.
// - stop_requested (if set) is asked from the calling process before children
//   start and whenever its wait wakes (a signal, a job ending, a progress
//   report; at least every k_max_poll_ms): once it says true, every running
//   child is killed (SIGKILL) and reaped, a job whose child had already sent
//   its whole result and exited still ends ok (on_done), the others are
//   dropped, and run() gives unavailable. The caller's SIGINT/SIGTERM handler
//   typically sets what it reads; children start with SIGINT and SIGTERM at
//   their defaults, so a Ctrl-C at the terminal (sent to the whole process
//   group) ends them too.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/common/status.hpp"

namespace sluice::scenario {

struct ChildJobResult {
  bool ok = false;
  std::string payload;  // what body returned (ok)
  std::string error;    // why not ok
  // Not ok because the child died (a signal, an exit without a result, the
  // wall-clock limit): the last lines its world logged (crash_log.hpp).
  std::vector<std::string> log_tail;
};

struct ChildPoolProgress {
  std::size_t jobs = 0;
  std::size_t done = 0;
  std::size_t failed = 0;
  std::size_t running = 0;
  double wall_s = 0;
  std::vector<std::size_t> running_jobs;  // the indices of the jobs running now, in the order they started
};

// Where the jobs of a pool spread over several processes come from (a sweep
// over mpirun/srun ranks: sweep_schedule.hpp). Without one, a pool runs jobs
// 0..count-1 in order. With one, it starts the jobs next() gives while it has
// room, and it ends when every job it started has ended and all_done() says
// so; jobs that ended elsewhere come back from on_wake() and count as done
// (on_done and the result vector see them like the pool's own).
class JobSource {
 public:
  virtual ~JobSource() = default;
  // The next job to run here; nullopt: none is left for this process (then
  // next() is not asked again in this run).
  virtual std::optional<std::size_t> next() = 0;
  // A job this pool ran ended (called before on_done).
  virtual void finished_here(std::size_t index, const ChildJobResult& result) = 0;
  // An fd the pool's wait also wakes on (-1: none), and what to do when it
  // is readable: the jobs that ended elsewhere meanwhile, with their results.
  virtual int wake_fd() const = 0;
  virtual std::vector<std::pair<std::size_t, ChildJobResult>> on_wake() = 0;
  // Every job of the run has ended, here or elsewhere.
  virtual bool all_done() const = 0;
  // Jobs running in other processes now (for progress).
  virtual std::size_t running_elsewhere() const = 0;
  // An fd of this process that the pool's children close first (the
  // relay's socket: a point's process must not hold it open); -1: none.
  virtual int fd_children_close() const { return -1; }
};

struct ChildPoolOptions {
  std::uint32_t jobs = 1;  // children at once, >= 1
  double timeout_s = 0;    // per job; <= 0: none
  std::size_t max_payload_bytes = std::size_t{256} << 20;
  std::size_t log_tail_lines = 20;  // ChildJobResult::log_tail of a child that died
  double progress_interval_s = 0.25;
  std::function<void(const ChildPoolProgress&)> progress;
  // Called in the parent when job `index` ended, with its result (may be empty).
  std::function<void(std::size_t index, const ChildJobResult&)> on_done;
  // True: stop now (see the contract above); may be empty.
  std::function<bool()> stop_requested;
  // Jobs spread over several processes (JobSource); null: all here, in order.
  JobSource* source = nullptr;
};

class ChildPool {
 public:
  using Body = std::function<std::string(std::size_t index)>;
  static Result<std::vector<ChildJobResult>> run(std::size_t count, const Body& body, const ChildPoolOptions& options);
};

}  // namespace sluice::scenario
