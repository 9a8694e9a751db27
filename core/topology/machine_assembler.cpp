#include "core/topology/machine_assembler.hpp"

#include <utility>

#include "core/topology/hardware_figures.hpp"

namespace sluice::topo {

MachineAssembler::MachineAssembler(std::string machine_name) { topology_.set_machine_name(0, std::move(machine_name)); }

void MachineAssembler::fail(Status status) {
  if (first_error_.ok()) first_error_ = std::move(status);
}

VertexId MachineAssembler::add(Vertex vertex, VertexId parent, double link_bytes_per_s, TimeNs latency_ns) {
  if (failed()) return k_no_vertex;
  if (vertex.name.empty()) {
    std::string stem;
    switch (vertex.kind) {
      case VertexKind::pcie_root_port: stem = "rp"; break;
      case VertexKind::pcie_switch: stem = "sw"; break;
      default: stem = std::string(to_string(vertex.kind)); break;
    }
    vertex.name = stem + std::to_string(topology_.count(0, vertex.kind));
  }
  if (!topology_.contains(parent)) {
    fail(error(StatusCode::not_found, "machine: parent of '" + vertex.name + "' does not exist"));
    return k_no_vertex;
  }
  vertex.numa = topology_.vertex(parent).numa;
  auto id = topology_.add_vertex(std::move(vertex));
  if (!id.ok()) {
    fail(id.status());
    return k_no_vertex;
  }
  add_pcie_link(*id, parent, link_bytes_per_s, latency_ns);
  return failed() ? k_no_vertex : *id;
}

void MachineAssembler::add_pcie_link(VertexId child, VertexId parent, double bytes_per_s, TimeNs latency_ns) {
  if (failed()) return;
  auto e = topology_.add_link(child, parent, LinkSpec::symmetric(LinkClass::pcie, bytes_per_s, latency_ns));
  if (!e.ok()) fail(e.status());
}

VertexId MachineAssembler::add_socket(std::uint64_t memory_bytes, double memory_bytes_per_s) {
  if (failed()) return k_no_vertex;
  const std::uint32_t index = topology_.count(0, VertexKind::cpu_socket);
  Vertex socket{.kind = VertexKind::cpu_socket,
                .name = "socket" + std::to_string(index),
                .node = 0,
                .index = index,
                .numa = index};
  auto s = topology_.add_vertex(std::move(socket));
  if (!s.ok()) {
    fail(s.status());
    return k_no_vertex;
  }
  Vertex memory{
      .kind = VertexKind::host_memory, .name = "mem" + std::to_string(index), .node = 0, .index = index, .numa = index};
  memory.host_memory_bytes = memory_bytes;
  auto m = topology_.add_vertex(std::move(memory));
  if (!m.ok()) {
    fail(m.status());
    return k_no_vertex;
  }
  auto e = topology_.add_link(*s, *m, LinkSpec::symmetric(LinkClass::memory, memory_bytes_per_s, k_memory_latency_ns));
  if (!e.ok()) fail(e.status());
  return failed() ? k_no_vertex : *s;
}

void MachineAssembler::link_sockets(VertexId a, VertexId b, double bytes_per_s, TimeNs latency_ns) {
  if (failed()) return;
  auto e = topology_.add_link(a, b, LinkSpec::symmetric(LinkClass::inter_socket, bytes_per_s, latency_ns));
  if (!e.ok()) fail(e.status());
}

VertexId MachineAssembler::add_root_port(VertexId socket, double bytes_per_s, std::string name) {
  return add(Vertex{.kind = VertexKind::pcie_root_port, .name = std::move(name)}, socket, bytes_per_s,
             k_root_complex_latency_ns);
}

VertexId MachineAssembler::add_switch(VertexId parent, double uplink_bytes_per_s, bool bridge, std::string name) {
  Vertex v{.kind = VertexKind::pcie_switch, .name = std::move(name)};
  v.pcie_bridge = bridge;
  return add(std::move(v), parent, uplink_bytes_per_s, bridge ? k_pcie_hop_latency_ns : 0);
}

VertexId MachineAssembler::add_gpu(VertexId parent, double link_bytes_per_s, std::uint64_t memory_bytes,
                                   std::string name) {
  Vertex v{.kind = VertexKind::gpu, .name = std::move(name)};
  v.gpu_memory_bytes = memory_bytes;
  return add(std::move(v), parent, link_bytes_per_s, k_pcie_hop_latency_ns);
}

VertexId MachineAssembler::add_nic(VertexId parent, double link_bytes_per_s, double port_rate_bytes_per_s,
                                   std::string name) {
  Vertex v{.kind = VertexKind::nic, .name = std::move(name)};
  v.nic_port_rate_bytes_per_s = port_rate_bytes_per_s;
  return add(std::move(v), parent, link_bytes_per_s, k_pcie_hop_latency_ns);
}

VertexId MachineAssembler::add_nvme(VertexId parent, double link_bytes_per_s, double read_bytes_per_s,
                                    double write_bytes_per_s, std::uint64_t capacity_bytes, std::string name) {
  Vertex v{.kind = VertexKind::nvme, .name = std::move(name)};
  v.nvme_read_bytes_per_s = read_bytes_per_s;
  v.nvme_write_bytes_per_s = write_bytes_per_s;
  v.nvme_capacity_bytes = capacity_bytes;
  return add(std::move(v), parent, link_bytes_per_s, k_pcie_hop_latency_ns);
}

Result<Topology> MachineAssembler::finish() {
  if (failed()) return first_error_;
  if (auto s = topology_.validate(); !s.ok()) return s;
  return std::move(topology_);
}

}  // namespace sluice::topo
