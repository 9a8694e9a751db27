#include "analysis/comparison.hpp"

#include <gtest/gtest.h>

#include "analysis_fixtures.hpp"

namespace sluice::analysis {
namespace {

std::vector<RunRecord> runs_of(const std::vector<nlohmann::json>& runs) {
  return *parse_runs(testing::results_json(runs));
}

TEST(CompareRuns, AlignsPointsAcrossBackendsAndReportsRelativeError) {
  const auto runs = runs_of({testing::run_json("sim", "1", 110), testing::run_json("hw", "1", 100),
                             testing::run_json("sim", "2", 150), testing::run_json("hw", "2", 200),
                             testing::run_json("sim", "8", 1)});
  CompareOptions o;
  o.metrics = {"bytes_per_s"};
  const Comparison c = *compare_runs(runs, o);
  ASSERT_EQ(c.rows.size(), 2U);
  EXPECT_EQ(c.rows[0].point, "sweep|file_size=4MiB,threads=1");
  EXPECT_EQ(c.rows[0].predicted_backend, "sim");
  EXPECT_EQ(c.rows[0].measured_backend, "hw");
  EXPECT_NEAR(c.rows[0].rel_err, 0.10, 1e-12);
  EXPECT_NEAR(c.rows[1].rel_err, 0.25, 1e-12);
  EXPECT_NEAR(c.median_rel_err, 0.175, 1e-12);
  EXPECT_NEAR(c.p90_rel_err, 0.235, 1e-12);
  ASSERT_EQ(c.unmatched.size(), 1U);
  EXPECT_NE(c.unmatched[0].find("threads=8"), std::string::npos);
  const std::string text = comparison_text(c);
  EXPECT_NE(text.find("median_err=17.50%"), std::string::npos);
  const nlohmann::json j = comparison_json(c);
  EXPECT_EQ(j["rows"].size(), 2U);
  EXPECT_NEAR(j["p90_err_pct"].get<double>(), 23.5, 1e-9);
}

TEST(CompareRuns, ReducesRepeatsToTheirMedianAndSkipsNaNMetrics) {
  const auto runs = runs_of({testing::run_json("sim", "1", 100, 1), testing::run_json("emulate", "1", 90, 1),
                             testing::run_json("emulate", "1", 100, 2), testing::run_json("emulate", "1", 1000, 3)});
  const Comparison c = *compare_runs(runs);
  // every default metric but latency_us_p99 (null) is compared
  EXPECT_EQ(c.rows.size(), k_default_metrics.size() - 1);
  for (const ComparisonRow& r : c.rows) {
    EXPECT_EQ(r.measured_repeats, 3U);
    if (r.metric == "bytes_per_s") {
      EXPECT_DOUBLE_EQ(r.measured, 100);
      EXPECT_DOUBLE_EQ(r.rel_err, 0);
    }
  }
}

TEST(CompareRuns, FailsWithoutAPointMeasuredAndPredicted) {
  EXPECT_FALSE(compare_runs(runs_of({testing::run_json("sim", "1", 1), testing::run_json("sim", "2", 1)})).ok());
  CompareOptions o;
  o.measured_backend = "hw";
  EXPECT_FALSE(compare_runs(runs_of({testing::run_json("sim", "1", 1), testing::run_json("emulate", "1", 1)}), o).ok());
}

TEST(CompareRuns, IgnoredParamsLetDifferentlyLabelledPointsMatch) {
  auto sim = testing::run_json("sim", "1", 120);
  sim["params"]["sim_only"] = "x";
  const auto runs = runs_of({sim, testing::run_json("hw", "1", 100)});
  EXPECT_FALSE(compare_runs(runs).ok());
  CompareOptions o;
  o.ignored_params = {"sim_only"};
  o.metrics = {"bytes_per_s"};
  EXPECT_NEAR(compare_runs(runs, o)->median_rel_err, 0.2, 1e-12);
}

}  // namespace
}  // namespace sluice::analysis
