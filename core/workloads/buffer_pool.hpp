// BufferPool: the I/O buffers of one workload rank, one per operation it
// keeps in flight (elbencho allocates one block buffer per I/O thread).
//
// All buffers are allocated up front in one kind of memory (host, pinned, or
// GPU memory, so the client's planner sees the real destination): GPU memory
// of one device, host and pinned memory spread over the NUMA nodes where the
// rank's threads run (buffer i on the i-th of them, in turn: an unpinned
// benchmark's threads spread over the sockets, and each touches its buffer
// first, so it lands on the thread's node); take() hands out a free one,
// give() returns it. A rank never
// has more ops in flight than buffers, so take() failing is a bug in the
// caller, reported as `internal`. Buffers are freed by release() or the
// destructor; the caller makes sure no operation still names them.
#pragma once

#include <cstdint>
#include <vector>

#include "core/common/mem_handle.hpp"
#include "core/common/status.hpp"
#include "core/env.hpp"
#include "core/workloads/workload.hpp"

namespace sluice {

class BufferPool {
 public:
  explicit BufferPool(Env& env) : env_(env) {}
  ~BufferPool() { release(); }
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // Allocates `count` buffers of buffer_bytes (replacing any held before),
  // buffer i on devices[i % devices.size()] (GPU index for gpu memory, NUMA
  // node for host and pinned).
  // Errors: count, buffer_bytes or devices empty (invalid_argument), the Env's alloc error.
  Status allocate(MemKind kind, const std::vector<std::uint16_t>& devices, std::uint32_t count,
                  std::uint64_t buffer_bytes);
  // The same for a workload rank: its GPU (WorkloadContext::gpu) for gpu
  // memory, its NUMA nodes (WorkloadContext::host_numa) for host and pinned.
  Status allocate(const WorkloadContext& context, MemKind kind, std::uint32_t count, std::uint64_t buffer_bytes);
  Result<MemHandle> take();
  void give(const MemHandle& buffer);
  void release();

  std::size_t free_buffers() const { return free_.size(); }
  std::size_t buffers() const { return all_.size(); }

 private:
  Env& env_;
  std::vector<MemHandle> all_;
  std::vector<MemHandle> free_;
};

}  // namespace sluice
