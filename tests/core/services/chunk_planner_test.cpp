// The client's use of core/sched: rails by rank and load, direct vs bounce,
// the per-rail connection window, and the no-topology fallback.
#include "core/services/chunk_planner.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "core/topology/machine_builders.hpp"

namespace sluice {
namespace {

constexpr NodeId k_server = 1;  // the storage server the chunks go to

MemHandle gpu_buffer(std::uint16_t gpu) { return MemHandle{0, MemKind::gpu, gpu, 1, 0, k_mib}; }

ChunkPlannerConfig dgx(bool gpu_direct, std::uint32_t connections_per_nic = 2) {
  ChunkPlannerConfig cfg;
  cfg.topology = std::make_shared<const topo::Topology>(topo::dgx_a100().value());
  cfg.node = 0;
  cfg.caps.gpu_memory_reachable = gpu_direct;
  cfg.rails.max_connections_per_nic = connections_per_nic;
  return cfg;
}

TEST(ChunkPlanner, ConnectionsAreCountedPerServerAsBeeGFSConnMaxInternodeNumIs) {
  // One connection per NIC and server: GPU 0's two direct rails are full to
  // one server, and a chunk to another server still gets both (counted
  // across servers, the second server's chunks waited behind the first's).
  ChunkPlanner planner(dgx(true, 1));
  std::vector<ChunkPlan> to_first;
  while (auto plan = planner.plan(gpu_buffer(0), k_server)) {
    to_first.push_back(*plan);
    ASSERT_LE(to_first.size(), 10u);
  }
  ASSERT_EQ(to_first.size(), 2u);
  auto other = planner.plan(gpu_buffer(0), k_server + 1);
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->server, k_server + 1);
  EXPECT_EQ(other->path, proto::ChunkPath::direct);
  // Releasing a connection reopens it to its own server only.
  planner.release(to_first[0]);
  auto again = planner.plan(gpu_buffer(0), k_server);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->client_nic, to_first[0].client_nic);
  EXPECT_FALSE(planner.plan(gpu_buffer(0), k_server).has_value());
}

TEST(ChunkPlanner, Gpu0GoesDirectOverTheNicsOnItsOwnSwitchAndBalancesThem) {
  ChunkPlanner planner(dgx(true));
  EXPECT_TRUE(planner.degraded_reason().empty());
  std::vector<std::uint32_t> nics;
  for (int i = 0; i < 4; ++i) {
    auto plan = planner.plan(gpu_buffer(0), k_server);
    ASSERT_TRUE(plan.has_value());
    EXPECT_EQ(plan->path, proto::ChunkPath::direct);
    nics.push_back(plan->client_nic);
  }
  // mlx5_0 and mlx5_1 (PXB to GPU 0), two connections each, alternating by load.
  std::sort(nics.begin(), nics.end());
  EXPECT_EQ(nics, (std::vector<std::uint32_t>{0, 0, 1, 1}));
}

TEST(ChunkPlanner, WithoutGpuDirectTheSameRailBouncesThroughTheGpusNumaNode) {
  ChunkPlanner planner(dgx(false));
  auto plan = planner.plan(gpu_buffer(5), k_server);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->path, proto::ChunkPath::bounce);
  EXPECT_EQ(plan->bounce_numa, 1);  // GPU 5 hangs off socket 1
  EXPECT_TRUE(plan->client_nic == 6 || plan->client_nic == 7);
  const auto* decision = planner.decision(sched::MemoryPlace::gpu(5), plan->client_nic);
  ASSERT_NE(decision, nullptr);
  EXPECT_NE(decision->reason.find("bounce"), std::string::npos);
}

TEST(ChunkPlanner, FullRailsOverflowToFartherNicsThenWaitAndReleaseReopensThem) {
  // With GPU direct, full direct rails mean wait (core/sched RailSelector):
  // the far NICs would turn GPU 0's direct reads into bounces.
  ChunkPlanner direct(dgx(true, 1));
  int direct_plans = 0;
  while (auto plan = direct.plan(gpu_buffer(0), k_server)) {
    EXPECT_EQ(plan->path, proto::ChunkPath::direct);
    ASSERT_LE(++direct_plans, 10);
  }
  EXPECT_EQ(direct_plans, 2);  // mlx5_0 and mlx5_1, one connection each
  ChunkPlanner planner(dgx(false, 1));
  std::vector<ChunkPlan> plans;
  while (auto plan = planner.plan(gpu_buffer(0), k_server)) {
    plans.push_back(*plan);
    ASSERT_LE(plans.size(), 10u);
  }
  EXPECT_EQ(plans.size(), 10u);  // bouncing anyway: one connection on each of the 10 NICs, then nothing
  EXPECT_EQ(plans.back().path, proto::ChunkPath::bounce);
  planner.release(plans[0]);
  auto again = planner.plan(gpu_buffer(0), k_server);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->client_nic, plans[0].client_nic);
}

TEST(ChunkPlanner, WithoutATopologyHostGoesDirectAndGpuFollowsTheBackendCaps) {
  ChunkPlannerConfig cfg;
  ChunkPlanner plain(cfg);
  EXPECT_FALSE(plain.degraded_reason().empty());
  EXPECT_EQ(plain.plan(MemHandle{0, MemKind::host, 0, 1, 0, 10}, k_server)->path, proto::ChunkPath::direct);
  EXPECT_EQ(plain.plan(gpu_buffer(0), k_server)->path, proto::ChunkPath::bounce);
  cfg.caps.gpu_memory_reachable = true;
  ChunkPlanner capable(cfg);
  EXPECT_EQ(capable.plan(gpu_buffer(0), k_server)->path, proto::ChunkPath::direct);
  EXPECT_EQ(capable.plan(gpu_buffer(0), k_server)->client_nic, k_no_id);
}

TEST(ChunkPlanner, AGpuRegionTheTransportCouldNotRegisterBouncesWhereItsKindGoesDirect) {
  // Found on the GPU machine (issue 51): one GPU region that UCX refused to
  // map was still planned direct, and its server's transfer was refused.
  ChunkPlanner planner(dgx(true));
  auto refused = planner.plan(gpu_buffer(5), k_server, /*reachable=*/false);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->path, proto::ChunkPath::bounce);
  EXPECT_EQ(refused->bounce_numa, 1);  // GPU 5 hangs off socket 1
  auto registered = planner.plan(gpu_buffer(5), k_server);
  ASSERT_TRUE(registered.has_value());
  EXPECT_EQ(registered->path, proto::ChunkPath::direct) << "the refused region's decision is kept apart";
  ChunkPlannerConfig cfg;
  cfg.caps.gpu_memory_reachable = true;
  ChunkPlanner plain(cfg);
  EXPECT_EQ(plain.plan(gpu_buffer(0), k_server, false)->path, proto::ChunkPath::bounce);
  EXPECT_EQ(plain.plan(MemHandle{0, MemKind::host, 0, 1, 0, 10}, k_server, false)->path, proto::ChunkPath::direct)
      << "only GPU regions are registered one by one";
}

TEST(ChunkPlanner, ANodeWithoutNicsRunsDegradedAndSaysWhy) {
  ChunkPlannerConfig cfg = dgx(true);
  cfg.node = 3;  // not in a one-machine topology
  ChunkPlanner planner(cfg);
  EXPECT_NE(planner.degraded_reason().find("no rails for node 3"), std::string::npos) << planner.degraded_reason();
  EXPECT_TRUE(planner.plan(gpu_buffer(0), k_server).has_value());
}

}  // namespace
}  // namespace sluice
