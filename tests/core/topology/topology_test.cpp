#include "core/topology/topology.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "core/topology/machine_assembler.hpp"

namespace sluice::topo {
namespace {

// socket0 - rp0 - sw0 - {gpu0, nic0}; socket1 - rp1 - gpu1
Topology small_machine() {
  MachineAssembler m("small");
  const VertexId s0 = m.add_socket(64 * k_gib, 100e9);
  const VertexId s1 = m.add_socket(64 * k_gib, 100e9);
  m.link_sockets(s0, s1, 10e9, 100);
  const VertexId sw = m.add_switch(m.add_root_port(s0, 20e9), 20e9);
  m.add_gpu(sw, 16e9, 40 * k_gib);
  m.add_nic(sw, 12e9, 25e9);
  m.add_gpu(m.add_root_port(s1, 20e9), 16e9, 40 * k_gib);
  auto t = m.finish();
  EXPECT_TRUE(t.ok()) << t.status().to_string();
  return std::move(t).value();
}

Vertex named(VertexKind kind, std::string name, NodeId node = 0, std::uint32_t numa = 0) {
  Vertex v;
  v.kind = kind;
  v.name = std::move(name);
  v.node = node;
  v.numa = numa;
  return v;
}

TEST(Topology, AssignsDenseLocalIndicesPerKind) {
  const Topology t = small_machine();
  EXPECT_EQ(t.count(0, VertexKind::gpu), 2u);
  EXPECT_EQ(t.count(0, VertexKind::nic), 1u);
  EXPECT_EQ(t.vertex(*t.device(0, VertexKind::gpu, 1)).name, "gpu1");
  EXPECT_EQ(t.vertex(*t.device(0, VertexKind::gpu, 1)).numa, 1u);
  EXPECT_FALSE(t.device(0, VertexKind::gpu, 2).ok());
  EXPECT_FALSE(t.device(7, VertexKind::gpu, 0).ok());
  EXPECT_EQ(t.count(7, VertexKind::gpu), 0u);
  EXPECT_EQ(t.machine_name(0), "small");
  EXPECT_EQ(t.machine_name(9), "");
}

TEST(Topology, RejectsDuplicateNamesAndIndices) {
  Topology t;
  ASSERT_TRUE(t.add_vertex(named(VertexKind::cpu_socket, "socket0")).ok());
  auto dup = t.add_vertex(named(VertexKind::cpu_socket, "socket0"));
  EXPECT_EQ(dup.status().code(), StatusCode::already_exists);
  Vertex again = named(VertexKind::cpu_socket, "other");
  again.index = 0;
  auto taken = t.add_vertex(again);
  EXPECT_EQ(taken.status().code(), StatusCode::already_exists);
  EXPECT_NE(taken.status().message().find("socket0"), std::string::npos);
  EXPECT_FALSE(t.add_vertex(named(VertexKind::gpu, "")).ok());
}

TEST(Topology, NetworkSwitchesBelongToNoNode) {
  Topology t;
  EXPECT_FALSE(t.add_vertex(named(VertexKind::net_switch, "leaf0", 0)).ok());
  EXPECT_TRUE(t.add_vertex(named(VertexKind::net_switch, "leaf0", k_no_id)).ok());
  EXPECT_FALSE(t.add_vertex(named(VertexKind::gpu, "gpu0", k_no_id)).ok());
  EXPECT_FALSE(t.add_vertex(named(VertexKind::gpu, "gpu0", k_max_nodes)).ok());
}

TEST(Topology, ZeroBandwidthIsAnErrorNamingTheLink) {
  Topology t;
  const VertexId a = *t.add_vertex(named(VertexKind::cpu_socket, "socket0"));
  const VertexId b = *t.add_vertex(named(VertexKind::pcie_root_port, "rp0"));
  auto zero = t.add_link(a, b, LinkSpec::symmetric(LinkClass::pcie, 0, 10));
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().code(), StatusCode::invalid_argument);
  EXPECT_NE(zero.status().message().find("socket0 - rp0"), std::string::npos);
  EXPECT_FALSE(t.add_link(a, b, LinkSpec{LinkClass::pcie, 1e9, 0, 10, true}).ok());
  EXPECT_FALSE(t.add_link(a, b, LinkSpec::symmetric(LinkClass::pcie, NAN, 10)).ok());
  EXPECT_FALSE(t.add_link(a, b, LinkSpec::symmetric(LinkClass::pcie, 1e9, -1)).ok());
  EXPECT_FALSE(t.add_link(a, a, LinkSpec::symmetric(LinkClass::pcie, 1e9, 1)).ok());
  EXPECT_FALSE(t.add_link(a, 99, LinkSpec::symmetric(LinkClass::pcie, 1e9, 1)).ok());
  EXPECT_TRUE(t.add_link(a, b, LinkSpec::symmetric(LinkClass::pcie, 1e9, 1)).ok());
}

TEST(Topology, LinkByUnknownDeviceNameIsNotFound) {
  Topology t;
  ASSERT_TRUE(t.add_vertex(named(VertexKind::cpu_socket, "socket0")).ok());
  auto r = t.add_link("socket0", "gpu9", LinkSpec::symmetric(LinkClass::pcie, 1e9, 1));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::not_found);
  EXPECT_NE(r.status().message().find("gpu9"), std::string::npos);
  EXPECT_FALSE(t.add_link("gpu9", "socket0", LinkSpec::symmetric(LinkClass::pcie, 1e9, 1)).ok());
}

// A hand-built machine with one flaw each; validate must name the element.
struct Broken {
  Topology t;
  VertexId socket, memory, rp, gpu;
  Broken() {
    socket = *t.add_vertex(named(VertexKind::cpu_socket, "socket0"));
    memory = *t.add_vertex(named(VertexKind::host_memory, "mem0"));
    rp = *t.add_vertex(named(VertexKind::pcie_root_port, "rp0"));
    gpu = *t.add_vertex(named(VertexKind::gpu, "gpu0"));
    EXPECT_TRUE(t.add_link(socket, memory, LinkSpec::symmetric(LinkClass::memory, 1e11, 90)).ok());
    EXPECT_TRUE(t.add_link(rp, socket, LinkSpec::symmetric(LinkClass::pcie, 1e10, 100)).ok());
  }
};

TEST(TopologyValidate, MissingPcieLinkNamesTheDevice) {
  Broken b;
  const Status s = b.t.validate();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("gpu0"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("no PCIe link"), std::string::npos) << s.message();
  ASSERT_TRUE(b.t.add_link(b.gpu, b.rp, LinkSpec::symmetric(LinkClass::pcie, 1e10, 100)).ok());
  EXPECT_TRUE(b.t.validate().ok()) << b.t.validate().to_string();
}

TEST(TopologyValidate, DisconnectedGraphIsAnError) {
  Broken b;
  ASSERT_TRUE(b.t.add_link(b.gpu, b.rp, LinkSpec::symmetric(LinkClass::pcie, 1e10, 100)).ok());
  ASSERT_TRUE(b.t.add_vertex(named(VertexKind::net_switch, "island", k_no_id)).ok());
  ASSERT_TRUE(b.t.add_vertex(named(VertexKind::net_switch, "island2", k_no_id)).ok());
  ASSERT_TRUE(b.t.add_link("island", "island2", LinkSpec::symmetric(LinkClass::network, 1e10, 100)).ok());
  const Status s = b.t.validate();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("disconnected"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("island"), std::string::npos) << s.message();
}

TEST(TopologyValidate, UnknownNumaNodeIsAnError) {
  Broken b;
  Vertex nic = named(VertexKind::nic, "nic0", 0, 3);
  nic.nic_port_rate_bytes_per_s = 1e10;
  const VertexId id = *b.t.add_vertex(nic);
  ASSERT_TRUE(b.t.add_link(b.gpu, b.rp, LinkSpec::symmetric(LinkClass::pcie, 1e10, 100)).ok());
  ASSERT_TRUE(b.t.add_link(id, b.rp, LinkSpec::symmetric(LinkClass::pcie, 1e10, 100)).ok());
  const Status s = b.t.validate();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("nic0"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("NUMA node 3"), std::string::npos) << s.message();
}

TEST(TopologyValidate, NicWithoutPortRateIsAnError) {
  Broken b;
  const VertexId id = *b.t.add_vertex(named(VertexKind::nic, "nic0"));
  ASSERT_TRUE(b.t.add_link(b.gpu, b.rp, LinkSpec::symmetric(LinkClass::pcie, 1e10, 100)).ok());
  ASSERT_TRUE(b.t.add_link(id, b.rp, LinkSpec::symmetric(LinkClass::pcie, 1e10, 100)).ok());
  const Status s = b.t.validate();
  EXPECT_NE(s.message().find("port rate"), std::string::npos) << s.message();
}

TEST(TopologyValidate, DeviceMustHangBelowTheSocketItDeclares) {
  Broken b;
  const VertexId s1 = *b.t.add_vertex(named(VertexKind::cpu_socket, "socket1", 0, 1));
  const VertexId m1 = *b.t.add_vertex(named(VertexKind::host_memory, "mem1", 0, 1));
  const VertexId rp1 = *b.t.add_vertex(named(VertexKind::pcie_root_port, "rp1", 0, 1));
  ASSERT_TRUE(b.t.add_link(s1, m1, LinkSpec::symmetric(LinkClass::memory, 1e11, 90)).ok());
  ASSERT_TRUE(b.t.add_link(rp1, s1, LinkSpec::symmetric(LinkClass::pcie, 1e10, 100)).ok());
  ASSERT_TRUE(b.t.add_link(b.socket, s1, LinkSpec::symmetric(LinkClass::inter_socket, 1e10, 100)).ok());
  // gpu0 says NUMA 0 but sits below rp1 of socket1.
  ASSERT_TRUE(b.t.add_link(b.gpu, rp1, LinkSpec::symmetric(LinkClass::pcie, 1e10, 100)).ok());
  const Status s = b.t.validate();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("gpu0"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("socket1"), std::string::npos) << s.message();
}

TEST(TopologyValidate, RejectsWrongLinkClasses) {
  {
    Broken b;  // GPU straight on the socket
    ASSERT_TRUE(b.t.add_link(b.gpu, b.socket, LinkSpec::symmetric(LinkClass::pcie, 1e10, 100)).ok());
    EXPECT_NE(b.t.validate().message().find("without a pcie_root_port"), std::string::npos) << b.t.validate().message();
  }
  {
    Broken b;  // a network link from a GPU
    ASSERT_TRUE(b.t.add_link(b.gpu, b.rp, LinkSpec::symmetric(LinkClass::pcie, 1e10, 100)).ok());
    ASSERT_TRUE(b.t.add_vertex(named(VertexKind::net_switch, "switch", k_no_id)).ok());
    ASSERT_TRUE(b.t.add_link("gpu0", "switch", LinkSpec::symmetric(LinkClass::network, 1e10, 100)).ok());
    EXPECT_NE(b.t.validate().message().find("network link"), std::string::npos) << b.t.validate().message();
  }
  {
    Broken b;  // memory linked by PCIe
    ASSERT_TRUE(b.t.add_link(b.gpu, b.rp, LinkSpec::symmetric(LinkClass::pcie, 1e10, 100)).ok());
    ASSERT_TRUE(b.t.add_link(b.memory, b.rp, LinkSpec::symmetric(LinkClass::pcie, 1e10, 100)).ok());
    EXPECT_FALSE(b.t.validate().ok());
  }
  {
    Broken b;  // sockets joined by an "inter_socket" link to a root port
    ASSERT_TRUE(b.t.add_link(b.gpu, b.rp, LinkSpec::symmetric(LinkClass::pcie, 1e10, 100)).ok());
    ASSERT_TRUE(b.t.add_link(b.rp, b.socket, LinkSpec::symmetric(LinkClass::inter_socket, 1e10, 100)).ok());
    EXPECT_NE(b.t.validate().message().find("inter_socket"), std::string::npos);
  }
}

TEST(TopologyValidate, HoleInDeviceIndicesIsAnError) {
  Broken b;
  ASSERT_TRUE(b.t.add_link(b.gpu, b.rp, LinkSpec::symmetric(LinkClass::pcie, 1e10, 100)).ok());
  Vertex g = named(VertexKind::gpu, "gpu2");
  g.index = 2;
  const VertexId id = *b.t.add_vertex(g);
  ASSERT_TRUE(b.t.add_link(id, b.rp, LinkSpec::symmetric(LinkClass::pcie, 1e10, 100)).ok());
  const Status s = b.t.validate();
  EXPECT_NE(s.message().find("no 1"), std::string::npos) << s.message();
}

TEST(TopologyValidate, EmptyTopologyAndNodeWithoutSocketAreErrors) {
  Topology empty;
  EXPECT_FALSE(empty.validate().ok());
  Topology t;
  Vertex g = named(VertexKind::gpu, "gpu0");
  ASSERT_TRUE(t.add_vertex(g).ok());
  EXPECT_NE(t.validate().message().find("no cpu_socket"), std::string::npos) << t.validate().message();
}

TEST(TopologyRoute, MachineRouteFollowsThePcieTree) {
  const Topology t = small_machine();
  const VertexId gpu0 = *t.find("gpu0");
  const VertexId nic0 = *t.find("nic0");
  auto r = t.machine_route(gpu0, nic0);
  ASSERT_TRUE(r.ok());
  const auto path = t.route_vertices(*r);
  ASSERT_EQ(path.size(), 3u);
  EXPECT_EQ(t.vertex(path[1]).kind, VertexKind::pcie_switch);
  // Bottleneck: min(gpu link 16e9, nic link 12e9).
  EXPECT_DOUBLE_EQ(t.bottleneck_bytes_per_s(*r), 12e9);
  EXPECT_EQ(t.latency_ns(*r), 2 * 100);
}

TEST(TopologyRoute, CrossSocketRouteUsesTheInterSocketLink) {
  const Topology t = small_machine();
  auto r = t.machine_route(*t.find("gpu1"), *t.find("nic0"));
  ASSERT_TRUE(r.ok());
  bool crossed = false;
  for (EdgeId e : r->edges) crossed |= t.link(e).spec.link_class == LinkClass::inter_socket;
  EXPECT_TRUE(crossed);
  EXPECT_DOUBLE_EQ(t.bottleneck_bytes_per_s(*r), 10e9);
}

TEST(TopologyRoute, BottleneckUsesTheDirectionOfTravel) {
  Topology t;
  const VertexId a = *t.add_vertex(named(VertexKind::cpu_socket, "socket0"));
  const VertexId b = *t.add_vertex(named(VertexKind::pcie_root_port, "rp0"));
  ASSERT_TRUE(t.add_link(a, b, LinkSpec{LinkClass::pcie, 8e9, 2e9, 5, true}).ok());
  EXPECT_DOUBLE_EQ(t.bottleneck_bytes_per_s(*t.machine_route(a, b)), 8e9);
  EXPECT_DOUBLE_EQ(t.bottleneck_bytes_per_s(*t.machine_route(b, a)), 2e9);
  const Route self = *t.route(a, a);
  EXPECT_TRUE(self.edges.empty());
  EXPECT_TRUE(std::isinf(t.bottleneck_bytes_per_s(self)));
}

TEST(TopologyRoute, MachineRouteRejectsVerticesOfDifferentNodesAndFabricRouteNonNics) {
  const Topology t = small_machine();
  Topology two;
  ASSERT_TRUE(two.add_machine(t, 0).ok());
  ASSERT_TRUE(two.add_machine(t, 1).ok());
  EXPECT_EQ(two.machine_route(*two.find("node0/gpu0"), *two.find("node1/gpu0")).status().code(),
            StatusCode::invalid_argument);
  EXPECT_EQ(two.fabric_route(*two.find("node0/gpu0"), *two.find("node1/nic0")).status().code(),
            StatusCode::invalid_argument);
  // No fabric yet: the NICs cannot reach each other.
  EXPECT_EQ(two.fabric_route(*two.find("node0/nic0"), *two.find("node1/nic0")).status().code(), StatusCode::not_found);
  EXPECT_FALSE(two.route(0, 99999).ok());
}

TEST(TopologyMachine, AddMachinePrefixesNamesAndKeepsIndices) {
  const Topology m = small_machine();
  Topology c;
  ASSERT_TRUE(c.add_machine(m, 3).ok());
  EXPECT_EQ(c.node_count(), 4u);
  EXPECT_EQ(c.vertex(*c.device(3, VertexKind::gpu, 1)).name, "node3/gpu1");
  EXPECT_EQ(c.machine_name(3), "small");
  EXPECT_EQ(c.add_machine(m, 3).code(), StatusCode::already_exists);
  Topology cluster_in;  // a "machine" that already spans nodes is refused
  ASSERT_TRUE(cluster_in.add_machine(m, 1).ok());
  Topology d;
  EXPECT_EQ(d.add_machine(cluster_in, 0).code(), StatusCode::invalid_argument);
  EXPECT_EQ(d.add_machine(m, k_max_nodes).code(), StatusCode::invalid_argument);
}

TEST(TopologyRoute, EqualCostPathsAreChosenDeterministicallyAndSpread) {
  // Two NIC "leaves" joined through four parallel spines: every route has 4 equal choices.
  Topology t;
  std::vector<VertexId> spines;
  for (int s = 0; s < 4; ++s)
    spines.push_back(*t.add_vertex(named(VertexKind::net_switch, "spine" + std::to_string(s), k_no_id)));
  const VertexId l0 = *t.add_vertex(named(VertexKind::net_switch, "leaf0", k_no_id));
  const VertexId l1 = *t.add_vertex(named(VertexKind::net_switch, "leaf1", k_no_id));
  for (VertexId s : spines) {
    ASSERT_TRUE(t.add_link(l0, s, LinkSpec::symmetric(LinkClass::network, 1e10, 100)).ok());
    ASSERT_TRUE(t.add_link(l1, s, LinkSpec::symmetric(LinkClass::network, 1e10, 100)).ok());
  }
  std::vector<VertexId> a, b;
  for (int i = 0; i < 32; ++i) {
    a.push_back(*t.add_vertex(named(VertexKind::net_switch, "a" + std::to_string(i), k_no_id)));
    b.push_back(*t.add_vertex(named(VertexKind::net_switch, "b" + std::to_string(i), k_no_id)));
    ASSERT_TRUE(t.add_link(a.back(), l0, LinkSpec::symmetric(LinkClass::network, 1e10, 100)).ok());
    ASSERT_TRUE(t.add_link(b.back(), l1, LinkSpec::symmetric(LinkClass::network, 1e10, 100)).ok());
  }
  std::vector<int> used(spines.size(), 0);
  for (int i = 0; i < 32; ++i) {
    auto r1 = t.fabric_route(a[i], b[i]);
    auto r2 = t.fabric_route(a[i], b[i]);
    ASSERT_TRUE(r1.ok());
    EXPECT_EQ(r1->edges, r2->edges);
    ASSERT_EQ(r1->edges.size(), 4u);
    const auto path = t.route_vertices(*r1);
    for (std::size_t s = 0; s < spines.size(); ++s) used[s] += path[2] == spines[s];
  }
  for (int u : used) EXPECT_GT(u, 0) << "every spine should carry some of 32 flows";
}

}  // namespace
}  // namespace sluice::topo

namespace sluice::topo {
namespace {

TEST(Topology, KindsAndClassesHaveNames) {
  EXPECT_EQ(to_string(VertexKind::cpu_socket), "cpu_socket");
  EXPECT_EQ(to_string(VertexKind::host_memory), "host_memory");
  EXPECT_EQ(to_string(VertexKind::pcie_root_port), "pcie_root_port");
  EXPECT_EQ(to_string(VertexKind::pcie_switch), "pcie_switch");
  EXPECT_EQ(to_string(VertexKind::gpu), "gpu");
  EXPECT_EQ(to_string(VertexKind::nic), "nic");
  EXPECT_EQ(to_string(VertexKind::nvme), "nvme");
  EXPECT_EQ(to_string(VertexKind::net_switch), "net_switch");
  EXPECT_EQ(to_string(LinkClass::pcie), "pcie");
  EXPECT_EQ(to_string(LinkClass::memory), "memory");
  EXPECT_EQ(to_string(LinkClass::inter_socket), "inter_socket");
  EXPECT_EQ(to_string(LinkClass::network), "network");
  EXPECT_TRUE(is_device(VertexKind::nvme));
  EXPECT_FALSE(is_device(VertexKind::pcie_switch));
}

TEST(MachineAssembler, KeepsTheFirstErrorAndStopsBuilding) {
  MachineAssembler m("broken");
  const VertexId s = m.add_socket(k_gib, 1e11);
  EXPECT_EQ(m.add_gpu(12345, 1e10, 0), k_no_vertex) << "unknown parent";
  EXPECT_FALSE(m.first_error().ok());
  EXPECT_EQ(m.add_root_port(s, 1e10), k_no_vertex) << "nothing is added after the first error";
  EXPECT_EQ(m.add_socket(k_gib, 1e11), k_no_vertex);
  m.link_sockets(s, s, 1e9, 1);
  auto t = m.finish();
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("parent"), std::string::npos) << t.status().message();
  MachineAssembler dup("dup");
  const VertexId s0 = dup.add_socket(k_gib, 1e11);
  const VertexId rp = dup.add_root_port(s0, 1e10, "x");
  EXPECT_EQ(dup.add_switch(rp, 1e10, true, "x"), k_no_vertex) << "duplicate name";
  MachineAssembler zero("zero");
  EXPECT_EQ(zero.add_socket(k_gib, 0), k_no_vertex) << "zero memory bandwidth";
  MachineAssembler self("self");
  const VertexId only = self.add_socket(k_gib, 1e11);
  self.link_sockets(only, only, 1e9, 1);
  EXPECT_FALSE(self.finish().ok());
}

}  // namespace
}  // namespace sluice::topo
