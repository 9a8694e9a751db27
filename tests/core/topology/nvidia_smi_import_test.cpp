#include "core/topology/nvidia_smi_import.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/topology/path_class.hpp"

namespace sluice::topo {
namespace {

// DGX A100 as shipped (NPS4: every switch complex its own NUMA node), in the
// format of driver 450-470: tab separated, mlx5 names in the header.
constexpr std::string_view k_dgx_a100 =
    R"TOPO(	GPU0	GPU1	GPU2	GPU3	GPU4	GPU5	GPU6	GPU7	mlx5_0	mlx5_1	mlx5_2	mlx5_3	mlx5_4	mlx5_5	mlx5_6	mlx5_7	mlx5_8	mlx5_9	CPU Affinity	NUMA Affinity
GPU0	 X 	NV12	NV12	NV12	NV12	NV12	NV12	NV12	PXB	PXB	SYS	SYS	SYS	SYS	SYS	SYS	SYS	SYS	48-63,176-191	3
GPU1	NV12	 X 	NV12	NV12	NV12	NV12	NV12	NV12	PXB	PXB	SYS	SYS	SYS	SYS	SYS	SYS	SYS	SYS	48-63,176-191	3
GPU2	NV12	NV12	 X 	NV12	NV12	NV12	NV12	NV12	SYS	SYS	PXB	PXB	SYS	SYS	SYS	SYS	SYS	SYS	16-31,144-159	1
GPU3	NV12	NV12	NV12	 X 	NV12	NV12	NV12	NV12	SYS	SYS	PXB	PXB	SYS	SYS	SYS	SYS	SYS	SYS	16-31,144-159	1
GPU4	NV12	NV12	NV12	NV12	 X 	NV12	NV12	NV12	SYS	SYS	SYS	SYS	SYS	SYS	PXB	PXB	SYS	SYS	112-127,240-255	7
GPU5	NV12	NV12	NV12	NV12	NV12	 X 	NV12	NV12	SYS	SYS	SYS	SYS	SYS	SYS	PXB	PXB	SYS	SYS	112-127,240-255	7
GPU6	NV12	NV12	NV12	NV12	NV12	NV12	 X 	NV12	SYS	SYS	SYS	SYS	SYS	SYS	SYS	SYS	PXB	PXB	80-95,208-223	5
GPU7	NV12	NV12	NV12	NV12	NV12	NV12	NV12	 X 	SYS	SYS	SYS	SYS	SYS	SYS	SYS	SYS	PXB	PXB	80-95,208-223	5
mlx5_0	PXB	PXB	SYS	SYS	SYS	SYS	SYS	SYS	 X 	PXB	SYS	SYS	SYS	SYS	SYS	SYS	SYS	SYS
mlx5_1	PXB	PXB	SYS	SYS	SYS	SYS	SYS	SYS	PXB	 X 	SYS	SYS	SYS	SYS	SYS	SYS	SYS	SYS
mlx5_2	SYS	SYS	PXB	PXB	SYS	SYS	SYS	SYS	SYS	SYS	 X 	PXB	SYS	SYS	SYS	SYS	SYS	SYS
mlx5_3	SYS	SYS	PXB	PXB	SYS	SYS	SYS	SYS	SYS	SYS	PXB	 X 	SYS	SYS	SYS	SYS	SYS	SYS
mlx5_4	SYS	SYS	SYS	SYS	SYS	SYS	SYS	SYS	SYS	SYS	SYS	SYS	 X 	PIX	SYS	SYS	SYS	SYS
mlx5_5	SYS	SYS	SYS	SYS	SYS	SYS	SYS	SYS	SYS	SYS	SYS	SYS	PIX	 X 	SYS	SYS	SYS	SYS
mlx5_6	SYS	SYS	SYS	SYS	PXB	PXB	SYS	SYS	SYS	SYS	SYS	SYS	SYS	SYS	 X 	PXB	SYS	SYS
mlx5_7	SYS	SYS	SYS	SYS	PXB	PXB	SYS	SYS	SYS	SYS	SYS	SYS	SYS	SYS	PXB	 X 	SYS	SYS
mlx5_8	SYS	SYS	SYS	SYS	SYS	SYS	PXB	PXB	SYS	SYS	SYS	SYS	SYS	SYS	SYS	SYS	 X 	PXB
mlx5_9	SYS	SYS	SYS	SYS	SYS	SYS	PXB	PXB	SYS	SYS	SYS	SYS	SYS	SYS	SYS	SYS	PXB	 X 

Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks
)TOPO";

// A 2-GPU workstation with an NVLink bridge and one NIC, newer driver format
// (GPU NUMA ID column, NIC legend).
constexpr std::string_view k_workstation =
    R"TOPO(	GPU0	GPU1	NIC0	CPU Affinity	NUMA Affinity	GPU NUMA ID
GPU0	 X 	NV4	PHB	0-31	0		N/A
GPU1	NV4	 X 	PHB	0-31	0		N/A
NIC0	PHB	PHB	 X 

Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks

NIC Legend:

  NIC0: mlx5_0
)TOPO";

// A 4-GPU PCIe server, space separated: GPU0/1 and NIC0 on one switch of
// socket 0; GPU2/3 on two switches of socket 1, NIC1 on another root port.
constexpr std::string_view k_pcie_server =
    R"TOPO(        GPU0    GPU1    GPU2    GPU3    NIC0    NIC1    CPU Affinity    NUMA Affinity   GPU NUMA ID
GPU0     X      PIX     SYS     SYS     PIX     SYS     0-23,48-71      0               N/A
GPU1    PIX      X      SYS     SYS     PIX     SYS     0-23,48-71      0               N/A
GPU2    SYS     SYS      X      PXB     SYS     NODE    24-47,72-95     1               N/A
GPU3    SYS     SYS     PXB      X      SYS     NODE    24-47,72-95     1               N/A
NIC0    PIX     PIX     SYS     SYS      X      SYS
NIC1    SYS     SYS     NODE    NODE    SYS      X

Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks

NIC Legend:

  NIC0: mlx5_0
  NIC1: mlx5_1
)TOPO";

PathClass pc(const Topology& t, std::string_view a, std::string_view b) {
  auto r = path_class(t, *t.find(a), *t.find(b));
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? *r : PathClass::net;
}

TEST(NvidiaSmiImport, DgxA100MatrixGivesGpusNicsAndTheSameClasses) {
  auto t = import_nvidia_smi_topo(k_dgx_a100);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->count(0, VertexKind::gpu), 8u);
  EXPECT_EQ(t->count(0, VertexKind::nic), 10u);
  EXPECT_EQ(t->vertex(*t->device(0, VertexKind::nic, 4)).name, "mlx5_4");
  EXPECT_EQ(pc(*t, "gpu0", "mlx5_0"), PathClass::pxb);
  EXPECT_EQ(pc(*t, "gpu0", "mlx5_1"), PathClass::pxb);
  EXPECT_EQ(pc(*t, "gpu0", "mlx5_2"), PathClass::sys);
  EXPECT_EQ(pc(*t, "mlx5_4", "mlx5_5"), PathClass::pix);
  EXPECT_EQ(pc(*t, "gpu6", "mlx5_9"), PathClass::pxb);
  // Sockets (NUMA domains) follow the declared NUMA affinity: 1, 3, 5, 7, then the GPU-less one.
  EXPECT_EQ(t->count(0, VertexKind::cpu_socket), 5u);
  EXPECT_EQ(t->vertex(*t->find("gpu2")).numa, 0u);
  EXPECT_EQ(t->vertex(*t->find("gpu0")).numa, 1u);
  EXPECT_EQ(t->vertex(*t->find("gpu6")).numa, 2u);
  EXPECT_EQ(t->vertex(*t->find("gpu4")).numa, 3u);
  EXPECT_EQ(t->vertex(*t->find("mlx5_4")).numa, 4u);
}

TEST(NvidiaSmiImport, WorkstationWithNicLegend) {
  NvidiaSmiImportOptions o;
  o.nic_port_rate_bytes_per_s = gbps_to_bytes_per_s(100);
  auto t = import_nvidia_smi_topo(k_workstation, o);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->count(0, VertexKind::gpu), 2u);
  ASSERT_EQ(t->count(0, VertexKind::nic), 1u);
  const Vertex& nic = t->vertex(*t->device(0, VertexKind::nic, 0));
  EXPECT_EQ(nic.name, "mlx5_0");
  EXPECT_DOUBLE_EQ(nic.nic_port_rate_bytes_per_s, 12.5e9);
  EXPECT_EQ(pc(*t, "gpu0", "mlx5_0"), PathClass::phb);
  EXPECT_EQ(t->count(0, VertexKind::cpu_socket), 1u);
}

TEST(NvidiaSmiImport, PcieServerWithSwitchesAndTwoSockets) {
  auto t = import_nvidia_smi_topo(k_pcie_server);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->count(0, VertexKind::cpu_socket), 2u);
  EXPECT_EQ(pc(*t, "gpu0", "gpu1"), PathClass::pix);
  EXPECT_EQ(pc(*t, "gpu0", "mlx5_0"), PathClass::pix);
  EXPECT_EQ(pc(*t, "gpu2", "gpu3"), PathClass::pxb);
  EXPECT_EQ(pc(*t, "gpu2", "mlx5_1"), PathClass::node);
  EXPECT_EQ(pc(*t, "gpu3", "mlx5_0"), PathClass::sys);
  EXPECT_EQ(t->vertex(*t->find("gpu2")).numa, 1u);
}

// Replaces the first occurrence of `from` in `text` after position `after`.
std::string edit(std::string_view text, std::string_view after, std::string_view from, std::string_view to) {
  std::string s(text);
  const auto start = s.find(after);
  const auto at = s.find(from, start);
  EXPECT_NE(at, std::string::npos);
  s.replace(at, from.size(), to);
  return s;
}

void expect_error(const std::string& text, std::string_view needle) {
  auto t = import_nvidia_smi_topo(text);
  ASSERT_FALSE(t.ok()) << "should fail: " << needle;
  EXPECT_NE(t.status().message().find(needle), std::string::npos) << t.status().message();
}

TEST(NvidiaSmiImport, UnknownCellNamesLineAndColumn) {
  // Line 4 is GPU2's row; its column 9 is mlx5_0.
  expect_error(edit(k_dgx_a100, "\nGPU2", "SYS", "PQX"), "line 4, column 9 (mlx5_0): unknown cell 'PQX'");
}

TEST(NvidiaSmiImport, AsymmetricMatrixIsAnError) {
  expect_error(edit(k_pcie_server, "\nNIC1", "NODE", "PHB"), "not symmetric");
}

TEST(NvidiaSmiImport, ContradictoryCellsAreAnError) {
  // GPU0 PIX GPU1 and GPU1 PIX NIC0, but GPU0 SYS NIC0 (both directions).
  std::string s = edit(k_pcie_server, "\nGPU0", "PIX     SYS     0-23", "SYS     SYS     0-23");
  s = edit(s, "\nNIC0", "PIX", "SYS");
  expect_error(s, "line 2, column 5 (NIC0): 'SYS' contradicts");
}

TEST(NvidiaSmiImport, StructuralErrors) {
  expect_error("", "empty input");
  expect_error("\tCPU Affinity\n", "no device columns");
  expect_error(edit(k_workstation, "", "GPU1\tNV4", "GPU7\tNV4"), "expected the row of 'GPU1'");
  expect_error(edit(k_workstation, "\nNIC0", "\tPHB", ""), "has 2 cells");
  expect_error(edit(k_workstation, "\nGPU1", "\tPHB", ""), "line 3, column 3 (NIC0): unknown cell '0-31'");
  expect_error(edit(k_workstation, "\nGPU1", " X ", "PHB"), "diagonal must be 'X'");
  expect_error(edit(k_workstation, "\nGPU1", "NV4", " X "), "'X' (self) off the diagonal");
  expect_error(edit(edit(k_workstation, "\nGPU0", "PHB", "NV2"), "\nNIC0", "PHB", "NV2"),
               "NVLink 'NV2' between non-GPUs");
  expect_error(edit(k_workstation, "", "GPU1", "GPU3"), "GPU1 is missing");
  expect_error("\tGPU0\tGPU0\n", "duplicate column");
  expect_error("\tGPU0\tGPU1\nGPU0\t X \tPIX\n", "only 1 rows follow");
  std::string huge(k_max_topo_text_bytes + 1, ' ');
  expect_error(huge, "k_max_topo_text_bytes");
}

}  // namespace
}  // namespace sluice::topo
