#include "core/sched/data_path.hpp"

#include <gtest/gtest.h>

#include "core/topology/machine_builders.hpp"

namespace sluice::sched {
namespace {

using topo::PathClass;

constexpr BackendCaps k_gdr{true};
constexpr BackendCaps k_no_gdr{false};

TEST(DecidePath, GpuOnTheNicSwitchGoesDirectWhenTheBackendReachesGpuMemory) {
  const topo::Topology t = *topo::dgx_a100();
  auto d = decide_path(t, 0, MemoryPlace::gpu(0), 0, k_gdr);
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  EXPECT_EQ(d->path, DataPath::direct);
  EXPECT_EQ(d->path_class, PathClass::pxb);
  EXPECT_EQ(d->staging_numa, k_no_id);
  EXPECT_NE(d->reason.find("direct"), std::string::npos);
}

TEST(DecidePath, BackendWithoutGpuMemoryBouncesEvenWhenClose) {
  const topo::Topology t = *topo::dgx_a100();
  auto d = decide_path(t, 0, MemoryPlace::gpu(5), 7, k_no_gdr);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->path, DataPath::bounce);
  EXPECT_EQ(d->path_class, PathClass::pxb);
  EXPECT_EQ(d->staging_numa, 1u);
  EXPECT_NE(d->reason.find("cannot reach GPU memory"), std::string::npos) << d->reason;
}

TEST(DecidePath, NodeAndSysAreTooFarForDirect) {
  const topo::Topology t = *topo::dgx_a100();
  auto node = decide_path(t, 0, MemoryPlace::gpu(0), 2, k_gdr);
  ASSERT_TRUE(node.ok());
  EXPECT_EQ(node->path, DataPath::bounce);
  EXPECT_EQ(node->path_class, PathClass::node);
  auto sys = decide_path(t, 0, MemoryPlace::gpu(0), 9, k_gdr);
  ASSERT_TRUE(sys.ok());
  EXPECT_EQ(sys->path, DataPath::bounce);
  EXPECT_EQ(sys->path_class, PathClass::sys);
  EXPECT_EQ(sys->staging_numa, 0u) << "staging memory sits with the GPU, not with the NIC";
  EXPECT_NE(sys->reason.find("farther than PXB"), std::string::npos) << sys->reason;
}

TEST(DecidePath, PhbIsTooFarOnNd40rsV2) {
  const topo::Topology t = *topo::azure_nd40rs_v2();
  auto d = decide_path(t, 0, MemoryPlace::gpu(1), 0, k_gdr);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->path_class, PathClass::phb);
  EXPECT_EQ(d->path, DataPath::bounce);
}

TEST(DecidePath, HostMemoryIsAlwaysDirectAndReportsLocality) {
  const topo::Topology t = *topo::dgx_a100();
  auto local = decide_path(t, 0, MemoryPlace::pinned(0), 1, k_no_gdr);
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(local->path, DataPath::direct);
  EXPECT_EQ(local->path_class, PathClass::phb);
  auto remote = decide_path(t, 0, MemoryPlace::host(1), 1, k_no_gdr);
  ASSERT_TRUE(remote.ok());
  EXPECT_EQ(remote->path, DataPath::direct);
  EXPECT_EQ(remote->path_class, PathClass::sys);
  EXPECT_NE(remote->reason.find("across sockets"), std::string::npos);
}

TEST(DecidePath, UnknownThingsAreErrors) {
  const topo::Topology t = *topo::dgx_a100();
  EXPECT_FALSE(decide_path(t, 0, MemoryPlace::gpu(8), 0, k_gdr).ok());
  EXPECT_FALSE(decide_path(t, 0, MemoryPlace::gpu(0), 10, k_gdr).ok());
  EXPECT_FALSE(decide_path(t, 1, MemoryPlace::gpu(0), 0, k_gdr).ok());
  EXPECT_FALSE(decide_path(t, 0, MemoryPlace::host(2), 0, k_gdr).ok());
  EXPECT_EQ(to_string(DataPath::direct), "direct");
  EXPECT_EQ(to_string(DataPath::bounce), "bounce");
  MemHandle h;
  h.kind = MemKind::gpu;
  h.device = 3;
  EXPECT_EQ(MemoryPlace::of(h).device, 3u);
  EXPECT_EQ(MemoryPlace::of(h).kind, MemKind::gpu);
}

}  // namespace
}  // namespace sluice::sched
