// The units a scenario script writes, parsed strictly, and "did you mean".
//
// Sizes are binary (as BeeGFS and elbencho print them): "64KiB", "1.5MiB",
// "4GiB", "1TiB", "512B", or a plain whole number of bytes. Decimal or
// ambiguous suffixes ("64KB", "64k", "1M") are refused with the spelling to
// use, because a factor of 1.024 .. 1.1 silently off is the worst mistake.
// Rates: "100Gb/s" (decimal bits, how links are quoted), "12.5GB/s" / "750MB/s"
// (decimal bytes, how storage is quoted), "2GiB/s", or a plain number of
// bytes per second. Durations: "10ms", "5us", "1.5s", "200ns", or a plain
// whole number of nanoseconds.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.hpp"
#include "core/common/units.hpp"

namespace sluice::scenario {

// invalid_argument with a sentence saying what to write instead.
Result<std::uint64_t> parse_size(std::string_view text);
Result<double> parse_rate(std::string_view text);  // bytes per second
Result<TimeNs> parse_duration(std::string_view text);

// Levenshtein distance (insert, delete, substitute: cost 1 each).
std::size_t edit_distance(std::string_view a, std::string_view b);
// The candidate closest to `name` if it is close enough to be a typo
// (distance <= max(2, |name| / 3)), else "".
std::string closest_name(std::string_view name, const std::vector<std::string>& candidates);

// "64KiB", "1.5MiB", "1000B": the shortest exact binary spelling, else bytes.
std::string format_size(std::uint64_t bytes);
// "12.5 GB/s" (decimal).
std::string format_rate(double bytes_per_s);

}  // namespace sluice::scenario
