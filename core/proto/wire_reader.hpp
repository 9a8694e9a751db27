// Decodes a payload through a message's io() field list, checking every read.
//
// Contract:
// - Never reads outside `payload`, never throws, never has UB on any input.
// - Allocates at most what the payload can justify: a string is allocated only
//   after its length is checked against both its limit and the bytes left; a
//   vector reserves only after count <= limit and count * (smallest encoding
//   of one element) <= bytes left.
// - The first problem stops decoding; status() then is `corrupt`, with a
//   message naming the message, the field path and the byte offset in the
//   frame. Values decoded before the problem are left in place, unspecified.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.hpp"
#include "core/proto/wire_field_path.hpp"
#include "core/proto/wire_sizer.hpp"
#include "core/proto/wire_traits.hpp"

namespace sluice::proto {

class WireReader {
 public:
  // `frame_offset` is where `payload` starts in its frame (for error messages);
  // `message_name` must outlive the reader.
  WireReader(std::span<const std::byte> payload, std::size_t frame_offset, std::string_view message_name);

  template <class T>
  void operator()(const char* name, T& value) {
    if (!status_.ok()) return;
    path_.push(name);
    read_value(value);
    path_.pop();
  }

  void operator()(const char* name, std::string& value, std::uint32_t max_bytes);

  template <class T>
  void operator()(const char* name, std::vector<T>& values, std::uint32_t max_count) {
    static_assert(!std::is_same_v<T, bool> && !std::is_same_v<T, std::string>,
                  "vector<bool> and vector<string> are not wire types");
    if (!status_.ok()) return;
    path_.push(name);
    read_vector(values, max_count);
    path_.pop();
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  std::size_t remaining_bytes() const { return payload_.size() - pos_; }

  // After the last field: anything left over is an error (the sender's field
  // list differs from ours).
  void expect_end();

 private:
  template <class T>
  void read_value(T& value) {
    if constexpr (std::is_same_v<T, bool>) {
      const std::size_t at = pos_;
      std::uint8_t raw = 0;
      if (!read_fixed(raw)) return;
      if (raw > 1) {
        fail(at, "bool byte is " + std::to_string(raw) + ", must be 0 or 1");
        return;
      }
      value = raw == 1;
    } else if constexpr (WireInteger<T>) {
      read_fixed(value);
    } else if constexpr (std::is_enum_v<T>) {
      static_assert(WireEnum<T>, "enum on the wire needs an unsigned underlying type and WireEnumMax");
      using U = std::underlying_type_t<T>;
      const std::size_t at = pos_;
      U raw = 0;
      if (!read_fixed(raw)) return;
      if (raw > wire_enum_max<T>()) {
        fail(at, "enum value " + std::to_string(raw) + " is above the largest known value " +
                     std::to_string(wire_enum_max<T>()));
        return;
      }
      value = static_cast<T>(raw);
    } else {
      visit_fields(*this, value);
    }
  }

  template <class T>
  void read_vector(std::vector<T>& values, std::uint32_t max_count) {
    const std::size_t at = pos_;
    std::uint32_t count = 0;
    if (!read_fixed(count)) return;
    if (count > max_count) {
      fail(at, "count " + std::to_string(count) + " exceeds the limit " + std::to_string(max_count));
      return;
    }
    // Check against the bytes left before reserving: a forged count must not
    // make us allocate more than the frame carries.
    const std::size_t element_min_bytes = WireSizer::min_bytes<T>();
    if (count > remaining_bytes() / element_min_bytes) {
      fail(at, "count " + std::to_string(count) + " needs at least " +
                   std::to_string(std::uint64_t{count} * element_min_bytes) + " bytes, only " +
                   std::to_string(remaining_bytes()) + " remain");
      return;
    }
    values.clear();
    values.reserve(count);
    for (std::uint32_t i = 0; i < count && status_.ok(); ++i) {
      path_.set_index(i);
      T element{};
      read_value(element);
      values.push_back(std::move(element));
    }
  }

  // Reads a little-endian integer of sizeof(T) bytes.
  template <class T>
  bool read_fixed(T& out) {
    if (remaining_bytes() < sizeof(T)) {
      fail(pos_,
           "needs " + std::to_string(sizeof(T)) + " bytes, only " + std::to_string(remaining_bytes()) + " remain");
      return false;
    }
    using U = std::make_unsigned_t<T>;
    U raw = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      raw = static_cast<U>(
          raw | static_cast<U>(static_cast<U>(std::to_integer<std::uint8_t>(payload_[pos_ + i])) << (8 * i)));
    }
    pos_ += sizeof(T);
    out = std::bit_cast<T>(raw);
    return true;
  }

  void fail(std::size_t payload_offset, const std::string& problem);

  std::span<const std::byte> payload_;
  std::size_t frame_offset_;
  std::string_view message_name_;
  std::size_t pos_ = 0;
  WireFieldPath path_;
  Status status_;
};

}  // namespace sluice::proto
