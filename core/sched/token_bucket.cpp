#include "core/sched/token_bucket.hpp"

#include <string>

namespace sluice::sched {
namespace {
constexpr std::uint64_t k_nano = 1'000'000'000ULL;
}  // namespace

TokenBucket::TokenBucket(std::uint64_t rate, std::uint64_t burst, TimeNs start_ns)
    : rate_bytes_per_s_(rate),
      burst_bytes_(burst),
      capacity_nanobytes_(burst * k_nano),
      tokens_nanobytes_(burst * k_nano),
      last_ns_(start_ns) {}

Result<TokenBucket> TokenBucket::create(std::uint64_t rate_bytes_per_s, std::uint64_t burst_bytes, TimeNs start_ns) {
  if (rate_bytes_per_s == 0 || rate_bytes_per_s > k_max_token_rate_bytes_per_s) {
    return error(StatusCode::invalid_argument, "token bucket: rate " + std::to_string(rate_bytes_per_s) +
                                                   " bytes/s must be in [1, k_max_token_rate_bytes_per_s]");
  }
  if (burst_bytes == 0 || burst_bytes > k_max_burst_bytes) {
    return error(StatusCode::invalid_argument,
                 "token bucket: burst " + std::to_string(burst_bytes) + " bytes must be in [1, k_max_burst_bytes]");
  }
  return TokenBucket(rate_bytes_per_s, burst_bytes, start_ns);
}

std::uint64_t TokenBucket::tokens_at(TimeNs now_ns) const {
  if (now_ns <= last_ns_) return tokens_nanobytes_;
  const auto elapsed = static_cast<std::uint64_t>(now_ns - last_ns_);
  const std::uint64_t deficit = capacity_nanobytes_ - tokens_nanobytes_;
  // elapsed x rate >= deficit <=> elapsed >= ceil(deficit / rate); checked by division to avoid overflow.
  if (elapsed >= (deficit + rate_bytes_per_s_ - 1) / rate_bytes_per_s_) return capacity_nanobytes_;
  return tokens_nanobytes_ + elapsed * rate_bytes_per_s_;  // < deficit + rate: fits
}

Status TokenBucket::check(TimeNs now_ns, std::uint64_t bytes) const {
  if (now_ns < last_ns_) {
    return error(StatusCode::invalid_argument, "token bucket: time " + std::to_string(now_ns) +
                                                   " ns is before the last consume at " + std::to_string(last_ns_) +
                                                   " ns");
  }
  if (bytes > burst_bytes_) {
    return error(StatusCode::invalid_argument, "token bucket: " + std::to_string(bytes) +
                                                   " bytes exceed the burst of " + std::to_string(burst_bytes_) +
                                                   " bytes and can never start");
  }
  return ok_status();
}

Result<TimeNs> TokenBucket::earliest_start(TimeNs now_ns, std::uint64_t bytes) const {
  if (auto s = check(now_ns, bytes); !s.ok()) return s;
  const std::uint64_t need = bytes * k_nano;
  const std::uint64_t have = tokens_at(now_ns);
  if (have >= need) return now_ns;
  const std::uint64_t wait_ns = (need - have + rate_bytes_per_s_ - 1) / rate_bytes_per_s_;
  return now_ns + static_cast<TimeNs>(wait_ns);
}

Status TokenBucket::consume(TimeNs now_ns, std::uint64_t bytes) {
  if (auto s = check(now_ns, bytes); !s.ok()) return s;
  const std::uint64_t have = tokens_at(now_ns);
  const std::uint64_t need = bytes * k_nano;
  if (have < need) {
    return error(StatusCode::again, "token bucket: " + std::to_string(bytes) + " bytes not yet available at " +
                                        std::to_string(now_ns) + " ns");
  }
  tokens_nanobytes_ = have - need;
  last_ns_ = now_ns;
  return ok_status();
}

std::uint64_t TokenBucket::available_bytes(TimeNs now_ns) const { return tokens_at(now_ns) / k_nano; }

}  // namespace sluice::sched
