#include "core/workloads/file_sweep.hpp"

#include <gtest/gtest.h>

#include <tuple>

#include "core/workloads/phase_summary.hpp"
#include "core/workloads/workload_limits.hpp"
#include "tests/core/workloads/file_checker.hpp"
#include "tests/support/test_cluster.hpp"

namespace sluice::testing {
namespace {

// Overwrites `length` bytes of a chunk object on a storage target with zeros,
// from a service on the target's node (as a failing disk would).
class ChunkCorrupter final : public Service {
 public:
  ChunkCorrupter(Env& env, TargetId target, FileId file_id, std::uint64_t object_offset, std::uint64_t length)
      : env_(env), target_(target), file_id_(file_id), object_offset_(object_offset), length_(length) {}
  void start() override {
    Result<MemHandle> zeros = env_.alloc(MemKind::host, 0, length_);
    if (!zeros.ok()) return;
    StorageIoSpec io;
    io.op = StorageOp::write;
    io.target = target_;
    io.file_id = file_id_;
    io.object_offset = object_offset_;
    io.buffer = *zeros;
    op_ = env_.storage_io(io);
  }
  void on_event(Event& event) override {
    if (auto* c = std::get_if<Completion>(&event); c != nullptr && c->op == op_) result_ = c->status;
  }
  std::string name() const override { return "corrupter"; }
  std::optional<Status> result_;

 private:
  Env& env_;
  TargetId target_;
  FileId file_id_;
  std::uint64_t object_offset_;
  std::uint64_t length_;
  OpId op_ = 0;
};

FileSweepConfig sweep_config() {
  FileSweepConfig c;
  c.threads = 3;
  c.dirs_per_rank = 2;
  c.files_per_rank = 5;
  c.file_bytes = 1 * k_mib + 100 * k_kib;  // a partial last block
  c.block_bytes = 256 * k_kib;
  c.create.chunk_bytes = 128 * k_kib;
  c.create.stripe_count = 3;
  return c;
}

std::vector<RankPhaseResult> phase_of(const std::vector<FileSweep*>& ranks, const std::string& phase) {
  std::vector<RankPhaseResult> out;
  for (const FileSweep* w : ranks) {
    for (const auto& r : w->results()) {
      if (r.phase == phase) out.push_back(r);
    }
  }
  return out;
}

TEST(FileSweep, EveryPhaseMovesExactlyWhatItWasAsked) {
  TestCluster cluster;
  ASSERT_TRUE(cluster.ready().ok());
  const FileSweepConfig c = sweep_config();
  auto ranks = cluster.launch_all<FileSweep>(c);
  ASSERT_TRUE(cluster.run()) << cluster.failures();
  ASSERT_EQ(cluster.failures(), "");
  TestWorld& w = cluster.world();
  const double n_ranks = 3, files = n_ranks * c.files_per_rank;
  const double blocks_per_file = 5;  // 4 full blocks of 256 KiB + one of 100 KiB
  EXPECT_EQ(w.counter("file_sweep.write.bytes"), files * static_cast<double>(c.file_bytes));
  EXPECT_EQ(w.counter("file_sweep.read.bytes"), files * static_cast<double>(c.file_bytes));
  EXPECT_EQ(w.counter("client.read_bytes"), files * static_cast<double>(c.file_bytes));
  EXPECT_EQ(w.counter("file_sweep.write.ops"), files * blocks_per_file);
  EXPECT_EQ(w.counter("file_sweep.read.ops"), files * blocks_per_file);
  EXPECT_EQ(w.counter("file_sweep.write.files"), files);
  EXPECT_EQ(w.counter("file_sweep.read.files"), files);
  EXPECT_EQ(w.counter("file_sweep.mkdir.ops"), n_ranks * (1 + c.dirs_per_rank));
  EXPECT_EQ(w.counter("file_sweep.rmdir.ops"), n_ranks * (1 + c.dirs_per_rank));
  EXPECT_EQ(w.counter("file_sweep.stat.ops"), files);
  EXPECT_EQ(w.counter("file_sweep.delete.ops"), files);
  for (const char* phase : {"mkdir", "write", "read", "stat", "delete", "rmdir"}) {
    const Distribution* elapsed = w.samples(std::string("file_sweep.") + phase + ".elapsed_ns");
    ASSERT_NE(elapsed, nullptr) << phase;
    EXPECT_EQ(elapsed->values.size(), 3u) << phase;
    for (double e : elapsed->values) EXPECT_GT(e, 0) << phase;
    const Distribution* latency = w.samples(std::string("file_sweep.") + phase + ".op_latency_ns");
    ASSERT_NE(latency, nullptr) << phase;
    EXPECT_EQ(static_cast<double>(latency->values.size()), w.counter(std::string("file_sweep.") + phase + ".ops"));
  }
  const PhaseSummary write = summarize_phase(phase_of(ranks, "write"));
  EXPECT_EQ(write.ranks, 3u);
  EXPECT_EQ(write.bytes, 15 * c.file_bytes);
  EXPECT_GT(write.last_bytes_per_s, 0);
  EXPECT_GE(write.first_bytes_per_s, write.last_bytes_per_s);
  // The root and every chunk object are gone once the unlinks' removals ran.
  w.run_until_idle(1'000'000);
  for (TargetId t : cluster.targets()) EXPECT_EQ(w.object_count(t), 0u) << "target " << t;
}

// between_phases = sync_dropcache (elbencho --sync --dropcache): before each
// phase rank 0 has every storage server flush (FlushStorage), once.
TEST(FileSweep, SyncDropcacheFlushesEveryStorageServerBeforeEachPhase) {
  for (const BetweenPhases between : {BetweenPhases::nothing, BetweenPhases::sync_dropcache}) {
    TestCluster cluster;
    ASSERT_TRUE(cluster.ready().ok());
    FileSweepConfig c = sweep_config();
    c.between_phases = between;
    cluster.launch_all<FileSweep>(c);
    ASSERT_TRUE(cluster.run()) << cluster.failures();
    ASSERT_EQ(cluster.failures(), "");
    const double flushes = between == BetweenPhases::sync_dropcache ? static_cast<double>(c.phases.size()) : 0;
    EXPECT_EQ(cluster.world().counter("file_sweep.flushes_between_phases"), flushes);
    EXPECT_EQ(cluster.world().counter("storage.flushes"), 4 * flushes) << "the cluster's 4 storage servers";
    EXPECT_EQ(cluster.world().counter("file_sweep.read.bytes"), 3.0 * 5 * static_cast<double>(c.file_bytes));
  }
}

TEST(FileSweep, WrittenFilesCarryTheirPatternEndToEnd) {
  TestCluster cluster;
  ASSERT_TRUE(cluster.ready().ok());
  FileSweepConfig c = sweep_config();
  c.phases = {SweepPhase::mkdir, SweepPhase::write};
  auto ranks = cluster.launch_all<FileSweep>(c);
  ASSERT_TRUE(cluster.run()) << cluster.failures();
  ASSERT_EQ(cluster.failures(), "");
  // An independent reader checks every file of rank 1.
  std::vector<CheckedFile> files;
  for (std::uint64_t i = 0; i < c.files_per_rank; ++i) {
    files.push_back(CheckedFile{ranks[1]->file_path(1, i), ranks[1]->file_seed(1, i), c.file_bytes});
  }
  FileChecker* checker = nullptr;
  cluster.launch(
      [&](std::uint32_t) {
        auto w = std::make_unique<FileChecker>(files);
        checker = w.get();
        return w;
      },
      1);
  ASSERT_TRUE(cluster.run());
  EXPECT_EQ(cluster.failures(), "");
  EXPECT_EQ(checker->inodes()[0].size_bytes, c.file_bytes);
}

TEST(FileSweep, ReadFailsWithCorruptWhenAStoredChunkIsDamaged) {
  TestCluster cluster;
  ASSERT_TRUE(cluster.ready().ok());
  FileSweepConfig c = sweep_config();
  c.phases = {SweepPhase::mkdir, SweepPhase::write};
  c.run_tag = ".w";
  auto writers = cluster.launch_all<FileSweep>(c);
  ASSERT_TRUE(cluster.run()) << cluster.failures();
  ASSERT_EQ(cluster.failures(), "");

  // Find where file 2 of rank 0 keeps its first chunk, and zero 100 bytes there.
  FileChecker* probe = nullptr;
  cluster.launch(
      [&](std::uint32_t) {
        auto w = std::make_unique<FileChecker>(
            std::vector<CheckedFile>{CheckedFile{writers[0]->file_path(0, 2), 0, c.file_bytes, false}});
        probe = w.get();
        return w;
      },
      1);
  ASSERT_TRUE(cluster.run());
  ASSERT_EQ(cluster.failures(), "");
  const proto::InodeDesc inode = probe->inodes()[0];
  ASSERT_FALSE(inode.stripe.targets.empty());
  const TargetId target = inode.stripe.targets[0];
  const auto* before = cluster.world().object_bytes(target, inode.file_id);
  ASSERT_NE(before, nullptr);
  const std::vector<std::byte> original(before->begin(), before->begin() + 200);
  auto& corrupter = cluster.world().add_service<ChunkCorrupter>(cluster.world().node_of_target(target), target,
                                                                inode.file_id, 100, 100);
  ASSERT_TRUE(cluster.world().run_until([&] { return corrupter.result_.has_value(); }, 100'000));
  ASSERT_TRUE(corrupter.result_->ok());
  const auto* after = cluster.world().object_bytes(target, inode.file_id);
  ASSERT_NE(std::vector<std::byte>(after->begin(), after->begin() + 200), original) << "the chunk really changed";

  c.phases = {SweepPhase::read};
  c.run_tag = ".r";
  c.barrier_max_wait_ns = 1 * k_ns_per_s;  // the other ranks give up on the failed one soon
  cluster.launch_all<FileSweep>(c);
  ASSERT_TRUE(cluster.run()) << cluster.failures();
  const Status& r0 = cluster.hosts()[0]->result();
  EXPECT_EQ(r0.code(), StatusCode::corrupt) << r0.to_string();
  EXPECT_NE(r0.message().find(writers[0]->file_path(0, 2)), std::string::npos) << r0.to_string();
  EXPECT_NE(r0.message().find("byte 100 "), std::string::npos) << r0.to_string();
  for (std::size_t r = 1; r < 3; ++r) {
    const Status& s = cluster.hosts()[r]->result();
    EXPECT_TRUE(s.ok() || s.code() == StatusCode::timed_out) << s.to_string();
  }
}

TEST(FileSweep, GpuBuffersAndSyncWritesWork) {
  TestClusterSpec spec;
  spec.ranks_per_client_node = 2;
  TestCluster cluster(spec);
  ASSERT_TRUE(cluster.ready().ok());
  FileSweepConfig c = sweep_config();
  c.buffer_kind = MemKind::gpu;
  c.sync_writes = true;
  c.files_per_rank = 2;
  cluster.launch_all<FileSweep>(c);
  ASSERT_TRUE(cluster.run()) << cluster.failures();
  EXPECT_EQ(cluster.failures(), "");
  EXPECT_EQ(cluster.world().counter("file_sweep.read.bytes"), 6.0 * 2 * static_cast<double>(c.file_bytes));
}

TEST(FileSweep, MoreThreadsPerRankGiveMoreThroughput) {
  auto write_rate = [](std::uint32_t threads) {
    TestCluster cluster;
    EXPECT_TRUE(cluster.ready().ok());
    FileSweepConfig c = sweep_config();
    c.threads = threads;
    c.files_per_rank = 8;
    c.phases = {SweepPhase::mkdir, SweepPhase::write};
    auto ranks = cluster.launch_all<FileSweep>(c);
    EXPECT_TRUE(cluster.run()) << cluster.failures();
    EXPECT_EQ(cluster.failures(), "");
    return summarize_phase(phase_of(ranks, "write")).last_bytes_per_s;
  };
  const double one = write_rate(1);
  const double eight = write_rate(8);
  EXPECT_GT(one, 0);
  EXPECT_GT(eight, 1.5 * one);
}

// iodepth (elbencho --iodepth): blocks of one file in flight at once, each in
// its own part of the file's buffer. The files written that way read back with
// their pattern (a block written from another block's slot, or two reads in
// one slot, would fail the reader's check or the read phase's verify), and one
// thread with 4 blocks in flight writes faster than with one.
TEST(FileSweep, IodepthKeepsSeveralBlocksOfAFileInFlight) {
  // Blocks in flight on average over the write phase (Little's law: the
  // blocks' summed latency over the phases' summed time), and its rate.
  auto run = [](std::uint32_t iodepth, bool check_files) {
    TestCluster cluster;
    EXPECT_TRUE(cluster.ready().ok());
    FileSweepConfig c = sweep_config();
    c.threads = 1;
    c.files_per_rank = 2;
    c.file_bytes =
        4 * k_mib + 100 * k_kib;  // 16 full blocks and a partial one: the data, not the metadata, sets the time
    c.iodepth = iodepth;
    c.phases = {SweepPhase::mkdir, SweepPhase::write, SweepPhase::read};
    auto ranks = cluster.launch_all<FileSweep>(c);
    EXPECT_TRUE(cluster.run()) << cluster.failures();
    EXPECT_EQ(cluster.failures(), "");
    TestWorld& w = cluster.world();
    const double bytes = 3.0 * 2 * static_cast<double>(c.file_bytes);
    EXPECT_EQ(w.counter("file_sweep.write.bytes"), bytes);
    EXPECT_EQ(w.counter("file_sweep.read.verified_bytes"), bytes);
    EXPECT_EQ(w.counter("file_sweep.write.ops"), 3.0 * 2 * 17);
    if (check_files) {
      std::vector<CheckedFile> files;
      for (std::uint64_t i = 0; i < c.files_per_rank; ++i) {
        files.push_back(CheckedFile{ranks[2]->file_path(2, i), ranks[2]->file_seed(2, i), c.file_bytes});
      }
      cluster.launch([&](std::uint32_t) { return std::make_unique<FileChecker>(files); }, 1);
      EXPECT_TRUE(cluster.run());
      EXPECT_EQ(cluster.failures(), "");
    }
    double busy = 0, elapsed = 0;
    for (double v : w.samples("file_sweep.write.op_latency_ns")->values) busy += v;
    for (double v : w.samples("file_sweep.write.elapsed_ns")->values) elapsed += v;
    return std::pair{busy / elapsed, summarize_phase(phase_of(ranks, "write")).last_bytes_per_s};
  };
  const auto [one_in_flight, one] = run(1, false);
  const auto [four_in_flight, four] = run(4, true);
  EXPECT_LE(one_in_flight, 1.0);
  EXPECT_GT(four_in_flight, 3.0);
  EXPECT_LE(four_in_flight, 4.0);
  EXPECT_GT(four, 1.2 * one) << "one block in flight " << one << " B/s, four " << four << " B/s";
}

// The sweep end to end under every namespace policy and target chooser.
class FileSweepLayouts : public ::testing::TestWithParam<std::tuple<MetaPolicy, proto::ChooserKind>> {};

TEST_P(FileSweepLayouts, WritesReadsBackAndRemovesEverything) {
  TestClusterSpec spec;
  spec.policy = std::get<0>(GetParam());
  if (spec.policy == MetaPolicy::striped_dir) spec.meta.ns.dir_stripe_count = 2;
  TestCluster cluster(spec);
  ASSERT_TRUE(cluster.ready().ok()) << cluster.ready().to_string();
  FileSweepConfig c = sweep_config();
  c.files_per_rank = 4;
  c.create.chooser = std::get<1>(GetParam());
  cluster.launch_all<FileSweep>(c);
  ASSERT_TRUE(cluster.run()) << cluster.failures();
  ASSERT_EQ(cluster.failures(), "");
  TestWorld& w = cluster.world();
  EXPECT_EQ(w.counter("file_sweep.read.bytes"), 12 * static_cast<double>(c.file_bytes));
  EXPECT_EQ(w.counter("file_sweep.delete.ops"), 12);
  w.run_until_idle(1'000'000);
  for (TargetId t : cluster.targets()) EXPECT_EQ(w.object_count(t), 0u) << "target " << t;
}

INSTANTIATE_TEST_SUITE_P(
    PoliciesAndChoosers, FileSweepLayouts,
    ::testing::Combine(::testing::Values(MetaPolicy::dir_owner, MetaPolicy::striped_dir, MetaPolicy::path_hash),
                       ::testing::Values(proto::ChooserKind::randomized, proto::ChooserKind::round_robin,
                                         proto::ChooserKind::random_robin, proto::ChooserKind::random_inter_node,
                                         proto::ChooserKind::space_weighted_qos)),
    [](const ::testing::TestParamInfo<std::tuple<MetaPolicy, proto::ChooserKind>>& param_info) {
      const char* policy = "dir_owner";
      if (std::get<0>(param_info.param) == MetaPolicy::striped_dir) policy = "striped_dir";
      if (std::get<0>(param_info.param) == MetaPolicy::path_hash) policy = "path_hash";
      return std::string(policy) + "_" + std::string(proto::to_string(std::get<1>(param_info.param)));
    });

TEST(FileSweep, RefusesBadConfigurationsNamingTheField) {
  FileSweepConfig c;
  c.threads = 0;
  EXPECT_NE(FileSweep::validate(c).message().find("threads"), std::string::npos);
  c = {};
  c.block_bytes = 0;
  EXPECT_NE(FileSweep::validate(c).message().find("block_bytes"), std::string::npos);
  c = {};
  c.dirs_per_rank = 0;
  EXPECT_NE(FileSweep::validate(c).message().find("dirs_per_rank"), std::string::npos);
  c = {};
  c.root_dir = "/";
  EXPECT_NE(FileSweep::validate(c).message().find("root_dir"), std::string::npos);
  c = {};
  c.files_per_rank = k_workload_max_items_per_rank + 1;
  EXPECT_EQ(FileSweep::validate(c).code(), StatusCode::invalid_argument);
  c = {};
  c.file_bytes = k_workload_max_bytes_per_rank + 1;
  EXPECT_EQ(FileSweep::validate(c).code(), StatusCode::invalid_argument);
  c = {};
  c.iodepth = 0;
  EXPECT_NE(FileSweep::validate(c).message().find("iodepth"), std::string::npos);
  c = {};
  c.threads = 64;
  c.iodepth = static_cast<std::uint32_t>(k_workload_max_inflight / 64 + 1);
  EXPECT_NE(FileSweep::validate(c).message().find("threads x iodepth"), std::string::npos);
  c = {};
  c.run_tag = std::string(200, 't');
  EXPECT_NE(FileSweep::validate(c).message().find("run_tag"), std::string::npos);
  EXPECT_TRUE(FileSweep::validate(FileSweepConfig{}).ok());

  TestCluster cluster;
  ASSERT_TRUE(cluster.ready().ok());
  FileSweepConfig bad;
  bad.threads = 0;
  cluster.launch_all<FileSweep>(bad, 1);
  ASSERT_TRUE(cluster.run(100'000));
  EXPECT_EQ(cluster.hosts()[0]->result().code(), StatusCode::invalid_argument);
}

TEST(FileSweep, PathsAndPhaseNames) {
  FileSweepConfig c;
  c.root_dir = "/b";
  c.dirs_per_rank = 3;
  FileSweep w(c);
  EXPECT_EQ(w.rank_dir(2), "/b/r2");
  EXPECT_EQ(w.file_path(2, 7), "/b/r2/d1/f7");
  EXPECT_NE(w.file_seed(0, 1), w.file_seed(1, 0));
  EXPECT_EQ(to_string(SweepPhase::delete_files), "delete");
  EXPECT_EQ(to_string(SweepPhase::rmdir), "rmdir");
  EXPECT_EQ(w.name(), "file_sweep");
}

}  // namespace
}  // namespace sluice::testing
