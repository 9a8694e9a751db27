#include "core/workloads/target_balance.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace sluice {
namespace {

proto::StripeDesc raid0(std::uint64_t chunk_bytes, std::vector<std::uint32_t> targets) {
  proto::StripeDesc d;
  d.pattern = proto::StripePattern::raid0;
  d.chunk_bytes = chunk_bytes;
  d.targets = std::move(targets);
  return d;
}

TEST(TargetBalance, SevenChunksOverSixTargets) {
  // 7 chunks round the stripe: the first target holds 2, the others 1.
  TargetBytes bytes;
  ASSERT_TRUE(
      add_stripe_bytes(bytes, raid0(64 * k_kib, {4, 1, 2, 3, 5, 6}), 7 * 64 * k_kib, StripeFlavor::beegfs).ok());
  EXPECT_EQ(bytes.at(4), 2 * 64 * k_kib);
  for (std::uint32_t t : {1u, 2u, 3u, 5u, 6u}) EXPECT_EQ(bytes.at(t), 64 * k_kib) << t;
  const TargetBalance b = target_balance(bytes);
  EXPECT_EQ(b.targets, 6u);
  EXPECT_EQ(b.total_bytes, 7 * 64 * k_kib);
  EXPECT_EQ(b.max_bytes, 2 * 64 * k_kib);
  EXPECT_EQ(b.min_bytes, 64 * k_kib);
  EXPECT_NEAR(b.max_over_mean, 12.0 / 7.0, 1e-12);
  EXPECT_NEAR(b.cv, std::sqrt(5.0) / 7.0, 1e-12);
}

TEST(TargetBalance, PartialLastChunkAndSeveralFiles) {
  TargetBytes bytes;
  // 100 KiB over [1,2] with 64 KiB chunks: 64 KiB on 1, 36 KiB on 2.
  ASSERT_TRUE(add_stripe_bytes(bytes, raid0(64 * k_kib, {1, 2}), 100 * k_kib, StripeFlavor::beegfs).ok());
  ASSERT_TRUE(add_stripe_bytes(bytes, raid0(64 * k_kib, {2, 3}), 64 * k_kib, StripeFlavor::beegfs).ok());
  EXPECT_EQ(bytes.at(1), 64 * k_kib);
  EXPECT_EQ(bytes.at(2), 100 * k_kib);
  EXPECT_EQ(bytes.at(3), 0u);  // listed in a stripe, holds nothing
}

TEST(TargetBalance, EvenSpreadIsOneAndZero) {
  const TargetBalance b = target_balance({{1, 10}, {2, 10}, {3, 10}});
  EXPECT_DOUBLE_EQ(b.max_over_mean, 1.0);
  EXPECT_DOUBLE_EQ(b.cv, 0.0);
}

TEST(TargetBalance, KnownTargetsWithoutBytesCountAsZero) {
  const TargetBalance b = target_balance({{1, 30}}, {1, 2, 3});
  EXPECT_EQ(b.targets, 3u);
  EXPECT_EQ(b.min_bytes, 0u);
  EXPECT_DOUBLE_EQ(b.max_over_mean, 3.0);
  EXPECT_NEAR(b.cv, std::sqrt(2.0), 1e-12);  // {30,0,0}: stddev 10*sqrt(2), mean 10
}

TEST(TargetBalance, EmptyAndAllZero) {
  EXPECT_EQ(target_balance({}).targets, 0u);
  const TargetBalance z = target_balance({}, {1, 2});
  EXPECT_EQ(z.targets, 2u);
  EXPECT_EQ(z.max_over_mean, 0);
  EXPECT_EQ(z.cv, 0);
}

TEST(TargetBalance, InvalidStripeIsRefused) {
  TargetBytes bytes;
  const Status s = add_stripe_bytes(bytes, raid0(1000, {1}), 5000, StripeFlavor::beegfs);
  EXPECT_EQ(s.code(), StatusCode::invalid_argument);
  EXPECT_TRUE(bytes.empty());
}

}  // namespace
}  // namespace sluice
