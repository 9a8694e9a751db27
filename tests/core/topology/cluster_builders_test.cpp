#include "core/topology/cluster_builders.hpp"

#include <gtest/gtest.h>

#include <set>

#include "core/topology/machine_builders.hpp"
#include "core/topology/path_class.hpp"

namespace sluice::topo {
namespace {

TEST(StarCluster, JoinsEveryNicToTheSwitch) {
  const Topology nd = *azure_nd40rs_v2();
  auto c = star_cluster(nd, 4);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->node_count(), 4u);
  const VertexId a = *c->find("node0/mlx5_0");
  const VertexId b = *c->find("node3/mlx5_0");
  auto r = c->fabric_route(a, b);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->edges.size(), 2u);
  EXPECT_EQ(c->vertex(c->route_vertices(*r)[1]).name, "switch");
  EXPECT_DOUBLE_EQ(c->bottleneck_bytes_per_s(*r), 12.5e9);
  EXPECT_EQ(c->latency_ns(*r), 2 * k_network_link_latency_ns);
  EXPECT_EQ(*path_class(*c, *c->find("node0/gpu0"), *c->find("node1/gpu0")), PathClass::net);
}

TEST(StarCluster, LinkRateCapsThePortRate) {
  const Topology nd = *azure_nd40rs_v2();
  StarOptions o;
  o.link_bytes_per_s = gbps_to_bytes_per_s(25);
  o.link_latency_ns = 1000;
  auto c = star_cluster(nd, 2, o);
  ASSERT_TRUE(c.ok());
  auto r = c->fabric_route(*c->find("node0/mlx5_0"), *c->find("node1/mlx5_0"));
  EXPECT_DOUBLE_EQ(c->bottleneck_bytes_per_s(*r), gbps_to_bytes_per_s(25));
  EXPECT_EQ(c->latency_ns(*r), 2000);
}

TEST(StarCluster, MixesDifferentMachines) {
  const Topology host = *critical_io_gpu_host();
  const Topology recorder = *critical_io_recorder();
  const Topology* machines[] = {&host, &recorder};
  auto c = star_cluster(std::span<const Topology* const>(machines));
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->machine_name(0), "critical_io_gpu_host");
  EXPECT_EQ(c->machine_name(1), "critical_io_recorder");
  // GPU on node 0 to NVMe on node 1, composed from machine and fabric routes.
  const VertexId gpu = *c->find("node0/gpu0");
  const VertexId nic0 = *c->find("node0/mlx5_0");
  const VertexId nic1 = *c->find("node1/mlx5_0");
  const VertexId nvme = *c->find("node1/nvme0");
  auto leg1 = c->machine_route(gpu, nic0);
  auto leg2 = c->fabric_route(nic0, nic1);
  auto leg3 = c->machine_route(nic1, nvme);
  ASSERT_TRUE(leg1.ok() && leg2.ok() && leg3.ok());
  // The whole-graph route finds a path of the same length.
  auto whole = c->route(gpu, nvme);
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->edges.size(), leg1->edges.size() + leg2->edges.size() + leg3->edges.size());
}

TEST(StarCluster, RejectsBadInput) {
  const Topology nd = *azure_nd40rs_v2();
  EXPECT_FALSE(star_cluster(nd, 0).ok());
  EXPECT_FALSE(star_cluster(nd, k_max_cluster_nodes + 1).ok());
  const Topology* null_machine[] = {nullptr};
  EXPECT_FALSE(star_cluster(std::span<const Topology* const>(null_machine)).ok());
  GenericMachine no_nic;
  no_nic.nics = 0;
  const Topology lonely = *generic_machine(no_nic);
  auto c = star_cluster(lonely, 2);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("no NIC"), std::string::npos);
}

TEST(FatTree, SpreadsFlowsOverSpinesAndHonoursOversubscription) {
  const Topology dgx = *dgx_a100();
  FatTreeOptions o;
  o.nodes_per_leaf = 4;
  o.spines = 4;
  o.oversubscription = 2.0;
  auto c = fat_tree_cluster(dgx, 16, o);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->count(k_no_id, VertexKind::net_switch), 4u + 4u);
  // Leaf uplink: 4 nodes x 10 NICs x 25 GB/s / 2 / 4 spines.
  const VertexId leaf0 = *c->find("leaf0");
  const VertexId spine0 = *c->find("spine0");
  bool found = false;
  for (EdgeId e : c->links_of(leaf0)) {
    if (c->other_end(e, leaf0) == spine0) {
      EXPECT_DOUBLE_EQ(c->bandwidth_from(e, leaf0), 4 * 10 * 25e9 / 2 / 4);
      found = true;
    }
  }
  EXPECT_TRUE(found);
  // Same leaf: NIC-leaf-NIC. Different leaves: through one spine, chosen by hash, deterministic.
  auto near = c->fabric_route(*c->find("node0/mlx5_0"), *c->find("node3/mlx5_0"));
  ASSERT_TRUE(near.ok());
  EXPECT_EQ(near->edges.size(), 2u);
  std::set<std::string> spines_used;
  for (std::uint32_t n = 4; n < 16; ++n) {
    for (std::uint32_t k = 0; k < 10; ++k) {
      const VertexId from = *c->find("node0/mlx5_" + std::to_string(k));
      const VertexId to = *c->find("node" + std::to_string(n) + "/mlx5_" + std::to_string(k));
      auto r = c->fabric_route(from, to);
      ASSERT_TRUE(r.ok());
      ASSERT_EQ(r->edges.size(), 4u);
      EXPECT_EQ(r->edges, c->fabric_route(from, to)->edges);
      spines_used.insert(c->vertex(c->route_vertices(*r)[2]).name);
    }
  }
  EXPECT_EQ(spines_used.size(), 4u);
}

TEST(FatTree, ScalesTo1250DgxNodesWithoutRouteTables) {
  const Topology dgx = *dgx_a100();
  FatTreeOptions o;
  o.nodes_per_leaf = 32;
  o.spines = 20;
  auto c = fat_tree_cluster(dgx, 1250, o);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->node_count(), 1250u);
  EXPECT_EQ(c->vertex_count(), 1250 * dgx.vertex_count() + 40 + 20);
  // Routes on demand, at both ends of the cluster.
  auto inside = c->machine_route(*c->find("node1249/gpu7"), *c->find("node1249/mlx5_9"));
  ASSERT_TRUE(inside.ok());
  auto across = c->fabric_route(*c->find("node0/mlx5_0"), *c->find("node1249/mlx5_9"));
  ASSERT_TRUE(across.ok());
  EXPECT_EQ(across->edges.size(), 4u);
}

TEST(FatTree, RejectsBadOptions) {
  const Topology nd = *azure_nd40rs_v2();
  FatTreeOptions o;
  o.nodes_per_leaf = 0;
  EXPECT_FALSE(fat_tree_cluster(nd, 4, o).ok());
  o.nodes_per_leaf = 2;
  o.spines = 0;
  EXPECT_FALSE(fat_tree_cluster(nd, 4, o).ok());
  o.spines = 2;
  o.oversubscription = 0.5;
  EXPECT_FALSE(fat_tree_cluster(nd, 4, o).ok());
  o.oversubscription = 1.0;
  const Topology* machines[] = {&nd, &nd, &nd};
  auto c = fat_tree_cluster(std::span<const Topology* const>(machines), o);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->count(k_no_id, VertexKind::net_switch), 2u + 2u);
}

}  // namespace
}  // namespace sluice::topo
