#include "core/proto/crc32c.hpp"

#include <isa-l/crc.h>

#include <algorithm>

namespace sluice::proto {

namespace {

// crc32_iscsi takes an int length; feed longer spans in pieces of this size.
constexpr std::size_t k_crc_piece_bytes = std::size_t{1} << 30;

std::uint32_t crc32c_raw(const unsigned char* data, std::size_t size, std::uint32_t previous) {
  std::uint32_t state = ~previous;
  while (size > 0) {
    const std::size_t piece = std::min(size, k_crc_piece_bytes);
    // ISA-L reads the buffer only; its prototype lacks the const.
    state = crc32_iscsi(const_cast<unsigned char*>(data), static_cast<int>(piece), state);
    data += piece;
    size -= piece;
  }
  return ~state;
}

}  // namespace

std::uint32_t crc32c(std::span<const std::byte> bytes, std::uint32_t previous) {
  if (bytes.empty()) return previous;
  return crc32c_raw(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), previous);
}

std::uint32_t crc32c(std::span<const std::uint8_t> bytes, std::uint32_t previous) {
  if (bytes.empty()) return previous;
  return crc32c_raw(bytes.data(), bytes.size(), previous);
}

namespace {

constexpr std::uint32_t k_crc32c_reflected_poly = 0x82F63B78u;

std::uint32_t gf2_times(const std::uint32_t* matrix, std::uint32_t vector) {
  std::uint32_t sum = 0;
  for (int i = 0; vector != 0; ++i, vector >>= 1) {
    if ((vector & 1u) != 0) sum ^= matrix[i];
  }
  return sum;
}

void gf2_square(std::uint32_t* square, const std::uint32_t* matrix) {
  for (int i = 0; i < 32; ++i) square[i] = gf2_times(matrix, matrix[i]);
}

// crc multiplied by x^(8 * bytes): zlib's crc32_combine without the final xor.
std::uint32_t shift_slow(std::uint32_t crc, std::uint64_t bytes) {
  if (bytes == 0) return crc;
  std::uint32_t even[32];
  std::uint32_t odd[32];
  odd[0] = k_crc32c_reflected_poly;  // the operator for one zero bit
  for (int i = 1; i < 32; ++i) odd[i] = 1u << (i - 1);
  gf2_square(even, odd);  // two zero bits
  gf2_square(odd, even);  // four zero bits
  do {
    gf2_square(even, odd);  // the first square: one zero byte
    if ((bytes & 1u) != 0) crc = gf2_times(even, crc);
    bytes >>= 1;
    if (bytes == 0) break;
    gf2_square(odd, even);
    if ((bytes & 1u) != 0) crc = gf2_times(odd, crc);
    bytes >>= 1;
  } while (bytes != 0);
  return crc;
}

}  // namespace

Crc32cShift::Crc32cShift(std::uint64_t bytes) {
  for (int i = 0; i < 32; ++i) columns_[i] = shift_slow(1u << i, bytes);
}

std::uint32_t Crc32cShift::apply(std::uint32_t crc) const { return gf2_times(columns_, crc); }

}  // namespace sluice::proto
