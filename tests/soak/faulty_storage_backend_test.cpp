// hw_backends/faulty_storage_backend: each injected fault does what its
// contract says on a real posix target, and the fates come from the seed.
#include <gtest/gtest.h>
#include <poll.h>

#include <filesystem>
#include <limits>
#include <numeric>

#include "core/proto/crc32c.hpp"
#include "hw_backends/faulty_storage_backend.hpp"

namespace sluice::hw {
namespace {

// Waits for a completion (bounded: the device is a local file).
constexpr int k_poll_timeout_ms = 5000;
constexpr int k_max_polls = 100;

class FaultyBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("sluice_faulty_" + std::to_string(::getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<FaultyStorageBackend> make(StorageFaultConfig faults, std::uint64_t seed = 1) {
    StorageTargetConfig config;
    config.directory = dir_.string();
    config.direct_io = DirectIoMode::off;
    Result<std::unique_ptr<StorageBackend>> inner = create_storage_backend("posix", config);
    EXPECT_TRUE(inner.ok()) << inner.status().to_string();
    Result<std::unique_ptr<FaultyStorageBackend>> b =
        FaultyStorageBackend::create(std::move(inner).value(), faults, seed);
    EXPECT_TRUE(b.ok()) << b.status().to_string();
    return std::move(b).value();
  }

  StorageCompletion run(StorageBackend& b, StorageOp op, std::span<std::byte> buffer, std::uint64_t offset = 0) {
    StorageRequest r;
    r.op = op;
    r.file_id = 7;
    r.object_offset = offset;
    r.buffer = buffer;
    r.cookie = ++cookie_;
    EXPECT_TRUE(b.submit(r).ok());
    std::vector<StorageCompletion> out;
    for (int i = 0; i < k_max_polls && out.empty(); ++i) {
      if (b.poll(out, 1) > 0) break;
      pollfd fd{b.completion_fd(), POLLIN, 0};
      ::poll(&fd, 1, k_poll_timeout_ms);
    }
    EXPECT_EQ(out.size(), 1u);
    return out.empty() ? StorageCompletion{} : out[0];
  }

  std::uint64_t size_of(StorageBackend& b) { return run(b, StorageOp::stat, {}).bytes; }

  static std::vector<std::byte> data(std::size_t n) {
    std::vector<std::byte> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>(i * 31 + 7);
    return v;
  }
  static std::size_t bits_differing(std::span<const std::byte> a, std::span<const std::byte> b) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
      n += static_cast<std::size_t>(std::popcount(std::to_integer<unsigned>(a[i] ^ b[i])));
    return n;
  }

  std::filesystem::path dir_;
  std::uint64_t cookie_ = 0;
};

TEST_F(FaultyBackendTest, InjectedErrorFailsAndWritesNothing) {
  auto b = make({.error_probability = 1.0});
  std::vector<std::byte> w = data(10000);
  StorageCompletion c = run(*b, StorageOp::write, w);
  EXPECT_EQ(c.status.code(), StatusCode::io_error);
  EXPECT_NE(c.status.message().find("injected"), std::string::npos);
  EXPECT_EQ(size_of(*b), 0u);
  EXPECT_EQ(b->fault_stats().errors, 1u);
}

TEST_F(FaultyBackendTest, TornWriteKeepsWholeBlocksAndFails) {
  auto b = make({.torn_write_probability = 1.0}, 3);
  std::vector<std::byte> w = data(5 * k_direct_io_alignment_bytes + 100);
  StorageCompletion c = run(*b, StorageOp::write, w);
  EXPECT_EQ(c.status.code(), StatusCode::io_error);
  const std::uint64_t kept = size_of(*b);
  EXPECT_LT(kept, w.size());
  EXPECT_EQ(kept % k_direct_io_alignment_bytes, 0u);
  EXPECT_EQ(b->fault_stats().torn_writes, 1u);
}

TEST_F(FaultyBackendTest, ReadFlipIsCaughtByTheCompletionsCrc) {
  auto b = make({});
  std::vector<std::byte> w = data(20000);
  ASSERT_TRUE(run(*b, StorageOp::write, w).status.ok());
  ASSERT_TRUE(b->set_faults({.read_flip_probability = 1.0}).ok());
  std::vector<std::byte> r(w.size());
  StorageCompletion c = run(*b, StorageOp::read, r);
  ASSERT_TRUE(c.status.ok());
  EXPECT_EQ(bits_differing(w, r), 1u);
  ASSERT_TRUE(c.crc_valid);
  EXPECT_EQ(c.crc32c, proto::crc32c(w)) << "the CRC is of the true bytes";
  EXPECT_NE(c.crc32c, proto::crc32c(r)) << "so a checksum of what arrived does not match it";
}

TEST_F(FaultyBackendTest, RestFlipIsSilentOnEveryLaterRead) {
  auto b = make({.rest_flip_probability = 1.0}, 5);
  std::vector<std::byte> w = data(20000);
  StorageCompletion wrote = run(*b, StorageOp::write, w);
  ASSERT_TRUE(wrote.status.ok());
  EXPECT_EQ(wrote.crc32c, proto::crc32c(w)) << "the drive claims it stored what it was given";
  ASSERT_TRUE(b->set_faults({}).ok());
  std::vector<std::byte> r(w.size());
  StorageCompletion c = run(*b, StorageOp::read, r);
  ASSERT_TRUE(c.status.ok());
  EXPECT_EQ(bits_differing(w, r), 1u);
  EXPECT_EQ(c.crc32c, proto::crc32c(r)) << "the read's CRC matches the flipped bytes: only the write-time CRC differs";
  EXPECT_NE(c.crc32c, wrote.crc32c);
}

TEST_F(FaultyBackendTest, FatesComeFromTheSeed) {
  auto fates = [this](std::uint64_t seed) {
    auto b = make({.error_probability = 0.5}, seed);
    std::string out;
    std::vector<std::byte> w = data(4096);
    for (int i = 0; i < 32; ++i) out += run(*b, StorageOp::write, w).status.ok() ? '.' : 'E';
    return out;
  };
  const std::string a = fates(11);
  EXPECT_EQ(a, fates(11));
  EXPECT_NE(a, fates(12));
  EXPECT_NE(a.find('E'), std::string::npos);
  EXPECT_NE(a.find('.'), std::string::npos);
}

TEST_F(FaultyBackendTest, ASlowdownHoldsCompletionsAndRestoringTheSpeedReleasesThem) {
  auto b = make({});
  EXPECT_EQ(b->set_slowdown(0.5).code(), StatusCode::invalid_argument);
  EXPECT_EQ(b->set_slowdown(std::numeric_limits<double>::infinity()).code(), StatusCode::invalid_argument);
  // A factor so large the completion cannot come back while this test runs.
  ASSERT_TRUE(b->set_slowdown(1e9).ok());
  std::vector<std::byte> w = data(8192);
  StorageRequest r;
  r.op = StorageOp::write;
  r.file_id = 7;
  r.buffer = w;
  r.cookie = 99;
  ASSERT_TRUE(b->submit(r).ok());
  // The inner write completes; the wrapper holds its completion.
  std::vector<StorageCompletion> out;
  for (int i = 0; i < k_max_polls && b->held() == 0; ++i) {
    EXPECT_EQ(b->poll(out, 8), 0u);
    pollfd fd{b->completion_fd(), POLLIN, 0};
    ::poll(&fd, 1, 50);
  }
  ASSERT_EQ(b->held(), 1u);
  EXPECT_TRUE(out.empty());
  // Normal speed: the completion fd wakes the caller and the held completion comes out, intact.
  ASSERT_TRUE(b->set_slowdown(1.0).ok());
  pollfd fd{b->completion_fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&fd, 1, k_poll_timeout_ms), 1) << "the completion fd did not wake for the released completion";
  ASSERT_EQ(b->poll(out, 8), 1u);
  EXPECT_EQ(out[0].cookie, 99u);
  EXPECT_TRUE(out[0].status.ok()) << out[0].status.to_string();
  EXPECT_EQ(out[0].bytes, w.size());
  EXPECT_EQ(b->fault_stats().slowed, 1u);
  EXPECT_EQ(b->held(), 0u);
  // And later requests run at normal speed again.
  std::vector<std::byte> back(w.size());
  StorageCompletion c = run(*b, StorageOp::read, back);
  EXPECT_TRUE(c.status.ok());
  EXPECT_EQ(back, w);
}

TEST_F(FaultyBackendTest, AModerateSlowdownDeliversEveryCompletionThroughItsTimer) {
  auto b = make({});
  ASSERT_TRUE(b->set_slowdown(3.0).ok());
  std::vector<std::byte> w = data(4096);
  for (std::uint64_t i = 0; i < 4; ++i) {
    StorageCompletion c = run(*b, StorageOp::write, w, i * w.size());  // waits on completion_fd, bounded
    EXPECT_TRUE(c.status.ok()) << c.status.to_string();
  }
  EXPECT_EQ(b->fault_stats().slowed, 4u);
  EXPECT_EQ(size_of(*b), 4 * w.size());
}

TEST_F(FaultyBackendTest, RefusesProbabilitiesOutsideZeroOne) {
  auto b = make({});
  EXPECT_EQ(b->set_faults({.error_probability = 1.5}).code(), StatusCode::invalid_argument);
  EXPECT_EQ(FaultyStorageBackend::create(nullptr, {}, 1).status().code(), StatusCode::invalid_argument);
}

}  // namespace
}  // namespace sluice::hw
