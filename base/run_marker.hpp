// Run markers: a file in a run's work directory naming the process that owns
// it (pid and that process's start time, /proc/<pid>/stat field 22), so a
// later run can tell a directory left by a dead run (a SIGKILL, a power cut)
// from one in use, even after the pid was reused, and remove it.
//
// A directory kept on purpose (`--keep`) is marked kept: no sweep removes it,
// though its owner is gone; it stays until the user removes it.
//
// Used by `sluice emulate` and `sluice mount` (their /tmp/sluice-emu-* work
// directories) and by hardware runs (sluice-hw-run-* chunk-file directories);
// swept at the start of every command that makes such things
// (scenarios/netns/dead_runs.hpp).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/common/status.hpp"

namespace sluice::base {

inline constexpr std::string_view k_run_marker_file = ".sluice-owner";

// Writes <dir>/.sluice-owner naming this process.
Status write_run_marker(const std::string& dir);

// Rewrites <dir>/.sluice-owner as kept: run_dir_is_stale is false from then on.
Status mark_run_kept(const std::string& dir);

// True when <dir>/.sluice-owner names a process that no longer runs (no such
// pid, or a pid reused by a process that started at another time). False
// when the owner runs, the directory is marked kept, or there is no readable
// marker (not ours to judge).
bool run_dir_is_stale(const std::string& dir);

// Whether a process with this pid runs (a zombie, exited but not yet reaped, does not).
// Alone it cannot tell a reused pid: prefer a marker where there is one.
bool process_runs(long pid);

// A run's directory, marked as this process's (write_run_marker) by whoever
// made it. When this goes out of scope the directory is removed, or marked
// kept when `keep` was given or keep() called. An empty path: nothing to do.
class RunDir {
 public:
  RunDir(std::string path, bool keep) : path_(std::move(path)), keep_(keep) {}
  ~RunDir() { finish(); }
  RunDir(const RunDir&) = delete;
  RunDir& operator=(const RunDir&) = delete;
  const std::string& path() const { return path_; }
  void keep() { keep_ = true; }
  // Removes or marks the directory now (once).
  void finish();

 private:
  std::string path_;
  bool keep_ = false;
};

// Removes every directory directly under `root` whose name starts with
// `name_prefix` and that run_dir_is_stale says is stale; returns their paths.
// log (may be empty) gets one line per directory removed or not removable.
std::vector<std::string> remove_stale_run_dirs(const std::string& root, std::string_view name_prefix,
                                               const std::function<void(std::string_view)>& log);

}  // namespace sluice::base
