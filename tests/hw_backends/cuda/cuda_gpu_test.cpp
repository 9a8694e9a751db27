// GPU memory, kernels and the bounce pipeline on a real GPU. Without a
// device these tests skip with the reason, and the "WithoutADevice" tests
// check that every entry point answers unavailable with that reason.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/common/pattern.hpp"
#include "core/proto/crc32c.hpp"
#include "hw_backends/cuda/bounce_to_gpu.hpp"
#include "hw_backends/cuda/cuda_chunk_sink.hpp"
#include "hw_backends/cuda/cuda_device.hpp"
#include "hw_backends/cuda/gpu_bytes.hpp"
#include "hw_backends/cuda/gpu_region.hpp"

namespace sluice::hw::cuda {
namespace {

#define SKIP_WITHOUT_GPU()                                                 \
  do {                                                                     \
    if (Status s = cuda_available(); !s.ok()) GTEST_SKIP() << s.message(); \
  } while (0)

#define SKIP_WITH_GPU()                                                                       \
  do {                                                                                        \
    if (cuda_available().ok()) GTEST_SKIP() << "a CUDA device is present: the GPU tests run"; \
  } while (0)

// ---- without a device: clean reasons -------------------------------------------------

TEST(CudaWithoutADevice, EveryEntryPointSaysUnavailableWithTheReason) {
  SKIP_WITH_GPU();
  const Status why = cuda_available();
  ASSERT_EQ(why.code(), StatusCode::unavailable);
  EXPECT_FALSE(why.message().empty());
  if (cuda_built()) {
    EXPECT_TRUE(why.message().find("cudaGetDeviceCount") != std::string::npos ||
                why.message().find("no CUDA device") != std::string::npos)
        << why.message();
  } else {
    EXPECT_NE(why.message().find("built without CUDA"), std::string::npos);
  }
  auto region = GpuRegion::allocate(0, 4096);
  EXPECT_EQ(region.status().code(), StatusCode::unavailable);
  EXPECT_NE(region.status().message().find("GPU alloc of 4096 bytes on device 0"), std::string::npos);
  std::byte dummy[8] = {};
  EXPECT_EQ(gpu_fill_pattern(0, dummy, 8, 1, 0).code(), StatusCode::unavailable);
  EXPECT_EQ(gpu_find_pattern_mismatch(0, dummy, 8, 1, 0).status().code(), StatusCode::unavailable);
  EXPECT_EQ(gpu_crc32c(0, dummy, 8).status().code(), StatusCode::unavailable);
  EXPECT_EQ(gpu_copy_from_host(0, dummy, std::span<const std::byte>(dummy, 8)).code(), StatusCode::unavailable);
  EXPECT_EQ(gpu_copy_to_host(0, std::span<std::byte>(dummy, 8), dummy).code(), StatusCode::unavailable);
  EXPECT_EQ(gpu_copy_on_device(0, dummy, dummy, 8).code(), StatusCode::unavailable);
  EXPECT_EQ(CudaChunkSink::create(0, 1, 2, dummy, 8).status().code(), StatusCode::unavailable);
  EXPECT_EQ(describe_device(0).status().code(), StatusCode::unavailable);
  EXPECT_EQ(check_device(0).code(), StatusCode::unavailable);
}

TEST(CudaStatus, NamesTheCallAndTheError) {
  EXPECT_TRUE(cuda_status(0, "cudaMalloc").ok());
  const Status s = cuda_status(2, "cudaMalloc(64 bytes)");  // 2 = cudaErrorMemoryAllocation
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cudaMalloc(64 bytes)"), std::string::npos);
  if (cuda_built()) {
    EXPECT_EQ(s.code(), StatusCode::no_space);
    EXPECT_NE(s.message().find("cudaErrorMemoryAllocation"), std::string::npos);
  }
}

TEST(GpuRegion, RejectsSizesOutsideTheLimit) {
  EXPECT_EQ(GpuRegion::allocate(0, 0).status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(GpuRegion::allocate(0, k_max_gpu_region_bytes + 1).status().code(), StatusCode::invalid_argument);
}

// ---- on a GPU --------------------------------------------------------------------------

TEST(GpuMemory, AllocatesFillsAndVerifiesOnTheGpu) {
  SKIP_WITHOUT_GPU();
  auto desc = describe_device(0);
  ASSERT_TRUE(desc.ok()) << desc.status().to_string();
  std::cout << "device 0: " << *desc << "\n";
  const std::uint64_t bytes = (3ULL << 20) + 13;  // not a multiple of 8 or of a block
  auto region = GpuRegion::allocate(0, bytes);
  ASSERT_TRUE(region.ok()) << region.status().to_string();
  // Freshly allocated memory is zero: the pattern does not match.
  auto fresh = gpu_find_pattern_mismatch(0, region->data(), bytes, 5, 3);
  ASSERT_TRUE(fresh.ok()) << fresh.status().to_string();
  EXPECT_TRUE(fresh->has_value());
  ASSERT_TRUE(gpu_fill_pattern(0, region->data(), bytes, 5, 3).ok());
  auto clean = gpu_find_pattern_mismatch(0, region->data(), bytes, 5, 3);
  ASSERT_TRUE(clean.ok()) << clean.status().to_string();
  EXPECT_FALSE(clean->has_value());
  // The GPU's bytes are the host's pattern, byte for byte.
  std::vector<std::byte> host(bytes), expected(bytes);
  ASSERT_TRUE(gpu_copy_to_host(0, host, region->data()).ok());
  fill_pattern(expected, 5, 3);
  EXPECT_EQ(host, expected);
  // A wrong seed or a planted bad byte is found at the right index.
  auto other_seed = gpu_find_pattern_mismatch(0, region->data(), bytes, 6, 3);
  ASSERT_TRUE(other_seed.ok()) << other_seed.status().to_string();
  EXPECT_EQ(other_seed->value_or(999), 0u);
  const std::byte bad{static_cast<unsigned char>(~static_cast<unsigned char>(expected[1234567]))};
  ASSERT_TRUE(gpu_copy_from_host(0, region->data() + 1234567, std::span<const std::byte>(&bad, 1)).ok());
  auto planted = gpu_find_pattern_mismatch(0, region->data(), bytes, 5, 3);
  ASSERT_TRUE(planted.ok()) << planted.status().to_string();
  EXPECT_EQ(planted->value_or(0), 1234567u);
}

TEST(GpuMemory, Crc32cOfGpuBytesEqualsTheHostCrc) {
  SKIP_WITHOUT_GPU();
  const std::uint64_t bytes = k_gpu_checksum_staging_bytes * 2 + 77;  // crosses staging chunks
  auto region = GpuRegion::allocate(0, bytes);
  ASSERT_TRUE(region.ok()) << region.status().to_string();
  ASSERT_TRUE(gpu_fill_pattern(0, region->data(), bytes, 9, 0).ok());
  std::vector<std::byte> expected(bytes);
  fill_pattern(expected, 9, 0);
  auto crc = gpu_crc32c(0, region->data(), bytes);
  ASSERT_TRUE(crc.ok()) << crc.status().to_string();
  EXPECT_EQ(*crc, proto::crc32c(expected));
}

TEST(GpuMemory, ACudaFailureNamesTheCall) {
  SKIP_WITHOUT_GPU();
  EXPECT_EQ(GpuRegion::allocate(99, 4096).status().code(), StatusCode::invalid_argument);
  auto huge = GpuRegion::allocate(0, k_max_gpu_region_bytes);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), StatusCode::no_space);
  EXPECT_NE(huge.status().message().find("cudaMalloc"), std::string::npos);
}

TEST(PinnedPoolOnGpu, PinsBuffersOnNumaNodeZero) {
  SKIP_WITHOUT_GPU();
  PinnedPoolLimits l;
  l.buffer_bytes = 1 << 20;
  l.max_buffers_per_numa = 2;
  auto pool = PinnedPool::create(l, cuda_pinned_allocator());
  ASSERT_TRUE(pool.ok()) << pool.status().to_string();
  auto b = (*pool)->acquire(0);
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  auto region = GpuRegion::allocate(0, 1 << 20);
  ASSERT_TRUE(region.ok()) << region.status().to_string();
  fill_pattern(*b, 4, 0);
  ASSERT_TRUE(gpu_copy_from_host(0, region->data(), *b).ok());
  auto bad = gpu_find_pattern_mismatch(0, region->data(), 1 << 20, 4, 0);
  ASSERT_TRUE(bad.ok()) << bad.status().to_string();
  EXPECT_FALSE(bad->has_value());
  ASSERT_TRUE((*pool)->release(0, *b).ok());
}

class BounceToGpu : public ::testing::TestWithParam<bool> {};

TEST_P(BounceToGpu, FileBytesArriveInGpuMemoryVerifiedOnTheGpu) {
  SKIP_WITHOUT_GPU();
  const bool direct = GetParam();
  const auto dir = std::filesystem::current_path() / ("bounce_gpu_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "data").string();
  const std::uint64_t bytes = (40ULL << 20) + 4096 + 321;  // 40 MiB, a page and an odd tail
  {
    std::vector<std::byte> content(bytes);
    fill_pattern(content, 21, 0);
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(content.data()), static_cast<std::streamsize>(bytes));
  }
  auto region = GpuRegion::allocate(0, bytes);
  ASSERT_TRUE(region.ok()) << region.status().to_string();
  PinnedPoolLimits l;
  l.buffer_bytes = 4ULL << 20;
  auto pool = PinnedPool::create(l, cuda_pinned_allocator());
  ASSERT_TRUE(pool.ok()) << pool.status().to_string();
  BounceConfig c;
  c.buffer_bytes = 4ULL << 20;
  c.reader_threads = 4;
  c.depth = 2;
  BounceRead read{path, direct, 0, bytes, 0, region->data(), 0};
  auto stats = bounce_file_to_gpu(read, c, **pool);
  if (direct && !stats.ok() && stats.status().code() == StatusCode::invalid_argument &&
      stats.status().message().find("open O_DIRECT") != std::string::npos) {
    std::filesystem::remove_all(dir);
    GTEST_SKIP() << "file system refuses O_DIRECT: " << stats.status().message();
  }
  ASSERT_TRUE(stats.ok()) << stats.status().to_string();
  EXPECT_EQ(stats->chunks, 11u);
  auto bad = gpu_find_pattern_mismatch(0, region->data(), bytes, 21, 0);
  ASSERT_TRUE(bad.ok()) << bad.status().to_string();
  EXPECT_FALSE(bad->has_value()) << "first wrong byte " << bad->value_or(0);
  EXPECT_EQ((*pool)->stats(0).lent, 0u);  // every staging buffer returned
  // From an offset: the GPU holds the file's bytes from there.
  read.file_offset = 8ULL << 20;
  read.bytes = 4ULL << 20;
  ASSERT_TRUE(bounce_file_to_gpu(read, c, **pool).ok());
  auto shifted = gpu_find_pattern_mismatch(0, region->data(), 4ULL << 20, 21, 8ULL << 20);
  ASSERT_TRUE(shifted.ok()) << shifted.status().to_string();
  EXPECT_FALSE(shifted->has_value());
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(PageCacheAndDirect, BounceToGpu, ::testing::Values(false, true),
                         [](const auto& p) { return p.param ? std::string("Direct") : std::string("PageCache"); });

}  // namespace
}  // namespace sluice::hw::cuda
