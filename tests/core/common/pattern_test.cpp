#include "core/common/pattern.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace sluice {
namespace {

TEST(Pattern, AnySubRangeEqualsTheSameRangeOfTheWholeStream) {
  std::vector<std::byte> whole(10000);
  fill_pattern(whole, 77, 1000);
  for (std::size_t start : {0u, 1u, 7u, 8u, 13u, 4095u, 9000u}) {
    std::vector<std::byte> part(997);
    if (start + part.size() > whole.size()) continue;
    fill_pattern(part, 77, 1000 + start);
    EXPECT_TRUE(std::equal(part.begin(), part.end(), whole.begin() + static_cast<std::ptrdiff_t>(start))) << start;
  }
}

TEST(Pattern, DifferentSeedsGiveDifferentBytes) {
  std::vector<std::byte> a(4096), b(4096);
  fill_pattern(a, 1, 0);
  fill_pattern(b, 2, 0);
  int same = 0;
  for (std::size_t i = 0; i < a.size(); ++i) same += a[i] == b[i];
  EXPECT_LT(same, 64);  // ~16 expected by chance
}

TEST(Pattern, MismatchIsFoundAtTheExactByte) {
  std::vector<std::byte> data(20000);
  fill_pattern(data, 5, 333);
  EXPECT_FALSE(first_pattern_mismatch(data, 5, 333).has_value());
  data[12345] ^= std::byte{0x10};
  auto bad = first_pattern_mismatch(data, 5, 333);
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(*bad, 12345u);
  EXPECT_TRUE(first_pattern_mismatch(data, 5, 334).has_value());  // shifted stream
}

}  // namespace
}  // namespace sluice
