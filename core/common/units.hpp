// Units used across sluice. Time is integer nanoseconds since the start of a
// run (virtual in TestEnv/SimEnv, steady clock in HwEnv); sizes are bytes;
// rates are bytes per second. Helpers convert the units people write.
#pragma once

#include <cstdint>

namespace sluice {

using TimeNs = std::int64_t;  // nanoseconds since run start

inline constexpr std::uint64_t k_kib = 1024ULL;
inline constexpr std::uint64_t k_mib = 1024ULL * k_kib;
inline constexpr std::uint64_t k_gib = 1024ULL * k_mib;
inline constexpr std::uint64_t k_tib = 1024ULL * k_gib;

inline constexpr TimeNs k_ns_per_us = 1000;
inline constexpr TimeNs k_ns_per_ms = 1000 * k_ns_per_us;
inline constexpr TimeNs k_ns_per_s = 1000 * k_ns_per_ms;

// Network rates are quoted in (decimal) gigabits per second.
constexpr double gbps_to_bytes_per_s(double gbps) { return gbps * 1e9 / 8.0; }
// Storage and PCIe rates are quoted in (decimal) GB/s.
constexpr double gb_per_s_to_bytes_per_s(double gb_per_s) { return gb_per_s * 1e9; }

// Time to move `bytes` at `bytes_per_s`, rounded up to whole nanoseconds.
inline TimeNs transfer_time_ns(std::uint64_t bytes, double bytes_per_s) {
  const double ns = static_cast<double>(bytes) * 1e9 / bytes_per_s;
  const auto whole = static_cast<TimeNs>(ns);
  return static_cast<double>(whole) < ns ? whole + 1 : whole;
}

}  // namespace sluice
