#include "analysis/comparison.hpp"

#include <gtest/gtest.h>

#include <map>

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

// A run of `scenario` on `backend` at `params`, reading at read_bytes_per_s.
RunRecord run_at(const std::string& scenario, const std::string& backend,
                 const std::map<std::string, std::string>& params, double read_bytes_per_s, std::uint64_t seed = 1) {
  nlohmann::json j = testing::run_json(backend, "1", read_bytes_per_s, seed);
  j["scenario"] = scenario;
  j["params"] = params;
  return parse_runs(j)->front();
}

ResultsFile fio_file(std::vector<RunRecord> runs, const std::string& path = "fio.json") {
  ResultsFile file;
  file.path = path;
  file.runs = std::move(runs);
  return file;
}

MeasuredMatch by_rw_and_bs() {
  MeasuredMatch m;
  m.params = {"rw", "bs_bytes"};
  m.metrics = {"bytes_per_s"};
  return m;
}

TEST(CompareWithMeasured, AlignsByTheMatchedParamsWhateverTheScenarioNames) {
  const std::vector<RunRecord> predicted = {run_at("nvme_model", "sim", {{"rw", "read"}, {"bs_bytes", "4096"}}, 110),
                                            run_at("nvme_model", "sim", {{"rw", "read"}, {"bs_bytes", "1MiB"}}, 900)};
  const std::vector<ResultsFile> measured = {
      fio_file({run_at("fio", "hw", {{"rw", "read"}, {"bs_bytes", "4096"}, {"iodepth", "1"}}, 100),
                run_at("fio", "hw", {{"rw", "write"}, {"bs_bytes", "4096"}, {"iodepth", "1"}}, 50)})};
  const Comparison c = *compare_with_measured(predicted, measured, by_rw_and_bs());
  ASSERT_EQ(c.rows.size(), 1U);
  EXPECT_EQ(c.rows[0].point, "rw=read,bs_bytes=4096");
  EXPECT_EQ(c.rows[0].workload, "file_sweep");
  EXPECT_EQ(c.rows[0].phase, "read");
  EXPECT_EQ(c.rows[0].predicted_backend, "sim");
  EXPECT_EQ(c.rows[0].measured_backend, "hw");
  EXPECT_DOUBLE_EQ(c.rows[0].predicted, 110);
  EXPECT_DOUBLE_EQ(c.rows[0].measured, 100);
  EXPECT_NEAR(c.rows[0].rel_err, 0.10, 1e-12);
  EXPECT_NEAR(c.median_rel_err, 0.10, 1e-12);
  EXPECT_EQ(c.unmatched, std::vector<std::string>{"rw=write,bs_bytes=4096"});
  EXPECT_NE(comparison_text(c).find("unmatched (no predicted run there): rw=write,bs_bytes=4096"), std::string::npos)
      << comparison_text(c);
}

TEST(CompareWithMeasured, QuantitiesOfEqualValueAreTheSamePoint) {
  const std::vector<ResultsFile> measured = {
      fio_file({run_at("fio", "hw", {{"rw", "read"}, {"bs_bytes", "4096"}}, 100)})};
  const Result<Comparison> same = compare_with_measured(
      {run_at("study", "sim", {{"rw", "read"}, {"bs_bytes", "4KiB"}}, 120)}, measured, by_rw_and_bs());
  ASSERT_TRUE(same.ok()) << same.status().message();
  EXPECT_NEAR(same->rows.at(0).rel_err, 0.2, 1e-12);
  EXPECT_FALSE(compare_with_measured({run_at("study", "sim", {{"rw", "read"}, {"bs_bytes", "4097"}}, 120)}, measured,
                                     by_rw_and_bs())
                   .ok());
}

TEST(CompareWithMeasured, WithoutMatchEveryParamOfTheMeasuredRunPlacesIt) {
  const std::vector<ResultsFile> measured = {fio_file({run_at("fio", "hw", {{"rw", "read"}}, 100)})};
  MeasuredMatch all;
  all.metrics = {"bytes_per_s"};
  const std::vector<RunRecord> predicted = {run_at("study", "sim", {{"rw", "read"}, {"nodes", "4"}}, 130),
                                            run_at("study", "sim", {{"nodes", "4"}}, 1)};
  const Comparison c = *compare_with_measured(predicted, measured, all);
  ASSERT_EQ(c.rows.size(), 1U);
  EXPECT_EQ(c.rows[0].point, "rw=read");
  EXPECT_EQ(c.rows[0].predicted_repeats, 1U);  // the run without rw is at no point
  EXPECT_NEAR(c.rows[0].rel_err, 0.3, 1e-12);
}

TEST(CompareWithMeasured, RepeatsAreMediansAndEachPredictedBackendHasItsRows) {
  const std::map<std::string, std::string> at = {{"rw", "read"}, {"bs_bytes", "4096"}};
  const std::vector<ResultsFile> measured = {
      fio_file({run_at("fio", "hw", at, 90, 1), run_at("fio", "hw", at, 100, 2)}),
      fio_file({run_at("fio", "hw", at, 1000, 3)}, "more.json")};
  const std::vector<RunRecord> predicted = {run_at("study", "sim", at, 100, 1), run_at("study", "sim", at, 120, 2),
                                            run_at("study", "emulate", at, 100, 1)};
  const Comparison c = *compare_with_measured(predicted, measured, by_rw_and_bs());
  ASSERT_EQ(c.rows.size(), 2U);
  EXPECT_EQ(c.rows[0].predicted_backend, "emulate");
  EXPECT_NEAR(c.rows[0].rel_err, 0, 1e-12);
  EXPECT_EQ(c.rows[1].predicted_backend, "sim");
  EXPECT_DOUBLE_EQ(c.rows[1].predicted, 110);
  EXPECT_DOUBLE_EQ(c.rows[1].measured, 100);  // the median of 90, 100 and 1000, over both files
  EXPECT_EQ(c.rows[1].predicted_repeats, 2U);
  EXPECT_EQ(c.rows[1].measured_repeats, 3U);
}

TEST(CompareWithMeasured, AMatchParamAMeasuredRunLacksIsRefusedNamingItAndTheFile) {
  const std::vector<RunRecord> predicted = {run_at("study", "sim", {{"rw", "read"}, {"bs", "4k"}}, 1)};
  const std::vector<ResultsFile> measured = {
      fio_file({run_at("fio", "hw", {{"rw", "read"}, {"bs_bytes", "4096"}}, 1)})};
  MeasuredMatch m;
  m.params = {"rw", "bs"};
  const Result<Comparison> c = compare_with_measured(predicted, measured, m);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::invalid_argument);
  EXPECT_NE(c.status().message().find("match: fio.json: run 1 (fio) has no param \"bs\" (it has bs_bytes, rw)"),
            std::string::npos)
      << c.status().message();
}

TEST(CompareWithMeasured, AMatchParamNoPredictedRunHasIsRefused) {
  const std::vector<RunRecord> predicted = {run_at("study", "sim", {{"rw", "read"}}, 1)};
  const std::vector<ResultsFile> measured = {fio_file({run_at("fio", "hw", {{"rw", "read"}, {"iodepth", "8"}}, 1)})};
  MeasuredMatch m;
  m.params = {"iodepth"};
  const Result<Comparison> c = compare_with_measured(predicted, measured, m);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("match: no predicted run has a param \"iodepth\" (the first has rw)"),
            std::string::npos)
      << c.status().message();
}

TEST(CompareWithMeasured, AnUnknownMetricIsRefusedAndExtraMetricsAreKnown) {
  const std::map<std::string, std::string> at = {{"rw", "read"}};
  const std::vector<ResultsFile> measured = {fio_file({run_at("fio", "hw", at, 1)})};
  MeasuredMatch m;
  m.metrics = {"byte_per_s"};
  const Result<Comparison> bad = compare_with_measured({run_at("study", "sim", at, 1)}, measured, m);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("metrics: \"byte_per_s\" is not a metric"), std::string::npos)
      << bad.status().message();
  m.metrics = {"extra.au_pct"};
  EXPECT_TRUE(compare_with_measured({run_at("study", "sim", at, 1)}, measured, m).ok());
}

TEST(CompareWithMeasured, NoPointInCommonSaysWhereEachSideIs) {
  const std::vector<ResultsFile> measured = {
      fio_file({run_at("fio", "hw", {{"rw", "read"}, {"bs_bytes", "4096"}}, 1)})};
  const Result<Comparison> c = compare_with_measured(
      {run_at("study", "sim", {{"rw", "write"}, {"bs_bytes", "4096"}}, 1)}, measured, by_rw_and_bs());
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("the first at rw=read,bs_bytes=4096; the first predicted run is at "
                                      "rw=write,bs_bytes=4096"),
            std::string::npos)
      << c.status().message();
  EXPECT_FALSE(compare_with_measured({}, measured, by_rw_and_bs()).ok());
  EXPECT_FALSE(
      compare_with_measured({run_at("study", "sim", {{"rw", "read"}, {"bs_bytes", "4096"}}, 1)}, {}, by_rw_and_bs())
          .ok());
}

}  // namespace
}  // namespace sluice::analysis
