// The dependency rule (docs/design.md#the-dependency-rule), enforced: core/
// includes nothing from another top-level folder and no device, simulator or
// I/O library header, and reads no real clock, real randomness or threads.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "tests/structure/source_scan.hpp"

namespace {

using sluice::structure::join;

std::vector<std::string> offending_lines(const std::regex& pattern) {
  return sluice::structure::offending_lines({"core"}, pattern);
}

}  // namespace

TEST(CoreBoundary, IncludesNoOtherTopLevelFolder) {
  const std::regex other_layer(R"(#include *[<"](base|transports|hw_backends|hw|sim|scenarios|analysis|tests)/)");
  const auto hits = offending_lines(other_layer);
  EXPECT_TRUE(hits.empty()) << join(hits);
}

TEST(CoreBoundary, IncludesNoDeviceOrSimulatorHeader) {
  const std::regex device(
      R"(#include *<(simgrid|infiniband|rdma|liburing|cuda|cufile|lua|rocksdb|hwloc|sys/socket|sys/epoll|thread>|mutex>))");
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
