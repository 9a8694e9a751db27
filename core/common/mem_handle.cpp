#include "core/common/mem_handle.hpp"

#include <cassert>

namespace sluice {

std::string to_string(MemKind kind) {
  switch (kind) {
    case MemKind::host: return "host";
    case MemKind::pinned: return "pinned";
    case MemKind::gpu: return "gpu";
  }
  return "unknown";
}

MemHandle MemHandle::slice(std::uint64_t rel_offset, std::uint64_t len) const {
  assert(rel_offset <= length && len <= length - rel_offset);
  MemHandle h = *this;
  h.offset = offset + rel_offset;
  h.length = len;
  return h;
}

std::string MemHandle::to_string() const {
  return "node" + std::to_string(node) + "/" + sluice::to_string(kind) + std::to_string(device) + "/r" +
         std::to_string(region) + "[" + std::to_string(offset) + "+" + std::to_string(length) + "]";
}

}  // namespace sluice
