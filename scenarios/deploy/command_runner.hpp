// Running the system's commands (`ip`, `tc`, `iperf3`, the node processes)
// from the emulation launcher: fork + execvp, no shell, every wait bounded.
//
// run_command() waits for the command (a pidfd polled with a deadline, so no
// sleep loop); past the deadline the command is killed (SIGKILL) and reaped,
// and the result is timed_out. Output (stdout and stderr together) is kept up
// to k_max_command_output_bytes.
//
// ChildProcess is a long-running child (a node process): its stdout/stderr go
// to a log file, `bootstrap_fd` (a socket end) is passed as fd 3, and it gets
// SIGKILL should the launcher die (PR_SET_PDEATHSIG), so no orphan outlives a
// killed launcher.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/common/status.hpp"

namespace sluice::emulate {

inline constexpr std::size_t k_max_command_output_bytes = 1 << 20;
inline constexpr int k_child_bootstrap_fd = 3;

struct CommandOutput {
  int exit_code = -1;  // the exit status, or 128 + signal
  std::string output;
};

// io_error when the command cannot be started, timed_out past timeout_ms.
Result<CommandOutput> run_command(const std::vector<std::string>& argv, std::uint32_t timeout_ms);

// This program's path (/proc/self/exe), or `fallback` where /proc cannot tell:
// the node processes, launch agents and relays it starts are itself.
std::filesystem::path this_program(const std::filesystem::path& fallback);

// run_command, then unavailable naming the command and its output unless it exited 0.
Status run_checked(const std::vector<std::string>& argv, std::uint32_t timeout_ms);

class ChildProcess {
 public:
  ChildProcess() = default;
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;

  // bootstrap_fd < 0: none passed.
  static Result<ChildProcess> spawn(const std::vector<std::string>& argv, const std::string& log_path,
                                    int bootstrap_fd);

  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0 && !exit_code_.has_value(); }
  // Waits up to timeout_ms for the exit; the exit code, or timed_out.
  Result<int> wait(std::uint32_t timeout_ms);
  // SIGTERM, up to grace_ms for the exit, then SIGKILL and reap. Idempotent.
  void stop(std::uint32_t grace_ms);

 private:
  pid_t pid_ = -1;
  int pidfd_ = -1;
  std::optional<int> exit_code_;
};

// Reads the whole file (up to k_max_command_output_bytes) or "".
std::string read_text_file(const std::string& path);

}  // namespace sluice::emulate
