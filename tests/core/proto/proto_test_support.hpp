// Helpers for the proto tests: one non-trivial sample of every message, and
// tools to craft frames by hand (following the layout documented in
// core/proto/codec.hpp, independently of the encoder).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/proto/crc32c.hpp"
#include "core/proto/codec.hpp"

namespace sluice::proto::testing {

// Appends little-endian fields to a payload.
class ByteBuilder {
 public:
  ByteBuilder& u8(std::uint8_t v) { return le(v, 1); }
  ByteBuilder& u16(std::uint16_t v) { return le(v, 2); }
  ByteBuilder& u32(std::uint32_t v) { return le(v, 4); }
  ByteBuilder& u64(std::uint64_t v) { return le(v, 8); }
  ByteBuilder& str(const std::string& s) {
    u32(static_cast<std::uint32_t>(s.size()));
    for (const char c : s) bytes_.push_back(static_cast<std::byte>(c));
    return *this;
  }
  ByteBuilder& raw(std::size_t count, std::uint8_t fill) {
    bytes_.insert(bytes_.end(), count, static_cast<std::byte>(fill));
    return *this;
  }
  const std::vector<std::byte>& bytes() const { return bytes_; }

 private:
  ByteBuilder& le(std::uint64_t v, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) bytes_.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xFF));
    return *this;
  }
  std::vector<std::byte> bytes_;
};

inline void put_le32(std::vector<std::byte>& frame, std::size_t at, std::uint32_t v) {
  for (std::size_t i = 0; i < 4; ++i) frame[at + i] = static_cast<std::byte>((v >> (8 * i)) & 0xFF);
}
inline void put_le16(std::vector<std::byte>& frame, std::size_t at, std::uint16_t v) {
  for (std::size_t i = 0; i < 2; ++i) frame[at + i] = static_cast<std::byte>((v >> (8 * i)) & 0xFF);
}

// Rewrites payload_bytes and both CRCs so that the frame is intact again
// after a test changed it; the payload is everything after byte 20.
inline void reseal(std::vector<std::byte>& frame) {
  put_le32(frame, 8, static_cast<std::uint32_t>(frame.size() - 20));
  put_le32(frame, 12, crc32c(std::span<const std::byte>(frame).subspan(20)));
  put_le32(frame, 16, crc32c(std::span<const std::byte>(frame).first(16)));
}

// A whole, correctly checksummed frame around a hand-made payload.
inline std::vector<std::byte> make_frame(std::uint16_t type, const std::vector<std::byte>& payload,
                                         std::uint16_t version = k_wire_version) {
  std::vector<std::byte> frame(20 + payload.size());
  put_le32(frame, 0, 0x49554C53u);  // "SLUI"
  put_le16(frame, 4, version);
  put_le16(frame, 6, type);
  std::copy(payload.begin(), payload.end(), frame.begin() + 20);
  reseal(frame);
  return frame;
}

// The frame of a message that must pass validate(); empty if it does not
// (every caller checks the frame, so that fails the test).
inline std::vector<std::byte> encode_valid(const Message& message) {
  std::vector<std::byte> frame;
  if (!encode_into(message, frame).ok()) return {};
  return frame;
}

// One sample of every Message alternative, with values that exercise the
// encoding: extremes of every integer width, negative times, strings with
// NUL and non-ASCII bytes, empty and non-empty vectors, every enum.
std::vector<Message> sample_messages();

}  // namespace sluice::proto::testing
