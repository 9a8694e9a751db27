#include "hw_backends/cuda/cuda_gpu_memory.hpp"

#include <unistd.h>

#include "hw_backends/cuda/cuda_device.hpp"
#include "hw_backends/cuda/gpu_bytes.hpp"
#include "hw_backends/cuda/gpu_dmabuf.hpp"
#include "hw_backends/gpu_memory_ops.hpp"
#include "hw_backends/cuda/gpu_region.hpp"

namespace sluice::hw::cuda {
namespace {

GpuMemoryOps make_ops() {
  GpuMemoryOps ops;
  ops.name = "cuda";
  ops.alloc = [](std::uint16_t device, std::uint64_t bytes) -> Result<std::byte*> {
    // Whole host pages, so that the allocation can be exported as a dma-buf
    // (export_gpu_dmabuf exports the page-aligned allocation).
    const long page = ::sysconf(_SC_PAGESIZE);
    const std::uint64_t page_bytes = page > 0 ? static_cast<std::uint64_t>(page) : 4096;
    const std::uint64_t rounded =
        bytes > k_max_gpu_region_bytes ? bytes : (bytes + page_bytes - 1) / page_bytes * page_bytes;
    Result<GpuRegion> r = GpuRegion::allocate(device, rounded);
    if (!r.ok()) return r.status();
    return r->release_ownership();  // the world owns it from here on; ops.free releases it
  };
  ops.free = [](std::uint16_t device, std::byte* data) { GpuRegion::free_raw(device, data); };
  ops.copy = [](std::uint16_t device, std::byte* dst, const std::byte* src, std::uint64_t bytes) {
    return gpu_copy_on_device(device, dst, src, bytes);
  };
  ops.fill = [](std::uint16_t device, std::byte* dst, std::uint64_t bytes, std::uint64_t seed, std::uint64_t offset) {
    return gpu_fill_pattern(device, dst, bytes, seed, offset);
  };
  ops.find_mismatch = [](std::uint16_t device, const std::byte* src, std::uint64_t bytes, std::uint64_t seed,
                         std::uint64_t offset) { return gpu_find_pattern_mismatch(device, src, bytes, seed, offset); };
  ops.crc32c = [](std::uint16_t device, const std::byte* src, std::uint64_t bytes) {
    return gpu_crc32c(device, src, bytes);
  };
  ops.export_dmabuf = [](std::uint16_t device, std::byte* data, std::uint64_t bytes) {
    return export_gpu_dmabuf(device, data, bytes);
  };
  return ops;
}

}  // namespace

const GpuMemoryOps* gpu_memory_ops() {
  static const GpuMemoryOps k_ops = make_ops();
  return &k_ops;
}

}  // namespace sluice::hw::cuda
