// Fuzz harness: the wire-protocol decoder (core/proto/codec.hpp).
//
// Input byte 0 picks the mode:
// - even: the rest is a frame as a transport would hand it over
//   (parse_header, then decode of exactly frame_bytes());
// - odd: the rest is <type:u16 LE><payload>, sealed into a frame with a
//   correct header and CRCs first, so that mutations reach the field decoder
//   instead of stopping at the checksum (a random mutant fails the CRC with
//   probability 1 - 2^-32).
// Properties: never crash; parse_header and decode agree on the frame size;
// whatever decodes re-encodes to exactly the same bytes (canonical encoding),
// and validate() accepts it.
#include <cstring>
#include <span>

#include "core/proto/codec.hpp"
#include "core/proto/crc32c.hpp"
#include "fuzz_harness.hpp"
#include "proto_test_support.hpp"

namespace sluice::fuzz {
namespace {

constexpr const char* k_name = "wire_decode";

std::vector<std::byte> seal(std::uint16_t type, std::span<const std::uint8_t> payload) {
  std::vector<std::byte> payload_bytes(payload.size());
  if (!payload.empty()) std::memcpy(payload_bytes.data(), payload.data(), payload.size());
  return proto::testing::make_frame(type, payload_bytes);
}

void check_frame(std::span<const std::byte> frame) {
  auto header = proto::parse_header(frame);
  auto message = proto::decode(frame);
  if (!message.ok()) return;
  if (!header.ok()) property_failed(k_name, "decode accepted a frame whose header parse_header refuses");
  if (header->frame_bytes() != frame.size()) property_failed(k_name, "decode accepted a frame of the wrong size");
  if (!proto::validate(*message).ok()) property_failed(k_name, "a decoded message fails validate()");
  const std::vector<std::byte> again = proto::encode(*message);
  if (again.size() != frame.size() || std::memcmp(again.data(), frame.data(), frame.size()) != 0) {
    property_failed(k_name, "decode -> encode is not the identity (non-canonical encoding)");
  }
}

}  // namespace

std::vector<std::vector<std::uint8_t>> fuzz_seeds() {
  std::vector<std::vector<std::uint8_t>> seeds;
  for (const proto::Message& m : proto::testing::sample_messages()) {
    const std::vector<std::byte> frame = proto::encode(m);
    std::vector<std::uint8_t> raw(1 + frame.size());
    raw[0] = 0;  // mode: raw frame
    std::memcpy(raw.data() + 1, frame.data(), frame.size());
    seeds.push_back(raw);
    // The same message as <type><payload> for the sealing mode.
    std::vector<std::uint8_t> sealed(1 + 2 + frame.size() - proto::k_frame_header_bytes);
    sealed[0] = 1;
    std::memcpy(sealed.data() + 1, frame.data() + 6, 2);  // type, little-endian
    std::memcpy(sealed.data() + 3, frame.data() + proto::k_frame_header_bytes,
                frame.size() - proto::k_frame_header_bytes);
    seeds.push_back(sealed);
  }
  return seeds;
}

}  // namespace sluice::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::span<const std::uint8_t> rest(data + 1, size - 1);
  if ((data[0] & 1u) == 0) {
    sluice::fuzz::check_frame(std::as_bytes(rest));
  } else if (rest.size() >= 2) {
    const auto type = static_cast<std::uint16_t>(rest[0] | (rest[1] << 8));
    const std::vector<std::byte> frame = sluice::fuzz::seal(type, rest.subspan(2));
    sluice::fuzz::check_frame(frame);
  }
  return 0;
}
