// CuFileReader in each mode. Without a GPU (or without cuFile) the mode
// decision still runs and says why; with one, bytes are verified on the GPU.
#include "hw_backends/gds/cufile_reader.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/common/pattern.hpp"
#include "hw_backends/cuda/cuda_device.hpp"
#include "hw_backends/cuda/gpu_bytes.hpp"
#include "hw_backends/cuda/gpu_region.hpp"

namespace sluice::hw::gds {
namespace {

class CuFileReaderTest : public ::testing::Test {
 protected:
  static constexpr std::uint64_t k_bytes = (24ULL << 20) + 4096;
  void SetUp() override {
    dir_ = std::filesystem::current_path() / ("cufile_reader_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "data").string();
    std::vector<std::byte> content(k_bytes);
    fill_pattern(content, 33, 0);
    std::ofstream(path_, std::ios::binary)
        .write(reinterpret_cast<const char*>(content.data()), static_cast<std::streamsize>(k_bytes));
    cuda::PinnedPoolLimits l;
    l.buffer_bytes = 4ULL << 20;
    pool_ = std::move(cuda::PinnedPool::create(l, cuda::cuda_pinned_allocator())).value();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  CuFileReaderConfig config(GdsMode mode) {
    CuFileReaderConfig c;
    c.mode = mode;
    c.bounce.buffer_bytes = 4ULL << 20;
    c.bounce.reader_threads = 2;
    c.log = [this](std::string_view line) { logs_.emplace_back(line); };
    return c;
  }
  std::filesystem::path dir_;
  std::string path_;
  std::unique_ptr<cuda::PinnedPool> pool_;
  std::vector<std::string> logs_;
};

TEST_F(CuFileReaderTest, WithoutCuFileOrGpuOnFailsAndAutoFallsBackSayingWhy) {
  const int fd = ::open(path_.c_str(), O_RDONLY);
  const CuFileProbe probe = probe_cufile(fd);
  ::close(fd);
  if (probe.driver.ok() && probe.handle.ok()) GTEST_SKIP() << "cuFile works here: the GPU tests cover the modes";
  auto on = CuFileReader::open(path_, config(GdsMode::on), *pool_);
  ASSERT_FALSE(on.ok());
  EXPECT_EQ(on.status().code(), StatusCode::unavailable);
  EXPECT_NE(on.status().message().find("GDS mode on"), std::string::npos) << on.status().message();
  auto automatic = CuFileReader::open(path_, config(GdsMode::auto_), *pool_);
  ASSERT_TRUE(automatic.ok()) << automatic.status().to_string();
  EXPECT_EQ((*automatic)->path(), GdsPath::own_bounce);
  ASSERT_EQ(logs_.size(), 1u);
  EXPECT_NE(logs_[0].find("own_bounce"), std::string::npos);
  if (!cufile_built()) {
    EXPECT_NE((*automatic)->reason().find("built without cuFile"), std::string::npos);
  }
  auto off = CuFileReader::open(path_, config(GdsMode::off), *pool_);
  ASSERT_TRUE(off.ok());
  EXPECT_EQ((*off)->path(), GdsPath::own_bounce);
}

TEST_F(CuFileReaderTest, AMissingFileIsNotFound) {
  auto r = CuFileReader::open(path_ + ".missing", config(GdsMode::off), *pool_);
  EXPECT_EQ(r.status().code(), StatusCode::not_found);
  CuFileReaderConfig bad = config(GdsMode::off);
  bad.bounce.reader_threads = 0;
  EXPECT_EQ(CuFileReader::open(path_, bad, *pool_).status().code(), StatusCode::invalid_argument);
}

class CuFileModes : public CuFileReaderTest, public ::testing::WithParamInterface<std::tuple<GdsMode, bool>> {};

TEST_P(CuFileModes, ReadsTheFileIntoGpuMemoryVerifiedOnTheGpu) {
  if (Status s = cuda::cuda_available(); !s.ok()) GTEST_SKIP() << s.message();
  const auto [mode, direct] = GetParam();
  CuFileReaderConfig c = config(mode);
  c.direct = direct;
  auto reader = CuFileReader::open(path_, c, *pool_);
  if (mode == GdsMode::on && !reader.ok()) {
    // On must give the reason; a machine where cuFile cannot register the file is not a failure of sluice.
    EXPECT_NE(reader.status().message().find("GDS mode on"), std::string::npos);
    GTEST_SKIP() << "cuFile unusable here: " << reader.status().message();
  }
  if (direct && !reader.ok() && reader.status().code() == StatusCode::io_error) {
    GTEST_SKIP() << "no O_DIRECT here: " << reader.status().message();
  }
  ASSERT_TRUE(reader.ok()) << reader.status().to_string();
  std::cout << "mode " << to_string(mode) << (direct ? " O_DIRECT" : " page cache") << ": path "
            << to_string((*reader)->path()) << " (" << (*reader)->reason() << ")\n";
  if (mode == GdsMode::off) {
    EXPECT_EQ((*reader)->path(), GdsPath::own_bounce);
  }
  if (mode == GdsMode::on) {
    EXPECT_NE((*reader)->path(), GdsPath::own_bounce);
  }
  auto region = cuda::GpuRegion::allocate(0, k_bytes);
  ASSERT_TRUE(region.ok());
  auto stats = (*reader)->read_to_gpu(0, region->data(), k_bytes, 0);
  ASSERT_TRUE(stats.ok()) << stats.status().to_string();
  EXPECT_EQ(stats->bytes, k_bytes);
  auto bad = cuda::gpu_find_pattern_mismatch(0, region->data(), k_bytes, 33, 0);
  ASSERT_TRUE(bad.ok());
  EXPECT_FALSE(bad->has_value()) << "first wrong byte " << bad->value_or(0);
  // A second read at an offset lands at the start of the destination.
  auto part = (*reader)->read_to_gpu(0, region->data(), 4ULL << 20, 8ULL << 20);
  ASSERT_TRUE(part.ok()) << part.status().to_string();
  auto shifted = cuda::gpu_find_pattern_mismatch(0, region->data(), 4ULL << 20, 33, 8ULL << 20);
  ASSERT_TRUE(shifted.ok());
  EXPECT_FALSE(shifted->has_value());
}

INSTANTIATE_TEST_SUITE_P(EachMode, CuFileModes,
                         ::testing::Combine(::testing::Values(GdsMode::on, GdsMode::auto_, GdsMode::off),
                                            ::testing::Bool()),
                         [](const auto& p) {
                           return std::string(to_string(std::get<0>(p.param))) +
                                  (std::get<1>(p.param) ? "_Direct" : "_PageCache");
                         });

}  // namespace
}  // namespace sluice::hw::gds
