// The units a scenario script writes, parsed strictly, and "did you mean".
//
// Sizes: the tree's one size grammar and spelling, parse_size / format_size
// of core/common/byte_size.hpp ("64KiB", "1.5MiB", "4GiB", "512B" or a whole
// number of bytes; "64KB", "64k", "1M" refused with the spelling to use).
// Rates: "100Gb/s" (decimal bits, how links are quoted), "12.5GB/s" / "750MB/s"
// (decimal bytes, how storage is quoted), "2GiB/s", or a plain number of
// bytes per second. Durations: "10ms", "5us", "1.5s", "200ns", or a plain
// whole number of nanoseconds.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/byte_size.hpp"
#include "core/common/status.hpp"
#include "core/common/units.hpp"

namespace sluice::scenario {

// invalid_argument with a sentence saying what to write instead.
Result<double> parse_rate(std::string_view text);  // bytes per second
Result<TimeNs> parse_duration(std::string_view text);

// Levenshtein distance (insert, delete, substitute: cost 1 each).
std::size_t edit_distance(std::string_view a, std::string_view b);
// The candidate closest to `name` if it is close enough to be a typo
// (distance <= max(2, |name| / 3)), else "".
std::string closest_name(std::string_view name, const std::vector<std::string>& candidates);

// "12.5 GB/s" (decimal).
std::string format_rate(double bytes_per_s);

}  // namespace sluice::scenario
