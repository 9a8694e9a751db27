// Builders for the machines of the seed studies (docs/seeds.md), and a generic one.
//
// Each returns a validated single-machine Topology (node 0) whose machine
// name is the builder's name. Devices are named as on the real machine where
// the source says (mlx5_N for Mellanox ports, gpuN, nvmeN); local indices
// follow those numbers. Figures come from hardware_figures.hpp or are cited
// at the builder; where a source gives no figure, the field is 0 ("not
// stated") or the value is marked as an assumption to be calibrated.
#pragma once

#include <cstdint>

#include "core/common/status.hpp"
#include "core/common/units.hpp"
#include "core/topology/topology.hpp"
#include "core/common/field_info.hpp"

namespace sluice::topo {

// NVIDIA DGX A100 (640 GB configuration): 2x AMD EPYC 7742, 8x A100 SXM4,
// 4 PCIe gen4 switch complexes (2 per socket), each with 2 GPUs, 2 compute
// NICs (ConnectX-6 HDR 200 Gb/s) and 2 NVMe drives; one dual-port ConnectX-6
// storage NIC on socket 0. NIC local index = mlx5 number (mlx5_0..3 for GPUs
// 0-3, mlx5_4/5 storage, mlx5_6..9 for GPUs 4-7).
// PCIe structure: in each complex a top-level switch on a CPU root port with
// one downstream bridge per device, so GPU<->own NICs is PXB, as the real
// `nvidia-smi topo -m` shows (rapidsai/ucx-py#749: GPU0-mlx5_0/1 PXB; NCCL
// topology dump in NVIDIA/nccl#1505: GPU 07:00.0 and mlx5_0 0c:00.0 under
// sibling bridges of one Broadcom switch).
// One NUMA domain per socket (NPS1): a GPU to a NIC of the other complex of
// its socket is NODE here; the shipped NPS4 setting shows SYS there.
Result<Topology> dgx_a100();

// Azure ND40rs_v2: 2x Xeon Platinum 8168, 8x V100 SXM2 32 GB, one 100 Gb/s EDR
// InfiniBand NIC, ~3 TB local NVMe (> 3 GB/s read;
// docs/seeds.md#beeond-for-cosmoflow-on-azure), 672 GiB RAM. PCIe as the VM
// sees it (Azure/azhpc-images topology/ndv2-topo.xml): GPUs 0-3 and the NIC
// directly on socket 0's host bridge (PHB), GPUs 4-7 on socket 1 (SYS to the
// NIC).
Result<Topology> azure_nd40rs_v2();

// The Critical I/O GPU host (docs/seeds.md#gpu-rdma-recording-over-roce): one
// socket, one GPU and one dual-port 25 GbE RoCE NIC (mlx5_0, mlx5_1) whose two
// ports share a PCIe gen3 x8 link. The paper moves data by RDMA straight into
// GPU memory at line rate, which needs GPU and NIC under a common PCIe switch
// (NVIDIA GPUDirect RDMA documentation: best with a shared switch; through the
// CPU it is slow or unsupported), so both hang below one switch (PIX). GPU
// memory not stated: 0.
Result<Topology> critical_io_gpu_host();

// The Critical I/O StoreEngine recorder: the same NIC on gen3 x8, plus
// `nvme_count` gen3 x4 NVMe drives. The paper gives only network figures; the
// drive figures (3.2 GB/s read, 2.0 GB/s write, 3.84 TB each) are
// assumptions chosen so the drives do not limit its 6 GB/s, to be calibrated.
Result<Topology> critical_io_recorder(std::uint32_t nvme_count = 4);

// A DGX-2-like box: 2x Xeon Platinum 8168, 16 V100 32 GB, 8 EDR 100 Gb/s NICs,
// 8 NVMe drives (3.84 TB; 8 drives give ~25 GB/s,
// docs/seeds.md#nvmesh-remote-nvme). Per socket two root ports, each with a
// top switch and two leaf switches holding 2 GPUs + 1 NIC + 1 NVMe:
// GPU0-mlx5_0 PIX, -mlx5_1 PXB, -mlx5_2/3 NODE, -others SYS, as in the DGX-2
// `nvidia-smi topo -m` of NVIDIA/nccl-tests#78.
Result<Topology> dgx2_like();

// A generic machine. Devices of each kind are spread over the sockets in
// blocks (device i on socket i * sockets / count); each socket has
// `switches_per_socket` PCIe switches, each on its own root port, and a
// socket's devices are spread over its switches in blocks. So devices on one
// switch are PIX, on one socket NODE, across sockets SYS.
struct GenericMachine {
  std::uint32_t sockets = 1;
  std::uint32_t gpus = 1;
  std::uint32_t nics = 1;
  std::uint32_t nvmes = 0;
  std::uint32_t switches_per_socket = 1;
  int pcie_gen = 4;  // of every device link and switch uplink
  int gpu_lanes = 16;
  int nic_lanes = 16;
  int nvme_lanes = 4;
  double nic_port_rate_bytes_per_s = gbps_to_bytes_per_s(200);
  std::uint64_t gpu_memory_bytes = 40 * k_gib;
  double nvme_read_bytes_per_s = 7.0e9;
  double nvme_write_bytes_per_s = 3.8e9;
  std::uint64_t nvme_capacity_bytes = 3'840'000'000'000ULL;
  std::uint64_t memory_bytes_per_socket = 256 * k_gib;
  double memory_bytes_per_s = 204.8e9;
  double inter_socket_bytes_per_s = 16e9;
};
// Limits: at most k_generic_max_devices of each kind and k_generic_max_sockets.
inline constexpr std::uint32_t k_generic_max_devices = 256;
inline constexpr std::uint32_t k_generic_max_sockets = 16;
// PCIe switches per socket, PCIe generations 1..5, lanes per device.
inline constexpr std::uint32_t k_generic_max_switches_per_socket = 64;
inline constexpr int k_generic_max_pcie_gen = 5;
inline constexpr int k_generic_max_pcie_lanes = 32;

// Its fields, one description each (core/common/field_info.hpp), in the
// order the reference lists them (sl.machines.generic; scripts may give
// nic_gbps instead of nic_port_rate_bytes_per_s: scenarios/lua/spec_builders.cpp).
template <class V>
void fields(V& v, GenericMachine& c) {
  constexpr bool s = k_script_field;
  const double any = k_field_max_unbounded;
  v("sockets", c.sockets,
    count_of("sockets", 1, k_generic_max_sockets, "CPU sockets, each with its memory and PCIe root", s));
  v("gpus", c.gpus, count_of("GPUs", 0, k_generic_max_devices, "GPUs, spread over the sockets", s));
  v("nics", c.nics, count_of("NICs", 0, k_generic_max_devices, "network ports", s));
  v("nvmes", c.nvmes, count_of("drives", 0, k_generic_max_devices, "NVMe drives", s));
  v("switches_per_socket", c.switches_per_socket,
    count_of("switches", 1, k_generic_max_switches_per_socket,
             "PCIe switches under each socket; devices are dealt over them", s));
  v("pcie_gen", c.pcie_gen,
    count_of("generation", 1, k_generic_max_pcie_gen, "PCIe generation of every device link and switch uplink", s));
  v("gpu_lanes", c.gpu_lanes, count_of("lanes", 1, k_generic_max_pcie_lanes, "PCIe lanes of each GPU", s));
  v("nic_lanes", c.nic_lanes, count_of("lanes", 1, k_generic_max_pcie_lanes, "PCIe lanes of each NIC", s));
  v("nvme_lanes", c.nvme_lanes, count_of("lanes", 1, k_generic_max_pcie_lanes, "PCIe lanes of each NVMe drive", s));
  v("nic_port_rate_bytes_per_s", c.nic_port_rate_bytes_per_s, rate_in(0, any, "line rate of each NIC port", s));
  v("gpu_memory_bytes", c.gpu_memory_bytes, bytes_in(0, any, "memory of each GPU", s));
  v("nvme_read_bytes_per_s", c.nvme_read_bytes_per_s, rate_in(0, any, "read rate of each NVMe drive", s));
  v("nvme_write_bytes_per_s", c.nvme_write_bytes_per_s, rate_in(0, any, "write rate of each NVMe drive", s));
  v("nvme_capacity_bytes", c.nvme_capacity_bytes, bytes_in(0, any, "capacity of each NVMe drive", s));
  v("memory_bytes_per_socket", c.memory_bytes_per_socket, bytes_in(0, any, "host memory of each socket", s));
  v("memory_bytes_per_s", c.memory_bytes_per_s, rate_in(0, any, "host memory bandwidth of each socket", s));
  v("inter_socket_bytes_per_s", c.inter_socket_bytes_per_s,
    rate_in(0, any, "link between two sockets (UPI / Infinity Fabric)", s));
}
Result<Topology> generic_machine(const GenericMachine& spec);

}  // namespace sluice::topo
