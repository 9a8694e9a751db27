#include "core/common/byte_size.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace sluice {
namespace {

constexpr std::string_view k_accepted = "sizes are B, KiB, MiB, GiB, TiB or a whole number of bytes";

struct Unit {
  std::string_view name;
  std::uint64_t bytes;
};
constexpr Unit k_units[] = {{"", 1}, {"B", 1}, {"KiB", k_kib}, {"MiB", k_mib}, {"GiB", k_gib}, {"TiB", k_tib}};

// Length of the number that leads `text` ("12.5" of "12.5GiB"); 0 when none:
// no digit, or more than one '.'.
std::size_t number_length(std::string_view text) {
  std::size_t i = 0;
  std::size_t dots = 0;
  std::size_t digits = 0;
  for (; i < text.size(); ++i) {
    if (text[i] == '.') {
      ++dots;
    } else if (std::isdigit(static_cast<unsigned char>(text[i])) != 0) {
      ++digits;
    } else {
      break;
    }
  }
  return digits == 0 || dots > 1 ? 0 : i;
}

std::string quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

Status not_a_size(std::string_view text, const std::string& why) {
  return error(StatusCode::invalid_argument,
               quoted(text) + " is not a size" + why + " (" + std::string(k_accepted) + ")");
}

// A known unit written another way: the message says which spelling to use.
Status misspelled(std::string_view text, std::string_view unit) {
  std::string l(unit);
  for (char& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::string head(text.substr(0, text.size() - unit.size()));
  struct Hint {
    std::string_view lower;
    std::string_view use;
    char power;  // of 1000 or 1024 the unit may mean ('0': not ambiguous, only misspelled)
  };
  static constexpr Hint k_hints[] = {{"k", "KiB", '1'}, {"kb", "KiB", '1'}, {"ki", "KiB", '0'}, {"kib", "KiB", '0'},
                                     {"m", "MiB", '2'}, {"mb", "MiB", '2'}, {"mi", "MiB", '0'}, {"mib", "MiB", '0'},
                                     {"g", "GiB", '3'}, {"gb", "GiB", '3'}, {"gi", "GiB", '0'}, {"gib", "GiB", '0'},
                                     {"t", "TiB", '4'}, {"tb", "TiB", '4'}, {"ti", "TiB", '0'}, {"tib", "TiB", '0'},
                                     {"b", "B", '0'},   {"byte", "B", '0'}, {"bytes", "B", '0'}};
  for (const Hint& h : k_hints) {
    if (l != h.lower) continue;
    const std::string use = ", use " + quoted(head + std::string(h.use));
    if (h.power == '0') return not_a_size(text, use);
    // Decimal or binary: the reader cannot tell, so the grammar does not guess.
    const std::string power = h.power == '1' ? "" : std::string("^") + h.power;
    return error(StatusCode::invalid_argument, quoted(text) + " is not a size" + use +
                                                   " or the number of bytes: " + quoted(unit) + " may mean 1000" +
                                                   power + " or 1024" + power + " bytes");
  }
  return not_a_size(text, "");
}

}  // namespace

bool split_number_and_unit(std::string_view text, double& number, std::string_view& unit) {
  const std::size_t n = number_length(text);
  if (n == 0) return false;
  const std::string digits(text.substr(0, n));
  char* end = nullptr;
  number = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size()) return false;
  unit = text.substr(n);
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  return true;
}

Result<std::uint64_t> parse_size(std::string_view text) {
  if (!text.empty() && text.front() == '-') return not_a_size(text, ": a size is 0 or more bytes");
  double number = 0;
  std::string_view unit_text;
  if (!split_number_and_unit(text, number, unit_text)) return not_a_size(text, "");
  const std::string_view digits = text.substr(0, number_length(text));
  for (const Unit& unit : k_units) {
    if (unit_text != unit.name) continue;
    const Status too_large =
        error(StatusCode::invalid_argument, quoted(text) + " is too large a size (2^64 bytes or more)");
    if (digits.find('.') == std::string_view::npos) {
      // Whole numbers exactly (a double would round above 2^53).
      std::uint64_t whole = 0;
      const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), whole);
      if (ec != std::errc() || end != digits.data() + digits.size()) return too_large;
      if (whole > std::numeric_limits<std::uint64_t>::max() / unit.bytes) return too_large;
      return whole * unit.bytes;
    }
    const double bytes = number * static_cast<double>(unit.bytes);
    if (!std::isfinite(bytes) || bytes >= 18446744073709551616.0) return too_large;
    if (bytes != std::floor(bytes)) {
      return error(StatusCode::invalid_argument, quoted(text) + " is not a whole number of bytes");
    }
    return static_cast<std::uint64_t>(bytes);
  }
  return misspelled(text, unit_text);
}

std::string format_size(std::uint64_t bytes, SizeSpelling spelling) {
  const std::string space = spelling == SizeSpelling::spaced ? " " : "";
  static constexpr Unit k_largest_first[] = {{"TiB", k_tib}, {"GiB", k_gib}, {"MiB", k_mib}, {"KiB", k_kib}};
  static constexpr std::string_view k_quarters[] = {"", ".25", ".5", ".75"};
  for (const Unit& unit : k_largest_first) {
    const std::uint64_t rest = bytes % unit.bytes;
    if (bytes >= unit.bytes && rest % (unit.bytes / 4) == 0) {
      return std::to_string(bytes / unit.bytes) + std::string(k_quarters[rest / (unit.bytes / 4)]) + space +
             std::string(unit.name);
    }
  }
  return std::to_string(bytes) + space + "B";
}

}  // namespace sluice
