#include "hw_backends/cuda/cuda_gpu_memory.hpp"

#include "hw_backends/cuda/cuda_device.hpp"
#include "hw_backends/cuda/gpu_bytes.hpp"
#include "hw_backends/gpu_memory_ops.hpp"
#include "hw_backends/cuda/gpu_region.hpp"

namespace sluice::hw::cuda {
namespace {

GpuMemoryOps make_ops() {
  GpuMemoryOps ops;
  ops.name = "cuda";
  ops.alloc = [](std::uint16_t device, std::uint64_t bytes) -> Result<std::byte*> {
    Result<GpuRegion> r = GpuRegion::allocate(device, bytes);
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
  return ops;
}

}  // namespace

const GpuMemoryOps* gpu_memory_ops() {
  static const GpuMemoryOps k_ops = make_ops();
  return &k_ops;
}

}  // namespace sluice::hw::cuda
