// hw_backends/cuda's GPU memory operations (hw_backends/gpu_memory_ops.hpp),
// for a hardware world (HwWorldConfig::gpu_memory): with them,
// HwEnv::alloc(MemKind::gpu, device, n) is cudaMalloc on that device,
// transfers between GPU and host regions of a node are cudaMemcpy, fill,
// verify and checksum of GPU ranges run on the GPU (gpu_bytes.hpp). Where there is no device (or no CUDA build) every
// operation answers unavailable with the reason (cuda_available() says it
// up front). The operations live as long as the process.
#pragma once

#include "hw_backends/gpu_memory_ops.hpp"

namespace sluice::hw::cuda {

const GpuMemoryOps* gpu_memory_ops();

}  // namespace sluice::hw::cuda
