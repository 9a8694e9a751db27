// CudaChunkSink: the copy stage of the bounce pipeline on a GPU. One CUDA
// stream per lane (non-blocking, so lanes' copies run concurrently on the
// copy engines), one event per (lane, slot) recorded after each copy;
// wait_copy synchronizes on that event, sleeping (cudaEventBlockingSync):
// spinning waiters would take the cores the reader threads need. Copies go from pinned staging to
// `dst` + offset with cudaMemcpyAsync (host-to-device). Every CUDA call is
// checked and named in the Status.
#pragma once

#include <memory>
#include <vector>

#include "hw_backends/cuda/bounce_pipeline.hpp"

namespace sluice::hw::cuda {

class CudaChunkSink final : public ChunkSink {
 public:
  // unavailable without CUDA or device; invalid_argument for 0 lanes/depth.
  static Result<std::unique_ptr<CudaChunkSink>> create(int device, std::uint32_t lanes, std::uint32_t depth,
                                                       std::byte* dst, std::uint64_t dst_bytes);
  ~CudaChunkSink() override;
  CudaChunkSink(const CudaChunkSink&) = delete;
  CudaChunkSink& operator=(const CudaChunkSink&) = delete;

  Status begin_lane(std::uint32_t lane) override;
  // invalid_argument when the copy would pass dst_bytes.
  Status start_copy(std::uint32_t lane, std::uint32_t slot, std::span<const std::byte> from,
                    std::uint64_t dst_offset) override;
  Status wait_copy(std::uint32_t lane, std::uint32_t slot) override;

 private:
  CudaChunkSink() = default;
  int device_ = 0;
  std::uint32_t depth_ = 0;
  std::byte* dst_ = nullptr;
  std::uint64_t dst_bytes_ = 0;
  std::vector<void*> streams_;  // cudaStream_t per lane
  std::vector<void*> events_;   // cudaEvent_t per lane x depth
};

}  // namespace sluice::hw::cuda
