#include "core/topology/topology.hpp"

#include <boost/graph/connected_components.hpp>

#include <algorithm>
#include "core/common/assert.hpp"
#include <cmath>
#include <deque>
#include <limits>
#include <unordered_set>

#include "core/common/rng.hpp"

namespace sluice::topo {

std::string_view to_string(VertexKind kind) {
  switch (kind) {
    case VertexKind::cpu_socket: return "cpu_socket";
    case VertexKind::host_memory: return "host_memory";
    case VertexKind::pcie_root_port: return "pcie_root_port";
    case VertexKind::pcie_switch: return "pcie_switch";
    case VertexKind::gpu: return "gpu";
    case VertexKind::nic: return "nic";
    case VertexKind::nvme: return "nvme";
    case VertexKind::net_switch: return "net_switch";
  }
  return "unknown";
}

std::string_view to_string(LinkClass link_class) {
  switch (link_class) {
    case LinkClass::pcie: return "pcie";
    case LinkClass::memory: return "memory";
    case LinkClass::inter_socket: return "inter_socket";
    case LinkClass::network: return "network";
  }
  return "unknown";
}

namespace {

bool bandwidth_ok(double bytes_per_s) {
  return std::isfinite(bytes_per_s) && bytes_per_s > 0 && bytes_per_s <= k_max_bandwidth_bytes_per_s;
}

std::string quoted(const std::string& name) { return "'" + name + "'"; }

}  // namespace

// ---- building ---------------------------------------------------------------

std::vector<VertexId>* Topology::table_for(NodeId node, VertexKind kind) {
  const auto k = static_cast<std::size_t>(kind);
  if (node == k_no_id) return &fabric_.by_kind[k];
  if (node >= nodes_.size()) nodes_.resize(static_cast<std::size_t>(node) + 1);
  return &nodes_[node].by_kind[k];
}

const std::vector<VertexId>* Topology::table_for(NodeId node, VertexKind kind) const {
  const auto k = static_cast<std::size_t>(kind);
  if (node == k_no_id) return &fabric_.by_kind[k];
  if (node >= nodes_.size()) return nullptr;
  return &nodes_[node].by_kind[k];
}

Result<VertexId> Topology::add_vertex(Vertex vertex) {
  if (vertex.name.empty()) return error(StatusCode::invalid_argument, "topology: a vertex needs a name");
  if (vertices_.size() >= k_max_vertices) {
    return error(StatusCode::no_space, "topology: k_max_vertices (" + std::to_string(k_max_vertices) +
                                           ") reached adding " + quoted(vertex.name));
  }
  if (by_name_.count(vertex.name) != 0) {
    return error(StatusCode::already_exists, "topology: duplicate vertex name " + quoted(vertex.name));
  }
  const bool is_fabric = vertex.kind == VertexKind::net_switch;
  if (is_fabric && vertex.node != k_no_id) {
    return error(StatusCode::invalid_argument,
                 "topology: net_switch " + quoted(vertex.name) + " must have node k_no_id (it belongs to no machine)");
  }
  if (!is_fabric && vertex.node == k_no_id) {
    return error(StatusCode::invalid_argument,
                 "topology: " + std::string(to_string(vertex.kind)) + " " + quoted(vertex.name) + " needs a node");
  }
  if (!is_fabric && vertex.node >= k_max_nodes) {
    return error(StatusCode::invalid_argument, "topology: node " + std::to_string(vertex.node) + " of " +
                                                   quoted(vertex.name) + " exceeds k_max_nodes");
  }
  if (vertex.index != k_no_id && vertex.index >= k_max_vertices) {
    return error(StatusCode::invalid_argument,
                 "topology: index " + std::to_string(vertex.index) + " of " + quoted(vertex.name) + " is too large");
  }
  auto* table = table_for(vertex.node, vertex.kind);
  if (vertex.index == k_no_id) vertex.index = static_cast<std::uint32_t>(table->size());
  if (vertex.index < table->size() && (*table)[vertex.index] != k_no_vertex) {
    return error(StatusCode::already_exists,
                 "topology: " + quoted(vertex.name) + " reuses " + std::string(to_string(vertex.kind)) + " index " +
                     std::to_string(vertex.index) + " of " + quoted(vertices_[(*table)[vertex.index]].name));
  }
  if (vertex.index >= table->size()) table->resize(static_cast<std::size_t>(vertex.index) + 1, k_no_vertex);
  const auto id = static_cast<VertexId>(vertices_.size());
  (*table)[vertex.index] = id;
  by_name_.emplace(vertex.name, id);
  vertices_.push_back(std::move(vertex));
  const auto boost_id = boost::add_vertex(graph_);
  SLUICE_ASSERT(boost_id == id);
  (void)boost_id;
  return id;
}

Result<EdgeId> Topology::add_link(VertexId a, VertexId b, const LinkSpec& spec) {
  if (!contains(a) || !contains(b)) {
    return error(StatusCode::not_found,
                 "topology: link between unknown vertex ids " + std::to_string(a) + " and " + std::to_string(b));
  }
  const std::string where = "topology: link " + vertices_[a].name + " - " + vertices_[b].name;
  if (a == b) return error(StatusCode::invalid_argument, where + " connects a vertex to itself");
  if (!bandwidth_ok(spec.bandwidth_ab_bytes_per_s) || !bandwidth_ok(spec.bandwidth_ba_bytes_per_s)) {
    return error(StatusCode::invalid_argument,
                 where + " has bandwidth " + std::to_string(spec.bandwidth_ab_bytes_per_s) + " / " +
                     std::to_string(spec.bandwidth_ba_bytes_per_s) +
                     " bytes/s; each direction must be > 0 and <= k_max_bandwidth_bytes_per_s");
  }
  if (spec.latency_ns < 0 || spec.latency_ns > k_max_link_latency_ns) {
    return error(StatusCode::invalid_argument, where + " has latency " + std::to_string(spec.latency_ns) +
                                                   " ns; must be in [0, k_max_link_latency_ns]");
  }
  const auto id = static_cast<EdgeId>(links_.size());
  links_.push_back(Link{a, b, spec});
  boost::add_edge(a, b, id, graph_);
  return id;
}

Result<EdgeId> Topology::add_link(std::string_view a_name, std::string_view b_name, const LinkSpec& spec) {
  auto a = find(a_name);
  if (!a.ok()) return a.status();
  auto b = find(b_name);
  if (!b.ok()) return b.status();
  return add_link(*a, *b, spec);
}

Status Topology::add_machine(const Topology& machine, NodeId node) {
  if (node >= k_max_nodes)
    return error(StatusCode::invalid_argument, "topology: node " + std::to_string(node) + " exceeds k_max_nodes");
  if (node < nodes_.size()) {
    for (const auto& table : nodes_[node].by_kind) {
      if (!table.empty())
        return error(StatusCode::already_exists, "topology: node " + std::to_string(node) + " is already populated");
    }
  }
  for (const auto& v : machine.vertices_) {
    if (v.node != 0) {
      return error(StatusCode::invalid_argument,
                   "topology: add_machine needs a single machine (node 0 only), but " + quoted(v.name) +
                       " is on node " + (v.node == k_no_id ? std::string("k_no_id") : std::to_string(v.node)));
    }
  }
  const std::string prefix = "node" + std::to_string(node) + "/";
  std::vector<VertexId> map(machine.vertices_.size(), k_no_vertex);
  for (std::size_t i = 0; i < machine.vertices_.size(); ++i) {
    Vertex v = machine.vertices_[i];
    v.node = node;
    v.name = prefix + v.name;
    auto id = add_vertex(std::move(v));
    if (!id.ok()) return id.status();
    map[i] = *id;
  }
  for (const auto& l : machine.links_) {
    auto id = add_link(map[l.a], map[l.b], l.spec);
    if (!id.ok()) return id.status();
  }
  if (!machine.nodes_.empty()) set_machine_name(node, machine.nodes_[0].machine_name);
  return ok_status();
}

void Topology::set_machine_name(NodeId node, std::string name) {
  if (node == k_no_id || node >= k_max_nodes) return;
  if (node >= nodes_.size()) nodes_.resize(static_cast<std::size_t>(node) + 1);
  nodes_[node].machine_name = std::move(name);
}

// ---- access -------------------------------------------------------------------

const Vertex& Topology::vertex(VertexId v) const {
  SLUICE_ASSERT(contains(v));
  return vertices_[v];
}

const Link& Topology::link(EdgeId e) const {
  SLUICE_ASSERT(e < links_.size());
  return links_[e];
}

std::vector<EdgeId> Topology::links_of(VertexId v) const {
  SLUICE_ASSERT(contains(v));
  std::vector<EdgeId> out;
  for (auto [it, end] = boost::out_edges(v, graph_); it != end; ++it) out.push_back(graph_[*it]);
  return out;
}

VertexId Topology::other_end(EdgeId e, VertexId v) const {
  const Link& l = link(e);
  SLUICE_ASSERT(l.a == v || l.b == v);
  return l.a == v ? l.b : l.a;
}

double Topology::bandwidth_from(EdgeId e, VertexId from) const {
  const Link& l = link(e);
  SLUICE_ASSERT(l.a == from || l.b == from);
  return l.a == from ? l.spec.bandwidth_ab_bytes_per_s : l.spec.bandwidth_ba_bytes_per_s;
}

Result<VertexId> Topology::find(std::string_view name) const {
  const auto it = by_name_.find(std::string(name));
  if (it == by_name_.end()) return error(StatusCode::not_found, "topology: unknown device '" + std::string(name) + "'");
  return it->second;
}

Result<VertexId> Topology::device(NodeId node, VertexKind kind, std::uint32_t index) const {
  const auto* table = table_for(node, kind);
  if (table == nullptr || index >= table->size() || (*table)[index] == k_no_vertex) {
    return error(StatusCode::not_found, "topology: node " +
                                            (node == k_no_id ? std::string("fabric") : std::to_string(node)) +
                                            " has no " + std::string(to_string(kind)) + " " + std::to_string(index));
  }
  return (*table)[index];
}

std::uint32_t Topology::count(NodeId node, VertexKind kind) const {
  const auto* table = table_for(node, kind);
  if (table == nullptr) return 0;
  return static_cast<std::uint32_t>(
      std::count_if(table->begin(), table->end(), [](VertexId v) { return v != k_no_vertex; }));
}

const std::string& Topology::machine_name(NodeId node) const {
  static const std::string k_empty;
  if (node >= nodes_.size()) return k_empty;
  return nodes_[node].machine_name;
}

// ---- routes ---------------------------------------------------------------------

bool Topology::in_scope(Scope scope, NodeId node, VertexId v, VertexId from, VertexId to) const {
  if (v == from || v == to) return true;
  switch (scope) {
    case Scope::whole_graph: return true;
    case Scope::one_node: return vertices_[v].node == node;
    case Scope::fabric: return vertices_[v].kind == VertexKind::net_switch;
  }
  return false;
}

Result<Route> Topology::shortest_route(VertexId from, VertexId to, Scope scope) const {
  Route route{from, to, {}};
  if (from == to) return route;
  const NodeId node = vertices_[from].node;
  // Breadth-first from the destination: dist[v] = hops from v to `to`.
  std::unordered_map<VertexId, std::uint32_t> dist;
  std::deque<VertexId> queue;
  dist.emplace(to, 0);
  queue.push_back(to);
  while (!queue.empty()) {
    const VertexId u = queue.front();
    queue.pop_front();
    if (u == from) break;  // every vertex nearer than `from` is final
    // Do not search onwards through the far endpoint's neighbours outside the scope;
    // the source itself is never expanded (it is where the walk starts).
    const std::uint32_t du = dist[u];
    for (auto [it, end] = boost::out_edges(u, graph_); it != end; ++it) {
      const auto w = static_cast<VertexId>(boost::target(*it, graph_));
      if (!in_scope(scope, node, w, from, to) || dist.count(w) != 0) continue;
      dist.emplace(w, du + 1);
      queue.push_back(w);
    }
  }
  const auto found = dist.find(from);
  if (found == dist.end()) {
    return error(StatusCode::not_found,
                 "topology: no route from " + quoted(vertices_[from].name) + " to " + quoted(vertices_[to].name));
  }
  // Walk from the source, choosing among equal-cost next hops by a flow hash.
  std::uint64_t seed_state = (std::uint64_t{from} << 32) ^ to;
  const std::uint64_t flow_hash = splitmix64(seed_state);
  std::vector<std::pair<EdgeId, VertexId>> candidates;
  VertexId u = from;
  std::uint32_t du = found->second;
  for (std::uint32_t hop = 0; u != to; ++hop) {
    candidates.clear();
    for (auto [it, end] = boost::out_edges(u, graph_); it != end; ++it) {
      const auto w = static_cast<VertexId>(boost::target(*it, graph_));
      const auto dw = dist.find(w);
      if (dw != dist.end() && dw->second + 1 == du) candidates.emplace_back(graph_[*it], w);
    }
    SLUICE_ASSERT(!candidates.empty());
    std::sort(candidates.begin(), candidates.end());
    std::size_t pick = 0;
    if (candidates.size() > 1) {
      std::uint64_t hop_state = flow_hash + hop;
      pick = static_cast<std::size_t>(splitmix64(hop_state) % candidates.size());
    }
    route.edges.push_back(candidates[pick].first);
    u = candidates[pick].second;
    --du;
  }
  return route;
}

Result<Route> Topology::route(VertexId from, VertexId to) const {
  if (!contains(from) || !contains(to))
    return error(StatusCode::not_found, "topology: route between unknown vertex ids");
  const auto& a = vertices_[from];
  const auto& b = vertices_[to];
  if (a.node != k_no_id && a.node == b.node) return shortest_route(from, to, Scope::one_node);
  return shortest_route(from, to, Scope::whole_graph);
}

Result<Route> Topology::machine_route(VertexId from, VertexId to) const {
  if (!contains(from) || !contains(to))
    return error(StatusCode::not_found, "topology: route between unknown vertex ids");
  const auto& a = vertices_[from];
  const auto& b = vertices_[to];
  if (a.node == k_no_id || a.node != b.node) {
    return error(StatusCode::invalid_argument, "topology: machine_route needs two vertices of one node, got " +
                                                   quoted(a.name) + " and " + quoted(b.name));
  }
  return shortest_route(from, to, Scope::one_node);
}

Result<Route> Topology::fabric_route(VertexId from, VertexId to) const {
  if (!contains(from) || !contains(to))
    return error(StatusCode::not_found, "topology: route between unknown vertex ids");
  for (VertexId v : {from, to}) {
    const auto kind = vertices_[v].kind;
    if (kind != VertexKind::nic && kind != VertexKind::net_switch) {
      return error(StatusCode::invalid_argument, "topology: fabric_route joins NICs and network switches, not " +
                                                     std::string(to_string(kind)) + " " + quoted(vertices_[v].name));
    }
  }
  return shortest_route(from, to, Scope::fabric);
}

double Topology::bottleneck_bytes_per_s(const Route& route) const {
  double bottleneck = std::numeric_limits<double>::infinity();
  VertexId at = route.source;
  for (EdgeId e : route.edges) {
    bottleneck = std::min(bottleneck, bandwidth_from(e, at));
    at = other_end(e, at);
  }
  return bottleneck;
}

TimeNs Topology::latency_ns(const Route& route) const {
  TimeNs total = 0;
  for (EdgeId e : route.edges) total += link(e).spec.latency_ns;
  return total;
}

std::vector<VertexId> Topology::route_vertices(const Route& route) const {
  std::vector<VertexId> out{route.source};
  VertexId at = route.source;
  for (EdgeId e : route.edges) {
    at = other_end(e, at);
    out.push_back(at);
  }
  return out;
}

// ---- validation -------------------------------------------------------------------

Status Topology::validate_link(EdgeId e) const {
  const Link& l = links_[e];
  const Vertex& a = vertices_[l.a];
  const Vertex& b = vertices_[l.b];
  const std::string where = "topology: link " + a.name + " - " + b.name;
  if (!bandwidth_ok(l.spec.bandwidth_ab_bytes_per_s) || !bandwidth_ok(l.spec.bandwidth_ba_bytes_per_s)) {
    return error(StatusCode::invalid_argument, where + " has zero or invalid bandwidth");
  }
  const bool a_fabric = a.kind == VertexKind::net_switch;
  const bool b_fabric = b.kind == VertexKind::net_switch;
  if (l.spec.link_class == LinkClass::network) {
    const bool ends_ok =
        (a_fabric && (b_fabric || b.kind == VertexKind::nic)) || (b_fabric && a.kind == VertexKind::nic);
    if (!ends_ok)
      return error(StatusCode::invalid_argument,
                   where + " is a network link but does not join a NIC or switch to a switch");
    return ok_status();
  }
  if (a_fabric || b_fabric)
    return error(StatusCode::invalid_argument, where + " joins a network switch with a non-network link");
  if (a.node != b.node)
    return error(StatusCode::invalid_argument, where + " crosses nodes " + std::to_string(a.node) + " and " +
                                                   std::to_string(b.node) + " without the network");
  const auto is = [&](VertexKind k1, VertexKind k2) {
    return (a.kind == k1 && b.kind == k2) || (a.kind == k2 && b.kind == k1);
  };
  switch (l.spec.link_class) {
    case LinkClass::memory:
      if (!is(VertexKind::cpu_socket, VertexKind::host_memory))
        return error(StatusCode::invalid_argument,
                     where + " is a memory link but does not join a socket and its memory");
      if (a.index != b.index)
        return error(StatusCode::invalid_argument, where + " joins socket and memory of different indices");
      break;
    case LinkClass::inter_socket:
      if (!is(VertexKind::cpu_socket, VertexKind::cpu_socket))
        return error(StatusCode::invalid_argument, where + " is an inter_socket link but does not join two sockets");
      break;
    case LinkClass::pcie:
      if (a.kind == VertexKind::host_memory || b.kind == VertexKind::host_memory)
        return error(StatusCode::invalid_argument,
                     where + " is a PCIe link to host memory (use a memory link to its socket)");
      if (is(VertexKind::cpu_socket, VertexKind::cpu_socket))
        return error(StatusCode::invalid_argument, where + " is a PCIe link between sockets (use inter_socket)");
      if ((a.kind == VertexKind::cpu_socket && b.kind != VertexKind::pcie_root_port) ||
          (b.kind == VertexKind::cpu_socket && a.kind != VertexKind::pcie_root_port)) {
        return error(StatusCode::invalid_argument, where + " attaches a device to a socket without a pcie_root_port");
      }
      if (is_device(a.kind) && is_device(b.kind))
        return error(StatusCode::invalid_argument, where + " joins two devices directly");
      break;
    case LinkClass::network: break;
  }
  return ok_status();
}

Status Topology::validate_vertex(VertexId v) const {
  const Vertex& x = vertices_[v];
  const std::string where = "topology: " + std::string(to_string(x.kind)) + " " + quoted(x.name);
  std::uint32_t pcie = 0, network = 0, memory = 0;
  for (auto [it, end] = boost::out_edges(v, graph_); it != end; ++it) {
    switch (links_[graph_[*it]].spec.link_class) {
      case LinkClass::pcie: ++pcie; break;
      case LinkClass::network: ++network; break;
      case LinkClass::memory: ++memory; break;
      case LinkClass::inter_socket: break;
    }
  }
  if (x.kind != VertexKind::net_switch) {
    // Every non-fabric vertex belongs to a NUMA domain that exists on its node.
    if (x.numa == k_no_id) return error(StatusCode::invalid_argument, where + " has no NUMA node");
    if (!device(x.node, VertexKind::cpu_socket, x.numa).ok()) {
      return error(StatusCode::not_found, where + " names NUMA node " + std::to_string(x.numa) + ", which node " +
                                              std::to_string(x.node) + " does not have");
    }
  }
  switch (x.kind) {
    case VertexKind::gpu:
    case VertexKind::nvme:
      if (pcie != 1)
        return error(StatusCode::invalid_argument,
                     where + (pcie == 0 ? " has no PCIe link" : " has more than one PCIe link"));
      break;
    case VertexKind::nic:
      if (pcie != 1)
        return error(StatusCode::invalid_argument,
                     where + (pcie == 0 ? " has no PCIe link" : " has more than one PCIe link"));
      if (x.nic_port_rate_bytes_per_s <= 0 || !std::isfinite(x.nic_port_rate_bytes_per_s)) {
        return error(StatusCode::invalid_argument, where + " has no port rate");
      }
      break;
    case VertexKind::host_memory:
      if (memory != 1)
        return error(StatusCode::invalid_argument, where + " needs exactly one memory link to its socket");
      if (x.index != x.numa)
        return error(StatusCode::invalid_argument,
                     where + " has index " + std::to_string(x.index) + " but NUMA node " + std::to_string(x.numa));
      break;
    case VertexKind::cpu_socket:
      if (x.index != x.numa)
        return error(StatusCode::invalid_argument,
                     where + " has index " + std::to_string(x.index) + " but NUMA node " + std::to_string(x.numa));
      if (!device(x.node, VertexKind::host_memory, x.index).ok())
        return error(StatusCode::not_found, where + " has no host_memory " + std::to_string(x.index));
      break;
    case VertexKind::pcie_root_port:
    case VertexKind::pcie_switch:
      if (pcie == 0) return error(StatusCode::invalid_argument, where + " has no PCIe link");
      break;
    case VertexKind::net_switch:
      if (network == 0) return error(StatusCode::invalid_argument, where + " has no network link");
      break;
  }
  return ok_status();
}

Status Topology::validate_node(NodeId node) const {
  const NodeTable& t = nodes_[node];
  bool empty = true;
  for (std::size_t k = 0; k < k_vertex_kind_count; ++k) {
    const auto& table = t.by_kind[k];
    for (std::size_t i = 0; i < table.size(); ++i) {
      empty = false;
      if (table[i] == k_no_vertex) {
        return error(StatusCode::invalid_argument, "topology: node " + std::to_string(node) + " has " +
                                                       std::string(to_string(static_cast<VertexKind>(k))) + " " +
                                                       std::to_string(table.size() - 1) + " but no " +
                                                       std::to_string(i) + " (indices must be dense)");
      }
    }
  }
  if (empty) return error(StatusCode::invalid_argument, "topology: node " + std::to_string(node) + " has no vertices");
  if (t.by_kind[static_cast<std::size_t>(VertexKind::cpu_socket)].empty()) {
    return error(StatusCode::invalid_argument, "topology: node " + std::to_string(node) + " has no cpu_socket");
  }
  return ok_status();
}

Status Topology::validate_attachment(NodeId node) const {
  // Each socket owns the PCIe tree below it: search from every socket without
  // passing through another socket; every PCIe vertex must be reached by
  // exactly one socket, and that socket must be the NUMA node it declares.
  const NodeTable& t = nodes_[node];
  std::unordered_map<VertexId, VertexId> owner;
  std::deque<VertexId> queue;
  for (VertexId socket : t.by_kind[static_cast<std::size_t>(VertexKind::cpu_socket)]) {
    queue.assign(1, socket);
    std::unordered_set<VertexId> seen{socket};
    while (!queue.empty()) {
      const VertexId u = queue.front();
      queue.pop_front();
      for (auto [it, end] = boost::out_edges(u, graph_); it != end; ++it) {
        if (links_[graph_[*it]].spec.link_class != LinkClass::pcie) continue;
        const auto w = static_cast<VertexId>(boost::target(*it, graph_));
        if (vertices_[w].node != node || vertices_[w].kind == VertexKind::cpu_socket || seen.count(w) != 0) continue;
        seen.insert(w);
        const auto [slot, fresh] = owner.emplace(w, socket);
        if (!fresh && slot->second != socket) {
          return error(StatusCode::invalid_argument, "topology: " + quoted(vertices_[w].name) + " hangs below both " +
                                                         quoted(vertices_[slot->second].name) + " and " +
                                                         quoted(vertices_[socket].name));
        }
        queue.push_back(w);
      }
    }
  }
  for (std::size_t k = 0; k < k_vertex_kind_count; ++k) {
    const auto kind = static_cast<VertexKind>(k);
    if (!is_device(kind) && kind != VertexKind::pcie_switch && kind != VertexKind::pcie_root_port) continue;
    for (VertexId v : t.by_kind[k]) {
      const Vertex& x = vertices_[v];
      const auto it = owner.find(v);
      if (it == owner.end()) {
        return error(StatusCode::invalid_argument, "topology: " + std::string(to_string(kind)) + " " + quoted(x.name) +
                                                       " is not connected to any socket through PCIe");
      }
      if (vertices_[it->second].index != x.numa) {
        return error(StatusCode::invalid_argument, "topology: " + std::string(to_string(kind)) + " " + quoted(x.name) +
                                                       " declares NUMA node " + std::to_string(x.numa) +
                                                       " but is attached below " + quoted(vertices_[it->second].name));
      }
    }
  }
  return ok_status();
}

Status Topology::validate() const {
  if (vertices_.empty()) return error(StatusCode::invalid_argument, "topology: empty");
  for (EdgeId e = 0; e < links_.size(); ++e) {
    if (auto s = validate_link(e); !s.ok()) return s;
  }
  for (NodeId n = 0; n < nodes_.size(); ++n) {
    if (auto s = validate_node(n); !s.ok()) return s;
  }
  for (VertexId v = 0; v < vertices_.size(); ++v) {
    if (auto s = validate_vertex(v); !s.ok()) return s;
  }
  for (NodeId n = 0; n < nodes_.size(); ++n) {
    if (auto s = validate_attachment(n); !s.ok()) return s;
  }
  std::vector<int> component(vertices_.size());
  const int components = boost::connected_components(graph_, component.data());
  if (components > 1) {
    for (VertexId v = 0; v < vertices_.size(); ++v) {
      if (component[v] != component[0]) {
        return error(StatusCode::invalid_argument, "topology: disconnected: " + quoted(vertices_[v].name) +
                                                       " cannot reach " + quoted(vertices_[0].name));
      }
    }
  }
  return ok_status();
}

}  // namespace sluice::topo
