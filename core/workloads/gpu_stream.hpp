// GpuStream: GPU record/playback, after the Critical I/O recorder
// (docs/seeds.md#gpu-rdma-recording-over-roce): fixed-size buffers
// (1 MiB = 128 x 1024 complex floats) stream from GPU memory to storage
// (record: the GPU is the source) or from storage into GPU memory (playback:
// the GPU is the destination), with a compute step per buffer (cuFFT there)
// overlapping the transfers through CUDA streams.
//
// Each rank streams `buffers` buffers of buffer_bytes through one file,
// <dir>/s<rank>, buffer i at offset i * buffer_bytes. buffers_in_flight GPU
// buffers (on WorkloadContext::gpu) circulate; compute steps run one at a
// time per rank (one compute stream on the GPU), transfers overlap them and
// each other:
//   record:   compute(i) -> the buffer holds the result (Env::fill with the
//             pattern) -> write at i * buffer_bytes -> buffer free
//   playback: read i -> verify the pattern -> compute(i) -> buffer free
// compute = Env::compute(CostKind::workload_step, compute_ns_per_buffer);
// none when it is 0.
// The file is created (record) or, for playback with prepare_playback_file,
// created and written (untimed, no compute) before the start barrier; the
// timed phase runs from the barrier to the last buffer (record: to the close
// that sets the size).
//
// Metrics: stream.<record|playback>.bytes, .ops (buffers), .op_latency_ns
// (one buffer's transfer), .elapsed_ns, .compute_ns (counter) and .mb_per_s
// (one sample per rank, 10^6 bytes/s as the paper reports).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/units.hpp"
#include "core/workloads/barrier_service.hpp"
#include "core/workloads/buffer_pool.hpp"
#include "core/workloads/phase_recorder.hpp"
#include "core/workloads/workload.hpp"
#include "core/workloads/workload_steps.hpp"
#include "core/common/field_info.hpp"
#include "core/workloads/workload_limits.hpp"

namespace sluice {

enum class StreamDirection : std::uint8_t { record, playback };
std::string_view to_string(StreamDirection direction);  // "record", "playback"

struct StreamConfig {
  StreamDirection direction = StreamDirection::record;
  std::string dir = "/stream";
  std::uint64_t buffer_bytes = 1 * k_mib;  // 1..k_workload_max_block_bytes
  std::uint64_t buffers = 256;             // per rank, 1..k_workload_max_items_per_rank
  std::uint32_t buffers_in_flight = 4;     // 1..k_workload_max_inflight
  TimeNs compute_ns_per_buffer = 0;        // >= 0
  bool prepare_playback_file = true;       // playback: write the file first (untimed)
  bool remove_file = false;                // unlink the file at the end
  bool sync_writes = false;
  bool pattern_data = true;
  std::uint64_t pattern_seed = 1;
  CreateOptions create;
  std::string run_tag;
  TimeNs barrier_max_wait_ns = k_barrier_max_wait_ns;
};

// Its fields, one description each (core/common/field_info.hpp).
template <class V>
void fields(V& v, StreamConfig& c) {
  constexpr bool s = k_script_field;
  v("direction", c.direction, plain("record (GPU -> storage) or playback (storage -> GPU)", s));
  v("dir", c.dir, plain("directory of the stream's file", s));
  v("buffer_bytes", c.buffer_bytes, bytes_in(1, k_workload_max_block_bytes, "bytes of one GPU buffer", s));
  v("buffers", c.buffers, count_of("buffers", 1, k_workload_max_items_per_rank, "buffers streamed per rank", s));
  v("buffers_in_flight", c.buffers_in_flight,
    count_of("buffers", 1, k_workload_max_inflight, "GPU buffers in flight per rank", s));
  v("compute_ns_per_buffer", c.compute_ns_per_buffer,
    duration_in(0, k_field_max_unbounded, "GPU compute per buffer", s));
  v("prepare_playback_file", c.prepare_playback_file, plain("playback: write the file first (untimed)", s));
  v("remove_file", c.remove_file, plain("unlink the file at the end", s));
  v("sync_writes", c.sync_writes, plain("every write durable on completion", s));
  pattern_fields(v, c.pattern_data, c.pattern_seed);
  v("create", c.create, plain("stripe settings of the stream's file"));
  workload_tail_fields(v, c);
}

class GpuStream final : public Workload {
 public:
  explicit GpuStream(StreamConfig config) : config_(std::move(config)) {}

  static Status validate(const StreamConfig& config);

  void start(WorkloadContext& context, std::function<void(Status)> done) override;
  std::string name() const override { return "stream"; }

  const std::vector<RankPhaseResult>& results() const { return results_; }
  std::string file_path(std::uint32_t rank) const { return config_.dir + "/s" + std::to_string(rank); }
  std::uint64_t file_seed(std::uint32_t rank) const { return derive_seed(config_.pattern_seed, rank); }

 private:
  void prepare(StatusFn done);
  void stream(StatusFn done);
  void record_buffer(std::uint64_t index, StatusFn done);
  void playback_buffer(std::uint64_t index, StatusFn done);
  // Runs one compute step on the rank's GPU after those queued before it.
  void gpu_compute(std::function<void(Status)> done);
  void pump_gpu();

  StreamConfig config_;
  WorkloadContext* ctx_ = nullptr;
  std::unique_ptr<BufferPool> buffers_;
  std::unique_ptr<PhaseRecorder> recorder_;
  std::vector<RankPhaseResult> results_;
  proto::InodeDesc inode_;
  std::deque<std::function<void(Status)>> gpu_queue_;
  bool gpu_busy_ = false;
};

}  // namespace sluice
