// CrashLog: the last log lines of a point's child process, kept in memory the
// parent shares with it, so that a child that dies of a signal (SIGSEGV, the
// OOM killer, a timeout's SIGKILL) still reports what it logged last.
//
// The parent makes one CrashLog per child before fork() (an anonymous shared
// mapping of k_crash_log_bytes); the child installs it (install_in_child) and
// every log line of its world goes there as well (note_child_log, wired to
// SimRuntimeConfig::log_sink and HwWorldConfig::log); the parent reads
// last_lines() after the child ended abnormally. The buffer is a byte ring:
// older lines are overwritten, a line cut by the wrap is dropped on reading.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::scenario {

// Bytes of log text kept per child (a few hundred lines).
inline constexpr std::size_t k_crash_log_bytes = 64 * 1024;

class CrashLog {
 public:
  CrashLog();  // ok() false when the mapping could not be made
  ~CrashLog();
  CrashLog(const CrashLog&) = delete;
  CrashLog& operator=(const CrashLog&) = delete;

  bool ok() const { return ring_ != nullptr; }
  // Child side: this process's note_child_log writes here from now on.
  void install_in_child();
  void append(std::string_view line);
  // Parent side: the last `count` whole lines, oldest first.
  std::vector<std::string> last_lines(std::size_t count) const;

 private:
  struct Ring;
  Ring* ring_ = nullptr;
};

// Appends one line to the installed CrashLog of this process; nothing when
// none is (the parent, tests, a run outside a child). Thread-safe.
void note_child_log(std::string_view line);

}  // namespace sluice::scenario
