// AcceptGuard (transports/accept_guard.hpp): caps, hand-shake deadlines,
// accept back-off and their rate-limited lines, driven with explicit times
// (no sockets, no clock); and check_accept_limits.
#include "transports/accept_guard.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

namespace sluice::transport {
namespace {

constexpr std::int64_t k_ms_ns = 1'000'000;

struct Lines {
  std::vector<std::string> all;
  std::function<void(std::string_view)> fn() {
    return [this](std::string_view line) { all.emplace_back(line); };
  }
  std::size_t count(std::string_view what) const {
    std::size_t n = 0;
    for (const std::string& l : all) n += l.find(what) != std::string::npos ? 1 : 0;
    return n;
  }
};

AcceptLimits small_limits() {
  AcceptLimits a;
  a.max_connections_per_listener = 6;
  a.max_handshaking_per_listener = 3;
  a.handshake_deadline_ms = 1'000;
  a.handshake_idle_ms = 300;
  a.accept_backoff_initial_ms = 100;
  a.accept_backoff_max_ms = 400;
  a.log_every_events = 1'000;
  a.log_interval_ms = 60'000;
  return a;
}

TEST(AcceptGuard, RefusesPastTheHandshakingCapWithOneRateLimitedLineNamingTheAddress) {
  Lines lines;
  AcceptGuard guard(small_limits(), "tcp", 2, lines.fn());
  for (std::uint64_t id = 1; id <= 3; ++id) EXPECT_TRUE(guard.admit(0, id, "10.0.0.1:" + std::to_string(id), 0));
  for (std::uint64_t id = 4; id <= 20; ++id) EXPECT_FALSE(guard.admit(0, id, "10.0.0.9:99", 0));
  EXPECT_TRUE(guard.admit(1, 21, "10.0.0.2:1", 0)) << "the cap is per listener";
  ASSERT_EQ(lines.all.size(), 1u) << "17 refusals, one line";
  EXPECT_NE(lines.all[0].find("tcp transport: refused a connection from 10.0.0.9:99"), std::string::npos)
      << lines.all[0];
  EXPECT_NE(lines.all[0].find("max_handshaking_per_listener (3)"), std::string::npos) << lines.all[0];
  EXPECT_EQ(guard.handshaking_connections(0), 3u);
  guard.handshake_done(1);
  EXPECT_TRUE(guard.admit(0, 22, "10.0.0.1:22", 0)) << "a finished hand-shake frees a hand-shake slot";
}

TEST(AcceptGuard, RefusesPastTheOpenConnectionCapUntilOneCloses) {
  Lines lines;
  AcceptGuard guard(small_limits(), "tcp", 1, lines.fn());
  for (std::uint64_t id = 1; id <= 6; ++id) {
    ASSERT_TRUE(guard.admit(0, id, "a", 0));
    guard.handshake_done(id);
  }
  EXPECT_FALSE(guard.admit(0, 7, "b", 0));
  EXPECT_EQ(lines.count("max_connections_per_listener (6)"), 1u);
  guard.closed(3);
  EXPECT_EQ(guard.open_connections(0), 5u);
  EXPECT_TRUE(guard.admit(0, 8, "c", 0));
  guard.closed(999);  // not admitted here: ignored
  EXPECT_EQ(guard.open_connections(0), 6u);
}

TEST(AcceptGuard, ClosesASilentHandshakeAtItsIdleDeadlineAndADripFedOneAtItsDeadline) {
  Lines lines;
  AcceptGuard guard(small_limits(), "tcp", 1, lines.fn());
  ASSERT_TRUE(guard.admit(0, 1, "silent", 0));
  ASSERT_TRUE(guard.admit(0, 2, "drip", 0));
  ASSERT_TRUE(guard.admit(0, 3, "done", 0));
  guard.handshake_done(3);
  EXPECT_EQ(guard.wait_ms(0), 300) << "the first idle deadline";
  EXPECT_TRUE(guard.expired(299 * k_ms_ns).empty());
  guard.activity(2, 250 * k_ms_ns);
  auto first = guard.expired(300 * k_ms_ns);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].first, 1u);
  EXPECT_NE(first[0].second.find("handshake_idle_ms"), std::string::npos) << first[0].second;
  // One byte every 250 ms keeps the idle deadline away; the hand-shake deadline still ends it.
  for (std::int64_t t = 500; t < 1'000; t += 250) {
    guard.activity(2, t * k_ms_ns);
    EXPECT_TRUE(guard.expired(t * k_ms_ns).empty()) << t;
  }
  auto second = guard.expired(1'000 * k_ms_ns);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].first, 2u);
  EXPECT_NE(second[0].second.find("handshake_deadline_ms"), std::string::npos) << second[0].second;
  EXPECT_EQ(guard.handshaking_connections(0), 0u);
  EXPECT_EQ(guard.open_connections(0), 3u) << "the caller closes them, then closed()";
  EXPECT_EQ(guard.wait_ms(1'000 * k_ms_ns), -1) << "nothing left to wait for";
  EXPECT_EQ(lines.count("closing a connection from silent"), 1u);
}

TEST(AcceptGuard, BacksOffDoublingToTheCapAndStartsAgainAfterAnAccept) {
  Lines lines;
  AcceptGuard guard(small_limits(), "tcp", 1, lines.fn());
  EXPECT_FALSE(guard.accept_failed(0, EAGAIN, "l", 0)) << "no pause for a retry code";
  EXPECT_FALSE(guard.accept_failed(0, ECONNABORTED, "l", 0));
  std::int64_t now = 0;
  for (int expected_ms : {100, 200, 400, 400}) {
    ASSERT_TRUE(guard.accept_failed(0, EMFILE, "127.0.0.1:7", now));
    EXPECT_EQ(guard.wait_ms(now), expected_ms);
    EXPECT_TRUE(guard.resume_due(now + (expected_ms - 1) * k_ms_ns).empty());
    now += expected_ms * k_ms_ns;
    EXPECT_EQ(guard.resume_due(now), std::vector<std::size_t>{0});
  }
  guard.accepted(0);
  ASSERT_TRUE(guard.accept_failed(0, ENFILE, "127.0.0.1:7", now));
  EXPECT_EQ(guard.wait_ms(now), 100);
  ASSERT_EQ(lines.all.size(), 1u) << "five failures within the interval: one line";
  EXPECT_NE(lines.all[0].find("Too many open files (EMFILE)"), std::string::npos) << lines.all[0];
}

TEST(AcceptGuard, CheckAcceptLimitsNamesTheBadField) {
  TransportConfig config;
  EXPECT_TRUE(check_accept_limits(config, "tcp").ok()) << "the defaults are valid";
  config.accept.handshake_deadline_ms = 0;
  Status st = check_accept_limits(config, "tcp");
  EXPECT_EQ(st.code(), StatusCode::invalid_argument);
  EXPECT_NE(st.message().find("accept.handshake_deadline_ms 0"), std::string::npos) << st.message();
  config = TransportConfig{};
  config.accept.max_handshaking_per_listener = config.accept.max_connections_per_listener + 1;
  EXPECT_NE(check_accept_limits(config, "shm").message().find("max_handshaking_per_listener"), std::string::npos);
  config = TransportConfig{};
  config.accept.accept_backoff_initial_ms = 2'000;
  config.accept.accept_backoff_max_ms = 1'000;
  EXPECT_NE(check_accept_limits(config, "tcp").message().find("accept_backoff_initial_ms"), std::string::npos);
  config = TransportConfig{};
  config.accept.max_connections_per_listener = 0;
  EXPECT_NE(check_accept_limits(config, "tcp").message().find("max_connections_per_listener 0"), std::string::npos);
  config = TransportConfig{};
  config.accept.max_handshake_bytes = 0;
  EXPECT_NE(check_accept_limits(config, "tcp").message().find("max_handshake_bytes 0"), std::string::npos);
}

}  // namespace
}  // namespace sluice::transport
