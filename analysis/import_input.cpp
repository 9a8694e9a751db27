#include "analysis/import_input.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include "analysis/run_record.hpp"
#include "base/json_text.hpp"

namespace sluice::analysis {
namespace {

// 2^64: the first double that no std::uint64_t holds.
constexpr double k_two_to_64 = 18446744073709551616.0;

std::string found_text(const nlohmann::json& v) {
  std::string shown = v.is_primitive() ? " " + v.dump() : "";
  if (shown.size() > 41) shown = shown.substr(0, 38) + "...";
  return std::string(v.type_name()) + shown;
}

}  // namespace

Result<ImportInput> read_import_input(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return error(StatusCode::io_error, path + ": cannot be opened");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return error(StatusCode::io_error, path + ": cannot be read");
  if (text.str().size() > k_max_results_file_bytes) {
    return error(StatusCode::invalid_argument, path + ": larger than k_max_results_file_bytes (" +
                                                   std::to_string(k_max_results_file_bytes) + " bytes)");
  }
  return ImportInput{path, text.str()};
}

void fail_at_line(const ImportInput& input, std::size_t line, const std::string& what) {
  throw ImportError(input.path + ":" + std::to_string(line) + ": " + what);
}

void fail_at_field(const ImportInput& input, const std::string& path, const std::string& what) {
  throw ImportError(input.path + ": " + (path.empty() ? "" : path + ": ") + what);
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

std::string_view trim(std::string_view text) {
  const std::size_t b = text.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const std::size_t e = text.find_last_not_of(" \t\r\n");
  return text.substr(b, e - b + 1);
}

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

std::optional<double> parse_decimal(std::string_view token) {
  if (token.empty()) return std::nullopt;
  double v = 0;
  const char* end = token.data() + token.size();
  const auto [used, ec] = std::from_chars(token.data(), end, v);
  if (ec != std::errc() || used != end || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<std::uint64_t> parse_whole(std::string_view token) {
  if (token.empty()) return std::nullopt;
  std::uint64_t v = 0;
  const char* end = token.data() + token.size();
  const auto [used, ec] = std::from_chars(token.data(), end, v);
  if (ec != std::errc() || used != end) return std::nullopt;
  return v;
}

std::uint64_t whole_count(const ImportInput& input, const std::string& path, double amount) {
  if (!std::isfinite(amount) || amount < 0 || std::round(amount) >= k_two_to_64) {
    fail_at_field(input, path, "expected a count in 0..2^64, got " + std::to_string(amount));
  }
  return static_cast<std::uint64_t>(std::round(amount));  // defined: 0 <= round(amount) < 2^64
}

nlohmann::json parse_json_at(const ImportInput& input, std::size_t offset, std::size_t end) {
  Result<nlohmann::json> document = base::parse_json_text(input.text, offset, end);
  if (!document.ok()) fail_at_field(input, "", document.status().message());
  return std::move(document).value();
}

std::string field_path(const std::string& where, std::string_view key) {
  return where.empty() ? std::string(key) : where + "." + std::string(key);
}

const nlohmann::json& json_object_field(const ImportInput& input, const nlohmann::json& j, const std::string& where,
                                        const char* key) {
  if (!j.contains(key) || j[key].is_null()) fail_at_field(input, field_path(where, key), "missing, expected an object");
  if (!j[key].is_object())
    fail_at_field(input, field_path(where, key), "expected an object, got " + found_text(j[key]));
  return j[key];
}

const nlohmann::json& json_array_field(const ImportInput& input, const nlohmann::json& j, const std::string& where,
                                       const char* key) {
  if (!j.contains(key) || j[key].is_null()) fail_at_field(input, field_path(where, key), "missing, expected an array");
  if (!j[key].is_array()) fail_at_field(input, field_path(where, key), "expected an array, got " + found_text(j[key]));
  return j[key];
}

std::string json_text_field(const ImportInput& input, const nlohmann::json& j, const std::string& where,
                            const char* key) {
  if (!j.contains(key) || j[key].is_null()) fail_at_field(input, field_path(where, key), "missing, expected a string");
  if (!j[key].is_string()) fail_at_field(input, field_path(where, key), "expected a string, got " + found_text(j[key]));
  return j[key].get<std::string>();
}

std::optional<double> json_optional_amount(const ImportInput& input, const nlohmann::json& j, const std::string& where,
                                           const char* key, QuotedNumbers quoted) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  const nlohmann::json& v = j[key];
  const bool accept_text = quoted == QuotedNumbers::accepted;
  std::optional<double> amount;
  if (v.is_number()) {
    amount = v.get<double>();
  } else if (accept_text && v.is_string()) {
    if (trim(v.get_ref<const std::string&>()).empty()) return std::nullopt;
    amount = parse_decimal(trim(v.get_ref<const std::string&>()));
  }
  if (!amount || !std::isfinite(*amount) || *amount < 0) {
    fail_at_field(input, field_path(where, key),
                  std::string("expected a number >= 0") + (accept_text ? " (or one in a string)" : "") + ", got " +
                      found_text(v));
  }
  return amount;
}

double json_amount_field(const ImportInput& input, const nlohmann::json& j, const std::string& where, const char* key,
                         QuotedNumbers quoted) {
  const std::optional<double> amount = json_optional_amount(input, j, where, key, quoted);
  if (!amount) fail_at_field(input, field_path(where, key), "missing, expected a number >= 0");
  return *amount;
}

std::string scalar_text(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (value.is_number_unsigned()) return std::to_string(value.get<std::uint64_t>());
  if (value.is_number_integer()) return std::to_string(value.get<std::int64_t>());
  return value.dump();
}

}  // namespace sluice::analysis
