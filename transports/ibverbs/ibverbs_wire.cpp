#include "transports/ibverbs/ibverbs_wire.hpp"
#include "core/proto/wire_traits.hpp"

#include <limits>

#include "transports/transport.hpp"

namespace sluice::transport::ibverbs {
namespace {

void put_le(std::span<std::byte> out, std::size_t at, std::uint64_t value, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[at + i] = static_cast<std::byte>((value >> (8 * i)) & 0xFF);
}

std::uint64_t get_le(std::span<const std::byte> in, std::size_t at, std::size_t n) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < n; ++i) value |= std::to_integer<std::uint64_t>(in[at + i]) << (8 * i);
  return value;
}

// The last StatusCode a peer may send (the proto codec's bound).
constexpr auto k_last_status = static_cast<std::uint8_t>(proto::WireEnumMax<StatusCode>::value);

}  // namespace

std::string_view to_string(ControlKind kind) {
  switch (kind) {
    case ControlKind::message_first: return "message_first";
    case ControlKind::message_more: return "message_more";
    case ControlKind::region_query: return "region_query";
    case ControlKind::region_answer: return "region_answer";
    case ControlKind::region_revoke: return "region_revoke";
    case ControlKind::region_revoke_ack: return "region_revoke_ack";
  }
  return "unknown";
}

ControlHeaderBytes encode_control_header(const ControlHeader& header) {
  ControlHeaderBytes out{};
  put_le(out, 0, k_ibv_control_magic, 4);
  put_le(out, 4, static_cast<std::uint8_t>(header.kind), 1);
  put_le(out, 5, static_cast<std::uint8_t>(header.status), 1);
  put_le(out, 6, header.text_bytes, 2);
  put_le(out, 8, header.key, 8);
  put_le(out, 16, header.a, 8);
  put_le(out, 24, header.b, 8);
  put_le(out, 32, header.c, 8);
  return out;
}

Result<ControlHeader> decode_control_header(std::span<const std::byte> bytes) {
  if (bytes.size() < k_ibv_control_header_bytes) {
    return error(StatusCode::corrupt, "ibverbs control header: " + std::to_string(bytes.size()) + " bytes, need " +
                                          std::to_string(k_ibv_control_header_bytes));
  }
  const std::uint64_t magic = get_le(bytes, 0, 4);
  if (magic != k_ibv_control_magic) {
    return error(StatusCode::corrupt, "ibverbs control header: bad magic " + std::to_string(magic));
  }
  const auto kind = static_cast<std::uint8_t>(get_le(bytes, 4, 1));
  if (kind < static_cast<std::uint8_t>(ControlKind::message_first) ||
      kind > static_cast<std::uint8_t>(ControlKind::region_revoke_ack)) {
    return error(StatusCode::corrupt, "ibverbs control header: unknown kind " + std::to_string(kind));
  }
  const auto status = static_cast<std::uint8_t>(get_le(bytes, 5, 1));
  if (status > k_last_status) {
    return error(StatusCode::corrupt, "ibverbs control header: status " + std::to_string(status) + " out of range");
  }
  ControlHeader h;
  h.kind = static_cast<ControlKind>(kind);
  h.status = static_cast<StatusCode>(status);
  h.text_bytes = static_cast<std::uint16_t>(get_le(bytes, 6, 2));
  if (h.text_bytes > k_ibv_max_error_text_bytes) {
    return error(StatusCode::corrupt, "ibverbs control header: text_bytes " + std::to_string(h.text_bytes) +
                                          " over k_ibv_max_error_text_bytes " +
                                          std::to_string(k_ibv_max_error_text_bytes));
  }
  h.key = get_le(bytes, 8, 8);
  h.a = get_le(bytes, 16, 8);
  h.b = get_le(bytes, 24, 8);
  h.c = get_le(bytes, 32, 8);
  return h;
}

HelloBytes encode_hello(const Hello& hello) {
  HelloBytes out{};
  put_le(out, 0, k_ibv_hello_magic, 4);
  put_le(out, 4, k_ibv_hello_version, 2);
  put_le(out, 8, hello.local_id, 8);
  put_le(out, 16, hello.nonce, 8);
  put_le(out, 24, hello.rail, 4);
  put_le(out, 28, hello.connection, 4);
  put_le(out, 32, hello.group, 4);
  put_le(out, 36, hello.rails, 4);
  return out;
}

Result<Hello> decode_hello(std::span<const std::byte> bytes) {
  if (bytes.size() < k_ibv_hello_bytes) {
    return error(StatusCode::corrupt, "ibverbs hello: " + std::to_string(bytes.size()) +
                                          " bytes of private data, need " + std::to_string(k_ibv_hello_bytes));
  }
  if (get_le(bytes, 0, 4) != k_ibv_hello_magic) {
    return error(StatusCode::corrupt, "ibverbs hello: bad magic (not a sluice ibverbs peer)");
  }
  const std::uint64_t version = get_le(bytes, 4, 2);
  if (version != k_ibv_hello_version) {
    return error(StatusCode::corrupt, "ibverbs hello: version " + std::to_string(version) + ", this side speaks " +
                                          std::to_string(k_ibv_hello_version));
  }
  Hello h;
  h.local_id = get_le(bytes, 8, 8);
  h.nonce = get_le(bytes, 16, 8);
  h.rail = static_cast<std::uint32_t>(get_le(bytes, 24, 4));
  h.connection = static_cast<std::uint32_t>(get_le(bytes, 28, 4));
  h.group = static_cast<std::uint32_t>(get_le(bytes, 32, 4));
  h.rails = static_cast<std::uint32_t>(get_le(bytes, 36, 4));
  constexpr std::uint32_t k_max_group = k_max_rails * k_max_connections_per_rail;
  if (h.rail >= k_max_rails || h.rails > k_max_rails || h.connection >= k_max_connections_per_rail || h.group == 0 ||
      h.group > k_max_group || (h.rails > 0 && h.rail >= h.rails)) {
    return error(StatusCode::corrupt, "ibverbs hello: rail " + std::to_string(h.rail) + " of " +
                                          std::to_string(h.rails) + ", connection " + std::to_string(h.connection) +
                                          ", group " + std::to_string(h.group) + " out of range");
  }
  return h;
}

PackedRegion pack_remote_region(const RemoteRegionDesc& desc) {
  PackedRegion out{};
  put_le(out, 0, desc.address, 8);
  put_le(out, 8, desc.rkey, 4);
  put_le(out, 12, desc.length, 8);
  return out;
}

Result<RemoteRegionDesc> unpack_remote_region(std::span<const std::byte> bytes) {
  if (bytes.size() < k_ibv_packed_region_bytes) {
    return error(StatusCode::corrupt, "ibverbs remote region: " + std::to_string(bytes.size()) + " bytes, need " +
                                          std::to_string(k_ibv_packed_region_bytes));
  }
  RemoteRegionDesc d;
  d.address = get_le(bytes, 0, 8);
  d.rkey = static_cast<std::uint32_t>(get_le(bytes, 8, 4));
  d.length = get_le(bytes, 12, 8);
  if (d.length > std::numeric_limits<std::uint64_t>::max() - d.address) {
    return error(StatusCode::corrupt, "ibverbs remote region: address " + std::to_string(d.address) + " + length " +
                                          std::to_string(d.length) + " overflows");
  }
  return d;
}

Result<std::uint64_t> remote_address_of(const RemoteRegionDesc& desc, std::uint64_t region_key, std::uint64_t offset,
                                        std::uint64_t bytes) {
  if (offset > desc.length || bytes > desc.length - offset) {
    return error(StatusCode::invalid_argument, "ibverbs: remote range [" + std::to_string(offset) + ", +" +
                                                   std::to_string(bytes) + ") outside region " +
                                                   std::to_string(region_key) + " of " + std::to_string(desc.length) +
                                                   " bytes");
  }
  return desc.address + offset;
}

}  // namespace sluice::transport::ibverbs
