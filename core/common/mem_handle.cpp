#include "core/common/mem_handle.hpp"

#include "core/common/assert.hpp"

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
  SLUICE_ASSERT(rel_offset <= length && len <= length - rel_offset);
  MemHandle h = *this;
  h.offset = offset + rel_offset;
  h.length = len;
  return h;
}

std::string MemHandle::to_string() const {
  return "node" + std::to_string(node) + "/" + sluice::to_string(kind) + std::to_string(device) + "/r" +
         std::to_string(region) + "[" + std::to_string(offset) + "+" + std::to_string(length) + "]";
}

Status check_range(const MemHandle& range, NodeId expected_node, std::optional<std::uint64_t> region_bytes,
                   std::string_view what) {
  if (range.node != expected_node) {
    return error(StatusCode::invalid_argument,
                 std::string(what) + " " + range.to_string() + " is not on node " + std::to_string(expected_node));
  }
  if (!region_bytes) return error(StatusCode::not_found, std::string(what) + ": no region " + range.to_string());
  if (range.offset > *region_bytes || range.length > *region_bytes - range.offset) {
    return error(StatusCode::invalid_argument, std::string(what) + " " + range.to_string() + " exceeds its region of " +
                                                   std::to_string(*region_bytes) + " bytes");
  }
  return ok_status();
}

}  // namespace sluice
