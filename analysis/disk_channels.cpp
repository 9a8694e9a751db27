#include "analysis/disk_channels.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "analysis/import_input.hpp"
#include "analysis/stats.hpp"

namespace sluice::analysis {
namespace {

// Bisection steps (each halves the interval: 60 leave 1e-18 of it).
constexpr int k_bisection_steps = 60;

Status bad(const std::string& what) { return error(StatusCode::invalid_argument, "channel estimate: " + what); }

Result<std::uint64_t> positive_param(const RunRecord& run, std::size_t index, const std::string& name) {
  auto it = run.params.find(name);
  const std::string where = fmt::format("run {} (\"{}\")", index, run.label);
  if (it == run.params.end()) return bad(where + ": no parameter \"" + name + "\"");
  const std::optional<std::uint64_t> value = parse_whole(it->second);
  if (!value || *value == 0) {
    return bad(where + ": parameter \"" + name + "\" = \"" + it->second + "\" is not a positive integer");
  }
  return *value;
}

struct BlockAndDepth {
  std::uint64_t block = 0;
  std::uint32_t depth = 0;
};

// Run `index`'s block size and queue depth, positive integers (the depth at most k_max_estimated_depth).
Result<BlockAndDepth> block_and_depth(const RunRecord& run, std::size_t index, const std::string& block_param,
                                      const std::string& depth_param) {
  Result<std::uint64_t> block = positive_param(run, index, block_param);
  if (!block.ok()) return block.status();
  Result<std::uint64_t> depth = positive_param(run, index, depth_param);
  if (!depth.ok()) return depth.status();
  if (*depth > k_max_estimated_depth) {
    return bad(fmt::format("run {}: {} = {} is above {}", index, depth_param, *depth, k_max_estimated_depth));
  }
  return BlockAndDepth{*block, static_cast<std::uint32_t>(*depth)};
}

// The largest x in [lo, hi] with rate(x) > target, for a rate that falls as x grows.
template <typename Rate>
double bisect_falling(double lo, double hi, double target, Rate rate) {
  for (int i = 0; i < k_bisection_steps; ++i) {
    const double mid = (lo + hi) / 2;
    (rate(mid) > target ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

// T and L with X(d1) = x1 and X(d3) = x3 for `channels`; none when even
// L = 0 leaves the channels faster than x3 (the count needs L < 0).
std::optional<ChannelCandidate> fit_candidate(std::uint32_t channels, const ChannelPhase& phase) {
  const auto [d1, d2, d3] = phase.depths;
  const auto [x1, x2, x3] = phase.ops_per_s;
  // Both X(d1) and X(d3) fall as T or L grows. L(T): the time off the drive
  // that gives X(d1) = x1 with service T, in [0, d1 / x1] (X(d1) < d1 / L).
  auto delay_for = [&](double service_s) {
    return bisect_falling(0, d1 / x1, x1, [&](double l) { return closed_loop_ops_per_s(channels, service_s, l, d1); });
  };
  // The largest T, where L(T) reaches 0.
  const double max_service_s =
      bisect_falling(0, d1 / x1, x1, [&](double t) { return closed_loop_ops_per_s(channels, t, 0, d1); });
  if (closed_loop_ops_per_s(channels, max_service_s, 0, d3) > x3) return std::nullopt;
  // Along L(T), X(d3) falls as T grows (the channels' limit c / T falls).
  ChannelCandidate c;
  c.channels = channels;
  c.service_s = bisect_falling(0, max_service_s, x3,
                               [&](double t) { return closed_loop_ops_per_s(channels, t, delay_for(t), d3); });
  c.delay_s = delay_for(c.service_s);
  c.predicted_ops_per_s = closed_loop_ops_per_s(channels, c.service_s, c.delay_s, d2);
  c.rel_error = (c.predicted_ops_per_s - x2) / x2;
  return c;
}

}  // namespace

double closed_loop_ops_per_s(std::uint32_t channels, double service_s, double delay_s, std::uint32_t depth) {
  // Exact MVA: with n requests, one request's time at a queue is its service
  // plus the service of those it finds there (the queue's mean length with
  // n - 1 requests, Q / c per queue).
  double queued = 0;
  double throughput = 0;
  for (std::uint32_t n = 1; n <= depth; ++n) {
    const double response_s = service_s * (1 + queued / channels);
    throughput = n / (delay_s + response_s);
    queued = throughput * response_s;
  }
  return throughput;
}

Status check_channel_design(const std::vector<RunRecord>& points, const std::string& block_param,
                            const std::string& depth_param) {
  std::map<std::uint64_t, std::set<std::uint32_t>> depths;  // block -> the depths it is measured at
  for (std::size_t i = 0; i < points.size(); ++i) {
    Result<BlockAndDepth> point = block_and_depth(points[i], i, block_param, depth_param);
    if (!point.ok()) return point.status();
    depths[point->block].insert(point->depth);
  }
  if (depths.empty()) return bad("no points");
  if (depths.begin()->second.size() < 3) {
    return bad(
        fmt::format("{}-byte points at {} depths; need 3 (the smallest block, at its lowest, a middle and its "
                    "highest depth)",
                    depths.begin()->first, depths.begin()->second.size()));
  }
  return ok_status();
}

Result<ChannelEstimate> estimate_disk_channels(const std::vector<RunRecord>& measured, const std::string& block_param,
                                               const std::string& depth_param, const std::vector<std::string>& phases) {
  // block -> phase -> depth -> rates (one per run: sequential, random ...)
  std::map<std::uint64_t, std::map<std::string, std::map<std::uint32_t, std::vector<double>>>> rates;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    const RunRecord& run = measured[i];
    Result<BlockAndDepth> point = block_and_depth(run, i, block_param, depth_param);
    if (!point.ok()) return point.status();
    const auto [block, depth] = *point;
    for (const PhaseRecord& p : run.phases) {
      if (std::find(phases.begin(), phases.end(), p.phase) == phases.end()) continue;
      if (!(p.ops_per_s > 0) || !std::isfinite(p.ops_per_s)) {
        return bad(fmt::format("run {} (\"{}\") phase {}: no positive ops_per_s", i, run.label, p.phase));
      }
      rates[block][p.phase][depth].push_back(p.ops_per_s);
    }
  }
  if (rates.empty()) return bad("no measured phase among " + fmt::format("{}", fmt::join(phases, ", ")));
  ChannelEstimate estimate;
  estimate.block_bytes = rates.begin()->first;
  std::map<std::uint32_t, double> worst;  // count -> worst |error| over the phases, where every phase admits it
  for (std::uint32_t c = 1; c <= k_max_estimated_channels; ++c) worst[c] = 0;
  for (const auto& [name, by_depth] : rates.begin()->second) {
    if (by_depth.size() < 3) {
      return bad(
          fmt::format("phase {}: {}-byte points at {} depths; need 3", name, estimate.block_bytes, by_depth.size()));
    }
    ChannelPhase phase;
    phase.phase = name;
    const auto middle = std::next(by_depth.begin(), static_cast<std::ptrdiff_t>(by_depth.size() / 2));
    phase.depths = {by_depth.begin()->first, middle->first, by_depth.rbegin()->first};
    for (std::size_t k = 0; k < 3; ++k) phase.ops_per_s[k] = *median(by_depth.at(phase.depths[k]));
    for (std::uint32_t c = 1; c <= k_max_estimated_channels; ++c) {
      std::optional<ChannelCandidate> candidate = fit_candidate(c, phase);
      if (!candidate) {
        worst.erase(c);
        continue;
      }
      if (auto w = worst.find(c); w != worst.end()) w->second = std::max(w->second, std::fabs(candidate->rel_error));
      phase.candidates.push_back(*candidate);
    }
    estimate.phases.push_back(std::move(phase));
  }
  if (worst.empty()) return bad("no channel count fits every phase");
  auto best =
      std::min_element(worst.begin(), worst.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  estimate.channels = best->first;
  estimate.worst_rel_error = best->second;
  return estimate;
}

std::string describe(const ChannelEstimate& estimate) {
  std::string text;
  for (const ChannelPhase& p : estimate.phases) {
    text += fmt::format("  {} of {}-byte blocks: {:.0f} ops/s at depth {}, {:.0f} at {}, {:.0f} at {}\n", p.phase,
                        estimate.block_bytes, p.ops_per_s[0], p.depths[0], p.ops_per_s[1], p.depths[1], p.ops_per_s[2],
                        p.depths[2]);
    for (const ChannelCandidate& c : p.candidates) {
      if (c.channels > estimate.channels + 2) break;  // the rest only grow further off
      text += fmt::format(
          "    {:2d} channels: {:6.1f} us on a channel, {:5.1f} us off it; depth {}: {:.0f} ops/s ({:+.1f}%)\n",
          c.channels, c.service_s * 1e6, c.delay_s * 1e6, p.depths[1], c.predicted_ops_per_s, 100 * c.rel_error);
    }
  }
  text += fmt::format("  estimate: disk.channels = {} (worst error at the middle depth {:.1f}%)\n", estimate.channels,
                      100 * estimate.worst_rel_error);
  return text;
}

}  // namespace sluice::analysis
