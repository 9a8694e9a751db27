#include "core/sched/pipeline_window.hpp"

#include <gtest/gtest.h>

namespace sluice::sched {
namespace {

TEST(WindowChunks, CoversTheBandwidthDelayProductPlusOneChunk) {
  // 25 GB/s x 100 us = 2.5 MB in flight; 512 KiB chunks -> ceil(4.77) + 1 = 6.
  EXPECT_EQ(*window_chunks(25e9, 100 * k_ns_per_us, 512 * k_kib, WindowLimits{1, 64}), 6u);
  // Exactly one chunk per round trip -> 1 + 1.
  EXPECT_EQ(*window_chunks(1e9, k_ns_per_ms, 1'000'000, WindowLimits{1, 64}), 2u);
  // No delay: one chunk on the wire.
  EXPECT_EQ(*window_chunks(1e9, 0, 4096, WindowLimits{1, 64}), 1u);
}

TEST(WindowChunks, ClampsToTheNamedLimits) {
  EXPECT_EQ(*window_chunks(1e9, 0, 4096), k_default_min_window_chunks);
  EXPECT_EQ(*window_chunks(100e9, k_ns_per_ms, 4096), k_default_max_window_chunks);
  EXPECT_EQ(*window_chunks(100e9, k_ns_per_ms, 4096, WindowLimits{3, 5}), 5u);
}

TEST(WindowChunks, RejectsBadInput) {
  EXPECT_FALSE(window_chunks(0, 1, 1).ok());
  EXPECT_FALSE(window_chunks(1e9, -1, 1).ok());
  EXPECT_FALSE(window_chunks(1e9, 1, 0).ok());
  EXPECT_FALSE(window_chunks(1e9, 1, 1, WindowLimits{0, 4}).ok());
  EXPECT_FALSE(window_chunks(1e9, 1, 1, WindowLimits{5, 4}).ok());
  EXPECT_FALSE(window_chunks(1e9, 1, 1, WindowLimits{1, k_max_window_chunks_limit + 1}).ok());
}

TEST(PipelineWindow, HandsOutLowestFreeSlotsUpToCapacity) {
  PipelineWindow w(3);
  EXPECT_EQ(w.capacity(), 3u);
  EXPECT_EQ(*w.acquire(), 0u);
  EXPECT_EQ(*w.acquire(), 1u);
  EXPECT_EQ(*w.acquire(), 2u);
  EXPECT_EQ(w.in_flight(), 3u);
  EXPECT_EQ(w.acquire().status().code(), StatusCode::again);
  ASSERT_TRUE(w.release(1).ok());
  EXPECT_EQ(*w.acquire(), 1u);
  EXPECT_EQ(w.release(7).code(), StatusCode::invalid_argument);
  ASSERT_TRUE(w.release(0).ok());
  EXPECT_EQ(w.release(0).code(), StatusCode::invalid_argument);
  EXPECT_EQ(PipelineWindow(0).capacity(), 1u);
}

}  // namespace
}  // namespace sluice::sched
