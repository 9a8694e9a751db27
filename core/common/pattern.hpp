// The deterministic data pattern workloads write and verify (see PatternSpec in
// core/env.hpp). Byte p of a stream is byte (p % 8) of the little-endian word
// splitmix64-mix(seed, p / 8): position-addressable, so any sub-range can be
// produced or checked on its own, in any world, without storing data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace sluice {

// Writes the pattern for stream positions [stream_offset, stream_offset + out.size()).
void fill_pattern(std::span<std::byte> out, std::uint64_t seed, std::uint64_t stream_offset);

// The index (within `data`) of the first byte that differs from the pattern, if any.
std::optional<std::size_t> first_pattern_mismatch(std::span<const std::byte> data, std::uint64_t seed,
                                                  std::uint64_t stream_offset);

}  // namespace sluice
