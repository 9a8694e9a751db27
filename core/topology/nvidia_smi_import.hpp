// Import of the text printed by `nvidia-smi topo -m` (a pure text parser).
//
// Input: the matrix as nvidia-smi prints it: a header row of device columns
// (GPU<n>, NIC<n> or mlx5_<n> style names, then "CPU Affinity", "NUMA
// Affinity" and, on newer drivers, "GPU NUMA ID"), one row per device whose
// cells are X, PIX, PXB, PHB, NODE, SYS (or SOC) or NV<n>, then optionally the
// "Legend:" block and the "NIC Legend:" block mapping NIC<n> to mlx5_<n>.
//
// Output: a single machine with one gpu per GPU column (gpu<n>), one nic per
// other column (named from the NIC legend when present, NIC index = column
// order), and a PCIe tree that reproduces every PCIe cell of the matrix:
// devices related by NODE or closer share a socket, by PHB or closer a root
// port, by PXB or closer a top switch, by PIX a leaf switch (or the top switch
// itself when the whole complex is PIX). Sockets are numbered by the GPUs'
// NUMA affinity where given. NV<n> cells say nothing about PCIe and are not
// modelled. Bandwidths, which the matrix does not show, come from the options.
//
// Errors name the line (1-based) and the column (1-based cell number, and the
// column's device): unknown cell, row length, rows out of order, asymmetric
// matrix, X off the diagonal, NV between non-GPUs, or cells no PCIe tree can
// reproduce together (e.g. A PIX B, B PIX C but A SYS C).
#pragma once

#include <cstdint>
#include <string_view>

#include "core/common/status.hpp"
#include "core/common/units.hpp"
#include "core/topology/topology.hpp"

namespace sluice::topo {

// Limits.
inline constexpr std::size_t k_max_topo_text_bytes = 1 << 20;  // 1 MiB of text
inline constexpr std::size_t k_max_topo_devices = 256;         // matrix columns

struct NvidiaSmiImportOptions {
  int pcie_gen = 4;  // every PCIe link is gen x16, NVMe-free
  double nic_port_rate_bytes_per_s = gbps_to_bytes_per_s(200);
  std::uint64_t gpu_memory_bytes = 0;
  std::uint64_t memory_bytes_per_socket = 0;
  double memory_bytes_per_s = 204.8e9;
  double inter_socket_bytes_per_s = 16e9;
};

Result<Topology> import_nvidia_smi_topo(std::string_view text, const NvidiaSmiImportOptions& options = {});

}  // namespace sluice::topo
