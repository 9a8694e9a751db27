#include "analysis/stats.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace sluice::analysis {
namespace {

std::vector<double> finite_sorted(std::vector<double> samples) {
  samples.erase(std::remove_if(samples.begin(), samples.end(), [](double v) { return !std::isfinite(v); }),
                samples.end());
  std::sort(samples.begin(), samples.end());
  return samples;
}

}  // namespace

Result<double> median(std::vector<double> samples) { return percentile(std::move(samples), 0.5); }

Result<double> mad(std::vector<double> samples) {
  Result<double> m = median(samples);
  if (!m.ok()) return m.status();
  std::vector<double> dev;
  for (double v : samples) {
    if (std::isfinite(v)) dev.push_back(std::fabs(v - *m));
  }
  return median(std::move(dev));
}

Result<double> iqr(std::vector<double> samples) {
  const std::vector<double> sorted = finite_sorted(std::move(samples));
  if (sorted.empty()) return error(StatusCode::invalid_argument, "iqr: no finite sample");
  return percentile_of_sorted(sorted, 0.75) - percentile_of_sorted(sorted, 0.25);
}

Result<Summary> summarize(const std::vector<double>& samples) {
  const std::vector<double> sorted = finite_sorted(samples);
  if (sorted.empty()) return error(StatusCode::invalid_argument, "summarize: no finite sample");
  Summary s;
  s.n = sorted.size();
  s.min = sorted.front();
  s.max = sorted.back();
  double sum = 0;
  for (double v : sorted) sum += v;
  s.mean = sum / static_cast<double>(s.n);
  s.median = percentile_of_sorted(sorted, 0.5);
  s.p10 = percentile_of_sorted(sorted, 0.1);
  s.p90 = percentile_of_sorted(sorted, 0.9);
  s.iqr = percentile_of_sorted(sorted, 0.75) - percentile_of_sorted(sorted, 0.25);
  s.mad = *mad(sorted);
  return s;
}

Result<std::vector<RatePoint>> throughput_series(const std::vector<ProgressSample>& samples, double window_s) {
  if (samples.size() < 2) return error(StatusCode::invalid_argument, "throughput_series: fewer than 2 samples");
  if (!(window_s > 0)) return error(StatusCode::invalid_argument, "throughput_series: window_s must be > 0");
  for (std::size_t i = 1; i < samples.size(); ++i) {
    if (!(samples[i].time_s > samples[i - 1].time_s)) {
      return error(StatusCode::invalid_argument,
                   "throughput_series: time not increasing at sample " + std::to_string(i));
    }
  }
  const double t0 = samples.front().time_s;
  const double span = samples.back().time_s - t0;
  const double windows = std::ceil(span / window_s - 1e-12);
  if (windows > static_cast<double>(k_max_rate_points)) {
    return error(StatusCode::invalid_argument, "throughput_series: more than k_max_rate_points windows");
  }
  auto done_at = [&](double t) {
    if (t >= samples.back().time_s) return samples.back().bytes_done;
    auto it = std::upper_bound(samples.begin(), samples.end(), t,
                               [](double x, const ProgressSample& s) { return x < s.time_s; });
    const ProgressSample& hi = *it;
    const ProgressSample& lo = *(it - 1);
    return lo.bytes_done + (hi.bytes_done - lo.bytes_done) * (t - lo.time_s) / (hi.time_s - lo.time_s);
  };
  std::vector<RatePoint> out;
  const auto n = static_cast<std::size_t>(windows);
  for (std::size_t w = 0; w < n; ++w) {
    const double a = t0 + static_cast<double>(w) * window_s;
    const double e = std::min(a + window_s, samples.back().time_s);
    out.push_back({e, (done_at(e) - done_at(a)) / (e - a)});
  }
  return out;
}

}  // namespace sluice::analysis
