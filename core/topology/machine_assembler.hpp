// A small helper that builds one machine (node 0) top-down: sockets with
// their memory, root ports, switches and devices. Used by the machine
// builders and both importers.
//
// Contract: every add_* returns the new vertex id, or k_no_vertex once any
// earlier step failed; the first error is kept and returned by finish(),
// which otherwise validates the machine and hands it over. A device's NUMA
// node is its parent's. Link latencies follow hardware_figures.hpp
// (k_pcie_hop_latency_ns per PCIe link, k_root_complex_latency_ns root port
// <-> socket, k_memory_latency_ns socket <-> memory). Default names:
// socket<i>, mem<i>, rp<i>, sw<i>, gpu<i>, nic<i>, nvme<i> with per-kind
// counters; pass a name to override.
#pragma once

#include <cstdint>
#include <string>

#include "core/common/status.hpp"
#include "core/topology/topology.hpp"

namespace sluice::topo {

class MachineAssembler {
 public:
  explicit MachineAssembler(std::string machine_name);

  // A socket (NUMA domain) with its host memory (memory link of that bandwidth).
  VertexId add_socket(std::uint64_t memory_bytes, double memory_bytes_per_s);
  // The SMP interconnect between two sockets.
  void link_sockets(VertexId a, VertexId b, double bytes_per_s, TimeNs latency_ns);
  // A PCIe root port / host bridge of `socket`; `bytes_per_s` is its link into the socket.
  VertexId add_root_port(VertexId socket, double bytes_per_s, std::string name = {});
  // A PCIe switch below `parent` (root port or switch). bridge == false makes it
  // the function split of a multi-port adapter (see topology.hpp).
  VertexId add_switch(VertexId parent, double uplink_bytes_per_s, bool bridge = true, std::string name = {});
  VertexId add_gpu(VertexId parent, double link_bytes_per_s, std::uint64_t memory_bytes, std::string name = {});
  VertexId add_nic(VertexId parent, double link_bytes_per_s, double port_rate_bytes_per_s, std::string name = {});
  VertexId add_nvme(VertexId parent, double link_bytes_per_s, double read_bytes_per_s, double write_bytes_per_s,
                    std::uint64_t capacity_bytes, std::string name = {});
  // A PCIe link with an explicit latency (for importers that know better).
  void add_pcie_link(VertexId child, VertexId parent, double bytes_per_s, TimeNs latency_ns);

  const Topology& topology() const { return topology_; }
  const Status& first_error() const { return first_error_; }
  // The validated machine, or the first error.
  Result<Topology> finish();

 private:
  VertexId add(Vertex vertex, VertexId parent, double link_bytes_per_s, TimeNs latency_ns);
  bool failed() const { return !first_error_.ok(); }
  void fail(Status status);

  Topology topology_;
  Status first_error_;
};

}  // namespace sluice::topo
