#include "core/workloads/buffer_pool.hpp"

namespace sluice {

Status BufferPool::allocate(MemKind kind, const std::vector<std::uint16_t>& devices, std::uint32_t count,
                            std::uint64_t buffer_bytes) {
  release();
  if (count == 0 || buffer_bytes == 0 || devices.empty()) {
    return error(StatusCode::invalid_argument, "buffer pool of " + std::to_string(count) + " buffers of " +
                                                   std::to_string(buffer_bytes) + " bytes on " +
                                                   std::to_string(devices.size()) + " devices");
  }
  for (std::uint32_t i = 0; i < count; ++i) {
    Result<MemHandle> b = env_.alloc(kind, devices[i % devices.size()], buffer_bytes);
    if (!b.ok()) {
      release();
      return error(b.status().code(), "allocating workload buffer " + std::to_string(i + 1) + " of " +
                                          std::to_string(count) + " (" + std::to_string(buffer_bytes) + " bytes, " +
                                          to_string(kind) + "): " + b.status().message());
    }
    all_.push_back(*b);
  }
  free_ = all_;
  return ok_status();
}

Status BufferPool::allocate(const WorkloadContext& context, MemKind kind, std::uint32_t count,
                            std::uint64_t buffer_bytes) {
  return allocate(kind, buffer_devices(context, kind), count, buffer_bytes);
}

Result<MemHandle> BufferPool::take() {
  if (free_.empty()) {
    return error(StatusCode::internal, "workload buffer pool of " + std::to_string(all_.size()) +
                                           " buffers is empty: more ops in flight than buffers");
  }
  MemHandle b = free_.back();
  free_.pop_back();
  return b;
}

void BufferPool::give(const MemHandle& buffer) { free_.push_back(buffer); }

void BufferPool::release() {
  for (const MemHandle& b : all_) env_.free(b);
  all_.clear();
  free_.clear();
}

}  // namespace sluice
