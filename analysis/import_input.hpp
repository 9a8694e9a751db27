// ImportInput: one measurement file of another tool (fio, elbencho, IOR,
// mdtest, gdsio) as `sluice import` reads it, and the helpers its readers
// share to say where an input is wrong.
//
// Contract of the readers (import_fio.hpp, import_elbencho.hpp, ...):
//  - they throw ImportError, whose message names the file and the place: a
//    line for text ("ior.txt:12: ...") or a JSON field path for JSON
//    ("fio.json: jobs[1].read.io_bytes: ..."), then what was expected and
//    what was found;
//  - they never abort on bad input (every field is type-checked) and never
//    read past the text they are given; the text is bounded by
//    k_max_results_file_bytes (read_import_input).
// Readers only read the input: threads may share one ImportInput while none changes it.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/status.hpp"

namespace sluice::analysis {

struct ImportInput {
  std::string path;  // as given on the command line; names the file in messages
  std::string text;
};

// The file's text. io_error when it cannot be read; invalid_argument when it
// is larger than k_max_results_file_bytes (run_record.hpp), the one size
// limit of every results file analysis/ reads.
Result<ImportInput> read_import_input(const std::string& path);

// Bad input: the message is complete ("FILE:LINE: ..." or "FILE: FIELD: ...").
struct ImportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// "FILE:LINE: what" (line counts from 1).
[[noreturn]] void fail_at_line(const ImportInput& input, std::size_t line, const std::string& what);
// "FILE: path: what" (path "" for the whole document: "FILE: what").
[[noreturn]] void fail_at_field(const ImportInput& input, const std::string& path, const std::string& what);

// The lines of `text` without their ends ("\n" or "\r\n"); line i of the file is element i - 1.
std::vector<std::string_view> split_lines(std::string_view text);
// The whitespace-separated words of a line.
std::vector<std::string_view> split_words(std::string_view line);
std::string_view trim(std::string_view text);
bool starts_with(std::string_view text, std::string_view prefix);

// A whole token that is a finite decimal number ("12", "-3.5", "1e9"); nothing else.
std::optional<double> parse_decimal(std::string_view token);
// A whole token that is a non-negative integer below 2^64.
std::optional<std::uint64_t> parse_whole(std::string_view token);

// A non-negative finite amount as a whole count (bytes, ops): rounded to the
// nearest integer; fail_at_field(path) when negative, not finite or >= 2^64.
std::uint64_t whole_count(const ImportInput& input, const std::string& path, double amount);

// The JSON document in bytes [offset, end) of the input; not one: "FILE: line
// L, column C: not valid JSON: ..." (base::parse_json_text), the place in the file.
nlohmann::json parse_json_at(const ImportInput& input, std::size_t offset, std::size_t end);

// ---- fields of a JSON object, each error naming "where.key" ----
// `where` is the object's own path ("" for the document, "jobs[0]" ...).
std::string field_path(const std::string& where, std::string_view key);
// The object `key` of j; absent or null: an error saying it is expected.
const nlohmann::json& json_object_field(const ImportInput& input, const nlohmann::json& j, const std::string& where,
                                        const char* key);
const nlohmann::json& json_array_field(const ImportInput& input, const nlohmann::json& j, const std::string& where,
                                       const char* key);
std::string json_text_field(const ImportInput& input, const nlohmann::json& j, const std::string& where,
                            const char* key);
// Whether quoted numbers ("123") count as numbers: elbencho's JSON writer
// (boost::property_tree's write_json) writes every value as a string.
enum class QuotedNumbers : std::uint8_t { refused, accepted };
// A finite number >= 0.
double json_amount_field(const ImportInput& input, const nlohmann::json& j, const std::string& where, const char* key,
                         QuotedNumbers quoted = QuotedNumbers::refused);
// As json_amount_field, but absent or null (or "" when quoted numbers are accepted) is nullopt.
std::optional<double> json_optional_amount(const ImportInput& input, const nlohmann::json& j, const std::string& where,
                                           const char* key, QuotedNumbers quoted = QuotedNumbers::refused);
// A scalar as text: strings as they are, integers in decimal, booleans "true"/"false", other numbers as JSON prints
// them.
std::string scalar_text(const nlohmann::json& value);

}  // namespace sluice::analysis
