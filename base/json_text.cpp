#include "base/json_text.hpp"

#include <algorithm>
#include <string>

namespace sluice::base {
namespace {

// A parse that builds nothing and keeps where the parser stopped and why:
// nlohmann's DOM parse throws that away (a syntax error's byte, but not a
// number overflow's), its SAX interface gives both for every error.
struct ErrorPlace final : nlohmann::json_sax<nlohmann::json> {
  std::size_t position = 0;  // bytes read when it stopped: the offending byte is the last of them
  std::string what;

  bool null() override { return true; }
  bool boolean(bool /*unused*/) override { return true; }
  bool number_integer(number_integer_t /*unused*/) override { return true; }
  bool number_unsigned(number_unsigned_t /*unused*/) override { return true; }
  bool number_float(number_float_t /*unused*/, const string_t& /*unused*/) override { return true; }
  bool string(string_t& /*unused*/) override { return true; }
  bool binary(binary_t& /*unused*/) override { return true; }
  bool start_object(std::size_t /*unused*/) override { return true; }
  bool key(string_t& /*unused*/) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t /*unused*/) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t at, const std::string& /*unused*/, const nlohmann::json::exception& ex) override {
    position = at;
    what = ex.what();
    return false;
  }
};

// A reason this long is enough ("...; last read: '<token>'" may quote a whole string).
constexpr std::size_t k_max_reason_chars = 160;

// nlohmann's message without its "[json.exception.parse_error.101] parse
// error at line 1, column 2: " prefix: the place is said once, ours.
std::string parser_reason(std::string what) {
  if (const std::size_t id_end = what.find("] "); what.rfind("[json.exception.", 0) == 0 && id_end != std::string::npos)
    what.erase(0, id_end + 2);
  if (const std::size_t colon = what.find(": "); what.rfind("parse error", 0) == 0 && colon != std::string::npos)
    what.erase(0, colon + 2);
  if (what.size() > k_max_reason_chars) what = what.substr(0, k_max_reason_chars - 3) + "...";
  return what;
}

}  // namespace

TextPlace text_place(std::string_view text, std::size_t offset) {
  const std::string_view before = text.substr(0, std::min(offset, text.size()));
  const std::size_t line_start = before.rfind('\n');
  return {1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n')),
          1 + before.size() - (line_start == std::string_view::npos ? 0 : line_start + 1)};
}

Result<nlohmann::json> parse_json_text(std::string_view text, std::size_t begin, std::size_t end) {
  begin = std::min(begin, text.size());
  end = std::clamp(end, begin, text.size());
  const std::string_view json = text.substr(begin, end - begin);
  nlohmann::json document = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!document.is_discarded()) return document;
  ErrorPlace stop;
  nlohmann::json::sax_parse(json, &stop);
  // The offending byte is the last one read (position counts from 1); nothing read: the first.
  const TextPlace at = text_place(text, begin + (stop.position > 0 ? stop.position - 1 : 0));
  return error(StatusCode::invalid_argument, "line " + std::to_string(at.line) + ", column " +
                                                 std::to_string(at.column) +
                                                 ": not valid JSON: " + parser_reason(stop.what));
}

}  // namespace sluice::base
