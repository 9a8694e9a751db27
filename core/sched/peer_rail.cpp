#include "core/sched/peer_rail.hpp"

#include <string>
#include <vector>

namespace sluice::sched {

using topo::VertexKind;

namespace {

// The switch a NIC is cabled to, or k_no_vertex if it has no network link.
topo::VertexId switch_of(const topo::Topology& t, topo::VertexId nic) {
  for (topo::EdgeId e : t.links_of(nic)) {
    if (t.link(e).spec.link_class == topo::LinkClass::network) return t.other_end(e, nic);
  }
  return topo::k_no_vertex;
}

}  // namespace

Result<std::uint32_t> peer_nic(const topo::Topology& topology, NodeId client_node, std::uint32_t client_nic,
                               NodeId server_node) {
  Result<topo::VertexId> own = topology.device(client_node, VertexKind::nic, client_nic);
  if (!own.ok()) return own.status();
  const topo::VertexId own_switch = switch_of(topology, *own);
  if (own_switch == topo::k_no_vertex) {
    return error(StatusCode::not_found, "peer_nic: NIC " + std::to_string(client_nic) + " of node " +
                                            std::to_string(client_node) + " has no network link");
  }
  // The client NIC's position among its node's cabled NICs.
  std::uint32_t position = 0;
  for (std::uint32_t i = 0; i < client_nic; ++i) {
    if (switch_of(topology, *topology.device(client_node, VertexKind::nic, i)) != topo::k_no_vertex) ++position;
  }
  std::vector<std::uint32_t> same_switch, cabled;
  for (std::uint32_t i = 0; i < topology.count(server_node, VertexKind::nic); ++i) {
    const topo::VertexId sw = switch_of(topology, *topology.device(server_node, VertexKind::nic, i));
    if (sw == topo::k_no_vertex) continue;
    cabled.push_back(i);
    if (sw == own_switch) same_switch.push_back(i);
  }
  const std::vector<std::uint32_t>& candidates = same_switch.empty() ? cabled : same_switch;
  if (candidates.empty()) {
    return error(StatusCode::not_found,
                 "peer_nic: server node " + std::to_string(server_node) + " has no NIC with a network link");
  }
  return candidates[position % candidates.size()];
}

}  // namespace sluice::sched
