#include "core/topology/path_class.hpp"

#include <gtest/gtest.h>

#include "core/topology/machine_builders.hpp"
#include "core/topology/peer_rank.hpp"

namespace sluice::topo {
namespace {

TEST(PathClass, NamesRoundTripAndOrderFromCloseToFar) {
  for (PathClass c : {PathClass::loc, PathClass::pix, PathClass::pxb, PathClass::phb, PathClass::node, PathClass::sys,
                      PathClass::net}) {
    auto parsed = parse_path_class(to_string(c));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, c);
  }
  EXPECT_EQ(*parse_path_class("SOC"), PathClass::sys);
  EXPECT_FALSE(parse_path_class("pix").ok());
  EXPECT_FALSE(parse_path_class("").ok());
  EXPECT_LT(PathClass::pix, PathClass::pxb);
  EXPECT_LT(PathClass::pxb, PathClass::phb);
  EXPECT_LT(PathClass::phb, PathClass::node);
  EXPECT_LT(PathClass::node, PathClass::sys);
}

TEST(PathClass, OnlyDevicesHaveAPathClass) {
  const Topology t = *dgx_a100();
  auto r = path_class(t, *t.find("gpu0"), *t.find("socket0"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("socket0"), std::string::npos);
  EXPECT_FALSE(path_class(t, 0, 100000).ok());
}

TEST(PathClass, DevicesOnOneRootPortWithoutSwitchAreHostBridge) {
  GenericMachine spec;  // one socket, one switch: PIX
  spec.gpus = 2;
  const Topology t = *generic_machine(spec);
  EXPECT_EQ(*path_class(t, *t.find("gpu0"), *t.find("gpu1")), PathClass::pix);
  const Topology nd = *azure_nd40rs_v2();  // GPUs straight on the host bridge
  EXPECT_EQ(*path_class(nd, *nd.find("gpu0"), *nd.find("gpu3")), PathClass::phb);
}

TEST(PeerRank, RejectsWrongKindsAndNodes) {
  const Topology t = *dgx_a100();
  EXPECT_FALSE(peer_rank(t, *t.find("mlx5_0"), *t.find("mlx5_1")).ok());
  EXPECT_FALSE(peer_rank(t, *t.find("gpu0"), *t.find("gpu1")).ok());
  EXPECT_FALSE(peer_rank(t, 0, 100000).ok());
  EXPECT_FALSE(rank_peers(t, *t.find("gpu0"), VertexKind::gpu).ok());
  EXPECT_FALSE(rank_peers(t, 100000, VertexKind::nic).ok());
}

TEST(PeerRank, DistanceFirstThenLinkBandwidth) {
  // Two equal NICs on one switch tie; ties keep index order.
  GenericMachine spec;
  spec.gpus = 1;
  spec.nics = 2;
  spec.nvmes = 1;
  const Topology base = *generic_machine(spec);
  auto ranked = rank_peers(base, *base.find("gpu0"), VertexKind::nic);
  ASSERT_TRUE(ranked.ok());
  EXPECT_EQ((*ranked)[0].rank.key, (*ranked)[1].rank.key);
  EXPECT_EQ((*ranked)[0].index, 0u) << "ties keep index order";
  // NVMe on gen4 x4 ranks behind a gen4 x16 NIC at the same distance.
  auto nic = peer_rank(base, *base.find("gpu0"), *base.find("nic0"));
  auto nvme = peer_rank(base, *base.find("gpu0"), *base.find("nvme0"));
  ASSERT_TRUE(nic.ok() && nvme.ok());
  EXPECT_EQ(nic->pci_distance, nvme->pci_distance);
  EXPECT_LT(nic->key, nvme->key);
  EXPECT_GT(nic->link_bandwidth_bytes_per_s, nvme->link_bandwidth_bytes_per_s);
  EXPECT_EQ(nic->path_class, PathClass::pix);
  auto nvmes = rank_peers(base, *base.find("gpu0"), VertexKind::nvme);
  ASSERT_TRUE(nvmes.ok());
  EXPECT_EQ(nvmes->size(), 1u);
}

TEST(PeerRank, CrossingARootPortOutweighsAnyBandwidth) {
  GenericMachine spec;
  spec.gpus = 2;
  spec.nics = 2;
  spec.switches_per_socket = 2;
  const Topology t = *generic_machine(spec);
  auto near = peer_rank(t, *t.find("gpu0"), *t.find("nic0"));
  auto far = peer_rank(t, *t.find("gpu0"), *t.find("nic1"));
  ASSERT_TRUE(near.ok() && far.ok());
  EXPECT_EQ(near->pci_distance, 1u);
  EXPECT_TRUE(far->cross_root_port);
  EXPECT_FALSE(far->cross_numa);
  EXPECT_EQ(far->pci_distance, k_pci_distance_cross_root_port + 2 + 2 + 1);
  EXPECT_LT(near->key, far->key);
}

}  // namespace
}  // namespace sluice::topo
