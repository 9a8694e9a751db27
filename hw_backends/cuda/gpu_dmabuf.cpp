#include "hw_backends/cuda/gpu_dmabuf.hpp"

#include <unistd.h>

#include <cstdio>
#include <string>
#include <string_view>

#include "hw_backends/cuda/cuda_device.hpp"

#ifdef SLUICE_HAVE_CUDA
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#endif

namespace sluice::hw::cuda {
namespace {

std::string range_text(const std::byte* data, std::uint64_t bytes) {
  char address[32];
  std::snprintf(address, sizeof address, "%p", static_cast<const void*>(data));
  return std::string("[") + address + ", +" + std::to_string(bytes) + ")";
}

#ifdef SLUICE_HAVE_CUDA

// The driver ABI the entry points are asked for: CUDA 12.0 has every call
// used here with these signatures (cuMemGetHandleForAddressRange is from 11.7).
constexpr unsigned int k_driver_abi_version = 12000;

// The driver calls, looked up once through the runtime (no link to libcuda).
struct DriverCalls {
  PFN_cuGetErrorName_v6000 get_error_name = nullptr;
  PFN_cuDeviceGet_v2000 device_get = nullptr;
  PFN_cuDeviceGetAttribute_v2000 device_get_attribute = nullptr;
  PFN_cuMemGetAddressRange_v3020 mem_get_address_range = nullptr;
  PFN_cuMemGetHandleForAddressRange_v11070 mem_get_handle_for_address_range = nullptr;
  Status missing;  // ok when every call was found
};

Status find_entry_point(const char* symbol, void** fn) {
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  const Status s =
      cuda_status(cudaGetDriverEntryPointByVersion(symbol, fn, k_driver_abi_version, cudaEnableDefault, &found),
                  std::string("cudaGetDriverEntryPointByVersion(") + symbol + ")");
  if (!s.ok()) return Status(StatusCode::unavailable, s.message());
  if (found != cudaDriverEntryPointSuccess || *fn == nullptr) {
    return error(StatusCode::unavailable,
                 std::string("the CUDA driver has no ") + symbol +
                     (found == cudaDriverEntryPointVersionNotSufficent ? " (driver older than CUDA 12.0)" : ""));
  }
  return ok_status();
}

const DriverCalls& driver_calls() {
  static const DriverCalls calls = [] {
    DriverCalls c;
    const std::pair<const char*, void**> wanted[] = {
        {"cuGetErrorName", reinterpret_cast<void**>(&c.get_error_name)},
        {"cuDeviceGet", reinterpret_cast<void**>(&c.device_get)},
        {"cuDeviceGetAttribute", reinterpret_cast<void**>(&c.device_get_attribute)},
        {"cuMemGetAddressRange", reinterpret_cast<void**>(&c.mem_get_address_range)},
        {"cuMemGetHandleForAddressRange", reinterpret_cast<void**>(&c.mem_get_handle_for_address_range)},
    };
    for (const auto& [symbol, fn] : wanted) {
      if (Status s = find_entry_point(symbol, fn); !s.ok()) {
        c.missing = s;
        break;
      }
    }
    return c;
  }();
  return calls;
}

// A driver error as a Status naming the call (CUDA_ERROR_NOT_SUPPORTED ...).
Status cu_status(const DriverCalls& d, CUresult result, std::string_view call, StatusCode code) {
  if (result == CUDA_SUCCESS) return ok_status();
  const char* name = nullptr;
  if (d.get_error_name(result, &name) != CUDA_SUCCESS || name == nullptr) name = "unknown CUDA driver error";
  return error(code, std::string(call) + ": " + name + " (" + std::to_string(static_cast<int>(result)) + ")");
}

#endif  // SLUICE_HAVE_CUDA

}  // namespace

Result<GpuDmabuf> export_gpu_dmabuf(int device, const std::byte* data, std::uint64_t bytes) {
  const std::string where = "dma-buf export of GPU " + std::to_string(device) + " range " + range_text(data, bytes);
  const auto failed = [&where](const Status& s) { return Status(s.code(), where + ": " + s.message()); };
  if (data == nullptr || bytes == 0) return error(StatusCode::invalid_argument, where + ": empty range");
  if (Status s = check_device(device); !s.ok()) return failed(s);
#ifdef SLUICE_HAVE_CUDA
  const DriverCalls& d = driver_calls();
  if (!d.missing.ok()) return failed(d.missing);
  if (Status s = cuda_status(cudaSetDevice(device), "cudaSetDevice"); !s.ok()) return failed(s);
  CUdevice dev = 0;
  if (Status s = cu_status(d, d.device_get(&dev, device), "cuDeviceGet", StatusCode::unavailable); !s.ok()) {
    return failed(s);
  }
  int supported = 0;
  if (Status s = cu_status(d, d.device_get_attribute(&supported, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, dev),
                           "cuDeviceGetAttribute(CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED)", StatusCode::unavailable);
      !s.ok()) {
    return failed(s);
  }
  if (supported == 0) {
    return error(
        StatusCode::unavailable,
        where + ": the device or its driver has no dma-buf support (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED is 0)");
  }
  const auto address = reinterpret_cast<CUdeviceptr>(data);
  CUdeviceptr base = 0;
  std::size_t allocation_bytes = 0;
  if (Status s = cu_status(d, d.mem_get_address_range(&base, &allocation_bytes, address),
                           "cuMemGetAddressRange (not device memory from cudaMalloc?)", StatusCode::invalid_argument);
      !s.ok()) {
    return failed(s);
  }
  if (address + bytes > base + allocation_bytes) {
    return error(
        StatusCode::invalid_argument,
        where + ": ends past its allocation " + range_text(reinterpret_cast<const std::byte*>(base), allocation_bytes));
  }
  const long page = ::sysconf(_SC_PAGESIZE);
  const std::uint64_t page_bytes = page > 0 ? static_cast<std::uint64_t>(page) : 4096;
  if (base % page_bytes != 0) {
    return error(StatusCode::invalid_argument,
                 where + ": its allocation " + range_text(reinterpret_cast<const std::byte*>(base), allocation_bytes) +
                     " does not start on a host page (" + std::to_string(page_bytes) +
                     " bytes), which cuMemGetHandleForAddressRange requires");
  }
  const std::uint64_t export_bytes = (allocation_bytes + page_bytes - 1) / page_bytes * page_bytes;
  int fd = -1;
  if (Status s = cu_status(
          d, d.mem_get_handle_for_address_range(&fd, base, export_bytes, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0),
          "cuMemGetHandleForAddressRange(" + range_text(reinterpret_cast<const std::byte*>(base), export_bytes) +
              ", DMA_BUF_FD)",
          StatusCode::unavailable);
      !s.ok()) {
    return failed(s);
  }
  if (fd < 0)
    return error(StatusCode::unavailable, where + ": cuMemGetHandleForAddressRange returned fd " + std::to_string(fd));
  return GpuDmabuf{fd, address - base, export_bytes};
#else
  return error(StatusCode::internal, where + ": check_device passed without CUDA");
#endif
}

}  // namespace sluice::hw::cuda
