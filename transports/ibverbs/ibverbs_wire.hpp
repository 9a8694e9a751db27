// What the ibverbs transport puts on the wire itself (the proto frames it
// carries are opaque to it): the control header that starts every SEND on a
// peer's control queue pair, the hello carried as rdma_cm private data, and
// the packed form of a remote region (address, rkey, length).
//
// Control header (little-endian, 40 bytes), at the start of every SEND:
//
//   offset size field
//        0    4 magic       k_ibv_control_magic, the bytes "SLI1" (1 = this layout)
//        4    1 kind        ControlKind
//        5    1 status      StatusCode of a region_answer (0 otherwise)
//        6    2 text_bytes  error text after the header (region_answer with status != ok)
//        8    8 key         message_first: tag; region_*: the region key
//       16    8 a           message_first: frame bytes in total; region_query/answer: request id
//       24    8 b           region_query/answer: the owner's rail
//       32    8 c           reserved, 0
//
// What follows the header, by kind:
//   message_first  the first fragment of a proto frame (up to a slot less the header)
//   message_more   the next fragment of the frame being reassembled (RC delivers in order)
//   region_query   nothing: "tell me how to reach your region `key` on your rail `b`"
//   region_answer  status ok: the packed RemoteRegionDesc (k_ibv_packed_region_bytes);
//                  else `text_bytes` of error text
//   region_revoke  nothing: "region `key` is going away; stop using it, then ack"
//   region_revoke_ack nothing
//
// Hello (rdma_cm private data of the connect request and of the accept, 40
// bytes: a REQ carries at most 56 bytes of private data through rdma_cm, see
// rdma_connect(3)):
//
//        0    4 magic       k_ibv_hello_magic, "SLH1"
//        4    2 version     k_ibv_hello_version
//        6    2 reserved    0
//        8    8 local_id    the sender's TransportConfig::local_id
//       16    8 nonce       connector: its peer's nonce (groups the connections of one peer)
//       24    4 rail        connector: its local rail; acceptor: 0
//       28    4 connection  index of the connection within the rail
//       32    4 group       connections in the group (rails x connections per rail)
//       36    4 rails       connector: its rail count
//
// Every field is bounds-checked before the receiver acts on it; RC queue
// pairs checksum the bytes (ICRC), the magic catches a stray or old peer.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "core/common/status.hpp"
#include "transports/transport.hpp"

namespace sluice::transport::ibverbs {

inline constexpr std::size_t k_ibv_control_header_bytes = 40;
inline constexpr std::uint32_t k_ibv_control_magic = 0x31494C53u;  // "SLI1"
inline constexpr std::size_t k_ibv_hello_bytes = 40;
inline constexpr std::uint32_t k_ibv_hello_magic = 0x31484C53u;  // "SLH1"
inline constexpr std::uint16_t k_ibv_hello_version = 1;
// Error text a region_answer carries (a key and a reason).
inline constexpr std::uint16_t k_ibv_max_error_text_bytes = 512;
// Bytes of RemoteRegionDesc in its packed form (address 8, rkey 4, length 8).
inline constexpr std::size_t k_ibv_packed_region_bytes = 20;

enum class ControlKind : std::uint8_t {
  message_first = 1,
  message_more = 2,
  region_query = 3,
  region_answer = 4,
  region_revoke = 5,
  region_revoke_ack = 6,
};

struct ControlHeader {
  ControlKind kind = ControlKind::message_first;
  StatusCode status = StatusCode::ok;
  std::uint16_t text_bytes = 0;
  std::uint64_t key = 0;
  std::uint64_t a = 0;
  std::uint64_t b = 0;
  std::uint64_t c = 0;

  bool operator==(const ControlHeader&) const = default;
};

using ControlHeaderBytes = std::array<std::byte, k_ibv_control_header_bytes>;

ControlHeaderBytes encode_control_header(const ControlHeader& header);
// corrupt: short input, bad magic, unknown kind, status out of range, or
// text_bytes over k_ibv_max_error_text_bytes.
Result<ControlHeader> decode_control_header(std::span<const std::byte> bytes);

struct Hello {
  std::uint64_t local_id = 0;
  std::uint64_t nonce = 0;
  std::uint32_t rail = 0;
  std::uint32_t connection = 0;
  std::uint32_t group = 0;
  std::uint32_t rails = 0;

  bool operator==(const Hello&) const = default;
};

using HelloBytes = std::array<std::byte, k_ibv_hello_bytes>;

HelloBytes encode_hello(const Hello& hello);
// corrupt: short input, bad magic or version, or fields out of range (rail and
// rails <= k_max_rails, connection < k_max_connections_per_rail, group in
// 1..k_max_rails x k_max_connections_per_rail, connection index inside it).
Result<Hello> decode_hello(std::span<const std::byte> bytes);

// How a peer reaches one registered region on one of the owner's rails: the
// region's base virtual address (or the dmabuf IOVA base), the rkey of its
// memory region on that rail's device, and its length. The transport
// contract's RemoteRegionAccess: what a region_answer packs, what
// remote_access() grants and what a ReadChunk/WriteChunk carries
// (proto::RdmaRegionDesc) for a server to write straight into a client's
// (GPU) memory without asking.
using RemoteRegionDesc = RemoteRegionAccess;

using PackedRegion = std::array<std::byte, k_ibv_packed_region_bytes>;

PackedRegion pack_remote_region(const RemoteRegionDesc& desc);
// corrupt: short input, or address + length overflowing 64 bits.
Result<RemoteRegionDesc> unpack_remote_region(std::span<const std::byte> bytes);

// The remote address of byte `offset` of a region, checking that
// [offset, +bytes) lies inside it: invalid_argument naming the range and the
// region otherwise.
Result<std::uint64_t> remote_address_of(const RemoteRegionDesc& desc, std::uint64_t region_key, std::uint64_t offset,
                                        std::uint64_t bytes);

std::string_view to_string(ControlKind kind);

}  // namespace sluice::transport::ibverbs
