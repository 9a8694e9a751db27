// The platform builder: a fat tree routes across leaves through every spine
// DGX A100 GPU-direct and bounce routes load the links the topology says,
// the zone structure stays small, and missing devices are named.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <memory>
#include <simgrid/s4u.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/topology/cluster_builders.hpp"
#include "core/topology/machine_builders.hpp"
#include "sim/sim_process.hpp"
#include "sim/sim_runtime.hpp"
#include "tests/sim/sim_test_support.hpp"

namespace sluice::testing {
namespace {

using sim::LinkInfo;
using sim::SimRuntime;
using topo::VertexKind;

std::size_t count_class(const std::vector<LinkInfo>& route, topo::LinkClass c) {
  return static_cast<std::size_t>(
      std::count_if(route.begin(), route.end(), [c](const LinkInfo& l) { return l.link_class == c; }));
}

TEST(SimPlatform, AFatTreeRoutesBetweenLeavesThroughASpine) {
  in_child([] {
    topo::GenericMachine m;
    m.nvmes = 1;
    auto machine = topo::generic_machine(m).value();
    topo::FatTreeOptions ft;
    ft.nodes_per_leaf = 4;
    ft.spines = 2;
    auto cluster = std::make_shared<const topo::Topology>(topo::fat_tree_cluster(machine, 8, ft).value());
    auto rt = SimRuntime::create(cluster, test_config()).value();
    const auto& stats = rt->platform().stats();
    EXPECT_EQ(stats.leaves, 2u);
    EXPECT_EQ(stats.disks, 8u);
    EXPECT_EQ(stats.zones, 1u + 2u + 1u);  // root, two leaves, one local zone for 8 nodes
    // Same leaf: NIC -> leaf -> NIC (2 network links); across leaves: + leaf -> spine -> leaf.
    const TransferSpec same_leaf{MemHandle{0, MemKind::pinned, 0, 1, 0, 1}, MemHandle{3, MemKind::gpu, 0, 1, 0, 1}};
    const TransferSpec across{MemHandle{0, MemKind::pinned, 0, 1, 0, 1}, MemHandle{7, MemKind::gpu, 0, 1, 0, 1}};
    EXPECT_EQ(count_class(rt->transfer_route(same_leaf).value(), topo::LinkClass::network), 2u);
    // Across leaves: the two NIC ports are topology links; between them the
    // SimGrid route crosses leaf0's pooled uplinks and leaf1's pooled
    // downlinks, each with the rate of both spine links together.
    EXPECT_EQ(count_class(rt->transfer_route(across).value(), topo::LinkClass::network), 2u);
    const sim::SimPlatform& platform = rt->platform();
    simgrid::s4u::Host* from = platform.rail_host(cluster->device(0, VertexKind::host_memory, 0).value(), 0).value();
    simgrid::s4u::Host* to = platform.rail_host(cluster->device(7, VertexKind::gpu, 0).value(), 0).value();
    std::vector<simgrid::s4u::Link*> links;
    double latency = 0;
    from->route_to(to, links, &latency);
    std::vector<double> pooled;
    for (const simgrid::s4u::Link* l : links) {
      if (sim::SimPlatform::info(l)->edge == topo::k_no_edge) pooled.push_back(l->get_bandwidth());
    }
    double uplinks = 0;  // leaf0's links to the spines, leaf -> spine
    const auto leaf0 = cluster->find("leaf0").value();
    for (topo::EdgeId e : cluster->links_of(leaf0)) {
      const auto& l = cluster->link(e);
      if (cluster->vertex(cluster->other_end(e, leaf0)).kind == VertexKind::net_switch) {
        uplinks += l.a == leaf0 ? l.spec.bandwidth_ab_bytes_per_s : l.spec.bandwidth_ba_bytes_per_s;
      }
    }
    ASSERT_EQ(pooled.size(), 2u);
    EXPECT_DOUBLE_EQ(pooled[0], uplinks);
    EXPECT_DOUBLE_EQ(pooled[1], uplinks);  // leaf1 has as many nodes, so as much
    EXPECT_EQ(links.size(), rt->transfer_route(across).value().size() + 2);
    // And a transfer across it completes.
    Probe& dst = rt->add_service<Probe>(7, nullptr);
    const MemHandle gpu = dst.env().alloc(MemKind::gpu, 0, k_mib).value();
    OpId op = 0;
    Probe& src = rt->add_service<Probe>(0, [&](Probe& p) {
      op = p.env().transfer(TransferSpec{p.env().alloc(MemKind::pinned, 0, k_mib).value(), gpu});
    });
    rt->run_until_idle();
    EXPECT_TRUE(src.completions.at(op).status.ok()) << src.completions.at(op).status.to_string();
  });
}

// The time two flows from leaf0's nodes to leaf1's take: each node moves 64 MiB
// from pinned memory to node (2 + i)'s pinned memory at once.
double two_flows_across_ns(std::shared_ptr<const topo::Topology> cluster) {
  auto rt = SimRuntime::create(std::move(cluster), test_config()).value();
  constexpr std::uint64_t k_bytes = 64 * k_mib;
  std::array<std::pair<Probe*, OpId>, 2> ops{};
  for (NodeId i = 0; i < 2; ++i) {
    Probe& dst = rt->add_service<Probe>(2 + i, nullptr);
    const MemHandle into = dst.env().alloc(MemKind::pinned, 0, k_bytes).value();
    auto& slot = ops[i];
    slot.first = &rt->add_service<Probe>(i, [&slot, into](Probe& p) {
      slot.second = p.env().transfer(TransferSpec{p.env().alloc(MemKind::pinned, 0, k_bytes).value(), into});
    });
  }
  rt->run_until_idle();
  double last = 0;
  for (auto [probe, op] : ops) {
    EXPECT_TRUE(probe->completions.at(op).status.ok());
    last = std::max(last, static_cast<double>(probe->done_at_ns.at(op)));
  }
  return last;
}

// Issue 48: SimGrid routes per pair of zones, and the route between two leaves
// used to cross one spine, so all their traffic shared 1/spines of the leaf's
// uplinks. With oversubscription 1 a fat tree must carry what a star does.
TEST(SimPlatform, AFatTreeWithoutOversubscriptionCarriesWhatAStarDoes) {
  const std::string times = in_child_capture([] {
    auto machine = topo::generic_machine(topo::GenericMachine{}).value();
    topo::FatTreeOptions ft;
    ft.nodes_per_leaf = 2;
    ft.spines = 4;
    ft.oversubscription = 1;
    return std::to_string(
        two_flows_across_ns(std::make_shared<const topo::Topology>(topo::fat_tree_cluster(machine, 4, ft).value())));
  });
  const std::string star_times = in_child_capture([] {
    auto machine = topo::generic_machine(topo::GenericMachine{}).value();
    return std::to_string(two_flows_across_ns(
        std::make_shared<const topo::Topology>(topo::star_cluster(machine, 4, topo::StarOptions{}).value())));
  });
  ASSERT_FALSE(times.empty());
  ASSERT_FALSE(star_times.empty());
  const double tree_ns = std::stod(times);
  const double star_ns = std::stod(star_times);
  // Two more network hops of latency, nothing more.
  EXPECT_NEAR(tree_ns, star_ns, 0.01 * star_ns) << "fat tree " << tree_ns << " ns, star " << star_ns << " ns";
}

TEST(SimPlatform, OnADgxA100GpuDirectStaysBelowTheSwitchAndBounceGoesThroughTheRootPort) {
  in_child([] {
    auto dgx = topo::dgx_a100().value();
    auto cluster = std::make_shared<const topo::Topology>(topo::star_cluster(dgx, 2).value());
    auto rt = SimRuntime::create(cluster, test_config()).value();
    const topo::Topology& t = *cluster;
    // GPU 0 with its own NIC mlx5_0 (PXB): the direct route has no memory or socket link on the client.
    const TransferSpec direct{MemHandle{0, MemKind::pinned, 0, 1, 0, 1}, MemHandle{1, MemKind::gpu, 0, 1, 0, 1}, 0, 0};
    const auto route = rt->transfer_route(direct).value();
    for (const LinkInfo& l : route) {
      const auto& link = t.link(l.edge);
      if (t.vertex(link.a).node != 1 && t.vertex(link.b).node != 1) continue;
      EXPECT_NE(l.link_class, topo::LinkClass::memory) << t.vertex(link.a).name << "-" << t.vertex(link.b).name;
      EXPECT_NE(t.vertex(link.a).kind, VertexKind::cpu_socket);
      EXPECT_NE(t.vertex(link.b).kind, VertexKind::cpu_socket);
    }
    // Bounce: NIC -> host memory of socket 0 (crosses the socket and the memory link), then memory -> GPU.
    const TransferSpec to_host{MemHandle{0, MemKind::pinned, 0, 1, 0, 1}, MemHandle{1, MemKind::pinned, 0, 1, 0, 1}, 0,
                               0};
    const TransferSpec copy{MemHandle{1, MemKind::pinned, 0, 1, 0, 1}, MemHandle{1, MemKind::gpu, 0, 1, 0, 1}};
    EXPECT_GE(count_class(rt->transfer_route(to_host).value(), topo::LinkClass::memory), 2u);  // both nodes' memory
    EXPECT_EQ(count_class(rt->transfer_route(copy).value(), topo::LinkClass::memory), 1u);
    EXPECT_EQ(count_class(rt->transfer_route(copy).value(), topo::LinkClass::network), 0u);
    // A rail that lands on another complex crosses more PCIe than GPU 0's own.
    const TransferSpec other_rail{MemHandle{0, MemKind::pinned, 0, 1, 0, 1}, MemHandle{1, MemKind::gpu, 0, 1, 0, 1}, 0,
                                  2};
    EXPECT_GT(count_class(rt->transfer_route(other_rail).value(), topo::LinkClass::pcie),
              count_class(route, topo::LinkClass::pcie));
    // 10 NICs x 10 memories (8 GPUs + 2 sockets) per node, plus 10 local
    // hosts, a CPU-copy host per socket's memory and a PCIe host per drive.
    EXPECT_EQ(rt->platform().stats().hosts, 2u * (100u + 10u + 2u + t.count(0, VertexKind::nvme)));
  });
}

TEST(SimPlatform, MissingDevicesAndRatesAreNamed) {
  in_child([] {
    topo::GenericMachine m;
    m.nvmes = 1;
    m.nvme_read_bytes_per_s = 0;  // "not stated"
    auto machine = topo::generic_machine(m).value();
    auto cluster = std::make_shared<const topo::Topology>(topo::star_cluster(machine, 2).value());
    auto rt = SimRuntime::create(cluster, test_config()).value();
    Status no_rate = rt->add_target(1, 0);
    EXPECT_EQ(no_rate.code(), StatusCode::unavailable);
    EXPECT_NE(no_rate.message().find("rate"), std::string::npos) << no_rate.message();
    EXPECT_EQ(rt->add_target(1, 5).code(), StatusCode::not_found);
    EXPECT_EQ(rt->platform().first_nic(0), 0u);
    EXPECT_EQ(rt->platform().first_nic(9), k_no_id);
    EXPECT_EQ(rt->platform().cpu_host(9), nullptr);
    EXPECT_EQ(rt->transfer_route(
                    TransferSpec{MemHandle{0, MemKind::host, 3, 1, 0, 1}, MemHandle{1, MemKind::host, 0, 1, 0, 1}})
                  .status()
                  .code(),
              StatusCode::not_found);
    EXPECT_TRUE(rt->transfer_route(
                      TransferSpec{MemHandle{0, MemKind::host, 0, 1, 0, 1}, MemHandle{0, MemKind::pinned, 0, 2, 0, 1}})
                    .value()
                    .empty());  // one memory: no link
    EXPECT_NE(rt->platform().link_of(0, true), nullptr);
    EXPECT_EQ(rt->platform().link_of(100000, true), nullptr);
  });
}

TEST(SimPlatform, ANodeWithoutANetworkCannotSendButCopiesLocally) {
  in_child([] {
    topo::GenericMachine m;
    auto machine = std::make_shared<const topo::Topology>(topo::generic_machine(m).value());
    auto rt = SimRuntime::create(machine, test_config()).value();
    EXPECT_EQ(rt->platform().stats().leaves, 0u);
    EXPECT_EQ(rt->platform().first_nic(0), k_no_id);
    Probe& a = rt->add_service<Probe>(0, nullptr);
    OpId copy = 0;
    Probe& b = rt->add_service<Probe>(0, [&](Probe& p) {
      EXPECT_TRUE(p.env().send(rt->endpoint_of(a), proto::Ack{1, StatusCode::ok, {}}).ok());  // same node: fine
      copy = p.env().transfer(
          TransferSpec{p.env().alloc(MemKind::pinned, 0, 1000).value(), p.env().alloc(MemKind::gpu, 0, 1000).value()});
    });
    rt->run_until_idle();
    EXPECT_EQ(a.deliveries.size(), 1u);
    EXPECT_TRUE(b.completions.at(copy).status.ok());
  });
}

TEST(SimProcess, AChildsResultErrorOrCrashComesBack) {
  Result<std::string> fine = sim::run_in_child([]() -> Result<std::string> { return std::string(100000, 'x'); });
  ASSERT_TRUE(fine.ok()) << fine.status().to_string();
  EXPECT_EQ(fine->size(), 100000u);
  Result<std::string> failed =
      sim::run_in_child([]() -> Result<std::string> { return error(StatusCode::no_space, "out of room"); });
  EXPECT_EQ(failed.status().code(), StatusCode::no_space);
  EXPECT_EQ(failed.status().message(), "out of room");
  Result<std::string> crashed = sim::run_in_child([]() -> Result<std::string> { std::abort(); });
  EXPECT_EQ(crashed.status().code(), StatusCode::internal);
  EXPECT_NE(crashed.status().message().find("signal"), std::string::npos) << crashed.status().message();
  Result<std::string> exited = sim::run_in_child([]() -> Result<std::string> { std::_Exit(7); });
  EXPECT_NE(exited.status().message().find("status 7"), std::string::npos) << exited.status().message();
}

}  // namespace
}  // namespace sluice::testing
