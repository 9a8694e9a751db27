// Acceptance item of the Foundation issue: DGX A100 GPU 0 -> its local NICs
// as PIX/PXB and -> a far NIC as SYS, and the scheduler's choices for each.
#include <gtest/gtest.h>

#include "core/sched/chunk_plan.hpp"
#include "core/sched/data_path.hpp"
#include "core/sched/rail_selector.hpp"
#include "core/topology/machine_builders.hpp"
#include "core/topology/path_class.hpp"
#include "core/topology/peer_rank.hpp"

namespace sluice::sched {
namespace {

using topo::PathClass;

TEST(DgxA100Acceptance, Gpu0LocalNicsArePxbFarNicIsSysAndTheSchedulerActsOnIt) {
  const topo::Topology t = *topo::dgx_a100();
  const topo::VertexId gpu0 = *t.find("gpu0");

  // Topology: the NICs on GPU 0's switch complex are PXB (PIX would also do),
  // a NIC on the other socket is SYS.
  for (const char* local : {"mlx5_0", "mlx5_1"}) {
    const PathClass pc = *topo::path_class(t, gpu0, *t.find(local));
    EXPECT_TRUE(pc == PathClass::pix || pc == PathClass::pxb) << local << " is " << topo::to_string(pc);
    EXPECT_EQ(pc, PathClass::pxb) << "the real DGX A100 shows PXB (two-level switch)";
  }
  EXPECT_EQ(*topo::path_class(t, gpu0, *t.find("mlx5_6")), PathClass::sys);

  // Scheduler, with a GPUDirect-capable backend.
  const BackendCaps gdr{true};
  const PathDecision near = *decide_path(t, 0, MemoryPlace::gpu(0), 0, gdr);
  EXPECT_EQ(near.path, DataPath::direct);
  EXPECT_EQ(near.path_class, PathClass::pxb);
  const PathDecision far = *decide_path(t, 0, MemoryPlace::gpu(0), 6, gdr);
  EXPECT_EQ(far.path, DataPath::bounce);
  EXPECT_EQ(far.path_class, PathClass::sys);
  EXPECT_EQ(far.staging_numa, t.vertex(gpu0).numa);

  // Rails: GPU 0 picks mlx5_0 and mlx5_1 (tied rank, alternating by load),
  // never mlx5_6 while they have spare connections.
  auto rails = *RailSelector::create(t, 0);
  EXPECT_EQ(*rails.choose(MemoryPlace::gpu(0), gdr), 0u);
  EXPECT_EQ(*rails.choose(MemoryPlace::gpu(0), gdr), 1u);
  EXPECT_EQ(*rails.choose(MemoryPlace::gpu(0), gdr), 0u);
  EXPECT_LT(*rails.rank_key(MemoryPlace::gpu(0), 0), *rails.rank_key(MemoryPlace::gpu(0), 6));

  // A whole request: every chunk direct over GPU 0's own rails.
  std::vector<ChunkRef> request;
  for (std::uint32_t i = 0; i < 16; ++i) request.push_back(ChunkRef{512 * k_kib, i % 4, i * 512 * k_kib});
  PlanParams params;
  params.caps = gdr;
  const auto plan = *plan_chunks(t, rails, MemoryPlace::gpu(0), request, params);
  for (const ChunkPlan& c : plan) {
    EXPECT_LE(c.nic, 1u);
    EXPECT_EQ(c.path, DataPath::direct);
  }

  // And GPU 4 (other socket) forced onto mlx5_0 would bounce via its own NUMA node.
  const PathDecision cross = *decide_path(t, 0, MemoryPlace::gpu(4), 0, gdr);
  EXPECT_EQ(cross.path, DataPath::bounce);
  EXPECT_EQ(cross.staging_numa, 1u);
}

TEST(DgxA100Acceptance, GpuWhoseOnlyNicIsAcrossTheSocketFallsBackToBounce) {
  topo::GenericMachine spec;
  spec.sockets = 2;
  spec.gpus = 2;
  spec.nics = 1;
  const topo::Topology t = *topo::generic_machine(spec);
  auto rails = *RailSelector::create(t, 0);
  const std::uint32_t nic = *rails.choose(MemoryPlace::gpu(1));
  EXPECT_EQ(nic, 0u);
  const PathDecision d = *decide_path(t, 0, MemoryPlace::gpu(1), nic, BackendCaps{true});
  EXPECT_EQ(d.path_class, PathClass::sys);
  EXPECT_EQ(d.path, DataPath::bounce);
  EXPECT_EQ(d.staging_numa, 1u) << "pinned staging buffer on the GPU's NUMA node";
  // GPU 0 shares the NIC's switch: direct.
  EXPECT_EQ(decide_path(t, 0, MemoryPlace::gpu(0), nic, BackendCaps{true})->path, DataPath::direct);
}

}  // namespace
}  // namespace sluice::sched
