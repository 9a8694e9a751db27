// The tree's one percentile (core/common/percentile.hpp): linear
// interpolation between closest ranks (Hyndman & Fan definition 7, numpy's
// default), used by analysis/ and by the runner's latency_us_p50/p99.
#include "core/common/percentile.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace sluice {
namespace {

TEST(Percentile, InterpolatesBetweenClosestRanks) {
  // numpy.percentile([1, 2, 3, 4], 25) == 1.75
  EXPECT_DOUBLE_EQ(*percentile({4, 1, 3, 2}, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(*percentile({4, 1, 3, 2}, 0.5), 2.5);  // even n: the mean of the middle two
  EXPECT_DOUBLE_EQ(*percentile({5, 1, 3, 2, 4}, 0.5), 3.0);
  EXPECT_DOUBLE_EQ(*percentile({5, 1, 3, 2, 4}, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(*percentile({5, 1, 3, 2, 4}, 1.0), 5.0);
  EXPECT_DOUBLE_EQ(*percentile({7}, 0.99), 7.0);
  std::vector<double> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  // numpy.percentile(range(1, 101), 99) == 99.01 (nearest rank would give 99)
  EXPECT_DOUBLE_EQ(*percentile(hundred, 0.99), 99.01);
  EXPECT_DOUBLE_EQ(*percentile(hundred, 0.5), 50.5);
}

TEST(Percentile, OfSortedIsTheSameDefinition) {
  const std::vector<double> sorted = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(percentile_of_sorted(sorted, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(percentile_of_sorted(sorted, 1.0), 4.0);
}

TEST(Percentile, DropsNonFiniteSamples) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_DOUBLE_EQ(*percentile({nan, 2, 4, INFINITY}, 0.5), 3.0);
}

TEST(Percentile, RefusesAnEmptySampleOrAQuantileOutside0To1) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Result<double> empty = percentile({}, 0.5);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), StatusCode::invalid_argument);
  EXPECT_NE(empty.status().message().find("percentile: no finite sample"), std::string::npos);
  EXPECT_FALSE(percentile({nan}, 0.5).ok());
  const Result<double> p99 = percentile({1, 2}, 99);  // a percent where a fraction belongs
  ASSERT_FALSE(p99.ok());
  EXPECT_NE(p99.status().message().find("outside [0, 1]"), std::string::npos) << p99.status().message();
  EXPECT_FALSE(percentile({1, 2}, -0.1).ok());
  EXPECT_FALSE(percentile({1, 2}, nan).ok());
}

}  // namespace
}  // namespace sluice
