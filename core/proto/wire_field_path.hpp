// The field being encoded or decoded, kept as a fixed stack of names and
// vector indices so that error messages can say "MapsReply.targets[3].endpoint.node"
// without the codec allocating anything on the success path.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include "core/proto/wire_limits.hpp"

namespace sluice::proto {

class WireFieldPath {
 public:
  // Enters field `name` (a string literal from an io() list).
  void push(const char* name);
  // Marks the innermost field as element `index` of a vector.
  void set_index(std::size_t index);
  void pop();

  // "Message.field[3].sub", or "Message" at top level. Levels deeper than
  // k_max_field_depth are shown as "...".
  std::string render(std::string_view message_name) const;

 private:
  struct Level {
    const char* name = nullptr;
    std::size_t index = 0;
    bool has_index = false;
  };
  std::array<Level, k_max_field_depth> levels_{};
  std::size_t depth_ = 0;  // may exceed k_max_field_depth; only the first levels are kept
};

}  // namespace sluice::proto
