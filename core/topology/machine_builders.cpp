#include "core/topology/machine_builders.hpp"

#include <string>
#include <vector>

#include "core/topology/hardware_figures.hpp"
#include "core/topology/machine_assembler.hpp"

namespace sluice::topo {
namespace {

// 3.84 TB U.2 NVMe as shipped in DGX A100: Samsung PM1733 class, gen4 x4,
// datasheet sequential 7.0 GB/s read, 3.8 GB/s write.
constexpr double k_gen4_nvme_read_bytes_per_s = 7.0e9;
constexpr double k_gen4_nvme_write_bytes_per_s = 3.8e9;
constexpr std::uint64_t k_nvme_3_84_tb_bytes = 3'840'000'000'000ULL;
// Gen3 U.2 NVMe of DGX-2 class: docs/seeds.md#nvmesh-remote-nvme gives
// ~25 GB/s for 8 drives (3.125 GB/s each); the write figure is an assumption
// (calibrate).
constexpr double k_gen3_nvme_read_bytes_per_s = 25e9 / 8;
constexpr double k_gen3_nvme_write_bytes_per_s = 2.0e9;

}  // namespace

Result<Topology> dgx_a100() {
  MachineAssembler m("dgx_a100");
  const double x16 = pcie_bytes_per_s(4, 16);
  const double x4 = pcie_bytes_per_s(4, 4);
  // DGX A100 320 GB: 1 TB of DDR4 (512 GiB per socket), 4x 3.84 TB NVMe (DGX A100 user guide).
  const VertexId s0 = m.add_socket(512 * k_gib, k_epyc_7742_memory_bytes_per_s);
  const VertexId s1 = m.add_socket(512 * k_gib, k_epyc_7742_memory_bytes_per_s);
  m.link_sockets(s0, s1, k_amd_zen2_inter_socket_bytes_per_s, k_inter_socket_latency_ns);

  std::uint32_t gpu = 0, nic = 0;
  const auto complex = [&](std::uint32_t c, VertexId socket) {
    const std::string sw_name = "pcie_sw" + std::to_string(c);
    const VertexId rp = m.add_root_port(socket, x16, "rp" + std::to_string(c));
    const VertexId top = m.add_switch(rp, x16, true, sw_name);
    for (int i = 0; i < 2; ++i, ++gpu) {
      const std::string name = "gpu" + std::to_string(gpu);
      m.add_gpu(m.add_switch(top, x16, true, sw_name + "." + name), x16, k_a100_40gb_memory_bytes, name);
    }
    for (int i = 0; i < 2; ++i, ++nic) {
      const std::string name = "mlx5_" + std::to_string(nic);
      m.add_nic(m.add_switch(top, x16, true, sw_name + "." + name), x16, k_hdr_bytes_per_s, name);
    }
    const std::string nvme = "nvme" + std::to_string(c);
    m.add_nvme(m.add_switch(top, x4, true, sw_name + "." + nvme), x4, k_gen4_nvme_read_bytes_per_s,
               k_gen4_nvme_write_bytes_per_s, k_nvme_3_84_tb_bytes, nvme);
  };
  complex(0, s0);
  complex(1, s0);
  // The dual-port ConnectX-6 storage NIC (mlx5_4, mlx5_5) on its own root port of socket 0
  // (NVIDIA/nccl#1505: 0000:61:00.0 directly below NUMA 0); both ports share its x16 link.
  const VertexId storage_rp = m.add_root_port(s0, x16, "rp_storage");
  const VertexId adapter = m.add_switch(storage_rp, x16, false, "cx6_storage");
  for (int i = 0; i < 2; ++i, ++nic) m.add_nic(adapter, x16, k_hdr_bytes_per_s, "mlx5_" + std::to_string(nic));
  complex(2, s1);
  complex(3, s1);
  return m.finish();
}

Result<Topology> azure_nd40rs_v2() {
  MachineAssembler m("azure_nd40rs_v2");
  const double x16 = pcie_bytes_per_s(3, 16);
  // 672 GiB RAM (Azure ND40rs_v2 size table), split over the two sockets.
  const VertexId s0 = m.add_socket(336 * k_gib, k_xeon_8168_memory_bytes_per_s);
  const VertexId s1 = m.add_socket(336 * k_gib, k_xeon_8168_memory_bytes_per_s);
  m.link_sockets(s0, s1, k_intel_skylake_inter_socket_bytes_per_s, k_inter_socket_latency_ns);
  // One host bridge per socket as the VM sees it; its link into the socket
  // carries the aggregate of the x16 devices below it.
  const VertexId rp0 = m.add_root_port(s0, 5 * x16, "rp0");
  const VertexId rp1 = m.add_root_port(s1, 4 * x16, "rp1");
  for (int g = 0; g < 8; ++g) m.add_gpu(g < 4 ? rp0 : rp1, x16, k_v100_32gb_memory_bytes, "gpu" + std::to_string(g));
  m.add_nic(rp0, x16, k_edr_bytes_per_s, "mlx5_0");
  // Local NVMe: 2,948 GiB temporary disk (Azure size table), > 3 GB/s read
  // (docs/seeds.md#beeond-for-cosmoflow-on-azure); the write figure is an
  // assumption (calibrate).
  m.add_nvme(rp0, pcie_bytes_per_s(3, 4), 3.0e9, 2.0e9, 2948 * k_gib, "nvme0");
  return m.finish();
}

namespace {

// The dual-port 25 GbE RoCE NIC of the Critical I/O paper: two ports behind one gen3 x8 link.
void add_dual_port_25gbe(MachineAssembler& m, VertexId parent) {
  const double x8 = pcie_bytes_per_s(3, 8);
  const VertexId adapter = m.add_switch(parent, x8, false, "cx_25gbe");
  m.add_nic(adapter, x8, k_25gbe_bytes_per_s, "mlx5_0");
  m.add_nic(adapter, x8, k_25gbe_bytes_per_s, "mlx5_1");
}

}  // namespace

Result<Topology> critical_io_gpu_host() {
  MachineAssembler m("critical_io_gpu_host");
  const double x16 = pcie_bytes_per_s(3, 16);
  // The paper does not describe the CPU; memory size 0 (not stated), bandwidth an
  // assumed 6-channel DDR4-2666 server socket.
  const VertexId s0 = m.add_socket(0, k_xeon_8168_memory_bytes_per_s);
  const VertexId rp = m.add_root_port(s0, x16, "rp0");
  const VertexId sw = m.add_switch(rp, x16, true, "pcie_sw0");
  m.add_gpu(sw, x16, 0, "gpu0");
  add_dual_port_25gbe(m, sw);
  return m.finish();
}

Result<Topology> critical_io_recorder(std::uint32_t nvme_count) {
  if (nvme_count == 0 || nvme_count > k_generic_max_devices) {
    return error(StatusCode::invalid_argument, "critical_io_recorder: nvme_count " + std::to_string(nvme_count) +
                                                   " must be in [1, k_generic_max_devices]");
  }
  MachineAssembler m("critical_io_recorder");
  const double x16 = pcie_bytes_per_s(3, 16);
  const VertexId s0 = m.add_socket(0, k_xeon_8168_memory_bytes_per_s);
  add_dual_port_25gbe(m, m.add_root_port(s0, pcie_bytes_per_s(3, 8), "rp0"));
  const VertexId sw = m.add_switch(m.add_root_port(s0, x16, "rp1"), x16, true, "pcie_sw0");
  for (std::uint32_t i = 0; i < nvme_count; ++i) {
    m.add_nvme(sw, pcie_bytes_per_s(3, 4), 3.2e9, 2.0e9, k_nvme_3_84_tb_bytes, "nvme" + std::to_string(i));
  }
  return m.finish();
}

Result<Topology> dgx2_like() {
  MachineAssembler m("dgx2_like");
  const double x16 = pcie_bytes_per_s(3, 16);
  const double x4 = pcie_bytes_per_s(3, 4);
  // DGX-2: 1.5 TB RAM (DGX-2 datasheet), split over the two sockets.
  const VertexId s0 = m.add_socket(768 * k_gib, k_xeon_8168_memory_bytes_per_s);
  const VertexId s1 = m.add_socket(768 * k_gib, k_xeon_8168_memory_bytes_per_s);
  m.link_sockets(s0, s1, k_intel_skylake_inter_socket_bytes_per_s, k_inter_socket_latency_ns);
  std::uint32_t gpu = 0, nic = 0;
  for (std::uint32_t quarter = 0; quarter < 4; ++quarter) {
    const VertexId rp = m.add_root_port(quarter < 2 ? s0 : s1, x16, "rp" + std::to_string(quarter));
    const VertexId top = m.add_switch(rp, x16, true, "pcie_sw" + std::to_string(quarter));
    for (std::uint32_t leaf = 0; leaf < 2; ++leaf) {
      const VertexId sw =
          m.add_switch(top, x16, true, "pcie_sw" + std::to_string(quarter) + "." + std::to_string(leaf));
      for (int i = 0; i < 2; ++i, ++gpu) m.add_gpu(sw, x16, k_v100_32gb_memory_bytes, "gpu" + std::to_string(gpu));
      m.add_nic(sw, x16, k_edr_bytes_per_s, "mlx5_" + std::to_string(nic));
      m.add_nvme(sw, x4, k_gen3_nvme_read_bytes_per_s, k_gen3_nvme_write_bytes_per_s, k_nvme_3_84_tb_bytes,
                 "nvme" + std::to_string(nic));
      ++nic;
    }
  }
  return m.finish();
}

Result<Topology> generic_machine(const GenericMachine& spec) {
  if (spec.sockets == 0 || spec.sockets > k_generic_max_sockets) {
    return error(StatusCode::invalid_argument,
                 "generic_machine: sockets " + std::to_string(spec.sockets) + " must be in [1, k_generic_max_sockets]");
  }
  if (spec.switches_per_socket == 0 || spec.switches_per_socket > k_generic_max_sockets) {
    return error(StatusCode::invalid_argument, "generic_machine: switches_per_socket " +
                                                   std::to_string(spec.switches_per_socket) + " must be in [1, 16]");
  }
  for (auto [what, n] : {std::pair{"gpus", spec.gpus}, {"nics", spec.nics}, {"nvmes", spec.nvmes}}) {
    if (n > k_generic_max_devices) {
      return error(StatusCode::invalid_argument, std::string("generic_machine: ") + what + " " + std::to_string(n) +
                                                     " exceeds k_generic_max_devices");
    }
  }
  MachineAssembler m("generic");
  const double uplink = pcie_bytes_per_s(spec.pcie_gen, 16);
  std::vector<VertexId> sockets;
  std::vector<std::vector<VertexId>> switches(spec.sockets);
  for (std::uint32_t s = 0; s < spec.sockets; ++s) {
    sockets.push_back(m.add_socket(spec.memory_bytes_per_socket, spec.memory_bytes_per_s));
    for (std::uint32_t k = 0; k < spec.switches_per_socket; ++k) {
      switches[s].push_back(m.add_switch(m.add_root_port(sockets[s], uplink), uplink));
    }
  }
  for (std::uint32_t a = 0; a < spec.sockets; ++a) {
    for (std::uint32_t b = a + 1; b < spec.sockets; ++b) {
      m.link_sockets(sockets[a], sockets[b], spec.inter_socket_bytes_per_s, k_inter_socket_latency_ns);
    }
  }
  // Device i of n goes to socket i*S/n; the j-th of the m devices on a socket to switch j*K/m.
  const auto place = [&](std::uint32_t n, const auto& add_one) {
    std::vector<std::uint32_t> on_socket(spec.sockets, 0), seen(spec.sockets, 0);
    for (std::uint32_t i = 0; i < n; ++i) ++on_socket[static_cast<std::uint64_t>(i) * spec.sockets / n];
    for (std::uint32_t i = 0; i < n; ++i) {
      const auto s = static_cast<std::uint32_t>(static_cast<std::uint64_t>(i) * spec.sockets / n);
      const auto k =
          static_cast<std::uint32_t>(static_cast<std::uint64_t>(seen[s]++) * spec.switches_per_socket / on_socket[s]);
      add_one(switches[s][k]);
    }
  };
  place(spec.gpus,
        [&](VertexId sw) { m.add_gpu(sw, pcie_bytes_per_s(spec.pcie_gen, spec.gpu_lanes), spec.gpu_memory_bytes); });
  place(spec.nics, [&](VertexId sw) {
    m.add_nic(sw, pcie_bytes_per_s(spec.pcie_gen, spec.nic_lanes), spec.nic_port_rate_bytes_per_s);
  });
  place(spec.nvmes, [&](VertexId sw) {
    m.add_nvme(sw, pcie_bytes_per_s(spec.pcie_gen, spec.nvme_lanes), spec.nvme_read_bytes_per_s,
               spec.nvme_write_bytes_per_s, spec.nvme_capacity_bytes);
  });
  return m.finish();
}

}  // namespace sluice::topo
