// ResultsJournal: the results files of a `sluice run` kept up to date while
// its script runs (issue 25 item 7), so that a run that is stopped (Ctrl-C,
// SIGTERM, a crash of the script) leaves its finished points on disk,
// results.json marked "complete": false.
//
// Use, from the calling process only (not thread-safe):
//   begin_call() before each call to run_points (one per sl.run and backend);
//   point_done(index, result) as each of its points finishes
//     (RunnerOptions::point_done); end_call(ok) when the call returned;
//   flush_if_due() now and then (the progress callback);
//   write_final(...) when the script ended, write_stopped() when it was stopped.
// Each rewrite writes every finished point so far (calls in order, points of
// the running call in index order) with write_results (temporary file and
// rename). Rewrites are at most one per rewrite_interval_s, so that a sweep
// of many short points is not slowed by writing O(points^2) bytes; a point
// that finishes inside the interval is written by the next rewrite
// (flush_if_due, the next point, or write_stopped).
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.hpp"
#include "scenarios/runner/results_writer.hpp"
#include "scenarios/scenario_spec.hpp"

namespace sluice::scenario {

// Shortest time between two rewrites of the results files while points finish.
inline constexpr double k_results_rewrite_interval_s = 2.0;

class ResultsJournal {
 public:
  explicit ResultsJournal(std::string dir, double rewrite_interval_s = k_results_rewrite_interval_s);

  // A call to run_points starts. The first call also writes the files (no run yet),
  // so that files of an earlier run in the same folder do not pass for this one's.
  Status begin_call(std::string_view scenario);
  // Point `index` of the running call finished; rewrites the files when due.
  Status point_done(std::size_t index, const RunResult& result);
  // The running call returned: `ok` (its points are final) or not (what
  // finished stays, as when stopped).
  void end_call(bool ok);
  // Rewrites the files if a point finished since the last rewrite and the interval has passed.
  Status flush_if_due();

  // Every finished point (see the header comment).
  std::vector<RunResult> finished() const;
  std::size_t finished_count() const { return earlier_.size() + current_.size(); }

  // The files of a run that was stopped: every finished point, complete = false.
  Status write_stopped();
  // The files of a script that ended: its runs and findings, complete = true.
  Status write_final(std::string_view scenario, const std::vector<RunResult>& runs, const ScriptFindings& findings);

 private:
  using Clock = std::chrono::steady_clock;
  Status rewrite();

  const std::string dir_;
  const Clock::duration rewrite_interval_;
  std::string scenario_;
  std::vector<RunResult> earlier_;            // points of the calls that returned
  std::map<std::size_t, RunResult> current_;  // finished points of the running call, by index
  bool written_ = false;                      // the files were written at least once
  bool dirty_ = false;                        // a point finished since the last rewrite
  Clock::time_point last_write_{};
};

}  // namespace sluice::scenario
