// GpuRegion: one block of GPU device memory (cudaMalloc on a chosen device),
// freed when the object goes. Plain device allocations, never managed memory
// (managed memory over-subscription can hang a shared GPU).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/common/status.hpp"

namespace sluice::hw::cuda {

// The largest single GPU allocation sluice asks for (an H200 has 141 GiB).
inline constexpr std::uint64_t k_max_gpu_region_bytes = 256ULL << 30;

class GpuRegion {
 public:
  GpuRegion() = default;
  ~GpuRegion();
  GpuRegion(GpuRegion&& other) noexcept;
  GpuRegion& operator=(GpuRegion&& other) noexcept;
  GpuRegion(const GpuRegion&) = delete;
  GpuRegion& operator=(const GpuRegion&) = delete;

  // cudaMalloc of `bytes` on `device`, zeroed (cudaMemset). Errors:
  // unavailable (no CUDA, no such device), invalid_argument (0 bytes or over
  // k_max_gpu_region_bytes), no_space (cudaMalloc out of memory).
  static Result<GpuRegion> allocate(int device, std::uint64_t bytes);

  std::byte* data() const { return data_; }
  std::uint64_t bytes() const { return bytes_; }
  int device() const { return device_; }
  explicit operator bool() const { return data_ != nullptr; }

  // Hands the memory to the caller (who frees it with free_raw), as
  // unique_ptr::release; the region is empty afterwards.
  std::byte* release_ownership();
  // cudaFree of memory from release_ownership(); errors are dropped (a dead context frees all).
  static void free_raw(int device, std::byte* data);

 private:
  void release();
  std::byte* data_ = nullptr;
  std::uint64_t bytes_ = 0;
  int device_ = 0;
};

}  // namespace sluice::hw::cuda
