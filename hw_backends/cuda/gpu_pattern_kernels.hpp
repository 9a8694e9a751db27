// Kernels that produce and check core's data pattern (core/common/pattern.hpp)
// in GPU memory, so that bytes are verified where they landed, on the GPU:
// byte p of a stream is byte (p % 8) of the little-endian word
// splitmix64-mix(seed, p / 8), the same function as the host's fill_pattern.
//
// Built by nvcc (gpu_pattern_kernels.cu) only with CUDA. The signatures use
// plain types so that callers need no CUDA header: `stream` is a
// cudaStream_t, the result a cudaError_t (0 = success). Both launch
// asynchronously on `stream`.
#pragma once

#include <cstdint>

namespace sluice::hw::cuda {

// Threads per block and the grid cap of both kernels (grid-stride loops).
inline constexpr unsigned k_pattern_threads_per_block = 256;
inline constexpr unsigned k_pattern_max_blocks = 4096;

// dst[i] = pattern byte (stream_offset + i), i < bytes.
int launch_fill_pattern(void* dst, std::uint64_t bytes, std::uint64_t seed, std::uint64_t stream_offset, void* stream);

// *first_mismatch = min(*first_mismatch, first i with src[i] != pattern byte
// (stream_offset + i)). first_mismatch is device memory the caller set to
// UINT64_MAX before.
int launch_find_pattern_mismatch(const void* src, std::uint64_t bytes, std::uint64_t seed, std::uint64_t stream_offset,
                                 unsigned long long* first_mismatch, void* stream);

}  // namespace sluice::hw::cuda
