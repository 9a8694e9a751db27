// FakeGpu: "GPU memory" in host memory, for HwNode/HwEnv's GPU plumbing
// without a GPU. It makes the operations the CUDA backend would
// (hw_backends/gpu_memory_ops.hpp); a world takes them in its config
// (HwWorldConfig::gpu_memory = gpu.ops()) and must not outlive it.
//
// - copies counts the copies between "GPU" and host memory (a bounce is one;
//   the GPU-direct path has none).
#pragma once

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>

#include "core/common/pattern.hpp"
#include "core/proto/crc32c.hpp"
#include "hw_backends/gpu_memory_ops.hpp"

namespace sluice::hw {

class FakeGpu {
 public:
  FakeGpu() {
    ops_.name = "fake_gpu";
    ops_.alloc = [](std::uint16_t, std::uint64_t bytes) -> Result<std::byte*> {
      auto* p = static_cast<std::byte*>(std::calloc(1, bytes));
      if (p == nullptr) return error(StatusCode::no_space, "fake GPU: out of memory");
      return p;
    };
    ops_.free = [](std::uint16_t, std::byte* data) { std::free(data); };
    ops_.copy = [this](std::uint16_t, std::byte* dst, const std::byte* src, std::uint64_t bytes) {
      ++copies;
      std::memmove(dst, src, bytes);
      return ok_status();
    };
    ops_.fill = [](std::uint16_t, std::byte* dst, std::uint64_t bytes, std::uint64_t seed, std::uint64_t offset) {
      fill_pattern(std::span<std::byte>(dst, bytes), seed, offset);
      return ok_status();
    };
    ops_.find_mismatch = [](std::uint16_t, const std::byte* src, std::uint64_t bytes, std::uint64_t seed,
                            std::uint64_t offset) -> Result<std::optional<std::uint64_t>> {
      std::optional<std::size_t> bad = first_pattern_mismatch(std::span<const std::byte>(src, bytes), seed, offset);
      if (!bad) return std::optional<std::uint64_t>();
      return std::optional<std::uint64_t>(*bad);
    };
    ops_.crc32c = [](std::uint16_t, const std::byte* src, std::uint64_t bytes) -> Result<std::uint32_t> {
      return proto::crc32c(std::span<const std::byte>(src, bytes));
    };
  }
  FakeGpu(const FakeGpu&) = delete;
  FakeGpu& operator=(const FakeGpu&) = delete;

  // For HwWorldConfig::gpu_memory; valid while this FakeGpu lives.
  const GpuMemoryOps* ops() const { return &ops_; }

  std::atomic<std::uint64_t> copies{0};

 private:
  GpuMemoryOps ops_;
};

}  // namespace sluice::hw
