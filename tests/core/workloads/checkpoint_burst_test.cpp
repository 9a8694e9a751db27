#include "core/workloads/checkpoint_burst.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "core/workloads/phase_summary.hpp"
#include "tests/core/workloads/file_checker.hpp"
#include "tests/support/test_cluster.hpp"

namespace sluice::testing {
namespace {

TEST(CheckpointBurst, ImbalanceOfAKnownStripeLayout) {
  TestCluster cluster;  // 6 targets
  ASSERT_TRUE(cluster.ready().ok());
  CheckpointConfig c;
  c.shard_bytes = 7 * 64 * k_kib;  // 7 chunks over a stripe of all 6 targets: one target gets 2
  c.block_bytes = 128 * k_kib;
  c.create.chunk_bytes = 64 * k_kib;
  c.create.stripe_count = 6;
  c.create.chooser = proto::ChooserKind::round_robin;
  c.known_targets = cluster.targets();
  c.read_back = true;
  auto ranks = cluster.launch_all<CheckpointBurst>(c);
  ASSERT_TRUE(cluster.run()) << cluster.failures();
  ASSERT_EQ(cluster.failures(), "");
  TestWorld& w = cluster.world();

  // Each rank's own file: counts {2,1,1,1,1,1} chunks.
  const Distribution* max_over_mean = w.samples("checkpoint.write.target_max_over_mean");
  const Distribution* cv = w.samples("checkpoint.write.target_cv");
  ASSERT_NE(max_over_mean, nullptr);
  ASSERT_EQ(max_over_mean->values.size(), 3u);
  for (double v : max_over_mean->values) EXPECT_NEAR(v, 12.0 / 7.0, 1e-12);
  for (double v : cv->values) EXPECT_NEAR(v, std::sqrt(5.0) / 7.0, 1e-12);

  // Bytes per target as the inodes say == bytes the targets really hold.
  std::map<TargetId, double> held;
  for (std::uint32_t r = 0; r < 3; ++r) {
    FileChecker* probe = nullptr;
    cluster.launch(
        [&](std::uint32_t) {
          auto p = std::make_unique<FileChecker>(
              std::vector<CheckedFile>{CheckedFile{ranks[r]->file_path(0, r, 0), 0, c.shard_bytes, false}});
          probe = p.get();
          return p;
        },
        1);
    ASSERT_TRUE(cluster.run());
    ASSERT_EQ(cluster.failures(), "");
    const proto::InodeDesc& inode = probe->inodes()[0];
    ASSERT_EQ(inode.stripe.targets.size(), 6u);
    for (TargetId t : inode.stripe.targets) {
      const auto* obj = w.object_bytes(t, inode.file_id);
      ASSERT_NE(obj, nullptr);
      held[t] += static_cast<double>(obj->size());
    }
  }
  double total = 0;
  for (TargetId t : cluster.targets()) {
    EXPECT_EQ(w.counter("checkpoint.target." + std::to_string(t) + ".bytes"), held[t]) << "target " << t;
    total += held[t];
  }
  EXPECT_EQ(total, 3.0 * static_cast<double>(c.shard_bytes));
  EXPECT_EQ(w.counter("checkpoint.write.bytes"), 3.0 * static_cast<double>(c.shard_bytes));
  EXPECT_EQ(w.counter("checkpoint.write.ops"), 3 * 4);  // 448 KiB in 128 KiB blocks
  EXPECT_EQ(w.counter("checkpoint.read.bytes"), 3.0 * static_cast<double>(c.shard_bytes));
  const TargetBalance own = ranks[1]->balance();
  EXPECT_EQ(own.targets, 6u);
  EXPECT_NEAR(own.max_over_mean, 12.0 / 7.0, 1e-12);
}

TEST(CheckpointBurst, SeveralFilesAndBurstsWriteEveryByte) {
  TestCluster cluster;
  ASSERT_TRUE(cluster.ready().ok());
  CheckpointConfig c;
  c.shard_bytes = 3 * k_mib + 5;  // uneven split over 3 files
  c.files_per_rank = 3;
  c.block_bytes = 512 * k_kib;
  c.inflight_blocks = 6;
  c.checkpoints = 2;
  c.read_back = true;
  auto ranks = cluster.launch_all<CheckpointBurst>(c);
  ASSERT_TRUE(cluster.run()) << cluster.failures();
  ASSERT_EQ(cluster.failures(), "");
  TestWorld& w = cluster.world();
  EXPECT_EQ(w.counter("checkpoint.write.bytes"), 2 * 3 * static_cast<double>(c.shard_bytes));
  // Files of 1 MiB + 1, 1 MiB + 1 and 1 MiB + 3 bytes: 3 blocks of <= 512 KiB each.
  EXPECT_EQ(w.counter("checkpoint.write.ops"), 2 * 3 * 9);
  EXPECT_EQ(w.samples("checkpoint.write.bytes_per_s")->values.size(), 6u);
  EXPECT_EQ(ranks[2]->file_bytes(0), 1 * k_mib + 1);
  EXPECT_EQ(ranks[2]->file_bytes(2), 1 * k_mib + 3);
  EXPECT_EQ(ranks[2]->file_offset_in_shard(2), 2 * (k_mib + 1));
  std::vector<RankPhaseResult> bursts;
  for (auto* r : ranks) {
    for (const auto& p : r->results()) {
      if (p.phase == "write") bursts.push_back(p);
    }
  }
  EXPECT_EQ(bursts.size(), 6u);
  EXPECT_EQ(summarize_phase(bursts).bytes, 6 * c.shard_bytes);
  // The second burst's files hold the shard, byte for byte.
  std::vector<CheckedFile> files;
  for (std::uint32_t f = 0; f < 3; ++f) {
    files.push_back(
        CheckedFile{ranks[2]->file_path(1, 2, f), derive_seed(c.pattern_seed, 2, f), ranks[2]->file_bytes(f)});
  }
  cluster.launch([&](std::uint32_t) { return std::make_unique<FileChecker>(files); }, 1);
  ASSERT_TRUE(cluster.run());
  EXPECT_EQ(cluster.failures(), "");
}

// MLPerf Storage's checkpoint read phase: every checkpoint written is read
// back (read_checkpoints = checkpoints), one timed read phase each, and
// every byte is verified against the pattern it was written with.
TEST(CheckpointBurst, ReadsBackTheLastCheckpointsEachVerified) {
  TestCluster cluster;
  ASSERT_TRUE(cluster.ready().ok());
  CheckpointConfig c;
  c.shard_bytes = 1 * k_mib + 7;
  c.block_bytes = 256 * k_kib;
  c.checkpoints = 3;
  c.read_back = true;
  c.read_checkpoints = 2;
  auto ranks = cluster.launch_all<CheckpointBurst>(c);
  ASSERT_TRUE(cluster.run()) << cluster.failures();
  ASSERT_EQ(cluster.failures(), "");
  TestWorld& w = cluster.world();
  EXPECT_EQ(w.counter("checkpoint.write.bytes"), 3 * 3 * static_cast<double>(c.shard_bytes));
  EXPECT_EQ(w.counter("checkpoint.read.bytes"), 2 * 3 * static_cast<double>(c.shard_bytes));
  EXPECT_EQ(w.counter("checkpoint.read.verified_bytes"), 2 * 3 * static_cast<double>(c.shard_bytes));
  EXPECT_EQ(w.counter("checkpoint.write.sync_bytes"), 3 * 3 * static_cast<double>(c.shard_bytes));
  std::size_t reads = 0;
  for (auto* r : ranks) {
    for (const auto& p : r->results()) reads += p.phase == "read" ? 1 : 0;
  }
  EXPECT_EQ(reads, 2u * 3u);
  // More reads than checkpoints written is refused.
  c.read_checkpoints = 4;
  EXPECT_NE(CheckpointBurst::validate(c).message().find("read_checkpoints"), std::string::npos);
}

TEST(CheckpointBurst, RefusesBadConfigurations) {
  CheckpointConfig c;
  c.shard_bytes = 0;
  EXPECT_NE(CheckpointBurst::validate(c).message().find("shard_bytes"), std::string::npos);
  c = {};
  c.files_per_rank = 0;
  EXPECT_NE(CheckpointBurst::validate(c).message().find("files_per_rank"), std::string::npos);
  c = {};
  c.shard_bytes = 2;
  c.files_per_rank = 3;
  EXPECT_NE(CheckpointBurst::validate(c).message().find("files_per_rank"), std::string::npos);
  c = {};
  c.inflight_blocks = 0;
  EXPECT_NE(CheckpointBurst::validate(c).message().find("inflight_blocks"), std::string::npos);
  c = {};
  c.dir = "x";
  EXPECT_NE(CheckpointBurst::validate(c).message().find("dir"), std::string::npos);
  EXPECT_TRUE(CheckpointBurst::validate(CheckpointConfig{}).ok());
}

}  // namespace
}  // namespace sluice::testing
