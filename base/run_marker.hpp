// Run markers: a file in a run's work directory naming the process that owns
// it (pid and that process's start time, /proc/<pid>/stat field 22), so a
// later run can tell a directory left by a dead run (a SIGKILL, a power cut)
// from one in use, even after the pid was reused, and remove it.
//
// Used by `sluice emulate` (its /tmp/sluice-emu-* work directories; removed
// by `--cleanup-stale`) and by hardware runs (sluice-hw-run-* chunk-file
// directories; swept at the start of every `sluice run --backend hw`).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.hpp"

namespace sluice::base {

inline constexpr std::string_view k_run_marker_file = ".sluice-owner";

// Writes <dir>/.sluice-owner naming this process.
Status write_run_marker(const std::string& dir);

// True when <dir>/.sluice-owner names a process that no longer runs (no such
// pid, or a pid reused by a process that started at another time). False
// when the owner runs, or there is no readable marker (not ours to judge).
bool run_dir_is_stale(const std::string& dir);

// Removes every directory directly under `root` whose name starts with
// `name_prefix` and that run_dir_is_stale says is stale; returns their paths.
// log (may be empty) gets one line per directory removed or not removable.
std::vector<std::string> remove_stale_run_dirs(const std::string& root, std::string_view name_prefix,
                                               const std::function<void(std::string_view)>& log);

}  // namespace sluice::base
