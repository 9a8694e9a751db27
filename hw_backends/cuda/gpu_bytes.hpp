// Operations on the bytes of GPU memory, done on the GPU where they can be:
// the data pattern is written and checked by kernels (gpu_pattern_kernels),
// so verified bytes are the bytes in GPU memory; CRC32C is computed on the
// host (ISA-L, core/proto/crc32c.hpp) over copies made through one pinned
// staging buffer of k_gpu_checksum_staging_bytes. Each call is synchronous
// (it waits for its own stream) and names the CUDA call that failed.
// `device` is the GPU that owns the pointer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "core/common/status.hpp"

namespace sluice::hw::cuda {

// Pinned staging used by gpu_crc32c, per call.
inline constexpr std::uint64_t k_gpu_checksum_staging_bytes = 8ULL << 20;

Status gpu_fill_pattern(int device, std::byte* dst, std::uint64_t bytes, std::uint64_t seed,
                        std::uint64_t stream_offset);

// The index (from src) of the first byte that differs from the pattern, nullopt if none.
Result<std::optional<std::uint64_t>> gpu_find_pattern_mismatch(int device, const std::byte* src, std::uint64_t bytes,
                                                               std::uint64_t seed, std::uint64_t stream_offset);

Result<std::uint32_t> gpu_crc32c(int device, const std::byte* src, std::uint64_t bytes);

// Synchronous copies between host memory (pageable or pinned) and the GPU.
Status gpu_copy_from_host(int device, std::byte* dst, std::span<const std::byte> src);
Status gpu_copy_to_host(int device, std::span<std::byte> dst, const std::byte* src);
// Device-to-device (the same or another GPU; peer copies go through the driver).
Status gpu_copy_on_device(int device, std::byte* dst, const std::byte* src, std::uint64_t bytes);

}  // namespace sluice::hw::cuda
