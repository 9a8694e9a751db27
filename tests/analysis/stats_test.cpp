#include "analysis/stats.hpp"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

namespace sluice::analysis {
namespace {

TEST(Percentile, InterpolatesBetweenClosestRanks) {
  // numpy.percentile([1, 2, 3, 4], 25) == 1.75
  EXPECT_DOUBLE_EQ(*percentile({4, 1, 3, 2}, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(*percentile({4, 1, 3, 2}, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(*percentile({4, 1, 3, 2}, 1.0), 4.0);
  EXPECT_DOUBLE_EQ(*median({5, 1, 3}), 3.0);
  EXPECT_DOUBLE_EQ(*median({7}), 7.0);
}

TEST(Percentile, DropsNonFiniteAndRejectsEmptyOrBadQuantile) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_DOUBLE_EQ(*median({nan, 2, 4, INFINITY}), 3.0);
  EXPECT_EQ(median({nan}).status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(percentile({1, 2}, 1.5).status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(percentile({1, 2}, nan).status().code(), StatusCode::invalid_argument);
  EXPECT_FALSE(iqr({}).ok());
  EXPECT_FALSE(mad({}).ok());
  EXPECT_FALSE(summarize({nan}).ok());
}

TEST(Spread, MadAndIqrIgnoreOneOutlier) {
  const std::vector<double> v = {10, 11, 9, 10, 10, 1000};
  EXPECT_DOUBLE_EQ(*mad(v), 0.5);  // |dev| = 0,1,1,0,0,990 -> median 0.5
  EXPECT_DOUBLE_EQ(*iqr({1, 2, 3, 4, 5}), 2.0);
  const Summary s = *summarize(v);
  EXPECT_EQ(s.n, 6U);
  EXPECT_DOUBLE_EQ(s.median, 10.0);
  EXPECT_DOUBLE_EQ(s.min, 9.0);
  EXPECT_DOUBLE_EQ(s.max, 1000.0);
  EXPECT_NEAR(s.mean, 1050.0 / 6, 1e-9);
  EXPECT_DOUBLE_EQ(s.mad, 0.5);
  EXPECT_GT(s.p90, s.median);
  EXPECT_LE(s.p10, s.median);
}

TEST(ThroughputSeries, RatesPerWindowFromCumulativeProgress) {
  // 100 B/s for 2 s then 300 B/s for 2 s.
  const std::vector<ProgressSample> s = {{0, 0}, {2, 200}, {4, 800}};
  const std::vector<RatePoint> r = *throughput_series(s, 1.0);
  ASSERT_EQ(r.size(), 4U);
  EXPECT_DOUBLE_EQ(r[0].bytes_per_s, 100);
  EXPECT_DOUBLE_EQ(r[1].bytes_per_s, 100);
  EXPECT_DOUBLE_EQ(r[2].bytes_per_s, 300);
  EXPECT_DOUBLE_EQ(r[3].time_s, 4);
  // A window straddling the change averages both rates; a last partial window is its own length.
  const std::vector<RatePoint> w = *throughput_series(s, 3.0);
  ASSERT_EQ(w.size(), 2U);
  EXPECT_DOUBLE_EQ(w[0].bytes_per_s, 500.0 / 3);
  EXPECT_DOUBLE_EQ(w[1].bytes_per_s, 300);
}

TEST(ThroughputSeries, RejectsBadInput) {
  EXPECT_FALSE(throughput_series({{0, 0}}, 1).ok());
  EXPECT_FALSE(throughput_series({{0, 0}, {1, 1}}, 0).ok());
  EXPECT_FALSE(throughput_series({{0, 0}, {0, 1}}, 1).ok());
  EXPECT_FALSE(throughput_series({{0, 0}, {1e9, 1}}, 1e-3).ok());
}

}  // namespace
}  // namespace sluice::analysis
