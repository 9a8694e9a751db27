// Frames: how a Message travels as bytes.
//
// Layout (all integers little-endian):
//
//   offset size field
//        0    4 magic           k_frame_magic, the bytes "SLUI"
//        4    2 version         k_wire_version
//        6    2 type            MessageType
//        8    4 payload_bytes   <= k_max_message_bytes
//       12    4 payload_crc32c  CRC32C of the payload
//       16    4 header_crc32c   CRC32C of bytes 0..15
//       20    . payload         the message's fields in io() order (wire_traits.hpp)
//
// Why a header CRC as well: a stream transport reads the header first and
// then waits for payload_bytes more; a flipped bit in payload_bytes must be
// caught before it makes the reader wait for, or allocate, the wrong amount.
// Magic and version keep their place in every future version.
//
// Errors (never UB, never an exception, never an allocation larger than the
// frame justifies):
// - corrupt: the bytes are not a valid frame of this wire version: bad magic,
//   a CRC mismatch, truncation, bytes after the frame, or a payload that breaks
//   the field rules (a limit, an enum range, a bool other than 0/1, a length
//   running past the end, bytes left over after the last field);
// - invalid_argument: an intact frame this build does not speak (another
//   wire version, an unknown message type), and, from validate() and
//   encode_into(), a message that breaks a limit.
// Messages name what was being read: the message type once it is known, the
// field path ("MapsReply.targets[3].pool") and the byte offset in the frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/common/status.hpp"
#include "core/proto/message_type.hpp"
#include "core/proto/wire_message.hpp"

namespace sluice::proto {

inline constexpr std::size_t k_frame_header_bytes = 20;

// A checked frame header (magic, header CRC, version, type and payload limit
// already verified).
struct FrameHeader {
  std::uint16_t version = k_wire_version;
  MessageType type = MessageType::ack;
  std::uint32_t payload_bytes = 0;
  std::uint32_t payload_crc32c = 0;

  // Header plus payload: how many bytes a stream transport must collect
  // before calling decode().
  std::size_t frame_bytes() const { return k_frame_header_bytes + payload_bytes; }
  bool operator==(const FrameHeader&) const = default;
};

// Checks the first k_frame_header_bytes of `bytes` (the rest is ignored).
// Fewer bytes than a header: corrupt.
Result<FrameHeader> parse_header(std::span<const std::byte> bytes);

// Checks a message against the wire limits (string lengths, vector counts,
// enum ranges, total payload size) without encoding it: invalid_argument
// naming the field. SimEnv calls it so that a message too big for the wire
// fails in simulation exactly as it would on hardware.
Status validate(const Message& message);

// Bytes of the frame encode() produces (header + payload). Exact, and
// allocation-free; it does not check limits (validate() does).
std::size_t encoded_size(const Message& message);

// Appends the frame of `message` to `out` after validate(); on error `out` is
// unchanged. Transports send what this produces.
Status encode_into(const Message& message, std::vector<std::byte>& out);

// The frame of `message`, without the limit check: for messages known to be
// valid (services build them within the limits) and for tests. A message that
// breaks a limit still gives bytes, and decode() refuses them naming the field.
std::vector<std::byte> encode(const Message& message);

// Decodes exactly one whole frame: `frame` must hold the header and exactly
// payload_bytes more (fewer: truncated; more: trailing bytes), both corrupt.
Result<Message> decode(std::span<const std::byte> frame);

}  // namespace sluice::proto
