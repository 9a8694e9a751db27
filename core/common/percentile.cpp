#include "core/common/percentile.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace sluice {

double percentile_of_sorted(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

Result<double> percentile(std::vector<double> samples, double q) {
  if (!(q >= 0.0 && q <= 1.0)) {
    return error(StatusCode::invalid_argument, "percentile: quantile " + std::to_string(q) + " outside [0, 1]");
  }
  std::erase_if(samples, [](double v) { return !std::isfinite(v); });
  if (samples.empty()) return error(StatusCode::invalid_argument, "percentile: no finite sample");
  std::sort(samples.begin(), samples.end());
  return percentile_of_sorted(samples, q);
}

}  // namespace sluice
