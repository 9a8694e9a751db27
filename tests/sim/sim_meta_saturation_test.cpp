// Metadata servers on SimEnv (docs/seeds.md#beeond-for-cosmoflow-on-azure and
// docs/seeds.md#sharded-metadata, issue #7): a metadata server is one queue
// served at its modelled rate (the profile's cost per unit x the server's
// MetaOpUnits), so enough clients saturate it at exactly that rate and no
// faster, and two servers with the directories spread over them serve about
// twice the small-file opens of one.
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>
#include <string>

#include "core/services/meta_op_units.hpp"
#include "core/workloads/file_sweep.hpp"
#include "core/workloads/md_bench.hpp"
#include "core/workloads/phase_summary.hpp"
#include "tests/sim/sim_world.hpp"

namespace sluice::testing {
namespace {

double profile_cost_ns(CostKind kind) { return static_cast<double>(sim::default_profile().cost_ns(kind)); }

// mdtest stat rate (ops/s, last finisher) of `ranks` ranks with `threads` stats
// in flight each, on one metadata server.
double stat_rate(std::uint32_t ranks, std::uint32_t threads) {
  const std::string out = in_child_capture([&] {
    TestClusterSpec spec;
    spec.meta_shards = 1;
    spec.targets_per_server = {1};
    spec.client_nodes = ranks;
    BasicTestCluster<SimWorld> cluster(spec);
    EXPECT_TRUE(cluster.ready().ok()) << cluster.ready().to_string();
    MdBenchConfig cfg;
    cfg.files_per_rank = 200;
    cfg.threads = threads;
    cfg.phases = {MdPhase::create, MdPhase::stat};
    std::vector<MdBench*> benches = cluster.launch_all<MdBench>(cfg);
    EXPECT_TRUE(cluster.run());
    EXPECT_EQ(cluster.failures(), "");
    std::ostringstream s;
    s << summarize_phase(phase_results(benches, "stat")).last_ops_per_s;
    return s.str();
  });
  return std::stod(out);
}

TEST(SimMetaService, SaturatesAtItsModelledStatRateAndNoFaster) {
  // The TestCluster's metadata server is a BeeGFS one (stripe flavor beegfs).
  const double modelled = 1e9 / (profile_cost_ns(CostKind::meta_stat) * beegfs_meta_op_units().stat);
  const double light = stat_rate(1, 1);
  const double heavy = stat_rate(4, 16);
  const double heavier = stat_rate(8, 32);
  std::printf("stat rate: 1x1 %.0f/s, 4x16 %.0f/s, 8x32 %.0f/s; modelled %.0f/s\n", light, heavy, heavier, modelled);
  // One stat in flight also waits for the network both ways: below the server's rate.
  EXPECT_LT(light, 0.9 * modelled);
  // 64 in flight saturate it: within 5% of the modelled rate, never above it.
  EXPECT_GT(heavy, 0.95 * modelled);
  EXPECT_LE(heavy, modelled * 1.001);
  // Four times the load gains nothing.
  EXPECT_NEAR(heavier, heavy, 0.02 * heavy);
}

struct SmallFileRates {
  double read_files_per_s = 0;
  double write_files_per_s = 0;
};

// elbencho-like: 4 ranks write then read 4 KiB files (the data path is
// negligible), 16 in flight per rank, over 32 directories per rank.
SmallFileRates small_files(std::uint32_t meta_shards) {
  const std::string out = in_child_capture([&] {
    TestClusterSpec spec;
    spec.meta_shards = meta_shards;
    spec.targets_per_server = {1, 1, 1, 1};
    spec.client_nodes = 4;
    spec.meta.default_stripe_count = 1;
    BasicTestCluster<SimWorld> cluster(spec);
    EXPECT_TRUE(cluster.ready().ok()) << cluster.ready().to_string();
    FileSweepConfig cfg;
    cfg.phases = {SweepPhase::mkdir, SweepPhase::write, SweepPhase::read};
    cfg.files_per_rank = 256;
    cfg.dirs_per_rank = 32;
    cfg.threads = 16;
    cfg.file_bytes = 4 * k_kib;
    cfg.block_bytes = 4 * k_kib;
    std::vector<FileSweep*> sweeps = cluster.launch_all<FileSweep>(cfg);
    EXPECT_TRUE(cluster.run());
    EXPECT_EQ(cluster.failures(), "");
    // One block per file: block ops are files.
    std::ostringstream s;
    s << summarize_phase(phase_results(sweeps, "read")).last_ops_per_s << ' '
      << summarize_phase(phase_results(sweeps, "write")).last_ops_per_s;
    return s.str();
  });
  SmallFileRates r;
  std::istringstream in(out);
  in >> r.read_files_per_s >> r.write_files_per_s;
  return r;
}

TEST(SimMetaService, TwoServersWithDirectoriesSpreadServeTwiceTheSmallFileOpens) {
  const MetaOpUnits u = beegfs_meta_op_units();
  // A read is an open (stat) and a close (setattr); a write a create and a close.
  const double read_ns =
      profile_cost_ns(CostKind::meta_stat) * u.stat + profile_cost_ns(CostKind::meta_setattr) * u.setattr;
  const double write_ns =
      profile_cost_ns(CostKind::meta_create) * u.create + profile_cost_ns(CostKind::meta_setattr) * u.setattr;
  const SmallFileRates one = small_files(1);
  const SmallFileRates two = small_files(2);
  std::printf("small files/s, 1 MDS: read %.0f write %.0f; 2 MDS: read %.0f write %.0f; modelled 1 MDS: %.0f / %.0f\n",
              one.read_files_per_s, one.write_files_per_s, two.read_files_per_s, two.write_files_per_s, 1e9 / read_ns,
              1e9 / write_ns);
  // One server: its modelled rate is the limit (within 5%: a rank's phase
  // time ends at its last block, before the last closes).
  EXPECT_GT(one.read_files_per_s, 0.9 * 1e9 / read_ns);
  EXPECT_LE(one.read_files_per_s, 1.05e9 / read_ns);
  EXPECT_GT(one.write_files_per_s, 0.9 * 1e9 / write_ns);
  EXPECT_LE(one.write_files_per_s, 1.05e9 / write_ns);
  // Two: the 128 directories are spread over both (BeeGFS picks a random
  // owner per mkdir), so about twice as many files per second (less the
  // imbalance of the random split: 1.77x here).
  EXPECT_GT(two.read_files_per_s, 1.7 * one.read_files_per_s);
  EXPECT_LE(two.read_files_per_s, 2.05 * one.read_files_per_s);
  EXPECT_GT(two.write_files_per_s, 1.7 * one.write_files_per_s);
  EXPECT_LE(two.write_files_per_s, 2.05 * one.write_files_per_s);
}

}  // namespace
}  // namespace sluice::testing
