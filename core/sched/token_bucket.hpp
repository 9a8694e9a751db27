// Egress rate limiter: a token bucket per storage target (or port).
//
// Purpose (docs/seeds.md#nvmesh-remote-nvme): many clients' small reads
// converge on one target's egress port; limiting each target's sending rate to
// what its port can carry prevents the congestion without idling the link. A
// request of `bytes` may start once the bucket holds that many tokens; tokens
// refill at rate_bytes_per_s up to burst_bytes (the classic token bucket of
// RFC 2697 / Linux tc-tbf).
//
// Exactness: tokens are kept in nano-bytes (bytes x 10^9), so a refill of
// elapsed_ns x rate_bytes_per_s is an exact integer and no rounding drifts
// over a long run. Time is passed in (TimeNs), never read.
//
// Contract: times given to earliest_start/consume must not go backwards
// relative to the last consume (invalid_argument). A request larger than the
// burst can never start (invalid_argument): split it into chunks <= burst.
// Not thread-safe.
#pragma once

#include <cstdint>

#include "core/common/status.hpp"
#include "core/common/units.hpp"

namespace sluice::sched {

// Limits that keep burst x 10^9 + rate inside 64 bits.
inline constexpr std::uint64_t k_max_token_rate_bytes_per_s = 1'000'000'000'000ULL;  // 1 TB/s
inline constexpr std::uint64_t k_max_burst_bytes = 8 * k_gib;

class TokenBucket {
 public:
  // The bucket starts full at start_ns. Errors: rate 0 or > k_max_token_rate_bytes_per_s,
  // burst 0 or > k_max_burst_bytes.
  static Result<TokenBucket> create(std::uint64_t rate_bytes_per_s, std::uint64_t burst_bytes, TimeNs start_ns = 0);

  // The earliest time >= now_ns at which `bytes` can be consumed.
  Result<TimeNs> earliest_start(TimeNs now_ns, std::uint64_t bytes) const;
  // Takes `bytes` tokens at now_ns: ok, or again when not enough have
  // accumulated (wait until earliest_start). Errors as above.
  Status consume(TimeNs now_ns, std::uint64_t bytes);
  // Whole bytes available at now_ns (now_ns before the last consume: as at it).
  std::uint64_t available_bytes(TimeNs now_ns) const;

  std::uint64_t rate_bytes_per_s() const { return rate_bytes_per_s_; }
  std::uint64_t burst_bytes() const { return burst_bytes_; }

 private:
  TokenBucket(std::uint64_t rate, std::uint64_t burst, TimeNs start_ns);
  std::uint64_t tokens_at(TimeNs now_ns) const;  // in nano-bytes
  Status check(TimeNs now_ns, std::uint64_t bytes) const;

  std::uint64_t rate_bytes_per_s_;
  std::uint64_t burst_bytes_;
  std::uint64_t capacity_nanobytes_;
  std::uint64_t tokens_nanobytes_;
  TimeNs last_ns_;
};

}  // namespace sluice::sched
