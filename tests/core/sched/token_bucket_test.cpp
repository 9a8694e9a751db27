#include "core/sched/token_bucket.hpp"

#include <gtest/gtest.h>

namespace sluice::sched {
namespace {

TEST(TokenBucket, StartsFullAndRefillsAtTheRate) {
  auto b = *TokenBucket::create(1'000'000'000, 1'000'000);  // 1 GB/s, 1 MB burst
  EXPECT_EQ(b.available_bytes(0), 1'000'000u);
  ASSERT_TRUE(b.consume(0, 1'000'000).ok());
  EXPECT_EQ(b.available_bytes(0), 0u);
  EXPECT_EQ(b.available_bytes(1), 1u);  // 1 ns at 1 GB/s = 1 byte
  EXPECT_EQ(b.available_bytes(500'000), 500'000u);
  EXPECT_EQ(b.available_bytes(10 * k_ns_per_s), 1'000'000u) << "capped at the burst";
}

TEST(TokenBucket, EarliestStartIsExact) {
  auto b = *TokenBucket::create(3, 10);  // 3 bytes/s: one byte every 333,333,333.3 ns
  ASSERT_TRUE(b.consume(0, 10).ok());
  // 1 byte needs 1e9/3 = 333,333,333.33 ns -> 333,333,334 ns.
  EXPECT_EQ(*b.earliest_start(0, 1), 333'333'334);
  EXPECT_EQ(b.consume(333'333'333, 1).code(), StatusCode::again);
  EXPECT_TRUE(b.consume(333'333'334, 1).ok());
  // The leftover 2 nano-bytes are kept: 3 more bytes need (3e9 - 2) / 3 ns, rounded up.
  EXPECT_EQ(*b.earliest_start(333'333'334, 3), 333'333'334 + 1'000'000'000);
  EXPECT_EQ(*b.earliest_start(333'333'334, 2), 333'333'334 + 666'666'666);
}

TEST(TokenBucket, LongRunsDoNotDrift) {
  // 1 MB/s, 4 KiB requests back to back at their earliest start: after 1000
  // requests the clock must read exactly bytes / rate beyond the burst.
  auto b = *TokenBucket::create(1'000'000, 4096);
  TimeNs now = 0;
  for (int i = 0; i < 1000; ++i) {
    now = *b.earliest_start(now, 4096);
    ASSERT_TRUE(b.consume(now, 4096).ok());
  }
  // The first request used the initial burst; 999 x 4096 bytes at 1 MB/s = 4.091904 s.
  EXPECT_EQ(now, 4'091'904'000);
}

TEST(TokenBucket, ManyClientsCannotExceedTheTargetRate) {
  // 8 clients each asking for 64 KiB as fast as allowed through one bucket of
  // 1.25 GB/s (a 10 Gb/s port): the sustained rate stays at the port rate.
  auto b = *TokenBucket::create(1'250'000'000, 256 * k_kib);
  TimeNs now = 0;
  std::uint64_t sent = 0;
  for (int round = 0; round < 200; ++round) {
    for (int client = 0; client < 8; ++client) {
      now = *b.earliest_start(now, 64 * k_kib);
      ASSERT_TRUE(b.consume(now, 64 * k_kib).ok());
      sent += 64 * k_kib;
    }
  }
  const double rate = static_cast<double>(sent - 256 * k_kib) / (static_cast<double>(now) / 1e9);
  EXPECT_NEAR(rate, 1.25e9, 1.25e9 * 1e-6);
}

TEST(TokenBucket, RejectsBadInput) {
  EXPECT_FALSE(TokenBucket::create(0, 1).ok());
  EXPECT_FALSE(TokenBucket::create(k_max_token_rate_bytes_per_s + 1, 1).ok());
  EXPECT_FALSE(TokenBucket::create(1, 0).ok());
  EXPECT_FALSE(TokenBucket::create(1, k_max_burst_bytes + 1).ok());
  auto b = *TokenBucket::create(1000, 100, 50);
  EXPECT_EQ(b.rate_bytes_per_s(), 1000u);
  EXPECT_EQ(b.burst_bytes(), 100u);
  EXPECT_EQ(b.earliest_start(60, 101).status().code(), StatusCode::invalid_argument);
  ASSERT_TRUE(b.consume(60, 10).ok());
  EXPECT_EQ(b.consume(59, 1).code(), StatusCode::invalid_argument) << "time went backwards";
  EXPECT_FALSE(b.earliest_start(10, 1).ok());
  EXPECT_EQ(*b.earliest_start(60, 0), 60);
  // Largest values stay exact.
  auto big = *TokenBucket::create(k_max_token_rate_bytes_per_s, k_max_burst_bytes);
  ASSERT_TRUE(big.consume(0, k_max_burst_bytes).ok());
  EXPECT_EQ(big.available_bytes(1'000'000'000'000), k_max_burst_bytes);
  EXPECT_EQ(*big.earliest_start(0, k_max_burst_bytes),
            static_cast<TimeNs>((k_max_burst_bytes * 1'000'000'000ULL + k_max_token_rate_bytes_per_s - 1) /
                                k_max_token_rate_bytes_per_s));
}

}  // namespace
}  // namespace sluice::sched
