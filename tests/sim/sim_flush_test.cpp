// A storage server's flush between phases on SimEnv (issue 48 item 5;
// elbencho --sync --dropcache, docs/seeds.md#beeond-for-cosmoflow-on-azure):
// StorageOp::flush ends when its node's write-back has ended (at once on a
// clean node), and a file sweep with between_phases = sync_dropcache reads
// with the drives to itself, the flush's time outside every phase.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "core/workloads/file_sweep.hpp"
#include "core/workloads/phase_summary.hpp"
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
    TestClusterSpec spec;
    spec.meta_shards = 1;
    spec.targets_per_server = {1, 1};
    spec.client_nodes = 2;
    spec.storage.buffered_writes = buffered_writes;
    BasicTestCluster<SimWorld> cluster(spec);
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

}  // namespace
}  // namespace sluice::testing
