// The units a scenario script writes, parsed strictly, and "did you mean".
//
// Sizes: the tree's one size grammar and spelling, parse_size / format_size
// of core/common/byte_size.hpp ("64KiB", "1.5MiB", "4GiB", "512B" or a whole
// number of bytes; "64KB", "64k", "1M" refused with the spelling to use).
// Rates and durations: parse_rate / parse_duration of core/common/quantity.hpp
// ("100Gb/s", "12.5GB/s", "2GiB/s"; "10ms", "1.5s").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/byte_size.hpp"
#include "core/common/quantity.hpp"
#include "core/common/status.hpp"
#include "core/common/units.hpp"

namespace sluice::scenario {

using ::sluice::parse_duration;
using ::sluice::parse_rate;

// Levenshtein distance (insert, delete, substitute: cost 1 each).
std::size_t edit_distance(std::string_view a, std::string_view b);
// The candidate closest to `name` if it is close enough to be a typo
// (distance <= max(2, |name| / 3)), else "".
std::string closest_name(std::string_view name, const std::vector<std::string>& candidates);

// "12.5 GB/s" (decimal).
std::string format_rate(double bytes_per_s);

// "a, b, c": names as a sentence lists them.
std::string join_names(const std::vector<std::string>& names);

}  // namespace sluice::scenario
