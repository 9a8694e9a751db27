// Whether CUDA can be used here, and the one wording of CUDA errors.
//
// CUDA is optional at build time (SLUICE_HAVE_CUDA: nvcc and the runtime found
// by the top CMakeLists probe) and at run time (a driver and a device). Every
// entry point of hw_backends/cuda and hw_backends/gds first asks
// cuda_available(), which answers ok or `unavailable: <why>`:
//   "built without CUDA (...)", "cudaGetDeviceCount failed: <error>",
//   "no CUDA device (cudaGetDeviceCount returned 0)".
// A failed CUDA call becomes a Status naming the call and the error, e.g.
//   io_error "cudaMemcpyAsync(H2D 16777216 bytes): invalid argument (cudaErrorInvalidValue)".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/common/status.hpp"

namespace sluice::hw::cuda {

// Was this build compiled with CUDA? (The reason when not.)
bool cuda_built();
std::string_view cuda_build_note();

// ok, or unavailable with the reason (build, driver or no device).
Status cuda_available();

// The number of CUDA devices, or unavailable with the reason.
Result<int> cuda_device_count();

// unavailable (as cuda_available()) or invalid_argument when `device` is not
// one of the devices; ok else.
Status check_device(int device);

// One line about the device: "NVIDIA H200, sm_90, 132 SMs, 143 GiB, PCI 0000:xx:00.0".
Result<std::string> describe_device(int device);

// Turns a CUDA runtime error code into a Status naming `call` (ok for 0). The
// code is an int so that callers need no CUDA header; it is cudaError_t.
Status cuda_status(int cuda_error, std::string_view call);

}  // namespace sluice::hw::cuda
