#include "core/proto/codec.hpp"

#include "core/common/assert.hpp"
#include <optional>
#include <string>
#include <utility>

#include "core/proto/crc32c.hpp"
#include "core/proto/wire_reader.hpp"
#include "core/proto/wire_sizer.hpp"
#include "core/proto/wire_writer.hpp"

namespace sluice::proto {

namespace {

// Header field offsets (see the layout in codec.hpp).
constexpr std::size_t k_magic_at = 0;
constexpr std::size_t k_version_at = 4;
constexpr std::size_t k_type_at = 6;
constexpr std::size_t k_payload_bytes_at = 8;
constexpr std::size_t k_payload_crc_at = 12;
constexpr std::size_t k_header_crc_at = 16;
static_assert(k_header_crc_at + sizeof(std::uint32_t) == k_frame_header_bytes);

template <class T>
T load_le(std::span<const std::byte> bytes, std::size_t at) {
  T value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    value = static_cast<T>(value | static_cast<T>(std::to_integer<T>(bytes[at + i]) << (8 * i)));
  }
  return value;
}

template <class T>
void store_le(std::span<std::byte> bytes, std::size_t at, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    bytes[at + i] = static_cast<std::byte>((value >> (8 * i)) & 0xFFu);
  }
}

std::string hex(std::uint32_t value) {
  static constexpr char k_digits[] = "0123456789abcdef";
  std::string out = "0x";
  bool started = false;
  for (int shift = 28; shift >= 0; shift -= 4) {
    const auto digit = (value >> shift) & 0xFu;
    if (digit != 0 || started || shift == 0) {
      out += k_digits[digit];
      started = true;
    }
  }
  return out;
}

Status corrupt(const std::string& message) { return Status(StatusCode::corrupt, message); }

// Sizes (and in check_limits mode validates) the payload of one message.
template <class T>
WireSizer size_payload(const T& message, WireSizer::Mode mode) {
  WireSizer sizer(mode, T::k_name);
  visit_fields_const(sizer, message);
  return sizer;
}

template <class T>
Result<Message> decode_as(std::span<const std::byte> payload) {
  Message message{std::in_place_type<T>};
  WireReader reader(payload, k_frame_header_bytes, T::k_name);
  visit_fields(reader, std::get<T>(message));
  reader.expect_end();
  if (!reader.ok()) return reader.status();
  return message;
}

template <std::size_t... I>
Result<Message> decode_payload(MessageType type, std::span<const std::byte> payload,
                               std::index_sequence<I...> /*unused*/) {
  std::optional<Result<Message>> out;
  const bool found = ((std::variant_alternative_t<I, Message>::k_type == type
                           ? (out.emplace(decode_as<std::variant_alternative_t<I, Message>>(payload)), true)
                           : false) ||
                      ...);
  if (!found) {
    // parse_header has checked the type, so this is a broken invariant.
    return Status(StatusCode::internal, "decode: no message for type " + hex(static_cast<std::uint16_t>(type)));
  }
  return std::move(*out);
}

}  // namespace

Result<FrameHeader> parse_header(std::span<const std::byte> bytes) {
  if (bytes.size() < k_frame_header_bytes) {
    return corrupt("frame header truncated: " + std::to_string(bytes.size()) + " of " +
                   std::to_string(k_frame_header_bytes) + " bytes");
  }
  const auto magic = load_le<std::uint32_t>(bytes, k_magic_at);
  if (magic != k_frame_magic) {
    return corrupt("bad frame magic " + hex(magic) + " (expected " + hex(k_frame_magic) + " \"SLUI\") at byte 0");
  }
  FrameHeader header;
  header.version = load_le<std::uint16_t>(bytes, k_version_at);
  const auto raw_type = load_le<std::uint16_t>(bytes, k_type_at);
  header.type = static_cast<MessageType>(raw_type);
  header.payload_bytes = load_le<std::uint32_t>(bytes, k_payload_bytes_at);
  header.payload_crc32c = load_le<std::uint32_t>(bytes, k_payload_crc_at);
  const auto header_crc = load_le<std::uint32_t>(bytes, k_header_crc_at);
  const auto computed_crc = crc32c(bytes.first(k_header_crc_at));
  if (header_crc != computed_crc) {
    std::string message =
        "frame header CRC32C mismatch: header says " + hex(header_crc) + ", bytes 0..15 give " + hex(computed_crc);
    if (header.version != k_wire_version) {
      // A future version may lay out its header differently; say so rather than only "corrupt".
      message += " (version field reads " + std::to_string(header.version) + ", this build speaks " +
                 std::to_string(k_wire_version) + ")";
    }
    return corrupt(message);
  }
  if (header.version != k_wire_version) {
    return Status(StatusCode::invalid_argument, "unsupported wire version " + std::to_string(header.version) +
                                                    " at byte 4; this build speaks version " +
                                                    std::to_string(k_wire_version));
  }
  if (!is_known_message_type(raw_type)) {
    return Status(StatusCode::invalid_argument, "unknown message type " + hex(raw_type) + " at byte 6");
  }
  if (header.payload_bytes > k_max_message_bytes) {
    return corrupt(std::string(message_type_name(header.type)) + ": payload_bytes " +
                   std::to_string(header.payload_bytes) + " exceeds k_max_message_bytes " +
                   std::to_string(k_max_message_bytes) + " at byte 8");
  }
  return header;
}

Status validate(const Message& message) {
  return std::visit(
      [](const auto& m) -> Status {
        using T = std::decay_t<decltype(m)>;
        const WireSizer sizer = size_payload(m, WireSizer::Mode::check_limits);
        if (!sizer.status().ok()) return sizer.status();
        if (sizer.bytes() > k_max_message_bytes) {
          return Status(StatusCode::invalid_argument,
                        std::string(T::k_name) + ": payload of " + std::to_string(sizer.bytes()) +
                            " bytes exceeds k_max_message_bytes " + std::to_string(k_max_message_bytes));
        }
        return ok_status();
      },
      message);
}

std::size_t encoded_size(const Message& message) {
  return std::visit(
      [](const auto& m) { return k_frame_header_bytes + size_payload(m, WireSizer::Mode::size_only).bytes(); },
      message);
}

namespace {

// Writes the frame of `message` (payload_bytes of payload) at the end of `out`.
void append_frame(const Message& message, std::size_t payload_bytes, std::vector<std::byte>& out) {
  const std::size_t start = out.size();
  out.reserve(start + k_frame_header_bytes + payload_bytes);
  out.resize(start + k_frame_header_bytes);
  WireWriter writer(out);
  std::visit([&writer](const auto& m) { visit_fields_const(writer, m); }, message);
  SLUICE_ASSERT(out.size() == start + k_frame_header_bytes + payload_bytes);

  const std::span<std::byte> frame(out.data() + start, k_frame_header_bytes + payload_bytes);
  store_le(frame, k_magic_at, k_frame_magic);
  store_le(frame, k_version_at, k_wire_version);
  store_le(frame, k_type_at, static_cast<std::uint16_t>(message_type(message)));
  store_le(frame, k_payload_bytes_at, static_cast<std::uint32_t>(payload_bytes));
  store_le(frame, k_payload_crc_at, crc32c(std::span<const std::byte>(frame.subspan(k_frame_header_bytes))));
  store_le(frame, k_header_crc_at, crc32c(std::span<const std::byte>(frame.first(k_header_crc_at))));
}

}  // namespace

Status encode_into(const Message& message, std::vector<std::byte>& out) {
  Status status = validate(message);
  if (!status.ok()) return status;
  append_frame(message, encoded_size(message) - k_frame_header_bytes, out);
  return ok_status();
}

std::vector<std::byte> encode(const Message& message) {
  std::vector<std::byte> out;
  append_frame(message, encoded_size(message) - k_frame_header_bytes, out);
  return out;
}

Result<Message> decode(std::span<const std::byte> frame) {
  Result<FrameHeader> header = parse_header(frame);
  if (!header.ok()) return header.status();
  const std::string_view name = message_type_name(header->type);
  if (frame.size() < header->frame_bytes()) {
    return corrupt(std::string(name) + ": frame truncated: " + std::to_string(frame.size()) + " of " +
                   std::to_string(header->frame_bytes()) + " bytes");
  }
  if (frame.size() > header->frame_bytes()) {
    return corrupt(std::string(name) + ": " + std::to_string(frame.size() - header->frame_bytes()) +
                   " trailing bytes after the frame end at byte " + std::to_string(header->frame_bytes()));
  }
  const auto payload = frame.subspan(k_frame_header_bytes);
  const auto computed_crc = crc32c(payload);
  if (computed_crc != header->payload_crc32c) {
    return corrupt(std::string(name) + ": payload CRC32C mismatch: header says " + hex(header->payload_crc32c) +
                   ", payload gives " + hex(computed_crc));
  }
  return decode_payload(header->type, payload, std::make_index_sequence<std::variant_size_v<Message>>{});
}

}  // namespace sluice::proto
