#include "core/workloads/stage_in.hpp"

#include <gtest/gtest.h>

#include "core/workloads/phase_summary.hpp"
#include "tests/core/workloads/file_checker.hpp"
#include "tests/support/test_cluster.hpp"

namespace sluice::testing {
namespace {

StageInConfig small_stage() {
  StageInConfig c;
  c.objects = 10;  // 4 + 3 + 3 over three ranks
  c.object_bytes = 1 * k_mib + 1;
  c.block_bytes = 256 * k_kib;
  c.threads = 2;
  return c;
}

TEST(StageIn, StagesEveryObjectExactlyOnceWithItsContent) {
  TestCluster cluster;
  ASSERT_TRUE(cluster.ready().ok());
  const StageInConfig c = small_stage();
  auto ranks = cluster.launch_all<StageIn>(c);
  ASSERT_TRUE(cluster.run()) << cluster.failures();
  ASSERT_EQ(cluster.failures(), "");
  TestWorld& w = cluster.world();
  EXPECT_EQ(w.counter("stage_in.ingress.bytes"), 10 * static_cast<double>(c.object_bytes));
  EXPECT_EQ(w.counter("stage_in.ingress.ops"), 10 * 5);  // 4 full blocks + 1 byte
  EXPECT_EQ(ranks[0]->results()[0].ops, 4u * 5);
  EXPECT_EQ(ranks[2]->results()[0].ops, 3u * 5);
  EXPECT_EQ(ranks[0]->objects_of(0, 3), 4u);
  EXPECT_EQ(w.samples("stage_in.ingress.bytes_per_s")->values.size(), 3u);
  std::vector<CheckedFile> files;
  for (std::uint64_t o = 0; o < c.objects; ++o) {
    files.push_back(CheckedFile{ranks[0]->object_path(o), ranks[0]->object_seed(o), c.object_bytes});
  }
  cluster.launch([&](std::uint32_t) { return std::make_unique<FileChecker>(files); }, 1);
  ASSERT_TRUE(cluster.run());
  EXPECT_EQ(cluster.failures(), "");
}

TEST(StageIn, TheSourceRateLimitBoundsEachRanksIngress) {
  auto run = [](std::uint64_t rate_bytes_per_s) {
    TestCluster cluster;
    EXPECT_TRUE(cluster.ready().ok());
    StageInConfig c = small_stage();
    c.objects = 6;
    c.object_bytes = 1 * k_mib;
    c.source_bytes_per_s_per_rank = rate_bytes_per_s;
    c.source_request_latency_ns = 100 * k_ns_per_us;
    auto ranks = cluster.launch_all<StageIn>(c);
    EXPECT_TRUE(cluster.run()) << cluster.failures();
    EXPECT_EQ(cluster.failures(), "");
    std::vector<RankPhaseResult> results;
    for (auto* r : ranks) results.push_back(r->results()[0]);
    return summarize_phase(results);
  };
  const double limit = 100e6;  // 100 MB/s per rank
  const PhaseSummary limited = run(static_cast<std::uint64_t>(limit));
  const PhaseSummary free = run(0);
  // Each rank pulls 2 MiB; the bucket starts with one 256 KiB block of burst.
  const double min_seconds = static_cast<double>(2 * k_mib - 256 * k_kib) / limit;
  EXPECT_GE(static_cast<double>(limited.first_done_ns) / 1e9, min_seconds);
  EXPECT_LE(limited.last_bytes_per_s, 3 * limit * 1.15);
  EXPECT_GT(limited.last_bytes_per_s, 3 * limit * 0.7) << "the limit should be the bottleneck, not more";
  EXPECT_GT(free.last_bytes_per_s, 2 * limited.last_bytes_per_s);
}

TEST(StageIn, RefusesBadConfigurations) {
  StageInConfig c;
  c.block_bytes = 0;
  EXPECT_NE(StageIn::validate(c).message().find("block_bytes"), std::string::npos);
  c = {};
  c.source_bytes_per_s_per_rank = 1000;
  c.source_burst_bytes = 10;  // below one block
  EXPECT_NE(StageIn::validate(c).message().find("source_burst_bytes"), std::string::npos);
  c = {};
  c.source_request_latency_ns = -1;
  EXPECT_NE(StageIn::validate(c).message().find("latency"), std::string::npos);
  c = {};
  c.threads = 0;
  EXPECT_NE(StageIn::validate(c).message().find("threads"), std::string::npos);
  c = {};
  c.dir = "/";
  EXPECT_EQ(StageIn::validate(c).code(), StatusCode::invalid_argument);
  EXPECT_TRUE(StageIn::validate(StageInConfig{}).ok());
}

}  // namespace
}  // namespace sluice::testing
