// dma-buf export of GPU memory (gpu_dmabuf.hpp). On a GPU the export of a
// cudaMalloc'd region must give a real fd whose dma-buf covers the region,
// or say "unavailable: <why>" when the driver refuses (the test then skips
// with that reason, so the run shows it). Without a device the export says
// why it cannot.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <iostream>
#include <string>

#include "hw_backends/cuda/cuda_device.hpp"
#include "hw_backends/cuda/gpu_dmabuf.hpp"
#include "hw_backends/cuda/cuda_gpu_memory.hpp"
#include "hw_backends/cuda/gpu_region.hpp"

namespace sluice::hw::cuda {
namespace {

// The size of a dma-buf fd: fstat's st_size (the kernel sets the inode size
// to the buffer's), else where lseek(SEEK_END) lands.
std::uint64_t dmabuf_size(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return 0;
  if (st.st_size > 0) return static_cast<std::uint64_t>(st.st_size);
  const off_t end = ::lseek(fd, 0, SEEK_END);
  return end > 0 ? static_cast<std::uint64_t>(end) : 0;
}

TEST(GpuDmabuf, WithoutADeviceTheExportSaysWhy) {
  if (cuda_available().ok()) GTEST_SKIP() << "a CUDA device is present: the GPU tests run";
  std::byte dummy[4096] = {};
  const Result<GpuDmabuf> e = export_gpu_dmabuf(0, dummy, sizeof dummy);
  EXPECT_EQ(e.status().code(), StatusCode::unavailable);
  EXPECT_NE(e.status().message().find("dma-buf export of GPU 0"), std::string::npos) << e.status().to_string();
}

TEST(GpuDmabuf, RefusesAnEmptyRange) {
  EXPECT_EQ(export_gpu_dmabuf(0, nullptr, 4096).status().code(), StatusCode::invalid_argument);
  std::byte one{};
  EXPECT_EQ(export_gpu_dmabuf(0, &one, 0).status().code(), StatusCode::invalid_argument);
}

TEST(GpuDmabuf, ExportsACudaMallocRegionAsAnFdThatCoversIt) {
  if (Status s = cuda_available(); !s.ok()) GTEST_SKIP() << s.message();
  constexpr std::uint64_t k_bytes = 8ULL << 20;
  Result<GpuRegion> region = GpuRegion::allocate(0, k_bytes);
  ASSERT_TRUE(region.ok()) << region.status().to_string();
  const Result<GpuDmabuf> e = export_gpu_dmabuf(0, region->data(), k_bytes);
  if (e.status().code() == StatusCode::unavailable) GTEST_SKIP() << "unavailable: " << e.status().message();
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  ASSERT_GE(e->fd, 0);
  struct stat st {};
  EXPECT_EQ(::fstat(e->fd, &st), 0) << "the fd is a live file";
  const std::uint64_t size = dmabuf_size(e->fd);
  std::cout << "dma-buf fd " << e->fd << ": " << size << " bytes (st_size " << st.st_size << "), offset "
            << e->offset_bytes << ", exported " << e->dmabuf_bytes << " bytes for a " << k_bytes << "-byte region\n";
  EXPECT_GE(size, e->offset_bytes + k_bytes);
  EXPECT_EQ(e->offset_bytes, 0u) << "a whole cudaMalloc region starts its dma-buf";
  EXPECT_GE(e->dmabuf_bytes, k_bytes);
  EXPECT_EQ(::close(e->fd), 0);

  // A range inside the region: the same allocation, at its offset.
  const Result<GpuDmabuf> inner = export_gpu_dmabuf(0, region->data() + (1 << 20), 1 << 20);
  ASSERT_TRUE(inner.ok()) << inner.status().to_string();
  EXPECT_EQ(inner->offset_bytes, 1u << 20);
  EXPECT_GE(dmabuf_size(inner->fd), (2u << 20));
  EXPECT_EQ(::close(inner->fd), 0);

  // Past the end of its allocation: refused, naming the allocation.
  const Result<GpuDmabuf> past = export_gpu_dmabuf(0, region->data() + k_bytes - 4096, 8192);
  EXPECT_EQ(past.status().code(), StatusCode::invalid_argument) << past.status().to_string();
}

// Through the operations HwEnv uses: an odd-sized region (rounded up to
// whole pages by ops.alloc) exports too, so every GPU region HwNode makes is
// a candidate for ibv_reg_dmabuf_mr.
TEST(GpuDmabuf, TheInstalledOperationsExportOddSizedRegions) {
  if (Status s = cuda_available(); !s.ok()) GTEST_SKIP() << s.message();
  const GpuMemoryOps* ops = gpu_memory_ops();
  ASSERT_NE(ops, nullptr);
  ASSERT_TRUE(ops->export_dmabuf);
  for (const std::uint64_t bytes : {std::uint64_t{1000}, std::uint64_t{(3u << 20) + 123}}) {
    Result<std::byte*> data = ops->alloc(0, bytes);
    ASSERT_TRUE(data.ok()) << data.status().to_string();
    const Result<GpuDmabuf> e = ops->export_dmabuf(0, *data, bytes);
    if (e.status().code() == StatusCode::unavailable) {
      ops->free(0, *data);
      GTEST_SKIP() << "unavailable: " << e.status().message();
    }
    ASSERT_TRUE(e.ok()) << bytes << " bytes: " << e.status().to_string();
    EXPECT_GE(dmabuf_size(e->fd), e->offset_bytes + bytes) << bytes << " bytes";
    EXPECT_EQ(::close(e->fd), 0);
    ops->free(0, *data);
  }
}

}  // namespace
}  // namespace sluice::hw::cuda
