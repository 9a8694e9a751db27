// Installs hw_backends/cuda's GPU memory operations into the hardware world
// (gpu_memory_ops.hpp): after this, HwEnv::alloc(MemKind::gpu, device, n) is
// cudaMalloc on that device, transfers between GPU and host regions of a node
// are cudaMemcpy, and fill/verify/checksum of GPU ranges run on the GPU
// (gpu_bytes.hpp), and a GPU region can be exported as a dma-buf fd for an RDMA
// transport (gpu_dmabuf.hpp). Call once at start-up, before worlds allocate (idempotent).
// Returns cuda_available(): ops are installed either way, and then answer
// unavailable with the reason when there is no device.
#pragma once

#include "core/common/status.hpp"

namespace sluice::hw::cuda {

Status install_gpu_memory_ops();

}  // namespace sluice::hw::cuda
