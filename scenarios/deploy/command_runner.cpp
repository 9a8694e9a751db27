#include "scenarios/deploy/command_runner.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

namespace sluice::emulate {
namespace {

using Clock = std::chrono::steady_clock;

int pidfd_open(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

int decode_wait_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const std::string& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(left);
}

// In the child after fork: only async-signal-safe calls until exec.
[[noreturn]] void exec_child(char** argv) {
  ::execvp(argv[0], argv);
  static constexpr char k_msg[] = "exec failed\n";
  [[maybe_unused]] const auto n = ::write(2, k_msg, sizeof k_msg - 1);
  ::_exit(127);
}

}  // namespace

std::filesystem::path this_program(const std::filesystem::path& fallback) {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? fallback : self;
}

Result<CommandOutput> run_command(const std::vector<std::string>& argv, std::uint32_t timeout_ms) {
  if (argv.empty()) return error(StatusCode::invalid_argument, "run_command: empty command");
  int out_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return error(StatusCode::io_error, "run_command: pipe failed");
  std::vector<char*> args = c_argv(argv);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return error(StatusCode::io_error, "run_command: fork failed: " + std::string(std::strerror(errno)));
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::dup2(out_pipe[1], 1);
    ::dup2(out_pipe[1], 2);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    exec_child(args.data());
  }
  ::close(out_pipe[1]);
  const int pidfd = pidfd_open(pid);
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  CommandOutput result;
  bool pipe_open = true;
  bool exited = false;
  bool timed_out = false;
  char buffer[4096];
  while (pipe_open || !exited) {
    pollfd fds[2] = {{pipe_open ? out_pipe[0] : -1, POLLIN, 0}, {exited ? -1 : pidfd, POLLIN, 0}};
    const int n = ::poll(fds, 2, remaining_ms(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      timed_out = true;
      break;
    }
    if (pipe_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      const ssize_t r = ::read(out_pipe[0], buffer, sizeof buffer);
      if (r <= 0) {
        pipe_open = false;
      } else if (result.output.size() < k_max_command_output_bytes) {
        result.output.append(buffer, static_cast<std::size_t>(r));
      }
    }
    if ((fds[1].revents & POLLIN) != 0 || pidfd < 0) exited = true;
    // The command has exited but a child of it still holds the pipe: stop
    // reading rather than wait for that grandchild.
    if (exited && pipe_open && (fds[0].revents & POLLIN) == 0) pipe_open = false;
  }
  ::close(out_pipe[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (pidfd >= 0) ::close(pidfd);
  if (timed_out) {
    return error(StatusCode::timed_out,
                 "`" + argv[0] + "` did not finish within " + std::to_string(timeout_ms) + " ms; killed");
  }
  result.exit_code = decode_wait_status(status);
  return result;
}

Status run_checked(const std::vector<std::string>& argv, std::uint32_t timeout_ms) {
  Result<CommandOutput> r = run_command(argv, timeout_ms);
  std::string line;
  for (const std::string& a : argv) line += (line.empty() ? "" : " ") + a;
  if (!r.ok()) return error(r.status().code(), line + ": " + r.status().message());
  if (r->exit_code != 0) {
    std::string out = r->output;
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return error(StatusCode::unavailable, "`" + line + "` exited " + std::to_string(r->exit_code) + ": " + out);
  }
  return ok_status();
}

ChildProcess::~ChildProcess() { stop(0); }

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), pidfd_(std::exchange(other.pidfd_, -1)), exit_code_(other.exit_code_) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    stop(0);
    pid_ = std::exchange(other.pid_, -1);
    pidfd_ = std::exchange(other.pidfd_, -1);
    exit_code_ = other.exit_code_;
  }
  return *this;
}

Result<ChildProcess> ChildProcess::spawn(const std::vector<std::string>& argv, const std::string& log_path,
                                         int bootstrap_fd) {
  if (argv.empty()) return error(StatusCode::invalid_argument, "spawn: empty command");
  const int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) return error(StatusCode::io_error, "spawn: cannot open log " + log_path);
  std::vector<char*> args = c_argv(argv);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log_fd);
    return error(StatusCode::io_error, "spawn: fork failed: " + std::string(std::strerror(errno)));
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(126);  // the launcher died before prctl took effect
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    if (bootstrap_fd >= 0) {
      if (bootstrap_fd == k_child_bootstrap_fd) {
        ::fcntl(bootstrap_fd, F_SETFD, 0);  // keep it across exec
      } else {
        ::dup2(bootstrap_fd, k_child_bootstrap_fd);  // dup2 clears FD_CLOEXEC on the copy
      }
    }
    exec_child(args.data());
  }
  ::close(log_fd);
  ChildProcess child;
  child.pid_ = pid;
  child.pidfd_ = pidfd_open(pid);
  return child;
}

Result<int> ChildProcess::wait(std::uint32_t timeout_ms) {
  if (exit_code_) return *exit_code_;
  if (pid_ <= 0) return error(StatusCode::invalid_argument, "wait: no process");
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exit_code_ = decode_wait_status(status);
      if (pidfd_ >= 0) ::close(pidfd_);
      pidfd_ = -1;
      return *exit_code_;
    }
    if (r < 0 && errno != EINTR) return error(StatusCode::io_error, "wait: waitpid failed");
    if (Clock::now() >= deadline || pidfd_ < 0) {
      return error(StatusCode::timed_out,
                   "process " + std::to_string(pid_) + " still running after " + std::to_string(timeout_ms) + " ms");
    }
    pollfd fd{pidfd_, POLLIN, 0};
    ::poll(&fd, 1, remaining_ms(deadline));
  }
}

void ChildProcess::stop(std::uint32_t grace_ms) {
  if (pid_ <= 0) return;
  if (!exit_code_) {
    ::kill(pid_, SIGTERM);
    if (!wait(grace_ms).ok()) {
      ::kill(pid_, SIGKILL);
      // SIGKILL cannot be ignored; bounded anyway so a D-state process cannot hang the launcher.
      if (!wait(5000).ok()) exit_code_ = -1;
    }
  }
  if (pidfd_ >= 0) ::close(pidfd_);
  pidfd_ = -1;
  pid_ = -1;
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::string out(k_max_command_output_bytes, '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  out.resize(static_cast<std::size_t>(in.gcount()));
  return out;
}

}  // namespace sluice::emulate
