// GPU memory exported as a dma-buf fd, so that an RDMA NIC can register it
// with ibv_reg_dmabuf_mr (GPUDirect RDMA through the kernel's dma-buf
// framework instead of the nvidia-peermem module).
//
// How (CUDA driver API, reached through the runtime's
// cudaGetDriverEntryPointByVersion so that nothing links libcuda and the
// binaries still start on machines without a driver):
//   1. CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED must be 1 on the device;
//   2. cuMemGetAddressRange gives the cudaMalloc allocation holding the
//      range: the export covers the whole allocation, widened to host pages
//      (cuMemGetHandleForAddressRange wants address and size aligned to the
//      host page size; CUDA driver API, "Memory Management"), as UCX's
//      cuda_copy md and NCCL do;
//   3. cuMemGetHandleForAddressRange(&fd, base, size,
//      CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0).
// The range's offset inside the dma-buf is what ibv_reg_dmabuf_mr takes as
// its `offset`.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/common/status.hpp"
#include "hw_backends/gpu_memory_ops.hpp"

namespace sluice::hw::cuda {

// Exports the cudaMalloc'd range [data, +bytes) of GPU `device`. The fd is
// the caller's (close() it once no importer uses it). Errors: unavailable
// (no CUDA, no such device, the device or driver has no dma-buf support,
// the driver refuses the export: the message names the attribute or the
// call and its error), invalid_argument (0 bytes, a range that is not GPU
// memory of `device`, or an allocation whose base is not page-aligned).
// Thread-safe (sets `device` current on the calling thread).
Result<GpuDmabuf> export_gpu_dmabuf(int device, const std::byte* data, std::uint64_t bytes);

}  // namespace sluice::hw::cuda
