// The seeded random generator every random choice in sluice comes from.
//
// Why our own and not <random>'s distributions: std::uniform_int_distribution
// and friends are implementation-defined, so the same seed would give different
// runs on libstdc++ and libc++. xoshiro256** (Blackman & Vigna, 2018) seeded
// through splitmix64 is small, fast and gives the same stream everywhere.
// Not thread-safe: each service owns its own Rng, derived from the run seed
// with `fork(stream)` so that adding a service does not shift another's stream.
#pragma once

#include <cstdint>

namespace sluice {

class Rng {
 public:
  explicit Rng(std::uint64_t seed);

  std::uint64_t next_u64();
  // Uniform in [0, bound) without modulo bias (Lemire's multiply-shift with rejection).
  // bound must be > 0.
  std::uint64_t uniform(std::uint64_t bound);
  // Uniform in [0, 1).
  double uniform01();
  // An independent generator for sub-stream `stream` (e.g. a service id).
  Rng fork(std::uint64_t stream) const;

  std::uint64_t seed() const { return seed_; }

 private:
  std::uint64_t seed_;
  std::uint64_t s_[4];
};

// splitmix64 step: also used to derive seeds from (seed, stream) pairs.
std::uint64_t splitmix64(std::uint64_t& state);

}  // namespace sluice
