#include "scenarios/netns/netns_ranks.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/fd_io.hpp"
#include "core/common/assert.hpp"
#include "scenarios/deploy/deploy.hpp"
#include "scenarios/netns/netns_cluster.hpp"
#include "scenarios/runner/result_codec.hpp"
#include "scenarios/runner/runner.hpp"
#include "scenarios/runner/sweep_schedule.hpp"

namespace sluice::emulate {
namespace {

using Clock = std::chrono::steady_clock;

// Exit statuses of a rank: the point ran (ok or not), it could not start.
constexpr int k_rank_exit_ok = 0;
constexpr int k_rank_exit_failed = 1;
constexpr int k_rank_exit_no_start = 2;

std::string how_it_ended(int status) {
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("killed by signal ") + ::strsignal(WTERMSIG(status));
  return "ended";
}

// The body of rank `rank` in its forked process; returns its exit status.
int rank_main(const scenario::ScenarioSpec& spec, const NetnsRanksOptions& options, std::uint32_t rank, int fd,
              int result_fd, int up_fd) {
  const auto size = static_cast<std::uint32_t>(options.netns.size());
  ClusterPointOptions point = options.point;
  point.listen = options.addresses[rank];
  const ClusterPointOptions& o = point;
  if (o.log)
    point.log = [rank, log = options.point.log](std::string_view line) {
      log("[node " + std::to_string(rank) + "] " + std::string(line));
    };
  const int stop_fd = options.stop_fd;
  point.stop_requested = [stop_fd] { return readable_now(stop_fd); };
  if (up_fd >= 0) {
    point.servers_up = [up_fd] {
      const char up = 'U';
      if (!write_exact(up_fd, &up, 1)) return;  // the launcher is gone: the rank dies with it
    };
  }
  scenario::RunResult r;
  if (Status st = enter_network_namespace(options.netns[rank]); !st.ok()) {
    r = failed_cluster_point(spec, o, "rank " + std::to_string(rank) + ": " + st.message());
    ::close(fd);  // the others learn that this rank ended
  } else {
    scenario::SweepSchedule schedule(rank, size, fd);
    RankBootstrap bootstrap(schedule, std::chrono::seconds(o.max_wait_s), point.stop_requested);
    r = run_cluster_point(spec, bootstrap, point);
  }
  if (result_fd >= 0) {
    const std::string text = scenario::to_json(r).dump();
    if (!write_exact(result_fd, text.data(), text.size())) return k_rank_exit_no_start;
    ::close(result_fd);
  }
  return r.ok ? k_rank_exit_ok : k_rank_exit_failed;
}

struct Rank {
  pid_t pid = -1;
  bool reaped = false;
  std::string how;
};

// Forks the ranks; fills `ranks` and the relay's ends, and rank 0's result pipe.
Status start_ranks(const scenario::ScenarioSpec& spec, const NetnsRanksOptions& options, std::vector<Rank>& ranks,
                   std::vector<int>& relay_fds, int& result_fd, int& up_fd) {
  const std::size_t n = options.netns.size();
  const pid_t parent = ::getpid();
  int result_pipe[2];
  int up_pipe[2];
  if (::pipe2(result_pipe, O_CLOEXEC) != 0) {
    return error(StatusCode::io_error, "pipe: " + std::string(std::strerror(errno)));
  }
  if (::pipe2(up_pipe, O_CLOEXEC) != 0) {
    ::close(result_pipe[0]);
    ::close(result_pipe[1]);
    return error(StatusCode::io_error, "pipe: " + std::string(std::strerror(errno)));
  }
  result_fd = result_pipe[0];
  up_fd = up_pipe[0];
  std::fflush(nullptr);  // nothing buffered is written twice
  for (std::size_t i = 0; i < n; ++i) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
      ::close(result_pipe[1]);
      ::close(up_pipe[1]);
      return error(StatusCode::io_error, "socketpair: " + std::string(std::strerror(errno)));
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) std::_Exit(k_rank_exit_no_start);
      for (int other : relay_fds) ::close(other);
      ::close(pair[0]);
      ::close(result_pipe[0]);
      ::close(up_pipe[0]);
      if (i != 0) {
        ::close(result_pipe[1]);
        ::close(up_pipe[1]);
      }
      int code = k_rank_exit_no_start;
      try {
        code = rank_main(spec, options, static_cast<std::uint32_t>(i), pair[1], i == 0 ? result_pipe[1] : -1,
                         i == 0 ? up_pipe[1] : -1);
      } catch (const std::exception& e) {
        fmt::print(stderr, "[node {}] {}\n", i, e.what());
      }
      std::fflush(nullptr);
      std::_Exit(code);  // none of the launcher's objects (its namespaces) are the rank's to tear down
    }
    ::close(pair[1]);
    if (pid < 0) {
      ::close(pair[0]);
      ::close(result_pipe[1]);
      ::close(up_pipe[1]);
      return error(StatusCode::unavailable, "fork: " + std::string(std::strerror(errno)));
    }
    ranks.push_back(Rank{pid, false, {}});
    relay_fds.push_back(pair[0]);
  }
  ::close(result_pipe[1]);
  ::close(up_pipe[1]);
  for (int fd : {result_fd, up_fd}) {
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  }
  return ok_status();
}

// Reads what the pipe has now; false once it is closed (or over the limit: `text` says so).
bool read_result(int fd, std::string& text, bool& too_large) {
  char buffer[64 * 1024];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got > 0) {
      text.append(buffer, static_cast<std::size_t>(got));
      if (text.size() > scenario::k_max_point_result_bytes) {
        too_large = true;
        return false;
      }
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    return got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
}

void reap(std::vector<Rank>& ranks, FrameRelay* relay, bool block) {
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i].reaped) continue;
    int status = 0;
    const pid_t got = ::waitpid(ranks[i].pid, &status, block ? 0 : WNOHANG);
    if (got != ranks[i].pid) continue;
    ranks[i].reaped = true;
    ranks[i].how = how_it_ended(status);
    if (relay != nullptr) relay->end(static_cast<std::uint32_t>(i), ranks[i].how);
  }
}

}  // namespace

scenario::RunResult run_netns_ranks(const scenario::ScenarioSpec& spec, const NetnsRanksOptions& options) {
  SLUICE_ASSERT(options.netns.size() == options.addresses.size() && !options.netns.empty());
  std::vector<Rank> ranks;
  std::vector<int> relay_fds;
  int result_fd = -1;
  int up_fd = -1;
  const Status started = start_ranks(spec, options, ranks, relay_fds, result_fd, up_fd);
  std::string text;
  bool too_large = false;
  std::string why_stopped;
  {
    FrameRelay relay(std::move(relay_fds));
    if (!started.ok()) why_stopped = "starting the ranks: " + started.message();
    const auto deadline = Clock::now() + std::chrono::seconds(options.deadline_s);
    while (why_stopped.empty() && (relay.open_count() > 0 || result_fd >= 0)) {
      std::vector<pollfd> polls;
      relay.add_polls(polls);
      polls.push_back(pollfd{result_fd, POLLIN, 0});
      polls.push_back(pollfd{options.stop_fd, POLLIN, 0});
      polls.push_back(pollfd{up_fd, POLLIN, 0});
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) {
        why_stopped = "the point did not end within " + std::to_string(options.deadline_s) + " s";
        break;
      }
      const int n = ::poll(polls.data(), polls.size(), static_cast<int>(std::min<long long>(left, options.tick_ms)));
      if (n < 0 && errno != EINTR) why_stopped = "poll: " + std::string(std::strerror(errno));
      if (n > 0) relay.on_polled(polls.data());
      if (n > 0 && polls[relay.size()].revents != 0 && !read_result(result_fd, text, too_large)) {
        ::close(result_fd);
        result_fd = -1;
      }
      if (readable_now(options.stop_fd)) why_stopped = "interrupted by a signal";
      if (n > 0 && polls.back().revents != 0) {  // rank 0's servers-up (or its end)
        char up = 0;
        if (::read(up_fd, &up, 1) == 1 && options.on_servers_up) options.on_servers_up();
        ::close(up_fd);
        up_fd = -1;
      }
      if (options.on_tick) options.on_tick();
      reap(ranks, &relay, false);
    }
    if (!why_stopped.empty()) {
      for (const Rank& r : ranks) {
        if (!r.reaped) ::kill(r.pid, SIGKILL);
      }
    }
  }
  if (result_fd >= 0) ::close(result_fd);
  if (up_fd >= 0) ::close(up_fd);
  reap(ranks, nullptr, true);
  std::string ends;
  for (std::size_t i = 0; i < ranks.size(); ++i) ends += fmt::format("{}node {}: {}", i ? ", " : "", i, ranks[i].how);
  if (!why_stopped.empty()) return failed_cluster_point(spec, options.point, why_stopped + " (" + ends + ")");
  if (too_large) return failed_cluster_point(spec, options.point, "rank 0's result is over k_max_point_result_bytes");
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (text.empty() || j.is_discarded()) {
    return failed_cluster_point(spec, options.point, "rank 0 handed back no result (" + ends + ")");
  }
  Result<scenario::RunResult> decoded = scenario::run_result_from_json(j, &spec);
  if (!decoded.ok()) return failed_cluster_point(spec, options.point, "rank 0's result: " + decoded.status().message());
  return std::move(decoded).value();
}

}  // namespace sluice::emulate
