#include "core/proto/wire_enums.hpp"

#include <array>

namespace sluice::proto {

namespace {

// Looks `value` up in a table of names indexed by the enum's wire value.
template <class E, std::size_t N>
std::string_view name_of(E value, const std::array<std::string_view, N>& names) {
  static_assert(N == std::size_t{wire_enum_max<E>()} + 1, "one name per enum value");
  const auto index = static_cast<std::size_t>(value);
  return index < N ? names[index] : std::string_view("unknown");
}

}  // namespace

std::string_view to_string(StripePattern value) {
  return name_of(value, std::array<std::string_view, 2>{"raid0", "buddy_mirror"});
}
std::string_view to_string(InodeType value) {
  return name_of(value, std::array<std::string_view, 8>{"none", "file", "dir", "symlink", "fifo", "char_device",
                                                        "block_device", "socket"});
}
std::string_view to_string(XattrOp value) {
  return name_of(value, std::array<std::string_view, 4>{"get", "set", "list", "remove"});
}
std::string_view to_string(AllocMode value) {
  return name_of(value, std::array<std::string_view, 3>{"reserve", "punch", "zero"});
}
std::string_view to_string(Reachability value) {
  return name_of(value, std::array<std::string_view, 3>{"online", "probably_offline", "offline"});
}
std::string_view to_string(Consistency value) {
  return name_of(value, std::array<std::string_view, 3>{"good", "needs_resync", "bad"});
}
std::string_view to_string(CapacityPool value) {
  return name_of(value, std::array<std::string_view, 3>{"normal", "low", "emergency"});
}
std::string_view to_string(DirPolicy value) {
  return name_of(value, std::array<std::string_view, 3>{"owner", "hashed_striped", "full_path_hash"});
}
std::string_view to_string(HashKind value) {
  return name_of(value, std::array<std::string_view, 5>{"none", "all_chars", "fnv_1a_64", "crush", "rendezvous"});
}
std::string_view to_string(ChooserKind value) {
  return name_of(value, std::array<std::string_view, 6>{"server_default", "randomized", "round_robin", "random_robin",
                                                        "random_inter_node", "space_weighted_qos"});
}
std::string_view to_string(ChunkPath value) {
  return name_of(value, std::array<std::string_view, 2>{"direct", "bounce"});
}
std::string_view to_string(MetaRecordKind value) {
  return name_of(value, std::array<std::string_view, 7>{"reset", "put_dir", "remove_dir", "put_entry", "remove_entry",
                                                        "counter", "reply"});
}

}  // namespace sluice::proto
