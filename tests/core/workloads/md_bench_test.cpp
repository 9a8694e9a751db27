#include "core/workloads/md_bench.hpp"

#include <gtest/gtest.h>

#include "tests/support/test_cluster.hpp"

namespace sluice::testing {
namespace {

class MdBenchPolicy : public ::testing::TestWithParam<MetaPolicy> {};

TestClusterSpec spec_for(MetaPolicy policy) {
  TestClusterSpec spec;
  spec.policy = policy;
  if (policy == MetaPolicy::striped_dir) spec.meta.ns.dir_stripe_count = 2;
  return spec;
}

TEST_P(MdBenchPolicy, PrivateDirectoriesCountEveryOperation) {
  TestCluster cluster(spec_for(GetParam()));
  ASSERT_TRUE(cluster.ready().ok());
  MdBenchConfig c;
  c.shared_dir = false;
  c.files_per_rank = 60;
  c.threads = 6;
  auto ranks = cluster.launch_all<MdBench>(c);
  ASSERT_TRUE(cluster.run()) << cluster.failures();
  ASSERT_EQ(cluster.failures(), "");
  TestWorld& w = cluster.world();
  EXPECT_EQ(w.counter("md_bench.create.ops"), 180);
  EXPECT_EQ(w.counter("md_bench.stat.ops"), 180);
  EXPECT_EQ(w.counter("md_bench.remove.ops"), 180);
  EXPECT_EQ(w.counter("md_bench.readdir.ops"), 3);
  EXPECT_EQ(w.counter("md_bench.readdir.entries"), 180);  // each rank lists its own 60
  EXPECT_EQ(w.counter("md_bench.create.bytes"), 0);
  ASSERT_NE(w.samples("md_bench.create.elapsed_ns"), nullptr);
  EXPECT_EQ(w.samples("md_bench.create.elapsed_ns")->values.size(), 3u);
  EXPECT_EQ(w.samples("md_bench.stat.op_latency_ns")->values.size(), 180u);
  ASSERT_EQ(ranks[0]->results().size(), 4u);
  EXPECT_EQ(ranks[0]->results()[0].phase, "create");
  EXPECT_EQ(ranks[0]->results()[0].ops, 60u);
}

TEST_P(MdBenchPolicy, LsStormOfASharedLargeDirectoryStatsEveryEntryFromEveryRank) {
  TestCluster cluster(spec_for(GetParam()));
  ASSERT_TRUE(cluster.ready().ok());
  MdBenchConfig c;
  c.shared_dir = true;
  c.files_per_rank = 400;  // 1200 entries: more than one readdir page (1024)
  c.threads = 16;
  c.phases = {MdPhase::create, MdPhase::readdir, MdPhase::ls_storm, MdPhase::remove};
  auto ranks = cluster.launch_all<MdBench>(c);
  ASSERT_TRUE(cluster.run()) << cluster.failures();
  ASSERT_EQ(cluster.failures(), "");
  TestWorld& w = cluster.world();
  EXPECT_EQ(w.counter("md_bench.readdir.entries"), 3 * 1200);
  EXPECT_EQ(w.counter("md_bench.ls_storm.entries"), 3 * 1200);
  EXPECT_EQ(w.counter("md_bench.ls_storm.ops"), 3 * (1 + 1200));
  for (MdBench* r : ranks) EXPECT_EQ(r->storm_entries(), 1200u);
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, MdBenchPolicy,
                         ::testing::Values(MetaPolicy::dir_owner, MetaPolicy::striped_dir, MetaPolicy::path_hash),
                         [](const ::testing::TestParamInfo<MetaPolicy>& param_info) {
                           switch (param_info.param) {
                             case MetaPolicy::dir_owner: return std::string("dir_owner");
                             case MetaPolicy::striped_dir: return std::string("striped_dir");
                             case MetaPolicy::path_hash: return std::string("path_hash");
                           }
                           return std::string("unknown");
                         });

TEST_P(MdBenchPolicy, LinkAndRenamePhasesGiveEveryItemNewNamesAndRemoveTakesThemAll) {
  // Issue 53: mdtest-like link and rename phases. After link every item has a
  // second name (readdir counts both); after rename the items are found (stat)
  // and removed under their new names; remove takes the links too, so the
  // run's directories are empty when it removes them.
  TestCluster cluster(spec_for(GetParam()));
  ASSERT_TRUE(cluster.ready().ok());
  MdBenchConfig c;
  c.shared_dir = true;
  c.files_per_rank = 40;
  c.threads = 4;
  c.phases = {MdPhase::create, MdPhase::link,   MdPhase::readdir, MdPhase::rename,
              MdPhase::stat,   MdPhase::rename, MdPhase::stat,    MdPhase::remove};
  auto ranks = cluster.launch_all<MdBench>(c);
  ASSERT_TRUE(cluster.run()) << cluster.failures();
  if (GetParam() != MetaPolicy::dir_owner) {
    // The names of one directory spread over the shards: a link or rename
    // whose two names land on different shards is refused, saying so (links
    // and renames across shards are issue 53's, not done yet).
    EXPECT_NE(cluster.failures().find("not supported"), std::string::npos) << cluster.failures();
    return;
  }
  ASSERT_EQ(cluster.failures(), "");
  TestWorld& w = cluster.world();
  EXPECT_EQ(w.counter("md_bench.link.ops"), 3 * 40);
  EXPECT_EQ(w.counter("md_bench.rename.ops"), 2 * 3 * 40);
  EXPECT_EQ(w.counter("md_bench.stat.ops"), 2 * 3 * 40);
  EXPECT_EQ(w.counter("md_bench.remove.ops"), 3 * 40);
  EXPECT_EQ(w.counter("md_bench.readdir.entries"), 3 * 2 * 120);  // every rank lists 120 items, each twice
  ASSERT_EQ(ranks[0]->results().size(), 8u);
  EXPECT_EQ(ranks[0]->results()[1].phase, "link");
  EXPECT_EQ(ranks[0]->results()[3].phase, "rename");
  // No failure above includes the teardown's rmdir of the shared directory:
  // a link left behind would have failed it (not empty).
}

TEST(MdBench, StormOfAnExplicitDirectoryWithoutCreate) {
  TestCluster cluster;
  ASSERT_TRUE(cluster.ready().ok());
  MdBenchConfig fill;
  fill.shared_dir = true;
  fill.files_per_rank = 30;
  fill.phases = {MdPhase::create};
  fill.run_tag = ".fill";
  cluster.launch_all<MdBench>(fill);
  ASSERT_TRUE(cluster.run()) << cluster.failures();
  ASSERT_EQ(cluster.failures(), "");

  MdBenchConfig storm;
  storm.root_dir = "/storm_root";
  storm.storm_dir = "/mdtest/shared";
  storm.files_per_rank = 0;
  storm.phases = {MdPhase::ls_storm};
  storm.run_tag = ".storm";
  auto ranks = cluster.launch_all<MdBench>(storm);
  ASSERT_TRUE(cluster.run()) << cluster.failures();
  ASSERT_EQ(cluster.failures(), "");
  for (MdBench* r : ranks) EXPECT_EQ(r->storm_entries(), 90u);
}

TEST(MdBench, StormOfAMissingDirectoryFailsWithNotFound) {
  TestCluster cluster;
  ASSERT_TRUE(cluster.ready().ok());
  MdBenchConfig c;
  c.storm_dir = "/nowhere";
  c.phases = {MdPhase::ls_storm};
  c.barrier_max_wait_ns = 1 * k_ns_per_s;
  cluster.launch_all<MdBench>(c, 1);
  ASSERT_TRUE(cluster.run());
  EXPECT_EQ(cluster.hosts()[0]->result().code(), StatusCode::not_found) << cluster.failures();
}

TEST(MdBench, RefusesBadConfigurations) {
  MdBenchConfig c;
  c.threads = 0;
  EXPECT_NE(MdBench::validate(c).message().find("threads"), std::string::npos);
  c = {};
  c.root_dir = "relative";
  EXPECT_NE(MdBench::validate(c).message().find("root_dir"), std::string::npos);
  c = {};
  c.storm_dir = "relative";
  EXPECT_NE(MdBench::validate(c).message().find("storm_dir"), std::string::npos);
  EXPECT_TRUE(MdBench::validate(MdBenchConfig{}).ok());
  EXPECT_EQ(to_string(MdPhase::ls_storm), "ls_storm");
  MdBench w(MdBenchConfig{});
  EXPECT_EQ(w.item_path(2, 5), "/mdtest/shared/f2.5");
}

}  // namespace
}  // namespace sluice::testing
