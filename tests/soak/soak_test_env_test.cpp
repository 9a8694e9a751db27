// The R1 soak in TestEnv (issue 9): seeded random fault runs with the
// invariants checked after each, and the checks themselves shown to fail
// when data is lost or silently corrupted.
//
// SLUICE_SOAK_RUNS overrides the number of runs (make soak: 100 per world);
// SLUICE_SOAK_SEED the first seed, to replay one run.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "tests/soak/soak_harness.hpp"
#include "tests/support/test_cluster.hpp"

namespace sluice::soak {
namespace {

using testing::TestWorld;

// Runs in CI: 100 seeded runs take well under a minute in TestEnv.
constexpr std::uint32_t k_ci_runs_test_env = 100;

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::strtoull(v, nullptr, 10);
}

std::optional<std::uint64_t> test_world_object_size(TestWorld& world, TargetId target, FileId file) {
  const std::vector<std::byte>* bytes = world.object_bytes(target, file);
  if (bytes == nullptr) return std::nullopt;
  return bytes->size();
}

// Runs the R1 soak in TestEnv; mirroring on lets a storage server stay dead.
SoakTotals soak_test_env(bool mirroring, std::uint32_t default_runs) {
  SoakConfig config;
  config.runs = static_cast<std::uint32_t>(env_number("SLUICE_SOAK_RUNS", default_runs));
  config.first_seed = env_number("SLUICE_SOAK_SEED", 1);
  config.mirroring = mirroring;
  config.revive_before_check = !mirroring;
  config.limits.revive_every_kill = !mirroring;
  config.limits.kill_meta = mirroring;  // the metadata shard is mirrored too
  config.limits.max_permanent_kills = mirroring ? 1 : 0;
  SoakTotals totals;
  for (std::uint32_t i = 0; i < config.runs; ++i) {
    totals.add(soak_run<TestWorld>(config.first_seed + i, config, test_world_object_size));
  }
  std::printf("%s\n", totals.line("test_env", mirroring).c_str());
  for (const std::string& f : totals.first_failures) std::printf("%s", f.c_str());
  EXPECT_EQ(totals.runs, config.runs);
  EXPECT_GT(totals.acked, 0u);
  EXPECT_EQ(totals.lost, 0u);
  EXPECT_EQ(totals.corrupt, 0u);
  EXPECT_EQ(totals.hung, 0u);
  EXPECT_EQ(totals.meta_bad, 0u);
  EXPECT_EQ(totals.failed_runs, 0u);
  return totals;
}

TEST(SoakTestEnv, R1RandomFaultRunsLoseAndCorruptNothing) { soak_test_env(false, k_ci_runs_test_env); }

// With storage buddy mirroring (core/services, BeeGFS buddy groups) a killed
// primary may stay dead: its secondary takes over.
TEST(SoakTestEnv, R1WithMirroringSurvivesAPrimaryThatStaysDead) { soak_test_env(true, k_ci_runs_test_env); }

// The checks can fail: a storage server killed for good without mirroring
// loses the acknowledged writes on its target, and the harness says so.
TEST(SoakTestEnv, CountsWritesLostWithAServerThatNeverComesBack) {
  SoakConfig config;
  config.revive_before_check = false;
  config.recheck_after_revive = false;
  config.limits.revive_every_kill = false;
  config.limits.max_permanent_kills = 4;
  config.limits.weight_slow_disk = config.limits.weight_partition = config.limits.weight_message_loss = 0;
  config.limits.min_faults = 4;
  config.limits.max_faults = 4;
  config.limits.window_ns = 3 * k_ns_per_s;
  std::uint64_t lost = 0;
  for (std::uint64_t seed = 1; seed <= 5 && lost == 0; ++seed) {
    SoakRunResult r = soak_run<TestWorld>(seed, config, test_world_object_size);
    // A server that stays dead without mirroring: whatever it held is gone.
    lost += r.lost;
  }
  EXPECT_GT(lost, 0u);
}

// A bit flipped at rest (issue 26): the object keeps the CRC32C of each
// block as written, so the storage server's read finds the flip and fails
// with corrupt naming the block; the client reports the read as failed. No
// wrong byte is served (the soak's own check would count it as corrupt); the
// write is unreadable, which the soak counts as lost.
TEST(SoakTestEnv, ABitFlippedAtRestIsReportedNotServed) {
  const testing::TestClusterSpec spec = soak_cluster_spec(1, false);
  testing::TestCluster cluster(spec);
  ASSERT_TRUE(cluster.ready().ok());
  auto ledger = std::make_shared<SoakLedger>();
  SoakWriterConfig writer;
  writer.files_per_rank = 1;
  writer.writes_per_file = 2;
  writer.min_write_bytes = 4 * k_kib;
  writer.max_gap_ns = 0;
  cluster.launch(
      [&](std::uint32_t) -> std::unique_ptr<Workload> { return std::make_unique<SoakWriter>(writer, ledger); });
  ASSERT_TRUE(cluster.run());
  ASSERT_EQ(ledger->acked.size(), 4u);
  ASSERT_EQ(ledger->readback_wrong, 0u);
  // A first verification finds everything intact and learns the file ids.
  ClientHost& first = cluster.add_host(std::make_unique<SoakVerifier>(ledger), 0, 1);
  ASSERT_TRUE(cluster.world().run_until([&] { return first.finished(); }));
  ASSERT_EQ(ledger->corrupt, 0u);
  ASSERT_EQ(ledger->lost, 0u);
  // Flip one bit of the first chunk object of the first file.
  ASSERT_FALSE(ledger->inodes.empty());
  const FileId file = ledger->inodes.begin()->second.file_id;
  bool flipped = false;
  for (TargetId t : cluster.targets()) {
    std::vector<std::byte>* obj = cluster.world().object_bytes(t, file);
    if (flipped || obj == nullptr || obj->empty()) continue;
    (*obj)[obj->size() / 2] ^= std::byte{0x10};
    flipped = true;
  }
  ASSERT_TRUE(flipped);
  ledger->verified = 0;
  ClientHost& verifier = cluster.add_host(std::make_unique<SoakVerifier>(ledger), 0, 1);
  ASSERT_TRUE(cluster.world().run_until([&] { return verifier.finished(); }));
  EXPECT_EQ(ledger->corrupt, 0u) << "a flipped byte was served as data";
  EXPECT_GE(ledger->lost, 1u) << "the read of the flipped block must fail";
  bool named = false;
  for (const std::string& n : ledger->notes) named = named || n.find("changed at rest") != std::string::npos;
  EXPECT_TRUE(named) << "the failure names the block that changed at rest";
}

}  // namespace
}  // namespace sluice::soak
