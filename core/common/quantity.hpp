// Rates and durations as people write them: the grammars of scenario scripts
// (scenarios/lua/script_units.hpp), --set values and results' parameter
// columns (scenarios/runner/results_writer.cpp). Sizes are byte_size.hpp's.
//
// Rates: "100Gb/s" (decimal bits, how links are quoted), "12.5GB/s" / "750MB/s"
// (decimal bytes, how storage is quoted), "2GiB/s", or a plain number of
// bytes per second. Durations: "10ms", "5us", "1.5s", "200ns", "2min", or a
// plain whole number of nanoseconds. Errors are invalid_argument with a
// sentence saying what to write instead; the caller prefixes the place.
#pragma once

#include <string_view>

#include "core/common/status.hpp"
#include "core/common/units.hpp"

namespace sluice {

Result<double> parse_rate(std::string_view text);  // bytes per second
Result<TimeNs> parse_duration(std::string_view text);

}  // namespace sluice
