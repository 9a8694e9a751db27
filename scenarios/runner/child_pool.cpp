#include "scenarios/runner/child_pool.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>

// gcov's flush entry point: present (libgcov) only in coverage builds.
extern "C" void __gcov_dump(void) __attribute__((weak));

namespace sluice::scenario {
namespace {

using Clock = std::chrono::steady_clock;

// First byte of a child's message: what follows is the payload or an error.
constexpr char k_frame_ok = 'R';
constexpr char k_frame_error = 'E';
// Longest the parent sleeps in poll() between progress reports.
constexpr int k_max_poll_ms = 1000;

bool write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

[[noreturn]] void child_main(int fd, std::size_t index, const ChildPool::Body& body) {
  std::string frame;
  try {
    frame = std::string(1, k_frame_ok) + body(index);
  } catch (const std::exception& e) {
    frame = std::string(1, k_frame_error) + "the point threw: " + e.what();
  } catch (...) {
    frame = std::string(1, k_frame_error) + "the point threw a non-standard exception";
  }
  const bool sent = write_all(fd, frame.data(), frame.size());
  ::close(fd);
  std::fflush(stdout);
  std::fflush(stderr);
  if (__gcov_dump != nullptr) __gcov_dump();
  ::_exit(sent ? 0 : 3);
}

struct Running {
  std::size_t index = 0;
  pid_t pid = -1;
  int fd = -1;
  Clock::time_point deadline;
  bool has_deadline = false;
  std::string received;
  bool too_much = false;
};

std::string wait_status_text(int wstatus) {
  if (WIFSIGNALED(wstatus)) {
    const int sig = WTERMSIG(wstatus);
    return "the point's child process died of signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) != 0) {
    return "the point's child process exited with status " + std::to_string(WEXITSTATUS(wstatus));
  }
  return "";
}

int reap(pid_t pid) {
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  return wstatus;
}

}  // namespace

Result<std::vector<ChildJobResult>> ChildPool::run(std::size_t count, const Body& body, const ChildPoolOptions& options) {
  std::vector<ChildJobResult> results(count);
  const std::uint32_t jobs = std::max<std::uint32_t>(1, options.jobs);
  const Clock::time_point started = Clock::now();
  std::vector<Running> running;
  std::size_t next = 0, done = 0, failed = 0;
  Clock::time_point last_progress = started;

  auto report = [&] {
    if (!options.progress) return;
    ChildPoolProgress p;
    p.jobs = count;
    p.done = done;
    p.failed = failed;
    p.running = running.size();
    p.wall_s = std::chrono::duration<double>(Clock::now() - started).count();
    options.progress(p);
    last_progress = Clock::now();
  };
  auto end_job = [&](Running& r, ChildJobResult result) {
    if (!result.ok) ++failed;
    ++done;
    if (options.on_done) options.on_done(r.index, result);
    results[r.index] = std::move(result);
  };
  auto kill_all = [&] {
    for (Running& r : running) {
      ::kill(r.pid, SIGKILL);
      ::close(r.fd);
      reap(r.pid);
    }
    running.clear();
  };

  while (done < count) {
    while (running.size() < jobs && next < count) {
      int fds[2];
      if (::pipe2(fds, O_CLOEXEC) != 0) {
        const std::string why = std::string("runner: pipe: ") + std::strerror(errno);
        kill_all();
        return error(StatusCode::io_error, why);
      }
      std::fflush(stdout);
      std::fflush(stderr);
      const pid_t pid = ::fork();
      if (pid < 0) {
        const std::string why = std::string("runner: fork: ") + std::strerror(errno);
        ::close(fds[0]);
        ::close(fds[1]);
        kill_all();
        return error(StatusCode::io_error, why);
      }
      if (pid == 0) {
        ::close(fds[0]);
        for (const Running& r : running) ::close(r.fd);  // the siblings' pipes are not this child's
        child_main(fds[1], next, body);
      }
      ::close(fds[1]);
      Running r;
      r.index = next++;
      r.pid = pid;
      r.fd = fds[0];
      if (options.timeout_s > 0) {
        r.has_deadline = true;
        r.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.timeout_s));
      }
      running.push_back(std::move(r));
    }

    // Sleep until data, a deadline or the next progress report.
    const Clock::time_point now = Clock::now();
    auto wake = now + std::chrono::milliseconds(k_max_poll_ms);
    if (options.progress) {
      wake = std::min(wake, last_progress + std::chrono::duration_cast<Clock::duration>(
                                                std::chrono::duration<double>(options.progress_interval_s)));
    }
    for (const Running& r : running) {
      if (r.has_deadline) wake = std::min(wake, r.deadline);
    }
    const auto wait_ms = std::max<std::int64_t>(
        0, std::chrono::duration_cast<std::chrono::milliseconds>(wake - now).count() + 1);
    std::vector<pollfd> pfds;
    for (const Running& r : running) pfds.push_back(pollfd{r.fd, POLLIN, 0});
    const int n = ::poll(pfds.data(), pfds.size(), static_cast<int>(wait_ms));
    if (n < 0 && errno != EINTR) {
      const std::string why = std::string("runner: poll: ") + std::strerror(errno);
      kill_all();
      return error(StatusCode::io_error, why);
    }

    std::vector<Running> still;
    for (std::size_t i = 0; i < running.size(); ++i) {
      Running& r = running[i];
      bool eof = false;
      if (n > 0 && (pfds[i].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
        char buffer[1 << 16];
        const ssize_t got = ::read(r.fd, buffer, sizeof buffer);
        if (got > 0) {
          if (r.received.size() + static_cast<std::size_t>(got) > options.max_payload_bytes + 1) {
            r.too_much = true;  // keep draining so the child can finish
          } else {
            r.received.append(buffer, static_cast<std::size_t>(got));
          }
        } else if (got == 0 || errno != EINTR) {
          eof = true;
        }
      }
      if (eof) {
        ::close(r.fd);
        const std::string died = wait_status_text(reap(r.pid));
        ChildJobResult result;
        if (!died.empty()) {
          result.error = died;
        } else if (r.too_much) {
          result.error = "the point's result is larger than " + std::to_string(options.max_payload_bytes) +
                         " bytes (k_max_point_result_bytes)";
        } else if (r.received.empty()) {
          result.error = "the point's child process sent no result";
        } else if (r.received[0] == k_frame_error) {
          result.error = r.received.substr(1);
        } else {
          result.ok = true;
          result.payload = r.received.substr(1);
        }
        end_job(r, std::move(result));
        report();
        continue;
      }
      if (r.has_deadline && Clock::now() >= r.deadline) {
        ::kill(r.pid, SIGKILL);
        ::close(r.fd);
        reap(r.pid);
        ChildJobResult result;
        result.error = "the point ran past its wall-clock limit of " + std::to_string(options.timeout_s) +
                       " s (RunnerOptions::point_timeout_s) and was killed";
        end_job(r, std::move(result));
        report();
        continue;
      }
      still.push_back(std::move(r));
    }
    running = std::move(still);
    if (options.progress && Clock::now() - last_progress >=
                                std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(options.progress_interval_s))) {
      report();
    }
  }
  return results;
}

}  // namespace sluice::scenario
