// StageIn: every node pulls its share of a dataset from an object store into
// the file system in parallel (docs/seeds.md#beeond-staging: "ingress from
// object storage scales linearly with node count";
// docs/seeds.md#beeond-for-cosmoflow-on-azure: one Azure storage account gives
// ~6.25 GB/s, a VM ~750 MB/s to Blob).
//
// The object store is modelled, not simulated: a ranged GET of a block is a
// wait for the rank's source budget, an optional first-byte latency (a timer),
// and the bytes appearing in the rank's buffer (Env::fill with the object's
// pattern). The budget is a token bucket per rank (core/sched/token_bucket.hpp)
// of source_bytes_per_s_per_rank with source_burst_bytes of burst, served in
// FIFO order, so a rank never pulls faster than its share of the store's
// egress; 0 means unlimited. Each block is then written to the file system.
//
// Rank r stages objects i with i % ranks == r to <dir>/o<i> (object_bytes each,
// block_bytes per GET and write, `threads` objects in flight per rank, one
// block in flight per object). Rank 0 creates <dir> (existing is fine) before
// the start barrier; the phase "ingress" runs from that barrier to the close
// of the rank's last object.
// File content: the pattern of seed derive_seed(pattern_seed, i) at stream
// offset = file offset, so a reader can verify any staged object.
//
// Metrics: stage_in.ingress.bytes, .ops (block writes), .op_latency_ns (GET
// wait + latency + fill + write of one block), .elapsed_ns,
// .source_wait_ns (per block, time spent waiting for the source budget) and
// .bytes_per_s (one sample per rank); the aggregate ingress rate is
// summarize_phase(...).last_bytes_per_s.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/common/units.hpp"
#include "core/sched/token_bucket.hpp"
#include "core/workloads/barrier_service.hpp"
#include "core/workloads/buffer_pool.hpp"
#include "core/workloads/phase_recorder.hpp"
#include "core/workloads/workload.hpp"
#include "core/workloads/workload_steps.hpp"
#include "core/common/field_info.hpp"
#include "core/workloads/workload_limits.hpp"

namespace sluice {

struct StageInConfig {
  std::string dir = "/staged";
  std::uint64_t objects = 64;               // objects in the dataset (all ranks), 0..k_workload_max_items_per_rank
  std::uint64_t object_bytes = 16 * k_mib;  // 0..k_workload_max_bytes_per_rank
  std::uint64_t block_bytes = 4 * k_mib;    // one ranged GET and one write, 1..k_workload_max_block_bytes
  std::uint32_t threads = 4;                // objects in flight per rank, 1..k_workload_max_inflight
  std::uint64_t source_bytes_per_s_per_rank = 0;  // object-store egress per rank; 0 = unlimited
  std::uint64_t source_burst_bytes = 0;           // token bucket depth; 0 = block_bytes; >= block_bytes
  TimeNs source_request_latency_ns = 0;           // first-byte latency of one GET, >= 0
  MemKind buffer_kind = MemKind::host;
  bool pattern_data = true;
  std::uint64_t pattern_seed = 1;
  CreateOptions create;
  std::string run_tag;
  TimeNs barrier_max_wait_ns = k_barrier_max_wait_ns;
};

// Its fields, one description each (core/common/field_info.hpp).
template <class V>
void fields(V& v, StageInConfig& c) {
  constexpr bool s = k_script_field;
  v("dir", c.dir, plain("directory the objects are staged into", s));
  v("objects", c.objects,
    count_of("objects", 0, k_workload_max_items_per_rank, "objects in the dataset, all ranks together", s));
  v("object_bytes", c.object_bytes, bytes_in(0, k_workload_max_bytes_per_rank, "bytes of one object", s));
  v("block_bytes", c.block_bytes, bytes_in(1, k_workload_max_block_bytes, "one ranged GET and one write", s));
  v("threads", c.threads, count_of("objects", 1, k_workload_max_inflight, "objects in flight per rank", s));
  v("source_bytes_per_s_per_rank", c.source_bytes_per_s_per_rank,
    rate_in(0, k_field_max_unbounded, "object-store egress per rank (0: unlimited)", s));
  v("source_burst_bytes", c.source_burst_bytes,
    bytes_in(0, k_field_max_unbounded, "token bucket depth of that rate (0: block_bytes)", s));
  v("source_request_latency_ns", c.source_request_latency_ns,
    duration_in(0, k_field_max_unbounded, "first-byte latency of one GET", s));
  v("buffer_kind", c.buffer_kind, plain("where the staging buffers live", s));
  pattern_fields(v, c.pattern_data, c.pattern_seed);
  v("create", c.create, plain("stripe settings of the staged files"));
  workload_tail_fields(v, c);
}

class StageIn final : public Workload {
 public:
  explicit StageIn(StageInConfig config) : config_(std::move(config)) {}

  static Status validate(const StageInConfig& config);

  void start(WorkloadContext& context, std::function<void(Status)> done) override;
  std::string name() const override { return "stage_in"; }

  const std::vector<RankPhaseResult>& results() const { return results_; }
  std::string object_path(std::uint64_t object) const { return config_.dir + "/o" + std::to_string(object); }
  std::uint64_t object_seed(std::uint64_t object) const { return derive_seed(config_.pattern_seed, object); }
  // Objects rank `rank` of `ranks` stages.
  std::uint64_t objects_of(std::uint32_t rank, std::uint32_t ranks) const;

 private:
  struct Job;

  void stage_object(std::uint64_t object, StatusFn done);
  void next_block(const std::shared_ptr<Job>& job);
  // Calls go() once the source budget allows `bytes` more (FIFO).
  void acquire_source(std::uint64_t bytes, std::function<void()> go);
  void serve_source();

  StageInConfig config_;
  WorkloadContext* ctx_ = nullptr;
  std::unique_ptr<BufferPool> buffers_;
  std::unique_ptr<PhaseRecorder> recorder_;
  std::vector<RankPhaseResult> results_;
  std::optional<sched::TokenBucket> source_;
  struct SourceRequest {
    std::uint64_t bytes = 0;
    std::function<void()> go;
  };
  std::deque<SourceRequest> source_queue_;
  bool source_waiting_ = false;
};

}  // namespace sluice
