// Appends a message's fields to a byte buffer through its io() field list.
//
// Contract: writes exactly what WireSizer counts and WireReader reads; does
// not check limits (the caller runs WireSizer in check_limits mode first, as
// encode() does), so it cannot fail.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/proto/wire_traits.hpp"

namespace sluice::proto {

class WireWriter {
 public:
  explicit WireWriter(std::vector<std::byte>& out) : out_(out) {}

  template <class T>
  void operator()(const char* /*name*/, const T& value) {
    write_value(value);
  }

  void operator()(const char* /*name*/, const std::string& value, std::uint32_t /*max_bytes*/) {
    write_fixed(static_cast<std::uint32_t>(value.size()));
    for (const char c : value) out_.push_back(static_cast<std::byte>(c));
  }

  template <class T>
  void operator()(const char* /*name*/, const std::vector<T>& values, std::uint32_t /*max_count*/) {
    write_fixed(static_cast<std::uint32_t>(values.size()));
    for (const T& value : values) write_value(value);
  }

  // Writes `value` as a little-endian integer of sizeof(T) bytes.
  template <class T>
  void write_fixed(T value) {
    using U = std::make_unsigned_t<T>;
    const auto raw = static_cast<U>(value);
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      out_.push_back(static_cast<std::byte>((raw >> (8 * i)) & 0xFFu));
    }
  }

 private:
  template <class T>
  void write_value(const T& value) {
    if constexpr (std::is_same_v<T, bool>) {
      write_fixed(static_cast<std::uint8_t>(value ? 1 : 0));
    } else if constexpr (WireInteger<T>) {
      write_fixed(value);
    } else if constexpr (std::is_enum_v<T>) {
      static_assert(WireEnum<T>, "enum on the wire needs an unsigned underlying type and WireEnumMax");
      write_fixed(static_cast<std::underlying_type_t<T>>(value));
    } else {
      visit_fields_const(*this, value);
    }
  }

  std::vector<std::byte>& out_;
};

}  // namespace sluice::proto
