// Import of a machine from hwloc XML (as `lstopo --of xml` or
// hwloc_topology_export_xml writes it), parsed by libhwloc itself.
//
// Contract
// - Input: the XML text (hwloc 1.x or 2.x format). Nothing is read from the
//   running machine: the XML is the only source (hwloc_topology_set_xmlbuffer
//   with I/O objects kept by hwloc_topology_set_io_types_filter(KEEP_ALL)).
// - Output: a validated single-machine core Topology (node 0):
//   - one cpu_socket per hwloc Package (one for the machine when there is
//     none), with host memory = the sum of its NUMA nodes' local memory;
//     sockets are joined pairwise by inter_socket links;
//   - one pcie_root_port per host bridge, on the socket of its locality; the
//     root-port bridges directly below a host bridge belong to it;
//   - PCI-to-PCI bridges alternate, as in a PCIe tree, between a switch's
//     upstream port (a new pcie_switch) and its downstream ports (part of
//     that switch), the way NCCL folds them (src/graph/xml.cc keeps one node
//     per switch);
//   - PCI devices by class: 0x0302 / 0x0300 with vendor NVIDIA (0x10de) ->
//     gpu; 0x0207 / 0x0200 -> nic; 0x0108 -> nvme (the classes nvidia-fs
//     probes, nvfs-pci.c); other devices are left out. Several NIC functions
//     of one PCI device (a multi-port adapter) share one link through an
//     adapter vertex (pcie_switch with pcie_bridge == false);
//   - names: NICs take their OpenFabrics device name (mlx5_0) or network
//     interface name when hwloc has one, else nic<i>; GPUs gpu<i>, NVMe
//     nvme<i>, in hwloc's (PCI bus) order;
//   - link bandwidth = hwloc's PCI link speed (GB/s after line encoding) x
//     k_pcie_protocol_efficiency; options.default_pcie_bytes_per_s where
//     hwloc has none. GPU memory from a CUDA OS device's
//     CUDAGlobalMemorySize, NVMe capacity from its block device's Size.
//     Port rates, drive speeds and memory bandwidth are not in hwloc XML and
//     come from the options.
// - Untrusted XML is loaded by libhwloc in a loader process (HwlocLoader,
//   hwloc_loader.hpp: a crash, abort, hang or memory blow-up of libhwloc is an
//   error here); this process then loads only libhwloc's checked re-export
//   and walks it.
// - Errors: malformed XML (hwloc refuses it, crashes or overruns the loader's
//   time or memory bound on it), input above k_max_hwloc_xml_bytes, indices
//   or nesting above the loader's checks, packages nested in packages or
//   more than k_max_hwloc_packages of them, or a machine that fails topology
//   validation.
// - Blocking: CPU work in the loader process and here, at most about
//   k_hwloc_load_timeout_ms in the loader. Thread-safe: the overload without
//   a loader uses one loader process for the whole process and serialises
//   imports; the one with a loader is as thread-safe as that loader (one
//   caller at a time).
#pragma once

#include <cstdint>
#include <string_view>

#include "core/common/status.hpp"
#include "core/common/units.hpp"
#include "core/topology/hardware_figures.hpp"
#include "core/topology/topology.hpp"
#include "hw_backends/hwloc/hwloc_loader.hpp"

namespace sluice::hw {

// Most packages (sockets) a machine may have: sockets are linked pairwise, and
// the largest single-image machines have 32 (HPE Superdome Flex).
inline constexpr unsigned k_max_hwloc_packages = 64;

struct HwlocImportOptions {
  double default_pcie_bytes_per_s = topo::pcie_bytes_per_s(4, 16);
  double nic_port_rate_bytes_per_s = gbps_to_bytes_per_s(200);
  double nvme_read_bytes_per_s = 7.0e9;
  double nvme_write_bytes_per_s = 3.8e9;
  double memory_bytes_per_s = 204.8e9;
  double inter_socket_bytes_per_s = topo::k_amd_zen2_inter_socket_bytes_per_s;
};

Result<topo::Topology> import_hwloc_xml(std::string_view xml, const HwlocImportOptions& options = {});
Result<topo::Topology> import_hwloc_xml(std::string_view xml, HwlocLoader& loader,
                                        const HwlocImportOptions& options = {});

}  // namespace sluice::hw
