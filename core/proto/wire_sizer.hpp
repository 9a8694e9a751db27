// Walks a message's io() field list to compute its payload size and, when
// asked, to check it against the wire limits before anything is encoded.
//
// Contract: never allocates while the message is valid (SimEnv sizes every
// message it sends with it); the first limit violation sets status() to
// invalid_argument with the message name and field path. Sizes are exact:
// WireWriter produces exactly bytes() payload bytes for the same message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.hpp"
#include "core/proto/wire_field_path.hpp"
#include "core/proto/wire_traits.hpp"

namespace sluice::proto {

class WireSizer {
 public:
  enum class Mode { size_only, check_limits };

  explicit WireSizer(Mode mode = Mode::size_only, std::string_view message_name = {})
      : mode_(mode), message_name_(message_name) {}

  template <class T>
  void operator()(const char* name, const T& value) {
    enter(name);
    visit_value(value);
    leave();
  }

  void operator()(const char* name, const std::string& value, std::uint32_t max_bytes) {
    bytes_ += sizeof(std::uint32_t) + value.size();
    if (checking() && value.size() > max_bytes) {
      enter(name);
      fail("string length " + std::to_string(value.size()) + " exceeds the limit " + std::to_string(max_bytes));
      leave();
    }
  }

  template <class T>
  void operator()(const char* name, const std::vector<T>& values, std::uint32_t max_count) {
    enter(name);
    bytes_ += sizeof(std::uint32_t);
    if (checking() && values.size() > max_count) {
      fail("count " + std::to_string(values.size()) + " exceeds the limit " + std::to_string(max_count));
    }
    if constexpr (WireInteger<T>) {
      bytes_ += values.size() * sizeof(T);
    } else {
      for (std::size_t i = 0; i < values.size(); ++i) {
        if (checking()) path_.set_index(i);
        visit_value(values[i]);
      }
    }
    leave();
  }

  std::size_t bytes() const { return bytes_; }
  const Status& status() const { return status_; }

  // Bytes of the smallest encoding of a T (empty strings and vectors): the
  // decoder's bound on how many elements a payload can hold.
  template <class T>
  static std::size_t min_bytes() {
    WireSizer sizer;
    const T value{};
    sizer.visit_value(value);
    return sizer.bytes_ > 0 ? sizer.bytes_ : 1;
  }

 private:
  template <class T>
  void visit_value(const T& value) {
    if constexpr (std::is_same_v<T, bool>) {
      bytes_ += 1;
    } else if constexpr (WireInteger<T>) {
      bytes_ += sizeof(T);
    } else if constexpr (std::is_enum_v<T>) {
      static_assert(WireEnum<T>, "enum on the wire needs an unsigned underlying type and WireEnumMax");
      bytes_ += sizeof(T);
      const auto raw = static_cast<std::underlying_type_t<T>>(value);
      if (checking() && raw > wire_enum_max<T>()) {
        fail("enum value " + std::to_string(raw) + " is above the largest known value " +
             std::to_string(wire_enum_max<T>()));
      }
    } else {
      visit_fields_const(*this, value);
    }
  }

  bool checking() const { return mode_ == Mode::check_limits; }
  void enter(const char* name) {
    if (checking()) path_.push(name);
  }
  void leave() {
    if (checking()) path_.pop();
  }

  void fail(const std::string& problem) {
    if (!status_.ok()) return;
    status_ = Status(StatusCode::invalid_argument, path_.render(message_name_) + ": " + problem);
  }

  Mode mode_;
  std::string_view message_name_;
  std::size_t bytes_ = 0;
  WireFieldPath path_;
  Status status_;
};

}  // namespace sluice::proto
