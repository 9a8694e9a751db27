#include "sim/sim_process.hpp"

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/fd_io.hpp"

#ifdef SLUICE_COVERAGE_BUILD
// gcov's flush entry point (libgcov, linked in coverage builds).
extern "C" void __gcov_dump(void);
#endif

namespace sluice::sim {
namespace {

[[noreturn]] void child_exit(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
#ifdef SLUICE_COVERAGE_BUILD
  __gcov_dump();
#endif
  ::_exit(code);
}

}  // namespace

Result<std::string> run_in_child(const std::function<Result<std::string>()>& body) {
  int fds[2];
  if (::pipe(fds) != 0) return error(StatusCode::io_error, std::string("run_in_child: pipe: ") + std::strerror(errno));
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return error(StatusCode::io_error, std::string("run_in_child: fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    Result<std::string> r = body();
    // Frame: 1 byte status code, 8 bytes length, then the result or the error text.
    const std::string& payload = r.ok() ? r.value() : r.status().message();
    const auto code = static_cast<unsigned char>(r.ok() ? StatusCode::ok : r.status().code());
    const std::uint64_t length = payload.size();
    const bool sent = write_exact(fds[1], &code, 1) && write_exact(fds[1], &length, sizeof length) &&
                      write_exact(fds[1], payload.data(), payload.size());
    ::close(fds[1]);
    child_exit(sent ? 0 : 3);
  }
  ::close(fds[1]);
  std::string received;
  char buffer[1 << 16];
  bool too_much = false;
  for (;;) {
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (received.size() + static_cast<std::size_t>(n) > k_max_child_result_bytes + 9) {
      too_much = true;
      continue;  // drain so the child can finish
    }
    received.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(wstatus)) {
    return error(StatusCode::internal, "simulation child process died of signal " + std::to_string(WTERMSIG(wstatus)) +
                                           " (" + strsignal(WTERMSIG(wstatus)) + ")");
  }
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return error(StatusCode::internal,
                 "simulation child process exited with status " + std::to_string(WEXITSTATUS(wstatus)));
  }
  if (too_much) return error(StatusCode::no_space, "simulation child result exceeds k_max_child_result_bytes");
  if (received.size() < 9) return error(StatusCode::internal, "simulation child sent no result");
  const auto code = static_cast<StatusCode>(static_cast<unsigned char>(received[0]));
  std::uint64_t length = 0;
  std::memcpy(&length, received.data() + 1, sizeof length);
  if (length != received.size() - 9) return error(StatusCode::internal, "simulation child sent a truncated result");
  std::string payload = received.substr(9);
  if (code != StatusCode::ok) return error(code, payload);
  return payload;
}

}  // namespace sluice::sim
