#include "scenarios/runner/child_pool.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>

#include "base/fd_io.hpp"
#include "core/common/assert.hpp"
#include "scenarios/runner/crash_log.hpp"

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
// On a stop: how long the parent reads what a killed child had sent before
// it gives up on the pipe (a grandchild may still hold its write end).
constexpr int k_stop_drain_ms = 2000;

[[noreturn]] void child_main(int fd, std::size_t index, const ChildPool::Body& body, pid_t parent, CrashLog& log) {
  // Dies with its parent, even one killed with SIGKILL (checked once more
  // after the call, in case the parent died before it).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(4);
  log.install_in_child();
  // The parent's handlers (which only note a stop) are not the child's: a
  // Ctrl-C at the terminal, or a SIGTERM sent to the child, ends it.
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
  std::string frame;
  try {
    frame = std::string(1, k_frame_ok) + body(index);
  } catch (const std::exception& e) {
    frame = std::string(1, k_frame_error) + "the point threw: " + e.what();
  } catch (...) {
    frame = std::string(1, k_frame_error) + "the point threw a non-standard exception";
  }
  const bool sent = write_exact(fd, frame.data(), frame.size());
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
  std::shared_ptr<CrashLog> log;  // what the child logged, readable after it died
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

// The result of a job whose child ended (its pipe at end of file): `died` (wait_status_text) when not empty,
// else what the child sent.
ChildJobResult finished_result(const Running& r, const std::string& died, const ChildPoolOptions& options) {
  const std::size_t max_payload_bytes = options.max_payload_bytes;
  ChildJobResult result;
  if (!died.empty()) {
    result.error = died;
    if (r.log) result.log_tail = r.log->last_lines(options.log_tail_lines);
    if (!result.log_tail.empty()) result.error += "; its last log line: " + result.log_tail.back();
  } else if (r.too_much) {
    result.error =
        "the point's result is larger than " + std::to_string(max_payload_bytes) + " bytes (k_max_point_result_bytes)";
  } else if (r.received.empty()) {
    result.error = "the point's child process sent no result";
  } else if (r.received[0] == k_frame_error) {
    result.error = r.received.substr(1);
  } else {
    result.ok = true;
    result.payload = r.received.substr(1);
  }
  return result;
}

// One ChildPool::run: the children running, the jobs started and done, their results.
class PoolRun {
 public:
  PoolRun(std::size_t count, const ChildPool::Body& body, const ChildPoolOptions& options);
  Result<std::vector<ChildJobResult>> run();

 private:
  // Every job is done (with a source: every job started here ended, and the source says the rest did).
  bool finished() const;
  // The job to start next (in order, or the source's); nullopt: none.
  std::optional<std::size_t> take_next();
  // A job that ran in another process ended (JobSource::on_wake).
  void end_elsewhere(std::size_t index, ChildJobResult result);
  Clock::duration progress_interval() const;
  void report();
  void end_job(Running& r, ChildJobResult result);
  // Kills and reaps every running child, then gives the io_error `why`.
  Status abandon(const std::string& why);
  bool stop_requested() const { return options_.stop_requested && options_.stop_requested(); }
  // After a stop request: kills every running child; ends the jobs whose child had sent its whole result and
  // exited, drops the others; gives unavailable.
  Status stop();
  // Reads child r's pipe until end of file or k_stop_drain_ms.
  void drain(Running& r);
  // Forks children until `jobs` run or every job has started.
  Status start_children();
  // Sleeps in poll() on the children's pipes (`pfds`, in running_ order) until data, a deadline or the next
  // progress report; poll's count.
  Result<int> wait_for_children(std::vector<pollfd>& pfds);
  // After poll() gave `n`: reads the children's pipes and ends the jobs whose child finished or ran past its
  // deadline.
  void collect(int n, const std::vector<pollfd>& pfds);
  // Reads what child r sent; true at end of file (the child is done).
  bool read_from(Running& r);
  void end_finished(Running& r);
  void end_timed_out(Running& r);

  const std::size_t count_;
  const ChildPool::Body& body_;
  const ChildPoolOptions& options_;
  std::vector<ChildJobResult> results_;
  const std::uint32_t jobs_;
  const Clock::time_point started_;
  Clock::time_point last_progress_;
  std::vector<Running> running_;
  std::size_t next_ = 0, done_ = 0, failed_ = 0;
  JobSource* const source_;
  bool source_exhausted_ = false;
};

PoolRun::PoolRun(std::size_t count, const ChildPool::Body& body, const ChildPoolOptions& options)
    : count_(count),
      body_(body),
      options_(options),
      results_(count),
      jobs_(std::max<std::uint32_t>(1, options.jobs)),
      started_(Clock::now()),
      last_progress_(started_),
      source_(options.source) {}

Result<std::vector<ChildJobResult>> PoolRun::run() {
  while (!finished()) {
    if (stop_requested()) return stop();
    if (Status st = start_children(); !st.ok()) return st;
    if (finished()) break;  // a source with nothing left for this process
    std::vector<pollfd> pfds;
    Result<int> n = wait_for_children(pfds);
    if (!n.ok()) return n.status();
    // Before collect: a child a terminal's Ctrl-C ended is not a failed point.
    if (stop_requested()) return stop();
    collect(*n, pfds);
    if (source_ != nullptr && n.value() > 0 && (pfds.back().revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      for (auto& [index, result] : source_->on_wake()) end_elsewhere(index, std::move(result));
    }
    if (options_.progress && Clock::now() - last_progress_ >= progress_interval()) report();
  }
  return std::move(results_);
}

bool PoolRun::finished() const {
  if (source_ == nullptr) return done_ == count_;
  return running_.empty() && source_exhausted_ && source_->all_done();
}

std::optional<std::size_t> PoolRun::take_next() {
  if (source_ == nullptr) return next_ < count_ ? std::optional<std::size_t>(next_++) : std::nullopt;
  if (source_exhausted_) return std::nullopt;
  std::optional<std::size_t> index = source_->next();
  if (!index) {
    source_exhausted_ = true;
  } else {
    SLUICE_ASSERT_MSG(*index < count_,
                      "a job source gave job " + std::to_string(*index) + " of " + std::to_string(count_));
  }
  return index;
}

void PoolRun::end_elsewhere(std::size_t index, ChildJobResult result) {
  SLUICE_ASSERT_MSG(index < count_,
                    "a job source ended job " + std::to_string(index) + " of " + std::to_string(count_));
  if (!result.ok) ++failed_;
  ++done_;
  if (options_.on_done) options_.on_done(index, result);
  results_[index] = std::move(result);
  report();
}

Clock::duration PoolRun::progress_interval() const {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options_.progress_interval_s));
}

void PoolRun::report() {
  if (!options_.progress) return;
  ChildPoolProgress p;
  p.jobs = count_;
  p.done = done_;
  p.failed = failed_;
  p.running = running_.size() + (source_ != nullptr ? source_->running_elsewhere() : 0);
  p.wall_s = std::chrono::duration<double>(Clock::now() - started_).count();
  for (const Running& r : running_) p.running_jobs.push_back(r.index);
  options_.progress(p);
  last_progress_ = Clock::now();
}

void PoolRun::end_job(Running& r, ChildJobResult result) {
  if (source_ != nullptr) source_->finished_here(r.index, result);
  if (!result.ok) ++failed_;
  ++done_;
  if (options_.on_done) options_.on_done(r.index, result);
  results_[r.index] = std::move(result);
}

Status PoolRun::abandon(const std::string& why) {
  for (Running& r : running_) {
    ::kill(r.pid, SIGKILL);
    ::close(r.fd);
    reap(r.pid);
  }
  running_.clear();
  return error(StatusCode::io_error, why);
}

Status PoolRun::stop() {
  for (const Running& r : running_) ::kill(r.pid, SIGKILL);
  const std::size_t stopped = running_.size();
  std::size_t kept = 0;
  for (Running& r : running_) {
    drain(r);
    ::close(r.fd);
    const int wstatus = reap(r.pid);
    if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) continue;  // killed before it finished
    ChildJobResult result = finished_result(r, "", options_);
    if (!result.ok) continue;
    end_job(r, std::move(result));
    ++kept;
  }
  running_.clear();
  return error(StatusCode::unavailable, "runner: stopped on request with " + std::to_string(count_ - done_) + " of " +
                                            std::to_string(count_) + " points unfinished (" +
                                            std::to_string(stopped - kept) + " killed while running)");
}

void PoolRun::drain(Running& r) {
  const Clock::time_point give_up = Clock::now() + std::chrono::milliseconds(k_stop_drain_ms);
  for (;;) {
    const auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(give_up - Clock::now()).count();
    if (left_ms <= 0) return;
    pollfd pfd{r.fd, POLLIN, 0};
    const int n = ::poll(&pfd, 1, static_cast<int>(left_ms));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    if (read_from(r)) return;
  }
}

Status PoolRun::start_children() {
  while (running_.size() < jobs_) {
    const std::optional<std::size_t> index = take_next();
    if (!index) break;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return abandon(std::string("runner: pipe: ") + std::strerror(errno));
    std::fflush(stdout);
    std::fflush(stderr);
    auto log = std::make_shared<CrashLog>();
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
      const std::string why = std::string("runner: fork: ") + std::strerror(errno);
      ::close(fds[0]);
      ::close(fds[1]);
      return abandon(why);
    }
    if (pid == 0) {
      ::close(fds[0]);
      for (const Running& r : running_) ::close(r.fd);  // the siblings' pipes are not this child's
      if (source_ != nullptr && source_->fd_children_close() >= 0) ::close(source_->fd_children_close());
      child_main(fds[1], *index, body_, parent, *log);
    }
    ::close(fds[1]);
    Running r;
    r.index = *index;
    r.pid = pid;
    r.fd = fds[0];
    r.log = std::move(log);
    if (options_.timeout_s > 0) {
      r.has_deadline = true;
      r.deadline =
          Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options_.timeout_s));
    }
    running_.push_back(std::move(r));
  }
  return ok_status();
}

Result<int> PoolRun::wait_for_children(std::vector<pollfd>& pfds) {
  const Clock::time_point now = Clock::now();
  auto wake = now + std::chrono::milliseconds(k_max_poll_ms);
  if (options_.progress) wake = std::min(wake, last_progress_ + progress_interval());
  for (const Running& r : running_) {
    if (r.has_deadline) wake = std::min(wake, r.deadline);
  }
  const auto wait_ms =
      std::max<std::int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(wake - now).count() + 1);
  for (const Running& r : running_) pfds.push_back(pollfd{r.fd, POLLIN, 0});
  if (source_ != nullptr) pfds.push_back(pollfd{source_->wake_fd(), POLLIN, 0});  // last; fd -1 is ignored
  const int n = ::poll(pfds.data(), pfds.size(), static_cast<int>(wait_ms));
  if (n < 0 && errno != EINTR) return abandon(std::string("runner: poll: ") + std::strerror(errno));
  return n;
}

void PoolRun::collect(int n, const std::vector<pollfd>& pfds) {
  std::vector<Running> still;
  const std::size_t done_before = done_;
  for (std::size_t i = 0; i < running_.size(); ++i) {
    Running& r = running_[i];
    const bool ready = n > 0 && (pfds[i].revents & (POLLIN | POLLHUP | POLLERR)) != 0;
    if (ready && read_from(r)) {
      end_finished(r);
      continue;
    }
    if (r.has_deadline && Clock::now() >= r.deadline) {
      end_timed_out(r);
      continue;
    }
    still.push_back(std::move(r));
  }
  running_ = std::move(still);
  if (done_ > done_before) report();  // after running_ holds only the children still running
}

bool PoolRun::read_from(Running& r) {
  char buffer[1 << 16];
  const ssize_t got = ::read(r.fd, buffer, sizeof buffer);
  if (got > 0) {
    if (r.received.size() + static_cast<std::size_t>(got) > options_.max_payload_bytes + 1) {
      r.too_much = true;  // keep draining so the child can finish
    } else {
      r.received.append(buffer, static_cast<std::size_t>(got));
    }
    return false;
  }
  return got == 0 || errno != EINTR;
}

void PoolRun::end_finished(Running& r) {
  ::close(r.fd);
  const std::string died = wait_status_text(reap(r.pid));
  end_job(r, finished_result(r, died, options_));
}

void PoolRun::end_timed_out(Running& r) {
  ::kill(r.pid, SIGKILL);
  ::close(r.fd);
  reap(r.pid);
  ChildJobResult result;
  result.error = "the point ran past its wall-clock limit of " + std::to_string(options_.timeout_s) +
                 " s (RunnerOptions::point_timeout_s) and was killed";
  if (r.log) result.log_tail = r.log->last_lines(options_.log_tail_lines);
  end_job(r, std::move(result));
}

}  // namespace

Result<std::vector<ChildJobResult>> ChildPool::run(std::size_t count, const Body& body,
                                                   const ChildPoolOptions& options) {
  return PoolRun(count, body, options).run();
}

}  // namespace sluice::scenario
