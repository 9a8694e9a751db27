// Path classes between two devices, as NCCL and `nvidia-smi topo -m` name them.
//
// Definitions (NCCL src/graph/topo.h path types, and the legend printed by
// `nvidia-smi topo -m`; NVML nvmlGpuTopologyLevel_t gives the same levels as
// SINGLE / MULTIPLE / HOSTBRIDGE / NODE / SYSTEM):
//   X    the device itself
//   PIX  connection traversing at most a single PCIe bridge
//   PXB  connection traversing multiple PCIe bridges (without traversing the
//        PCIe Host Bridge)
//   PHB  connection traversing PCIe as well as a PCIe Host Bridge (typically
//        the CPU)
//   NODE connection traversing PCIe as well as the interconnect between PCIe
//        Host Bridges within a NUMA node (nvidia-smi only; NCCL folds it into PHB)
//   SYS  connection traversing PCIe as well as the SMP interconnect between
//        NUMA nodes (e.g. QPI/UPI)
//   NET  (ours, as NCCL PATH_NET) the devices are on different machines
// The enumerators are ordered from closest to farthest, so `a <= b` means
// "a is at least as close as b". NCCL uses GPUDirect RDMA up to PXB by
// default (NCCL_NET_GDR_LEVEL, src/graph/paths.cc ncclTopoCheckGdr).
//
// How a topology maps to a class (see topology.hpp for the vertex model):
// on the machine route between the two devices, two cpu_socket vertices give
// SYS, one gives NODE, a pcie_root_port (without a socket) gives PHB, and
// otherwise the count of bridging pcie_switch vertices gives PIX (<= 1) or
// PXB (> 1).
#pragma once

#include <cstdint>
#include <string_view>

#include "core/common/status.hpp"
#include "core/topology/topology.hpp"

namespace sluice::topo {

enum class PathClass : std::uint8_t {
  loc = 0,  // "X"
  pix,
  pxb,
  phb,
  node,
  sys,
  net,
};

// "X", "PIX", "PXB", "PHB", "NODE", "SYS", "NET".
std::string_view to_string(PathClass path_class);
// Parses the names above; also "SOC", the pre-2017 nvidia-smi name of SYS.
Result<PathClass> parse_path_class(std::string_view text);

// The class of the path between two devices (gpu, nic or nvme). Errors:
// unknown vertex, a vertex that is not a device, no route.
Result<PathClass> path_class(const Topology& topology, VertexId a, VertexId b);

}  // namespace sluice::topo
