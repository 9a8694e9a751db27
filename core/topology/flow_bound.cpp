#include "core/topology/flow_bound.hpp"

#include <boost/graph/push_relabel_max_flow.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <queue>
#include <string_view>

#include "core/common/assert.hpp"

namespace sluice::topo {

namespace {

using Units = long long;
using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using FlowGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<boost::edge_capacity_t, Units,
                    boost::property<boost::edge_residual_capacity_t, Units,
                                    boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
using FlowEdge = Traits::edge_descriptor;

constexpr int k_unbounded = -1;  // an arc that limits nothing (a stage crossing, a half-duplex fan-in)
constexpr int k_demand = -2;     // a terminal's share of T

Units to_units(double bytes_per_s) { return static_cast<Units>(std::floor(bytes_per_s / k_flow_unit_bytes_per_s)); }

std::string kind_of(const Topology& t, const Link& l) {
  switch (l.spec.link_class) {
    case LinkClass::pcie: return "pcie";
    case LinkClass::memory: return "memory";
    case LinkClass::inter_socket: return "inter-socket";
    case LinkClass::network:
      return t.vertex(l.a).kind == VertexKind::nic || t.vertex(l.b).kind == VertexKind::nic ? "nic port" : "fabric";
  }
  return "link";
}

// Links whose capacity every stage shares (flow_bound.hpp): a socket's memory
// link and the inter-socket links, when their directions are separate.
bool shared_by_stages(const Link& l) {
  return l.spec.full_duplex && (l.spec.link_class == LinkClass::memory || l.spec.link_class == LinkClass::inter_socket);
}

// The flow network of one pattern: its arcs, which hardware each one is, and
// the terminal arcs whose capacity follows T.
class FlowNetwork {
 public:
  FlowNetwork(const Topology& t, const FlowPattern& p) : t_(t), p_(p) {}

  Status build();
  // Whether every terminal can carry T x its share at once.
  bool feasible(double total_bytes_per_s);
  // The largest T at which no terminal arc caps the flow alone.
  double terminal_ceiling() const { return terminal_ceiling_; }
  // The hardware arcs of a minimum cut at T (call after an infeasible T).
  std::vector<FlowCutArc> cut_at(double total_bytes_per_s);

 private:
  struct Arc {
    FlowEdge edge;
    int resource = k_unbounded;
    double share = 0;   // demand arcs: the terminal's fraction of T
    bool sink = false;  // demand arcs: on the sink side (rounded up)
  };
  std::size_t add_vertex() { return boost::add_vertex(g_); }
  void add_arc(std::size_t from, std::size_t to, Units cap, int resource, double share = 0, bool sink = false);
  int resource(std::string kind, std::string element, double bytes_per_s);
  Status check_terminal(const FlowTerminal& term, std::size_t stage, const char* side) const;
  Status add_stages();
  // Whether `l` is the PCIe link of a NIC that is a terminal of `stage`, a
  // stage with the fabric: such a NIC's bytes cross its port alone.
  bool bypasses_nic_terminal(std::size_t stage, const Link& l) const;
  // A link's capacity in the flow: network links carry network_payload_share of their rate.
  double capacity(const Link& l, double bytes_per_s) const;
  void add_link_arcs(std::size_t stage, EdgeId e);
  void add_shared_link_arcs(EdgeId e);
  Status add_terminals();
  Units run(double total_bytes_per_s);

  const Topology& t_;
  const FlowPattern& p_;
  FlowGraph g_;
  std::vector<Arc> arcs_;
  std::vector<FlowCutArc> resources_;
  std::map<std::string, int> resource_ids_;
  std::vector<std::vector<std::size_t>> at_;  // [stage][topology vertex] -> flow vertex, or k_absent
  std::size_t source_ = 0, sink_ = 0;
  std::vector<bool> nic_sources_, nic_sinks_;  // [topology vertex]: a NIC terminal of the first / last stage
  // [topology vertex]: for a host memory, the flow vertex of what its memory
  // link writes into it (every stage's bytes), where a sink written_by_copy
  // takes them; else k_absent.
  std::vector<std::size_t> written_in_;
  double terminal_ceiling_ = std::numeric_limits<double>::infinity();
  Units unbounded_ = 0;
  static constexpr std::size_t k_absent = std::numeric_limits<std::size_t>::max();
};

void FlowNetwork::add_arc(std::size_t from, std::size_t to, Units cap, int resource, double share, bool sink) {
  auto cap_map = boost::get(boost::edge_capacity, g_);
  auto rev_map = boost::get(boost::edge_reverse, g_);
  FlowEdge forward = boost::add_edge(from, to, g_).first;
  FlowEdge backward = boost::add_edge(to, from, g_).first;
  cap_map[forward] = cap;
  cap_map[backward] = 0;
  rev_map[forward] = backward;
  rev_map[backward] = forward;
  arcs_.push_back(Arc{forward, resource, share, sink});
}

int FlowNetwork::resource(std::string kind, std::string element, double bytes_per_s) {
  const std::string key = kind + "|" + element;
  auto [it, fresh] = resource_ids_.try_emplace(key, static_cast<int>(resources_.size()));
  if (fresh) resources_.push_back(FlowCutArc{std::move(kind), std::move(element), bytes_per_s});
  return it->second;
}

Status FlowNetwork::check_terminal(const FlowTerminal& term, std::size_t stage_index, const char* side) const {
  const FlowStage& stage = p_.stages[stage_index];
  const std::string what = std::string("flow_bound: ") + side + " ";
  if (!t_.contains(term.vertex)) return error(StatusCode::invalid_argument, what + "names no vertex");
  const Vertex& v = t_.vertex(term.vertex);
  if (v.kind != VertexKind::nvme && v.kind != VertexKind::host_memory && v.kind != VertexKind::gpu &&
      v.kind != VertexKind::nic) {
    return error(StatusCode::invalid_argument,
                 what + v.name + " is a " + std::string(to_string(v.kind)) + ", not an nvme, host_memory, gpu or nic");
  }
  if (!(term.share > 0) || !std::isfinite(term.share)) {
    return error(StatusCode::invalid_argument, what + v.name + ": share must be a positive finite number");
  }
  if (std::find(stage.nodes.begin(), stage.nodes.end(), v.node) == stage.nodes.end()) {
    return error(StatusCode::invalid_argument,
                 what + v.name + ": its node " + std::to_string(v.node) + " is not in the terminal's stage");
  }
  for (VertexId alt : term.alternatives) {
    if (v.kind == VertexKind::nvme)
      return error(StatusCode::invalid_argument, what + v.name + ": a drive has no alternatives");
    if (!t_.contains(alt) || t_.vertex(alt).node != v.node ||
        (t_.vertex(alt).kind != VertexKind::host_memory && t_.vertex(alt).kind != VertexKind::gpu)) {
      return error(StatusCode::invalid_argument,
                   what + v.name + ": an alternative is not a host_memory or gpu of node " + std::to_string(v.node));
    }
  }
  if (term.written_by_copy) {
    const bool sink = std::string_view(side) == "sink";
    const auto copied_into = [&](VertexId x) {
      return t_.vertex(x).kind == VertexKind::host_memory && written_in_[x] != k_absent;
    };
    if (!sink || !copied_into(term.vertex) ||
        !std::all_of(term.alternatives.begin(), term.alternatives.end(), copied_into)) {
      return error(StatusCode::invalid_argument,
                   what + v.name + ": written_by_copy takes a sink host memory (and alternatives) with a memory link");
    }
  }
  const auto reachable = [&](VertexId x) { return at_[stage_index][x] != k_absent; };
  if (!reachable(term.vertex) || !std::all_of(term.alternatives.begin(), term.alternatives.end(), reachable)) {
    return error(StatusCode::invalid_argument, what + v.name + ": its stage keeps node " + std::to_string(v.node) +
                                                   " peer-to-peer (below its root ports), where it is unreachable");
  }
  return ok_status();
}

Status FlowNetwork::add_stages() {
  at_.assign(p_.stages.size(), std::vector<std::size_t>(t_.vertex_count(), k_absent));
  // The NICs among the terminals, looked up per link below.
  nic_sources_.assign(t_.vertex_count(), false);
  nic_sinks_.assign(t_.vertex_count(), false);
  for (const auto& [side, marks] : {std::pair{&p_.sources, &nic_sources_}, std::pair{&p_.sinks, &nic_sinks_}}) {
    for (const FlowTerminal& term : *side) {
      if (t_.contains(term.vertex) && t_.vertex(term.vertex).kind == VertexKind::nic) (*marks)[term.vertex] = true;
    }
  }
  for (std::size_t k = 0; k < p_.stages.size(); ++k) {
    const FlowStage& stage = p_.stages[k];
    std::vector<bool> node_in(t_.node_count(), false);
    for (NodeId n : stage.nodes) {
      if (n >= t_.node_count()) {
        return error(StatusCode::invalid_argument, "flow_bound: stage " + std::to_string(k) + " names node " +
                                                       std::to_string(n) + " of " + std::to_string(t_.node_count()));
      }
      node_in[n] = true;
    }
    std::vector<bool> p2p(t_.node_count(), false);
    for (NodeId n : stage.peer_to_peer) {
      if (n >= t_.node_count() || !node_in[n]) {
        return error(StatusCode::invalid_argument, "flow_bound: stage " + std::to_string(k) + " keeps node " +
                                                       std::to_string(n) + " peer-to-peer but does not hold it");
      }
      p2p[n] = true;
    }
    for (VertexId v = 0; v < t_.vertex_count(); ++v) {
      const Vertex& vx = t_.vertex(v);
      // Peer-to-peer bytes stay below the root ports (flow_bound.hpp, GPUDirect).
      const bool above_root_ports = vx.kind == VertexKind::pcie_root_port || vx.kind == VertexKind::cpu_socket ||
                                    vx.kind == VertexKind::host_memory;
      const bool in =
          vx.kind == VertexKind::net_switch ? stage.fabric : node_in[vx.node] && !(p2p[vx.node] && above_root_ports);
      if (in) at_[k][v] = add_vertex();
    }
    for (EdgeId e = 0; e < t_.link_count(); ++e) {
      if (!shared_by_stages(t_.link(e)) && !bypasses_nic_terminal(k, t_.link(e))) add_link_arcs(k, e);
    }
  }
  written_in_.assign(t_.vertex_count(), k_absent);
  for (EdgeId e = 0; e < t_.link_count(); ++e) {
    if (shared_by_stages(t_.link(e))) add_shared_link_arcs(e);
  }
  // Bytes cross from stage k to k+1 at a host memory both stages hold.
  for (std::size_t k = 0; k + 1 < p_.stages.size(); ++k) {
    for (VertexId v = 0; v < t_.vertex_count(); ++v) {
      if (t_.vertex(v).kind == VertexKind::host_memory && at_[k][v] != k_absent && at_[k + 1][v] != k_absent) {
        add_arc(at_[k][v], at_[k + 1][v], 0, k_unbounded);
      }
    }
  }
  return ok_status();
}

bool FlowNetwork::bypasses_nic_terminal(std::size_t stage, const Link& l) const {
  if (!p_.stages[stage].fabric || l.spec.link_class == LinkClass::network) return false;
  const std::vector<bool>* terminals = stage == 0 ? &nic_sources_ : nullptr;
  const bool last = stage + 1 == p_.stages.size();
  const auto is_terminal = [&](VertexId v) {
    return (terminals != nullptr && (*terminals)[v]) || (last && nic_sinks_[v]);
  };
  return is_terminal(l.a) || is_terminal(l.b);
}

double FlowNetwork::capacity(const Link& l, double bytes_per_s) const {
  return l.spec.link_class == LinkClass::network ? bytes_per_s * p_.network_payload_share : bytes_per_s;
}

void FlowNetwork::add_link_arcs(std::size_t stage, EdgeId e) {
  const Link& l = t_.link(e);
  const std::size_t a = at_[stage][l.a], b = at_[stage][l.b];
  if (a == k_absent || b == k_absent) return;
  const std::string kind = kind_of(t_, l);
  const std::string& an = t_.vertex(l.a).name;
  const std::string& bn = t_.vertex(l.b).name;
  const double ab = capacity(l, l.spec.bandwidth_ab_bytes_per_s);
  const double ba = capacity(l, l.spec.bandwidth_ba_bytes_per_s);
  if (l.spec.full_duplex) {
    add_arc(a, b, to_units(ab), resource(kind, an + "->" + bn, ab));
    add_arc(b, a, to_units(ba), resource(kind, bn + "->" + an, ba));
    return;
  }
  // Both directions share one capacity: a and b both feed one arc that feeds both.
  const double cap = std::min(ab, ba);
  const std::size_t in = add_vertex(), out = add_vertex();
  add_arc(a, in, 0, k_unbounded);
  add_arc(b, in, 0, k_unbounded);
  add_arc(in, out, to_units(cap), resource(kind, an + "<->" + bn, cap));
  add_arc(out, a, 0, k_unbounded);
  add_arc(out, b, 0, k_unbounded);
}

void FlowNetwork::add_shared_link_arcs(EdgeId e) {
  const Link& l = t_.link(e);
  const std::string kind = kind_of(t_, l);
  const auto one_way = [&](VertexId from, VertexId to, double bytes_per_s, const std::string& element) {
    const std::size_t in = add_vertex(), out = add_vertex();
    add_arc(in, out, to_units(bytes_per_s), resource(kind, element, bytes_per_s));
    if (l.spec.link_class == LinkClass::memory && t_.vertex(to).kind == VertexKind::host_memory) written_in_[to] = out;
    for (std::size_t k = 0; k < p_.stages.size(); ++k) {
      if (at_[k][from] == k_absent || at_[k][to] == k_absent) continue;
      add_arc(at_[k][from], in, 0, k_unbounded);
      add_arc(out, at_[k][to], 0, k_unbounded);
    }
  };
  const std::string& an = t_.vertex(l.a).name;
  const std::string& bn = t_.vertex(l.b).name;
  SLUICE_ASSERT(l.spec.full_duplex);
  one_way(l.a, l.b, capacity(l, l.spec.bandwidth_ab_bytes_per_s), an + "->" + bn);
  one_way(l.b, l.a, capacity(l, l.spec.bandwidth_ba_bytes_per_s), bn + "->" + an);
}

Status FlowNetwork::add_terminals() {
  source_ = add_vertex();
  sink_ = add_vertex();
  for (const auto* side : {&p_.sources, &p_.sinks}) {
    const bool is_sink = side == &p_.sinks;
    const std::size_t stage = is_sink ? p_.stages.size() - 1 : 0;
    double total_share = 0;
    for (const FlowTerminal& term : *side) {
      if (Status s = check_terminal(term, stage, is_sink ? "sink" : "source"); !s.ok()) return s;
      total_share += term.share;
    }
    for (const FlowTerminal& term : *side) {
      const Vertex& v = t_.vertex(term.vertex);
      const double fraction = term.share / total_share;
      // A page cache takes only what its memory link writes (written_by_copy).
      const auto entry = [&](VertexId x) { return term.written_by_copy ? written_in_[x] : at_[stage][x]; };
      std::size_t end = entry(term.vertex);
      if (v.kind == VertexKind::nvme) {
        const double rate = is_sink ? v.nvme_write_bytes_per_s : v.nvme_read_bytes_per_s;
        const std::size_t drive = add_vertex();
        const int r = resource(is_sink ? "drive write" : "drive read", v.name, rate);
        if (is_sink) {
          add_arc(end, drive, to_units(rate), r);
        } else {
          add_arc(drive, end, to_units(rate), r);
        }
        terminal_ceiling_ = std::min(terminal_ceiling_, rate / fraction);
        end = drive;
      }
      if (!term.alternatives.empty()) {
        // One demand for the terminal, met at any of its vertices.
        const std::size_t hub = add_vertex();
        for (VertexId alt : term.alternatives) {
          if (is_sink) {
            add_arc(entry(alt), hub, 0, k_unbounded);
          } else {
            add_arc(hub, at_[stage][alt], 0, k_unbounded);
          }
        }
        if (is_sink) {
          add_arc(end, hub, 0, k_unbounded);
        } else {
          add_arc(hub, end, 0, k_unbounded);
        }
        end = hub;
      }
      if (is_sink) {
        add_arc(end, sink_, 0, k_demand, fraction, true);
      } else {
        add_arc(source_, end, 0, k_demand, fraction, false);
      }
    }
  }
  return ok_status();
}

Status FlowNetwork::build() {
  if (p_.stages.empty()) return error(StatusCode::invalid_argument, "flow_bound: a pattern needs at least one stage");
  if (p_.stages.size() > k_flow_max_stages) {
    return error(StatusCode::invalid_argument, "flow_bound: " + std::to_string(p_.stages.size()) +
                                                   " stages exceed k_flow_max_stages (" +
                                                   std::to_string(k_flow_max_stages) + ")");
  }
  if (p_.sources.empty() || p_.sinks.empty()) {
    return error(StatusCode::invalid_argument, "flow_bound: a pattern needs at least one source and one sink");
  }
  if (p_.sources.size() + p_.sinks.size() > k_flow_max_terminals) {
    return error(StatusCode::invalid_argument, "flow_bound: more terminals than k_flow_max_terminals");
  }
  if (!(p_.network_payload_share > 0 && p_.network_payload_share <= 1)) {
    return error(StatusCode::invalid_argument, "flow_bound: network_payload_share " +
                                                   std::to_string(p_.network_payload_share) + " is outside (0, 1]");
  }
  if (Status s = add_stages(); !s.ok()) return s;
  if (Status s = add_terminals(); !s.ok()) return s;
  // An unbounded arc carries at most what every bounded arc together could.
  auto cap_map = boost::get(boost::edge_capacity, g_);
  Units total = 0;
  for (const Arc& a : arcs_) {
    if (a.resource >= 0) total = std::min<Units>(total + cap_map[a.edge], std::numeric_limits<Units>::max() / 4);
  }
  unbounded_ = total + 1;
  for (const Arc& a : arcs_) {
    if (a.resource == k_unbounded) cap_map[a.edge] = unbounded_;
  }
  return ok_status();
}

Units FlowNetwork::run(double total_bytes_per_s) {
  auto cap_map = boost::get(boost::edge_capacity, g_);
  for (const Arc& a : arcs_) {
    if (a.resource != k_demand) continue;
    const double units = total_bytes_per_s * a.share / k_flow_unit_bytes_per_s;
    cap_map[a.edge] = std::min<Units>(static_cast<Units>(a.sink ? std::ceil(units) : std::floor(units)), unbounded_);
  }
  return boost::push_relabel_max_flow(g_, source_, sink_);
}

bool FlowNetwork::feasible(double total_bytes_per_s) {
  const Units flow = run(total_bytes_per_s);
  auto cap_map = boost::get(boost::edge_capacity, g_);
  Units wanted = 0;
  for (const Arc& a : arcs_) {
    if (a.resource == k_demand && !a.sink) wanted += cap_map[a.edge];
  }
  return flow >= wanted;
}

std::vector<FlowCutArc> FlowNetwork::cut_at(double total_bytes_per_s) {
  run(total_bytes_per_s);
  auto residual = boost::get(boost::edge_residual_capacity, g_);
  std::vector<bool> reached(boost::num_vertices(g_), false);
  std::queue<std::size_t> todo;
  reached[source_] = true;
  todo.push(source_);
  while (!todo.empty()) {
    const std::size_t u = todo.front();
    todo.pop();
    for (auto [it, end] = boost::out_edges(u, g_); it != end; ++it) {
      const std::size_t v = boost::target(*it, g_);
      if (!reached[v] && residual[*it] > 0) {
        reached[v] = true;
        todo.push(v);
      }
    }
  }
  std::vector<bool> taken(resources_.size(), false);
  std::vector<FlowCutArc> cut;
  for (const Arc& a : arcs_) {
    if (a.resource < 0 || taken[static_cast<std::size_t>(a.resource)]) continue;
    if (reached[boost::source(a.edge, g_)] && !reached[boost::target(a.edge, g_)]) {
      taken[static_cast<std::size_t>(a.resource)] = true;
      cut.push_back(resources_[static_cast<std::size_t>(a.resource)]);
    }
  }
  std::sort(cut.begin(), cut.end(), [](const FlowCutArc& x, const FlowCutArc& y) {
    return std::tie(x.kind, x.element) < std::tie(y.kind, y.element);
  });
  return cut;
}

// The kind with the most capacity in the cut, named with up to four of its elements.
void name_binding(FlowBound& bound) {
  std::map<std::string, double> by_kind;
  for (const FlowCutArc& a : bound.cut) by_kind[a.kind] += a.capacity_bytes_per_s;
  if (by_kind.empty()) {
    bound.binding_kind = "none";
    bound.binding = "none (no hardware arc separates the sources from the sinks)";
    return;
  }
  bound.binding_kind = std::max_element(by_kind.begin(), by_kind.end(), [](const auto& x, const auto& y) {
                         return x.second < y.second;
                       })->first;
  constexpr std::size_t k_named = 4;
  std::string text = bound.binding_kind + ":";
  std::size_t count = 0;
  for (const FlowCutArc& a : bound.cut) {
    if (a.kind != bound.binding_kind) continue;
    if (count < k_named) text += (count == 0 ? " " : ", ") + a.element;
    ++count;
  }
  if (count > k_named) text += " and " + std::to_string(count - k_named) + " more";
  bound.binding = text;
}

}  // namespace

Result<FlowBound> flow_bound(const Topology& topology, const FlowPattern& pattern) {
  FlowNetwork net(topology, pattern);
  if (Status s = net.build(); !s.ok()) return s;
  // A first ceiling: the largest T that some single drive allows, or else what
  // every bounded arc together could carry.
  double hi = net.terminal_ceiling();
  if (!std::isfinite(hi)) hi = k_max_bandwidth_bytes_per_s * static_cast<double>(topology.link_count() + 1);
  double lo = 0;
  bool hi_feasible = net.feasible(hi);
  if (!hi_feasible) {
    while (hi - lo > k_flow_relative_tolerance * hi && hi - lo > k_flow_unit_bytes_per_s) {
      const double mid = lo + (hi - lo) / 2;
      if (net.feasible(mid)) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
  } else {
    lo = hi;
  }
  FlowBound bound;
  bound.bytes_per_s = lo;
  SLUICE_ASSERT(bound.bytes_per_s >= 0);
  // The cut just above the bound names what binds.
  bound.cut = net.cut_at(hi_feasible ? hi * (1 + 1e-3) : hi);
  name_binding(bound);
  return bound;
}

}  // namespace sluice::topo
