#include "core/topology/peer_rank.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace sluice::topo {
namespace {

struct Chain {
  std::vector<VertexId> bridges;  // bottom-up: first bridge ... root port
  double link_bytes_per_s = 0;    // the device's own link (up to its first bridge)
};

// The device's bridges from itself up to its root port, read off the machine
// route to its socket.
Result<Chain> bridge_chain(const Topology& topology, VertexId device) {
  const Vertex& x = topology.vertex(device);
  auto socket = topology.device(x.node, VertexKind::cpu_socket, x.numa);
  if (!socket.ok()) return socket.status();
  auto up = topology.machine_route(device, *socket);
  if (!up.ok()) return up.status();
  Chain chain;
  chain.link_bytes_per_s = std::numeric_limits<double>::infinity();
  bool below_first_bridge = true;
  VertexId at = device;
  for (EdgeId e : up->edges) {
    const VertexId next = topology.other_end(e, at);
    const Vertex& n = topology.vertex(next);
    if (below_first_bridge) {
      chain.link_bytes_per_s =
          std::min({chain.link_bytes_per_s, topology.bandwidth_from(e, at), topology.bandwidth_from(e, next)});
    }
    if ((n.kind == VertexKind::pcie_switch && n.pcie_bridge) || n.kind == VertexKind::pcie_root_port) {
      chain.bridges.push_back(next);
      below_first_bridge = false;
    }
    at = next;
  }
  if (chain.bridges.empty()) {
    return error(StatusCode::invalid_argument, "peer_rank: '" + x.name + "' is not below a PCIe root port");
  }
  return chain;
}

}  // namespace

Result<PeerRank> peer_rank(const Topology& topology, VertexId gpu, VertexId peer) {
  if (!topology.contains(gpu) || !topology.contains(peer))
    return error(StatusCode::not_found, "peer_rank: unknown vertex id");
  const Vertex& g = topology.vertex(gpu);
  const Vertex& p = topology.vertex(peer);
  if (g.kind != VertexKind::gpu) return error(StatusCode::invalid_argument, "peer_rank: '" + g.name + "' is not a gpu");
  if (p.kind != VertexKind::nic && p.kind != VertexKind::nvme) {
    return error(StatusCode::invalid_argument, "peer_rank: '" + p.name + "' is not a nic or nvme");
  }
  if (g.node != p.node) {
    return error(StatusCode::invalid_argument,
                 "peer_rank: '" + g.name + "' and '" + p.name + "' are on different nodes");
  }
  auto gc = bridge_chain(topology, gpu);
  if (!gc.ok()) return gc.status();
  auto pc = bridge_chain(topology, peer);
  if (!pc.ok()) return pc.status();
  const auto& gb = gc->bridges;
  const auto& pb = pc->bridges;

  PeerRank rank;
  rank.cross_numa = g.numa != p.numa;
  // Walk both chains top-down while they agree; what is left below is each side's depth.
  std::size_t gi = gb.size(), pi = pb.size();
  while (gi > 0 && pi > 0 && gb[gi - 1] == pb[pi - 1]) {
    --gi;
    --pi;
  }
  if (gi == gb.size()) {  // not even the root port is shared
    rank.cross_root_port = true;
    const std::uint32_t base = rank.cross_numa ? 2 * k_pci_distance_cross_root_port : k_pci_distance_cross_root_port;
    rank.pci_distance = base + static_cast<std::uint32_t>(gb.size() + pb.size()) + 1;
  } else {
    rank.pci_distance = static_cast<std::uint32_t>(gi + pi) + 1;
  }
  rank.link_bandwidth_bytes_per_s = pc->link_bytes_per_s;
  const double mb_per_s = std::floor(rank.link_bandwidth_bytes_per_s / 1e6);
  const std::uint64_t bandwidth_term = mb_per_s >= static_cast<double>(k_rank_bandwidth_max)
                                           ? k_rank_bandwidth_max
                                           : static_cast<std::uint64_t>(mb_per_s);
  rank.key = (std::uint64_t{rank.pci_distance} << 32) | (k_rank_bandwidth_max - bandwidth_term);
  auto pclass = path_class(topology, gpu, peer);
  if (!pclass.ok()) return pclass.status();
  rank.path_class = *pclass;
  return rank;
}

Result<std::vector<RankedPeer>> rank_peers(const Topology& topology, VertexId gpu, VertexKind peer_kind) {
  if (!topology.contains(gpu)) return error(StatusCode::not_found, "rank_peers: unknown vertex id");
  if (peer_kind != VertexKind::nic && peer_kind != VertexKind::nvme) {
    return error(StatusCode::invalid_argument,
                 "rank_peers: peers are nic or nvme, not " + std::string(to_string(peer_kind)));
  }
  const NodeId node = topology.vertex(gpu).node;
  std::vector<RankedPeer> out;
  const std::uint32_t n = topology.count(node, peer_kind);
  for (std::uint32_t i = 0; i < n; ++i) {
    auto peer = topology.device(node, peer_kind, i);
    if (!peer.ok()) return peer.status();
    auto rank = peer_rank(topology, gpu, *peer);
    if (!rank.ok()) return rank.status();
    out.push_back(RankedPeer{*peer, i, *rank});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const RankedPeer& a, const RankedPeer& b) { return a.rank.key < b.rank.key; });
  return out;
}

}  // namespace sluice::topo
