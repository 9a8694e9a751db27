#include "transports/tcp/tcp_wire.hpp"
#include "core/proto/wire_traits.hpp"

#include <string>

namespace sluice::transport::tcp {
namespace {

template <class T>
void put_le(PacketHeaderBytes& out, std::size_t at, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i) out[at + i] = static_cast<std::byte>((value >> (8 * i)) & 0xFFu);
}

template <class T>
T get_le(std::span<const std::byte, k_tcp_packet_header_bytes> in, std::size_t at) {
  T value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    value = static_cast<T>(value | static_cast<T>(std::to_integer<T>(in[at + i]) << (8 * i)));
  }
  return value;
}

// The last StatusCode a peer may send (the proto codec's bound).
constexpr auto k_last_status = static_cast<std::uint8_t>(proto::WireEnumMax<StatusCode>::value);

}  // namespace

PacketHeaderBytes encode_packet_header(const PacketHeader& header) {
  PacketHeaderBytes out{};
  put_le<std::uint32_t>(out, 0, k_tcp_packet_magic);
  put_le<std::uint8_t>(out, 4, static_cast<std::uint8_t>(header.kind));
  put_le<std::uint8_t>(out, 5, static_cast<std::uint8_t>(header.status));
  put_le<std::uint16_t>(out, 6, header.text_bytes);
  put_le<std::uint64_t>(out, 8, header.op);
  put_le<std::uint64_t>(out, 16, header.key);
  put_le<std::uint64_t>(out, 24, header.offset);
  put_le<std::uint64_t>(out, 32, header.length);
  return out;
}

Result<PacketHeader> decode_packet_header(std::span<const std::byte, k_tcp_packet_header_bytes> bytes) {
  const auto magic = get_le<std::uint32_t>(bytes, 0);
  if (magic != k_tcp_packet_magic) {
    return error(StatusCode::corrupt, "tcp packet: bad magic " + std::to_string(magic) + " (stream out of step)");
  }
  PacketHeader h;
  const auto kind = get_le<std::uint8_t>(bytes, 4);
  if (kind < static_cast<std::uint8_t>(PacketKind::hello) || kind > static_cast<std::uint8_t>(PacketKind::proof)) {
    return error(StatusCode::corrupt, "tcp packet: unknown kind " + std::to_string(kind));
  }
  h.kind = static_cast<PacketKind>(kind);
  const auto status = get_le<std::uint8_t>(bytes, 5);
  if (status > k_last_status) {
    return error(StatusCode::corrupt, "tcp packet: status " + std::to_string(status) + " out of range");
  }
  h.status = static_cast<StatusCode>(status);
  h.text_bytes = get_le<std::uint16_t>(bytes, 6);
  if (h.text_bytes > k_tcp_max_error_text_bytes) {
    return error(StatusCode::corrupt, "tcp packet: text_bytes " + std::to_string(h.text_bytes) +
                                          " over k_tcp_max_error_text_bytes " +
                                          std::to_string(k_tcp_max_error_text_bytes));
  }
  h.op = get_le<std::uint64_t>(bytes, 8);
  h.key = get_le<std::uint64_t>(bytes, 16);
  h.offset = get_le<std::uint64_t>(bytes, 24);
  h.length = get_le<std::uint64_t>(bytes, 32);
  return h;
}

}  // namespace sluice::transport::tcp
