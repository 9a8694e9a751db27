#include "core/workloads/target_balance.hpp"

#include <algorithm>
#include <cmath>

#include "core/services/wire_convert.hpp"

namespace sluice {

Status add_stripe_bytes(TargetBytes& bytes, const proto::StripeDesc& stripe, std::uint64_t file_bytes,
                        StripeFlavor flavor) {
  Result<StripePattern> pattern = from_wire(stripe, flavor);
  if (!pattern.ok()) return pattern.status();
  const std::vector<std::uint64_t> sizes = pattern->object_sizes(file_bytes);
  for (std::size_t i = 0; i < sizes.size(); ++i) bytes[pattern->targets()[i]] += sizes[i];
  return ok_status();
}

TargetBalance target_balance(const TargetBytes& bytes, const std::vector<std::uint32_t>& known_targets) {
  TargetBytes all = bytes;
  for (std::uint32_t t : known_targets) all.emplace(t, 0);
  TargetBalance b;
  b.targets = all.size();
  if (all.empty()) return b;
  b.min_bytes = all.begin()->second;
  for (const auto& [target, n] : all) {
    b.total_bytes += n;
    b.max_bytes = std::max(b.max_bytes, n);
    b.min_bytes = std::min(b.min_bytes, n);
  }
  if (b.total_bytes == 0) return b;
  b.mean_bytes = static_cast<double>(b.total_bytes) / static_cast<double>(b.targets);
  double sum_sq = 0;
  for (const auto& [target, n] : all) {
    const double d = static_cast<double>(n) - b.mean_bytes;
    sum_sq += d * d;
  }
  b.max_over_mean = static_cast<double>(b.max_bytes) / b.mean_bytes;
  b.cv = std::sqrt(sum_sq / static_cast<double>(b.targets)) / b.mean_bytes;
  return b;
}

}  // namespace sluice
