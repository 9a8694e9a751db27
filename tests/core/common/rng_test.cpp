#include "core/common/rng.hpp"

#include <gtest/gtest.h>

#include <array>

#include "core/common/status.hpp"

namespace sluice {
namespace {

TEST(Rng, SameSeedGivesSameStream) {
  Rng a(42), b(42);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(a.next_u64(), b.next_u64());
}

TEST(Rng, DifferentSeedsDiverge) {
  Rng a(1), b(2);
  int equal = 0;
  for (int i = 0; i < 100; ++i) equal += a.next_u64() == b.next_u64();
  EXPECT_EQ(equal, 0);
}

TEST(Rng, UniformStaysInBoundAndCoversIt) {
  Rng r(7);
  std::array<int, 10> counts{};
  for (int i = 0; i < 100000; ++i) {
    const auto v = r.uniform(10);
    ASSERT_LT(v, 10u);
    ++counts[v];
  }
  for (int c : counts) {
    EXPECT_GT(c, 9000);
    EXPECT_LT(c, 11000);
  }
}

TEST(Rng, Uniform01IsHalfOpenUnitInterval) {
  Rng r(9);
  double sum = 0;
  for (int i = 0; i < 10000; ++i) {
    const double v = r.uniform01();
    ASSERT_GE(v, 0.0);
    ASSERT_LT(v, 1.0);
    sum += v;
  }
  EXPECT_NEAR(sum / 10000, 0.5, 0.02);
}

TEST(Rng, ForkedStreamsAreIndependentAndReproducible) {
  Rng root(5);
  Rng a = root.fork(1), a2 = root.fork(1), b = root.fork(2);
  EXPECT_EQ(a.next_u64(), a2.next_u64());
  EXPECT_NE(a.next_u64(), b.next_u64());
}

TEST(Status, CarriesCodeAndMessage) {
  Status s = error(StatusCode::not_found, "path /a/b");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::not_found);
  EXPECT_EQ(s.to_string(), "not_found: path /a/b");
  EXPECT_EQ(ok_status().to_string(), "ok");
}

TEST(Result, HoldsValueOrStatus) {
  Result<int> good(3);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 3);
  EXPECT_TRUE(good.status().ok());
  Result<int> bad(error(StatusCode::invalid_argument, "x"));
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::invalid_argument);
}

}  // namespace
}  // namespace sluice
