// base::parse_json_text (issue 47 item 5): every command that reads a JSON
// file says where its text stops being JSON, as a line and a column.
#include "base/json_text.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sluice::base {
namespace {

std::string error_of(std::string_view text, std::size_t begin = 0) {
  Result<nlohmann::json> j = parse_json_text(text, begin);
  return j.ok() ? "" : j.status().message();
}

TEST(JsonText, ASyntaxErrorNamesTheLineAndColumnOfTheOffendingByte) {
  EXPECT_EQ(error_of("{\n  \"runs\": [1,,2]\n}"),
            "line 2, column 14: not valid JSON: syntax error while parsing value - unexpected ','; expected '[', "
            "'{', or a literal");
  EXPECT_EQ(error_of("{\"a\": tru}").rfind("line 1, column 10: not valid JSON: ", 0), 0u) << error_of("{\"a\": tru}");
}

TEST(JsonText, TheEndOfTheTextAndANumberTooLargeHaveTheirPlaceToo) {
  const std::string cut = error_of("{\n  \"a\": [1,");
  EXPECT_EQ(cut.rfind("line 2, column 11: not valid JSON: ", 0), 0u) << cut;
  const std::string huge = error_of("{\"a\": 1,\n \"b\": 1e400}");
  EXPECT_EQ(huge, "line 2, column 11: not valid JSON: number overflow parsing '1e400'") << huge;  // its last byte
  EXPECT_EQ(error_of("").rfind("line 1, column 1: not valid JSON: ", 0), 0u) << error_of("");
}

TEST(JsonText, APlaceIsCountedInTheWholeTextWhenTheJsonStartsLater) {
  const std::string text = "note: a line before\n{\"a\":\n  x}";
  EXPECT_EQ(error_of(text, text.find('{')).rfind("line 3, column 3: ", 0), 0u) << error_of(text, text.find('{'));
  EXPECT_EQ((*parse_json_text("junk {\"a\": 1} junk", 5, 13))["a"], 1);
}

TEST(JsonText, ALongTokenIsCutInTheMessage) {
  const std::string text = "[\"" + std::string(10000, 'x');
  EXPECT_LT(error_of(text).size(), 300u);
}

TEST(JsonText, TextPlaceCountsLinesAndBytesFromOne) {
  EXPECT_EQ(text_place("ab\ncd", 0).line, 1u);
  EXPECT_EQ(text_place("ab\ncd", 4).line, 2u);
  EXPECT_EQ(text_place("ab\ncd", 4).column, 2u);
  EXPECT_EQ(text_place("ab\ncd", 99).column, 3u);  // past the end: the end
}

}  // namespace
}  // namespace sluice::base
