#include "scenarios/runner/staged_copy_run.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <vector>
#include <variant>

#include "core/topology/machine_builders.hpp"

// SimEnv exists where SimGrid was found (as in sim_point_run.cpp).
#if __has_include(<simgrid/forward.h>)
#define SLUICE_STAGED_COPY_HAS_SIM 1
#include "sim/sim_profile.hpp"
#include "sim/sim_runtime.hpp"
#else
#define SLUICE_STAGED_COPY_HAS_SIM 0
#endif

namespace sluice::scenario {

std::string_view to_string(StagedCopySeries series) { return series == StagedCopySeries::dma ? "dma" : "bounce"; }

Result<StagedCopySeries> parse_staged_copy_series(std::string_view text) {
  if (text == "bounce") return StagedCopySeries::bounce;
  if (text == "dma") return StagedCopySeries::dma;
  return error(StatusCode::invalid_argument,
               "staged copy series \"" + std::string(text) + "\": expected bounce or dma");
}

Status validate(const StagedCopyPoint& point) {
  if (point.depth == 0 || point.depth > k_max_staged_copy_depth) {
    return error(StatusCode::invalid_argument, "staged copy point: depth " + std::to_string(point.depth) +
                                                   " outside 1.." + std::to_string(k_max_staged_copy_depth));
  }
  if (point.lanes == 0 || point.lanes > k_max_staged_copy_lanes) {
    return error(StatusCode::invalid_argument, "staged copy point: lanes " + std::to_string(point.lanes) +
                                                   " outside 1.." + std::to_string(k_max_staged_copy_lanes));
  }
  if (point.gpus == 0 || point.gpus > k_max_staged_copy_gpus) {
    return error(StatusCode::invalid_argument, "staged copy point: gpus " + std::to_string(point.gpus) +
                                                   " outside 1.." + std::to_string(k_max_staged_copy_gpus));
  }
  if (point.piece_bytes == 0) return error(StatusCode::invalid_argument, "staged copy point: piece_bytes is 0");
  if (point.total_bytes < point.piece_bytes) {
    return error(StatusCode::invalid_argument, "staged copy point: total_bytes " + std::to_string(point.total_bytes) +
                                                   " below piece_bytes " + std::to_string(point.piece_bytes));
  }
  if ((point.total_bytes + point.piece_bytes - 1) / point.piece_bytes > k_max_staged_copy_pieces) {
    return error(StatusCode::invalid_argument, "staged copy point: more than " +
                                                   std::to_string(k_max_staged_copy_pieces) +
                                                   " pieces (k_max_staged_copy_pieces)");
  }
  return {};
}

Result<topo::Topology> staged_copy_topology(const StagedCopyMachine& machine, std::uint32_t gpus) {
  topo::GenericMachine g;
  g.sockets = 1;
  g.gpus = gpus;
  g.switches_per_socket = gpus;  // each GPU on a root port of its own
  g.nics = 0;
  g.nvmes = 0;
  g.pcie_gen = machine.pcie_gen;
  g.gpu_lanes = machine.gpu_lanes;
  g.memory_bytes_per_s = machine.memory_bytes_per_s;
  g.gpu_memory_bytes = machine.gpu_memory_bytes;
  return topo::generic_machine(g);
}

#if SLUICE_STAGED_COPY_HAS_SIM
namespace {

// What the lanes of one point share: the next piece to take and the progress.
struct CopyJob {
  StagedCopyPoint point;
  TimeNs copy_ns_per_byte_x1e6 = 0;  // read() copy time per byte, in ns x 1e-6 (0: no copy)
  std::uint64_t next_piece = 0;
  std::uint64_t pieces = 0;
  std::uint64_t bytes_done = 0;
  std::uint32_t lanes_done = 0;
  TimeNs end_ns = 0;
  Status failure;
};

// One reader thread of the bounce pipeline (or one cudaMemcpy thread of the
// dma series) with `depth` staging buffers: it read()s the next piece into a
// free buffer (one read at a time: a thread), queues its DMA on the lane's
// stream (DMAs of a lane run in order, one at a time), and takes another
// piece while a buffer is free, so a lane's next read overlaps its previous
// DMA as in hw_backends/cuda/bounce_pipeline.hpp.
class CopyLane final : public Service {
 public:
  CopyLane(Env& env, CopyJob* job, std::uint16_t gpu) : env_(env), job_(*job), gpu_index_(gpu) {}

  void start() override {
    for (std::uint32_t i = 0; i < job_.point.depth; ++i) {
      Result<MemHandle> host = env_.alloc(MemKind::pinned, 0, job_.point.piece_bytes);
      if (!host.ok()) return finish(host.status());
      free_.push_back(*host);
    }
    Result<MemHandle> gpu = env_.alloc(MemKind::gpu, gpu_index_, job_.point.piece_bytes);
    if (!gpu.ok()) return finish(gpu.status());
    gpu_ = *gpu;
    pump();
  }

  void on_event(Event& event) override {
    auto* done = std::get_if<Completion>(&event);
    if (done == nullptr || finished_) return;
    if (!done->status.ok()) return finish(done->status);
    if (copy_op_ != 0 && done->op == copy_op_) {
      copy_op_ = 0;
      dma_queue_.push_back(copying_);
    } else if (dma_op_ != 0 && done->op == dma_op_) {
      dma_op_ = 0;
      job_.bytes_done += done->bytes;
      job_.end_ns = std::max(job_.end_ns, env_.now());
      free_.push_back(in_dma_.buffer);
    } else {
      return;
    }
    pump();
  }

  std::string name() const override { return "copy_lane"; }

 private:
  struct Piece {
    MemHandle buffer;
    std::uint64_t bytes = 0;
  };

  void pump() {
    if (copy_op_ == 0 && !free_.empty() && job_.next_piece < job_.pieces) {
      const std::uint64_t offset = job_.next_piece++ * job_.point.piece_bytes;
      copying_ = Piece{free_.back(), std::min(job_.point.piece_bytes, job_.point.total_bytes - offset)};
      free_.pop_back();
      if (job_.copy_ns_per_byte_x1e6 == 0) {
        dma_queue_.push_back(copying_);
      } else {
        const auto ns = static_cast<TimeNs>(static_cast<double>(copying_.bytes) *
                                            static_cast<double>(job_.copy_ns_per_byte_x1e6) * 1e-6);
        copy_op_ = env_.timer(std::max<TimeNs>(ns, 1));
      }
    }
    if (dma_op_ == 0 && !dma_queue_.empty()) {
      in_dma_ = dma_queue_.front();
      dma_queue_.pop_front();
      TransferSpec t;
      t.src = in_dma_.buffer.slice(0, in_dma_.bytes);
      t.dst = gpu_.slice(0, in_dma_.bytes);
      t.mode = TransferMode::local_copy;
      dma_op_ = env_.transfer(t);
    }
    // A copy of zero time can free the pipeline for the next piece at once.
    if (copy_op_ == 0 && job_.copy_ns_per_byte_x1e6 == 0 && !free_.empty() && job_.next_piece < job_.pieces) {
      return pump();
    }
    if (copy_op_ == 0 && dma_op_ == 0 && dma_queue_.empty() && job_.next_piece >= job_.pieces) finish({});
  }

  void finish(Status status) {
    if (finished_) return;
    finished_ = true;
    if (!status.ok() && job_.failure.ok()) job_.failure = status;
    ++job_.lanes_done;
  }

  Env& env_;
  CopyJob& job_;
  std::uint16_t gpu_index_;
  std::vector<MemHandle> free_;
  std::deque<Piece> dma_queue_;
  Piece copying_;
  Piece in_dma_;
  MemHandle gpu_;
  OpId copy_op_ = 0;
  OpId dma_op_ = 0;
  bool finished_ = false;
};

}  // namespace

Result<double> simulate_staged_copy(std::string_view profile_json, const StagedCopyMachine& machine,
                                    const StagedCopyPoint& point) {
  if (Status s = validate(point); !s.ok()) return s;
  Result<sim::SimProfile> profile = sim::parse_profile(profile_json);
  if (!profile.ok()) return profile.status();
  // The lane charges the read() copies itself (so that a lane's next read
  // overlaps its previous DMA); the runtime moves the DMA alone. Each GPU
  // has its own job: its lanes share its pieces.
  std::vector<CopyJob> jobs(point.gpus);
  for (CopyJob& job : jobs) {
    job.point = point;
    job.pieces = (point.total_bytes + point.piece_bytes - 1) / point.piece_bytes;
    if (point.series == StagedCopySeries::bounce && profile->staging_cpu_copies > 0) {
      job.copy_ns_per_byte_x1e6 = static_cast<TimeNs>(std::llround(
          1e15 * static_cast<double>(profile->staging_cpu_copies) / profile->staging_cpu_copy_bytes_per_s));
    }
  }
  profile->staging_cpu_copies = 0;
  Result<topo::Topology> topology = staged_copy_topology(machine, point.gpus);
  if (!topology.ok()) return topology.status();
  sim::SimRuntimeConfig config;
  config.profile = *profile;
  // One pool that holds every lane's buffers: this run models copies, not memory.
  config.node_memory_limit_bytes =
      std::max<std::uint64_t>(sim::k_unsized_node_memory_bytes,
                              std::uint64_t{point.gpus} * point.lanes * (point.depth + 1) * point.piece_bytes);
  auto rt = sim::SimRuntime::create(std::make_shared<const topo::Topology>(std::move(*topology)), config);
  if (!rt.ok()) return rt.status();
  for (std::uint32_t g = 0; g < point.gpus; ++g) {
    for (std::uint32_t l = 0; l < point.lanes; ++l) {
      (*rt)->add_service<CopyLane>(0, &jobs[g], static_cast<std::uint16_t>(g));
    }
  }
  (*rt)->start();
  const TimeNs start_ns = (*rt)->now();
  auto all_done = [&] {
    return std::all_of(jobs.begin(), jobs.end(), [&](const CopyJob& j) { return j.lanes_done == point.lanes; });
  };
  // Each piece is a handful of events (the copy's timer, the DMA, completions).
  const std::uint64_t max_events = 16 * jobs[0].pieces * point.gpus + 1000;
  (*rt)->run_until(all_done, max_events);
  TimeNs end_ns = start_ns;
  for (const CopyJob& job : jobs) {
    if (!job.failure.ok()) return job.failure;
    if (job.lanes_done != point.lanes || job.bytes_done != point.total_bytes) {
      return error(StatusCode::internal, "staged copy point: " + std::to_string(job.bytes_done) + " of " +
                                             std::to_string(point.total_bytes) +
                                             " bytes of a GPU moved when the run stopped at " +
                                             std::to_string(static_cast<double>((*rt)->now()) / 1e9) + " s");
    }
    end_ns = std::max(end_ns, job.end_ns);
  }
  const double seconds = static_cast<double>(end_ns - start_ns) / static_cast<double>(k_ns_per_s);
  if (seconds <= 0) return error(StatusCode::internal, "staged copy point: no simulated time passed");
  return static_cast<double>(point.total_bytes) * point.gpus / seconds;
}

#else

Result<double> simulate_staged_copy(std::string_view, const StagedCopyMachine&, const StagedCopyPoint&) {
  return error(StatusCode::unavailable, "this build has no SimEnv (SimGrid was not found)");
}

#endif

}  // namespace sluice::scenario
