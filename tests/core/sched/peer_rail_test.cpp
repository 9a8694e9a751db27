#include "core/sched/peer_rail.hpp"

#include <gtest/gtest.h>

#include <array>
#include <map>

#include "core/topology/cluster_builders.hpp"
#include "core/topology/machine_builders.hpp"

namespace sluice::sched {
namespace {

topo::Topology critical_io_pair() {
  const topo::Topology host = *topo::critical_io_gpu_host();
  const topo::Topology recorder = *topo::critical_io_recorder(4);
  const std::array<const topo::Topology*, 2> machines{&host, &recorder};
  return *topo::star_cluster(machines);
}

TEST(PeerRail, EachPortOfTheGpuHostMeetsItsOwnPortOfTheRecorder) {
  const topo::Topology t = critical_io_pair();
  EXPECT_EQ(*peer_nic(t, 0, 0, 1), 0u);
  EXPECT_EQ(*peer_nic(t, 0, 1, 1), 1u);
  // And back: the recorder's ports meet the host's.
  EXPECT_EQ(*peer_nic(t, 1, 0, 0), 0u);
  EXPECT_EQ(*peer_nic(t, 1, 1, 0), 1u);
}

TEST(PeerRail, ManyClientRailsSpreadEvenlyOverFewServerRails) {
  const topo::Topology dgx = *topo::dgx_a100();
  topo::GenericMachine spec;
  spec.gpus = 0;
  spec.nics = 2;
  const topo::Topology server = *topo::generic_machine(spec);
  const std::array<const topo::Topology*, 2> machines{&dgx, &server};
  const topo::Topology t = *topo::star_cluster(machines);
  std::map<std::uint32_t, int> uses;
  for (std::uint32_t nic = 0; nic < 10; ++nic) ++uses[*peer_nic(t, 0, nic, 1)];
  EXPECT_EQ(uses, (std::map<std::uint32_t, int>{{0, 5}, {1, 5}}));
  // GPU 0's two rails (mlx5_0, mlx5_1) land on different server ports.
  EXPECT_NE(*peer_nic(t, 0, 0, 1), *peer_nic(t, 0, 1, 1));
}

TEST(PeerRail, PrefersTheServerNicOnTheClientNicsSwitch) {
  // Two rail switches built by hand (the cluster builders cable all of a
  // node's NICs to one switch): index order alone would pair 0 with 0.
  topo::GenericMachine spec;
  spec.gpus = 1;
  spec.nics = 2;
  const topo::Topology machine = *topo::generic_machine(spec);
  topo::Topology t;
  ASSERT_TRUE(t.add_machine(machine, 0).ok());
  ASSERT_TRUE(t.add_machine(machine, 1).ok());
  const topo::VertexId rail_a =
      *t.add_vertex(topo::Vertex{.kind = topo::VertexKind::net_switch, .name = "rail_a", .node = k_no_id});
  const topo::VertexId rail_b =
      *t.add_vertex(topo::Vertex{.kind = topo::VertexKind::net_switch, .name = "rail_b", .node = k_no_id});
  const auto link = topo::LinkSpec::symmetric(topo::LinkClass::network, 25e9, 300);
  // Client NIC 0 on rail a, NIC 1 on rail b; the server the other way round.
  ASSERT_TRUE(t.add_link(*t.device(0, topo::VertexKind::nic, 0), rail_a, link).ok());
  ASSERT_TRUE(t.add_link(*t.device(0, topo::VertexKind::nic, 1), rail_b, link).ok());
  ASSERT_TRUE(t.add_link(*t.device(1, topo::VertexKind::nic, 0), rail_b, link).ok());
  ASSERT_TRUE(t.add_link(*t.device(1, topo::VertexKind::nic, 1), rail_a, link).ok());
  ASSERT_TRUE(t.add_link(rail_a, rail_b, link).ok());
  EXPECT_EQ(*peer_nic(t, 0, 0, 1), 1u) << "client rail a must meet the server's NIC on rail a";
  EXPECT_EQ(*peer_nic(t, 0, 1, 1), 0u) << "client rail b must meet the server's NIC on rail b";
}

TEST(PeerRail, RejectsAnUnknownNicOrAServerWithoutCabledNics) {
  const topo::Topology t = critical_io_pair();
  EXPECT_EQ(peer_nic(t, 0, 7, 1).status().code(), StatusCode::not_found);
  const topo::Topology lonely = *topo::critical_io_gpu_host();  // NICs without network links
  const auto unlinked = peer_nic(lonely, 0, 0, 0);
  ASSERT_FALSE(unlinked.ok());
  EXPECT_NE(unlinked.status().message().find("no network link"), std::string::npos) << unlinked.status().to_string();
}

}  // namespace
}  // namespace sluice::sched
