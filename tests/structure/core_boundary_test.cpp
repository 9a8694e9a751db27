// The dependency rule of DESIGN.md section 2, enforced: core/ includes nothing
// from another top-level folder and no device, simulator or I/O library header,
// and reads no real clock, real randomness or threads.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

std::vector<std::string> offending_lines(const std::regex& pattern) {
  std::vector<std::string> hits;
  const fs::path core = fs::path(SLUICE_SOURCE_DIR) / "core";
  for (const auto& entry : fs::recursive_directory_iterator(core)) {
    if (!entry.is_regular_file()) continue;
    const auto ext = entry.path().extension();
    if (ext != ".hpp" && ext != ".cpp" && ext != ".h") continue;
    std::ifstream in(entry.path());
    std::string line;
    int line_no = 0;
    while (std::getline(in, line)) {
      ++line_no;
      if (std::regex_search(line, pattern)) {
        hits.push_back(entry.path().string() + ":" + std::to_string(line_no) + ": " + line);
      }
    }
  }
  return hits;
}

std::string join(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

}  // namespace

TEST(CoreBoundary, IncludesNoOtherTopLevelFolder) {
  const std::regex other_layer(R"(#include *[<"](transports|hw_backends|sim|scenarios|analysis)/)");
  const auto hits = offending_lines(other_layer);
  EXPECT_TRUE(hits.empty()) << join(hits);
}

TEST(CoreBoundary, IncludesNoDeviceOrSimulatorHeader) {
  const std::regex device(R"(#include *<(simgrid|infiniband|rdma|liburing|cuda|cufile|lua|rocksdb|hwloc|sys/socket|sys/epoll|thread>|mutex>))");
  const auto hits = offending_lines(device);
  EXPECT_TRUE(hits.empty()) << join(hits);
}

TEST(CoreBoundary, ReadsNoRealClockRandomnessOrThreads) {
  const std::regex real_world(
      R"(std::chrono::(steady|system|high_resolution)_clock|[^_a-z]rand\(\)|std::random_device|std::thread|usleep|sleep_for)");
  const auto hits = offending_lines(real_world);
  EXPECT_TRUE(hits.empty()) << join(hits);
}

TEST(CoreBoundary, TheScanSeesTheCoreSources) {
  // Guards the three tests above against passing vacuously on a wrong path.
  const auto hits = offending_lines(std::regex("#pragma once"));
  EXPECT_GT(hits.size(), 5u);
}
