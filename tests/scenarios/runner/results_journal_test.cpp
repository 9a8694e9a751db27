// ResultsJournal: the results files of a run as its points finish (issue 25 item 7).
#include "scenarios/runner/results_journal.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

namespace sluice::scenario {
namespace {

class JournalDir : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/sluice-journal-test-XXXXXX";
    ASSERT_NE(::mkdtemp(templ), nullptr);
    dir_ = templ;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  nlohmann::json results() const {
    std::ifstream in(dir_ + "/results.json");
    return nlohmann::json::parse(in);
  }
  // The seeds of the runs in results.json, in order.
  std::vector<std::uint64_t> seeds() const {
    std::vector<std::uint64_t> out;
    const nlohmann::json doc = results();  // alive through the loop
    for (const auto& run : doc["runs"]) out.push_back(run["seed"].get<std::uint64_t>());
    return out;
  }
  std::string dir_;
};

RunResult finished(std::uint64_t seed) {
  RunResult r;
  r.spec.scenario = "journal_test";
  r.spec.seed = seed;
  r.spec.label = "point " + std::to_string(seed);
  r.ok = true;
  return r;
}

TEST_F(JournalDir, EveryFinishedPointIsWrittenMarkedIncompleteUntilTheFinalWrite) {
  ResultsJournal journal(dir_, 0);  // no rewrite interval: every point is written at once
  ASSERT_TRUE(journal.begin_call("journal_test").ok());
  EXPECT_EQ(results()["complete"], false);  // the first call writes the files at once
  EXPECT_TRUE(results()["runs"].empty());
  ASSERT_TRUE(journal.point_done(1, finished(2)).ok());
  EXPECT_EQ(seeds(), std::vector<std::uint64_t>{2});
  ASSERT_TRUE(journal.point_done(0, finished(1)).ok());
  EXPECT_EQ(seeds(), (std::vector<std::uint64_t>{1, 2}));  // in point order, not finishing order
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/results.csv"));
  journal.end_call(true);
  ASSERT_TRUE(journal.begin_call("journal_test").ok());
  ASSERT_TRUE(journal.point_done(0, finished(3)).ok());
  EXPECT_EQ(seeds(), (std::vector<std::uint64_t>{1, 2, 3}));  // the earlier call's points stay first
  EXPECT_EQ(results()["complete"], false);
  EXPECT_EQ(results()["runs"][2]["label"], "point 3");
  EXPECT_EQ(journal.finished_count(), 3u);

  ScriptFindings findings;
  findings.headlines = {"a headline"};
  Claim seed;  // a seed figure 20% above its published value
  seed.text = "GDS / bounce";
  seed.measured = 2.4;
  seed.seed_value = 2.0;
  seed.judge();
  Claim shape;
  shape.text = "grows";
  shape.measured = 1.5;
  shape.at_least = 1.0;
  shape.judge();
  findings.claims = {seed, shape};
  ASSERT_TRUE(journal.write_final("journal_test", journal.finished(), findings).ok());
  EXPECT_EQ(results()["complete"], true);
  EXPECT_EQ(results()["headlines"][0], "a headline");
  const nlohmann::json claims = results()["claims"];
  ASSERT_EQ(claims.size(), 2u);
  EXPECT_EQ(claims[0]["kind"], "seed_figure");
  EXPECT_EQ(claims[0]["seed_value"], 2.0);
  EXPECT_EQ(claims[0]["tolerance"], 0.15);
  EXPECT_NEAR(claims[0]["relative_error"].get<double>(), 0.2, 1e-12);
  EXPECT_EQ(claims[0]["holds"], false);
  EXPECT_EQ(claims[1]["kind"], "shape");
  EXPECT_FALSE(claims[1].contains("seed_value"));
  EXPECT_EQ(claims[1]["holds"], true);
}

TEST_F(JournalDir, ACallThatFailedKeepsWhatFinishedAndAStopWritesIt) {
  ResultsJournal journal(dir_, 0);
  ASSERT_TRUE(journal.begin_call("journal_test").ok());
  ASSERT_TRUE(journal.point_done(0, finished(1)).ok());
  journal.end_call(false);  // stopped: point 1 of 2 never finished
  ASSERT_TRUE(journal.write_stopped().ok());
  EXPECT_EQ(seeds(), std::vector<std::uint64_t>{1});
  EXPECT_EQ(results()["complete"], false);
  EXPECT_EQ(results()["scenario"], "journal_test");
}

TEST_F(JournalDir, RewritesWaitForTheIntervalAndAStopWritesWhatWaited) {
  constexpr double k_never_s = 1e9;  // no second rewrite falls due in this test
  ResultsJournal journal(dir_, k_never_s);
  ASSERT_TRUE(journal.begin_call("journal_test").ok());
  ASSERT_TRUE(journal.point_done(0, finished(1)).ok());
  ASSERT_TRUE(journal.flush_if_due().ok());
  EXPECT_TRUE(seeds().empty());  // written at begin_call; the point waits for the interval
  ASSERT_TRUE(journal.write_stopped().ok());
  EXPECT_EQ(seeds(), std::vector<std::uint64_t>{1});
}

TEST_F(JournalDir, AFileThatCannotBeWrittenIsAnIoError) {
  std::ofstream(dir_ + "/file") << "x";
  ResultsJournal journal(dir_ + "/file/sub", 0);
  EXPECT_EQ(journal.begin_call("journal_test").code(), StatusCode::io_error);
}

}  // namespace
}  // namespace sluice::scenario
