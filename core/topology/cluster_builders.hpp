// Clusters: machines joined by a network.
//
// Every NIC of every machine gets one network link to the switch of its
// machine (star: the one switch; fat tree: the machine's leaf). A link's rate
// is the NIC's port rate, or `link_bytes_per_s` when that is set (> 0) and
// lower. Machine i becomes node i, with names prefixed "node<i>/".
//
// Cost: vertices and links only (no route tables); a 1,250-node DGX A100 fat
// tree is ~75,000 vertices. Routes are computed on demand: use
// machine_route() inside a node and fabric_route() between NICs.
#pragma once

#include <cstdint>
#include <span>

#include "core/common/status.hpp"
#include "core/topology/hardware_figures.hpp"
#include "core/topology/topology.hpp"

namespace sluice::topo {

// Limits.
inline constexpr std::uint32_t k_max_cluster_nodes = 100'000;
inline constexpr std::uint32_t k_max_spines = 1'024;

struct StarOptions {
  double link_bytes_per_s = 0;  // 0: each NIC's port rate
  TimeNs link_latency_ns = k_network_link_latency_ns;
};

// `node_count` copies of one machine on one switch named "switch".
Result<Topology> star_cluster(const Topology& machine, std::uint32_t node_count, const StarOptions& options = {});
// Different machines on one switch; machines[i] becomes node i.
Result<Topology> star_cluster(std::span<const Topology* const> machines, const StarOptions& options = {});

// A two-level fat tree (leaf-spine). Node i hangs off leaf i / nodes_per_leaf
// ("leaf<k>"); every leaf links to every spine ("spine<k>"). The leaf-spine
// links of a leaf together carry (sum of its NIC links) / oversubscription,
// split evenly over the spines (parallel cables merged into one link).
// Routes between leaves pick the spine by the ECMP hash (topology.hpp).
struct FatTreeOptions {
  std::uint32_t nodes_per_leaf = 16;
  std::uint32_t spines = 2;
  double oversubscription = 1.0;                       // downlink : uplink capacity of a leaf; >= 1
  double link_bytes_per_s = 0;                         // node links; 0: each NIC's port rate
  TimeNs link_latency_ns = k_network_link_latency_ns;  // every network link
};

Result<Topology> fat_tree_cluster(const Topology& machine, std::uint32_t node_count, const FatTreeOptions& options);
Result<Topology> fat_tree_cluster(std::span<const Topology* const> machines, const FatTreeOptions& options);

}  // namespace sluice::topo
