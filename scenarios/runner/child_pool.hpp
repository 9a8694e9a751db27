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
//   ok = false and the reason. Other jobs go on.
// - run() blocks until every job is done; it fails as a whole only when no
//   pipe or child process could be made (io_error), after ending the children
//   it started. The caller must hold no other threads (fork copies only the
//   calling one).
// - progress (if set) is called from the calling process when a job ends and
//   about every progress_interval_s.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/common/status.hpp"

namespace sluice::scenario {

struct ChildJobResult {
  bool ok = false;
  std::string payload;  // what body returned (ok)
  std::string error;    // why not ok
};

struct ChildPoolProgress {
  std::size_t jobs = 0;
  std::size_t done = 0;
  std::size_t failed = 0;
  std::size_t running = 0;
  double wall_s = 0;
};

struct ChildPoolOptions {
  std::uint32_t jobs = 1;  // children at once, >= 1
  double timeout_s = 0;    // per job; <= 0: none
  std::size_t max_payload_bytes = std::size_t{256} << 20;
  double progress_interval_s = 0.25;
  std::function<void(const ChildPoolProgress&)> progress;
  // Called in the parent when job `index` ended, with its result (may be empty).
  std::function<void(std::size_t index, const ChildJobResult&)> on_done;
};

class ChildPool {
 public:
  using Body = std::function<std::string(std::size_t index)>;
  static Result<std::vector<ChildJobResult>> run(std::size_t count, const Body& body, const ChildPoolOptions& options);
};

}  // namespace sluice::scenario
