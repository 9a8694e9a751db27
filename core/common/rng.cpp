#include "core/common/rng.hpp"

#include "core/common/assert.hpp"

namespace sluice {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

Rng::Rng(std::uint64_t seed) : seed_(seed) {
  std::uint64_t st = seed;
  for (auto& word : s_) word = splitmix64(st);
}

namespace {
__extension__ using u128 = unsigned __int128;  // GCC/Clang builtin; -Wpedantic wants the marker
}  // namespace

static inline std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

std::uint64_t Rng::next_u64() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

std::uint64_t Rng::uniform(std::uint64_t bound) {
  SLUICE_ASSERT(bound > 0);
  // Lemire, "Fast Random Integer Generation in an Interval", ACM TOMACS 2019.
  u128 m = static_cast<u128>(next_u64()) * bound;
  auto low = static_cast<std::uint64_t>(m);
  if (low < bound) {
    const std::uint64_t threshold = (0 - bound) % bound;
    while (low < threshold) {
      m = static_cast<u128>(next_u64()) * bound;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

double Rng::uniform01() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

Rng Rng::fork(std::uint64_t stream) const {
  std::uint64_t st = seed_ ^ (stream * 0xD1B54A32D192ED03ULL);
  return Rng(splitmix64(st));
}

}  // namespace sluice
