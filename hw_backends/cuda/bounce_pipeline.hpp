// The bounce pipeline: storage -> pinned staging buffer -> GPU, pipelined.
//
// A byte range of a source (a file) is cut into tasks of task_bytes, each
// moved in pieces of buffer_bytes (the staging size; a task of one piece by
// default). N reader threads ("lanes") take tasks in order from a shared
// counter (as KvikIO's thread pool takes tasks) and each keeps `depth`
// staging buffers: a lane reads piece k into a free buffer, starts its
// asynchronous copy to the destination (cudaMemcpyAsync on the lane's
// stream) and goes on to read its next piece while that copy runs; only when
// no buffer is free does it wait for its oldest copy. So reading piece i+1
// overlaps copying piece i, and up to N reads and N x depth copies are in
// flight. A task larger than the staging size (KvikIO's 16 MiB tasks) is
// read in cache-sized pieces that overlap their copies, where one 16 MiB
// buffer could only be read, then copied (P6, docs/gpu.md).
//
// The slots of a lane are a core/sched PipelineWindow (the same window the
// services keep per rail): depth 2 is double buffering, the window's
// minimum; 8 is its default maximum (NCCL_STEPS). depth and buffer_bytes
// come from core/sched's sizing: bounce_depth() is sched::window_chunks()
// over the lane's read rate and one piece's copy time.
//
// What reads and what copies are interfaces, so the schedule is tested with
// fakes on machines without a GPU: PreadChunkSource and CudaChunkSink are the
// real ones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/common/status.hpp"
#include "core/common/units.hpp"

namespace sluice::hw::cuda {

// Staging buffer (= piece) size. 4 MiB measured best on the H200 machine
// (docs/gpu.md, P6: 16 reader threads moved 51 GB/s from the page cache with
// 4 MiB pieces, 37-38 GB/s with 16 MiB ones): a piece the copy engine reads
// soon after the CPU wrote it is still in the last-level cache, so host
// memory carries it twice instead of three times. KvikIO's task size is 4 MiB too.
inline constexpr std::uint64_t k_default_bounce_buffer_bytes = 4ULL << 20;
// Staging bytes one lane keeps in the CPU's last-level cache: with depth >= 2
// a lane reads its next piece while the copy engine reads the last one, so
// both must stay cached or host memory carries each byte once more. Measured
// on the H200 host (bench_gpu, KvikIO peer rows, page cache, 2026-11-28):
// 2 x 4 MiB per lane overlap without loss, 2 x 16 MiB read 17-21% slower
// than one 16 MiB buffer (depth 1) at 1-2 lanes, and 16 lanes of 3 x 4 MiB
// moved 38-41 GB/s against 47-51 GB/s with 2 x 4 MiB.
inline constexpr std::uint64_t k_bounce_lane_cache_bytes = 8ULL << 20;
// Reader threads one pipeline may start (KvikIO's default pool has 1; P6 runs up to 16).
inline constexpr std::uint32_t k_max_bounce_reader_threads = 64;

// Reads source bytes. Thread-safe (lanes call it concurrently).
class ChunkSource {
 public:
  virtual ~ChunkSource() = default;
  // Reads `length` bytes at `offset` into the start of `buffer` (its size is
  // the staging buffer's, >= length, so an O_DIRECT read may round up).
  // Returns the bytes read, == length unless the source ends first.
  virtual Result<std::uint64_t> read(std::uint64_t offset, std::span<std::byte> buffer, std::uint64_t length) = 0;
};

// Copies staged bytes to the destination. Lane `lane` is driven by one thread only.
class ChunkSink {
 public:
  virtual ~ChunkSink() = default;
  // Called once on a lane's thread before its first copy (cudaSetDevice).
  virtual Status begin_lane(std::uint32_t lane) = 0;
  // Starts copying `from` to destination offset `dst_offset` from slot `slot`
  // of `lane`; the slot's buffer stays untouched until wait_copy(lane, slot).
  virtual Status start_copy(std::uint32_t lane, std::uint32_t slot, std::span<const std::byte> from,
                            std::uint64_t dst_offset) = 0;
  // Waits until the copy last started from (lane, slot) is done.
  virtual Status wait_copy(std::uint32_t lane, std::uint32_t slot) = 0;
};

// The largest task one lane takes at once.
inline constexpr std::uint64_t k_max_bounce_task_bytes = 1ULL << 30;

struct BounceConfig {
  std::uint64_t buffer_bytes = k_default_bounce_buffer_bytes;  // piece size = staging buffer size
  // Bytes a lane takes at once (a task, contiguous in the source), moved in
  // pieces of buffer_bytes; 0: one piece. A multiple of the O_DIRECT block.
  std::uint64_t task_bytes = 0;
  std::uint32_t depth = 2;           // staging buffers per lane (sched window)
  std::uint32_t reader_threads = 1;  // lanes, 1..k_max_bounce_reader_threads
};

// Validates a config: invalid_argument naming the field.
Status check_bounce_config(const BounceConfig& config);

// core/sched sizing of a lane's depth. The lane's reader is the producer and
// its copies the consumer: when the reader wants its next buffer, the copies
// started within one copy time are still running, so the lane needs
//   window_chunks(read rate of the lane, copy time of one piece, piece)
//   = ceil(read rate x copy time / piece) + 1 = ceil(read rate / copy rate) + 1
// buffers, clamped to the window's [2, 8]: double buffering while the copies
// outrun the reads. (Sized the other way round, as the copy engine's
// bandwidth-delay product over one read, it gave depth 8 to one lane, whose
// 8 x 16 MiB of staging left the CPU's last-level cache: 5.5 GB/s where
// KvikIO's one 16 MiB buffer read 6.9 GB/s, H200 host, 2026-11-28.)
// Then no more buffers than k_bounce_lane_cache_bytes hold, and at least
// one: pieces too large to overlap in the cache are read, then copied (as
// KvikIO does with each task). Errors as window_chunks'.
Result<std::uint32_t> bounce_depth(double read_bytes_per_s, TimeNs copy_time_ns, std::uint64_t buffer_bytes);

struct BounceStats {
  std::uint64_t bytes = 0;
  std::uint64_t chunks = 0;  // pieces moved through the staging buffers
  std::vector<std::uint64_t> chunks_per_lane;
  std::uint32_t max_copies_in_flight_per_lane = 0;  // the most slots one lane had busy at once
  double read_seconds = 0;                          // summed over lanes: time inside ChunkSource::read
  double wait_seconds = 0;                          // summed over lanes: time inside ChunkSink::wait_copy
  double wall_seconds = 0;
};

// Moves source bytes [src_offset, src_offset + bytes) to destination bytes
// [0, bytes) through `staging` (reader_threads x depth buffers of at least
// buffer_bytes each; lane l uses staging[l * depth .. l * depth + depth)).
// On the first error every lane stops taking chunks, waits for its copies and
// the error is returned (the one naming the first failure). A source that
// ends early is io_error naming the offset.
Result<BounceStats> run_bounce_pipeline(ChunkSource& source, ChunkSink& sink,
                                        std::span<const std::span<std::byte>> staging, const BounceConfig& config,
                                        std::uint64_t src_offset, std::uint64_t bytes);

}  // namespace sluice::hw::cuda
