// Read-ahead at a storage server that reads through the page cache (issue 48:
// the roofline's read misses; SimProfile page_cache_read_ahead_bytes). A
// server that reads a chunk, then sends it, then reads the next one leaves
// the drive idle while it sends, unless the kernel reads ahead: with
// buffered reads the drive works on the next pieces of a sequential stream
// while the network carries the last one, so the stream goes at the slower
// of the two, not at their sum. Never faster than the drive: the bytes are
// read once.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "sim/sim_runtime.hpp"
#include "tests/sim/sim_test_support.hpp"

namespace sluice::testing {
namespace {

using sim::SimRuntime;
using sim::SimRuntimeConfig;

constexpr std::uint64_t k_piece = 1 * k_mib;
constexpr std::uint32_t k_pieces = 16;
constexpr double k_drive_bytes_per_s = 2.0e9;
constexpr TimeNs k_send_ns = 500'000;  // the network's share of each piece, a timer here

struct StreamRun {
  double seconds = 0;               // from the first read's start to the last send's end
  std::vector<double> read_done_s;  // each read's completion, from the start
  std::uint64_t bytes = 0;
  std::uint64_t read_ahead_pieces = 0;
  std::uint64_t read_ahead_hits = 0;
  std::uint64_t read_ahead_left = 0;  // read ahead, not consumed, at the end
  std::uint64_t read_ahead_after_flush = 0;
};

// Two nodes whose drives read at k_drive_bytes_per_s, and a profile whose
// drives cost only their bytes (no latency, no occupancy) and whose page
// cache copies at 8 GB/s: each test's figures follow from those alone.
std::shared_ptr<const topo::Topology> drive_cluster() {
  return small_cluster({.nodes = 2, .nvme_read_bytes_per_s = k_drive_bytes_per_s});
}

SimRuntimeConfig drive_only_config() {
  SimRuntimeConfig config;
  config.profile.disk_read_latency_ns = 0;
  config.profile.disk_write_latency_ns = 0;
  config.profile.disk_request_occupancy_ns = 0;
  config.profile.page_cache_copy_bytes_per_s = 8e9;
  return config;
}

// One reader reads pieces of an object of k_pieces pieces, one at a time:
// read a piece, "send" it (a timer of k_send_ns), read the next of `pieces`
// (all of them in order by default); then a flush.
StreamRun stream(bool buffered, std::vector<std::uint32_t> pieces = {}, std::uint64_t read_ahead_bytes = 0) {
  if (pieces.empty()) {
    for (std::uint32_t i = 0; i < k_pieces; ++i) pieces.push_back(i);
  }
  const std::string out = in_child_capture([&]() -> std::string {
    SimRuntimeConfig config = drive_only_config();
    if (read_ahead_bytes != 0) config.profile.page_cache_read_ahead_bytes = read_ahead_bytes;
    auto rt = SimRuntime::create(drive_cluster(), test_config(config)).value();
    EXPECT_TRUE(rt->add_target(1, 0).ok());
    rt->add_service<Probe>(0, [](Probe& p) {
      const MemHandle buffer = p.env().alloc(MemKind::pinned, 0, k_pieces * k_piece).value();
      p.env().storage_io(StorageIoSpec{StorageOp::write, 1, 7, 0, buffer, false});
    });
    rt->run_until_idle();
    const TimeNs start = rt->now();
    std::set<OpId> read_ops;
    std::size_t issued = 0;
    std::uint64_t bytes = 0;
    std::vector<TimeNs> read_done;
    TimeNs last_ns = start;
    rt->add_service<Probe>(0, [&](Probe& p) {
      const MemHandle buffer = p.env().alloc(MemKind::pinned, 0, k_piece).value();
      auto read_next = [&p, &read_ops, &issued, &pieces, buffer, buffered] {
        StorageIoSpec spec{StorageOp::read, 1, 7, pieces[issued] * k_piece, buffer, false};
        spec.buffered = buffered;
        ++issued;
        read_ops.insert(p.env().storage_io(spec));
      };
      p.on_completion = [&, read_next](Probe& self, const Completion& c) {
        if (read_ops.count(c.op) != 0) {
          EXPECT_TRUE(c.status.ok()) << c.status.message();
          bytes += c.bytes;
          read_done.push_back(self.env().now() - start);
          self.env().timer(k_send_ns);
          return;
        }
        last_ns = self.env().now();
        if (issued < pieces.size()) read_next();
      };
      read_next();
    });
    rt->run_until_idle();
    const std::uint64_t left = rt->read_ahead_bytes(0);
    rt->add_service<Probe>(0, [](Probe& p) {
      p.env().storage_io(StorageIoSpec{StorageOp::flush, 1, 0, 0, {}, false});
    });
    rt->run_until_idle();
    std::ostringstream o;
    o.precision(17);
    o << static_cast<double>(last_ns - start) * 1e-9 << ' ' << bytes << ' ' << rt->read_ahead_pieces() << ' '
      << rt->read_ahead_hits() << ' ' << left << ' ' << rt->read_ahead_bytes(0) << ' ' << read_done.size();
    for (TimeNs t : read_done) o << ' ' << static_cast<double>(t) * 1e-9;
    return o.str();
  });
  StreamRun run;
  std::istringstream in(out);
  std::size_t reads = 0;
  in >> run.seconds >> run.bytes >> run.read_ahead_pieces >> run.read_ahead_hits >> run.read_ahead_left >>
      run.read_ahead_after_flush >> reads;
  run.read_done_s.resize(reads);
  for (double& t : run.read_done_s) in >> t;
  EXPECT_FALSE(in.fail()) << "the child's figures: \"" << out << "\"";
  return run;
}

const double k_drive_s = static_cast<double>(k_piece) / k_drive_bytes_per_s;
const double k_send_s = static_cast<double>(k_send_ns) * 1e-9;
const double k_copy_s = static_cast<double>(k_piece) / 8e9;

TEST(SimReadAhead, ABufferedStreamGoesAtTheSlowerOfDriveAndNetworkNotTheirSum) {
  const StreamRun direct = stream(false);
  const StreamRun cached = stream(true);
  ASSERT_EQ(direct.bytes, k_pieces * k_piece);
  ASSERT_EQ(cached.bytes, k_pieces * k_piece);
  // O_DIRECT: each piece is read, then sent.
  EXPECT_NEAR(direct.seconds, k_pieces * (k_drive_s + k_send_s), 1e-4);
  EXPECT_EQ(direct.read_ahead_pieces, 0u);
  // Read-ahead: the drive reads the next pieces, one at a time, while the
  // last is sent. The first read shares the drive with the first piece read
  // ahead of it; after it, each piece costs the slower of its drive read
  // (done meanwhile) and the reader's own copy out of the cache and send;
  // the last send ends the stream.
  EXPECT_NEAR(cached.seconds, 2 * k_drive_s + (k_pieces - 1) * std::max(k_drive_s, k_copy_s + k_send_s) + k_send_s,
              1e-5);
  EXPECT_GE(cached.seconds, k_pieces * k_drive_s);  // never faster than the drive
  EXPECT_LT(cached.seconds, 0.8 * direct.seconds);
  EXPECT_EQ(cached.read_ahead_pieces, k_pieces - 1);  // every piece after the first
  EXPECT_EQ(cached.read_ahead_hits, k_pieces - 1);
  EXPECT_EQ(cached.read_ahead_left, 0u);  // each consumed once, the window stops at the object's end
}

TEST(SimReadAhead, APieceAReadWaitsForGoesAheadOfThoseReadForLater) {
  // An 8-piece window: pieces 1-8 queue at the drive behind the first read.
  // The reader then skips to piece 4: it waits for the piece at the drive
  // (2, started when 1 ended with the first read), then piece 4 goes next,
  // ahead of 3: a reader waits for its own bytes, not for the window's.
  const StreamRun run = stream(true, {0, 4}, 8 * k_piece);
  ASSERT_EQ(run.read_done_s.size(), 2u);
  EXPECT_NEAR(run.read_done_s[0], 2 * k_drive_s, 1e-6);
  const double piece_2_ends_s = 3 * k_drive_s;
  ASSERT_LT(run.read_done_s[0] + k_send_s, piece_2_ends_s);  // piece 4 is asked for while 2 is at the drive
  EXPECT_NEAR(run.read_done_s[1], piece_2_ends_s + k_drive_s + k_copy_s, 1e-6);
}

// Two readers, A and B, each start a stream of its own object at one drive
// (their first reads, then 4 pieces read ahead of each, queued behind the
// drive's one read-ahead at a time). At 1 us A asks for its piece 3, at 2 us
// B for its piece 2: both wait for pieces still queued. Returns when each of
// those two reads completed, from the start.
std::pair<double, double> two_waiting_readers() {
  const std::string out = in_child_capture([]() -> std::string {
    auto rt = SimRuntime::create(drive_cluster(), test_config(drive_only_config())).value();
    EXPECT_TRUE(rt->add_target(1, 0).ok());
    rt->add_service<Probe>(0, [](Probe& p) {
      const MemHandle buffer = p.env().alloc(MemKind::pinned, 0, k_pieces * k_piece).value();
      p.env().storage_io(StorageIoSpec{StorageOp::write, 1, 7, 0, buffer, false});
      p.env().storage_io(StorageIoSpec{StorageOp::write, 1, 8, 0, buffer, false});
    });
    rt->run_until_idle();
    const TimeNs start = rt->now();
    TimeNs a_done = 0;
    TimeNs b_done = 0;
    auto reader = [&](FileId object, TimeNs wait_ns, std::uint32_t piece, TimeNs* done) {
      rt->add_service<Probe>(0, [&, object, wait_ns, piece, done](Probe& p) {
        const MemHandle buffer = p.env().alloc(MemKind::pinned, 0, k_piece).value();
        auto read = [&p, object, buffer](std::uint32_t at) {
          StorageIoSpec spec{StorageOp::read, 1, object, at * k_piece, buffer, false};
          spec.buffered = true;
          return p.env().storage_io(spec);
        };
        read(0);
        const OpId timer = p.env().timer(wait_ns);
        p.on_completion = [&, read, timer, piece, done, wanted = OpId{0}](Probe& self, const Completion& c) mutable {
          EXPECT_TRUE(c.status.ok()) << c.status.message();
          if (c.op == timer) wanted = read(piece);
          if (c.op == wanted) *done = self.env().now() - start;
        };
      });
    };
    reader(7, 1'000, 3, &a_done);
    reader(8, 2'000, 2, &b_done);
    rt->run_until_idle();
    std::ostringstream o;
    o.precision(17);
    o << static_cast<double>(a_done) * 1e-9 << ' ' << static_cast<double>(b_done) * 1e-9;
    return o.str();
  });
  std::pair<double, double> done;
  std::istringstream in(out);
  in >> done.first >> done.second;
  EXPECT_FALSE(in.fail()) << "the child's figures: \"" << out << "\"";
  return done;
}

TEST(SimReadAhead, PiecesReadsWaitForGoToTheDriveInTheOrderTheyWereWanted) {
  // At the start the drive reads A's and B's first reads and A's piece 1 (the
  // first queued), 3 pieces shared alike: they end at 3 piece-times. A's piece
  // 3 was wanted first, so it goes next, then B's piece 2. The last-wanted
  // first would have read B's first: behind a stream of new readers, one
  // that asked long before could wait without end (a CosmoFlow epoch's rank
  // waited 0.3 s for its first sample in fluid mode, issue 50).
  const auto [a_s, b_s] = two_waiting_readers();
  EXPECT_NEAR(a_s, 4 * k_drive_s + k_copy_s, 1e-6);
  EXPECT_NEAR(b_s, 5 * k_drive_s + k_copy_s, 1e-6);
}

TEST(SimReadAhead, PiecesNotYetReadAreDroppedByAFlush) {
  const StreamRun partial = stream(true, {0, 1});
  // After the second read, the window (4 MiB: SimProfile's default) lies ahead of it.
  EXPECT_EQ(partial.read_ahead_hits, 1u);
  EXPECT_EQ(partial.read_ahead_left, sim::SimProfile{}.page_cache_read_ahead_bytes);
  EXPECT_EQ(partial.read_ahead_after_flush, 0u);
}

}  // namespace
}  // namespace sluice::testing
