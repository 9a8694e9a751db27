// The machine and cluster graph: what is connected to what, and how fast.
//
// A Topology is an undirected Boost.Graph adjacency_list whose vertices are
// typed hardware elements (CPU sockets, host memory, PCIe root ports and
// switches, GPUs, NICs, NVMe drives, network switches) and whose edges are
// links with a bandwidth per direction and a latency. One Topology holds one
// machine (every vertex on node 0) or a whole cluster (machines copied in with
// add_machine, joined by network switches).
//
// Contract
// - Building: add_vertex / add_link check each element as it is added and
//   return an error naming it (duplicate name, unknown vertex, zero or
//   non-finite bandwidth, negative latency). validate() then checks the whole
//   graph (missing links, NUMA/socket consistency, dense device indices,
//   cross-node links, connectivity) and names the first offending element.
//   Queries on a topology that did not pass validate() may fail or give
//   meaningless answers; builders and importers always validate.
// - Ids: a VertexId / EdgeId is the insertion index and is stable (vertices
//   and links are never removed). Passing an id that does not exist to an
//   accessor is a bug (asserted); query functions return not_found instead.
// - Routes are computed on demand, never tabulated, so a 1,250-node cluster
//   costs only its vertices and links. machine_route() searches only the
//   vertices of one node, fabric_route() only network switches: both are
//   cheap. route() between vertices of different nodes searches the whole
//   graph and is meant for tools and tests, not per-chunk use.
// - Equal-cost paths: a route is a minimum-hop path. Where several exist
//   (the spines of a fat tree, parallel cables) the next hop is picked at each
//   step from the equal-cost candidates, ordered by edge id, with a hash of
//   (source, destination, hop number) modulo their count: per-flow ECMP as
//   switches do it (RFC 2992 spreads flows by a hash of the flow's header
//   fields; we hash the endpoints). Same topology and endpoints, same route.
// - Not thread-safe for writing; const queries may run concurrently.
//
// Modelling choices (documented once here; builders follow them)
// - cpu_socket is a NUMA domain of CPU cores; its host_memory vertex carries
//   the same index (socket i <-> mem i). Builders use one NUMA domain per
//   socket (NPS1 / SNC off).
// - pcie_root_port is one PCIe hierarchy root of a socket (a host bridge /
//   root complex). Devices below the same one are PHB to each other; below
//   different ones of the same socket NODE; on different sockets SYS.
// - pcie_switch is a whole PCIe switch (upstream and downstream port bridges
//   as one vertex). A pcie_switch with pcie_bridge == false is the function
//   split inside a multi-port adapter (two ports of one NIC sharing one PCIe
//   link): it is not counted as a bridge by path classes and peer ranks.
// - NVLink is not modelled: routes and path classes are about PCIe, memory and
//   the network, where storage traffic flows.
#pragma once

#include <boost/graph/adjacency_list.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/common/ids.hpp"
#include "core/common/status.hpp"
#include "core/common/units.hpp"

namespace sluice::topo {

using VertexId = std::uint32_t;
using EdgeId = std::uint32_t;
inline constexpr VertexId k_no_vertex = k_no_id;
inline constexpr EdgeId k_no_edge = k_no_id;

// Limits. Hitting one is an error from add_vertex/add_link/add_machine.
inline constexpr std::size_t k_max_vertices = std::size_t{1} << 24;  // 16 M: 10,000 nodes x ~100 vertices fits
inline constexpr NodeId k_max_nodes = NodeId{1} << 20;               // machine indices per cluster
inline constexpr double k_max_bandwidth_bytes_per_s = 1e15;          // 1 PB/s: anything above is a unit mistake
inline constexpr TimeNs k_max_link_latency_ns = k_ns_per_s;          // 1 s: anything above is a unit mistake

enum class VertexKind : std::uint8_t {
  cpu_socket = 0,
  host_memory,
  pcie_root_port,
  pcie_switch,
  gpu,
  nic,
  nvme,
  net_switch,
};
inline constexpr std::size_t k_vertex_kind_count = 8;
std::string_view to_string(VertexKind kind);
inline bool is_device(VertexKind kind) {
  return kind == VertexKind::gpu || kind == VertexKind::nic || kind == VertexKind::nvme;
}

enum class LinkClass : std::uint8_t {
  pcie = 0,      // a PCIe link (device, switch, root port <-> socket)
  memory,        // socket <-> its host memory
  inter_socket,  // the SMP interconnect between NUMA domains (QPI/UPI, Infinity Fabric)
  network,       // NIC <-> network switch, switch <-> switch
};
std::string_view to_string(LinkClass link_class);

struct Vertex {
  VertexKind kind = VertexKind::gpu;
  std::string name;               // unique in the topology: "gpu5", "mlx5_2", "node3/gpu5", "leaf2"
  NodeId node = 0;                // machine index; k_no_id for network switches (and only for them)
  std::uint32_t index = k_no_id;  // local index within (node, kind); k_no_id: add_vertex assigns the next
  std::uint32_t numa = k_no_id;   // socket / NUMA domain index within the node (k_no_id for net_switch)
  bool pcie_bridge = true;        // pcie_switch only: false for a multi-port adapter's function split

  // Attributes; 0 where not applicable or not stated by the source.
  std::uint64_t gpu_memory_bytes = 0;     // gpu
  double nic_port_rate_bytes_per_s = 0;   // nic: line rate of the port
  double nvme_read_bytes_per_s = 0;       // nvme: sequential read
  double nvme_write_bytes_per_s = 0;      // nvme: sequential write
  std::uint64_t nvme_capacity_bytes = 0;  // nvme
  std::uint64_t host_memory_bytes = 0;    // host_memory
};

struct LinkSpec {
  LinkClass link_class = LinkClass::pcie;
  double bandwidth_ab_bytes_per_s = 0;  // from the first vertex (a) to the second (b)
  double bandwidth_ba_bytes_per_s = 0;  // from b to a
  TimeNs latency_ns = 0;                // one way
  bool full_duplex = true;              // false: both directions share one capacity

  static LinkSpec symmetric(LinkClass link_class, double bandwidth_bytes_per_s, TimeNs latency_ns) {
    return LinkSpec{link_class, bandwidth_bytes_per_s, bandwidth_bytes_per_s, latency_ns, true};
  }
};

struct Link {
  VertexId a = k_no_vertex;
  VertexId b = k_no_vertex;
  LinkSpec spec;
};

// A path from source to destination as the links it crosses, in order.
// An empty edge list means source == destination.
struct Route {
  VertexId source = k_no_vertex;
  VertexId destination = k_no_vertex;
  std::vector<EdgeId> edges;
};

class Topology {
 public:
  // Vertex property: none (vertices live in vertices_); edge property: the EdgeId.
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, boost::no_property, EdgeId>;

  Topology() = default;

  // ---- building ----
  // Adds a vertex. Errors: empty or duplicate name, net_switch with a node or
  // another kind without one, node >= k_max_nodes, (node, kind, index) taken,
  // k_max_vertices reached.
  Result<VertexId> add_vertex(Vertex vertex);
  // Adds a link a-b. Errors: unknown vertex, a == b, bandwidth not finite or
  // <= 0 or > k_max_bandwidth_bytes_per_s in either direction, latency < 0 or
  // > k_max_link_latency_ns.
  Result<EdgeId> add_link(VertexId a, VertexId b, const LinkSpec& spec);
  // The same by vertex names; not_found names the unknown device.
  Result<EdgeId> add_link(std::string_view a_name, std::string_view b_name, const LinkSpec& spec);
  // Copies a single-machine topology (every vertex on node 0, no net_switch)
  // in as node `node`: names get the prefix "node<N>/", local indices are
  // kept. Errors: the machine is not a single machine, or `node` is taken.
  Status add_machine(const Topology& machine, NodeId node);
  // A label for what kind of machine a node is ("dgx_a100"); copied by add_machine.
  void set_machine_name(NodeId node, std::string name);

  // Whole-graph consistency check; see the contract above. Names the element.
  Status validate() const;

  // ---- access ----
  std::size_t vertex_count() const { return vertices_.size(); }
  std::size_t link_count() const { return links_.size(); }
  bool contains(VertexId v) const { return v < vertices_.size(); }
  const Vertex& vertex(VertexId v) const;
  const Link& link(EdgeId e) const;
  const Graph& graph() const { return graph_; }
  // Links incident to v, in insertion order.
  std::vector<EdgeId> links_of(VertexId v) const;
  // The end of e that is not v (v must be an end of e).
  VertexId other_end(EdgeId e, VertexId v) const;
  // Bandwidth of e in the direction leaving `from`.
  double bandwidth_from(EdgeId e, VertexId from) const;

  Result<VertexId> find(std::string_view name) const;
  // The vertex of `kind` with local index `index` on `node` (net_switch: node k_no_id).
  Result<VertexId> device(NodeId node, VertexKind kind, std::uint32_t index) const;
  // How many vertices of `kind` node has (0 for an unknown node).
  std::uint32_t count(NodeId node, VertexKind kind) const;
  // 1 + the highest node index used (0 when empty).
  NodeId node_count() const { return static_cast<NodeId>(nodes_.size()); }
  const std::string& machine_name(NodeId node) const;

  // ---- routes ----
  // Minimum-hop route; see the contract for cost and ECMP.
  Result<Route> route(VertexId from, VertexId to) const;
  // Route inside one machine (both vertices on the same node); only that
  // node's vertices are searched. E.g. a GPU to one of its node's NICs, a NIC
  // to host memory.
  Result<Route> machine_route(VertexId from, VertexId to) const;
  // Route between two NICs (or a NIC and a network switch) through network
  // switches only.
  Result<Route> fabric_route(VertexId from, VertexId to) const;
  // The smallest bandwidth along the route in its direction of travel;
  // +infinity for an empty route.
  double bottleneck_bytes_per_s(const Route& route) const;
  // Sum of the latencies of the route's links.
  TimeNs latency_ns(const Route& route) const;
  // source, the vertices crossed, destination.
  std::vector<VertexId> route_vertices(const Route& route) const;

 private:
  struct NodeTable {
    std::vector<VertexId> by_kind[k_vertex_kind_count];
    std::string machine_name;
  };
  enum class Scope : std::uint8_t { whole_graph, one_node, fabric };
  Result<Route> shortest_route(VertexId from, VertexId to, Scope scope) const;
  bool in_scope(Scope scope, NodeId node, VertexId v, VertexId from, VertexId to) const;
  std::vector<VertexId>* table_for(NodeId node, VertexKind kind);
  const std::vector<VertexId>* table_for(NodeId node, VertexKind kind) const;
  Status validate_vertex(VertexId v) const;
  Status validate_link(EdgeId e) const;
  Status validate_node(NodeId node) const;
  Status validate_attachment(NodeId node) const;

  Graph graph_;
  std::vector<Vertex> vertices_;
  std::vector<Link> links_;
  std::unordered_map<std::string, VertexId> by_name_;
  std::vector<NodeTable> nodes_;
  NodeTable fabric_;  // net_switch vertices
};

}  // namespace sluice::topo
