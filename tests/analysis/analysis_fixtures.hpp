// Results documents for the analysis tests, in the layouts of
// analysis/results.schema.json and scenarios/deploy's output.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace sluice::analysis::testing {

inline nlohmann::json phase_json(const std::string& phase, double bytes_per_s, double seconds) {
  return {{"workload", "file_sweep"},
          {"phase", phase},
          {"ranks", 2},
          {"bytes", static_cast<std::uint64_t>(bytes_per_s * seconds)},
          {"ops", 10},
          {"first_done_s", seconds},
          {"last_done_s", seconds},
          {"first_bytes_per_s", bytes_per_s},
          {"last_bytes_per_s", bytes_per_s},
          {"first_ops_per_s", 10 / seconds},
          {"last_ops_per_s", 10 / seconds},
          {"latency_us_p50", 100.0},
          {"latency_us_p99", nullptr},
          {"extra", {{"au_pct", 90.0}}}};
}

inline nlohmann::json run_json(const std::string& backend, const std::string& threads, double read_bytes_per_s,
                               std::uint64_t seed = 1) {
  return {{"scenario", "sweep"},
          {"params", {{"threads", threads}, {"file_size", "4MiB"}}},
          {"seed", seed},
          {"backend", backend},
          {"ok", true},
          {"error", ""},
          {"simulated_s", 1.0},
          {"wall_s", 1.0},
          {"paths_taken", nlohmann::json::object()},
          {"phases", {phase_json("read", read_bytes_per_s, 2.0)}},
          {"counters", {{"chunks", 4.0}}},
          {"log_tail", nlohmann::json::array()},
          {"spec", nlohmann::json::object()}};
}

// A vector, not a json: a braced list of one json would be copied, not wrapped in an array.
inline nlohmann::json results_json(const std::vector<nlohmann::json>& runs) {
  return {{"format", "sluice-results"},
          {"version", 1},
          {"scenario", "sweep"},
          {"sluice_version", "0.1.0"},
          {"created_utc", "2026-01-01T00:00:00Z"},
          {"machine", {{"hostname", "h"}, {"cores", 2}, {"os", "Linux"}}},
          {"runs", nlohmann::json(runs)}};
}

inline nlohmann::json emulate_json(double rate_bits_per_s, std::uint64_t bytes_per_rank, std::uint64_t elapsed_ns) {
  nlohmann::json nodes = nlohmann::json::array();
  for (int n = 0; n < 3; ++n) {
    nlohmann::json phases = nlohmann::json::array();
    if (n > 0) {
      phases.push_back({{"phase", "write"},
                        {"rank", n},
                        {"bytes", bytes_per_rank},
                        {"ops", 4},
                        {"elapsed_ns", elapsed_ns / 2},
                        {"bytes_per_s", 0}});
      phases.push_back({{"phase", "read"},
                        {"rank", n},
                        {"bytes", bytes_per_rank},
                        {"ops", 4},
                        {"elapsed_ns", elapsed_ns - static_cast<std::uint64_t>(n - 1) * 1000},
                        {"bytes_per_s", 0}});
    }
    nodes.push_back({{"node", n}, {"ok", true}, {"phases", phases}});
  }
  return {{"run_id", "x"},
          {"ok", true},
          {"nodes", nodes},
          {"emulation", {{"rate_bits_per_s", rate_bits_per_s}, {"latency_ns", 0}, {"nodes", 3}}},
          {"params", {{"stripe_count", 2}, {"file_size", "4MiB"}, {"chunk_size", "1MiB"}}}};
}

// A test with a folder of its own (named after the test, removed at its end) to write files in.
class FolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("sluice_analysis_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string p = (dir_ / name).string();
    std::ofstream(p) << text;
    return p;
  }
  std::filesystem::path dir_;
};

}  // namespace sluice::analysis::testing
