// The bounce pipeline's schedule with a fake source and a fake copier: no GPU needed.
#include "hw_backends/cuda/bounce_pipeline.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "core/common/pattern.hpp"

namespace sluice::hw::cuda {
namespace {

constexpr std::uint64_t k_chunk = 4096;

// Source bytes are the pattern (seed 7); every read is logged.
class FakeSource final : public ChunkSource {
 public:
  explicit FakeSource(std::uint64_t size, std::vector<std::string>* log) : bytes_(size), log_(log) {
    fill_pattern(bytes_, 7, 0);
  }
  Result<std::uint64_t> read(std::uint64_t offset, std::span<std::byte> buffer, std::uint64_t length) override {
    std::lock_guard lock(mu_);
    if (log_ != nullptr) log_->push_back("read " + std::to_string(offset / k_chunk));
    reads_.push_back(offset);
    if (fail_at_ && *fail_at_ == offset)
      return error(StatusCode::io_error, "fake read failed at " + std::to_string(offset));
    const std::uint64_t n = offset >= bytes_.size() ? 0 : std::min<std::uint64_t>(length, bytes_.size() - offset);
    std::memcpy(buffer.data(), bytes_.data() + offset, n);
    return n;
  }
  std::vector<std::byte> bytes_;
  std::vector<std::string>* log_;
  std::optional<std::uint64_t> fail_at_;
  std::vector<std::uint64_t> reads_;
  std::mutex mu_;
};

// An asynchronous copier: the bytes leave the staging buffer only at
// wait_copy, so a pipeline that reuses a buffer before waiting corrupts the result.
class FakeSink final : public ChunkSink {
 public:
  FakeSink(std::uint64_t size, std::vector<std::string>* log) : dst_(size), log_(log) {}
  Status begin_lane(std::uint32_t lane) override {
    std::lock_guard lock(mu_);
    lanes_begun_.insert(lane);
    return ok_status();
  }
  Status start_copy(std::uint32_t lane, std::uint32_t slot, std::span<const std::byte> from,
                    std::uint64_t dst_offset) override {
    std::lock_guard lock(mu_);
    if (log_ != nullptr) log_->push_back("copy " + std::to_string(dst_offset / k_chunk));
    if (fail_copy_at_ && *fail_copy_at_ == dst_offset) return error(StatusCode::io_error, "fake copy failed");
    EXPECT_FALSE(pending_.contains({lane, slot})) << "slot reused before its copy was waited for";
    pending_[{lane, slot}] = Pending{from, dst_offset};
    copies_by_lane_[lane].push_back(dst_offset);
    ++started_;
    return ok_status();
  }
  Status wait_copy(std::uint32_t lane, std::uint32_t slot) override {
    std::lock_guard lock(mu_);
    auto it = pending_.find({lane, slot});
    if (it == pending_.end()) return error(StatusCode::internal, "wait on an idle slot");
    if (log_ != nullptr) log_->push_back("wait " + std::to_string(it->second.dst_offset / k_chunk));
    std::memcpy(dst_.data() + it->second.dst_offset, it->second.from.data(), it->second.from.size());
    pending_.erase(it);
    ++waited_;
    return ok_status();
  }
  struct Pending {
    std::span<const std::byte> from;
    std::uint64_t dst_offset = 0;
  };
  std::vector<std::byte> dst_;
  std::vector<std::string>* log_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, Pending> pending_;
  std::set<std::uint32_t> lanes_begun_;
  std::map<std::uint32_t, std::vector<std::uint64_t>> copies_by_lane_;  // each lane's copies, in order
  std::optional<std::uint64_t> fail_copy_at_;
  int started_ = 0;
  int waited_ = 0;
  std::mutex mu_;
};

struct Staging {
  explicit Staging(std::size_t count, std::uint64_t bytes = k_chunk) : storage(count, std::vector<std::byte>(bytes)) {
    for (auto& s : storage) spans.emplace_back(s);
  }
  std::vector<std::vector<std::byte>> storage;
  std::vector<std::span<std::byte>> spans;
};

BounceConfig config(std::uint32_t threads, std::uint32_t depth) {
  BounceConfig c;
  c.buffer_bytes = k_chunk;
  c.reader_threads = threads;
  c.depth = depth;
  return c;
}

TEST(BouncePipeline, MovesEveryByteWithOneLaneIncludingAPartialLastChunk) {
  const std::uint64_t size = 5 * k_chunk + 100;
  FakeSource source(size, nullptr);
  FakeSink sink(size, nullptr);
  Staging staging(2);
  Result<BounceStats> stats = run_bounce_pipeline(source, sink, staging.spans, config(1, 2), 0, size);
  ASSERT_TRUE(stats.ok()) << stats.status().to_string();
  EXPECT_EQ(sink.dst_, source.bytes_);
  EXPECT_EQ(stats->chunks, 6u);
  EXPECT_EQ(stats->bytes, size);
  EXPECT_EQ(stats->max_copies_in_flight_per_lane, 2u);
}

TEST(BouncePipeline, ReadsTheNextChunkWhileThePreviousCopyIsInFlight) {
  std::vector<std::string> log;
  FakeSource source(4 * k_chunk, &log);
  FakeSink sink(4 * k_chunk, &log);
  Staging staging(2);
  ASSERT_TRUE(run_bounce_pipeline(source, sink, staging.spans, config(1, 2), 0, 4 * k_chunk).ok());
  const std::vector<std::string> expected = {"read 0", "copy 0", "read 1", "copy 1", "wait 0", "read 2",
                                             "copy 2", "wait 1", "read 3", "copy 3", "wait 2", "wait 3"};
  EXPECT_EQ(log, expected);
}

TEST(BouncePipeline, DepthOneSerializesReadAndCopy) {
  std::vector<std::string> log;
  FakeSource source(3 * k_chunk, &log);
  FakeSink sink(3 * k_chunk, &log);
  Staging staging(1);
  ASSERT_TRUE(run_bounce_pipeline(source, sink, staging.spans, config(1, 1), 0, 3 * k_chunk).ok());
  const std::vector<std::string> expected = {"read 0", "copy 0", "wait 0", "read 1", "copy 1",
                                             "wait 1", "read 2", "copy 2", "wait 2"};
  EXPECT_EQ(log, expected);
}

TEST(BouncePipeline, ManyLanesCoverEveryChunkExactlyOnce) {
  const std::uint64_t size = 100 * k_chunk;
  FakeSource source(size, nullptr);
  FakeSink sink(size, nullptr);
  Staging staging(8 * 3);
  Result<BounceStats> stats = run_bounce_pipeline(source, sink, staging.spans, config(8, 3), 0, size);
  ASSERT_TRUE(stats.ok()) << stats.status().to_string();
  EXPECT_EQ(sink.dst_, source.bytes_);
  std::uint64_t sum = 0;
  for (std::uint64_t c : stats->chunks_per_lane) sum += c;
  EXPECT_EQ(sum, 100u);
  EXPECT_EQ(std::set<std::uint64_t>(source.reads_.begin(), source.reads_.end()).size(), 100u);
  EXPECT_EQ(source.reads_.size(), 100u);
  EXPECT_EQ(sink.lanes_begun_.size(), 8u);
  EXPECT_EQ(sink.started_, sink.waited_);
}

// A task of several pieces (KvikIO's 16 MiB tasks through 4 MiB of staging):
// a lane moves its task's pieces in order, reading the next while the last
// is copied, and every byte lands once, the last task's last piece partial.
TEST(BouncePipeline, ATaskOfSeveralPiecesIsMovedInOrderByOneLaneOverlappingItsCopies) {
  std::vector<std::string> log;
  FakeSource one_source(8 * k_chunk, &log);
  FakeSink one_sink(8 * k_chunk, &log);
  Staging two(2);
  BounceConfig c = config(1, 2);
  c.task_bytes = 4 * k_chunk;
  ASSERT_TRUE(run_bounce_pipeline(one_source, one_sink, two.spans, c, 0, 3 * k_chunk).ok());
  const std::vector<std::string> expected = {"read 0", "copy 0", "read 1", "copy 1", "wait 0",
                                             "read 2", "copy 2", "wait 1", "wait 2"};
  EXPECT_EQ(log, expected);

  const std::uint64_t size = 13 * k_chunk + 100;
  FakeSource source(size, nullptr);
  FakeSink sink(size, nullptr);
  Staging staging(3 * 2);
  c = config(3, 2);
  c.task_bytes = 4 * k_chunk;
  Result<BounceStats> stats = run_bounce_pipeline(source, sink, staging.spans, c, 0, size);
  ASSERT_TRUE(stats.ok()) << stats.status().to_string();
  EXPECT_EQ(sink.dst_, source.bytes_);
  EXPECT_EQ(stats->chunks, 14u);  // pieces
  EXPECT_EQ(source.reads_.size(), 14u);
  EXPECT_EQ(stats->max_copies_in_flight_per_lane, 2u);
  for (const auto& [lane, offsets] : sink.copies_by_lane_) {
    for (std::size_t i = 0; i < offsets.size(); ++i) {
      const std::uint64_t piece = offsets[i] / k_chunk;
      if (piece % 4 != 0) {  // inside a task: the piece before it, by the same lane
        ASSERT_GT(i, 0u) << "lane " << lane;
        EXPECT_EQ(offsets[i - 1] / k_chunk, piece - 1) << "lane " << lane;
      }
    }
  }
  c.task_bytes = 4 * k_chunk + 1;
  EXPECT_EQ(check_bounce_config(c).code(), StatusCode::invalid_argument);
  c.task_bytes = 0;  // one piece per task
  EXPECT_TRUE(check_bounce_config(c).ok());
  c.buffer_bytes = 2 * k_chunk;
  c.task_bytes = k_chunk;  // smaller than a piece
  EXPECT_EQ(check_bounce_config(c).code(), StatusCode::invalid_argument);
}

TEST(BouncePipeline, ReadsFromASourceOffset) {
  const std::uint64_t size = 6 * k_chunk;
  FakeSource source(size, nullptr);
  FakeSink sink(2 * k_chunk, nullptr);
  Staging staging(4);
  ASSERT_TRUE(run_bounce_pipeline(source, sink, staging.spans, config(2, 2), 3 * k_chunk, 2 * k_chunk).ok());
  EXPECT_EQ(0, std::memcmp(sink.dst_.data(), source.bytes_.data() + 3 * k_chunk, 2 * k_chunk));
}

TEST(BouncePipeline, ASourceErrorStopsTheLanesAndDrainsStartedCopies) {
  const std::uint64_t size = 40 * k_chunk;
  FakeSource source(size, nullptr);
  source.fail_at_ = 3 * k_chunk;
  FakeSink sink(size, nullptr);
  Staging staging(4 * 2);
  Result<BounceStats> stats = run_bounce_pipeline(source, sink, staging.spans, config(4, 2), 0, size);
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.status().code(), StatusCode::io_error);
  EXPECT_NE(stats.status().message().find("fake read failed at 12288"), std::string::npos);
  EXPECT_EQ(sink.started_, sink.waited_);
  EXPECT_TRUE(sink.pending_.empty());
}

TEST(BouncePipeline, ACopyErrorIsReturned) {
  FakeSource source(4 * k_chunk, nullptr);
  FakeSink sink(4 * k_chunk, nullptr);
  sink.fail_copy_at_ = 2 * k_chunk;
  Staging staging(2);
  Result<BounceStats> stats = run_bounce_pipeline(source, sink, staging.spans, config(1, 2), 0, 4 * k_chunk);
  ASSERT_FALSE(stats.ok());
  EXPECT_NE(stats.status().message().find("fake copy failed"), std::string::npos);
  EXPECT_EQ(sink.started_, sink.waited_);
}

TEST(BouncePipeline, ASourceThatEndsEarlyIsAnIoErrorNamingTheOffset) {
  FakeSource source(2 * k_chunk, nullptr);
  FakeSink sink(3 * k_chunk, nullptr);
  Staging staging(2);
  Result<BounceStats> stats = run_bounce_pipeline(source, sink, staging.spans, config(1, 2), 0, 3 * k_chunk);
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.status().code(), StatusCode::io_error);
  EXPECT_NE(stats.status().message().find("source ended at offset 8192"), std::string::npos);
}

TEST(BouncePipeline, RejectsBadConfigsAndTooFewOrTooSmallBuffers) {
  FakeSource source(k_chunk, nullptr);
  FakeSink sink(k_chunk, nullptr);
  Staging staging(4);
  BounceConfig c = config(1, 2);
  c.buffer_bytes = 1000;
  EXPECT_EQ(run_bounce_pipeline(source, sink, staging.spans, c, 0, k_chunk).status().code(),
            StatusCode::invalid_argument);
  EXPECT_EQ(check_bounce_config(config(0, 2)).code(), StatusCode::invalid_argument);
  EXPECT_EQ(check_bounce_config(config(k_max_bounce_reader_threads + 1, 2)).code(), StatusCode::invalid_argument);
  EXPECT_EQ(check_bounce_config(config(1, 0)).code(), StatusCode::invalid_argument);
  EXPECT_TRUE(check_bounce_config(config(k_max_bounce_reader_threads, 8)).ok());
  Result<BounceStats> few = run_bounce_pipeline(source, sink, staging.spans, config(3, 2), 0, k_chunk);
  EXPECT_EQ(few.status().code(), StatusCode::invalid_argument);
  Staging small(2, k_chunk / 2);
  EXPECT_EQ(run_bounce_pipeline(source, sink, small.spans, config(1, 2), 0, k_chunk).status().code(),
            StatusCode::invalid_argument);
  EXPECT_EQ(run_bounce_pipeline(source, sink, staging.spans, config(1, 2), ~0ULL, 2).status().code(),
            StatusCode::invalid_argument);
}

TEST(BouncePipeline, EmptyRangeMovesNothing) {
  FakeSource source(k_chunk, nullptr);
  FakeSink sink(k_chunk, nullptr);
  Staging staging(2);
  Result<BounceStats> stats = run_bounce_pipeline(source, sink, staging.spans, config(1, 2), 0, 0);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->chunks, 0u);
  EXPECT_EQ(sink.started_, 0);
}

TEST(BounceDepth, CoversTheCopiesRunningWhileTheNextPieceIsRead) {
  // A lane reading 5 GB/s whose 1 MiB copy takes 0.5 ms: 2.5 MB read while
  // one copy runs = 2.38 pieces -> 3 copies still running, +1 being read -> 4.
  Result<std::uint32_t> d = bounce_depth(5e9, 500'000, 1ULL << 20);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(*d, 4u);
  // Copies faster than reads (one page-cache reader at 5.9 GB/s, a 4 MiB
  // copy at 55 GB/s): double buffering, the window's minimum.
  EXPECT_EQ(*bounce_depth(5.9e9, static_cast<TimeNs>(4.0 * (1 << 20) / 55e9 * 1e9), 4ULL << 20), 2u);
  EXPECT_EQ(*bounce_depth(50e9, 100'000'000, 256ULL << 10), 8u);  // the window's maximum
  EXPECT_FALSE(bounce_depth(0, 1, 1).ok());
}

TEST(BounceDepth, KeepsALanesStagingWithinItsShareOfTheCache) {
  // The window would be 8; k_bounce_lane_cache_bytes holds two 4 MiB pieces.
  EXPECT_EQ(*bounce_depth(50e9, 100'000'000, 4ULL << 20), k_bounce_lane_cache_bytes / (4ULL << 20));
  // A piece larger than the share: one buffer, read then copied.
  EXPECT_EQ(*bounce_depth(5.9e9, 1'000'000, 16ULL << 20), 1u);
}

}  // namespace
}  // namespace sluice::hw::cuda
