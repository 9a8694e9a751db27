// Statistics over repeated runs: order statistics, robust spreads and
// throughput over a time series.
//
// Percentiles are the tree's one definition (core/common/percentile.hpp):
// linear interpolation between closest ranks (Hyndman & Fan 1996, definition
// 7; the default of R's quantile() and numpy.percentile).
// MAD is the raw median absolute deviation (no 1.4826 normal-consistency
// scaling), IQR = p75 - p25. Non-finite samples (a null metric in results.json)
// are dropped before any statistic.
#pragma once

#include <cstdint>
#include <vector>

#include "core/common/percentile.hpp"
#include "core/common/status.hpp"

namespace sluice::analysis {

// q in [0, 1]; invalid_argument on an empty sample or q outside [0, 1].
using sluice::percentile;
Result<double> median(std::vector<double> samples);
// Median absolute deviation from the median.
Result<double> mad(std::vector<double> samples);
// Interquartile range p75 - p25.
Result<double> iqr(std::vector<double> samples);

struct Summary {
  std::size_t n = 0;
  double min = 0;
  double max = 0;
  double mean = 0;
  double median = 0;
  double p10 = 0;
  double p90 = 0;
  double mad = 0;
  double iqr = 0;
};
// invalid_argument when no finite sample is left.
Result<Summary> summarize(const std::vector<double>& samples);

// Cumulative progress samples of one run: at time_s, bytes_done bytes done.
struct ProgressSample {
  double time_s = 0;
  double bytes_done = 0;
};
struct RatePoint {
  double time_s = 0;  // window end
  double bytes_per_s = 0;
};
// Throughput over consecutive windows of window_s from the first sample's
// time; the progress inside a window is interpolated linearly between
// samples. invalid_argument: fewer than 2 samples, time not increasing,
// window_s <= 0.
// Limit: at most k_max_rate_points windows.
inline constexpr std::size_t k_max_rate_points = 1'000'000;
Result<std::vector<RatePoint>> throughput_series(const std::vector<ProgressSample>& samples, double window_s);

}  // namespace sluice::analysis
