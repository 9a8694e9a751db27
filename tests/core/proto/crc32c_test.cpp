#include "core/proto/crc32c.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/common/rng.hpp"

namespace sluice::proto {
namespace {

std::vector<std::byte> bytes_of(std::string_view s) {
  std::vector<std::byte> out;
  for (const char c : s) out.push_back(static_cast<std::byte>(c));
  return out;
}

TEST(Crc32c, MatchesTheIscsiCheckValue) {
  EXPECT_EQ(crc32c(bytes_of("123456789")), 0xE3069283u);
  EXPECT_EQ(crc32c(bytes_of("123456789")), k_crc32c_check_value);
}

// RFC 3720 appendix B.4 test vectors.
TEST(Crc32c, MatchesRfc3720Vectors) {
  std::array<std::uint8_t, 32> zeros{};
  std::array<std::uint8_t, 32> ones{};
  std::array<std::uint8_t, 32> ascending{};
  std::array<std::uint8_t, 32> descending{};
  for (std::size_t i = 0; i < 32; ++i) {
    ones[i] = 0xFF;
    ascending[i] = static_cast<std::uint8_t>(i);
    descending[i] = static_cast<std::uint8_t>(31 - i);
  }
  EXPECT_EQ(crc32c(std::span<const std::uint8_t>(zeros)), 0x8A9136AAu);
  EXPECT_EQ(crc32c(std::span<const std::uint8_t>(ones)), 0x62A8AB43u);
  EXPECT_EQ(crc32c(std::span<const std::uint8_t>(ascending)), 0x46DD794Eu);
  EXPECT_EQ(crc32c(std::span<const std::uint8_t>(descending)), 0x113FDB5Cu);
}

TEST(Crc32c, ChainingTwoPiecesEqualsTheWhole) {
  Rng rng(20240611);
  std::vector<std::byte> data(1000);
  for (auto& b : data) b = static_cast<std::byte>(rng.uniform(256));
  const std::uint32_t whole = crc32c(data);
  const std::span<const std::byte> all(data);
  for (std::size_t cut = 0; cut <= data.size(); cut += 7) {
    EXPECT_EQ(crc32c(all.subspan(cut), crc32c(all.first(cut))), whole) << "cut at " << cut;
  }
  const auto half = bytes_of("1234");
  EXPECT_EQ(crc32c(bytes_of("56789"), crc32c(half)), 0xE3069283u);
}

TEST(Crc32c, EmptyInputReturnsThePreviousValue) {
  EXPECT_EQ(crc32c(std::span<const std::byte>()), 0u);
  EXPECT_EQ(crc32c(std::span<const std::byte>(), 0x12345678u), 0x12345678u);
  EXPECT_EQ(crc32c(std::span<const std::uint8_t>(), 0xABCDu), 0xABCDu);
}

TEST(Crc32c, ByteAndUint8OverloadsAgree) {
  const std::array<std::uint8_t, 5> u8{1, 2, 3, 250, 0};
  const std::array<std::byte, 5> b{std::byte{1}, std::byte{2}, std::byte{3}, std::byte{250}, std::byte{0}};
  EXPECT_EQ(crc32c(std::span<const std::uint8_t>(u8)), crc32c(std::span<const std::byte>(b)));
  EXPECT_NE(crc32c(std::span<const std::uint8_t>(u8)), 0u);
}

TEST(Crc32c, DetectsEverySingleBitFlip) {
  auto data = bytes_of("the quick brown fox jumps over the lazy dog");
  const std::uint32_t good = crc32c(data);
  for (std::size_t bit = 0; bit < data.size() * 8; ++bit) {
    data[bit / 8] ^= static_cast<std::byte>(1u << (bit % 8));
    EXPECT_NE(crc32c(data), good) << "bit " << bit;
    data[bit / 8] ^= static_cast<std::byte>(1u << (bit % 8));
  }
}

}  // namespace
}  // namespace sluice::proto

namespace sluice::proto {
namespace {

// crc32c(A ++ B) from crc32c(A), crc32c(B) and |B| alone, for lengths that
// are and are not powers of two, including 0 and the 4 KiB block the
// storage backends fold.
TEST(Crc32cShift, CombinesTheCrcsOfTwoPiecesIntoTheCrcOfTheirConcatenation) {
  Rng rng(77);
  std::vector<std::uint8_t> bytes(20'000);
  for (auto& b : bytes) b = static_cast<std::uint8_t>(rng.next_u64());
  const std::span<const std::uint8_t> all(bytes);
  for (std::size_t split : {0, 1, 7, 4096, 10'000, 15'904, 19'999, 20'000}) {
    const std::uint32_t a = crc32c(all.first(split));
    const std::uint32_t b = crc32c(all.subspan(split));
    EXPECT_EQ(Crc32cShift(all.size() - split).apply(a) ^ b, crc32c(all)) << split;
  }
  // Folding equal blocks, as a backend does with its 4 KiB block CRCs.
  const Crc32cShift block(4096);
  std::uint32_t folded = 0;
  for (std::size_t at = 0; at + 4096 <= all.size(); at += 4096)
    folded = block.apply(folded) ^ crc32c(all.subspan(at, 4096));
  EXPECT_EQ(folded, crc32c(all.first(all.size() / 4096 * 4096)));
}

}  // namespace
}  // namespace sluice::proto
