// Memory handles: how the core names a byte range anywhere in the cluster.
//
// A handle says where bytes live (node, kind, device, region) and which range
// of the region is meant. Each Env maps handles to what it has: SimGrid hosts
// and links in SimEnv, real buffers registered with a transport in HwEnv, and
// byte vectors in TestEnv. The core never dereferences a handle.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/common/ids.hpp"
#include "core/common/status.hpp"

namespace sluice {

enum class MemKind : std::uint8_t {
  host = 0,    // pageable host memory
  pinned = 1,  // page-locked host memory (DMA-able; staging buffers)
  gpu = 2,     // device memory of GPU `device` on `node`
};

std::string to_string(MemKind kind);

struct MemHandle {
  NodeId node = k_no_id;
  MemKind kind = MemKind::host;
  std::uint16_t device = 0;  // GPU index for kind == gpu, NUMA node for host/pinned
  std::uint32_t region = 0;  // region id, unique per node, given out by the Env's alloc
  std::uint64_t offset = 0;  // first byte of the range within the region
  std::uint64_t length = 0;  // bytes in the range

  // The sub-range [offset + rel_offset, offset + rel_offset + len). The caller
  // guarantees rel_offset + len <= length (asserted).
  MemHandle slice(std::uint64_t rel_offset, std::uint64_t len) const;

  bool operator==(const MemHandle&) const = default;
  std::string to_string() const;
};

// Every world's check of a range an operation names: on `expected_node`, in
// an existing region (region_bytes: its length; nullopt when the node has no
// such region), and inside it. `what` names the operand ("transfer source").
// One wording of these errors for TestEnv, SimEnv and HwEnv alike.
Status check_range(const MemHandle& range, NodeId expected_node, std::optional<std::uint64_t> region_bytes,
                   std::string_view what);

}  // namespace sluice
