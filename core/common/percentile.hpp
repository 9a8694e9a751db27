// The one percentile of the tree: analysis/ (statistics over repeated runs,
// compare, calibrate) and the runner's results (latency_us_p50/p99 of
// results.csv and results.json) use it.
//
// Definition: linear interpolation between closest ranks (Hyndman & Fan 1996,
// definition 7; the default of R's quantile() and numpy.percentile): over the
// n sorted samples x[0..n-1], the q-quantile is at position h = q * (n - 1),
// x[floor(h)] + (h - floor(h)) * (x[floor(h) + 1] - x[floor(h)]). q = 0 is the
// minimum, q = 1 the maximum, q = 0.5 the median (the mean of the middle two
// for even n). Non-finite samples (a null metric) are dropped first.
#pragma once

#include <vector>

#include "core/common/status.hpp"

namespace sluice {

// q in [0, 1]. invalid_argument when q is outside [0, 1] (or NaN) or no
// finite sample is left.
Result<double> percentile(std::vector<double> samples, double q);

// The same over samples already sorted ascending, all finite, at least one;
// q in [0, 1] (checked by the caller).
double percentile_of_sorted(const std::vector<double>& sorted, double q);

}  // namespace sluice
