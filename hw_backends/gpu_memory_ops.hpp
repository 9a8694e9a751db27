// GpuMemoryOps: how HwNode and HwEnv reach GPU memory without linking CUDA.
//
// sluice_hw (hw/: HwWorld, HwNode, HwEnv) builds everywhere; GPU memory needs
// hw_backends/cuda, which links the CUDA runtime. So the hardware world is
// handed the operations in its config (HwWorldConfig::gpu_memory):
// hw_backends/cuda's cuda::gpu_memory_ops() (cuda_gpu_memory.hpp), or a fake
// in tests. None: the world answers alloc(MemKind::gpu) with unavailable.
// Header-only on purpose: sluice_hw includes it without depending on sluice_hw_cuda.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "core/common/status.hpp"

namespace sluice::hw {

struct GpuMemoryOps {
  std::string name;  // "cuda"
  // cudaMalloc on GPU `device`, zeroed.
  std::function<Result<std::byte*>(std::uint16_t device, std::uint64_t bytes)> alloc;
  std::function<void(std::uint16_t device, std::byte* data)> free;
  // bytes from src to dst; either or both may be GPU memory of `device` (cudaMemcpyDefault).
  std::function<Status(std::uint16_t device, std::byte* dst, const std::byte* src, std::uint64_t bytes)> copy;
  // The data pattern (core/common/pattern.hpp), written and checked on the GPU.
  std::function<Status(std::uint16_t device, std::byte* dst, std::uint64_t bytes, std::uint64_t seed,
                       std::uint64_t stream_offset)>
      fill;
  std::function<Result<std::optional<std::uint64_t>>(std::uint16_t device, const std::byte* src, std::uint64_t bytes,
                                                     std::uint64_t seed, std::uint64_t stream_offset)>
      find_mismatch;
  std::function<Result<std::uint32_t>(std::uint16_t device, const std::byte* src, std::uint64_t bytes)> crc32c;
};

}  // namespace sluice::hw
