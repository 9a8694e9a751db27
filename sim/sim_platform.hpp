// SimPlatform: a core/topology cluster turned into a SimGrid 3.32 platform.
//
// What becomes what
// - Every topology link becomes one SimGrid link with its bandwidth and
//   latency: a split-duplex link (one resource per direction, each with its
//   own bandwidth) where the hardware is full duplex (PCIe, memory, socket
//   interconnect, NIC ports), a SHARED link otherwise (LinkSpec.full_duplex).
//   SimGrid links made from C++ default to SHARED, which would make a read
//   and a write on one PCIe link compete; they do not here.
// - Memory that transfers name (a GPU vertex; a host_memory vertex for
//   host/pinned memory on its NUMA node) becomes hosts:
//     * one "local" host per memory vertex, for copies inside the node
//       (routes = Topology::machine_route between the two vertices), and
//     * one "rail" host per (memory vertex, NIC) for traffic leaving the
//       node through that NIC (route = machine_route(memory -> NIC) + the
//       NIC's network link, and the reverse). A transfer names its rail, so a
//       GPU-direct read lands on host "gpu3 via mlx5_2" and loads the PCIe
//       links between that NIC and GPU 3, while a bounce read lands on
//       "host memory 0 via mlx5_2" and loads the NIC -> root port -> memory
//       links instead; the bounce's second step is a local copy host memory
//       -> GPU on the local hosts. SimGrid routes by (source host,
//       destination host) only, so the rail has to be part of the host.
// - Each host_memory vertex also gets a "copy" host ("mem0#copy") whose
//   route from the memory's local host crosses the memory link twice, up
//   (read) and down (write): a flow between them is a CPU memcpy inside that
//   memory, loading its bandwidth in both directions (SimProfile staging_*).
// - Each NVMe vertex becomes an s4u::Disk with its read and write bandwidth
//   times the profile's disk_read/write_bandwidth_factor, attached to the
//   local host of its NUMA node's memory. With profile.disk_channels > 1
//   the drive also gets that many channel disks ("nvme0#ch3"), each with
//   1/channels of those rates, on the same host; SimRuntime then puts the
//   drive's work on its channels.
// - A node's CPU is the local host of host memory 0: speed 1e9 flop/s (one
//   flop = one nanosecond of service time) with profile.cpu_cores_per_node
//   cores. Service actors live there.
//
// Zones and routing (cost stays linear in the cluster size)
// - Rail hosts are grouped by the switch their NIC is cabled to ("leaf"):
//   each leaf is a StarZone whose centre is the switch; a rail host's star
//   route is its way to the switch, so routes between two nodes of a leaf
//   are up(source) + down(destination), stored per host, not per pair.
// - With several leaves, the root is a FullZone over the leaves (leaves^2
//   routes). A leaf's links to the switches above it (a fat tree's spines)
//   are pooled into one SimGrid link per direction with their summed rate,
//   and a route between two leaves with the same spines crosses the source's
//   pooled uplinks and the destination's pooled downlinks: traffic between
//   leaves spreads over every spine, the ideal balancing that adaptive
//   routing approaches and that the max-flow bound (core/topology/flow_bound)
//   assumes. Static routing's collisions (D-mod-K, per-flow ECMP hashing) are
//   not modelled. Leaves with other neighbours route along
//   Topology::fabric_route. SimGrid routes per pair of zones, so a route
//   pinned to one spine would carry all traffic between two leaves.
// - Local hosts of up to k_nodes_per_local_zone nodes share one FullZone
//   (routes only between memories of one node). SimGrid 3.32 seals a zone in
//   time proportional to all hosts of the platform, so one zone per node
//   would make building quadratic; grouping keeps 1,250 nodes cheap.
// No Floyd or Full routing over all hosts exists anywhere.
//
// Network model (one per simulation in SimGrid): CM02 (max-min sharing, no
// TCP factors), cross-traffic off, and per-link-class factors from the
// profile applied through the model's bandwidth/latency factor callbacks:
// latency = sum over links of latency x class latency factor (exact per
// link), bandwidth x the lowest class bandwidth factor on the route (a flow
// has one factor). So a PCIe-only transfer takes exactly bytes / bandwidth +
// latency while network routes can carry LV08-like corrections.
//
// Limits: at most one platform per process (one s4u::Engine); every vertex
// name must be usable as a SimGrid name (the topology's names are).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/common/mem_handle.hpp"
#include "core/common/status.hpp"
#include "core/topology/topology.hpp"
#include "sim/sim_profile.hpp"

namespace simgrid::s4u {
class Host;
class Disk;
class Link;
class NetZone;
}  // namespace simgrid::s4u
namespace simgrid::kernel::routing {
class NetPoint;
}  // namespace simgrid::kernel::routing

namespace sluice::sim {

// Nodes whose local hosts share one FullZone (its table is
// (k_nodes_per_local_zone x memories per node)^2 entries).
inline constexpr std::uint32_t k_nodes_per_local_zone = 16;
// Leaves of the root FullZone (leaves^2 routes).
inline constexpr std::uint32_t k_max_leaves = 4096;
// SimGrid's links carry their latencies times this, and the latency factor
// (SimPlatform::latency_factor) and TCP-gamma undo it: a comm's delay and
// rate bound are the same, and its sharing penalty, which CM02 takes from the
// route's raw latency, is near 1 rather than near 1e-7. The max-min shares
// depend only on the penalties' ratios, so they do not move; but SimGrid's
// solver keeps each link's usage (the sum of 1 / penalty over its flows) to
// an absolute precision (maxmin/precision, 1e-5): at 1e-7 s a flow, a link
// carrying thousands of flows sums to ~1e10, where the rounding of a
// subtraction leaves more than 1e-5 behind, and the solver then took a link
// with no flow left for a saturated one and crashed (roofline configuration
// 38 at full scale with 64 threads, per chunk: SIGSEGV in MaxMin::do_solve,
// reading the constraint before the first while formatting that assertion).
inline constexpr double k_sim_latency_scale = 1e6;

// What a SimGrid link made by the platform is (each direction of a
// split-duplex link is one SimGrid link).
struct LinkInfo {
  topo::LinkClass link_class = topo::LinkClass::network;
  topo::EdgeId edge = topo::k_no_edge;
  bool a_to_b = true;  // direction a -> b of the topology link (a shared link: true)
};

// The size of what was built, for reports.
struct PlatformStats {
  std::size_t hosts = 0;
  std::size_t links = 0;  // SimGrid links (a split-duplex link counts once)
  std::size_t zones = 0;
  std::size_t disks = 0;
  std::size_t leaves = 0;
};

class SimPlatform {
 public:
  // Builds the platform into the process's s4u::Engine, which must exist and
  // have no platform yet. The topology must have passed validate().
  static Result<std::unique_ptr<SimPlatform>> build(std::shared_ptr<const topo::Topology> cluster,
                                                    const SimProfile& profile);
  ~SimPlatform();
  SimPlatform(const SimPlatform&) = delete;
  SimPlatform& operator=(const SimPlatform&) = delete;

  const topo::Topology& topology() const { return *topology_; }
  const PlatformStats& stats() const { return stats_; }

  // The memory vertex a handle's bytes live in: GPU `device` for gpu, the
  // host_memory of NUMA node `device` for host and pinned. not_found names
  // the missing device.
  Result<topo::VertexId> memory_vertex(const MemHandle& handle) const;
  // The host for copies inside the node.
  simgrid::s4u::Host* local_host(topo::VertexId memory) const;
  // The host for traffic from/to `memory` through NIC `nic` (local index;
  // k_no_id: the node's first cabled NIC). not_found / unavailable name why.
  Result<simgrid::s4u::Host*> rail_host(topo::VertexId memory, std::uint32_t nic) const;
  // The host a CPU copy inside host memory `memory` flows to from
  // local_host(memory) (see above); nullptr for another vertex or a memory
  // without a memory link.
  simgrid::s4u::Host* copy_host(topo::VertexId memory) const;
  // The node's CPU host (local host of host memory 0); nullptr for an unknown node.
  simgrid::s4u::Host* cpu_host(NodeId node) const;
  // NVMe drive `index` of `node`.
  Result<simgrid::s4u::Disk*> disk(NodeId node, std::uint32_t index) const;
  // The hosts between which that drive's bytes cross PCIe: `drive` (at the
  // drive) and `memory` (the host memory of its NUMA node); both nullptr
  // when the drive has none (then only its disk resource is modelled).
  struct DriveHosts {
    simgrid::s4u::Host* drive = nullptr;
    simgrid::s4u::Host* memory = nullptr;
  };
  DriveHosts drive_hosts(NodeId node, std::uint32_t index) const;
  // The channels of that drive (SimProfile disk_channels); empty when the
  // profile gives one channel (the drive's disk is then the only resource).
  const std::vector<simgrid::s4u::Disk*>& disk_channels(NodeId node, std::uint32_t index) const;
  // The lowest-indexed NIC of `node` with a network link; k_no_id if none.
  std::uint32_t first_nic(NodeId node) const;
  // The factors a comm over `links` gets (the callbacks installed in the
  // network model; fluid mode's routes): the latency factor is the
  // latency-weighted mean of the links' class factors, the bandwidth factor
  // the lowest class factor on the route (1 without links of this platform).
  static double latency_factor(const std::vector<simgrid::s4u::Link*>& links, const SimProfile& profile);
  // CM02's TCP-gamma for `profile` (its TCP window), scaled as the links'
  // latencies are (k_sim_latency_scale): the rate bound gamma / (2 x latency)
  // stays the window over twice the route's own latency.
  static double tcp_gamma(const SimProfile& profile);
  static double bandwidth_factor(const std::vector<simgrid::s4u::Link*>& links, const SimProfile& profile);
  // What a SimGrid link this platform made is; nullptr for another link.
  static const LinkInfo* info(const simgrid::s4u::Link* link);
  // The topology links (with direction) SimGrid's route between two hosts
  // crosses, in order: what a communication between them loads. A leaf's
  // pooled spine links (see above) are no one topology link: left out.
  std::vector<LinkInfo> route(const simgrid::s4u::Host* from, const simgrid::s4u::Host* to) const;
  // The SimGrid link (direction a->b of topology link `edge`), for tests.
  simgrid::s4u::Link* link_of(topo::EdgeId edge, bool a_to_b) const;

 private:
  SimPlatform() = default;
  // Each NIC's network link and each node's first cabled NIC (build).
  void find_nic_uplinks();
  Status build_links();
  Status build_local_zones(simgrid::s4u::NetZone* parent);
  Status build_leaves();
  // The root's routes between the leaf zones (by leaf switch), with their
  // centres as gateways; pooled spine links where the leaves share spines.
  template <typename LinksOfRoute>
  Status route_across_leaves(const std::map<topo::VertexId, simgrid::s4u::NetZone*>& leaves,
                             const std::map<topo::VertexId, simgrid::kernel::routing::NetPoint*>& centres,
                             const LinksOfRoute& links_of_route);
  // Drive hosts of node `node` in its local zone (see drive_hosts()).
  template <typename LinksOfRoute>
  Status add_drive_hosts(simgrid::s4u::NetZone* zone, NodeId node, const LinksOfRoute& links_of_route);
  Status build_disks();
  void install_factor_callbacks();

  struct SgLink {
    simgrid::s4u::Link* a_to_b = nullptr;
    simgrid::s4u::Link* b_to_a = nullptr;  // == a_to_b for a shared link
  };

  std::shared_ptr<const topo::Topology> topology_;
  SimProfile profile_;
  PlatformStats stats_;
  simgrid::s4u::NetZone* root_ = nullptr;
  std::vector<SgLink> links_;                                                 // by EdgeId
  std::vector<LinkInfo> link_info_;                                           // [2 x EdgeId + (a_to_b ? 0 : 1)]
  LinkInfo pool_info_{topo::LinkClass::network, topo::k_no_edge, true};       // every pooled spine link's
  std::vector<simgrid::s4u::Host*> local_hosts_;                              // by VertexId (memory vertices only)
  std::vector<simgrid::s4u::Host*> copy_hosts_;                               // by VertexId (host_memory vertices only)
  std::vector<std::vector<simgrid::s4u::Host*>> rail_hosts_;                  // [memory vertex][nic index]
  std::vector<std::vector<simgrid::s4u::Disk*>> disks_;                       // [node][nvme index]
  std::vector<std::vector<DriveHosts>> drive_hosts_;                          // [node][nvme index]
  std::vector<std::vector<std::vector<simgrid::s4u::Disk*>>> disk_channels_;  // [node][nvme index][channel]
  std::vector<std::uint32_t> first_nic_;                                      // [node]
  std::vector<topo::EdgeId> nic_uplink_;                                      // [nic vertex] network edge or k_no_edge
};

}  // namespace sluice::sim
