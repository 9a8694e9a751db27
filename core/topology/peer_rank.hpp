// Ranking of a GPU's DMA peers (NICs, NVMe drives) the way nvidia-fs does it.
//
// Source: NVIDIA gds-nvidia-fs, src/nvfs-pci.c __nvfs_get_gpu2peer_distance
// and nvfs_get_pci_gpu2peer_distance, constants in src/nvfs-pci.h. cuFile
// asks nvidia-fs for this rank to pick the NIC closest to a GPU, and the
// BeeGFS client does the same for multirail with GDS.
//
// The algorithm, restated for our graph:
// - For each device take its chain of PCIe bridges bottom-up, from its first
//   bridge to its root port (bridging pcie_switch vertices, then the
//   pcie_root_port; adapter function splits are skipped).
// - If the chains share a bridge: pci_distance = (bridges of the GPU below
//   the lowest common bridge) + (bridges of the peer below it) + 1.
//   Same switch -> 1, sibling switches under one switch -> 3, ...
// - If they share none (the path crosses root ports): pci_distance =
//   k_pci_distance_cross_root_port + gpu depth + peer depth + 1 when both are
//   on the same NUMA node, and 2 * k_pci_distance_cross_root_port + ... when
//   they are not, so crossing a root port or a NUMA node costs far more than
//   any number of switches.
// - rank = (pci_distance << 32) | (k_rank_bandwidth_max - peer link bandwidth
//   in MB/s): PCIe distance first, then the peer's own link bandwidth (wider /
//   faster link first). Lower is better. nvidia-fs packs (distance << 16) |
//   (160 - width * speed index); we keep its order with bytes/s as the
//   bandwidth measure.
// Our pcie_switch is a whole switch (nvidia-fs sees its upstream and
// downstream port bridges separately), so our distances are smaller than the
// kernel's numbers; their order is the same on tree topologies.
#pragma once

#include <cstdint>
#include <vector>

#include "core/common/status.hpp"
#include "core/topology/path_class.hpp"
#include "core/topology/topology.hpp"

namespace sluice::topo {

// nvfs-pci.h BASE_PCI_DISTANCE_CROSSRP = S8_MAX.
inline constexpr std::uint32_t k_pci_distance_cross_root_port = 127;
// Bandwidth term of the rank, in MB/s (10^6 bytes/s).
inline constexpr std::uint64_t k_rank_bandwidth_max = 0xFFFFFFFFULL;

struct PeerRank {
  std::uint32_t pci_distance = 0;
  bool cross_root_port = false;           // no common bridge: the path goes through the root complex
  bool cross_numa = false;                // GPU and peer on different NUMA nodes
  double link_bandwidth_bytes_per_s = 0;  // the peer's own PCIe link (slower direction)
  PathClass path_class = PathClass::sys;  // for reports; the rank does not use it
  std::uint64_t key = 0;                  // the rank; lower is better
};

// Rank of `peer` (nic or nvme) for `gpu`; both on one node.
// Errors: wrong kinds, different nodes, broken PCIe tree.
Result<PeerRank> peer_rank(const Topology& topology, VertexId gpu, VertexId peer);

struct RankedPeer {
  VertexId peer = k_no_vertex;
  std::uint32_t index = k_no_id;  // the peer's local index (nic or nvme index)
  PeerRank rank;
};

// All peers of `peer_kind` (nic or nvme) on the GPU's node, best first; equal
// ranks are ordered by local index.
Result<std::vector<RankedPeer>> rank_peers(const Topology& topology, VertexId gpu, VertexKind peer_kind);

}  // namespace sluice::topo
