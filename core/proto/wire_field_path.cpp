#include "core/proto/wire_field_path.hpp"

#include "core/common/assert.hpp"

namespace sluice::proto {

void WireFieldPath::push(const char* name) {
  if (depth_ < levels_.size()) levels_[depth_] = Level{name, 0, false};
  ++depth_;
}

void WireFieldPath::set_index(std::size_t index) {
  SLUICE_ASSERT(depth_ > 0);
  if (depth_ - 1 < levels_.size()) {
    levels_[depth_ - 1].index = index;
    levels_[depth_ - 1].has_index = true;
  }
}

void WireFieldPath::pop() {
  SLUICE_ASSERT(depth_ > 0);
  --depth_;
}

std::string WireFieldPath::render(std::string_view message_name) const {
  std::string out(message_name);
  const std::size_t kept = depth_ < levels_.size() ? depth_ : levels_.size();
  for (std::size_t i = 0; i < kept; ++i) {
    out += '.';
    out += levels_[i].name;
    if (levels_[i].has_index) {
      out += '[';
      out += std::to_string(levels_[i].index);
      out += ']';
    }
  }
  if (depth_ > kept) out += "...";
  return out;
}

}  // namespace sluice::proto
