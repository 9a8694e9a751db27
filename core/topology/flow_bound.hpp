// The hardware's ceiling for a pattern of bulk transfers (issue 48): the rate
// no model of this topology can beat, computed from the links alone, so that a
// simulated or measured rate can be read as a fraction of it.
//
// What it computes
// - Bytes enter at `sources` (drives, host memories, GPUs, NICs) and leave at
//   `sinks`, each terminal taking a fixed share of its side's bytes (a file
//   striped evenly over 16 targets: each drive serves 1/16). The bound is the
//   largest total rate T at which every source can send T x its share and
//   every sink receive T x its share, with no directed link, drive or memory
//   carrying more than its capacity: a maximum flow with the terminal arcs
//   capped at T x share, T found by bisection (push-relabel per probe).
// - Stages. A storage server's bytes pass through its host memory (a drive
//   DMAs into a staging buffer, the NIC DMAs out of it); so does a bounce
//   buffer on a client. A pattern is a chain of stages; bytes cross from stage
//   k to stage k+1 only at a host memory of a node both stages hold, so a
//   drive-to-NIC path that skips the memory (peer-to-peer) is not counted.
//   Each stage holds its nodes' machine links, and the network's links when
//   `fabric` is set.
// - GPUDirect. A stage's `peer_to_peer` nodes keep their bytes below their
//   PCIe root ports: a GPU there is reached from (or reaches) only the NICs
//   within PXB of it, through the switches they share. This is the rail rule
//   of GPUDirect Storage: cuFile and the BeeGFS client send a GPU buffer's
//   RDMA through the NIC nvidia-fs ranks closest to the GPU
//   (docs/seeds.md#beegfs-and-gpudirect-storage; NVIDIA's GDS troubleshooting
//   guide, per-GPU RDMA counters: "all traffic should be routed through the
//   NIC with the best affinity"), and GPUDirect RDMA stops at PXB (NCCL's
//   NCCL_NET_GDR_LEVEL default; core/sched/data_path.hpp): a NIC behind a
//   root port or a socket never carries the GPU's bytes peer-to-peer.
// - Drives: a source drive is capped by its sequential read rate, a sink drive
//   by its write rate (Vertex::nvme_*_bytes_per_s); a NIC by its network link
//   (the cluster builders give it the port rate) times the pattern's
//   network_payload_share, as every network link; links by their rate in the
//   direction crossed, both directions sharing one capacity where
//   LinkSpec::full_duplex is false.
//
// What it is not
// - A relaxation, never an underestimate: the bytes of all sources form one
//   commodity (any source may feed any sink within the shares), and a PCIe or
//   network link that two stages both hold counts once per stage. In a PCIe
//   tree that costs nothing: bytes climb to a staging memory in one stage and
//   descend from it in the next, so no stage uses another's direction of a
//   link. Memory and inter-socket links are where stages meet (a staging
//   buffer is written in one stage and read in the next; a drive on socket 0
//   may stage on socket 1, or stage on socket 0 and leave through a NIC on
//   socket 1): each of their directions is one arc that every stage shares,
//   which lets bytes change stage at a socket without the memory link, a
//   saving no real path has. A link whose two directions share one capacity
//   (LinkSpec::full_duplex false; no builder makes one) is one arc per stage.
//   A copy's read and write cross the two directions of a memory link, each
//   its full rate, where DRAM shares one bandwidth between them (a sink
//   written_by_copy): a relaxation too.
//   All of these can only raise the bound. For the symmetric patterns of a
//   file sweep (every client reads every target) the bound is exact up to the
//   rounding below.
// - Rates are solved in integer units of k_flow_unit_bytes_per_s (1 kB/s), so
//   the bound is exact to that unit per arc.
//
// The binding resource is read off a minimum cut just above the bound: the
// hardware arcs (not the terminal shares) that separate the sources from the
// sinks, grouped by kind ("drive read", "pcie", "memory", "inter-socket",
// "nic port", "fabric"); the kind with the most cut capacity is named, with
// its elements.
#pragma once

#include <string>
#include <vector>

#include "core/common/status.hpp"
#include "core/topology/topology.hpp"

namespace sluice::topo {

// Limits (a bound request beyond them is refused, naming the limit).
inline constexpr double k_flow_unit_bytes_per_s = 1000.0;  // the solver's rate unit
inline constexpr std::size_t k_flow_max_stages = 8;
inline constexpr std::size_t k_flow_max_terminals = std::size_t{1} << 20;
// Bisection stops when the bracket is this narrow, relative to the bound.
inline constexpr double k_flow_relative_tolerance = 1e-6;

struct FlowTerminal {
  // An nvme, host_memory, gpu or nic vertex. A NIC terminal fixes the bytes
  // through that NIC (a server NIC's counted share: scenarios/runner/point_bound):
  // in a stage without the fabric its bytes cross its PCIe link, in one with
  // it its port alone (its PCIe link is left out of that stage, so no byte
  // leaves through another NIC of its node).
  VertexId vertex = k_no_vertex;
  double share = 1.0;  // its part of its side's bytes, relative to the others (> 0)
  // Host memories or GPUs of the same node where the same bytes may also
  // enter or leave (a buffer the run may place on any NUMA node). Not for drives.
  std::vector<VertexId> alternatives = {};
  // A sink host memory (and its alternatives) that bytes enter only through
  // its memory link, as a CPU copy writes them: a page cache. A source at the
  // same host memory (a client buffer on a storage server's node) then
  // crosses the link out and back in, the copy's read and its write, instead
  // of meeting the sink without crossing anything.
  bool written_by_copy = false;
};

struct FlowStage {
  std::vector<NodeId> nodes;  // whose machine links bytes may cross in this stage
  bool fabric = false;        // and the network: NIC links, switches, switch-to-switch links
  // Nodes of `nodes` whose bytes in this stage stay below their PCIe root
  // ports: peer-to-peer between a NIC and a GPU within PXB (GPUDirect, see
  // the header), never through a root port, a socket or a host memory.
  std::vector<NodeId> peer_to_peer = {};
};

struct FlowPattern {
  std::vector<FlowTerminal> sources;  // in stages.front()
  std::vector<FlowTerminal> sinks;    // in stages.back()
  std::vector<FlowStage> stages;      // at least one
  // The part of a network link's rate that carries the pattern's bytes
  // (headers and framing take the rest): every network-class link's capacity
  // is its rate times this, in (0, 1]. 1: the port rate itself.
  double network_payload_share = 1.0;
};

// One hardware element of a cut.
struct FlowCutArc {
  std::string kind;     // "drive read", "drive write", "pcie", "memory", "inter-socket", "nic port", "fabric"
  std::string element;  // "node0/nvme3", "node0/sw0->node0/rp0", ...
  double capacity_bytes_per_s = 0;
};

struct FlowBound {
  double bytes_per_s = 0;
  // The kind with the most capacity in the cut, with its elements ("nic port: node0/nic0->switch, ...").
  std::string binding_kind;
  std::string binding;
  std::vector<FlowCutArc> cut;  // every hardware arc of the cut, by kind then element
};

// Errors: no stage, too many stages or terminals, a terminal that is not an
// nvme / host_memory / gpu / nic, whose node is not in its stage, that its stage's
// peer_to_peer leaves unreachable (a host memory), or whose share is not a
// positive finite number; an unknown node in a stage, a peer_to_peer node
// that is not one of the stage's nodes; a network_payload_share outside (0, 1].
Result<FlowBound> flow_bound(const Topology& topology, const FlowPattern& pattern);

}  // namespace sluice::topo
