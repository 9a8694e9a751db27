// sluice fidelity (analysis/fidelity.hpp): seed figures read from results
// files, the F3 summary, the Markdown report and bad input.
#include "analysis/fidelity.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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

class Fidelity : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sluice_fidelity_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "a");
    fs::create_directories(dir_ / "b");
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string p = (dir_ / name).string();
    std::ofstream(p) << text;
    return p;
  }
  fs::path dir_;
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
      {"{", "not JSON"},
      {json{{"format", "other-results"}, {"scenario", "s"}}.dump(), "not a sluice results file"},
      {json{{"format", "sluice-results"}, {"scenario", "s"}, {"claims", 3}}.dump(), "\"claims\" is not a list"},
      {results_with("s", {json{{"text", "x"}}}).dump(), "claim 1: \"seed_figure\" is not text"},
      {results_with("s", {json{{"text", "x"},
                               {"seed_figure", ""},
                               {"holds", true},
                               {"measured", 1},
                               {"kind", "seed_figure"},
                               {"tolerance", 0.1}}})
           .dump(),
       "claim 1: a seed figure without a nonzero \"seed_value\""},
      {results_with("s", {json{{"text", "x"}, {"seed_figure", ""}, {"holds", true}, {"measured", "1"}}}).dump(),
       "\"measured\" is not a number or null"},
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
  EXPECT_NE(err.str().find("cannot read"), std::string::npos) << err.str();
}

}  // namespace
}  // namespace sluice::analysis
