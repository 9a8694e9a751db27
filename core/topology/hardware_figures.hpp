// Published figures the machine builders use, each with its source.
//
// Bandwidths are per direction, in bytes/s (decimal). Latencies are one-way
// modelling defaults; calibration (analysis/) replaces them with measured
// values, so they only need the right order of magnitude.
#pragma once

#include <cstdint>

#include "core/common/units.hpp"

namespace sluice::topo {

// ---- PCIe -------------------------------------------------------------------
// Raw rate per lane after line encoding (PCI-SIG base specifications):
// gen1 2.5 GT/s and gen2 5 GT/s with 8b/10b; gen3 8 GT/s, gen4 16 GT/s and
// gen5 32 GT/s with 128b/130b. Gen3 x16 = 15.75 GB/s, gen4 x16 = 31.5 GB/s.
//
// Effective = raw x k_pcie_protocol_efficiency. TLP headers, sequence numbers,
// LCRC and framing cost ~24 bytes per 256-byte payload (0.91), and DLLP
// acknowledgements and flow-control updates a few percent more (Xilinx WP350,
// "Understanding Performance of PCI Express Systems"). Measured references:
// pinned host<->GPU copies over gen3 x16 reach ~12-13 GB/s (NCCL models gen3
// x16 as 12 GB/s, src/graph/topo.h PCI_BW); the H200 of
// docs/seeds.md#machines-available-to-the-project (gen5 x16) reached ~55 GB/s =
// 0.87 of raw; the Critical I/O recorder moved 6.06 GB/s through gen3 x8 (raw
// 7.88 GB/s) while also limited by two 25 GbE ports.
inline constexpr double k_pcie_protocol_efficiency = 0.85;

constexpr double pcie_raw_bytes_per_s(int gen, int lanes) {
  double per_lane_bits = 0;
  switch (gen) {
    case 1: per_lane_bits = 2.5e9 * 8.0 / 10.0; break;
    case 2: per_lane_bits = 5.0e9 * 8.0 / 10.0; break;
    case 3: per_lane_bits = 8.0e9 * 128.0 / 130.0; break;
    case 4: per_lane_bits = 16.0e9 * 128.0 / 130.0; break;
    case 5: per_lane_bits = 32.0e9 * 128.0 / 130.0; break;
    default: return 0;  // unknown generation: an add_link with it fails on zero bandwidth
  }
  if (lanes <= 0 || lanes > 32) return 0;
  return per_lane_bits * lanes / 8.0;
}

constexpr double pcie_bytes_per_s(int gen, int lanes) {
  return pcie_raw_bytes_per_s(gen, lanes) * k_pcie_protocol_efficiency;
}

// Port-to-port latency of a PCIe switch: ~100 ns for the PLX/Broadcom PEX
// families used in DGX machines (Broadcom PEX88000 product brief; PLX PEX8747
// "100 ns"). Charged on every PCIe link.
inline constexpr TimeNs k_pcie_hop_latency_ns = 100;
// Crossing the root complex into the socket (PCIe to the memory controller).
inline constexpr TimeNs k_root_complex_latency_ns = 250;

// ---- memory and sockets -------------------------------------------------------
// Peak DRAM bandwidth per socket = channels x MT/s x 8 bytes.
// AMD EPYC 7742 (DGX A100): 8 x DDR4-3200 = 204.8 GB/s (AMD product page).
inline constexpr double k_epyc_7742_memory_bytes_per_s = 8 * 3200e6 * 8;
// Intel Xeon Platinum 8168 (ND40rs_v2, DGX-2): 6 x DDR4-2666 = 128 GB/s (Intel ARK).
inline constexpr double k_xeon_8168_memory_bytes_per_s = 6 * 2666e6 * 8;
// Loaded DRAM access latency, ~90 ns on both.
inline constexpr TimeNs k_memory_latency_ns = 90;
// PCIe traffic that crosses sockets, as NCCL models it (src/graph/topo.h):
// AMD Zen 1/2 (AMD_ZEN12_BW / AMD_BW) 16 GB/s, Intel Skylake (SKL_QPI_BW) 10 GB/s.
inline constexpr double k_amd_zen2_inter_socket_bytes_per_s = 16e9;
inline constexpr double k_intel_skylake_inter_socket_bytes_per_s = 10e9;
// A remote-socket access adds ~100 ns over a local one (Intel MLC / AMD figures, 60-140 ns).
inline constexpr TimeNs k_inter_socket_latency_ns = 100;

// ---- NICs and the network -----------------------------------------------------
// InfiniBand data rates (4x links): EDR 100 Gb/s, HDR 200 Gb/s; Ethernet 25 GbE.
inline constexpr double k_hdr_bytes_per_s = gbps_to_bytes_per_s(200);
inline constexpr double k_edr_bytes_per_s = gbps_to_bytes_per_s(100);
inline constexpr double k_25gbe_bytes_per_s = gbps_to_bytes_per_s(25);
// One network link (NIC or switch port + cable): NVIDIA Quantum HDR switches
// quote 130 ns port-to-port, ConnectX adapters ~0.6 us end to end; we charge
// 300 ns per network link so a one-switch path costs ~0.6 us before calibration.
inline constexpr TimeNs k_network_link_latency_ns = 300;
// The part of a network link's port rate that carries payload: 0.97, the LV08
// model's bandwidth factor (Velho, Schnorr, Casanova, Legrand, "On the Validity
// of Flow-level TCP Network Models for Grid and Cloud Simulations", ACM TOMACS
// 23(4), 2013), which is also TCP's payload share of a 1500-byte Ethernet
// frame (1448/1500 = 0.965). The simulator's default network bandwidth factor
// (sim/sim_profile.hpp) and the analytic bound's NIC and fabric capacities
// (scenarios/runner/point_bound.cpp) both use it.
inline constexpr double k_network_payload_share = 0.97;

// ---- GPUs ----------------------------------------------------------------------
inline constexpr std::uint64_t k_a100_40gb_memory_bytes = 40 * k_gib;  // NVIDIA A100 datasheet (40 GB HBM2)
inline constexpr std::uint64_t k_v100_32gb_memory_bytes = 32 * k_gib;  // NVIDIA V100 datasheet (32 GB HBM2)

}  // namespace sluice::topo
