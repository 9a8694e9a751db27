#include "core/topology/machine_builders.hpp"

#include <gtest/gtest.h>

#include "core/topology/hardware_figures.hpp"
#include "core/topology/path_class.hpp"
#include "core/topology/peer_rank.hpp"

namespace sluice::topo {
namespace {

PathClass pc(const Topology& t, std::string_view a, std::string_view b) {
  auto r = path_class(t, *t.find(a), *t.find(b));
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? *r : PathClass::net;
}

TEST(PcieFigures, EffectiveBandwidthFollowsGenerationAndLanes) {
  EXPECT_NEAR(pcie_raw_bytes_per_s(3, 16), 15.75e9, 0.01e9);
  EXPECT_NEAR(pcie_raw_bytes_per_s(4, 16), 31.5e9, 0.01e9);
  EXPECT_NEAR(pcie_raw_bytes_per_s(1, 1), 0.25e9, 1e6);
  EXPECT_NEAR(pcie_raw_bytes_per_s(2, 8), 4e9, 1e6);
  EXPECT_NEAR(pcie_raw_bytes_per_s(5, 16), 63.0e9, 0.05e9);
  EXPECT_DOUBLE_EQ(pcie_bytes_per_s(3, 8) * 2, pcie_bytes_per_s(3, 16));
  // The Critical I/O recorder moved 6.06 GB/s through gen3 x8: the effective figure must allow it.
  EXPECT_GT(pcie_bytes_per_s(3, 8), 6.06e9);
  EXPECT_LT(pcie_bytes_per_s(3, 8), pcie_raw_bytes_per_s(3, 8));
  EXPECT_EQ(pcie_raw_bytes_per_s(9, 16), 0.0);
  EXPECT_EQ(pcie_raw_bytes_per_s(3, 0), 0.0);
}

TEST(DgxA100, HasTheDevicesOfTheRealMachine) {
  auto t = dgx_a100();
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->count(0, VertexKind::cpu_socket), 2u);
  EXPECT_EQ(t->count(0, VertexKind::gpu), 8u);
  EXPECT_EQ(t->count(0, VertexKind::nic), 10u);
  EXPECT_EQ(t->count(0, VertexKind::nvme), 4u);
  EXPECT_EQ(t->machine_name(0), "dgx_a100");
  for (std::uint32_t i = 0; i < 10; ++i) {
    const Vertex& nic = t->vertex(*t->device(0, VertexKind::nic, i));
    EXPECT_EQ(nic.name, "mlx5_" + std::to_string(i));
    EXPECT_DOUBLE_EQ(nic.nic_port_rate_bytes_per_s, 25e9);  // HDR 200 Gb/s
  }
  EXPECT_EQ(t->vertex(*t->find("gpu3")).numa, 0u);
  EXPECT_EQ(t->vertex(*t->find("gpu4")).numa, 1u);
  EXPECT_EQ(t->vertex(*t->find("gpu0")).gpu_memory_bytes, 40 * k_gib);
}

TEST(DgxA100, PathClassesMatchNvidiaSmiOnTheRealMachine) {
  const Topology t = *dgx_a100();
  // Own complex: PXB (rapidsai/ucx-py#749), including GPU<->GPU and NIC<->NIC.
  EXPECT_EQ(pc(t, "gpu0", "mlx5_0"), PathClass::pxb);
  EXPECT_EQ(pc(t, "gpu0", "mlx5_1"), PathClass::pxb);
  EXPECT_EQ(pc(t, "gpu1", "mlx5_0"), PathClass::pxb);
  EXPECT_EQ(pc(t, "gpu0", "gpu1"), PathClass::pxb);
  EXPECT_EQ(pc(t, "mlx5_0", "mlx5_1"), PathClass::pxb);
  EXPECT_EQ(pc(t, "gpu0", "nvme0"), PathClass::pxb);
  // Other complex on the same socket: NODE in our NPS1 model.
  EXPECT_EQ(pc(t, "gpu0", "mlx5_2"), PathClass::node);
  EXPECT_EQ(pc(t, "gpu0", "mlx5_4"), PathClass::node);
  // Other socket: SYS.
  EXPECT_EQ(pc(t, "gpu0", "mlx5_6"), PathClass::sys);
  EXPECT_EQ(pc(t, "gpu7", "mlx5_0"), PathClass::sys);
  EXPECT_EQ(pc(t, "gpu6", "mlx5_8"), PathClass::pxb);
  // The two ports of the storage adapter share its link: no bridge between them.
  EXPECT_EQ(pc(t, "mlx5_4", "mlx5_5"), PathClass::pix);
  EXPECT_EQ(pc(t, "gpu0", "gpu0"), PathClass::loc);
}

TEST(DgxA100, Gpu0RanksItsOwnNicsFirstThenSocketThenFarSocket) {
  const Topology t = *dgx_a100();
  auto ranked = rank_peers(t, *t.find("gpu0"), VertexKind::nic);
  ASSERT_TRUE(ranked.ok());
  ASSERT_EQ(ranked->size(), 10u);
  EXPECT_EQ((*ranked)[0].index, 0u);
  EXPECT_EQ((*ranked)[1].index, 1u);
  EXPECT_EQ((*ranked)[0].rank.key, (*ranked)[1].rank.key) << "equal NICs on the same switch tie";
  EXPECT_EQ((*ranked)[0].rank.pci_distance, 3u);  // gpu bridge + nic bridge + 1
  EXPECT_FALSE((*ranked)[0].rank.cross_root_port);
  // Then the same-socket NICs (cross root port), then the far socket.
  for (std::size_t i = 2; i < 6; ++i) {
    EXPECT_TRUE((*ranked)[i].rank.cross_root_port);
    EXPECT_FALSE((*ranked)[i].rank.cross_numa) << (*ranked)[i].index;
  }
  for (std::size_t i = 6; i < 10; ++i) EXPECT_TRUE((*ranked)[i].rank.cross_numa) << (*ranked)[i].index;
  EXPECT_GT((*ranked)[6].rank.pci_distance, 2 * k_pci_distance_cross_root_port);
}

TEST(AzureNd40rsV2, OneEdrNicOnSocketZeroAndLocalNvme) {
  auto t = azure_nd40rs_v2();
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->count(0, VertexKind::gpu), 8u);
  EXPECT_EQ(t->count(0, VertexKind::nic), 1u);
  const Vertex& nvme = t->vertex(*t->find("nvme0"));
  EXPECT_GT(nvme.nvme_capacity_bytes, 3'000'000'000'000ULL);
  EXPECT_GE(nvme.nvme_read_bytes_per_s, 3e9);
  EXPECT_DOUBLE_EQ(t->vertex(*t->find("mlx5_0")).nic_port_rate_bytes_per_s, 12.5e9);
  EXPECT_EQ(pc(*t, "gpu0", "mlx5_0"), PathClass::phb);
  EXPECT_EQ(pc(*t, "gpu5", "mlx5_0"), PathClass::sys);
}

TEST(CriticalIo, DualPortNicSharesOneGen3x8Link) {
  auto host = critical_io_gpu_host();
  ASSERT_TRUE(host.ok()) << host.status().to_string();
  EXPECT_EQ(host->count(0, VertexKind::nic), 2u);
  EXPECT_EQ(pc(*host, "gpu0", "mlx5_0"), PathClass::pix);
  EXPECT_EQ(pc(*host, "gpu0", "mlx5_1"), PathClass::pix);
  // From host memory to either port the gen3 x8 adapter link is the PCIe limit.
  auto route = host->machine_route(*host->find("mem0"), *host->find("mlx5_1"));
  ASSERT_TRUE(route.ok());
  EXPECT_DOUBLE_EQ(host->bottleneck_bytes_per_s(*route), pcie_bytes_per_s(3, 8));
  // Both ports cross the same adapter uplink edge.
  auto r0 = host->machine_route(*host->find("gpu0"), *host->find("mlx5_0"));
  auto r1 = host->machine_route(*host->find("gpu0"), *host->find("mlx5_1"));
  ASSERT_TRUE(r0.ok() && r1.ok());
  EXPECT_EQ(r0->edges[1], r1->edges[1]);

  auto rec = critical_io_recorder();
  ASSERT_TRUE(rec.ok()) << rec.status().to_string();
  EXPECT_EQ(rec->count(0, VertexKind::nvme), 4u);
  EXPECT_EQ(rec->count(0, VertexKind::gpu), 0u);
  EXPECT_EQ(critical_io_recorder(7)->count(0, VertexKind::nvme), 7u);
  EXPECT_FALSE(critical_io_recorder(0).ok());
}

TEST(Dgx2Like, MatchesTheDgx2NvidiaSmiPattern) {
  auto t = dgx2_like();
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->count(0, VertexKind::gpu), 16u);
  EXPECT_EQ(t->count(0, VertexKind::nic), 8u);
  EXPECT_EQ(t->count(0, VertexKind::nvme), 8u);
  // NVIDIA/nccl-tests#78: GPU0 row = PIX PXB NODE NODE SYS SYS SYS SYS.
  EXPECT_EQ(pc(*t, "gpu0", "mlx5_0"), PathClass::pix);
  EXPECT_EQ(pc(*t, "gpu0", "mlx5_1"), PathClass::pxb);
  EXPECT_EQ(pc(*t, "gpu0", "mlx5_2"), PathClass::node);
  EXPECT_EQ(pc(*t, "gpu0", "mlx5_3"), PathClass::node);
  for (int n = 4; n < 8; ++n) EXPECT_EQ(pc(*t, "gpu0", "mlx5_" + std::to_string(n)), PathClass::sys);
  EXPECT_EQ(pc(*t, "gpu2", "mlx5_1"), PathClass::pix);
  EXPECT_EQ(pc(*t, "gpu4", "mlx5_3"), PathClass::pxb);
  // 8 drives ~25 GB/s together (docs/seeds.md#nvmesh-remote-nvme).
  double total = 0;
  for (std::uint32_t i = 0; i < 8; ++i) total += t->vertex(*t->device(0, VertexKind::nvme, i)).nvme_read_bytes_per_s;
  EXPECT_NEAR(total, 25e9, 1e6);
}

TEST(GenericMachine, SpreadsDevicesOverSocketsInBlocks) {
  GenericMachine spec;
  spec.sockets = 2;
  spec.gpus = 4;
  spec.nics = 2;
  spec.nvmes = 2;
  auto t = generic_machine(spec);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->vertex(*t->find("gpu1")).numa, 0u);
  EXPECT_EQ(t->vertex(*t->find("gpu2")).numa, 1u);
  EXPECT_EQ(pc(*t, "gpu0", "nic0"), PathClass::pix);
  EXPECT_EQ(pc(*t, "gpu3", "nic1"), PathClass::pix);
  EXPECT_EQ(pc(*t, "gpu3", "nic0"), PathClass::sys);
  EXPECT_EQ(pc(*t, "gpu0", "nvme0"), PathClass::pix);
}

TEST(GenericMachine, SeveralSwitchesPerSocketGiveNode) {
  GenericMachine spec;
  spec.gpus = 2;
  spec.nics = 2;
  spec.switches_per_socket = 2;
  auto t = generic_machine(spec);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(pc(*t, "gpu0", "nic0"), PathClass::pix);
  EXPECT_EQ(pc(*t, "gpu0", "nic1"), PathClass::node);
}

TEST(GenericMachine, GpuWhoseOnlyNicIsAcrossTheSocket) {
  GenericMachine spec;
  spec.sockets = 2;
  spec.gpus = 2;
  spec.nics = 1;
  auto t = generic_machine(spec);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(pc(*t, "gpu1", "nic0"), PathClass::sys);
  auto rank = peer_rank(*t, *t->find("gpu1"), *t->find("nic0"));
  ASSERT_TRUE(rank.ok());
  EXPECT_TRUE(rank->cross_numa);
  EXPECT_TRUE(rank->cross_root_port);
}

TEST(GenericMachine, RejectsOutOfRangeSpecs) {
  GenericMachine spec;
  spec.sockets = 0;
  EXPECT_FALSE(generic_machine(spec).ok());
  spec.sockets = 1;
  spec.switches_per_socket = 0;
  EXPECT_FALSE(generic_machine(spec).ok());
  spec.switches_per_socket = 1;
  spec.gpus = k_generic_max_devices + 1;
  EXPECT_FALSE(generic_machine(spec).ok());
  spec.gpus = 1;
  spec.pcie_gen = 9;  // unknown generation: zero bandwidth, refused
  auto bad = generic_machine(spec);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bandwidth"), std::string::npos);
}

}  // namespace
}  // namespace sluice::topo
