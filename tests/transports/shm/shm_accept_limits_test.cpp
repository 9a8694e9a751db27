// The shm transport's accept limits (TransportConfig::accept; issue 24, item
// 2), as tcp's: a connector that never sends its hello is closed at the
// hand-shake idle deadline, and connections past the cap are closed at once
// with one rate-limited line. Abstract unix sockets of this host only; every
// wait is bounded.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>
#include <string>
#include <vector>

#include "transports/shm/shm_os.hpp"
#include "transports/shm/shm_transport.hpp"

namespace sluice::transport::shm {
namespace {

// Bound on one wait for the transport to close a socket.
constexpr int k_wait_ms = 10000;

struct LogSink {
  std::mutex mu;
  std::vector<std::string> lines;
  std::size_t count(std::string_view what) {
    std::lock_guard lock(mu);
    std::size_t n = 0;
    for (const auto& l : lines) n += l.find(what) != std::string::npos ? 1 : 0;
    return n;
  }
};

std::unique_ptr<Transport> make(const AcceptLimits& limits, LogSink& sink) {
  TransportConfig config;
  config.local_id = 1;
  config.rail_addresses = {"shm:auto"};
  config.accept = limits;
  config.log = [&sink](std::string_view line) {
    std::lock_guard lock(sink.mu);
    sink.lines.emplace_back(line);
  };
  Result<std::unique_ptr<Transport>> t = make_shm_transport(config);
  EXPECT_TRUE(t.ok()) << t.status().to_string();
  return t.ok() ? std::move(t).value() : nullptr;
}

int raw_connect(const Transport& t) {
  Result<std::string> name = parse_shm_address(t.listen_address().rails[0]);
  if (!name.ok()) return -1;
  Result<int> fd = connect_abstract(*name);
  return fd.ok() ? *fd : -1;
}

// True when the transport closed `fd` (hang-up or EOF) within k_wait_ms.
bool closed_by_transport(int fd) {
  pollfd pfd{fd, POLLIN | POLLRDHUP, 0};
  if (::poll(&pfd, 1, k_wait_ms) != 1) return false;
  char byte = 0;
  return (pfd.revents & (POLLHUP | POLLRDHUP)) != 0 || ::recv(fd, &byte, 1, MSG_DONTWAIT) == 0;
}

TEST(ShmAcceptLimits, AConnectorThatSendsNoHelloIsClosedAtTheIdleDeadline) {
  LogSink sink;
  AcceptLimits limits;
  limits.handshake_idle_ms = 100;
  auto t = make(limits, sink);
  ASSERT_TRUE(t);
  const int fd = raw_connect(*t);
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(closed_by_transport(fd)) << "an idle connector must not be kept";
  ::close(fd);
  EXPECT_EQ(sink.count("handshake_idle_ms"), 1u);
}

TEST(ShmAcceptLimits, ConnectionsAboveTheCapAreClosedWithOneRateLimitedLine) {
  constexpr std::uint32_t k_cap = 2;
  LogSink sink;
  AcceptLimits limits;
  limits.max_handshaking_per_listener = k_cap;
  limits.log_interval_ms = k_max_accept_limit_ms;  // only the count rule: a slow run logs no second line
  auto t = make(limits, sink);
  ASSERT_TRUE(t);
  std::vector<int> held;
  for (std::uint32_t i = 0; i < k_cap; ++i) {
    held.push_back(raw_connect(*t));
    ASSERT_GE(held.back(), 0);
  }
  for (int i = 0; i < 5; ++i) {
    const int fd = raw_connect(*t);
    ASSERT_GE(fd, 0);
    EXPECT_TRUE(closed_by_transport(fd)) << "connection " << i << " past the cap";
    ::close(fd);
  }
  for (int fd : held) {
    pollfd pfd{fd, POLLIN | POLLRDHUP, 0};
    EXPECT_EQ(::poll(&pfd, 1, 0), 0) << "the first " << k_cap << " are kept";
    ::close(fd);
  }
  EXPECT_EQ(sink.count("max_handshaking_per_listener (2)"), 1u);
}

}  // namespace
}  // namespace sluice::transport::shm
