// BufferPool: the I/O buffers of one workload rank, one per operation it
// keeps in flight (elbencho allocates one block buffer per I/O thread).
//
// All buffers are allocated up front in one kind of memory (host, pinned, or
// GPU memory of one device, so the client's planner sees the real
// destination); take() hands out a free one, give() returns it. A rank never
// has more ops in flight than buffers, so take() failing is a bug in the
// caller, reported as `internal`. Buffers are freed by release() or the
// destructor; the caller makes sure no operation still names them.
#pragma once

#include <cstdint>
#include <vector>

#include "core/common/mem_handle.hpp"
#include "core/common/status.hpp"
#include "core/env.hpp"

namespace sluice {

class BufferPool {
 public:
  explicit BufferPool(Env& env) : env_(env) {}
  ~BufferPool() { release(); }
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // Allocates `count` buffers of buffer_bytes (replacing any held before).
  // Errors: count or buffer_bytes 0 (invalid_argument), the Env's alloc error.
  Status allocate(MemKind kind, std::uint16_t device, std::uint32_t count, std::uint64_t buffer_bytes);
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
