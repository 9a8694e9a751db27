// Issue 27: a sweep spread over ranks. ChildPool with a JobSource, and rank
// 0's SweepSchedule against a scripted rank 1 at the other end of the relay's
// socket (this test plays the relay: frames of sweep_relay_wire.hpp).
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/fd_io.hpp"
#include "scenarios/runner/child_pool.hpp"
#include "scenarios/runner/sweep_relay_wire.hpp"
#include "scenarios/runner/sweep_schedule.hpp"

namespace sluice::scenario {
namespace {

using nlohmann::json;

// Gives jobs 4 and 1 to this pool; jobs 0, 2 and 3 "end elsewhere" when the pipe wakes the pool.
class TwoHereThreeElsewhere final : public JobSource {
 public:
  TwoHereThreeElsewhere() {
    EXPECT_EQ(::pipe(fds_), 0);
    EXPECT_EQ(::write(fds_[1], "x", 1), 1);
  }
  ~TwoHereThreeElsewhere() override {
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  std::optional<std::size_t> next() override {
    if (given_ == here_.size()) return std::nullopt;
    return here_[given_++];
  }
  void finished_here(std::size_t index, const ChildJobResult&) override { finished_here_.push_back(index); }
  int wake_fd() const override { return fds_[0]; }
  std::vector<std::pair<std::size_t, ChildJobResult>> on_wake() override {
    char c = 0;
    EXPECT_EQ(::read(fds_[0], &c, 1), 1);
    std::vector<std::pair<std::size_t, ChildJobResult>> out;
    for (std::size_t i : {0, 2, 3}) out.emplace_back(i, ChildJobResult{true, "elsewhere " + std::to_string(i), {}, {}});
    woke_ = true;
    return out;
  }
  bool all_done() const override { return woke_; }
  std::size_t running_elsewhere() const override { return woke_ ? 0 : 3; }

  std::vector<std::size_t> finished_here_;

 private:
  int fds_[2] = {-1, -1};
  std::vector<std::size_t> here_ = {4, 1};
  std::size_t given_ = 0;
  bool woke_ = false;
};

TEST(ChildPool, AJobSourceChoosesTheJobsRunHereAndReportsTheOthers) {
  TwoHereThreeElsewhere source;
  ChildPoolOptions o;
  o.jobs = 1;
  o.source = &source;
  std::vector<std::size_t> done;
  o.on_done = [&](std::size_t i, const ChildJobResult&) { done.push_back(i); };
  Result<std::vector<ChildJobResult>> ran = ChildPool::run(
      5, [](std::size_t i) { return "here " + std::to_string(i); }, o);
  ASSERT_TRUE(ran.ok()) << ran.status().to_string();
  ASSERT_EQ(ran->size(), 5u);
  EXPECT_EQ((*ran)[4].payload, "here 4");
  EXPECT_EQ((*ran)[1].payload, "here 1");
  for (std::size_t i : {0, 2, 3}) EXPECT_EQ((*ran)[i].payload, "elsewhere " + std::to_string(i));
  EXPECT_EQ(done.size(), 5u);
  std::sort(source.finished_here_.begin(), source.finished_here_.end());
  EXPECT_EQ(source.finished_here_, (std::vector<std::size_t>{1, 4}));
}

// ---- rank 0 against a scripted rank 1 ----

ScenarioSpec point(const std::string& label) {
  ScenarioSpec spec;
  spec.scenario = "sweep_schedule_test";
  spec.label = label;
  return spec;
}

// False when rank 0 has already closed its end (EPIPE, never SIGPIPE).
bool try_send_frame(int fd, SweepFrameKind kind, std::uint32_t rank, const std::string& payload) {
  const auto head = encode_sweep_frame_header(SweepFrameHeader{static_cast<std::uint32_t>(payload.size()), kind, rank});
  return send_exact(fd, head.data(), head.size()) && send_exact(fd, payload.data(), payload.size());
}

void send_frame(int fd, SweepFrameKind kind, std::uint32_t rank, const std::string& payload) {
  EXPECT_TRUE(try_send_frame(fd, kind, rank, payload)) << std::strerror(errno);
}

// The next frame rank 0 sent (to rank `to`), as JSON.
json receive_json(int fd, std::uint32_t* to = nullptr) {
  std::array<std::byte, k_sweep_frame_header_bytes> head{};
  std::size_t have = 0;
  while (have < head.size()) {
    const ssize_t n = ::read(fd, head.data() + have, head.size() - have);
    if (n <= 0) return json();
    have += static_cast<std::size_t>(n);
  }
  const std::optional<SweepFrameHeader> h = decode_sweep_frame_header(head);
  if (!h) return json();
  if (to != nullptr) *to = h->rank;
  std::string payload(h->payload_bytes, '\0');
  have = 0;
  while (have < payload.size()) {
    const ssize_t n = ::read(fd, payload.data() + have, payload.size() - have);
    if (n <= 0) return json();
    have += static_cast<std::size_t>(n);
  }
  return json::parse(payload);
}

struct RelayPair {
  RelayPair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0); }
  ~RelayPair() { ::close(fds[1]); }
  int fds[2] = {-1, -1};  // [0]: rank 0's (SweepSchedule owns it), [1]: the "relay"
};

// Rank 0 of 2 on `fd`, one point at a time, each taking 200 ms, so that
// rank 1 (instant) asks before rank 0 has taken them all.
Result<std::vector<ChildJobResult>> run_slow_rank0(int fd, const std::vector<ScenarioSpec>& points) {
  SweepSchedule rank0(0, 2, fd);
  ChildPoolOptions pool;
  pool.jobs = 1;
  return rank0.run(
      points,
      [](std::size_t i) {
        ::usleep(200'000);
        return "rank 0 ran " + std::to_string(i);
      },
      pool);
}

TEST(SweepSchedule, RankZeroDealsPointsToAnotherRankAndSendsItEveryResult) {
  RelayPair relay;
  const std::vector<ScenarioSpec> points = {point("a"), point("b"), point("c")};
  std::atomic<bool> other_ok{false};
  std::string other_error;
  std::size_t taken = 0;
  std::thread rank1([&] {
    const int fd = relay.fds[1];
    send_frame(fd, SweepFrameKind::data, 1,
               json{{"t", "begin"}, {"sweep", 0}, {"digest", sweep_digest(points)}, {"points", 3}}.dump());
    // Ask until rank 0 has no point left, running each at once.
    for (;;) {
      send_frame(fd, SweepFrameKind::data, 1, json{{"t", "next"}, {"sweep", 0}}.dump());
      const json m = receive_json(fd);
      if (m.value("t", "") == "none") break;
      if (m.value("t", "") != "take") {
        other_error = "wanted take or none, got " + m.dump();
        return;
      }
      ++taken;
      send_frame(fd, SweepFrameKind::data, 1,
                 json{{"t", "done"},
                      {"sweep", 0},
                      {"index", m["index"]},
                      {"result", {{"ok", true}, {"payload", "rank 1"}, {"error", ""}, {"log_tail", json::array()}}}}
                     .dump());
    }
    const json results = receive_json(fd);
    if (results.value("t", "") != "results" || results["results"].size() != 3) {
      other_error = "wanted the 3 results, got " + results.dump();
      return;
    }
    other_ok = true;
  });
  Result<std::vector<ChildJobResult>> all = run_slow_rank0(relay.fds[0], points);
  rank1.join();
  ASSERT_TRUE(all.ok()) << all.status().to_string();
  EXPECT_TRUE(other_ok) << other_error;
  std::size_t by_rank1 = 0;
  for (const ChildJobResult& r : *all) {
    EXPECT_TRUE(r.ok);
    by_rank1 += r.payload == "rank 1" ? 1 : 0;
  }
  EXPECT_GE(taken, 1u);
  EXPECT_EQ(by_rank1, taken);
}

TEST(SweepSchedule, ADifferentPointListFailsTheCallOnEveryRankNamingIt) {
  RelayPair relay;
  const std::vector<ScenarioSpec> points = {point("a"), point("b")};
  json answer;
  std::thread rank1([&] {
    const int fd = relay.fds[1];
    send_frame(fd, SweepFrameKind::data, 1,
               json{{"t", "begin"}, {"sweep", 0}, {"digest", sweep_digest({point("z")})}, {"points", 1}}.dump());
    // Rank 0 may have answered the begin and closed its end already: then
    // this ask is refused (EPIPE), and the abort is still there to read.
    (void)try_send_frame(fd, SweepFrameKind::data, 1, json{{"t", "next"}, {"sweep", 0}}.dump());
    answer = receive_json(fd);
  });
  Result<std::vector<ChildJobResult>> all = run_slow_rank0(relay.fds[0], points);
  rank1.join();
  ASSERT_FALSE(all.ok());
  EXPECT_NE(all.status().message().find("rank 1's point list differs from rank 0's"), std::string::npos)
      << all.status().to_string();
  EXPECT_EQ(answer.value("t", ""), "abort") << answer.dump();
}

TEST(SweepSchedule, ARankThatEndsWhileRunningAPointFailsThatPointNamingTheRank) {
  RelayPair relay;
  const std::vector<ScenarioSpec> points = {point("a"), point("b"), point("c")};
  std::thread rank1([&] {
    const int fd = relay.fds[1];
    send_frame(fd, SweepFrameKind::data, 1,
               json{{"t", "begin"}, {"sweep", 0}, {"digest", sweep_digest(points)}, {"points", 3}}.dump());
    send_frame(fd, SweepFrameKind::data, 1, json{{"t", "next"}, {"sweep", 0}}.dump());
    (void)receive_json(fd);  // its point: then it dies
    send_frame(fd, SweepFrameKind::ended, 1, "killed by signal 9 (Killed)");
  });
  Result<std::vector<ChildJobResult>> all = run_slow_rank0(relay.fds[0], points);
  rank1.join();
  ASSERT_TRUE(all.ok()) << all.status().to_string();
  std::size_t failed = 0;
  for (const ChildJobResult& r : *all) {
    if (r.ok) continue;
    ++failed;
    EXPECT_NE(r.error.find("rank 1's sluice run ended (killed by signal 9 (Killed)) while it ran this point"),
              std::string::npos)
        << r.error;
  }
  EXPECT_EQ(failed, 1u);
}

TEST(SweepSchedule, TheRelaysEnvironmentIsCheckedBeforeUse) {
  ::unsetenv(k_sweep_fd_env);
  ::unsetenv(k_sweep_rank_env);
  ::unsetenv(k_sweep_size_env);
  Result<std::unique_ptr<SweepSchedule>> none = SweepSchedule::from_environment();
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->get(), nullptr);
  ::setenv(k_sweep_fd_env, "1", 1);
  ::setenv(k_sweep_rank_env, "3", 1);
  ::setenv(k_sweep_size_env, "2", 1);
  Result<std::unique_ptr<SweepSchedule>> bad = SweepSchedule::from_environment();
  EXPECT_EQ(bad.status().code(), StatusCode::invalid_argument);
  EXPECT_NE(bad.status().message().find("rank 3 of 2 ranks"), std::string::npos) << bad.status().to_string();
  ::setenv(k_sweep_rank_env, "x1", 1);
  bad = SweepSchedule::from_environment();
  EXPECT_NE(bad.status().message().find("SLUICE_SWEEP_RANK=\"x1\" is not a non-negative integer"), std::string::npos)
      << bad.status().to_string();
  ::unsetenv(k_sweep_fd_env);
  ::unsetenv(k_sweep_rank_env);
  ::unsetenv(k_sweep_size_env);
}

TEST(SweepSchedule, LongerPointsAreDealtFirst) {
  ScenarioSpec small = point("small");
  ScenarioSpec big = point("big");
  WorkloadSpec w;
  w.clients.nodes = {0};
  w.clients.ranks_per_node = 1;
  MdBenchConfig md;
  md.files_per_rank = 10;
  w.config = md;
  small.workloads.push_back(w);
  md.files_per_rank = 1000;
  w.config = md;
  big.workloads.push_back(w);
  EXPECT_GT(point_cost(big), point_cost(small));
  EXPECT_NE(sweep_digest({small, big}), sweep_digest({big, small}));
  EXPECT_EQ(sweep_digest({small, big}), sweep_digest({small, big}));
}

}  // namespace
}  // namespace sluice::scenario
