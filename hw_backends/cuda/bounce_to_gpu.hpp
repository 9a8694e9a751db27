// File -> GPU memory through the bounce pipeline, put together: staging
// buffers lent by a PinnedPool on the GPU's NUMA node, a PreadChunkSource
// (page cache or O_DIRECT) and a CudaChunkSink on the GPU.
#pragma once

#include <cstdint>
#include <string>

#include "hw_backends/cuda/bounce_pipeline.hpp"
#include "hw_backends/cuda/pinned_pool.hpp"

namespace sluice::hw::cuda {

struct BounceRead {
  std::string path;
  bool direct = false;            // O_DIRECT
  std::uint64_t file_offset = 0;  // O_DIRECT: a multiple of 4 KiB
  std::uint64_t bytes = 0;
  int device = 0;                  // the GPU that owns gpu_dst
  std::byte* gpu_dst = nullptr;    // bytes of GPU memory
  std::uint16_t staging_numa = 0;  // NUMA node of the staging buffers (data_path's staging_numa)
};

// Errors: config (check_bounce_config; buffer_bytes over the pool's buffer
// size), again when the pool cannot lend reader_threads x depth buffers,
// and whatever the source or the copies fail with.
Result<BounceStats> bounce_file_to_gpu(const BounceRead& read, const BounceConfig& config, PinnedPool& pool);

}  // namespace sluice::hw::cuda
