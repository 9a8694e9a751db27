#include "hw_backends/cuda/pinned_pool.hpp"

#include <linux/mempolicy.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "hw_backends/cuda/cuda_device.hpp"

#ifdef SLUICE_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace sluice::hw::cuda {

Result<std::unique_ptr<PinnedPool>> PinnedPool::create(PinnedPoolLimits limits, PinnedAllocator allocator) {
  const std::string where = "pinned pool";
  if (limits.buffer_bytes == 0 || limits.buffer_bytes % k_staging_alignment_bytes != 0 ||
      limits.buffer_bytes > k_max_staging_buffer_bytes) {
    return error(StatusCode::invalid_argument, where + ": buffer_bytes " + std::to_string(limits.buffer_bytes) +
                                                   " must be a multiple of " +
                                                   std::to_string(k_staging_alignment_bytes) + " in 1.." +
                                                   std::to_string(k_max_staging_buffer_bytes));
  }
  if (limits.max_buffers_per_numa == 0 || limits.max_buffers_per_numa > k_max_staging_buffers_per_numa) {
    return error(StatusCode::invalid_argument, where + ": max_buffers_per_numa " +
                                                   std::to_string(limits.max_buffers_per_numa) + " must be in 1.." +
                                                   std::to_string(k_max_staging_buffers_per_numa));
  }
  if (limits.max_bytes_per_numa < limits.buffer_bytes) {
    return error(StatusCode::invalid_argument, where + ": max_bytes_per_numa " +
                                                   std::to_string(limits.max_bytes_per_numa) + " holds no buffer of " +
                                                   std::to_string(limits.buffer_bytes));
  }
  if (!allocator.allocate || !allocator.release) {
    return error(StatusCode::invalid_argument, where + ": allocator '" + allocator.name + "' lacks a function");
  }
  return std::unique_ptr<PinnedPool>(new PinnedPool(limits, std::move(allocator)));
}

PinnedPool::~PinnedPool() {
  for (auto& [numa, node] : nodes_) {
    for (std::byte* b : node.all) allocator_.release(b, limits_.buffer_bytes);
  }
}

Result<std::span<std::byte>> PinnedPool::acquire(std::uint16_t numa) {
  if (numa >= k_max_numa_nodes) {
    return error(StatusCode::invalid_argument, "pinned pool: NUMA node " + std::to_string(numa) + " is over " +
                                                   std::to_string(k_max_numa_nodes - 1) + " (k_max_numa_nodes)");
  }
  {
    std::lock_guard lock(mu_);
    Node& node = nodes_[numa];
    if (!node.free.empty()) {
      std::byte* b = node.free.back();
      node.free.pop_back();
      return std::span<std::byte>(b, limits_.buffer_bytes);
    }
    const std::uint64_t next_bytes = (node.all.size() + 1) * limits_.buffer_bytes;
    if (node.all.size() >= limits_.max_buffers_per_numa || next_bytes > limits_.max_bytes_per_numa) {
      return error(StatusCode::again, "pinned pool: all " + std::to_string(node.all.size()) + " buffers of NUMA node " +
                                          std::to_string(numa) + " are lent (limits " +
                                          std::to_string(limits_.max_buffers_per_numa) + " buffers, " +
                                          std::to_string(limits_.max_bytes_per_numa) + " bytes)");
    }
    node.all.push_back(nullptr);  // reserve the place while allocating outside the lock
  }
  Result<std::byte*> made = allocator_.allocate(numa, limits_.buffer_bytes);
  std::lock_guard lock(mu_);
  Node& node = nodes_[numa];
  auto hole = std::find(node.all.begin(), node.all.end(), nullptr);
  if (!made.ok()) {
    node.all.erase(hole);
    return Status(made.status().code(), "pinned pool (" + allocator_.name + "), NUMA node " + std::to_string(numa) +
                                            ": " + made.status().message());
  }
  *hole = *made;
  return std::span<std::byte>(*made, limits_.buffer_bytes);
}

Status PinnedPool::release(std::uint16_t numa, std::span<std::byte> buffer) {
  std::lock_guard lock(mu_);
  auto it = nodes_.find(numa);
  const bool ours = it != nodes_.end() && buffer.size() == limits_.buffer_bytes &&
                    std::find(it->second.all.begin(), it->second.all.end(), buffer.data()) != it->second.all.end();
  if (!ours) {
    return error(StatusCode::invalid_argument,
                 "pinned pool: release of a buffer that is not one of NUMA node " + std::to_string(numa));
  }
  if (std::find(it->second.free.begin(), it->second.free.end(), buffer.data()) != it->second.free.end()) {
    return error(StatusCode::invalid_argument,
                 "pinned pool: buffer of NUMA node " + std::to_string(numa) + " released twice");
  }
  it->second.free.push_back(buffer.data());
  return ok_status();
}

Status PinnedPool::reserve(std::uint16_t numa, std::uint32_t count) {
  std::vector<std::span<std::byte>> taken;
  Status st;
  while (stats(numa).buffers < count) {
    Result<std::span<std::byte>> b = acquire(numa);
    if (!b.ok()) {
      st = b.status();
      break;
    }
    taken.push_back(*b);
  }
  for (const auto& b : taken) release(numa, b).ignore();  // lent just above
  return st;
}

PinnedPoolStats PinnedPool::stats(std::uint16_t numa) const {
  std::lock_guard lock(mu_);
  PinnedPoolStats s;
  auto it = nodes_.find(numa);
  if (it == nodes_.end()) return s;
  s.buffers = static_cast<std::uint32_t>(it->second.all.size());
  s.lent = s.buffers - static_cast<std::uint32_t>(it->second.free.size());
  s.bytes = std::uint64_t{s.buffers} * limits_.buffer_bytes;
  return s;
}

// ---- allocators ------------------------------------------------------------------

PinnedAllocator host_test_allocator() {
  PinnedAllocator a;
  a.name = "host (not pinned)";
  a.allocate = [](std::uint16_t /*numa*/, std::uint64_t bytes) -> Result<std::byte*> {
    void* p = std::aligned_alloc(k_staging_alignment_bytes, bytes);
    if (p == nullptr) return error(StatusCode::no_space, "aligned_alloc of " + std::to_string(bytes) + " bytes failed");
    return static_cast<std::byte*>(p);
  };
  a.release = [](std::byte* data, std::uint64_t /*bytes*/) { std::free(data); };
  return a;
}

PinnedAllocator cuda_pinned_allocator() {
  PinnedAllocator a;
  a.name = "cuda pinned (mbind + cudaHostRegister)";
  a.allocate = [](std::uint16_t numa, std::uint64_t bytes) -> Result<std::byte*> {
    if (Status s = cuda_available(); !s.ok()) return s;
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      return error(StatusCode::no_space, "mmap of " + std::to_string(bytes) + " bytes: " + std::strerror(errno));
    }
    // Bind before the first touch, so that pages are made on the node.
    unsigned long mask = 1UL << numa;  // NOLINT(google-runtime-int): mbind's type
    if (::syscall(SYS_mbind, p, bytes, MPOL_BIND, &mask, sizeof mask * 8, 0) != 0 && errno != ENOSYS) {
      const int err = errno;
      ::munmap(p, bytes);
      return error(err == EINVAL ? StatusCode::invalid_argument : StatusCode::io_error,
                   "mbind to NUMA node " + std::to_string(numa) + ": " + std::strerror(err));
    }
    ::madvise(p, bytes, MADV_HUGEPAGE);  // advice only: no THP is fine
    std::memset(p, 0, bytes);
#ifdef SLUICE_HAVE_CUDA
    if (Status s = cuda_status(cudaHostRegister(p, bytes, cudaHostRegisterDefault),
                               "cudaHostRegister(" + std::to_string(bytes) + " bytes)");
        !s.ok()) {
      ::munmap(p, bytes);
      return s;
    }
#endif
    return static_cast<std::byte*>(p);
  };
  a.release = [](std::byte* data, std::uint64_t bytes) {
#ifdef SLUICE_HAVE_CUDA
    (void)cudaHostUnregister(data);
#endif
    ::munmap(data, bytes);
  };
  return a;
}

}  // namespace sluice::hw::cuda
