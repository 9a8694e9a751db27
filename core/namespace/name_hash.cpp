#include "core/namespace/name_hash.hpp"

#include "core/common/assert.hpp"

namespace sluice {

std::uint64_t fnv_1a_64_extend(std::uint64_t hash, std::string_view bytes) {
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= k_fnv_1a_64_prime;
  }
  return hash;
}

std::uint64_t fnv_1a_64(std::string_view bytes) { return fnv_1a_64_extend(k_fnv_1a_64_offset_basis, bytes); }

std::uint32_t stripe_index_fnv_1a_64(std::string_view name, std::uint32_t stripe_count) {
  SLUICE_ASSERT(stripe_count > 0);
  return static_cast<std::uint32_t>(fnv_1a_64(name) % stripe_count);
}

std::uint32_t crush_pg_of_name(std::string_view name) {
  return static_cast<std::uint32_t>(fnv_1a_64(name) % k_crush_pg_count);
}

namespace {

// SplitMix64's output mix (Steele, Lea & Flood 2014). Every step (xor-shift,
// multiply by an odd constant) is a bijection of 64-bit words, so distinct
// inputs give distinct outputs: two stripes never draw equal straws.
std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

constexpr std::uint64_t k_golden_gamma = 0x9E3779B97F4A7C15ULL;  // odd: multiplying is a bijection

// The index of the longest straw among stripes 0..stripe_count-1.
template <typename StrawOf>
std::uint32_t longest_straw(std::uint32_t stripe_count, StrawOf straw_of) {
  std::uint32_t best = 0;
  std::uint64_t best_straw = straw_of(0);
  for (std::uint32_t i = 1; i < stripe_count; ++i) {
    const std::uint64_t straw = straw_of(i);
    if (straw > best_straw) {
      best_straw = straw;
      best = i;
    }
  }
  return best;
}

}  // namespace

std::uint64_t crush_straw(std::uint32_t pg, std::uint32_t stripe_index) {
  return mix64(((std::uint64_t{pg} << 32) | stripe_index) * k_golden_gamma);
}

std::uint64_t rendezvous_straw(std::uint64_t name_hash, std::uint32_t stripe_index) {
  // The stripe_index-th output of a SplitMix64 stream seeded with the name's
  // hash: inputs differ by multiples of an odd gamma, hence are distinct.
  return mix64(name_hash + (std::uint64_t{stripe_index} + 1) * k_golden_gamma);
}

std::uint32_t stripe_index_rendezvous(std::string_view name, std::uint32_t stripe_count) {
  SLUICE_ASSERT(stripe_count > 0);
  const std::uint64_t h = fnv_1a_64(name);
  return longest_straw(stripe_count, [h](std::uint32_t i) { return rendezvous_straw(h, i); });
}

std::uint32_t stripe_index_crush(std::string_view name, std::uint32_t stripe_count) {
  SLUICE_ASSERT(stripe_count > 0);
  const std::uint32_t pg = crush_pg_of_name(name);
  return longest_straw(stripe_count, [pg](std::uint32_t i) { return crush_straw(pg, i); });
}

}  // namespace sluice
