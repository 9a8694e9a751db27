// JSON text a user gives sluice (a results file, a cluster config, a sim
// profile, another tool's output), parsed in one way everywhere: the
// document, or an error that says where the text stops being JSON, as a
// line and a column a user can go to.
#pragma once

#include <cstddef>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/common/status.hpp"

namespace sluice::base {

// Where byte `offset` of a text is: its line and column, both from 1 (the
// column counts bytes). An offset past the end is the end.
struct TextPlace {
  std::size_t line = 1;
  std::size_t column = 1;
};
TextPlace text_place(std::string_view text, std::size_t offset);

// The JSON document in bytes [begin, end) of `text` (the whole text by
// default). Not one: invalid_argument "line L, column C: not valid JSON:
// <what the parser found>", the place counted in the whole `text` (a tool's
// output may hold its JSON after other lines), where the parser stopped:
// a syntax error, a number too large for a double (1e400), the text's end.
Result<nlohmann::json> parse_json_text(std::string_view text, std::size_t begin = 0,
                                       std::size_t end = std::string_view::npos);

}  // namespace sluice::base
