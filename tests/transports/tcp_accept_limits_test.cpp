// The TCP transport's accept limits (TransportConfig::accept; issue 24, item
// 2): idle and drip-fed raw sockets are closed at their hand-shake
// deadlines, connections past the cap are refused with one rate-limited line,
// and a process out of descriptors neither spins in accept() nor refuses an
// authenticated peer once the flood is gone. Loopback (127.0.0.1) only; every
// wait is bounded (a hang becomes a failure).
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "tests/transports/transport_test_util.hpp"
#include "transports/tcp/tcp_address.hpp"
#include "transports/tcp/tcp_transport.hpp"

namespace sluice::transport::tcp {
namespace {

using testing::EventPump;
using testing::make_frame;

// Bound on one blocking read of a raw socket or a pipe: a hang becomes a failure.
constexpr int k_wait_s = 10;
constexpr std::string_view k_secret = "cluster-secret-0123456789abcdef";

struct LogSink {
  std::mutex mu;
  std::vector<std::string> lines;
  std::function<void(std::string_view)> fn() {
    return [this](std::string_view line) {
      std::lock_guard lock(mu);
      lines.emplace_back(line);
    };
  }
  std::size_t count(std::string_view what) {
    std::lock_guard lock(mu);
    std::size_t n = 0;
    for (const auto& l : lines) n += l.find(what) != std::string::npos ? 1 : 0;
    return n;
  }
  std::string all() {
    std::lock_guard lock(mu);
    std::string out;
    for (const auto& l : lines) out += l + "\n";
    return out;
  }
};

TransportConfig server_config(LogSink* sink) {
  TransportConfig config;
  config.local_id = 1;
  config.rail_addresses = {"127.0.0.1:0"};
  config.connections_per_rail = 1;
  if (sink != nullptr) config.log = sink->fn();
  return config;
}

std::unique_ptr<Transport> make(const TransportConfig& config) {
  Result<std::unique_ptr<Transport>> t = make_tcp_transport(config);
  EXPECT_TRUE(t.ok()) << t.status().to_string();
  return t.ok() ? std::move(t).value() : nullptr;
}

// A raw client socket connected to the transport's rail 0, reads bounded by k_wait_s; -1 on failure.
int raw_connect(const Transport& t) {
  Result<sockaddr_in> to = parse_ipv4_address(t.listen_address().rails[0]);
  if (!to.ok()) return -1;
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  timeval tv{k_wait_s, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&*to), sizeof(sockaddr_in)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// True when the other side closed `fd` (EOF or reset) within k_wait_s.
bool closed_by_transport(int fd) {
  char byte = 0;
  const ssize_t n = ::recv(fd, &byte, 1, 0);
  return n == 0 || (n < 0 && errno == ECONNRESET);
}

TEST(TcpAcceptLimits, AnIdleRawSocketIsClosedAtTheHandshakeIdleDeadline) {
  LogSink sink;
  TransportConfig config = server_config(&sink);
  config.accept.handshake_idle_ms = 100;
  auto t = make(config);
  ASSERT_TRUE(t);
  const int fd = raw_connect(*t);
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(closed_by_transport(fd)) << "an idle connection must not be kept";
  ::close(fd);
  EXPECT_EQ(sink.count("handshake_idle_ms"), 1u) << sink.all();
}

TEST(TcpAcceptLimits, ADripFedHandshakeIsClosedAtTheHandshakeDeadline) {
  LogSink sink;
  TransportConfig config = server_config(&sink);
  config.accept.handshake_deadline_ms = 200;
  config.accept.handshake_idle_ms = k_max_accept_limit_ms;
  auto t = make(config);
  ASSERT_TRUE(t);
  const int fd = raw_connect(*t);
  ASSERT_GE(fd, 0);
  // Part of a packet header: the hand-shake has started and never ends.
  const std::array<char, 3> partial = {'S', 'L', 'T'};
  ASSERT_EQ(::send(fd, partial.data(), partial.size(), MSG_NOSIGNAL), static_cast<ssize_t>(partial.size()));
  EXPECT_TRUE(closed_by_transport(fd));
  ::close(fd);
  EXPECT_EQ(sink.count("handshake_deadline_ms"), 1u) << sink.all();
}

TEST(TcpAcceptLimits, ConnectionsAboveTheCapAreRefusedWithOneRateLimitedLine) {
  constexpr std::uint32_t k_cap = 4;
  constexpr int k_extra = 8;
  LogSink sink;
  TransportConfig config = server_config(&sink);
  config.accept.max_handshaking_per_listener = k_cap;
  config.accept.log_interval_ms = k_max_accept_limit_ms;  // only the count rule: a slow run logs no second line
  auto t = make(config);
  ASSERT_TRUE(t);
  std::vector<int> held;
  for (std::uint32_t i = 0; i < k_cap; ++i) {
    held.push_back(raw_connect(*t));
    ASSERT_GE(held.back(), 0);
  }
  for (int i = 0; i < k_extra; ++i) {
    const int fd = raw_connect(*t);
    ASSERT_GE(fd, 0) << "the kernel completes the connect; the transport closes it";
    EXPECT_TRUE(closed_by_transport(fd)) << "connection " << i << " past the cap";
    ::close(fd);
  }
  for (int fd : held) {
    char byte = 0;
    EXPECT_EQ(::recv(fd, &byte, 1, MSG_DONTWAIT), -1) << "the first " << k_cap << " are kept";
    EXPECT_EQ(errno, EAGAIN);
    ::close(fd);
  }
  EXPECT_EQ(sink.count("refused a connection from 127.0.0.1:"), 1u) << sink.all();
  EXPECT_EQ(sink.count("max_handshaking_per_listener (4)"), 1u) << sink.all();
}

// ---- descriptor exhaustion ------------------------------------------------------

// Connections the flood opens; the server process is left k_fd_headroom
// descriptors, so most of them wait in its backlog (1,024) while it is out
// of descriptors.
constexpr int k_flood_connections = 300;
constexpr int k_fd_headroom = 32;
// The observation window of the no-spin property: a spinning accept loop
// burns a whole core over it (and logged ~117,000 lines a second).
constexpr int k_window_ms = 500;
constexpr std::int64_t k_max_window_cpu_ns = std::int64_t{k_window_ms} * 1'000'000 / 4;
constexpr int k_max_window_lines = 10;

struct WindowReport {
  std::int64_t cpu_ns = 0;
  int lines = 0;
  int emfile_lines = 0;
};

int highest_open_fd() {
  int highest = 2;
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return 1024;
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] >= '0' && e->d_name[0] <= '9') highest = std::max(highest, std::atoi(e->d_name));
  }
  ::closedir(dir);
  return highest;
}

std::int64_t process_cpu_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

bool wait_readable(int fd) {
  pollfd pfd{fd, POLLIN, 0};
  return ::poll(&pfd, 1, k_wait_s * 1000) == 1;
}

// The server process (a fork, so that only it runs out of descriptors):
// makes the transport, lowers its own RLIMIT_NOFILE to k_fd_headroom above
// what it holds, sends its port, and on the parent's 'm' measures its CPU
// time and log lines over k_window_ms; it serves until the parent closes
// the command pipe. Exit codes name the step that failed.
[[noreturn]] void run_server_process(int commands, int reports) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  std::atomic<int> lines{0};
  std::atomic<int> emfile_lines{0};
  TransportConfig config = server_config(nullptr);
  config.shared_secret = std::string(k_secret);
  config.log = [&](std::string_view line) {
    lines.fetch_add(1);
    if (line.find("EMFILE") != std::string_view::npos) emfile_lines.fetch_add(1);
  };
  Result<std::unique_ptr<Transport>> t = make_tcp_transport(config);
  if (!t.ok()) ::_exit(2);
  rlimit limit{};
  ::getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = static_cast<rlim_t>(highest_open_fd() + 1 + k_fd_headroom);
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) ::_exit(3);
  Result<sockaddr_in> bound = parse_ipv4_address(t.value()->listen_address().rails[0]);
  const std::uint16_t port = bound.ok() ? bound->sin_port : 0;
  if (::write(reports, &port, sizeof port) != static_cast<ssize_t>(sizeof port)) ::_exit(4);
  char command = 0;
  if (!wait_readable(commands) || ::read(commands, &command, 1) != 1 || command != 'm') ::_exit(5);
  WindowReport report;
  const int lines_before = lines.load();
  const std::int64_t cpu_before = process_cpu_ns();
  ::poll(nullptr, 0, k_window_ms);  // the window itself: the property is about what happens during it
  report.cpu_ns = process_cpu_ns() - cpu_before;
  report.lines = lines.load() - lines_before;
  report.emfile_lines = emfile_lines.load();
  if (::write(reports, &report, sizeof report) != static_cast<ssize_t>(sizeof report)) ::_exit(6);
  // Serve the authenticated peer until the parent closes the pipe (EOF), at most 6 x k_wait_s.
  for (int round = 0; round < 6; ++round) {
    if (wait_readable(commands) && ::read(commands, &command, 1) <= 0) break;
  }
  t.value().reset();
  ::_exit(0);
}

TEST(TcpAcceptLimits, FdExhaustionFloodNeitherSpinsNorRefusesAnAuthenticatedPeerAfterwards) {
  int commands[2];
  int reports[2];
  ASSERT_EQ(::pipe2(commands, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(reports, O_CLOEXEC), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(commands[1]);
    ::close(reports[0]);
    run_server_process(commands[0], reports[1]);
  }
  ::close(commands[0]);
  ::close(reports[1]);
  std::uint16_t port = 0;
  ASSERT_TRUE(wait_readable(reports[0]));
  ASSERT_EQ(::read(reports[0], &port, sizeof port), static_cast<ssize_t>(sizeof port));
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = port;
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // The flood: idle connections, far more than the server has descriptors.
  std::vector<int> flood;
  for (int i = 0; i < k_flood_connections; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to), 0) << "connection " << i;
    flood.push_back(fd);
  }
  ASSERT_EQ(::write(commands[1], "m", 1), 1);
  WindowReport report;
  ASSERT_TRUE(wait_readable(reports[0]));
  ASSERT_EQ(::read(reports[0], &report, sizeof report), static_cast<ssize_t>(sizeof report));
  EXPECT_GE(report.emfile_lines, 1) << "the server must have run out of descriptors";
  EXPECT_LE(report.lines, k_max_window_lines) << "log lines during the window";
  EXPECT_LE(report.cpu_ns, k_max_window_cpu_ns) << "CPU time of the server during a " << k_window_ms << " ms window";
  // The flood goes away; an authenticated peer is served.
  for (int fd : flood) ::close(fd);
  TransportConfig client_config = server_config(nullptr);
  client_config.local_id = 2;
  client_config.shared_secret = std::string(k_secret);
  auto client = make(client_config);
  ASSERT_TRUE(client);
  EventPump pump(*client);
  Result<PeerId> peer = client->connect(PeerAddress{{"127.0.0.1:" + std::to_string(ntohs(port))}});
  ASSERT_TRUE(peer.ok());
  auto event = pump.wait_for(
      [](const TransportEvent& e) { return std::holds_alternative<PeerUp>(e) || std::holds_alternative<PeerDown>(e); });
  ASSERT_TRUE(event) << "neither PeerUp nor PeerDown";
  const auto* down = std::get_if<PeerDown>(&*event);
  EXPECT_EQ(down, nullptr) << "refused after the flood: " << (down != nullptr ? down->reason.message() : "");
  EXPECT_TRUE(std::holds_alternative<PeerUp>(*event));
  ASSERT_TRUE(client->send_message(*peer, 1, make_frame(64, 1)).ok());
  ::close(commands[1]);  // the server process ends
  ::close(reports[0]);
  int wstatus = 0;
  ASSERT_EQ(::waitpid(child, &wstatus, 0), child);
  EXPECT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) << "server process status " << wstatus;
}

}  // namespace
}  // namespace sluice::transport::tcp
