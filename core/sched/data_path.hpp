// Which data path a transfer into (or out of) a node's memory takes.
//
// Rule (docs/design.md#chunk-planning): a transfer moves directly between the
// NIC and GPU memory (GPUDirect RDMA / GDS) when the GPU<->NIC path class is
// PXB or closer AND the backend declares it can reach GPU memory; otherwise
// it bounces through pinned host memory on the GPU's NUMA node plus a PCIe
// copy (host <-> GPU). The PXB threshold is NCCL's default GPUDirect RDMA
// level (NCCL_NET_GDR_LEVEL = PATH_PXB, src/graph/paths.cc ncclTopoCheckGdr):
// beyond it, peer-to-peer traffic crosses the root complex, where it is slow
// or unsupported. Host and pinned destinations are always reached directly.
//
// Pure function of the topology: no state, no clock.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/common/mem_handle.hpp"
#include "core/common/status.hpp"
#include "core/topology/path_class.hpp"
#include "core/topology/topology.hpp"

namespace sluice::sched {

enum class DataPath : std::uint8_t {
  direct = 0,  // NIC <-> destination memory in one DMA
  bounce,      // NIC <-> pinned host buffer (staging_numa), then a PCIe copy host <-> GPU
};
std::string_view to_string(DataPath path);

// What the transport/backend that moves the bytes can do (a capability it
// declares, see docs/design.md#the-dependency-rule).
struct BackendCaps {
  bool gpu_memory_reachable = false;  // can DMA into/out of GPU memory (peer memory, cuFile)
};

// Where a request's bytes live on the node: kind plus GPU index (gpu) or NUMA
// node (host, pinned), as in MemHandle.
struct MemoryPlace {
  MemKind kind = MemKind::host;
  std::uint32_t device = 0;

  static MemoryPlace of(const MemHandle& handle) { return MemoryPlace{handle.kind, handle.device}; }
  static MemoryPlace gpu(std::uint32_t index) { return MemoryPlace{MemKind::gpu, index}; }
  static MemoryPlace host(std::uint32_t numa) { return MemoryPlace{MemKind::host, numa}; }
  static MemoryPlace pinned(std::uint32_t numa) { return MemoryPlace{MemKind::pinned, numa}; }
  friend bool operator==(const MemoryPlace&, const MemoryPlace&) = default;
};

// The farthest GPU<->NIC path class that still goes direct.
inline constexpr topo::PathClass k_max_direct_path_class = topo::PathClass::pxb;

struct PathDecision {
  DataPath path = DataPath::bounce;
  // GPU destination: class of the GPU<->NIC path. Host/pinned: PHB when the
  // NIC sits on the destination's NUMA node, SYS when not.
  topo::PathClass path_class = topo::PathClass::sys;
  std::uint32_t staging_numa = k_no_id;  // bounce: NUMA node of the pinned staging buffer; else k_no_id
  std::string reason;                    // one sentence, for logs and results
};

// Decides the path for moving data between NIC `nic` (local index) of `node`
// and `destination`. Errors: unknown node, NIC, GPU or NUMA node.
Result<PathDecision> decide_path(const topo::Topology& topology, NodeId node, MemoryPlace destination,
                                 std::uint32_t nic, BackendCaps caps);

}  // namespace sluice::sched
