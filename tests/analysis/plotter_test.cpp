#include "analysis/plotter.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "analysis/run_report.hpp"
#include "analysis_fixtures.hpp"

namespace sluice::analysis {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A valid PNG starts with its 8-byte signature and an IHDR chunk (PNG spec, 5.2, 5.3).
void expect_png(const fs::path& p) {
  ASSERT_TRUE(fs::exists(p)) << p;
  const std::string b = slurp(p);
  ASSERT_GT(b.size(), 2000U) << p;
  EXPECT_EQ(b.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(b.substr(12, 4), "IHDR");
}

void expect_svg(const fs::path& p) {
  ASSERT_TRUE(fs::exists(p)) << p;
  const std::string b = slurp(p);
  ASSERT_GT(b.size(), 2000U) << p;
  EXPECT_NE(b.find("<svg"), std::string::npos);
  EXPECT_NE(b.find("</svg>"), std::string::npos);
  EXPECT_NE(b.find("<path"), std::string::npos);
}

std::vector<RunRecord> sweep_runs() {
  std::vector<nlohmann::json> runs;
  const std::vector<std::pair<std::string, double>> measured = {{"1", 40e6}, {"2", 75e6}, {"4", 95e6}, {"8", 100e6}};
  for (const auto& [t, y] : measured) {
    runs.push_back(testing::run_json("hw", t, y, 1));
    runs.push_back(testing::run_json("hw", t, y * 0.9, 2));
    runs.push_back(testing::run_json("sim", t, y * 1.05, 1));
  }
  return *parse_runs(testing::results_json(runs));
}

PlotSpec one_point() {
  PlotSpec s;
  s.series.push_back({"s", {1}, {1}, {}, {}});
  return s;
}

class PlotFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gnuplot_available()) GTEST_SKIP() << "gnuplot is not installed";
    dir_ = fs::temp_directory_path() /
           ("sluice_analysis_plot_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  fs::path dir_;
};

TEST(ThroughputPlot, OneSeriesPerBackendWithRepeatsAsErrorBarsAndRegimes) {
  const PlotSpec spec = *throughput_plot(sweep_runs(), "threads", "read");
  ASSERT_EQ(spec.series.size(), 2U);
  const PlotSeries& hw = spec.series[0];
  EXPECT_EQ(hw.title, "hw");
  ASSERT_EQ(hw.x.size(), 4U);
  EXPECT_DOUBLE_EQ(hw.x[2], 4);
  EXPECT_NEAR(hw.y_high[0], 0.040, 1e-12);  // GB/s, as results.csv and the console
  EXPECT_NEAR(hw.y_low[0], 0.036, 1e-12);
  EXPECT_NEAR(hw.y[0], 0.038, 1e-12);
  EXPECT_NE(spec.y_label.find("GB/s"), std::string::npos);
  // hw peaks at 95 (median of 100, 90); 90% of it is first reached at 4 threads.
  ASSERT_EQ(spec.regimes.size(), 2U);
  EXPECT_EQ(spec.regimes[0].label, "latency-bound");
  EXPECT_DOUBLE_EQ(spec.regimes[1].x, 4);
  EXPECT_FALSE(spec.log_x);
  EXPECT_FALSE(throughput_plot(sweep_runs(), "nope", "read").ok());
  EXPECT_FALSE(throughput_plot(sweep_runs(), "threads", "write").ok());
}

TEST(GnuplotScript, DrawsEverySeriesWithErrorBarsAndBothTerminals) {
  PlotSpec spec = *throughput_plot(sweep_runs(), "threads", "read");
  spec.log_x = true;
  const std::string g = gnuplot_script(spec, "d.dat", "o.svg", "o.png");
  EXPECT_NE(g.find("set terminal svg"), std::string::npos);
  EXPECT_NE(g.find("pngcairo"), std::string::npos);
  EXPECT_NE(g.find("index 1"), std::string::npos);
  EXPECT_NE(g.find("yerrorbars"), std::string::npos);
  EXPECT_NE(g.find("set logscale x"), std::string::npos);
  EXPECT_NE(g.find("latency-bound"), std::string::npos);
  const std::string d = gnuplot_data(spec);
  EXPECT_EQ(std::count(d.begin(), d.end(), '\n'), 2 * (1 + 4 + 2));
}

TEST_F(PlotFiles, RenderWritesValidSvgAndPng) {
  PlotSpec spec = *throughput_plot(sweep_runs(), "threads", "read");
  spec.title = "a \"quoted\" title";
  const std::vector<std::string> files = *render_plot(spec, (dir_ / "tp").string());
  ASSERT_EQ(files.size(), 2U);
  expect_svg(files[0]);
  expect_png(files[1]);
}

TEST_F(PlotFiles, RenderRejectsMalformedSeries) {
  PlotSpec spec;
  EXPECT_EQ(render_plot(spec, (dir_ / "x").string()).status().code(), StatusCode::invalid_argument);
  spec.series.push_back({"s", {1, 2}, {1}, {}, {}});
  EXPECT_EQ(render_plot(spec, (dir_ / "x").string()).status().code(), StatusCode::invalid_argument);
  spec.series[0] = {"s", {1, 2}, {1, 2}, {1}, {2}};
  EXPECT_EQ(render_plot(spec, (dir_ / "x").string()).status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(render_plot(one_point(), (dir_ / "no/dir/x").string()).status().code(), StatusCode::io_error);
}

TEST_F(PlotFiles, ReportEmbedsThePlotsTablesAndComparison) {
  const std::string path = *write_run_report(sweep_runs(), {(dir_ / "rep").string(), "Sweep", "", "read", {}});
  const std::string md = slurp(path);
  EXPECT_NE(md.find("# Sweep"), std::string::npos);
  EXPECT_NE(md.find("![file_sweep read"), std::string::npos);
  EXPECT_NE(md.find("throughput_read.svg"), std::string::npos);
  EXPECT_NE(md.find("## Predicted vs measured"), std::string::npos);
  EXPECT_NE(md.find("| `sweep|file_size=4MiB,threads=1` | hw | file_sweep/read | 2 |"), std::string::npos);
  expect_svg(dir_ / "rep" / "throughput_read.svg");
  expect_png(dir_ / "rep" / "throughput_read.png");
  // These runs carry no progress windows: the report says so.
  EXPECT_NE(md.find("No phase read with progress windows"), std::string::npos);
}

TEST_F(PlotFiles, ReportDrawsThroughputOverTimeFromTheProgressWindows) {
  auto run = testing::run_json("sim", "1", 100e6, 1);
  std::vector<double> rates(130, 100e6);  // 130 windows: plotted as 44 averages of 3
  rates[7] = 0;
  for (auto& phase : run["phases"]) phase["progress"] = {{"window_s", 0.5}, {"bytes_per_s", rates}};
  const auto runs = *parse_runs(testing::results_json({run}));
  ASSERT_EQ(runs[0].phases[0].progress_bytes_per_s.size(), 130U);
  EXPECT_DOUBLE_EQ(runs[0].phases[0].progress_window_s, 0.5);
  const std::string md = slurp(*write_run_report(runs, {(dir_ / "over_time").string(), "T", "", "read", {}}));
  EXPECT_NE(md.find("## Throughput over time"), std::string::npos);
  EXPECT_NE(md.find("progress_read.svg"), std::string::npos) << md;
  expect_svg(dir_ / "over_time" / "progress_read.svg");
  expect_png(dir_ / "over_time" / "progress_read.png");
  std::ifstream dat(dir_ / "over_time" / "progress_read.dat");
  std::size_t points = 0;
  bool saw_dip = false;
  for (std::string line; std::getline(dat, line);) {
    if (line.empty() || line[0] == '#') continue;
    ++points;
    std::istringstream fields(line);
    double x = 0, y = 0;
    fields >> x >> y;
    saw_dip = saw_dip || (y > 0.06 && y < 0.07);  // the empty window averaged with two full ones: 2/3 of 0.1 GB/s
  }
  EXPECT_EQ(points, 44U);
  EXPECT_TRUE(saw_dip);
}

TEST(RunReport, SaysWhyThereIsNoPlotAndListsFailedRuns) {
  const fs::path dir = fs::temp_directory_path() / "sluice_analysis_report_noplot";
  fs::remove_all(dir);
  auto failed = testing::run_json("sim", "1", 1);
  failed["ok"] = false;
  failed["error"] = "deploy failed";
  const auto runs = *parse_runs(testing::results_json({testing::run_json("sim", "1", 1), failed}));
  const std::string md = slurp(*write_run_report(runs, {dir.string(), "T", "", "write", {}}));
  EXPECT_NE(md.find("No plot:"), std::string::npos);
  EXPECT_NE(md.find("deploy failed"), std::string::npos);
  EXPECT_EQ(md.find("Predicted vs measured"), std::string::npos);
  EXPECT_FALSE(write_run_report({}, {dir.string(), "T", "", "read", {}}).ok());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sluice::analysis
