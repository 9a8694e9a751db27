// A storage server's flush between phases on SimEnv (issue 48 item 5;
// elbencho --sync --dropcache, docs/seeds.md#beeond-for-cosmoflow-on-azure):
// StorageOp::flush ends when its node's write-back has ended (at once on a
// clean node), and a file sweep with between_phases = sync_dropcache reads
// with the drives to itself, the flush's time outside every phase; so does a
// training epoch after its setup with after_setup = sync_dropcache.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "core/workloads/file_sweep.hpp"
#include "core/workloads/phase_summary.hpp"
#include "core/workloads/train_epoch.hpp"
#include "sim/sim_runtime.hpp"
#include "tests/sim/sim_test_support.hpp"
#include "tests/sim/sim_world.hpp"

namespace sluice::testing {
namespace {

using sim::SimRuntime;
using sim::SimRuntimeConfig;

TEST(SimFlush, AFlushEndsWhenItsNodesWriteBackHasEndedAndAtOnceOnACleanNode) {
  in_child([] {
    auto cluster = small_cluster({.nodes = 2, .network_bytes_per_s = 12.5e9, .nvme_write_bytes_per_s = 2.0e9});
    SimRuntimeConfig config;
    config.profile.disk_write_latency_ns = 0;
    config.profile.disk_request_occupancy_ns = 0;
    config.profile.page_cache_copy_bytes_per_s = 8e9;
    auto rt = SimRuntime::create(cluster, test_config(config)).value();
    ASSERT_TRUE(rt->add_target(1, 0).ok());
    ASSERT_TRUE(rt->add_target(2, 1).ok());
    constexpr std::uint64_t k_write = 4 * k_mib;
    std::vector<OpId> writes;
    OpId dirty_flush = 0;
    OpId clean_flush = 0;
    Probe& writer = rt->add_service<Probe>(0, [&](Probe& p) {
      for (std::uint32_t i = 0; i < 4; ++i) {
        const MemHandle buffer = p.env().alloc(MemKind::pinned, 0, k_write).value();
        StorageIoSpec spec{StorageOp::write, 1, 7, i * k_write, buffer, false};
        spec.buffered = true;
        writes.push_back(p.env().storage_io(spec));
      }
      dirty_flush = p.env().storage_io(StorageIoSpec{StorageOp::flush, 1, 0, 0, {}, false});
    });
    Probe& idle = rt->add_service<Probe>(1, [&](Probe& p) {
      clean_flush = p.env().storage_io(StorageIoSpec{StorageOp::flush, 2, 0, 0, {}, false});
    });
    rt->run_until_idle();
    EXPECT_EQ(rt->buffered_writes(), 4u);
    EXPECT_EQ(rt->dirty_bytes(0), 0u);
    EXPECT_EQ(rt->flushes(), 2u);
    EXPECT_EQ(rt->flushes_waited(), 1u);
    for (OpId w : writes) {
      EXPECT_NEAR(static_cast<double>(writer.done_at_ns[w]) * 1e-9, k_write / 8e9, 1e-6);  // the page cache took it
    }
    ASSERT_EQ(writer.completions.count(dirty_flush), 1u);
    EXPECT_TRUE(writer.completions[dirty_flush].status.ok());
    // The four write-backs share the drive and end together: the flush with them.
    EXPECT_NEAR(static_cast<double>(writer.done_at_ns[dirty_flush]) * 1e-9, 4 * k_write / 2.0e9, 1e-6);
    ASSERT_EQ(idle.completions.count(clean_flush), 1u);
    EXPECT_TRUE(idle.completions[clean_flush].status.ok());
    EXPECT_EQ(idle.done_at_ns[clean_flush], 0);
  });
}

// 2 storage servers of one target each and 2 client nodes, one metadata
// shard; the servers write through their page cache or not.
TestClusterSpec two_servers(bool buffered_writes) {
  TestClusterSpec spec;
  spec.meta_shards = 1;
  spec.targets_per_server = {1, 1};
  spec.client_nodes = 2;
  spec.storage.buffered_writes = buffered_writes;
  return spec;
}

struct SweepTimes {
  double write_s = 0;
  double read_s = 0;
  double flush_s = 0;
  double flushes = 0;
  double storage_flushes = 0;
};

// 2 ranks write then read 8 files of 16 MiB each on 2 storage servers, the
// storage servers writing through their page cache or not.
SweepTimes sweep(bool buffered_writes, BetweenPhases between) {
  const std::string out = in_child_capture([&] {
    BasicTestCluster<SimWorld> cluster(two_servers(buffered_writes));
    EXPECT_TRUE(cluster.ready().ok()) << cluster.ready().to_string();
    FileSweepConfig cfg;
    cfg.phases = {SweepPhase::mkdir, SweepPhase::write, SweepPhase::read};
    cfg.files_per_rank = 8;
    cfg.threads = 4;
    cfg.file_bytes = 16 * k_mib;
    cfg.block_bytes = 4 * k_mib;
    cfg.between_phases = between;
    std::vector<FileSweep*> sweeps = cluster.launch_all<FileSweep>(cfg);
    EXPECT_TRUE(cluster.run());
    EXPECT_EQ(cluster.failures(), "");
    std::ostringstream s;
    s << static_cast<double>(summarize_phase(phase_results(sweeps, "write")).last_done_ns) * 1e-9 << ' '
      << static_cast<double>(summarize_phase(phase_results(sweeps, "read")).last_done_ns) * 1e-9 << ' '
      << cluster.world().counter("file_sweep.flush_between_phases_ns") * 1e-9 << ' '
      << cluster.world().counter("file_sweep.flushes_between_phases") << ' '
      << cluster.world().counter("storage.flushes");
    return s.str();
  });
  SweepTimes t;
  std::istringstream in(out);
  in >> t.write_s >> t.read_s >> t.flush_s >> t.flushes >> t.storage_flushes;
  return t;
}

TEST(SimFlush, SyncDropcacheBetweenPhasesKeepsTheWriteBackOutOfTheReadPhase) {
  const SweepTimes drive = sweep(false, BetweenPhases::nothing);
  const SweepTimes cached = sweep(true, BetweenPhases::nothing);
  const SweepTimes flushed = sweep(true, BetweenPhases::sync_dropcache);
  std::printf(
      "write/read s: to the drive %.4f/%.4f; write-back %.4f/%.4f; write-back + sync_dropcache %.4f/%.4f "
      "(flush %.4f s in %g flushes)\n",
      drive.write_s, drive.read_s, cached.write_s, cached.read_s, flushed.write_s, flushed.read_s, flushed.flush_s,
      flushed.flushes);
  // Write-back: the page cache takes the writes faster than the drives.
  EXPECT_LT(cached.write_s, 0.8 * drive.write_s);
  EXPECT_NEAR(flushed.write_s, cached.write_s, 0.02 * cached.write_s);
  // Without a flush the read shares the drives with the write-back's backlog.
  EXPECT_GT(cached.read_s, 1.2 * drive.read_s);
  // With it, the read has the drives to itself: as fast as after writes that
  // went to the drives, so the flush's time is not in it.
  EXPECT_NEAR(flushed.read_s, drive.read_s, 0.03 * drive.read_s);
  // One flush before each of the 3 phases, by rank 0, of both storage servers;
  // the one before the read waited for the backlog.
  EXPECT_EQ(flushed.flushes, 3);
  EXPECT_EQ(flushed.storage_flushes, 6);
  EXPECT_GT(flushed.flush_s, 0.5 * (drive.write_s - cached.write_s));
  EXPECT_EQ(cached.flushes, 0);
  EXPECT_EQ(cached.storage_flushes, 0);
}

struct TrainingTimes {
  double epoch_s = 0;
  double flushes = 0;
};

// 2 ranks write a dataset of 64 files of 16 MiB (the setup) on 2 storage
// servers, then read it in one epoch with no compute, the storage servers
// writing through their page cache or not.
TrainingTimes training(bool buffered_writes, BetweenPhases after_setup) {
  const std::string out = in_child_capture([&] {
    BasicTestCluster<SimWorld> cluster(two_servers(buffered_writes));
    EXPECT_TRUE(cluster.ready().ok()) << cluster.ready().to_string();
    TrainEpochConfig cfg;
    cfg.samples = 64;
    cfg.sample_bytes = 16 * k_mib;
    cfg.samples_per_file = 1;
    cfg.batch_samples = 2;
    cfg.read_threads = 4;
    cfg.buffer_kind = MemKind::host;
    cfg.setup_dataset = true;
    cfg.create.chunk_bytes = 1 * k_mib;
    cfg.create.stripe_count = 2;
    cfg.after_setup = after_setup;
    std::vector<TrainEpoch*> ranks = cluster.launch_all<TrainEpoch>(cfg);
    EXPECT_TRUE(cluster.run());
    EXPECT_EQ(cluster.failures(), "");
    const PhaseSummary epoch = summarize_phase(phase_results(ranks, "epoch"));
    std::ostringstream s;
    s << static_cast<double>(epoch.last_done_ns) * 1e-9 << ' '
      << cluster.world().counter("train_epoch.flushes_between_phases");
    return s.str();
  });
  TrainingTimes t;
  std::istringstream in(out);
  in >> t.epoch_s >> t.flushes;
  return t;
}

TEST(SimFlush, SyncDropcacheAfterTheSetupKeepsTheWriteBackOutOfTheFirstEpoch) {
  const TrainingTimes drive = training(false, BetweenPhases::nothing);
  const TrainingTimes cached = training(true, BetweenPhases::nothing);
  const TrainingTimes flushed = training(true, BetweenPhases::sync_dropcache);
  std::printf("epoch s: to the drive %.4f; write-back %.4f; write-back + sync_dropcache %.4f\n", drive.epoch_s,
              cached.epoch_s, flushed.epoch_s);
  // Without the flush the epoch reads while the drives write the setup back.
  EXPECT_GT(cached.epoch_s, 1.2 * drive.epoch_s);
  // With it the epoch has the drives to itself, as after a setup that wrote
  // to the drives.
  EXPECT_NEAR(flushed.epoch_s, drive.epoch_s, 0.03 * drive.epoch_s);
  EXPECT_EQ(flushed.flushes, 1);
  EXPECT_EQ(cached.flushes, 0);
}

}  // namespace
}  // namespace sluice::testing
