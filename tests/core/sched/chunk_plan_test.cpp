#include "core/sched/chunk_plan.hpp"

#include <gtest/gtest.h>

#include <map>

#include "core/topology/machine_builders.hpp"

namespace sluice::sched {
namespace {

std::vector<ChunkRef> chunks(std::size_t n, std::uint64_t bytes) {
  std::vector<ChunkRef> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(ChunkRef{bytes, static_cast<TargetId>(i % 4), i * bytes});
  return out;
}

TEST(PlanChunks, SpreadsOverTheGpusOwnRailsWithWindowSlotsAndWaves) {
  const topo::Topology t = *topo::dgx_a100();
  const auto rails = *RailSelector::create(t, 0);
  PlanParams p;
  p.caps.gpu_memory_reachable = true;
  p.rtt_ns = 10 * k_ns_per_us;  // 25 GB/s x 10 us = 250 KB: with 512 KiB chunks window = 1 + 1 = 2
  const auto cs = chunks(8, 512 * k_kib);
  auto plan = plan_chunks(t, rails, MemoryPlace::gpu(0), cs, p);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  ASSERT_EQ(plan->size(), 8u);
  std::map<std::uint32_t, int> per_nic;
  for (std::size_t i = 0; i < plan->size(); ++i) {
    const ChunkPlan& c = (*plan)[i];
    EXPECT_EQ(c.nic, i % 2) << "round-robin over mlx5_0 and mlx5_1";
    EXPECT_EQ(c.path, DataPath::direct);
    EXPECT_EQ(c.path_class, topo::PathClass::pxb);
    EXPECT_EQ(c.staging_numa, k_no_id);
    const std::uint32_t k = static_cast<std::uint32_t>(i / 2);  // k-th chunk on its rail
    EXPECT_EQ(c.window_slot, k % 2);
    EXPECT_EQ(c.wave, k / 2);
    ++per_nic[c.nic];
  }
  EXPECT_EQ(per_nic[0], 4);
  EXPECT_EQ(per_nic[1], 4);
}

TEST(PlanChunks, WindowGrowsWithTheRoundTripAndIsCappedBySpareConnections) {
  const topo::Topology t = *topo::dgx_a100();
  auto rails = *RailSelector::create(t, 0, RailLimits{3});
  PlanParams p;
  p.caps.gpu_memory_reachable = true;
  p.rtt_ns = k_ns_per_ms;  // huge BDP: window would be k_default_max_window_chunks
  ASSERT_TRUE(rails.acquire(1).ok());
  auto plan = *plan_chunks(t, rails, MemoryPlace::gpu(0), chunks(12, 64 * k_kib), p);
  // NIC 0 has 3 spare connections -> window 3; NIC 1 has 2 -> window 2.
  std::uint32_t max_slot[2] = {0, 0};
  for (const auto& c : plan) max_slot[c.nic] = std::max(max_slot[c.nic], c.window_slot);
  EXPECT_EQ(max_slot[0], 2u);
  EXPECT_EQ(max_slot[1], 1u);
  EXPECT_EQ(plan.back().wave, 2u) << "12 chunks, 6 per rail, window 2 on NIC 1 -> waves 0..2";
}

TEST(PlanChunks, OverflowToFartherRailsBouncesThroughTheGpusNumaUnlessThatWouldLeaveGpuDirect) {
  const topo::Topology t = *topo::dgx_a100();
  auto rails = *RailSelector::create(t, 0, RailLimits{1});
  ASSERT_TRUE(rails.acquire(0).ok());
  ASSERT_TRUE(rails.acquire(1).ok());
  PlanParams p;
  // With GPU memory reachable, mlx5_0/1 full means wait: the others would bounce.
  p.caps.gpu_memory_reachable = true;
  auto waiting = plan_chunks(t, rails, MemoryPlace::gpu(0), chunks(4, k_mib), p);
  ASSERT_FALSE(waiting.ok());
  EXPECT_EQ(waiting.status().code(), StatusCode::again);
  // Without it every GPU chunk bounces anyway, so the next closest rails take them.
  p.caps.gpu_memory_reachable = false;
  auto plan = plan_chunks(t, rails, MemoryPlace::gpu(0), chunks(4, k_mib), p);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  for (const auto& c : *plan) {
    EXPECT_GE(c.nic, 2u);
    EXPECT_LE(c.nic, 5u);
    EXPECT_EQ(c.path, DataPath::bounce);
    EXPECT_EQ(c.path_class, topo::PathClass::node);
    EXPECT_EQ(c.staging_numa, 0u);
    EXPECT_EQ(c.window_slot, 0u) << "one spare connection per rail";
  }
}

TEST(PlanChunks, HostDestinationUsesNumaLocalRails) {
  const topo::Topology t = *topo::dgx_a100();
  const auto rails = *RailSelector::create(t, 0);
  auto plan = plan_chunks(t, rails, MemoryPlace::host(1), chunks(8, k_mib));
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  for (const auto& c : *plan) {
    EXPECT_GE(c.nic, 6u);
    EXPECT_EQ(c.path, DataPath::direct);
    EXPECT_EQ(c.path_class, topo::PathClass::phb);
  }
}

TEST(PlanChunks, ErrorsAndEmptyRequests) {
  const topo::Topology t = *topo::dgx_a100();
  auto rails = *RailSelector::create(t, 0, RailLimits{1});
  EXPECT_TRUE(plan_chunks(t, rails, MemoryPlace::gpu(0), {})->empty());
  std::vector<ChunkRef> zero{{0, 1, 0}};
  EXPECT_EQ(plan_chunks(t, rails, MemoryPlace::gpu(0), zero).status().code(), StatusCode::invalid_argument);
  EXPECT_FALSE(plan_chunks(t, rails, MemoryPlace::gpu(9), chunks(1, 1)).ok());
  PlanParams bad;
  bad.window = WindowLimits{0, 0};
  EXPECT_FALSE(plan_chunks(t, rails, MemoryPlace::gpu(0), chunks(1, 1), bad).ok());
  const topo::Topology other = *topo::azure_nd40rs_v2();
  EXPECT_EQ(plan_chunks(other, rails, MemoryPlace::gpu(0), chunks(1, 1)).status().code(), StatusCode::invalid_argument);
  for (std::uint32_t n = 0; n < rails.nic_count(); ++n) ASSERT_TRUE(rails.acquire(n).ok());
  EXPECT_EQ(plan_chunks(t, rails, MemoryPlace::gpu(0), chunks(1, 1)).status().code(), StatusCode::again);
}

}  // namespace
}  // namespace sluice::sched
