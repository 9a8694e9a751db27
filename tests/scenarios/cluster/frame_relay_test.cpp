// FrameRelay (scenarios/deploy/frame_relay.hpp), the relay of the ranks that
// `sluice run --backend emulate` forks: the ranks' own SweepSchedule and
// RankBootstrap over it make the cluster path's collectives; a rank that ends
// is announced once to the others, whose collectives then fail naming it;
// frames to it are dropped; a rank that sends what is not a data frame to a
// rank is ended. Ranks are threads here, each with its end of a socketpair;
// the relay runs on a thread of its own until every socket closed.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "base/fd_io.hpp"
#include "scenarios/deploy/frame_relay.hpp"
#include "scenarios/deploy/rank_bootstrap.hpp"
#include "scenarios/runner/sweep_relay_wire.hpp"
#include "scenarios/runner/sweep_schedule.hpp"

namespace sluice::emulate {
namespace {

using scenario::decode_sweep_frame_header;
using scenario::encode_sweep_frame_header;
using scenario::k_sweep_frame_header_bytes;
using scenario::SweepFrameHeader;
using scenario::SweepFrameKind;

constexpr auto k_timeout = std::chrono::milliseconds(10'000);
constexpr int k_relay_limit_ms = 20'000;  // the relay thread's bound, whatever the test does

// n socketpairs: the ranks' ends, and a relay over the others on a thread
// that runs until every rank's socket closed (or the bound).
class RelayedRanks {
 public:
  explicit RelayedRanks(std::size_t n) {
    std::vector<int> relay_ends;
    for (std::size_t i = 0; i < n; ++i) {
      int pair[2];
      EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
      relay_ends.push_back(pair[0]);
      rank_fds_.push_back(pair[1]);
    }
    thread_ = std::thread([this, fds = std::move(relay_ends)]() mutable {
      FrameRelay relay(std::move(fds));
      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(k_relay_limit_ms);
      while (relay.open_count() > 0 && std::chrono::steady_clock::now() < until) {
        std::vector<pollfd> polls;
        relay.add_polls(polls);
        if (::poll(polls.data(), polls.size(), 100) > 0) relay.on_polled(polls.data());
      }
      open_at_end_ = relay.open_count();
    });
  }
  ~RelayedRanks() {
    for (int fd : rank_fds_) {
      if (fd >= 0) ::close(fd);
    }
    join();
  }
  // Rank r's end; the caller owns it from now on.
  int take(std::size_t r) {
    const int fd = rank_fds_[r];
    rank_fds_[r] = -1;
    return fd;
  }
  void join() {
    if (thread_.joinable()) thread_.join();
  }
  std::uint32_t open_at_end() const { return open_at_end_; }

 private:
  std::vector<int> rank_fds_;
  std::thread thread_;
  std::atomic<std::uint32_t> open_at_end_{0};
};

TEST(FrameRelay, TheClusterPathsCollectivesRunOverIt) {
  constexpr std::uint32_t n = 3;
  RelayedRanks ranks(n);
  std::vector<std::vector<std::string>> tables(n);
  std::vector<Status> barriers(n);
  std::vector<std::vector<std::string>> gathered(n);
  std::vector<std::thread> threads;
  for (std::uint32_t r = 0; r < n; ++r) {
    threads.emplace_back([&, r, fd = ranks.take(r)] {
      scenario::SweepSchedule schedule(r, n, fd);  // closes fd when it goes: the relay sees the rank end
      RankBootstrap b(schedule, k_timeout);
      // A large item crosses too (non-blocking writes in pieces).
      const std::string mine = r == 1 ? std::string(3 << 20, 'b') : "r" + std::to_string(r);
      Result<std::vector<std::string>> all = b.all_gather(mine);
      if (all.ok()) tables[r] = *all;
      barriers[r] = b.barrier("servers-up");
      Result<std::vector<std::string>> g = b.gather_to_root("doc" + std::to_string(r));
      if (g.ok()) gathered[r] = *g;
    });
  }
  for (auto& t : threads) t.join();
  for (std::uint32_t r = 0; r < n; ++r) {
    ASSERT_EQ(tables[r].size(), n) << r;
    EXPECT_EQ(tables[r][0], "r0");
    EXPECT_EQ(tables[r][1], std::string(3 << 20, 'b'));
    EXPECT_EQ(tables[r][2], "r2");
    EXPECT_TRUE(barriers[r].ok()) << barriers[r].message();
  }
  EXPECT_EQ(gathered[0], (std::vector<std::string>{"doc0", "doc1", "doc2"}));
  EXPECT_TRUE(gathered[1].empty());
  ranks.join();
  EXPECT_EQ(ranks.open_at_end(), 0u);
}

TEST(FrameRelay, ARankThatEndsIsAnnouncedAndFailsTheOthersCollective) {
  constexpr std::uint32_t n = 3;
  RelayedRanks ranks(n);
  ::close(ranks.take(2));  // rank 2's process ended before its first collective
  std::vector<Status> got(2);
  std::vector<std::thread> threads;
  for (std::uint32_t r = 0; r < 2; ++r) {
    threads.emplace_back([&, r, fd = ranks.take(r)] {
      scenario::SweepSchedule schedule(r, n, fd);
      RankBootstrap b(schedule, k_timeout);
      got[r] = b.all_gather("x").status();
    });
  }
  for (auto& t : threads) t.join();
  for (std::uint32_t r = 0; r < 2; ++r) {
    ASSERT_FALSE(got[r].ok()) << r;
    EXPECT_NE(got[r].message().find("rank 2"), std::string::npos) << got[r].message();
    EXPECT_NE(got[r].message().find("its process ended"), std::string::npos) << got[r].message();
  }
}

// Frames at the byte level: what rank 0 reads from the relay.
struct Frame {
  SweepFrameKind kind;
  std::uint32_t rank;
  std::string payload;
};

Frame read_frame(int fd) {
  pollfd p{fd, POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 10'000), 1) << "no frame came";
  std::array<std::byte, k_sweep_frame_header_bytes> head{};
  EXPECT_TRUE(read_exact(fd, head.data(), head.size()));
  const auto h = decode_sweep_frame_header(head);
  EXPECT_TRUE(h.has_value());
  if (!h) return {};
  Frame f{h->kind, h->rank, std::string(h->payload_bytes, '\0')};
  EXPECT_TRUE(read_exact(fd, f.payload.data(), f.payload.size()));
  return f;
}

// Sent with MSG_NOSIGNAL: a frame the relay refuses ends its sender, and the
// relay may close the sender's socket after reading the header, before the
// payload is written (EPIPE then, never SIGPIPE killing the test).
bool try_write_frame(int fd, std::uint32_t to, const std::string& payload, SweepFrameKind kind) {
  const auto h = encode_sweep_frame_header(SweepFrameHeader{static_cast<std::uint32_t>(payload.size()), kind, to});
  return send_exact(fd, h.data(), h.size()) && send_exact(fd, payload.data(), payload.size());
}

void write_frame(int fd, std::uint32_t to, const std::string& payload, SweepFrameKind kind = SweepFrameKind::data) {
  ASSERT_TRUE(try_write_frame(fd, to, payload, kind)) << std::strerror(errno);
}

// A frame that ends its sender: the write may fail once the relay closed it.
void write_refused_frame(int fd, std::uint32_t to, const std::string& payload, SweepFrameKind kind) {
  if (!try_write_frame(fd, to, payload, kind)) {
    EXPECT_EQ(errno, EPIPE) << std::strerror(errno);
  }
}

TEST(FrameRelay, DataIsStampedWithItsSenderAndARankThatSendsGarbageIsEndedOnce) {
  RelayedRanks ranks(3);
  const int r0 = ranks.take(0);
  const int r1 = ranks.take(1);
  const int r2 = ranks.take(2);
  write_frame(r1, 0, "hello from 1");
  Frame f = read_frame(r0);
  EXPECT_EQ(f.kind, SweepFrameKind::data);
  EXPECT_EQ(f.rank, 1u);
  EXPECT_EQ(f.payload, "hello from 1");
  // An ended frame is the relay's to send, never a rank's: rank 2 is ended.
  write_refused_frame(r2, 0, "", SweepFrameKind::ended);
  f = read_frame(r0);
  EXPECT_EQ(f.kind, SweepFrameKind::ended);
  EXPECT_EQ(f.rank, 2u);
  EXPECT_NE(f.payload.find("not data"), std::string::npos) << f.payload;
  // A frame to the ended rank is dropped; the next one to a live rank arrives.
  write_frame(r1, 2, "to the dead");
  write_frame(r1, 0, "still here");
  f = read_frame(r0);
  EXPECT_EQ(f.kind, SweepFrameKind::data);
  EXPECT_EQ(f.payload, "still here");
  // A rank named that is not one: the sender is ended, announced once.
  write_refused_frame(r1, 7, "nowhere", SweepFrameKind::data);
  f = read_frame(r0);
  EXPECT_EQ(f.kind, SweepFrameKind::ended);
  EXPECT_EQ(f.rank, 1u);
  EXPECT_NE(f.payload.find("rank 7"), std::string::npos) << f.payload;
  ::close(r1);
  ::close(r2);
  pollfd p{r0, POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 300), 0) << "an ended rank was announced twice";
  ::close(r0);
  ranks.join();
  EXPECT_EQ(ranks.open_at_end(), 0u);
}

}  // namespace
}  // namespace sluice::emulate
