// sl.peak (issue 48 item 4) against a fake runner whose rates saturate at a
// known concurrency: the knee and its bound, the files raised with the
// threads, the step limit, the field's limit, and headlines with their bound.
// (The sim backend on a small config: tests/scenarios/peak_sim_test.sh.)
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <sstream>

#include "scenarios/lua/lua_script.hpp"
#include "scenarios/lua/peak_search.hpp"

namespace sluice::scenario {
namespace {

const std::string k_script = std::string(SLUICE_SOURCE_DIR) + "/tests/scenarios/lua/good_scripts/peak.lua";

// Read: min(threads, read_cap) GB/s against a bound of 10 GB/s (nic port);
// write: min(threads, 2) GB/s without a bound.
struct SaturatingRunner {
  double read_cap = 8;
  std::uint32_t fail_from = 0;  // the points from this many threads on fail (0: none)
  std::vector<ScenarioSpec> specs;
  RunPointsFn fn() {
    return [this](const std::vector<ScenarioSpec>& points, Backend backend) -> Result<std::vector<RunResult>> {
      std::vector<RunResult> out;
      for (const ScenarioSpec& p : points) {
        specs.push_back(p);
        const double threads = std::get<FileSweepConfig>(p.workloads.front().config).threads;
        RunResult r;
        r.spec = p;
        r.backend = backend;
        r.ok = fail_from == 0 || threads < fail_from;
        r.error = r.ok ? "" : "boom";
        for (const char* phase : {"write", "read"}) {
          PhaseRow row;
          row.workload = p.workloads.front().label;
          row.phase = phase;
          row.ranks = 2;
          const bool read = std::string(phase) == "read";
          row.last_bytes_per_s = std::min(threads, read ? read_cap : 2.0) * 1e9;
          row.bound_bytes_per_s = read ? 10e9 : std::numeric_limits<double>::quiet_NaN();
          row.binding_resource = read ? "nic port: node0/nic0" : "no bound: not in the calculator";
          r.phases.push_back(row);
        }
        out.push_back(r);
      }
      return out;
    };
  }
};

using Sets = std::map<std::string, std::string>;

struct PeakRun {
  SaturatingRunner runner;
  std::ostringstream out;
  ScriptOptions options;
  explicit PeakRun(Sets sets = {}) {
    options.run = runner.fn();
    options.out = &out;
    options.sets = std::move(sets);
  }
  Result<ScriptOutcome> go() { return run_script(k_script, options); }
  bool printed(const std::string& line) const { return out.str().find(line) != std::string::npos; }
};

const FileSweepConfig& sweep_of(const ScenarioSpec& spec) {
  return std::get<FileSweepConfig>(spec.workloads.at(0).config);
}

TEST(Peak, FindsTheKneeWithItsBoundAndRaisesFilesWithThreads) {
  PeakRun run;
  Result<ScriptOutcome> outcome = run.go();
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  // 1, 2, 4, 8 GB/s, then 16 threads add nothing: the knee is 8 threads.
  ASSERT_EQ(run.runner.specs.size(), 5u) << run.out.str();
  for (std::size_t i = 0; i < 5; ++i) {
    const ScenarioSpec& s = run.runner.specs[i];
    EXPECT_EQ(sweep_of(s).threads, 1u << i);
    EXPECT_EQ(sweep_of(s).files_per_rank, 2u << i);  // the bytes per thread stay the same
    EXPECT_EQ(s.params.at("threads"), std::to_string(1u << i));
    EXPECT_EQ(s.params.at("files_per_rank"), std::to_string(2u << i));
    EXPECT_EQ(s.seed, 5u);
  }
  EXPECT_EQ(outcome->results.size(), 5u);  // every step is a point of results.json
  EXPECT_TRUE(run.printed("peak step 1/8: threads=1 read 1 GB/s = 0.10 of bound 10 GB/s\n")) << run.out.str();
  EXPECT_TRUE(run.printed("peak step 5/8: threads=16 read 8 GB/s (+0.0%) = 0.80 of bound 10 GB/s\n"));
  EXPECT_TRUE(run.printed("peak: threads=8 read 8 GB/s = 0.80 of bound 10 GB/s (nic port: node0/nic0)\n"));
  const std::vector<std::string>& h = outcome->headlines;
  ASSERT_EQ(h.size(), 4u);
  EXPECT_EQ(h[0], "peak: knee=true threads=8 read 8 GB/s of_bound=0.80 steps=5 points=5");
  EXPECT_EQ(h[1], "stopped: threads=16 raised the rate by +0.0%, less than +2.0%");
  // A headline's row adds its rate against its bound, and nothing where it has none.
  EXPECT_EQ(h[2], "read row: x (0.10 of bound 10 GB/s, nic port) (seed: y)");
  EXPECT_EQ(h[3], "write row: x (seed: y)");
}

TEST(Peak, DefaultPhaseIsTheWorkloadsFirstBulkPhaseAndANoBoundIsSaid) {
  PeakRun run(Sets{{"phase", ""}});
  Result<ScriptOutcome> outcome = run.go();
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  EXPECT_EQ(run.runner.specs.size(), 3u);  // write: 1, 2, 2 GB/s
  EXPECT_TRUE(run.printed("peak: threads=2 write 2 GB/s (no bound: not in the calculator)\n")) << run.out.str();
}

TEST(Peak, TheStepLimitHolds) {
  PeakRun run(Sets{{"steps", "3"}});
  Result<ScriptOutcome> outcome = run.go();
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  EXPECT_EQ(run.runner.specs.size(), 3u);
  EXPECT_TRUE(
      run.printed("peak: no knee (3 steps (max_steps) and the rate still grew); the last step: threads=4 "
                  "read 4 GB/s = 0.40 of bound 10 GB/s"))
      << run.out.str();
  EXPECT_EQ(outcome->headlines.at(0), "peak: knee=false threads=4 read 4 GB/s of_bound=0.40 steps=3 points=3");
  // Never more than k_peak_max_steps, however far the rate grows.
  PeakRun unbounded;
  unbounded.runner.read_cap = 1e9;
  ASSERT_TRUE(unbounded.go().ok());
  EXPECT_EQ(unbounded.runner.specs.size(), k_peak_max_steps);
}

TEST(Peak, StopsAtTheFieldsLimitAndSaysSo) {
  PeakRun run(Sets{{"threads", "1024"}, {"files", "1024"}});
  run.runner.read_cap = 1e9;
  Result<ScriptOutcome> outcome = run.go();
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  EXPECT_EQ(run.runner.specs.size(), 3u);  // 1024, 2048, 4096
  EXPECT_TRUE(
      run.printed("peak: no knee (threads=8192 would pass the limit of 4096 operations in flight per rank); the "
                  "last step: threads=4096"))
      << run.out.str();
}

// Past the limit through the other axis: both values and their product.
TEST(Peak, AStopThroughTheOtherAxisNamesBothAndTheirProduct) {
  PeakPlan plan;
  plan.axis = "iodepth";
  plan.start = 1;
  plan.inflight_factor = 32;          // threads as built
  EXPECT_EQ(peak_stop(plan, 7), "");  // iodepth=128: 4096 in flight, at the limit
  EXPECT_EQ(peak_stop(plan, 8),
            "iodepth=256 with threads=32 puts 8192 operations in flight per rank, past the limit of 4096");
  plan.axis = "threads";
  EXPECT_EQ(peak_stop(plan, 8),
            "threads=256 with iodepth=32 puts 8192 operations in flight per rank, past the limit of 4096");
}

TEST(Peak, AFailedPointEndsTheSearchAtTheStepBeforeIt) {
  PeakRun run;
  run.runner.fail_from = 4;
  Result<ScriptOutcome> outcome = run.go();
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  EXPECT_EQ(outcome->results.size(), 3u);  // the failed point is a result too
  EXPECT_TRUE(run.printed("peak: no knee (the point at threads=4 failed: boom); the last step: threads=2 read 2 GB/s"))
      << run.out.str();
  // A start that fails has no step to report: an error naming the point.
  PeakRun first;
  first.runner.fail_from = 1;
  Result<ScriptOutcome> failed = first.go();
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("peak.lua:12: sl.peak: the point at threads=1 failed: boom"),
            std::string::npos)
      << failed.status().message();
}

// LargestPassing (sl.mlperf's search) on every monotone test of [1, max]:
// passes up to `answer` (0: none), fails beyond. It must find the answer in
// at most 2 log2(max) + 2 probes, each inside the interval still open.
TEST(LargestPassing, FindsEveryAnswerOfAMonotoneTestWithinItsProbeBound) {
  for (std::uint64_t max : {1, 2, 3, 7, 8, 12, 100}) {
    std::uint64_t bits = 0;
    while ((std::uint64_t{1} << bits) < max) ++bits;
    for (std::uint64_t answer = 0; answer <= max; ++answer) {
      LargestPassing search(max);
      std::uint64_t probes = 0;
      while (!search.done()) {
        const std::uint64_t count = search.next();
        ASSERT_GE(count, 1u);
        ASSERT_LE(count, max);
        search.record(count, count <= answer);
        ++probes;
      }
      EXPECT_EQ(search.largest(), answer) << "max " << max;
      EXPECT_EQ(search.least_failing(), answer + 1) << "max " << max;
      EXPECT_LE(probes, 2 * bits + 2) << "max " << max << " answer " << answer;
    }
  }
}

}  // namespace
}  // namespace sluice::scenario
