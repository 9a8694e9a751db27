#include "hw_backends/cuda/cuda_device.hpp"

#include "core/common/byte_size.hpp"

#ifdef SLUICE_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace sluice::hw::cuda {

#ifdef SLUICE_HAVE_CUDA

bool cuda_built() { return true; }
std::string_view cuda_build_note() { return "built with CUDA " SLUICE_CUDA_VERSION_TEXT; }

Status cuda_status(int cuda_error, std::string_view call) {
  if (cuda_error == 0) return ok_status();
  const auto e = static_cast<cudaError_t>(cuda_error);
  // Reported here, so it must not come back from a later cudaGetLastError (sticky errors stay regardless).
  (void)cudaGetLastError();
  const StatusCode code = (e == cudaErrorMemoryAllocation) ? StatusCode::no_space
                          : (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || e == cudaErrorInvalidDevice)
                              ? StatusCode::unavailable
                              : StatusCode::io_error;
  return error(code, std::string(call) + ": " + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")");
}

Result<int> cuda_device_count() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return error(StatusCode::unavailable,
                 std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")");
  }
  if (count <= 0) return error(StatusCode::unavailable, "no CUDA device (cudaGetDeviceCount returned 0)");
  return count;
}

Result<std::string> describe_device(int device) {
  if (Status s = check_device(device); !s.ok()) return s;
  cudaDeviceProp p{};
  if (Status s = cuda_status(cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties"); !s.ok()) return s;
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) != cudaSuccess) bus[0] = '\0';
  return std::string(p.name) + ", sm_" + std::to_string(p.major) + std::to_string(p.minor) + ", " +
         std::to_string(p.multiProcessorCount) + " SMs, " +
         format_size((p.totalGlobalMem >> 30) << 30, SizeSpelling::spaced) + ", PCI " + bus;
}

#else  // !SLUICE_HAVE_CUDA

bool cuda_built() { return false; }
std::string_view cuda_build_note() { return "built without CUDA (no nvcc at configure time, or SLUICE_WITH_CUDA=OFF)"; }

Status cuda_status(int cuda_error, std::string_view call) {
  if (cuda_error == 0) return ok_status();
  return error(StatusCode::unavailable, std::string(call) + ": " + std::string(cuda_build_note()));
}

Result<int> cuda_device_count() { return error(StatusCode::unavailable, std::string(cuda_build_note())); }

Result<std::string> describe_device(int device) {
  if (Status s = check_device(device); !s.ok()) return s;
  return std::string();  // unreachable: check_device fails without CUDA
}

#endif

Status cuda_available() {
  Result<int> n = cuda_device_count();
  return n.ok() ? ok_status() : n.status();
}

Status check_device(int device) {
  Result<int> n = cuda_device_count();
  if (!n.ok()) return n.status();
  if (device < 0 || device >= *n) {
    return error(StatusCode::invalid_argument,
                 "CUDA device " + std::to_string(device) + " does not exist (" + std::to_string(*n) + " devices)");
  }
  return ok_status();
}

}  // namespace sluice::hw::cuda
