#include "hw_backends/cuda/pread_chunk_source.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/common/pattern.hpp"

namespace sluice::hw::cuda {
namespace {

class PreadChunkSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Under the build tree (a real disk here) rather than /tmp (often tmpfs, no O_DIRECT).
    dir_ = std::filesystem::current_path() / ("pread_source_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "data").string();
    bytes_.resize(3 * 4096 + 123);
    fill_pattern(bytes_, 11, 0);
    std::ofstream(path_, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes_.data()), static_cast<std::streamsize>(bytes_.size()));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
  std::string path_;
  std::vector<std::byte> bytes_;
};

TEST_F(PreadChunkSourceTest, ReadsBufferedAndStopsAtTheEnd) {
  auto s = PreadChunkSource::open(path_, false);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(*(*s)->size(), bytes_.size());
  std::vector<std::byte> buf(8192);
  auto n = (*s)->read(100, buf, 5000);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 5000u);
  EXPECT_EQ(0, std::memcmp(buf.data(), bytes_.data() + 100, 5000));
  auto tail = (*s)->read(3 * 4096, buf, 4096);
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(*tail, 123u);
  EXPECT_EQ((*s)->read(0, buf, 9000).status().code(), StatusCode::invalid_argument);
}

TEST_F(PreadChunkSourceTest, DirectReadsRoundTheTailUpAndCheckAlignment) {
  auto s = PreadChunkSource::open(path_, true);
  if (!s.ok() && s.status().code() == StatusCode::invalid_argument) {
    GTEST_SKIP() << "this file system refuses O_DIRECT: " << s.status().message();
  }
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_TRUE((*s)->direct());
  auto* raw = static_cast<std::byte*>(std::aligned_alloc(4096, 8192));
  std::span<std::byte> buf(raw, 8192);
  auto n = (*s)->read(2 * 4096, buf, 4096 + 123);  // unaligned length: read as 8192, returns 4219
  ASSERT_TRUE(n.ok()) << n.status().to_string();
  EXPECT_EQ(*n, 4096u + 123u);
  EXPECT_EQ(0, std::memcmp(raw, bytes_.data() + 2 * 4096, 4096 + 123));
  EXPECT_EQ((*s)->read(100, buf, 4096).status().code(), StatusCode::invalid_argument);
  EXPECT_EQ((*s)->read(0, buf.subspan(1, 4096), 4096).status().code(), StatusCode::invalid_argument);
  EXPECT_EQ((*s)->read(0, buf.first(4000), 4000).status().code(), StatusCode::invalid_argument);
  std::free(raw);
}

TEST_F(PreadChunkSourceTest, AMissingFileIsNotFoundNamingThePath) {
  auto s = PreadChunkSource::open(path_ + ".missing", false);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::not_found);
  EXPECT_NE(s.status().message().find("data.missing"), std::string::npos);
}

}  // namespace
}  // namespace sluice::hw::cuda
