// Multirail, the far end: which NIC of the server node a chunk's transfer
// uses, given the NIC the client chose for it (RailSelector / plan_chunks).
//
// Rule: rail matching. A multirail fabric keeps each rail on its own switch or
// subnet, and a connection opened from client rail k goes to the server address
// on the same rail: NCCL's rail-optimised topologies pair NIC k of one node
// with NIC k of the other (src/graph/search.cc keeps one NIC per channel on
// both ends), and BeeGFS multirail clients connect each local RDMA NIC to the
// server interface of the same network (connRDMAInterfacesFile, one IPoIB
// subnet per rail). The Critical I/O recorder
// (docs/seeds.md#gpu-rdma-recording-over-roce) streams port 0 to port 0 and
// port 1 to port 1.
// So: the candidates are the server NICs with a network link, those cabled
// to the same switch as the client NIC first (no spine crossing); among
// them, the i-th (in local index order) where i = the client NIC's position
// among its node's cabled NICs, modulo the candidate count. Every client
// rail therefore lands on a server rail, and k client rails spread over
// min(k, server rails) server rails instead of all meeting on one.
//
// Pure function of the topology: no load, no state. Load balancing happens
// on the client side, where the rail is chosen.
#pragma once

#include <cstdint>
#include <vector>

#include "core/common/ids.hpp"
#include "core/common/status.hpp"
#include "core/topology/topology.hpp"

namespace sluice::sched {

// Errors: unknown node or client NIC; the client NIC or the server node has
// no NIC with a network link (not_found).
Result<std::uint32_t> peer_nic(const topo::Topology& topology, NodeId client_node, std::uint32_t client_nic,
                               NodeId server_node);

// The server side (issue 48): a storage server stages a target's chunks in the
// memory of its drive's NUMA node and serves them through the NICs nearest that
// drive, among those rail matching allows. BeeGFS servers serve over all their
// interfaces (connInterfacesFile; RDMA multirail), Lustre over LNet multi-rail,
// whose local NI selection takes the NUMA-nearest interfaces, then the one
// with the most free credits (the least in flight), then round robin (Lustre
// wiki, "Multi-Rail High-Level Design", selection algorithm); a server whose
// NICs sit on both sockets keeps each drive's bytes off the inter-socket link
// that way.
// So, for each target: the candidates are the server NICs on the same switch
// as the NIC rail matching named (peer_nic), or every cabled NIC when the
// client named none; among them those on the drive's NUMA node (path class
// NODE or nearer: the server stages the bytes in that node's memory, so PIX is
// no nearer than PHB), else every one (SYS). Every one of those equally near NICs
// may carry the target's chunks: the server picks per transfer the one with
// the fewest bytes in flight (StorageService), so two drives on a switch with
// three NICs load all three, not two.
struct TargetPlace {
  std::uint16_t staging_numa = 0;  // NUMA node of the target's drive
  // nics_for[s]: the equally near NICs for a chunk whose client named server
  // NIC s; nics_for.back(): for a chunk whose client named none. Each list is
  // non-empty and ascending. Empty: the server node has no cabled NIC (the
  // server's default applies).
  std::vector<std::vector<std::uint32_t>> nics_for;
  // The candidates for a chunk whose client named `named` (k_no_id: none);
  // null when there are none (no cabled NIC).
  const std::vector<std::uint32_t>* nics(std::uint32_t named) const {
    if (nics_for.empty()) return nullptr;
    return named < nics_for.size() - 1 ? &nics_for[named] : &nics_for.back();
  }
};

// One place per drive (local NVMe indices of `server_node`), in order.
// Errors: unknown node or drive.
Result<std::vector<TargetPlace>> place_targets(const topo::Topology& topology, NodeId server_node,
                                               const std::vector<std::uint32_t>& nvme);

}  // namespace sluice::sched
