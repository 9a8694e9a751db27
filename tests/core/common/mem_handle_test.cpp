#include "core/common/mem_handle.hpp"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(MemHandle, SliceNarrowsTheRange) {
  MemHandle h{3, MemKind::gpu, 2, 7, 100, 1000};
  MemHandle s = h.slice(10, 20);
  EXPECT_EQ(s.offset, 110u);
  EXPECT_EQ(s.length, 20u);
  EXPECT_EQ(s.to_string(), "node3/gpu2/r7[110+20]");
}

TEST(MemHandle, CheckRangeNamesTheOperandAndTheProblem) {
  MemHandle h{3, MemKind::host, 0, 7, 100, 1000};
  EXPECT_TRUE(check_range(h, 3, 1100, "src").ok());
  Status other_node = check_range(h, 4, 1100, "transfer source");
  EXPECT_EQ(other_node.code(), StatusCode::invalid_argument);
  EXPECT_EQ(other_node.message(), "transfer source node3/host0/r7[100+1000] is not on node 4");
  EXPECT_EQ(check_range(h, 3, std::nullopt, "dst").code(), StatusCode::not_found);
  Status beyond = check_range(h, 3, 1099, "dst");
  EXPECT_EQ(beyond.code(), StatusCode::invalid_argument);
  EXPECT_NE(beyond.message().find("exceeds its region of 1099 bytes"), std::string::npos);
  MemHandle wrap{3, MemKind::host, 0, 7, 5000, 1};  // offset past the end
  EXPECT_FALSE(check_range(wrap, 3, 1100, "dst").ok());
}

}  // namespace
}  // namespace sluice
