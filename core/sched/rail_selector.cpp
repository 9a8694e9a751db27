#include "core/sched/rail_selector.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>

#include "core/common/assert.hpp"
#include "core/topology/path_class.hpp"
#include "core/topology/peer_rank.hpp"

namespace sluice::sched {

using topo::VertexKind;

Result<RailSelector> RailSelector::create(const topo::Topology& topology, NodeId node, RailLimits limits) {
  if (limits.max_connections_per_nic == 0 || limits.max_connections_per_nic > k_max_connections_per_nic_limit) {
    return error(StatusCode::invalid_argument, "rail selector: max_connections_per_nic " +
                                                   std::to_string(limits.max_connections_per_nic) +
                                                   " must be in [1, k_max_connections_per_nic_limit]");
  }
  const std::uint32_t nics = topology.count(node, VertexKind::nic);
  if (nics == 0) return error(StatusCode::not_found, "rail selector: node " + std::to_string(node) + " has no NIC");
  RailSelector s;
  s.node_ = node;
  s.limits_ = limits;
  s.nics_ = nics;
  s.none_active_.assign(nics, 0);
  s.last_chosen_.assign(nics, 0);
  for (std::uint32_t g = 0; g < topology.count(node, VertexKind::gpu); ++g) {
    const topo::VertexId gpu = *topology.device(node, VertexKind::gpu, g);
    std::vector<std::uint64_t> keys(nics);
    std::vector<bool> direct(nics, false);
    for (std::uint32_t n = 0; n < nics; ++n) {
      const topo::VertexId nic = *topology.device(node, VertexKind::nic, n);
      auto rank = topo::peer_rank(topology, gpu, nic);
      if (!rank.ok()) return rank.status();
      keys[n] = rank->key;
      auto pc = topo::path_class(topology, gpu, nic);
      if (!pc.ok()) return pc.status();
      direct[n] = *pc <= k_max_direct_path_class;
    }
    s.gpu_keys_.push_back(std::move(keys));
    s.gpu_numa_.push_back(static_cast<std::uint16_t>(topology.vertex(gpu).numa));
    s.gpu_any_direct_.push_back(std::find(direct.begin(), direct.end(), true) != direct.end());
    s.gpu_direct_.push_back(std::move(direct));
  }
  for (std::uint32_t numa = 0; numa < topology.count(node, VertexKind::cpu_socket); ++numa) {
    std::vector<std::uint64_t> keys(nics);
    for (std::uint32_t n = 0; n < nics; ++n) {
      const topo::Vertex& nic = topology.vertex(*topology.device(node, VertexKind::nic, n));
      const double mb_per_s = std::floor(nic.nic_port_rate_bytes_per_s / 1e6);
      const auto rate = static_cast<std::uint64_t>(std::min(mb_per_s, static_cast<double>(topo::k_rank_bandwidth_max)));
      keys[n] = (std::uint64_t{nic.numa == numa ? 0u : 1u} << 32) | (topo::k_rank_bandwidth_max - rate);
    }
    s.numa_keys_.push_back(std::move(keys));
  }
  return s;
}

const std::vector<std::uint64_t>* RailSelector::keys_for(MemoryPlace destination) const {
  const auto& table = destination.kind == MemKind::gpu ? gpu_keys_ : numa_keys_;
  return destination.device < table.size() ? &table[destination.device] : nullptr;
}

Result<std::uint64_t> RailSelector::rank_key(MemoryPlace destination, std::uint32_t nic) const {
  const auto* keys = keys_for(destination);
  if (keys == nullptr) {
    return error(StatusCode::invalid_argument, "rail selector: node " + std::to_string(node_) + " has no " +
                                                   (destination.kind == MemKind::gpu ? "GPU " : "NUMA node ") +
                                                   std::to_string(destination.device));
  }
  if (nic >= keys->size())
    return error(StatusCode::invalid_argument, "rail selector: unknown NIC " + std::to_string(nic));
  return (*keys)[nic];
}

const std::vector<std::uint32_t>& RailSelector::counts(NodeId peer) const {
  auto it = active_.find(peer);
  return it == active_.end() ? none_active_ : it->second;
}

Result<std::vector<std::uint32_t>> RailSelector::preference(MemoryPlace destination, NodeId peer) const {
  const auto* keys = keys_for(destination);
  if (keys == nullptr) return rank_key(destination, 0).status();
  const std::vector<std::uint32_t>& active = counts(peer);
  std::vector<std::uint32_t> order(nics_);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return std::tie((*keys)[a], active[a], last_chosen_[a], a) < std::tie((*keys)[b], active[b], last_chosen_[b], b);
  });
  return order;
}

bool RailSelector::bounces(std::uint32_t gpu, BackendCaps caps) const {
  return !caps.gpu_memory_reachable || !gpu_any_direct_[gpu];
}

bool RailSelector::usable_for(MemoryPlace destination, std::uint32_t nic, BackendCaps caps) const {
  if (destination.kind != MemKind::gpu) return nic < nics_;
  if (destination.device >= gpu_direct_.size() || nic >= nics_) return false;
  return bounces(destination.device, caps) || gpu_direct_[destination.device][nic];
}

MemoryPlace RailSelector::ranking_place(MemoryPlace destination, BackendCaps caps) const {
  if (destination.kind != MemKind::gpu || destination.device >= gpu_numa_.size()) return destination;
  return bounces(destination.device, caps) ? MemoryPlace::pinned(gpu_numa_[destination.device]) : destination;
}

Result<std::uint32_t> RailSelector::choose(MemoryPlace destination, BackendCaps caps, NodeId peer) {
  auto order = preference(ranking_place(destination, caps), peer);
  if (!order.ok()) return order.status();
  for (std::uint32_t nic : *order) {
    if (!usable_for(destination, nic, caps)) continue;
    if (acquire(nic, peer).ok()) return nic;
  }
  return error(StatusCode::again, "rail selector: all " + std::to_string(nics_) + " NICs of node " +
                                      std::to_string(node_) + " have max_connections_per_nic (" +
                                      std::to_string(limits_.max_connections_per_nic) + ") connections" +
                                      (peer == k_no_id ? std::string() : " to node " + std::to_string(peer)));
}

Status RailSelector::acquire(std::uint32_t nic, NodeId peer) {
  if (nic >= nics_) return error(StatusCode::invalid_argument, "rail selector: unknown NIC " + std::to_string(nic));
  if (counts(peer)[nic] >= limits_.max_connections_per_nic) {
    return error(StatusCode::again, "rail selector: NIC " + std::to_string(nic) + " is at max_connections_per_nic");
  }
  std::vector<std::uint32_t>& active = active_.try_emplace(peer, none_active_).first->second;
  ++active[nic];
  SLUICE_ASSERT(active[nic] <= limits_.max_connections_per_nic);
  last_chosen_[nic] = ++choices_;
  return ok_status();
}

Status RailSelector::release(std::uint32_t nic, NodeId peer) {
  if (nic >= nics_) return error(StatusCode::invalid_argument, "rail selector: unknown NIC " + std::to_string(nic));
  auto it = active_.find(peer);
  if (it == active_.end() || it->second[nic] == 0) {
    return error(StatusCode::invalid_argument,
                 "rail selector: release of NIC " + std::to_string(nic) + " without a connection");
  }
  --it->second[nic];
  return ok_status();
}

}  // namespace sluice::sched
