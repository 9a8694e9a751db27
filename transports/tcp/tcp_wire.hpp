// The TCP transport's packet header: what precedes every unit on a socket.
//
// Layout (little-endian, 40 bytes):
//
//   offset size field
//        0    4 magic       k_tcp_packet_magic, the bytes "SLT1" (1 = this layout)
//        4    1 kind        PacketKind
//        5    1 status      StatusCode of an ack/reply (0 otherwise)
//        6    2 text_bytes  error text that follows an ack/reply (<= k_tcp_max_error_text_bytes)
//        8    8 op          hello: sender's local_id; put/get: the sender's piece id
//       16    8 key         hello: connector's peer nonce; message: tag; put/get: region key
//       24    8 offset      hello: rail << 32 | connection index; put/get: byte offset in the region
//       32    8 length      hello: connections in the group; message: frame bytes; put/get data: body bytes
//
// What follows the header, by kind:
//   hello        nothing (the acceptor answers each hello with its own hello)
//   message      `length` bytes: one proto frame (core/proto/codec.hpp)
//   put          `length` body bytes, placed by the receiver into region `key` at `offset`
//   put_ack      `text_bytes` of error text when status != ok
//   get_request  nothing: asks for `length` bytes of region `key` at `offset`
//   get_data     status ok: `length` body bytes; else `text_bytes` of error text
//   challenge    `length` = k_tcp_auth_bytes: a fresh random nonce (tcp_auth.hpp)
//   proof        `length` = k_tcp_auth_bytes: HMAC-SHA256 over the peer's nonce
//
// TCP checksums the bytes; the magic catches a desynchronised stream, and
// every field is bounds-checked before the receiver acts on it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/common/status.hpp"

namespace sluice::transport::tcp {

inline constexpr std::size_t k_tcp_packet_header_bytes = 40;
inline constexpr std::uint32_t k_tcp_packet_magic = 0x31544C53u;  // "SLT1"
// Error text an ack carries back to the initiator (a key, a range, a reason).
inline constexpr std::uint16_t k_tcp_max_error_text_bytes = 512;

enum class PacketKind : std::uint8_t {
  hello = 1,
  message = 2,
  put = 3,
  put_ack = 4,
  get_request = 5,
  get_data = 6,
  challenge = 7,
  proof = 8,
};

struct PacketHeader {
  PacketKind kind = PacketKind::hello;
  StatusCode status = StatusCode::ok;
  std::uint16_t text_bytes = 0;
  std::uint64_t op = 0;
  std::uint64_t key = 0;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;

  bool operator==(const PacketHeader&) const = default;
};

using PacketHeaderBytes = std::array<std::byte, k_tcp_packet_header_bytes>;

PacketHeaderBytes encode_packet_header(const PacketHeader& header);

// corrupt: bad magic, unknown kind, a status out of range, or text_bytes over
// the limit. Kind-specific limits (lengths) are the receiver's to check.
Result<PacketHeader> decode_packet_header(std::span<const std::byte, k_tcp_packet_header_bytes> bytes);

}  // namespace sluice::transport::tcp
