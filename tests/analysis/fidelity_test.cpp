// sluice fidelity (analysis/fidelity.hpp): seed figures read from results
// files, the F3 summary, the Markdown report and bad input.
#include "analysis/fidelity.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "analysis_fixtures.hpp"

namespace sluice::analysis {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json seed_claim(const std::string& text, double measured, double published, bool holds) {
  return {{"text", text},
          {"where", "x.lua:1"},
          {"measured", measured},
          {"kind", "seed_figure"},
          {"seed_value", published},
          {"tolerance", 0.15},
          {"seed_figure", "~"},
          {"relative_error", (measured - published) / published},
          {"holds", holds}};
}

json results_with(const std::string& scenario, json claims) {
  return {{"format", "sluice-results"},
          {"version", 1},
          {"scenario", scenario},
          {"runs", json::array()},
          {"claims", std::move(claims)}};
}

class Fidelity : public testing::FolderTest {
 protected:
  void SetUp() override {
    FolderTest::SetUp();
    fs::create_directories(dir_ / "a");
    fs::create_directories(dir_ / "b");
  }
  std::ostringstream out_, err_;
};

TEST_F(Fidelity, SeedFiguresGiveTheMedianErrorAndTheCountWithinTolerance) {
  json shape = {{"text", "grows"}, {"where", "y.lua:2"}, {"measured", 1.5}, {"kind", "shape"},
                {"at_least", 1.0}, {"seed_figure", ""},  {"holds", true}};
  const std::string a =
      write("a/results.json",
            results_with("study_a", {seed_claim("rate", 1.1, 1.0, true), seed_claim("ratio", 1.4, 2.0, false)}).dump());
  const std::string b = write("b/results.json", results_with("study_b", {seed_claim("ops", 190e3, 200e3, true), shape,
                                                                         json{{"text", "failed run"},
                                                                              {"where", "z:3"},
                                                                              {"measured", nullptr},
                                                                              {"kind", "seed_figure"},
                                                                              {"seed_value", 3.0},
                                                                              {"tolerance", 0.15},
                                                                              {"seed_figure", ""},
                                                                              {"holds", false}}})
                                                    .dump());
  write("b/plot.svg", "<svg/>");
  json input = seed_claim("source rate", 5e9, 5e9, true);
  input["model_input"] = true;  // shown, not counted
  const std::string c = write("c.json", results_with("study_c", {input}).dump());
  FidelityArgs args{{a, b, c}, (dir_ / "fidelity.md").string()};
  ASSERT_EQ(run_fidelity(args, out_, err_), 0) << err_.str();
  // |errors| 10%, 30%, 5% and the failed figure at 100%: median (10 + 30) / 2.
  EXPECT_NE(out_.str().find("RESULT F3 median_err=20.00 within_tolerance=2/4"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("MISS"), std::string::npos);
  EXPECT_NE(out_.str().find("shape claims"), std::string::npos);
  std::ifstream md(dir_ / "fidelity.md");
  std::ostringstream md_text;
  md_text << md.rdbuf();
  const std::string text = md_text.str();
  EXPECT_NE(text.find("| study_a | ratio | ~ | 2 | 1.4 | -30.0% | 15% | **miss** |"), std::string::npos) << text;
  EXPECT_NE(text.find("| study_b | grows |  | 1.5 | >= 1 | yes |"), std::string::npos) << text;
  EXPECT_NE(text.find("![plot](b/plot.svg)"), std::string::npos) << text;
  EXPECT_NE(text.find("| study_c | source rate | ~ | 5e+09 | 5e+09 | +0.0% | 15% | yes (input, not in F3) |"),
            std::string::npos)
      << text;
}

TEST_F(Fidelity, BadResultsFilesAreNamedWithThePlaceAndTheProblem) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{", "line 1, column 2: not valid JSON"},
      {json{{"format", "other-results"}, {"scenario", "s"}}.dump(), "\"format\" is not \"sluice-results\""},
      {json{{"format", "sluice-results"}, {"scenario", "s"}, {"runs", json::array()}, {"claims", 3}}.dump(),
       "results.claims: expected an array, got number 3"},
      {json{{"format", "sluice-results"}, {"scenario", "s"}, {"claims", json::array()}}.dump(),
       "results.runs: expected an array"},
      {json{{"format", "sluice-results"}, {"runs", json::array()}}.dump(), "not the results of a study"},
      {results_with("s", {json{{"text", "x"}}}).dump(), "claims[0]: missing \"seed_figure\""},
      {results_with("s", {json{{"text", "x"},
                               {"seed_figure", ""},
                               {"holds", true},
                               {"measured", 1},
                               {"kind", "seed_figure"},
                               {"tolerance", 0.1}}})
           .dump(),
       "claims[0].seed_value: expected a nonzero number"},
      {results_with("s", {json{{"text", "x"}, {"seed_figure", ""}, {"holds", true}, {"measured", "1"}}}).dump(),
       "claims[0].measured: expected a number, got string"},
      {results_with("s", {json{{"text", "x"}, {"seed_figure", ""}, {"holds", true}, {"measured", 1}}}).dump(),
       "claims[0]: a shape claim without \"at_least\" or \"at_most\""},
      {results_with("s", {json{{"text", "x"}, {"seed_figure", ""}, {"holds", 1}, {"measured", 1}, {"at_least", 1}}})
           .dump(),
       "claims[0].holds: expected a boolean"},
  };
  for (const auto& [text, expected] : cases) {
    const std::string p = write("bad.json", text);
    std::ostringstream out, err;
    EXPECT_EQ(run_fidelity({{p}, ""}, out, err), 2) << text;
    EXPECT_NE(err.str().find(p), std::string::npos) << err.str();
    EXPECT_NE(err.str().find(expected), std::string::npos) << err.str();
  }
  std::ostringstream out, err;
  EXPECT_EQ(run_fidelity({{(dir_ / "missing.json").string()}, ""}, out, err), 2);
  EXPECT_NE(err.str().find("missing.json: cannot be opened"), std::string::npos) << err.str();
}

}  // namespace
}  // namespace sluice::analysis
