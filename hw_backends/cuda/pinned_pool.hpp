// PinnedPool: page-locked host staging buffers, per NUMA node, bounded.
//
// The bounce path (core/sched/data_path.hpp) stages bytes in pinned memory on
// the GPU's NUMA node before a PCIe copy; pinned because cudaMemcpyAsync from
// pageable memory is synchronous and goes through the driver's own staging
// (CUDA C++ Programming Guide, "Page-Locked Host Memory"), and on the GPU's
// node because a copy from a remote node crosses the inter-socket link.
//
// Buffers are made on first need and kept for reuse (pinning costs a syscall
// per page range and is slow; cudaHostRegister takes milliseconds per GiB),
// all of one size, buffer_bytes, aligned to 4 KiB so that O_DIRECT reads land
// in them. The pool holds at most max_buffers_per_numa buffers and
// max_bytes_per_numa bytes per NUMA node: acquire() answers `again` when
// every buffer of the node is lent and no new one fits.
//
// How a buffer is made is a PinnedAllocator: cuda_pinned_allocator() maps
// anonymous memory, binds it to the node (mbind MPOL_BIND, as libnuma's
// numa_alloc_onnode), asks for transparent huge pages (fewer TLB misses for
// the copies into it) and pins it (cudaHostRegister); host_test_allocator()
// makes plain aligned memory (for tests of the pipeline without a GPU).
// Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "core/common/status.hpp"

namespace sluice::hw::cuda {

// One staging buffer: 4 MiB, the bounce pipeline's default piece
// (bounce_pipeline.hpp says why); 1 GiB caps one read (as storage requests).
inline constexpr std::uint64_t k_default_staging_buffer_bytes = 4ULL << 20;
inline constexpr std::uint64_t k_max_staging_buffer_bytes = 1ULL << 30;
inline constexpr std::uint64_t k_staging_alignment_bytes = 4096;
// Per NUMA node: 64 buffers (16 reader threads x depth 4) and 2 GiB pinned.
inline constexpr std::uint32_t k_default_max_staging_buffers_per_numa = 64;
inline constexpr std::uint32_t k_max_staging_buffers_per_numa = 4096;
inline constexpr std::uint64_t k_default_max_staging_bytes_per_numa = 2ULL << 30;
// NUMA nodes addressable by the mbind node mask sluice passes.
inline constexpr std::uint16_t k_max_numa_nodes = 64;

struct PinnedPoolLimits {
  std::uint64_t buffer_bytes = k_default_staging_buffer_bytes;  // multiple of k_staging_alignment_bytes
  std::uint32_t max_buffers_per_numa = k_default_max_staging_buffers_per_numa;
  std::uint64_t max_bytes_per_numa = k_default_max_staging_bytes_per_numa;
};

struct PinnedAllocator {
  std::string name;  // "cuda pinned (mbind + cudaHostRegister)", "host (not pinned)"
  std::function<Result<std::byte*>(std::uint16_t numa, std::uint64_t bytes)> allocate;
  std::function<void(std::byte* data, std::uint64_t bytes)> release;
};

// mmap + mbind(numa) + cudaHostRegister; unavailable without CUDA. A kernel
// without NUMA support (mbind: ENOSYS) pins without binding.
PinnedAllocator cuda_pinned_allocator();
// aligned_alloc, no pinning, no binding.
PinnedAllocator host_test_allocator();

struct PinnedPoolStats {
  std::uint32_t buffers = 0;  // made
  std::uint32_t lent = 0;     // acquired and not released
  std::uint64_t bytes = 0;    // made, in bytes
};

class PinnedPool {
 public:
  // invalid_argument: buffer_bytes 0, unaligned or over k_max_staging_buffer_bytes;
  // max_buffers_per_numa 0 or over k_max_staging_buffers_per_numa;
  // max_bytes_per_numa under one buffer.
  static Result<std::unique_ptr<PinnedPool>> create(PinnedPoolLimits limits, PinnedAllocator allocator);
  ~PinnedPool();
  PinnedPool(const PinnedPool&) = delete;
  PinnedPool& operator=(const PinnedPool&) = delete;

  // A buffer of limits().buffer_bytes on `numa`. again: the node's limit is
  // reached and every buffer is lent; invalid_argument: numa >= k_max_numa_nodes;
  // else what the allocator says.
  Result<std::span<std::byte>> acquire(std::uint16_t numa);
  // Makes buffers on `numa` until it holds `count` (pinning is slow: do it
  // before timing). Errors as acquire's; again when count is over the limits.
  Status reserve(std::uint16_t numa, std::uint32_t count);
  // invalid_argument: not a buffer of this pool on `numa`, or not lent.
  Status release(std::uint16_t numa, std::span<std::byte> buffer);

  const PinnedPoolLimits& limits() const { return limits_; }
  const std::string& allocator_name() const { return allocator_.name; }
  PinnedPoolStats stats(std::uint16_t numa) const;

 private:
  PinnedPool(PinnedPoolLimits limits, PinnedAllocator allocator) : limits_(limits), allocator_(std::move(allocator)) {}
  struct Node {
    std::vector<std::byte*> all;
    std::vector<std::byte*> free;
  };
  PinnedPoolLimits limits_;
  PinnedAllocator allocator_;
  mutable std::mutex mu_;
  std::map<std::uint16_t, Node> nodes_;
};

}  // namespace sluice::hw::cuda
