// See gpu_pattern_kernels.hpp. The word function must stay identical to
// pattern_word() in core/common/pattern.cpp (tests compare host and GPU bytes).
#include <cuda_runtime.h>

#include <cstdint>

#include "hw_backends/cuda/gpu_pattern_kernels.hpp"

namespace sluice::hw::cuda {
namespace {

__device__ __forceinline__ std::uint64_t pattern_word(std::uint64_t seed, std::uint64_t word_index) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ULL + word_index * 0xD1B54A32D192ED03ULL + 0x632BE59BD9B4E019ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

__device__ __forceinline__ unsigned char pattern_byte(std::uint64_t seed, std::uint64_t position) {
  return static_cast<unsigned char>((pattern_word(seed, position / 8) >> (8 * (position % 8))) & 0xFF);
}

// Each thread owns 8 consecutive output bytes per step: one word computed
// (two when the stream position is not word-aligned), eight stores.
__global__ void fill_kernel(unsigned char* dst, std::uint64_t bytes, std::uint64_t seed, std::uint64_t stream_offset) {
  const std::uint64_t step = std::uint64_t{gridDim.x} * blockDim.x * 8;
  for (std::uint64_t i = (std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x) * 8; i < bytes; i += step) {
    const std::uint64_t end = i + 8 < bytes ? i + 8 : bytes;
    for (std::uint64_t j = i; j < end; ++j) dst[j] = pattern_byte(seed, stream_offset + j);
  }
}

__global__ void mismatch_kernel(const unsigned char* src, std::uint64_t bytes, std::uint64_t seed,
                                std::uint64_t stream_offset, unsigned long long* first_mismatch) {
  const std::uint64_t step = std::uint64_t{gridDim.x} * blockDim.x * 8;
  for (std::uint64_t i = (std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x) * 8; i < bytes; i += step) {
    const std::uint64_t end = i + 8 < bytes ? i + 8 : bytes;
    for (std::uint64_t j = i; j < end; ++j) {
      if (src[j] != pattern_byte(seed, stream_offset + j)) {
        atomicMin(first_mismatch, static_cast<unsigned long long>(j));
        break;
      }
    }
  }
}

unsigned blocks_for(std::uint64_t bytes) {
  const std::uint64_t per_block = std::uint64_t{k_pattern_threads_per_block} * 8;
  const std::uint64_t blocks = (bytes + per_block - 1) / per_block;
  return static_cast<unsigned>(blocks < k_pattern_max_blocks ? (blocks == 0 ? 1 : blocks) : k_pattern_max_blocks);
}

}  // namespace

int launch_fill_pattern(void* dst, std::uint64_t bytes, std::uint64_t seed, std::uint64_t stream_offset, void* stream) {
  if (bytes == 0) return 0;
  (void)cudaGetLastError();  // a failed call before (already reported by its own code) must not read as ours
  fill_kernel<<<blocks_for(bytes), k_pattern_threads_per_block, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<unsigned char*>(dst), bytes, seed, stream_offset);
  return static_cast<int>(cudaGetLastError());
}

int launch_find_pattern_mismatch(const void* src, std::uint64_t bytes, std::uint64_t seed, std::uint64_t stream_offset,
                                 unsigned long long* first_mismatch, void* stream) {
  if (bytes == 0) return 0;
  (void)cudaGetLastError();
  mismatch_kernel<<<blocks_for(bytes), k_pattern_threads_per_block, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const unsigned char*>(src), bytes, seed, stream_offset, first_mismatch);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace sluice::hw::cuda
