#include "core/sched/peer_rail.hpp"

#include <gtest/gtest.h>

#include <array>
#include <map>
#include <vector>

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

// A storage server's machine: no GPU.
topo::GenericMachine storage_spec(std::uint32_t sockets, std::uint32_t nics, std::uint32_t nvmes) {
  topo::GenericMachine spec;
  spec.sockets = sockets;
  spec.gpus = 0;
  spec.nics = nics;
  spec.nvmes = nvmes;
  return spec;
}

// A star of one server built from `spec` (node 0) and one client without GPUs (node 1).
topo::Topology server_and_client(const topo::GenericMachine& spec) {
  Result<topo::Topology> server = topo::generic_machine(spec);
  EXPECT_TRUE(server.ok()) << server.status().to_string();
  topo::GenericMachine client_spec;
  client_spec.gpus = 0;
  const topo::Topology client = *topo::generic_machine(client_spec);
  const std::array<const topo::Topology*, 2> machines{&*server, &client};
  Result<topo::Topology> t = topo::star_cluster(machines);
  EXPECT_TRUE(t.ok()) << t.status().to_string();
  return std::move(t).value();
}

// Issue 48: a storage server with a NIC on each socket serves each drive's
// chunks from that drive's socket, and 2 NICs per socket share its drives.
TEST(TargetPlace, EachDriveIsStagedAndServedOnItsOwnSocket) {
  topo::GenericMachine spec = storage_spec(2, 2, 16);
  const topo::Topology t = server_and_client(spec);
  std::vector<std::uint32_t> drives;
  for (std::uint32_t d = 0; d < 16; ++d) drives.push_back(d);
  const std::vector<TargetPlace> places = *place_targets(t, 0, drives);
  ASSERT_EQ(places.size(), 16u);
  for (std::uint32_t d = 0; d < 16; ++d) {
    const std::uint32_t socket = d < 8 ? 0 : 1;  // generic_machine: drives 0-7 on socket 0
    EXPECT_EQ(places[d].staging_numa, socket) << "drive " << d;
    // Whatever NIC rail matching named (both are on the one switch), or none.
    const std::vector<std::uint32_t> own{socket};
    EXPECT_EQ(*places[d].nics(0), own) << "drive " << d;
    EXPECT_EQ(*places[d].nics(1), own) << "drive " << d;
    EXPECT_EQ(*places[d].nics(k_no_id), own) << "drive " << d;
  }
  // Four NICs, two per socket: each drive may use both of its socket's.
  spec.nics = 4;
  const topo::Topology t4 = server_and_client(spec);
  const std::vector<TargetPlace> places4 = *place_targets(t4, 0, drives);
  for (std::uint32_t d = 0; d < 16; ++d) {
    const std::vector<std::uint32_t> own = d < 8 ? std::vector<std::uint32_t>{0, 1} : std::vector<std::uint32_t>{2, 3};
    EXPECT_EQ(*places4[d].nics(k_no_id), own) << "drive " << d;
    EXPECT_EQ(*places4[d].nics(3), own) << "drive " << d;
  }
}

// Issue 48 roofline (seed 1, configuration 7): a one-socket server with two
// drives and three 25 Gb/s NICs on one switch pinned each drive to one NIC,
// so the third carried nothing and each drive got 3.03 GB/s of NIC, below
// its 3.35 GB/s PCIe link. Every equally near NIC is a candidate.
TEST(TargetPlace, EquallyNearNicsAreAllCandidatesEvenWithFewerDrivesThanNics) {
  topo::GenericMachine spec = storage_spec(1, 3, 2);
  const topo::Topology t = server_and_client(spec);
  const std::vector<TargetPlace> places = *place_targets(t, 0, {0, 1});
  for (const TargetPlace& p : places) {
    for (std::uint32_t named : {0u, 1u, 2u, k_no_id}) {
      EXPECT_EQ(*p.nics(named), (std::vector<std::uint32_t>{0, 1, 2})) << "named " << named;
    }
  }
  // Roofline configuration 25: the socket's drives and NICs under two PCIe
  // switches. A drive's bytes are staged in its socket's memory either way,
  // so a NIC under the drive's own switch (PIX) is no nearer than one under
  // the other (PHB): all three stay candidates for every drive (before, the
  // NIC alone under the other switch took every drive of its switch).
  spec.switches_per_socket = 2;
  spec.nvmes = 5;
  const topo::Topology t2 = server_and_client(spec);
  Result<std::vector<TargetPlace>> split_places = place_targets(t2, 0, {0, 1, 2, 3, 4});
  ASSERT_TRUE(split_places.ok()) << split_places.status().to_string();
  for (const TargetPlace& p : *split_places) {
    EXPECT_EQ(*p.nics(k_no_id), (std::vector<std::uint32_t>{0, 1, 2}));
  }
}

TEST(TargetPlace, RailMatchingKeepsTheServerNicOnTheClientsSwitch) {
  // As PrefersTheServerNicOnTheClientNicsSwitch: the NIC named by rail
  // matching is the only one on the client's switch, so it is kept.
  topo::GenericMachine spec;
  spec.gpus = 0;
  spec.nics = 2;
  spec.nvmes = 2;
  const topo::Topology machine = *topo::generic_machine(spec);
  topo::Topology t;
  ASSERT_TRUE(t.add_machine(machine, 0).ok());
  const topo::VertexId rail_a =
      *t.add_vertex(topo::Vertex{.kind = topo::VertexKind::net_switch, .name = "rail_a", .node = k_no_id});
  const topo::VertexId rail_b =
      *t.add_vertex(topo::Vertex{.kind = topo::VertexKind::net_switch, .name = "rail_b", .node = k_no_id});
  const auto link = topo::LinkSpec::symmetric(topo::LinkClass::network, 25e9, 300);
  ASSERT_TRUE(t.add_link(*t.device(0, topo::VertexKind::nic, 0), rail_a, link).ok());
  ASSERT_TRUE(t.add_link(*t.device(0, topo::VertexKind::nic, 1), rail_b, link).ok());
  const std::vector<TargetPlace> places = *place_targets(t, 0, {0, 1});
  for (const TargetPlace& p : places) {
    EXPECT_EQ(*p.nics(0), std::vector<std::uint32_t>{0});
    EXPECT_EQ(*p.nics(1), std::vector<std::uint32_t>{1});
  }
  EXPECT_FALSE(place_targets(t, 0, {2}).ok()) << "drive 2 does not exist";
  EXPECT_EQ(place_targets(machine, 0, {0})->front().nics(0), nullptr) << "no cabled NIC: the server's default";
}

}  // namespace
}  // namespace sluice::sched
