// Helpers shared by the core/namespace tests: name sets and balance statistics.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/common/rng.hpp"

namespace sluice::test {

// Names as mdtest creates them ("file.mdtest.<rank>.<i>"): sequential, highly
// similar names, the hard case for a weak hash.
inline std::vector<std::string> mdtest_names(std::size_t count, int rank = 0) {
  std::vector<std::string> names;
  names.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    names.push_back("file.mdtest." + std::to_string(rank) + "." + std::to_string(i));
  }
  return names;
}

// Names of 4..32 random printable bytes (no '/'), from a seeded Rng.
inline std::vector<std::string> random_names(std::size_t count, std::uint64_t seed) {
  static constexpr char k_alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";
  Rng rng(seed);
  std::vector<std::string> names;
  names.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t length = 4 + rng.uniform(29);
    std::string name;
    for (std::size_t j = 0; j < length; ++j) name += k_alphabet[rng.uniform(sizeof(k_alphabet) - 1)];
    names.push_back(std::move(name));
  }
  return names;
}

// Pearson's chi-square statistic of observed counts against equal expected counts.
inline double chi_square(const std::vector<std::uint64_t>& counts) {
  double total = 0;
  for (const auto c : counts) total += static_cast<double>(c);
  const double expected = total / static_cast<double>(counts.size());
  double sum = 0;
  for (const auto c : counts) {
    const double d = static_cast<double>(c) - expected;
    sum += d * d / expected;
  }
  return sum;
}

// Upper critical values of the chi-square distribution at p = 0.001 (NIST/SEMATECH
// e-Handbook of Statistical Methods, table 1.3.6.7.4). A fair assignment exceeds
// them once in a thousand inputs; our inputs are fixed, so a test either always
// passes or always fails. Returns 0 (failing every comparison) for other degrees.
inline double chi_square_critical_p001(std::size_t degrees) {
  switch (degrees) {
    case 1: return 10.828;
    case 3: return 16.266;
    case 7: return 24.322;
    case 15: return 37.697;
    default: return 0.0;
  }
}

inline double max_min_ratio(const std::vector<std::uint64_t>& counts) {
  const auto [lo, hi] = std::minmax_element(counts.begin(), counts.end());
  return *lo == 0 ? 1e300 : static_cast<double>(*hi) / static_cast<double>(*lo);
}

}  // namespace sluice::test
