#include "hw_backends/cuda/pinned_pool.hpp"

#include <gtest/gtest.h>

#include "hw_backends/cuda/cuda_device.hpp"

namespace sluice::hw::cuda {
namespace {

PinnedPoolLimits small_limits() {
  PinnedPoolLimits l;
  l.buffer_bytes = 8192;
  l.max_buffers_per_numa = 3;
  l.max_bytes_per_numa = 1 << 20;
  return l;
}

TEST(PinnedPool, LendsUpToTheNodeLimitThenSaysAgain) {
  auto pool = PinnedPool::create(small_limits(), host_test_allocator());
  ASSERT_TRUE(pool.ok()) << pool.status().to_string();
  std::vector<std::span<std::byte>> lent;
  for (int i = 0; i < 3; ++i) {
    auto b = (*pool)->acquire(0);
    ASSERT_TRUE(b.ok()) << b.status().to_string();
    EXPECT_EQ(b->size(), 8192u);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b->data()) % k_staging_alignment_bytes, 0u);
    lent.push_back(*b);
  }
  auto more = (*pool)->acquire(0);
  EXPECT_EQ(more.status().code(), StatusCode::again);
  EXPECT_NE(more.status().message().find("NUMA node 0"), std::string::npos);
  EXPECT_EQ((*pool)->stats(0).lent, 3u);
  // Another node has its own limit.
  EXPECT_TRUE((*pool)->acquire(1).ok());
  EXPECT_EQ((*pool)->stats(1).buffers, 1u);
  ASSERT_TRUE((*pool)->release(0, lent[1]).ok());
  auto again = (*pool)->acquire(0);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->data(), lent[1].data());  // reused, not made anew
  EXPECT_EQ((*pool)->stats(0).buffers, 3u);
  EXPECT_EQ((*pool)->stats(0).bytes, 3u * 8192u);
}

TEST(PinnedPool, TheByteLimitBindsBeforeTheBufferLimit) {
  PinnedPoolLimits l = small_limits();
  l.max_bytes_per_numa = 2 * 8192 + 100;
  auto pool = PinnedPool::create(l, host_test_allocator());
  ASSERT_TRUE(pool.ok());
  EXPECT_TRUE((*pool)->acquire(0).ok());
  EXPECT_TRUE((*pool)->acquire(0).ok());
  EXPECT_EQ((*pool)->acquire(0).status().code(), StatusCode::again);
}

TEST(PinnedPool, ReservesBuffersAheadUpToTheLimit) {
  auto pool = PinnedPool::create(small_limits(), host_test_allocator());
  ASSERT_TRUE(pool.ok());
  ASSERT_TRUE((*pool)->reserve(0, 2).ok());
  EXPECT_EQ((*pool)->stats(0).buffers, 2u);
  EXPECT_EQ((*pool)->stats(0).lent, 0u);
  EXPECT_EQ((*pool)->reserve(0, 4).code(), StatusCode::again);  // the limit is 3
  EXPECT_EQ((*pool)->stats(0).buffers, 3u);
  EXPECT_EQ((*pool)->stats(0).lent, 0u);
}

TEST(PinnedPool, RejectsForeignAndDoubleReleases) {
  auto pool = PinnedPool::create(small_limits(), host_test_allocator());
  ASSERT_TRUE(pool.ok());
  auto b = (*pool)->acquire(0);
  ASSERT_TRUE(b.ok());
  std::vector<std::byte> foreign(8192);
  EXPECT_EQ((*pool)->release(0, foreign).code(), StatusCode::invalid_argument);
  EXPECT_EQ((*pool)->release(1, *b).code(), StatusCode::invalid_argument);
  EXPECT_TRUE((*pool)->release(0, *b).ok());
  EXPECT_EQ((*pool)->release(0, *b).code(), StatusCode::invalid_argument);
  EXPECT_EQ((*pool)->acquire(k_max_numa_nodes).status().code(), StatusCode::invalid_argument);
}

TEST(PinnedPool, RejectsLimitsWithoutAName) {
  PinnedPoolLimits l = small_limits();
  l.buffer_bytes = 1000;
  EXPECT_EQ(PinnedPool::create(l, host_test_allocator()).status().code(), StatusCode::invalid_argument);
  l = small_limits();
  l.buffer_bytes = k_max_staging_buffer_bytes + k_staging_alignment_bytes;
  EXPECT_EQ(PinnedPool::create(l, host_test_allocator()).status().code(), StatusCode::invalid_argument);
  l = small_limits();
  l.max_buffers_per_numa = 0;
  EXPECT_EQ(PinnedPool::create(l, host_test_allocator()).status().code(), StatusCode::invalid_argument);
  l = small_limits();
  l.max_bytes_per_numa = 4096;
  EXPECT_EQ(PinnedPool::create(l, host_test_allocator()).status().code(), StatusCode::invalid_argument);
  PinnedAllocator broken;
  broken.name = "broken";
  EXPECT_EQ(PinnedPool::create(small_limits(), broken).status().code(), StatusCode::invalid_argument);
}

TEST(PinnedPool, AnAllocatorFailureIsReportedAndLeavesNoHole) {
  PinnedAllocator a = host_test_allocator();
  int calls = 0;
  auto real = a.allocate;
  a.allocate = [&calls, real](std::uint16_t numa, std::uint64_t bytes) -> Result<std::byte*> {
    if (++calls == 1) return error(StatusCode::no_space, "planted failure");
    return real(numa, bytes);
  };
  auto pool = PinnedPool::create(small_limits(), a);
  ASSERT_TRUE(pool.ok());
  auto first = (*pool)->acquire(2);
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.status().code(), StatusCode::no_space);
  EXPECT_NE(first.status().message().find("planted failure"), std::string::npos);
  EXPECT_NE(first.status().message().find("NUMA node 2"), std::string::npos);
  EXPECT_EQ((*pool)->stats(2).buffers, 0u);
  EXPECT_TRUE((*pool)->acquire(2).ok());
  EXPECT_EQ((*pool)->stats(2).buffers, 1u);
}

TEST(PinnedPool, CudaAllocatorSaysWhyWithoutADevice) {
  if (cuda_available().ok()) GTEST_SKIP() << "a CUDA device is present (the GPU tests cover this allocator)";
  auto pool = PinnedPool::create(small_limits(), cuda_pinned_allocator());
  ASSERT_TRUE(pool.ok());
  auto b = (*pool)->acquire(0);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::unavailable);
  EXPECT_NE(b.status().message().find("cuda pinned"), std::string::npos);
}

}  // namespace
}  // namespace sluice::hw::cuda
