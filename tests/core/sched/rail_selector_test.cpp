#include "core/sched/rail_selector.hpp"

#include <gtest/gtest.h>

#include "core/topology/machine_builders.hpp"

namespace sluice::sched {
namespace {

// With GPUDirect (the backend reaches GPU memory) a GPU's bytes take the
// NICs nvidia-fs ranks closest to it.
TEST(RailSelector, Gpu0UsesTheNicsOnItsOwnSwitchAlternatingByLoad) {
  const topo::Topology t = *topo::dgx_a100();
  const BackendCaps gds{.gpu_memory_reachable = true};
  auto rails = RailSelector::create(t, 0);
  ASSERT_TRUE(rails.ok()) << rails.status().to_string();
  std::vector<std::uint32_t> picks;
  for (int i = 0; i < 6; ++i) picks.push_back(*rails->choose(MemoryPlace::gpu(0), gds));
  EXPECT_EQ(picks, (std::vector<std::uint32_t>{0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(rails->active(0), 3u);
  EXPECT_EQ(rails->active(1), 3u);
  // GPU 7 uses mlx5_8/9 and is not affected by GPU 0's load.
  EXPECT_EQ(*rails->choose(MemoryPlace::gpu(7), gds), 8u);
  EXPECT_EQ(*rails->choose(MemoryPlace::gpu(7), gds), 9u);
}

TEST(RailSelector, TiesGoToTheLessLoadedNic) {
  const topo::Topology t = *topo::dgx_a100();
  const BackendCaps gds{.gpu_memory_reachable = true};
  auto rails = *RailSelector::create(t, 0);
  ASSERT_TRUE(rails.acquire(0).ok());
  ASSERT_TRUE(rails.acquire(0).ok());
  EXPECT_EQ(*rails.choose(MemoryPlace::gpu(1), gds), 1u);
  EXPECT_EQ(*rails.choose(MemoryPlace::gpu(1), gds), 1u);
  // Now 2:2 and NIC 1 was used last: NIC 0 is least recently used.
  EXPECT_EQ(*rails.choose(MemoryPlace::gpu(1), gds), 0u);
  ASSERT_TRUE(rails.release(0).ok());
  ASSERT_TRUE(rails.release(0).ok());
  EXPECT_EQ(*rails.choose(MemoryPlace::gpu(1), gds), 0u) << "after releases NIC 0 has fewer connections";
}

// Without GPUDirect a GPU's bytes bounce through pinned memory on its NUMA
// node, and the NIC choice sees that host buffer: every NIC of the GPU's
// socket alike (DGX A100 socket 0: mlx5_0..5, the storage NIC included),
// then the other socket's once they are full. Before, the bounce was ranked
// by the GPU's peer rank, and the socket's other NICs idled (roofline
// configuration 15: 0.45 of its bound).
TEST(RailSelector, ABouncedGpuUsesEveryNicOfItsSocketThenOverflows) {
  const topo::Topology t = *topo::dgx_a100();
  auto rails = *RailSelector::create(t, 0, RailLimits{2});
  EXPECT_EQ(rails.ranking_place(MemoryPlace::gpu(0), BackendCaps{}), MemoryPlace::pinned(0));
  EXPECT_EQ(rails.ranking_place(MemoryPlace::gpu(6), BackendCaps{}), MemoryPlace::pinned(1));
  EXPECT_EQ(rails.ranking_place(MemoryPlace::gpu(0), BackendCaps{true}), MemoryPlace::gpu(0));
  EXPECT_EQ(rails.ranking_place(MemoryPlace::host(1), BackendCaps{}), MemoryPlace::host(1));
  for (int i = 0; i < 12; ++i) EXPECT_LE(*rails.choose(MemoryPlace::gpu(0)), 5u);
  for (std::uint32_t nic = 0; nic <= 5; ++nic) EXPECT_EQ(rails.active(nic), 2u) << "mlx5_" << nic;
  // Socket 0's NICs are full: socket 1's come next.
  const auto overflow = *rails.choose(MemoryPlace::gpu(0));
  EXPECT_GE(overflow, 6u);
  EXPECT_LE(overflow, 9u);
}

TEST(RailSelector, WithGpuDirectAFullDirectRailMeansWaitNotOverflowIntoABounce) {
  const topo::Topology t = *topo::dgx_a100();
  const BackendCaps gds{.gpu_memory_reachable = true};
  auto rails = *RailSelector::create(t, 0, RailLimits{2});
  for (int i = 0; i < 4; ++i) EXPECT_LT(*rails.choose(MemoryPlace::gpu(0), gds), 2u);
  // mlx5_0/1 are full; every other NIC is NODE or SYS from GPU 0, i.e. a bounce.
  const auto full = rails.choose(MemoryPlace::gpu(0), gds);
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.status().code(), StatusCode::again);
  EXPECT_FALSE(rails.usable_for(MemoryPlace::gpu(0), 2, gds));
  EXPECT_TRUE(rails.usable_for(MemoryPlace::gpu(0), 1, gds));
  // Without GPU memory reach every GPU chunk bounces anyway: overflow is fine.
  EXPECT_GE(*rails.choose(MemoryPlace::gpu(0)), 2u);
  // Host memory is never restricted.
  EXPECT_TRUE(rails.usable_for(MemoryPlace::host(1), 0, gds));
  // A released direct rail is taken again.
  ASSERT_TRUE(rails.release(1).ok());
  EXPECT_EQ(*rails.choose(MemoryPlace::gpu(0), gds), 1u);
}

TEST(RailSelector, AGpuWithoutADirectNicStillOverflows) {
  // ND40rs_v2: GPUs hang off the host bridge (PHB from the NIC): no direct rail.
  const topo::Topology t = *topo::azure_nd40rs_v2();
  const BackendCaps gds{.gpu_memory_reachable = true};
  auto rails = *RailSelector::create(t, 0, RailLimits{1});
  EXPECT_TRUE(rails.usable_for(MemoryPlace::gpu(0), 0, gds));
  EXPECT_EQ(*rails.choose(MemoryPlace::gpu(0), gds), 0u);
}

TEST(RailSelector, AllNicsFullIsBackPressure) {
  const topo::Topology t = *topo::azure_nd40rs_v2();
  auto rails = *RailSelector::create(t, 0, RailLimits{1});
  ASSERT_TRUE(rails.choose(MemoryPlace::gpu(0)).ok());
  auto full = rails.choose(MemoryPlace::gpu(0));
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.status().code(), StatusCode::again);
  ASSERT_TRUE(rails.release(0).ok());
  EXPECT_TRUE(rails.choose(MemoryPlace::gpu(5)).ok());
}

TEST(RailSelector, TheConnectionLimitIsPerServer) {
  // BeeGFS connMaxInternodeNum: connections to one server. A NIC full to
  // server 3 still carries connections to server 4; a release gives back
  // the connection of the server named, and one never taken is refused.
  const topo::Topology t = *topo::azure_nd40rs_v2();
  auto rails = *RailSelector::create(t, 0, RailLimits{2});
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(rails.choose(MemoryPlace::gpu(0), {}, 3).ok());
  EXPECT_EQ(rails.choose(MemoryPlace::gpu(0), {}, 3).status().code(), StatusCode::again);
  EXPECT_EQ(rails.active(0, 3), 2u);
  EXPECT_EQ(rails.spare(0, 4), 2u);
  ASSERT_TRUE(rails.choose(MemoryPlace::gpu(0), {}, 4).ok());
  EXPECT_EQ(rails.active(0, 4), 1u);
  EXPECT_EQ(rails.release(0, 5).code(), StatusCode::invalid_argument);
  ASSERT_TRUE(rails.release(0, 3).ok());
  EXPECT_TRUE(rails.acquire(0, 3).ok());
  EXPECT_EQ(rails.acquire(0, 3).code(), StatusCode::again);
}

TEST(RailSelector, HostMemoryPrefersNicsOnItsNumaNode) {
  const topo::Topology t = *topo::dgx_a100();
  auto rails = *RailSelector::create(t, 0);
  auto pref = rails.preference(MemoryPlace::host(1));
  ASSERT_TRUE(pref.ok());
  // Socket 1 NICs first (mlx5_6..9), in index order while unloaded.
  EXPECT_EQ(std::vector<std::uint32_t>(pref->begin(), pref->begin() + 4), (std::vector<std::uint32_t>{6, 7, 8, 9}));
  EXPECT_EQ(*rails.choose(MemoryPlace::pinned(1)), 6u);
  EXPECT_EQ(*rails.choose(MemoryPlace::pinned(1)), 7u);
  EXPECT_EQ(*rails.choose(MemoryPlace::host(0)), 0u);
  EXPECT_LT(*rails.rank_key(MemoryPlace::host(0), 0), *rails.rank_key(MemoryPlace::host(0), 6));
}

TEST(RailSelector, HostRankPrefersTheFasterPortOnOneNumaNode) {
  topo::GenericMachine spec;
  spec.nics = 2;
  const topo::Topology t = *topo::generic_machine(spec);
  auto rails = *RailSelector::create(t, 0);
  EXPECT_EQ(*rails.rank_key(MemoryPlace::host(0), 0), *rails.rank_key(MemoryPlace::host(0), 1));
}

TEST(RailSelector, RejectsBadInput) {
  const topo::Topology t = *topo::dgx_a100();
  EXPECT_FALSE(RailSelector::create(t, 0, RailLimits{0}).ok());
  EXPECT_FALSE(RailSelector::create(t, 0, RailLimits{k_max_connections_per_nic_limit + 1}).ok());
  EXPECT_EQ(RailSelector::create(t, 3).status().code(), StatusCode::not_found);
  topo::GenericMachine spec;
  spec.nics = 0;
  EXPECT_FALSE(RailSelector::create(*topo::generic_machine(spec), 0).ok());
  auto rails = *RailSelector::create(t, 0);
  EXPECT_EQ(rails.choose(MemoryPlace::gpu(8)).status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(rails.choose(MemoryPlace::host(2)).status().code(), StatusCode::invalid_argument);
  EXPECT_FALSE(rails.rank_key(MemoryPlace::gpu(0), 10).ok());
  EXPECT_EQ(rails.release(3).code(), StatusCode::invalid_argument);
  EXPECT_EQ(rails.release(10).code(), StatusCode::invalid_argument);
  EXPECT_EQ(rails.acquire(10).code(), StatusCode::invalid_argument);
  EXPECT_EQ(rails.active(10), 0u);
  EXPECT_EQ(rails.spare(10), 0u);
  EXPECT_EQ(rails.nic_count(), 10u);
  EXPECT_EQ(rails.node(), 0u);
  EXPECT_EQ(rails.limits().max_connections_per_nic, k_default_max_connections_per_nic);
}

}  // namespace
}  // namespace sluice::sched
