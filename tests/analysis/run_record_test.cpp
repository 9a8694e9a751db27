#include "analysis/run_record.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "analysis_fixtures.hpp"

namespace sluice::analysis {
namespace {

TEST(ParseRuns, ReadsResultsDocumentWithNullMetricsAsNaN) {
  const auto doc = testing::results_json({testing::run_json("sim", "4", 1e8), testing::run_json("hw", "4", 2e8)});
  const std::vector<RunRecord> runs = *parse_runs(doc);
  ASSERT_EQ(runs.size(), 2U);
  EXPECT_EQ(runs[1].backend, "hw");
  EXPECT_EQ(runs[0].params.at("threads"), "4");
  ASSERT_EQ(runs[0].phases.size(), 1U);
  const PhaseRecord& p = runs[0].phases[0];
  EXPECT_DOUBLE_EQ(p.bytes_per_s, 1e8);
  EXPECT_TRUE(std::isnan(p.latency_us_p99));
  EXPECT_DOUBLE_EQ(phase_metric(p, "latency_us_p50"), 100.0);
  EXPECT_DOUBLE_EQ(phase_metric(p, "extra.au_pct"), 90.0);
  EXPECT_DOUBLE_EQ(phase_metric(p, "ops_per_s"), 5.0);
  EXPECT_DOUBLE_EQ(phase_metric(p, "last_done_s"), 2.0);
  EXPECT_TRUE(std::isnan(phase_metric(p, "extra.nope")));
  EXPECT_TRUE(std::isnan(phase_metric(p, "nope")));
  EXPECT_DOUBLE_EQ(runs[0].counters.at("chunks"), 4.0);
}

TEST(ParseRuns, ReadsOneRunObject) {
  const std::vector<RunRecord> runs = *parse_runs(testing::run_json("emulate", "1", 5));
  ASSERT_EQ(runs.size(), 1U);
  EXPECT_EQ(runs[0].backend, "emulate");
}

TEST(ParseRuns, AggregatesEmulateOutputPerPhase) {
  const std::vector<RunRecord> runs = *parse_runs(testing::emulate_json(200e6, 1000, 2'000'000'000));
  ASSERT_EQ(runs.size(), 1U);
  const RunRecord& r = runs[0];
  EXPECT_EQ(r.backend, "emulate");
  EXPECT_EQ(r.params.at("link_bits_per_s"), "200000000.0");
  EXPECT_EQ(r.params.at("stripe_count"), "2");
  ASSERT_EQ(r.phases.size(), 2U);
  EXPECT_EQ(r.phases[0].phase, "write");
  const PhaseRecord& read = r.phases[1];
  EXPECT_EQ(read.ranks, 2U);
  EXPECT_EQ(read.bytes, 2000U);
  EXPECT_DOUBLE_EQ(read.last_done_s, 2.0);  // slowest rank
  EXPECT_DOUBLE_EQ(read.bytes_per_s, 1000.0);
}

TEST(ParseRuns, NamesTheBrokenField) {
  auto doc = testing::results_json({testing::run_json("sim", "4", 1)});
  doc["runs"][0].erase("backend");
  Result<std::vector<RunRecord>> r = parse_runs(doc);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("runs[0]"), std::string::npos);
  EXPECT_NE(r.status().message().find("backend"), std::string::npos);
  auto bad_format = testing::results_json({});
  bad_format["format"] = "other";
  EXPECT_FALSE(parse_runs(bad_format).ok());
  EXPECT_FALSE(parse_runs(nlohmann::json::array()).ok());
  auto bad_phase = testing::run_json("sim", "4", 1);
  bad_phase["phases"][0].erase("phase");
  EXPECT_FALSE(parse_runs(bad_phase).ok());
  auto emu = testing::emulate_json(1, 1, 1);
  emu["emulation"].erase("rate_bits_per_s");
  EXPECT_FALSE(parse_runs(emu).ok());
}

TEST(LoadRuns, ReadsFilesAndReportsMissingOrInvalidOnes) {
  const auto dir = std::filesystem::temp_directory_path() / "sluice_analysis_load_runs";
  std::filesystem::create_directories(dir);
  const std::string good = (dir / "good.json").string();
  const std::string bad = (dir / "bad.json").string();
  std::ofstream(good) << testing::results_json({testing::run_json("sim", "1", 1)}).dump();
  std::ofstream(bad) << "{ not json";
  EXPECT_EQ(load_runs(good)->size(), 1U);
  EXPECT_EQ(load_runs(bad).status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(load_runs((dir / "missing.json").string()).status().code(), StatusCode::io_error);
  std::filesystem::remove_all(dir);
}

TEST(LoadResults, SaysWhetherTheFileHoldsEveryRunAndReadsAnIncompleteOneAllTheSame) {
  const auto dir = std::filesystem::temp_directory_path() / "sluice_analysis_load_results";
  std::filesystem::create_directories(dir);
  auto doc = testing::results_json({testing::run_json("sim", "1", 1)});
  const std::string older = (dir / "older.json").string();  // written before "complete" existed
  std::ofstream(older) << doc.dump();
  doc["complete"] = false;
  const std::string stopped = (dir / "stopped.json").string();
  std::ofstream(stopped) << doc.dump();
  EXPECT_TRUE(load_results(older)->complete);
  Result<ResultsFile> file = load_results(stopped);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  EXPECT_FALSE(file->complete);
  EXPECT_EQ(file->runs.size(), 1U);
  EXPECT_NE(incomplete_note(*file).find(stopped + " is incomplete"), std::string::npos) << incomplete_note(*file);
  EXPECT_NE(incomplete_note(*file).find("1 run in it"), std::string::npos) << incomplete_note(*file);
  EXPECT_TRUE(results_complete(testing::emulate_json(1, 1, 1)));
  std::filesystem::remove_all(dir);
}

TEST(ParseRuns, ReadsTheLabelAndTheConfiguration) {
  auto run = testing::run_json("sim", "1", 1);
  run["label"] = "4 MDS";
  run["config"] = {{"meta_servers", 4}, {"gds", "on"}, {"meta_mirrored", false}};
  const std::vector<RunRecord> runs = *parse_runs(testing::results_json({run, testing::run_json("sim", "2", 1)}));
  EXPECT_EQ(runs[0].label, "4 MDS");
  EXPECT_EQ(runs[0].config.at("meta_servers"), "4");
  EXPECT_EQ(runs[0].config.at("gds"), "on");
  EXPECT_EQ(runs[0].config.at("meta_mirrored"), "false");
  EXPECT_EQ(runs[1].label, "");  // files written before labels
  EXPECT_TRUE(runs[1].config.empty());
}

TEST(PointKey, SortsParamsAndLeavesOutIgnoredOnes) {
  RunRecord r;
  r.scenario = "s";
  r.params = {{"b", "2"}, {"a", "1"}};
  EXPECT_EQ(point_key(r), "s|a=1,b=2");
  EXPECT_EQ(point_key(r, {"a"}), "s|b=2");
}

TEST(ParseQuantity, UnderstandsNumbersSizesAndRates) {
  EXPECT_DOUBLE_EQ(*parse_quantity("4MiB"), 4.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*parse_quantity("200mbit"), 200e6);
  EXPECT_DOUBLE_EQ(*parse_quantity("1Gbit"), 1e9);
  EXPECT_DOUBLE_EQ(*parse_quantity("2KiB"), 2048);
  EXPECT_DOUBLE_EQ(*parse_quantity("1.5MiB"), 1.5 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*parse_quantity("3GiB"), 3.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*parse_quantity("1TiB"), 1024.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*parse_quantity("512B"), 512);
  EXPECT_DOUBLE_EQ(*parse_quantity("100M/s"), 100e6);
  EXPECT_DOUBLE_EQ(*parse_quantity("12.5GB/s"), 12.5e9);
  EXPECT_DOUBLE_EQ(*parse_quantity("42"), 42);
  EXPECT_DOUBLE_EQ(*parse_quantity("200000000.0"), 200e6);
  EXPECT_FALSE(parse_quantity("fast").ok());
  EXPECT_FALSE(parse_quantity("4 parsecs").ok());
}

TEST(ParseQuantity, SizesFollowTheOneSizeGrammar) {
  // Decimal or ambiguous size suffixes were read as powers of 1000 here and
  // as powers of 1024 by the emulate flags; now every reader refuses them.
  for (const char* text : {"4MB", "1M", "1.5k", "2T", "4mib"}) {
    const Result<double> q = parse_quantity(text);
    ASSERT_FALSE(q.ok()) << text << " read as " << *q;
    EXPECT_NE(q.status().message().find("is not a size, use"), std::string::npos) << q.status().message();
  }
  EXPECT_NE(parse_quantity("4MB").status().message().find("use \"4MiB\" or the number of bytes"), std::string::npos);
}

}  // namespace
}  // namespace sluice::analysis
