#include "core/sched/peer_rail.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "core/common/assert.hpp"
#include "core/topology/path_class.hpp"

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

Result<std::vector<TargetPlace>> place_targets(const topo::Topology& topology, NodeId server_node,
                                               const std::vector<std::uint32_t>& nvme) {
  const std::uint32_t nics = topology.count(server_node, VertexKind::nic);
  std::vector<topo::VertexId> nic_switch(nics, topo::k_no_vertex);
  std::vector<topo::VertexId> nic_vertex(nics, topo::k_no_vertex);
  for (std::uint32_t i = 0; i < nics; ++i) {
    nic_vertex[i] = *topology.device(server_node, VertexKind::nic, i);
    nic_switch[i] = switch_of(topology, nic_vertex[i]);
  }
  std::vector<TargetPlace> places;
  for (std::size_t ordinal = 0; ordinal < nvme.size(); ++ordinal) {
    Result<topo::VertexId> drive = topology.device(server_node, VertexKind::nvme, nvme[ordinal]);
    if (!drive.ok()) return drive.status();
    TargetPlace place;
    place.staging_numa = static_cast<std::uint16_t>(topology.vertex(*drive).numa);
    // The drive's distance to each cabled NIC: 0 within its NUMA node (its
    // bytes are staged in that node's memory, so a NIC under the same switch
    // is no nearer than one under another root port of the socket), 1 across
    // the inter-socket link (SYS).
    std::vector<std::uint8_t> distance(nics, 0xff);
    for (std::uint32_t i = 0; i < nics; ++i) {
      if (nic_switch[i] == topo::k_no_vertex) continue;
      Result<topo::PathClass> pc = topo::path_class(topology, *drive, nic_vertex[i]);
      distance[i] = pc.ok() && *pc <= topo::PathClass::node ? 0 : 1;
    }
    // The nearest NICs among those on `sw` (k_no_vertex: among every cabled NIC).
    auto nearest = [&](topo::VertexId sw) {
      std::vector<std::uint32_t> best;
      std::uint8_t best_distance = 0xff;
      for (std::uint32_t i = 0; i < nics; ++i) {
        if (nic_switch[i] == topo::k_no_vertex || (sw != topo::k_no_vertex && nic_switch[i] != sw)) continue;
        if (distance[i] < best_distance) best.clear();
        if (distance[i] <= best_distance) {
          best_distance = distance[i];
          best.push_back(i);
        }
      }
      return best;
    };
    if (std::any_of(nic_switch.begin(), nic_switch.end(), [](topo::VertexId v) { return v != topo::k_no_vertex; })) {
      for (std::uint32_t named = 0; named < nics; ++named) {
        std::vector<std::uint32_t> on_switch = nearest(nic_switch[named]);
        place.nics_for.push_back(on_switch.empty() ? nearest(topo::k_no_vertex) : std::move(on_switch));
      }
      place.nics_for.push_back(nearest(topo::k_no_vertex));
      SLUICE_ASSERT_MSG(std::none_of(place.nics_for.begin(), place.nics_for.end(),
                                     [](const std::vector<std::uint32_t>& l) { return l.empty(); }),
                        "a server with a cabled NIC has a candidate for every named NIC");
    }
    places.push_back(std::move(place));
  }
  return places;
}

}  // namespace sluice::sched
