// Byte sizes as people write and read them: the one size grammar and the one
// size spelling of the tree (scenario scripts and --set, the emulate flags,
// calibrate's --fit-piece, reports, tables and messages).
//
// Grammar (binary units, as BeeGFS and elbencho print sizes):
//   size   = number [spaces] [unit]
//   number = digits ["." digits] | digits "." | "." digits  (no sign, no exponent)
//   unit   = "B" | "KiB" | "MiB" | "GiB" | "TiB"           (spelled exactly so)
// No unit means bytes: "4096", "4MiB", "16 MiB", "1.5MiB" (= 1572864). The value
// must be a whole number of bytes below 2^64 ("1.5B" and "0.1KiB" are refused).
// Refused with the spelling to use: decimal or ambiguous suffixes ("4MB", "4M",
// "64k", "2gb": MB may mean 10^6 or 2^20 bytes, and a factor of 1.024 .. 1.1
// silently off is the worst mistake a size can make), wrong case ("4mib"),
// "bytes"; refused: "", "-1", "1e6", " 4MiB", "4MiB ".
// Errors are invalid_argument naming the text and the problem; the caller
// prefixes the place (a flag, a field, a --set name).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/common/status.hpp"
#include "core/common/units.hpp"

namespace sluice {

Result<std::uint64_t> parse_size(std::string_view text);

enum class SizeSpelling : std::uint8_t {
  compact,  // "64KiB", "1.5MiB", "1000B" (scripts, tables, results)
  spaced,   // "64 KiB", "1.5 MiB", "1000 B" (prose: capability and device lines)
};

// The largest binary unit of which `bytes` is a whole number of quarters
// ("1.25GiB", "1.5MiB", "64KiB"), else bytes ("1000B"); 0 is "0B". Both
// spellings read back through parse_size to the same number.
std::string format_size(std::uint64_t bytes, SizeSpelling spelling = SizeSpelling::compact);

// Splits "12.5GiB" / "12.5 GiB" into the number (12.5) and the unit ("GiB",
// spaces after the number dropped); false if the text does not start with a
// number as the grammar above writes it. The rate and duration grammars of
// scenario scripts (scenarios/lua/script_units.hpp) start the same way.
bool split_number_and_unit(std::string_view text, double& number, std::string_view& unit);

}  // namespace sluice
