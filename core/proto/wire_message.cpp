#include "core/proto/wire_message.hpp"

#include <array>
#include <cstddef>
#include <utility>

namespace sluice::proto {

namespace {

template <std::size_t... I>
constexpr std::array<MessageType, sizeof...(I)> collect_types(std::index_sequence<I...> /*unused*/) {
  return {std::variant_alternative_t<I, Message>::k_type...};
}
template <std::size_t... I>
constexpr std::array<std::string_view, sizeof...(I)> collect_names(std::index_sequence<I...> /*unused*/) {
  return {std::variant_alternative_t<I, Message>::k_name...};
}

constexpr auto k_indices = std::make_index_sequence<std::variant_size_v<Message>>{};
constexpr auto k_types = collect_types(k_indices);
constexpr auto k_names = collect_names(k_indices);

constexpr bool all_distinct(const auto& values) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    for (std::size_t j = i + 1; j < values.size(); ++j) {
      if (values[i] == values[j]) return false;
    }
  }
  return true;
}
static_assert(all_distinct(k_types), "two messages share a MessageType");
static_assert(all_distinct(k_names), "two messages share a name");

}  // namespace

std::string_view message_name(const Message& message) { return k_names[message.index()]; }

MessageType message_type(const Message& message) { return k_types[message.index()]; }

std::string_view message_type_name(MessageType type) {
  for (std::size_t i = 0; i < k_types.size(); ++i) {
    if (k_types[i] == type) return k_names[i];
  }
  return "unknown";
}

bool is_known_message_type(std::uint16_t raw_type) {
  for (const MessageType type : k_types) {
    if (static_cast<std::uint16_t>(type) == raw_type) return true;
  }
  return false;
}

}  // namespace sluice::proto
