// Memory handles: how the core names a byte range anywhere in the cluster.
//
// A handle says where bytes live (node, kind, device, region) and which range
// of the region is meant. Each Env maps handles to what it has: SimGrid hosts
// and links in SimEnv, real buffers registered with a transport in HwEnv, and
// byte vectors in TestEnv. The core never dereferences a handle.
#pragma once

#include <cstdint>
#include <string>

#include "core/common/ids.hpp"

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
  std::uint16_t device = 0;   // GPU index for kind == gpu, NUMA node for host/pinned
  std::uint32_t region = 0;   // region id, unique per node, given out by the Env's alloc
  std::uint64_t offset = 0;   // first byte of the range within the region
  std::uint64_t length = 0;   // bytes in the range

  // The sub-range [offset + rel_offset, offset + rel_offset + len). The caller
  // guarantees rel_offset + len <= length (asserted).
  MemHandle slice(std::uint64_t rel_offset, std::uint64_t len) const;

  bool operator==(const MemHandle&) const = default;
  std::string to_string() const;
};

}  // namespace sluice
