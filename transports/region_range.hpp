// Range checks the transports share for registered regions.
#pragma once

#include <cstdint>

namespace sluice::transport {

// [offset, offset + bytes) lies inside a region of `size` bytes (no overflow).
inline bool range_inside(std::uint64_t offset, std::uint64_t bytes, std::uint64_t size) {
  return offset <= size && bytes <= size - offset;
}

}  // namespace sluice::transport
