#include "hw_backends/cuda/bounce_pipeline.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <thread>

#include "core/sched/pipeline_window.hpp"
#include "hw_backends/storage_backend.hpp"

namespace sluice::hw::cuda {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// What the lanes share: the next task, the first error, the totals.
struct Shared {
  std::atomic<std::uint64_t> next_task{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  Status first_error;
  double read_seconds = 0;
  double wait_seconds = 0;
  std::uint32_t max_in_flight = 0;

  void fail(Status st) {
    std::lock_guard lock(mu);
    if (first_error.ok()) first_error = std::move(st);
    failed = true;
  }
};

struct LaneJob {
  ChunkSource* source = nullptr;
  ChunkSink* sink = nullptr;
  std::span<const std::span<std::byte>> slots;  // this lane's staging buffers
  std::uint32_t lane = 0;
  std::uint64_t src_offset = 0;
  std::uint64_t bytes = 0;
  std::uint64_t buffer_bytes = 0;  // a piece
  std::uint64_t task_bytes = 0;    // what the lane takes at once, moved in pieces
  std::uint64_t task_count = 0;
};

// One lane's staging: its slots (a PipelineWindow) and the copies in flight
// from them, oldest first.
class Lane {
 public:
  explicit Lane(const LaneJob& job) : job_(job), window_(static_cast<std::uint32_t>(job.slots.size())) {}

  // Reads piece [rel, rel + length) into a free slot and starts its copy;
  // waits for the oldest copy first when every slot holds one.
  Status move_piece(std::uint64_t rel, std::uint64_t length) {
    Result<std::uint32_t> slot = window_.acquire();
    if (!slot.ok()) {
      if (Status st = wait_oldest(); !st.ok()) return st;
      slot = window_.acquire();
      if (!slot.ok()) return slot.status();
    }
    const std::span<std::byte> buffer = job_.slots[*slot];
    const auto t0 = Clock::now();
    Result<std::uint64_t> got = job_.source->read(job_.src_offset + rel, buffer, length);
    read_s_ += seconds_since(t0);
    Status st;
    if (!got.ok()) {
      st = got.status();
    } else if (*got < length) {
      st = error(StatusCode::io_error, "bounce pipeline: source ended at offset " +
                                           std::to_string(job_.src_offset + rel + *got) + ", " +
                                           std::to_string(length - *got) + " bytes short of the piece at " +
                                           std::to_string(job_.src_offset + rel));
    } else {
      st = job_.sink->start_copy(job_.lane, *slot, buffer.first(length), rel);
    }
    if (!st.ok()) {
      window_.release(*slot).ignore();  // no copy was started from it
      return st;
    }
    busy_.push_back(*slot);
    ++pieces_;
    return ok_status();
  }
  // Every started copy is waited for, also after an error; the first error.
  Status drain(Status st) {
    while (!busy_.empty()) {
      Status w = wait_oldest();
      if (st.ok()) st = std::move(w);
    }
    return st;
  }
  std::uint32_t in_flight() const { return window_.in_flight(); }
  std::uint64_t pieces() const { return pieces_; }
  double read_seconds() const { return read_s_; }
  double wait_seconds() const { return wait_s_; }

 private:
  Status wait_oldest() {
    const std::uint32_t slot = busy_.front();
    busy_.pop_front();
    const auto t0 = Clock::now();
    Status st = job_.sink->wait_copy(job_.lane, slot);
    wait_s_ += seconds_since(t0);
    const Status released = window_.release(slot);
    return st.ok() ? released : st;
  }

  const LaneJob& job_;
  sched::PipelineWindow window_;
  std::deque<std::uint32_t> busy_;
  std::uint64_t pieces_ = 0;
  double read_s_ = 0;
  double wait_s_ = 0;
};

// Takes tasks until none is left or a lane failed; moves each in pieces.
std::uint64_t run_lane(const LaneJob& job, Shared& shared) {
  Lane lane(job);
  Status st = job.sink->begin_lane(job.lane);
  while (st.ok() && !shared.failed) {
    const std::uint64_t task = shared.next_task.fetch_add(1);
    if (task >= job.task_count) break;
    const std::uint64_t begin = task * job.task_bytes;
    const std::uint64_t end = std::min(job.bytes, begin + job.task_bytes);
    for (std::uint64_t rel = begin; st.ok() && rel < end; rel += job.buffer_bytes) {
      st = lane.move_piece(rel, std::min(job.buffer_bytes, end - rel));
      if (!st.ok()) break;
      std::lock_guard lock(shared.mu);
      shared.max_in_flight = std::max(shared.max_in_flight, lane.in_flight());
    }
  }
  st = lane.drain(std::move(st));
  if (!st.ok()) shared.fail(std::move(st));
  std::lock_guard lock(shared.mu);
  shared.read_seconds += lane.read_seconds();
  shared.wait_seconds += lane.wait_seconds();
  return lane.pieces();
}

}  // namespace

Status check_bounce_config(const BounceConfig& config) {
  const std::string where = "bounce pipeline config: ";
  if (config.buffer_bytes == 0 || config.buffer_bytes > k_max_storage_request_bytes ||
      config.buffer_bytes % k_direct_io_alignment_bytes != 0) {
    return error(StatusCode::invalid_argument, where + "buffer_bytes " + std::to_string(config.buffer_bytes) +
                                                   " must be a multiple of " +
                                                   std::to_string(k_direct_io_alignment_bytes) + " in 1.." +
                                                   std::to_string(k_max_storage_request_bytes));
  }
  if (config.task_bytes != 0 &&
      (config.task_bytes < config.buffer_bytes || config.task_bytes > k_max_bounce_task_bytes ||
       config.task_bytes % k_direct_io_alignment_bytes != 0)) {
    return error(StatusCode::invalid_argument,
                 where + "task_bytes " + std::to_string(config.task_bytes) + " must be 0 or a multiple of " +
                     std::to_string(k_direct_io_alignment_bytes) + " in buffer_bytes (" +
                     std::to_string(config.buffer_bytes) + ").." + std::to_string(k_max_bounce_task_bytes));
  }
  if (config.depth == 0 || config.depth > sched::k_max_window_chunks_limit) {
    return error(StatusCode::invalid_argument, where + "depth " + std::to_string(config.depth) + " must be in 1.." +
                                                   std::to_string(sched::k_max_window_chunks_limit));
  }
  if (config.reader_threads == 0 || config.reader_threads > k_max_bounce_reader_threads) {
    return error(StatusCode::invalid_argument, where + "reader_threads " + std::to_string(config.reader_threads) +
                                                   " must be in 1.." + std::to_string(k_max_bounce_reader_threads));
  }
  return ok_status();
}

Result<std::uint32_t> bounce_depth(double read_bytes_per_s, TimeNs copy_time_ns, std::uint64_t buffer_bytes) {
  Result<std::uint32_t> window = sched::window_chunks(read_bytes_per_s, copy_time_ns, buffer_bytes);
  if (!window.ok()) return window;
  const std::uint64_t cached = std::max<std::uint64_t>(1, k_bounce_lane_cache_bytes / buffer_bytes);
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(*window, cached));
}

Result<BounceStats> run_bounce_pipeline(ChunkSource& source, ChunkSink& sink,
                                        std::span<const std::span<std::byte>> staging, const BounceConfig& config,
                                        std::uint64_t src_offset, std::uint64_t bytes) {
  if (Status s = check_bounce_config(config); !s.ok()) return s;
  const std::uint64_t slots = std::uint64_t{config.reader_threads} * config.depth;
  if (staging.size() < slots) {
    return error(StatusCode::invalid_argument, "bounce pipeline: " + std::to_string(staging.size()) +
                                                   " staging buffers for " + std::to_string(config.reader_threads) +
                                                   " lanes x depth " + std::to_string(config.depth));
  }
  for (const auto& b : staging.first(slots)) {
    if (b.size() < config.buffer_bytes) {
      return error(StatusCode::invalid_argument, "bounce pipeline: a staging buffer of " + std::to_string(b.size()) +
                                                     " bytes is under buffer_bytes " +
                                                     std::to_string(config.buffer_bytes));
    }
  }
  if (src_offset + bytes < src_offset) {
    return error(StatusCode::invalid_argument, "bounce pipeline: source range overflows");
  }
  const auto start = Clock::now();
  Shared shared;
  BounceStats stats;
  stats.chunks_per_lane.assign(config.reader_threads, 0);
  const std::uint64_t task_bytes = config.task_bytes != 0 ? config.task_bytes : config.buffer_bytes;
  const std::uint64_t task_count = (bytes + task_bytes - 1) / task_bytes;
  std::vector<LaneJob> jobs(config.reader_threads);
  for (std::uint32_t lane = 0; lane < config.reader_threads; ++lane) {
    jobs[lane] = LaneJob{&source,
                         &sink,
                         staging.subspan(std::size_t{lane} * config.depth, config.depth),
                         lane,
                         src_offset,
                         bytes,
                         config.buffer_bytes,
                         task_bytes,
                         task_count};
  }
  if (config.reader_threads == 1) {
    stats.chunks_per_lane[0] = run_lane(jobs[0], shared);  // no thread for one lane
  } else {
    std::vector<std::thread> threads;
    threads.reserve(config.reader_threads);
    for (std::uint32_t lane = 0; lane < config.reader_threads; ++lane) {
      threads.emplace_back([&, lane] { stats.chunks_per_lane[lane] = run_lane(jobs[lane], shared); });
    }
    for (auto& t : threads) t.join();
  }
  if (shared.failed) return shared.first_error;
  stats.bytes = bytes;
  for (std::uint64_t pieces : stats.chunks_per_lane) stats.chunks += pieces;
  stats.max_copies_in_flight_per_lane = shared.max_in_flight;
  stats.read_seconds = shared.read_seconds;
  stats.wait_seconds = shared.wait_seconds;
  stats.wall_seconds = seconds_since(start);
  return stats;
}

}  // namespace sluice::hw::cuda
