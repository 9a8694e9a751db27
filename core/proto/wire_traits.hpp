// How C++ types map onto the wire (the one place that says so).
//
// A message is a plain struct listing its fields once, in wire order:
//
//   struct Mkdir {
//     static constexpr MessageType k_type = MessageType::mkdir;
//     static constexpr std::string_view k_name = "Mkdir";
//     RequestId request_id = 0;
//     std::string path;
//     std::uint32_t mode = 0;
//     template <class Io> void io(Io& f) {
//       f("request_id", request_id);
//       f("path", path, k_max_path_bytes);
//       f("mode", mode);
//     }
//   };
//
// The same io() drives WireWriter (encode), WireReader (decode) and WireSizer
// (size and limit checks), so the three cannot disagree. Field kinds:
// - integers: fixed width, little-endian, two's complement for signed;
// - bool: one byte, 0 or 1 (anything else is refused);
// - enums: their underlying (unsigned) integer, refused above WireEnumMax<E>::value;
// - std::string: u32 byte count then the bytes; f(name, s, max_bytes);
// - std::vector<T>: u32 element count then the elements; f(name, v, max_count);
// - nested structs: their io() member, or a wire_fields(f, value) overload for
//   types from core/common that cannot carry a member (Endpoint, MemHandle).
// The field names appear in error messages ("Create.path: length 5000 exceeds 4096").
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "core/common/ids.hpp"
#include "core/common/mem_handle.hpp"
#include "core/common/status.hpp"

namespace sluice::proto {

// The largest valid value of an enum on the wire. Specialise for every enum a
// message carries; decoding refuses larger values. Enums must be dense from 0.
template <class E>
struct WireEnumMax;

// Keep these in step with the last enumerator of core/common's enums.
template <>
struct WireEnumMax<StatusCode> {
  static constexpr StatusCode value = StatusCode::permission_denied;
};
template <>
struct WireEnumMax<MemKind> {
  static constexpr MemKind value = MemKind::gpu;
};

template <class T>
concept WireInteger = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <class T>
concept WireEnum = std::is_enum_v<T> && std::is_unsigned_v<std::underlying_type_t<T>> && requires {
  WireEnumMax<T>::value;
};

template <class T>
constexpr std::underlying_type_t<T> wire_enum_max() {
  return static_cast<std::underlying_type_t<T>>(WireEnumMax<T>::value);
}

// Field lists of core/common types.
template <class Io>
void wire_fields(Io& f, Endpoint& e) {
  f("node", e.node);
  f("service", e.service);
}

template <class Io>
void wire_fields(Io& f, MemHandle& h) {
  f("node", h.node);
  f("kind", h.kind);
  f("device", h.device);
  f("region", h.region);
  f("offset", h.offset);
  f("length", h.length);
}

// Runs the field list of a nested struct through `f`.
template <class Io, class T>
void visit_fields(Io& f, T& value) {
  if constexpr (requires { value.io(f); }) {
    value.io(f);
  } else {
    wire_fields(f, value);
  }
}

// Encoders only read the fields, but io() is one non-const template for all
// three directions; this is the single place where constness is cast away.
template <class Io, class T>
void visit_fields_const(Io& f, const T& value) {
  visit_fields(f, const_cast<T&>(value));
}

}  // namespace sluice::proto
