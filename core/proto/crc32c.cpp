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

}  // namespace sluice::proto
