#include "core/topology/topology_text.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "core/common/byte_size.hpp"
#include "core/topology/path_class.hpp"

namespace sluice::topo {
namespace {

std::string fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

// The vertex's name without the "node<N>/" prefix of a cluster.
std::string short_name(const Vertex& v) {
  const auto slash = v.name.find('/');
  return slash == std::string::npos ? v.name : v.name.substr(slash + 1);
}

std::string figures(const Vertex& v) {
  switch (v.kind) {
    case VertexKind::gpu:
      return v.gpu_memory_bytes == 0
                 ? std::string("memory n/a")
                 : format_size((v.gpu_memory_bytes + k_gib / 2) / k_gib * k_gib, SizeSpelling::spaced);  // nearest GiB
    case VertexKind::nic: return fixed(v.nic_port_rate_bytes_per_s * 8 / 1e9, 0) + " Gb/s";
    case VertexKind::nvme:
      return fixed(v.nvme_read_bytes_per_s / 1e9, 2) + "/" + fixed(v.nvme_write_bytes_per_s / 1e9, 2) + " GB/s r/w, " +
             fixed(static_cast<double>(v.nvme_capacity_bytes) / 1e12, 2) + " TB";
    default: return {};
  }
}

}  // namespace

Result<std::string> to_text(const Topology& topology, NodeId node) {
  if (node >= topology.node_count() || topology.count(node, VertexKind::cpu_socket) == 0) {
    return error(StatusCode::not_found, "to_text: no machine at node " + std::to_string(node));
  }
  std::vector<VertexId> devices;
  for (VertexKind kind : {VertexKind::gpu, VertexKind::nic, VertexKind::nvme}) {
    for (std::uint32_t i = 0; i < topology.count(node, kind); ++i) devices.push_back(*topology.device(node, kind, i));
  }
  std::size_t width = 6;
  for (VertexId d : devices) width = std::max(width, short_name(topology.vertex(d)).size() + 2);

  std::string out = "machine " +
                    (topology.machine_name(node).empty() ? std::string("?") : topology.machine_name(node)) + " (node " +
                    std::to_string(node) + "): " + std::to_string(topology.count(node, VertexKind::cpu_socket)) +
                    " sockets, " + std::to_string(topology.count(node, VertexKind::gpu)) + " GPUs, " +
                    std::to_string(topology.count(node, VertexKind::nic)) + " NICs, " +
                    std::to_string(topology.count(node, VertexKind::nvme)) + " NVMe\n\ndevices:\n";
  for (VertexId d : devices) {
    const Vertex& v = topology.vertex(d);
    std::string pcie;
    for (EdgeId e : topology.links_of(d)) {
      if (topology.link(e).spec.link_class == LinkClass::pcie)
        pcie = "PCIe " + fixed(topology.bandwidth_from(e, d) / 1e9, 1) + " GB/s";
    }
    out += "  " + pad(short_name(v), width) + pad(std::string(to_string(v.kind)), 6) + "numa " +
           pad(std::to_string(v.numa), 4) + pad(figures(v), 36) + pcie + "\n";
  }

  out += "\n" + std::string(width, ' ');
  for (VertexId d : devices) out += pad(short_name(topology.vertex(d)), width);
  out += "NUMA\n";
  for (VertexId r : devices) {
    out += pad(short_name(topology.vertex(r)), width);
    for (VertexId c : devices) {
      auto pc = path_class(topology, r, c);
      if (!pc.ok()) return pc.status();
      out += pad(std::string(to_string(*pc)), width);
    }
    out += std::to_string(topology.vertex(r).numa) + "\n";
  }
  out +=
      "\nLegend:\n"
      "  X    = Self\n"
      "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n"
      "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n"
      "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
      "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n"
      "  PIX  = Connection traversing at most a single PCIe bridge\n";
  return out;
}

}  // namespace sluice::topo
