// FakeGpu: "GPU memory" in host memory, for HwNode/HwEnv's GPU plumbing
// without a GPU. It makes the operations the CUDA backend would
// (hw_backends/gpu_memory_ops.hpp); a world takes them in its config
// (HwWorldConfig::gpu_memory = gpu.ops()) and must not outlive it.
//
// - copies counts the copies between "GPU" and host memory (a bounce is one;
//   the GPU-direct path has none);
// - export_dmabuf hands out, per export, the write end of a fresh pipe as
//   the dma-buf fd (offset k_fake_dmabuf_offset_bytes), so a test can tell
//   that the owner closed it: the read end, kept here, then reads EOF;
// - refuse_dmabuf_exports(why) makes exports fail with `why` (a driver
//   without dma-buf support); without_dmabuf_export() empties the export operation (a
//   backend that cannot export at all).
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "core/common/pattern.hpp"
#include "core/proto/crc32c.hpp"
#include "hw_backends/gpu_memory_ops.hpp"

namespace sluice::hw {

// Where a fake export says the region starts inside its dma-buf.
inline constexpr std::uint64_t k_fake_dmabuf_offset_bytes = 4096;

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
    ops_.export_dmabuf = [this](std::uint16_t, std::byte*, std::uint64_t bytes) -> Result<GpuDmabuf> {
      std::lock_guard lock(mu_);
      if (refusal_) return *refusal_;
      int ends[2] = {-1, -1};
      if (::pipe2(ends, O_CLOEXEC | O_NONBLOCK) != 0) return error(StatusCode::io_error, "fake GPU: pipe2 failed");
      export_read_ends_.push_back(ends[0]);
      return GpuDmabuf{ends[1], k_fake_dmabuf_offset_bytes, k_fake_dmabuf_offset_bytes + bytes};
    };
  }
  ~FakeGpu() {
    for (int fd : export_read_ends_) ::close(fd);
  }
  FakeGpu(const FakeGpu&) = delete;
  FakeGpu& operator=(const FakeGpu&) = delete;

  // For HwWorldConfig::gpu_memory; valid while this FakeGpu lives.
  const GpuMemoryOps* ops() const { return &ops_; }

  void refuse_dmabuf_exports(Status why) {
    std::lock_guard lock(mu_);
    refusal_ = std::move(why);
  }
  void without_dmabuf_export() { ops_.export_dmabuf = nullptr; }

  std::size_t exports() const {
    std::lock_guard lock(mu_);
    return export_read_ends_.size();
  }
  // Whether every fd handed out by export `index` has been closed (its pipe reads EOF).
  bool export_closed(std::size_t index) const {
    std::lock_guard lock(mu_);
    char byte = 0;
    return ::read(export_read_ends_.at(index), &byte, 1) == 0;
  }

  std::atomic<std::uint64_t> copies{0};

 private:
  GpuMemoryOps ops_;
  mutable std::mutex mu_;
  std::optional<Status> refusal_;
  std::vector<int> export_read_ends_;
};

}  // namespace sluice::hw
