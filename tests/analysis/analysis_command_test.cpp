#include "analysis/analysis_command.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <gtest/gtest.h>

#include "analysis/calibration.hpp"
#include "analysis_fixtures.hpp"

namespace sluice::analysis {
namespace {

namespace fs = std::filesystem;

class AnalysisCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sluice_analysis_cmd_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const nlohmann::json& j) {
    const std::string p = (dir_ / name).string();
    std::ofstream(p) << j.dump();
    return p;
  }
  fs::path dir_;
  std::ostringstream out_, err_;
};

TEST_F(AnalysisCommand, CompareAcrossFilesPrintsAndWritesJson) {
  const std::string a = write("a.json", testing::results_json({testing::run_json("sim", "1", 120)}));
  const std::string b = write("b.json", testing::results_json({testing::run_json("hw", "1", 100)}));
  CompareArgs args{{a, b}, {"bytes_per_s"}, {}, "", (dir_ / "cmp.json").string()};
  ASSERT_EQ(run_compare(args, out_, err_), 0) << err_.str();
  EXPECT_NE(out_.str().find("median_err=20.00%"), std::string::npos);
  EXPECT_NEAR((*read_json_file(args.json_out))["median_err_pct"].get<double>(), 20.0, 1e-9);
  EXPECT_EQ(run_compare({{a}, {}, {}, "", ""}, out_, err_), 1);
  EXPECT_EQ(run_compare({{(dir_ / "none.json").string()}, {}, {}, "", ""}, out_, err_), 2) << "a missing input file";
  args.json_out = (dir_ / "no/dir.json").string();
  EXPECT_EQ(run_compare(args, out_, err_), 1);
}

TEST_F(AnalysisCommand, CalibrateSyntheticPrintsF1AndWritesALoadableProfile) {
  FitCalibrationArgs args;
  args.synthetic = true;
  args.base = std::string(SLUICE_SOURCE_DIR) + "/sim/profiles/default.json";
  args.out = (dir_ / "fit.json").string();
  args.name = "fit";
  ASSERT_EQ(run_fit_calibration(args, out_, err_), 0) << err_.str();
  EXPECT_NE(out_.str().find("RESULT F1 median_err="), std::string::npos);
  const nlohmann::json p = *read_json_file(args.out);
  EXPECT_EQ(p["format"], "sluice-sim-profile");
  EXPECT_EQ(p["name"], "fit");
  args.base = (dir_ / "none.json").string();
  EXPECT_EQ(run_fit_calibration(args, out_, err_), 1);
}

TEST_F(AnalysisCommand, CalibrateFromMeasuredFilesFitsAndScoresHeldOutRuns) {
  // "Measured" emulate runs generated from known parameters: exact data.
  const TransferParams truth{0.9, 300, 200e-6};
  std::vector<std::string> fit_files, hold_files;
  int i = 0;
  for (double link : {200e6, 500e6, 300e6}) {
    for (int stripes : {1, 2, 3}) {
      for (double mib : {4.0, 16.0}) {
        const double chunk_kib = mib > 8 ? 1024 : 256;
        const TransferPoint x{link / 8, 0, mib * 1048576, chunk_kib * 1024, static_cast<double>(stripes), 2};
        const double rate = predict_bytes_per_s(truth, x);
        const auto bytes = static_cast<std::uint64_t>(x.file_bytes);
        auto j = testing::emulate_json(link, bytes, static_cast<std::uint64_t>(2 * x.file_bytes / rate * 1e9));
        j["params"] = {{"stripe_count", stripes},
                       {"file_size", std::to_string(static_cast<int>(mib)) + "MiB"},
                       {"chunk_size", std::to_string(static_cast<int>(chunk_kib)) + "KiB"}};
        const std::string f = write("run" + std::to_string(i++) + ".json", j);
        (link == 300e6 ? hold_files : fit_files).push_back(f);
      }
    }
  }
  FitCalibrationArgs args;
  args.fit_files = fit_files;
  args.holdout_files = hold_files;
  ASSERT_EQ(run_fit_calibration(args, out_, err_), 0) << err_.str();
  EXPECT_NE(out_.str().find("RESULT F1 median_err=0.0"), std::string::npos) << out_.str();
  // Exact data: each value with a standard error near 0 and a 95% interval (issue 19, item 6).
  EXPECT_NE(out_.str().find("network_bandwidth_factor = 0.9 +- "), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("request_service_us = 200 +- "), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("(95%: 0.9 .. 0.9)"), std::string::npos) << out_.str();
  FitCalibrationArgs none;
  EXPECT_EQ(run_fit_calibration(none, out_, err_), 2);
  FitCalibrationArgs missing;
  missing.fit_files = {(dir_ / "none.json").string()};
  EXPECT_EQ(run_fit_calibration(missing, out_, err_), 2) << "a missing input file";
  FitCalibrationArgs few;
  few.fit_files = {fit_files[0]};
  EXPECT_EQ(run_fit_calibration(few, out_, err_), 1);
  FitCalibrationArgs no_params;
  no_params.fit_files = {write("bare.json", testing::results_json({testing::run_json("hw", "1", 1)}))};
  EXPECT_EQ(run_fit_calibration(no_params, out_, err_), 1);
}

TEST_F(AnalysisCommand, ReportWritesMarkdown) {
  const std::string a =
      write("a.json", testing::results_json({testing::run_json("sim", "1", 120), testing::run_json("hw", "1", 100),
                                             testing::run_json("hw", "2", 150)}));
  ReportArgs args{{a}, (dir_ / "rep").string(), "threads", "read", "T"};
  ASSERT_EQ(run_report(args, out_, err_), 0) << err_.str();
  EXPECT_TRUE(fs::exists(dir_ / "rep" / "report.md"));
  EXPECT_EQ(run_report({{(dir_ / "none.json").string()}, (dir_ / "r2").string(), "", "read", "T"}, out_, err_), 2);
}

TEST_F(AnalysisCommand, IncompleteFilesAreReadAndSaidToBeIncomplete) {
  auto stopped = testing::results_json({testing::run_json("sim", "1", 120)});
  stopped["complete"] = false;
  const std::string a = write("a.json", stopped);
  const std::string b = write("b.json", testing::results_json({testing::run_json("hw", "1", 100)}));
  ASSERT_EQ(run_compare({{a, b}, {"bytes_per_s"}, {}, "", ""}, out_, err_), 0) << err_.str();
  EXPECT_NE(err_.str().find(a + " is incomplete"), std::string::npos) << err_.str();
  EXPECT_EQ(err_.str().find(b + " is incomplete"), std::string::npos) << err_.str();
  ReportArgs args{{a, b}, (dir_ / "rep").string(), "threads", "read", "T"};
  ASSERT_EQ(run_report(args, out_, err_), 0) << err_.str();
  std::ifstream md_file(dir_ / "rep" / "report.md");
  std::ostringstream md_text;  // not istreambuf_iterator: GCC 12 -O2 warns -Wnull-dereference inside it
  md_text << md_file.rdbuf();
  const std::string md = md_text.str();
  EXPECT_NE(md.find("**Incomplete results.** " + a + " is incomplete"), std::string::npos) << md;
}

}  // namespace
}  // namespace sluice::analysis
