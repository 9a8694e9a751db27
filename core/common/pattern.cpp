#include "core/common/pattern.hpp"

#include <algorithm>
#include <cstring>

namespace sluice {
namespace {

std::uint64_t pattern_word(std::uint64_t seed, std::uint64_t word_index) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ULL + word_index * 0xD1B54A32D192ED03ULL + 0x632BE59BD9B4E019ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::byte pattern_byte(std::uint64_t seed, std::uint64_t position) {
  return static_cast<std::byte>((pattern_word(seed, position / 8) >> (8 * (position % 8))) & 0xFF);
}

}  // namespace

void fill_pattern(std::span<std::byte> out, std::uint64_t seed, std::uint64_t stream_offset) {
  std::size_t i = 0;
  // Head up to a word boundary, then whole words, then the tail.
  while (i < out.size() && (stream_offset + i) % 8 != 0) {
    out[i] = pattern_byte(seed, stream_offset + i);
    ++i;
  }
  for (; i + 8 <= out.size(); i += 8) {
    const std::uint64_t w = pattern_word(seed, (stream_offset + i) / 8);
    unsigned char bytes[8];
    for (int b = 0; b < 8; ++b) bytes[b] = static_cast<unsigned char>((w >> (8 * b)) & 0xFF);
    std::memcpy(out.data() + i, bytes, 8);
  }
  for (; i < out.size(); ++i) out[i] = pattern_byte(seed, stream_offset + i);
}

std::optional<std::size_t> first_pattern_mismatch(std::span<const std::byte> data, std::uint64_t seed,
                                                  std::uint64_t stream_offset) {
  constexpr std::size_t k_block_bytes = 4096;
  std::byte expected[k_block_bytes];
  for (std::size_t start = 0; start < data.size(); start += k_block_bytes) {
    const std::size_t n = std::min(k_block_bytes, data.size() - start);
    fill_pattern(std::span<std::byte>(expected, n), seed, stream_offset + start);
    if (std::memcmp(expected, data.data() + start, n) != 0) {
      for (std::size_t j = 0; j < n; ++j) {
        if (expected[j] != data[start + j]) return start + j;
      }
    }
  }
  return std::nullopt;
}

}  // namespace sluice
