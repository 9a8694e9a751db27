// How evenly a set of files spreads its bytes over storage targets: the
// imbalance a checkpoint burst sees (docs/seeds.md#checkpoints: round-robin
// over 128 targets with 64 MB stripes still deviates 10-15% from uniform).
//
// Bytes per target come from the files' stripe patterns (what the inodes say),
// not from the targets: for a file of size S with pattern P, the target at
// position i of P holds P.object_size(S, i) bytes (core/layout, Lustre
// lov_size_to_stripe). For a buddy-mirrored pattern the ids are buddy groups.
//
// Measures over the targets counted (those with bytes, plus any listed as
// known with zero bytes):
//   max_over_mean = max(bytes_t) / mean(bytes_t)        (1 = perfectly even)
//   cv            = population stddev(bytes_t) / mean(bytes_t)
// Both are 0 when no byte was counted.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "core/common/status.hpp"
#include "core/layout/stripe_pattern.hpp"
#include "core/proto/wire_descs.hpp"

namespace sluice {

using TargetBytes = std::map<std::uint32_t, std::uint64_t>;  // target (or group) id -> bytes

struct TargetBalance {
  std::size_t targets = 0;
  std::uint64_t total_bytes = 0;
  std::uint64_t max_bytes = 0;
  std::uint64_t min_bytes = 0;
  double mean_bytes = 0;
  double max_over_mean = 0;
  double cv = 0;
};

// Adds the bytes a file of file_bytes with this stripe puts on each target.
// Errors: the stripe is not a valid pattern of `flavor` (the message names it).
Status add_stripe_bytes(TargetBytes& bytes, const proto::StripeDesc& stripe, std::uint64_t file_bytes,
                        StripeFlavor flavor);

// Balance over the targets in `bytes`, plus every id of known_targets that is
// missing there (counted with 0 bytes).
TargetBalance target_balance(const TargetBytes& bytes, const std::vector<std::uint32_t>& known_targets = {});

}  // namespace sluice
