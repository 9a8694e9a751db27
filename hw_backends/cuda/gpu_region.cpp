#include "hw_backends/cuda/gpu_region.hpp"

#include <string>
#include <utility>

#include "hw_backends/cuda/cuda_device.hpp"

#ifdef SLUICE_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace sluice::hw::cuda {

GpuRegion::~GpuRegion() { release(); }

GpuRegion::GpuRegion(GpuRegion&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)), device_(other.device_) {}

GpuRegion& GpuRegion::operator=(GpuRegion&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    device_ = other.device_;
  }
  return *this;
}

Result<GpuRegion> GpuRegion::allocate(int device, std::uint64_t bytes) {
  const std::string where = "GPU alloc of " + std::to_string(bytes) + " bytes on device " + std::to_string(device);
  if (bytes == 0 || bytes > k_max_gpu_region_bytes) {
    return error(StatusCode::invalid_argument,
                 where + ": size must be 1.." + std::to_string(k_max_gpu_region_bytes) + " (k_max_gpu_region_bytes)");
  }
  if (Status s = check_device(device); !s.ok()) return Status(s.code(), where + ": " + s.message());
#ifdef SLUICE_HAVE_CUDA
  if (Status s = cuda_status(cudaSetDevice(device), "cudaSetDevice"); !s.ok()) return s;
  void* p = nullptr;
  if (Status s = cuda_status(cudaMalloc(&p, bytes), "cudaMalloc(" + std::to_string(bytes) + " bytes)"); !s.ok()) {
    return Status(s.code(), where + ": " + s.message());
  }
  GpuRegion r;
  r.data_ = static_cast<std::byte*>(p);
  r.bytes_ = bytes;
  r.device_ = device;
  if (Status s = cuda_status(cudaMemset(p, 0, bytes), "cudaMemset"); !s.ok()) return s;
  return r;
#else
  return error(StatusCode::internal, where + ": check_device passed without CUDA");
#endif
}

std::byte* GpuRegion::release_ownership() {
  bytes_ = 0;
  return std::exchange(data_, nullptr);
}

void GpuRegion::free_raw(int device, std::byte* data) {
#ifdef SLUICE_HAVE_CUDA
  if (data != nullptr) {
    (void)cudaSetDevice(device);
    (void)cudaFree(data);
  }
#else
  (void)device;
  (void)data;
#endif
}

void GpuRegion::release() {
#ifdef SLUICE_HAVE_CUDA
  if (data_ != nullptr) {
    // cudaFree synchronizes the device; an error here (a dead context) leaves nothing to free.
    (void)cudaSetDevice(device_);
    (void)cudaFree(data_);
  }
#endif
  data_ = nullptr;
  bytes_ = 0;
}

}  // namespace sluice::hw::cuda
