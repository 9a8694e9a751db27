#include "core/common/quantity.hpp"

#include <cctype>
#include <cmath>
#include <string>

#include "core/common/byte_size.hpp"

namespace sluice {
namespace {

std::string quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

Result<double> parse_rate(std::string_view text) {
  static constexpr std::string_view k_accepted =
      "rates are written like \"100Gb/s\" (bits), \"12.5GB/s\", \"750MB/s\", \"2GiB/s\" (bytes) or a number of "
      "bytes per second";
  double number = 0;
  std::string_view suffix;
  if (!split_number_and_unit(text, number, suffix)) {
    return error(StatusCode::invalid_argument, quoted(text) + " is not a rate (" + std::string(k_accepted) + ")");
  }
  struct Unit {
    std::string_view name;
    double bytes_per_s;
  };
  static constexpr Unit k_units[] = {
      {"", 1},           {"B/s", 1},        {"KB/s", 1e3},        {"MB/s", 1e6},           {"GB/s", 1e9},
      {"TB/s", 1e12},    {"KiB/s", 1024.0}, {"MiB/s", 1048576.0}, {"GiB/s", 1073741824.0}, {"Kb/s", 1e3 / 8},
      {"Mb/s", 1e6 / 8}, {"Gb/s", 1e9 / 8}, {"Tb/s", 1e12 / 8}};
  for (const Unit& unit : k_units) {
    if (suffix == unit.name) {
      const double rate = number * unit.bytes_per_s;
      if (!std::isfinite(rate)) return error(StatusCode::invalid_argument, quoted(text) + " is too large a rate");
      return rate;
    }
  }
  const std::string l = lower(suffix);
  const std::string head(text.substr(0, text.size() - suffix.size()));
  std::string hint;
  if (l == "gbit" || l == "gbit/s" || l == "gbps" || l == "gbe" || l == "g" || l == "gb") hint = head + "Gb/s";
  if (l == "mbit" || l == "mbit/s" || l == "mbps" || l == "m" || l == "mb") hint = head + "Mb/s";
  std::string message = quoted(text) + " is not a rate";
  if (!hint.empty()) message += ", use " + quoted(hint) + " for bits per second";
  return error(StatusCode::invalid_argument, message + " (" + std::string(k_accepted) + ")");
}

Result<TimeNs> parse_duration(std::string_view text) {
  static constexpr std::string_view k_accepted =
      "durations are written like \"200ns\", \"5us\", \"10ms\", \"1.5s\" or a whole number of nanoseconds";
  double number = 0;
  std::string_view suffix;
  if (!split_number_and_unit(text, number, suffix)) {
    return error(StatusCode::invalid_argument, quoted(text) + " is not a duration (" + std::string(k_accepted) + ")");
  }
  struct Unit {
    std::string_view name;
    double ns;
  };
  static constexpr Unit k_units[] = {{"", 1}, {"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"min", 60e9}};
  for (const Unit& unit : k_units) {
    if (suffix != unit.name) continue;
    const double ns = number * unit.ns;
    if (!std::isfinite(ns) || ns > 9.2e18) return error(StatusCode::invalid_argument, quoted(text) + " is too long");
    return static_cast<TimeNs>(std::llround(ns));
  }
  return error(StatusCode::invalid_argument, quoted(text) + " is not a duration (" + std::string(k_accepted) + ")");
}

}  // namespace sluice
