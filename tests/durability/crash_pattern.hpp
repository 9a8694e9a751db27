// The bytes of one write of tests/durability/child/crash_child.cpp: object id
// and the write's generation give the pattern seed, so the test knows what
// every acknowledged byte must be.
#pragma once

#include <cstdint>

namespace sluice {

inline std::uint64_t pattern_seed(std::uint64_t object_id, std::uint64_t gen) {
  return object_id * 0x9E37'79B9'7F4A'7C15ULL ^ gen;
}

}  // namespace sluice
