#include "transports/ibverbs/ibverbs_transfer_split.hpp"

#include <gtest/gtest.h>

namespace sluice::transport::ibverbs {
namespace {

// The pieces cover [0, bytes) in order, without gaps or overlaps.
void expect_tiling(const std::vector<TransferPiece>& pieces, std::uint64_t bytes) {
  std::uint64_t at = 0;
  for (const TransferPiece& p : pieces) {
    EXPECT_EQ(p.offset, at);
    EXPECT_GT(p.bytes, 0u);
    at += p.bytes;
  }
  EXPECT_EQ(at, bytes);
}

TEST(IbverbsTransferSplit, KeepsSmallTransfersAndSingleConnectionsWhole) {
  EXPECT_EQ(split_transfer(1, 4).size(), 1u);
  EXPECT_EQ(split_transfer(2 * k_ibv_split_min_bytes - 1, 4).size(), 1u);
  EXPECT_EQ(split_transfer(64ULL << 20, 1).size(), 1u);
  expect_tiling(split_transfer(777, 16), 777);
}

TEST(IbverbsTransferSplit, SpreadsLargeTransfersOverTheConnections) {
  const auto two = split_transfer(2 * k_ibv_split_min_bytes, 4);
  ASSERT_EQ(two.size(), 2u) << "never pieces below the minimum";
  expect_tiling(two, 2 * k_ibv_split_min_bytes);
  const std::uint64_t bytes = (16ULL << 20) + 12345;
  const auto four = split_transfer(bytes, 4);
  ASSERT_EQ(four.size(), 4u);
  expect_tiling(four, bytes);
  for (std::size_t i = 0; i + 1 < four.size(); ++i) {
    EXPECT_EQ(four[i].offset % 4096, 0u);
    EXPECT_EQ(four[i].bytes, four[0].bytes) << "equal shares but the last";
  }
  EXPECT_GE(four.back().bytes, four[0].bytes);
  EXPECT_LT(four.back().bytes - four[0].bytes, 4 * 4096u);
}

TEST(IbverbsTransferSplit, FallsBackToOnePieceWhenSharesWouldBeEmpty) {
  const auto tiny = split_transfer(100, 8, 10);  // 8 shares of 12 bytes round down to 0 pages
  ASSERT_EQ(tiny.size(), 1u);
  expect_tiling(tiny, 100);
  expect_tiling(split_transfer(5, 3, 0), 5);
}

}  // namespace
}  // namespace sluice::transport::ibverbs
