// CheckpointBurst: every rank writes its shard of a model checkpoint at once
// (docs/seeds.md#checkpoints: periodic bursts, files 100 GB-7 TB at cluster
// scale; PyTorch distributed checkpointing writes one or more files per rank).
//
// The shard (shard_bytes) lives in the rank's memory (GPU memory of
// WorkloadContext::gpu by default), filled with the pattern before the burst
// is timed (the model state exists before the checkpoint starts). Each
// checkpoint c is written to files_per_rank files
// <dir>/c<c>.r<rank>.<k>, the shard split evenly over them (the last takes
// the remainder). The burst, timed after a start barrier, is: create the
// files, write every block_bytes block with inflight_blocks writes in flight
// per rank (sync writes when `sync`: durable on completion), close every file.
// With read_back, later phases read back the last read_checkpoints
// checkpoints written, in the order they were written, each file verified:
// one timed "read" phase per checkpoint, after a barrier. A read is served
// by the storage service (the client keeps no file data: core/services/
// client.hpp caches directory placements only), so it measures the storage
// as a read after a client cache drop does (MLPerf Storage's checkpoint
// read phase).
//
// Counters beside each phase's bytes: checkpoint.write.sync_bytes (bytes
// written with sync: durable when the write completed, as DLIO's fsync'd
// checkpoint is) and checkpoint.read.verified_bytes (bytes read back that
// matched the pattern written).
//
// Throughput: per rank, shard_bytes / burst elapsed (checkpoint.write.
// bytes_per_s); the aggregate is summarize_phase over ranks (last-finisher =
// total bytes / slowest rank).
// Imbalance over targets: the bytes each target receives, computed from the
// created inodes' stripe patterns (target_balance.hpp); counted per target as
// checkpoint.target.<id>.bytes so a world that sums services sees the whole
// job's distribution, and this rank's own balance is recorded as samples
// checkpoint.write.target_max_over_mean and .target_cv. Targets that got
// nothing count with 0 bytes: the file system's targets are `known_targets`
// if given, else every target in the client's maps.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/common/units.hpp"
#include "core/layout/stripe_pattern.hpp"
#include "core/workloads/barrier_service.hpp"
#include "core/workloads/buffer_pool.hpp"
#include "core/workloads/phase_recorder.hpp"
#include "core/workloads/target_balance.hpp"
#include "core/workloads/workload.hpp"
#include "core/workloads/workload_steps.hpp"
#include "core/common/field_info.hpp"
#include "core/workloads/workload_limits.hpp"

namespace sluice {

struct CheckpointConfig {
  std::string dir = "/checkpoint";
  std::uint64_t shard_bytes = 64 * k_mib;  // per rank, 1..k_workload_max_bytes_per_rank
  std::uint32_t files_per_rank = 1;        // 1..k_workload_max_inflight
  std::uint64_t block_bytes = 8 * k_mib;   // one write call, 1..k_workload_max_block_bytes
  std::uint32_t inflight_blocks = 4;       // writes in flight per rank, 1..k_workload_max_inflight
  std::uint32_t checkpoints = 1;           // bursts, each to new files, 1..k_checkpoint_max_bursts
  MemKind source_kind = MemKind::gpu;      // where the shard lives
  bool sync = true;                        // writes durable on completion
  bool read_back = false;                  // read and verify every file after the bursts
  std::uint32_t read_checkpoints = 1;      // with read_back: the last ones written, 1..checkpoints
  bool pattern_data = true;
  std::uint64_t pattern_seed = 1;
  CreateOptions create;                               // stripe settings of the checkpoint files
  StripeFlavor stripe_flavor = StripeFlavor::beegfs;  // how to read the inodes' stripe patterns
  std::vector<std::uint32_t> known_targets;           // all targets, for the imbalance (default: the client's maps)
  std::string run_tag;
  TimeNs barrier_max_wait_ns = k_barrier_max_wait_ns;
};

inline constexpr std::uint32_t k_checkpoint_max_bursts = 100'000;

// Its fields, one description each (core/common/field_info.hpp). Scripts
// also give stripe_flavor (default: the file system's) and known_targets:
// scenarios/lua/spec_builders.cpp.
template <class V>
void fields(V& v, CheckpointConfig& c) {
  constexpr bool s = k_script_field;
  v("dir", c.dir, plain("directory of the checkpoint files", s));
  v("shard_bytes", c.shard_bytes, bytes_in(1, k_workload_max_bytes_per_rank, "checkpoint bytes per rank", s));
  v("files_per_rank", c.files_per_rank,
    count_of("files", 1, k_workload_max_inflight, "files each rank's shard is split over", s));
  v("block_bytes", c.block_bytes, bytes_in(1, k_workload_max_block_bytes, "bytes of one write call", s));
  v("inflight_blocks", c.inflight_blocks,
    count_of("writes", 1, k_workload_max_inflight, "writes in flight per rank", s));
  v("checkpoints", c.checkpoints, count_of("bursts", 1, k_checkpoint_max_bursts, "bursts, each to new files", s));
  v("source_kind", c.source_kind, plain("where the shard lives", s));
  v("sync", c.sync, plain("writes durable on completion", s));
  v("read_back", c.read_back, plain("read and verify every file after the bursts", s));
  v("read_checkpoints", c.read_checkpoints,
    count_of("checkpoints", 1, k_checkpoint_max_bursts, "with read_back: checkpoints read back, the last written", s));
  pattern_fields(v, c.pattern_data, c.pattern_seed);
  v("create", c.create, plain("stripe settings of the checkpoint files"));
  v("stripe_flavor", c.stripe_flavor, plain("how to read the files' stripe patterns"));
  v("known_targets", c.known_targets, plain("every target, for the balance of bytes per target"));
  workload_tail_fields(v, c);
}

class CheckpointBurst final : public Workload {
 public:
  explicit CheckpointBurst(CheckpointConfig config) : config_(std::move(config)) {}

  static Status validate(const CheckpointConfig& config);

  void start(WorkloadContext& context, std::function<void(Status)> done) override;
  std::string name() const override { return "checkpoint"; }

  const std::vector<RankPhaseResult>& results() const { return results_; }
  // Bytes this rank put on each target (over all bursts), from the stripe patterns.
  const TargetBytes& target_bytes() const { return target_bytes_; }
  TargetBalance balance() const { return target_balance(target_bytes_, config_.known_targets); }

  std::string file_path(std::uint32_t checkpoint, std::uint32_t rank, std::uint32_t file) const;
  // Bytes of file k of a shard: shard_bytes / files_per_rank, the last one takes the remainder.
  std::uint64_t file_bytes(std::uint32_t file) const;
  std::uint64_t file_offset_in_shard(std::uint32_t file) const;

 private:
  struct Block {
    std::uint32_t file = 0;
    std::uint64_t offset = 0;  // in the file
    std::uint64_t length = 0;
  };

  void setup(StatusFn done);
  void burst(std::uint32_t checkpoint, StatusFn done);
  void wrote(std::uint64_t bytes, TimeNs issued);  // one block written: its op, and its bytes if sync
  void allocate_read_buffers(StatusFn done);
  void read_back(std::uint32_t checkpoint, StatusFn done);
  std::uint64_t file_seed(std::uint32_t file) const;

  CheckpointConfig config_;
  WorkloadContext* ctx_ = nullptr;
  MemHandle shard_;
  bool shard_allocated_ = false;
  std::unique_ptr<BufferPool> read_buffers_;
  std::unique_ptr<PhaseRecorder> recorder_;
  std::vector<RankPhaseResult> results_;
  std::vector<Block> blocks_;
  std::vector<proto::InodeDesc> inodes_;  // of the burst being written (or read back)
  TargetBytes target_bytes_;
};

}  // namespace sluice
