// Flow coalescing (ClientConfig::coalesce, issue 4) on SimEnv: merging the
// chunk pieces of one request that lie on one target into one request moves
// the same bytes in (nearly) the same simulated time, with fewer requests,
// and stays deterministic.
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>
#include <string>

#include "core/workloads/file_sweep.hpp"
#include "core/workloads/phase_summary.hpp"
#include "tests/sim/sim_world.hpp"

namespace sluice::testing {
namespace {

struct SweepOutcome {
  std::uint64_t streamed_reads = 0;
  std::uint64_t read_bytes = 0;
  std::uint64_t written_bytes = 0;
  TimeNs read_elapsed_ns = 0;
  double storage_requests = 0;
  double chunks_coalesced = 0;
  TimeNs end_ns = 0;
  // StorageServiceConfig::slot_piece_bytes = 1 MiB (the chunk):
  double slot_pieces = 0;
  double slot_merged_write_pieces = 0;
  double slot_piece_ns = 0;
  double slot_excess_piece_ns = 0;
};

// 2 client ranks write then read 4 files of 16 MiB each, striped over 4
// targets in 1 MiB chunks (16 pieces per file, 4 on each target), whole-file
// calls: with coalescing, 4 requests per file instead of 16.
// verify_reads off: the client's CRC32C of a chunk is a delay proportional to
// its bytes after its transfer, so a merged request checks g chunks at its end
// where per-chunk requests checked all but the last on the way (+3.6% read
// time in this case with it on; docs/sim.md).
std::string sweep(ChunkCoalescing coalesce, std::uint64_t seed, std::uint64_t stream_segment_bytes = 1 * k_mib,
                  bool verify_reads = false) {
  return in_child_capture([&] {
    // The GPU buffers bounce here (no topology, no GPU reach). The staging
    // model's CPU copy (SimProfile staging_*) runs after a request's whole
    // transfer, like the CRC check above: a merged request copies g chunks
    // at its end (+7.3% read time in this case with it on; docs/sim.md).
    set_cluster_sim_config([stream_segment_bytes](sim::SimRuntimeConfig& c) {
      c.stream_read_segment_bytes = stream_segment_bytes;
      c.profile.staging_cpu_copies = 0;
    });
    TestClusterSpec spec;
    spec.world.seed = seed;
    spec.targets_per_server = {1, 1, 1, 1};
    spec.client_nodes = 2;
    spec.meta.default_stripe_count = 4;
    spec.meta.default_chunk_bytes = 1 * k_mib;
    spec.client.coalesce = coalesce;
    spec.client.verify_reads = verify_reads;
    spec.storage.slot_piece_bytes = 1 * k_mib;
    BasicTestCluster<SimWorld> cluster(spec);
    EXPECT_TRUE(cluster.ready().ok()) << cluster.ready().to_string();
    FileSweepConfig cfg;
    cfg.phases = {SweepPhase::mkdir, SweepPhase::write, SweepPhase::read};
    cfg.files_per_rank = 4;
    cfg.file_bytes = 16 * k_mib;
    cfg.block_bytes = 16 * k_mib;
    cfg.threads = 2;
    cfg.buffer_kind = MemKind::gpu;
    std::vector<FileSweep*> sweeps = cluster.launch_all<FileSweep>(cfg);
    EXPECT_TRUE(cluster.run());
    EXPECT_EQ(cluster.failures(), "");
    std::vector<RankPhaseResult> reads, writes;
    for (FileSweep* s : sweeps) {
      for (const RankPhaseResult& r : s->results()) (r.phase == "read" ? reads : writes).push_back(r);
    }
    const PhaseSummary read = summarize_phase(reads);
    std::uint64_t written = 0;
    for (const RankPhaseResult& r : writes) written += r.phase == "write" ? r.bytes : 0;
    std::ostringstream out;
    out << cluster.world().runtime().streamed_reads() << ' ' << read.bytes << ' ' << written << ' ' << read.last_done_ns
        << ' ' << cluster.world().counter("storage.requests") << ' '
        << cluster.world().counter("client.chunks_coalesced") << ' ' << cluster.world().now();
    for (const char* name : {"storage.slot_pieces", "storage.slot_merged_write_pieces", "storage.slot_piece_ns",
                             "storage.slot_excess_piece_ns"}) {
      out << ' ' << cluster.world().counter(name);
    }
    return out.str();
  });
}

SweepOutcome parse(const std::string& s) {
  SweepOutcome o;
  std::istringstream in(s);
  in >> o.streamed_reads >> o.read_bytes >> o.written_bytes >> o.read_elapsed_ns >> o.storage_requests >>
      o.chunks_coalesced >> o.end_ns >> o.slot_pieces >> o.slot_merged_write_pieces >> o.slot_piece_ns >>
      o.slot_excess_piece_ns;
  return o;
}

TEST(SimCoalescing, SameBytesFewerRequestsAndReadTimeWithinTwoPercent) {
  const SweepOutcome per_chunk = parse(sweep(ChunkCoalescing{}, 7));
  const SweepOutcome merged = parse(sweep(ChunkCoalescing{16 * k_mib, true}, 7));
  constexpr std::uint64_t k_bytes = 2 * 4 * 16 * k_mib;
  EXPECT_EQ(per_chunk.read_bytes, k_bytes);
  EXPECT_EQ(merged.read_bytes, k_bytes);
  EXPECT_EQ(merged.written_bytes, per_chunk.written_bytes);
  EXPECT_EQ(per_chunk.chunks_coalesced, 0.0);
  // 8 files x 16 pieces, written and read: per chunk 256 requests; merged 4
  // per file and direction: 64 (12 of every 16 pieces folded in).
  EXPECT_EQ(per_chunk.storage_requests, 256.0);
  EXPECT_EQ(merged.storage_requests, 64.0);
  EXPECT_EQ(merged.chunks_coalesced, 192.0);
  ASSERT_GT(per_chunk.read_elapsed_ns, 0);
  const double err = static_cast<double>(merged.read_elapsed_ns - per_chunk.read_elapsed_ns) /
                     static_cast<double>(per_chunk.read_elapsed_ns);
  std::printf("coalesced read time vs per chunk: %+.3f%%\n", 100.0 * err);
  EXPECT_LT(std::abs(err), 0.02) << "per chunk " << per_chunk.read_elapsed_ns << " ns, coalesced "
                                 << merged.read_elapsed_ns << " ns";
  EXPECT_EQ(per_chunk.streamed_reads, 0u);  // 1 MiB reads are not longer than a segment
  EXPECT_EQ(merged.streamed_reads, 32u);    // 8 files x 4 targets
}

TEST(SimCoalescing, WithoutStreamedReadsAMergedReadLosesTheDriveNetworkOverlap) {
  // The reason for stream_read_segment_bytes: merged requests that read all
  // before sending are measurably slower here (the drive idles while the
  // merged transfers run); if this ever stops failing the 2% bound, the
  // streaming model is no longer needed for this case.
  const SweepOutcome per_chunk = parse(sweep(ChunkCoalescing{}, 7, 0));
  const SweepOutcome merged = parse(sweep(ChunkCoalescing{16 * k_mib, true}, 7, 0));
  EXPECT_EQ(merged.streamed_reads, 0u);
  EXPECT_EQ(merged.read_bytes, per_chunk.read_bytes);
  std::printf(
      "coalesced read time without streaming vs per chunk: %+.3f%%\n",
      100.0 * (static_cast<double>(merged.read_elapsed_ns) / static_cast<double>(per_chunk.read_elapsed_ns) - 1));
  EXPECT_GT(static_cast<double>(merged.read_elapsed_ns), 1.05 * static_cast<double>(per_chunk.read_elapsed_ns));
}

TEST(SimCoalescing, ContiguousOnlyMergesNothingInAStripedFile) {
  // Without strided merging, pieces on one target are a stripe width apart in
  // the caller's buffer: nothing may merge (the request would name other bytes).
  const SweepOutcome o = parse(sweep(ChunkCoalescing{16 * k_mib, false}, 7));
  EXPECT_EQ(o.chunks_coalesced, 0.0);
  EXPECT_EQ(o.storage_requests, 256.0);
  EXPECT_EQ(o.read_bytes, 2 * 4 * 16 * k_mib);
}

TEST(SimCoalescing, MergedRequestsNeverExceedMaxBytes) {
  // 2 MiB at most: pairs of pieces, 8 requests per file and direction.
  const SweepOutcome o = parse(sweep(ChunkCoalescing{2 * k_mib, true}, 7));
  EXPECT_EQ(o.storage_requests, 128.0);
  EXPECT_EQ(o.chunks_coalesced, 128.0);
  EXPECT_EQ(o.read_bytes, 2 * 4 * 16 * k_mib);
}

TEST(SimCoalescing, PerChunkRequestsNeverHoldMorePiecesThanTheSlots) {
  // The runner's measure of a merged run's distortion (sim_point_run.hpp):
  // per chunk, a target serves at most max_active_per_target (8) pieces at
  // once, so nothing is beyond the slots, by construction.
  const SweepOutcome o = parse(sweep(ChunkCoalescing{}, 7));
  EXPECT_EQ(o.slot_pieces, 256.0);  // one piece per request
  EXPECT_EQ(o.slot_merged_write_pieces, 0.0);
  EXPECT_GT(o.slot_piece_ns, 0.0);
  EXPECT_EQ(o.slot_excess_piece_ns, 0.0);
}

TEST(SimCoalescing, MergedRequestsCountThePiecesTheyStandFor) {
  // Merged: 64 requests stand for the same 256 pieces, the 128 written ones
  // in merged writes. 2 ranks x 2 threads x 4 pieces per target can reach
  // 16 pieces at a target of 8 slots: some service is beyond the slots.
  const SweepOutcome o = parse(sweep(ChunkCoalescing{16 * k_mib, true}, 7));
  EXPECT_EQ(o.storage_requests, 64.0);
  EXPECT_EQ(o.slot_pieces, 256.0);
  EXPECT_EQ(o.slot_merged_write_pieces, 128.0);
  EXPECT_GT(o.slot_excess_piece_ns, 0.0);
  EXPECT_LT(o.slot_excess_piece_ns, o.slot_piece_ns);
  std::printf("merged: %.1f%% of the pieces' service time beyond the slots\n",
              100.0 * o.slot_excess_piece_ns / o.slot_piece_ns);
}

TEST(SimCoalescing, SameSeedGivesIdenticalResultsWithCoalescingOn) {
  const std::string a = sweep(ChunkCoalescing{16 * k_mib, true}, 11);
  const std::string b = sweep(ChunkCoalescing{16 * k_mib, true}, 11);
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace sluice::testing
