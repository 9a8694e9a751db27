#include "core/topology/cluster_builders.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace sluice::topo {
namespace {

// The machine source for node i, whether all nodes share one machine or not.
using MachineOf = std::function<const Topology&(std::uint32_t)>;

Status check_node_count(std::uint32_t node_count) {
  if (node_count == 0 || node_count > k_max_cluster_nodes) {
    return error(StatusCode::invalid_argument,
                 "cluster: node count " + std::to_string(node_count) + " must be in [1, k_max_cluster_nodes]");
  }
  return ok_status();
}

Result<VertexId> add_switch(Topology& cluster, std::string name) {
  return cluster.add_vertex(Vertex{.kind = VertexKind::net_switch, .name = std::move(name), .node = k_no_id});
}

// Adds node `node` and links each of its NICs to `sw`; returns the sum of the link rates.
Result<double> attach_machine(Topology& cluster, const Topology& machine, NodeId node, VertexId sw,
                              double link_bytes_per_s, TimeNs latency_ns) {
  if (auto s = cluster.add_machine(machine, node); !s.ok()) return s;
  double total = 0;
  const std::uint32_t nics = cluster.count(node, VertexKind::nic);
  for (std::uint32_t i = 0; i < nics; ++i) {
    const VertexId nic = *cluster.device(node, VertexKind::nic, i);
    double rate = cluster.vertex(nic).nic_port_rate_bytes_per_s;
    if (link_bytes_per_s > 0) rate = std::min(rate, link_bytes_per_s);
    auto e = cluster.add_link(nic, sw, LinkSpec::symmetric(LinkClass::network, rate, latency_ns));
    if (!e.ok()) return e.status();
    total += rate;
  }
  if (nics == 0) {
    return error(StatusCode::invalid_argument, "cluster: node " + std::to_string(node) + " (" +
                                                   cluster.machine_name(node) +
                                                   ") has no NIC to join the network with");
  }
  return total;
}

Result<Topology> build_star(std::uint32_t node_count, const MachineOf& machine_of, const StarOptions& options) {
  if (auto s = check_node_count(node_count); !s.ok()) return s;
  Topology cluster;
  auto sw = add_switch(cluster, "switch");
  if (!sw.ok()) return sw.status();
  for (std::uint32_t i = 0; i < node_count; ++i) {
    auto r = attach_machine(cluster, machine_of(i), i, *sw, options.link_bytes_per_s, options.link_latency_ns);
    if (!r.ok()) return r.status();
  }
  if (auto s = cluster.validate(); !s.ok()) return s;
  return cluster;
}

Result<Topology> build_fat_tree(std::uint32_t node_count, const MachineOf& machine_of, const FatTreeOptions& options) {
  if (auto s = check_node_count(node_count); !s.ok()) return s;
  if (options.nodes_per_leaf == 0) return error(StatusCode::invalid_argument, "fat tree: nodes_per_leaf must be > 0");
  if (options.spines == 0 || options.spines > k_max_spines) {
    return error(StatusCode::invalid_argument,
                 "fat tree: spines " + std::to_string(options.spines) + " must be in [1, k_max_spines]");
  }
  if (!std::isfinite(options.oversubscription) || options.oversubscription < 1.0) {
    return error(StatusCode::invalid_argument, "fat tree: oversubscription must be >= 1 (downlink:uplink)");
  }
  const std::uint32_t leaves = (node_count + options.nodes_per_leaf - 1) / options.nodes_per_leaf;
  Topology cluster;
  std::vector<VertexId> spine_ids;
  for (std::uint32_t s = 0; s < options.spines; ++s) {
    auto id = add_switch(cluster, "spine" + std::to_string(s));
    if (!id.ok()) return id.status();
    spine_ids.push_back(*id);
  }
  for (std::uint32_t leaf = 0; leaf < leaves; ++leaf) {
    auto leaf_id = add_switch(cluster, "leaf" + std::to_string(leaf));
    if (!leaf_id.ok()) return leaf_id.status();
    double downlink = 0;
    const std::uint32_t first = leaf * options.nodes_per_leaf;
    const std::uint32_t last = std::min(node_count, first + options.nodes_per_leaf);
    for (std::uint32_t i = first; i < last; ++i) {
      auto r = attach_machine(cluster, machine_of(i), i, *leaf_id, options.link_bytes_per_s, options.link_latency_ns);
      if (!r.ok()) return r.status();
      downlink += *r;
    }
    const double per_spine = downlink / options.oversubscription / options.spines;
    for (VertexId spine : spine_ids) {
      auto e = cluster.add_link(*leaf_id, spine,
                                LinkSpec::symmetric(LinkClass::network, per_spine, options.link_latency_ns));
      if (!e.ok()) return e.status();
    }
  }
  if (auto s = cluster.validate(); !s.ok()) return s;
  return cluster;
}

MachineOf from_span(std::span<const Topology* const> machines) {
  return [machines](std::uint32_t i) -> const Topology& { return *machines[i]; };
}

Status check_span(std::span<const Topology* const> machines) {
  for (std::size_t i = 0; i < machines.size(); ++i) {
    if (machines[i] == nullptr)
      return error(StatusCode::invalid_argument, "cluster: machine " + std::to_string(i) + " is null");
  }
  if (machines.size() > k_max_cluster_nodes)
    return error(StatusCode::invalid_argument, "cluster: more than k_max_cluster_nodes machines");
  return ok_status();
}

}  // namespace

Result<Topology> star_cluster(const Topology& machine, std::uint32_t node_count, const StarOptions& options) {
  return build_star(
      node_count, [&machine](std::uint32_t) -> const Topology& { return machine; }, options);
}

Result<Topology> star_cluster(std::span<const Topology* const> machines, const StarOptions& options) {
  if (auto s = check_span(machines); !s.ok()) return s;
  return build_star(static_cast<std::uint32_t>(machines.size()), from_span(machines), options);
}

Result<Topology> fat_tree_cluster(const Topology& machine, std::uint32_t node_count, const FatTreeOptions& options) {
  return build_fat_tree(
      node_count, [&machine](std::uint32_t) -> const Topology& { return machine; }, options);
}

Result<Topology> fat_tree_cluster(std::span<const Topology* const> machines, const FatTreeOptions& options) {
  if (auto s = check_span(machines); !s.ok()) return s;
  return build_fat_tree(static_cast<std::uint32_t>(machines.size()), from_span(machines), options);
}

}  // namespace sluice::topo
