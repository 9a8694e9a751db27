#include "core/sched/data_path.hpp"

namespace sluice::sched {

using topo::PathClass;
using topo::VertexKind;

std::string_view to_string(DataPath path) {
  switch (path) {
    case DataPath::direct: return "direct";
    case DataPath::bounce: return "bounce";
  }
  return "?";
}

Result<PathDecision> decide_path(const topo::Topology& topology, NodeId node, MemoryPlace destination,
                                 std::uint32_t nic, BackendCaps caps) {
  auto nic_v = topology.device(node, VertexKind::nic, nic);
  if (!nic_v.ok()) return nic_v.status();
  const topo::Vertex& n = topology.vertex(*nic_v);
  PathDecision d;
  if (destination.kind != MemKind::gpu) {
    if (!topology.device(node, VertexKind::host_memory, destination.device).ok()) {
      return error(StatusCode::not_found, "decide_path: node " + std::to_string(node) + " has no NUMA node " +
                                              std::to_string(destination.device));
    }
    d.path = DataPath::direct;
    d.path_class = n.numa == destination.device ? PathClass::phb : PathClass::sys;
    d.reason = std::string(to_string(destination.kind)) + " memory on NUMA " + std::to_string(destination.device) +
               ": " + n.name + " writes it directly" + (n.numa == destination.device ? "" : " across sockets");
    return d;
  }
  auto gpu_v = topology.device(node, VertexKind::gpu, destination.device);
  if (!gpu_v.ok()) return gpu_v.status();
  auto pc = topo::path_class(topology, *gpu_v, *nic_v);
  if (!pc.ok()) return pc.status();
  const topo::Vertex& g = topology.vertex(*gpu_v);
  d.path_class = *pc;
  const std::string pair = g.name + " <-> " + n.name + " is " + std::string(topo::to_string(*pc));
  if (*pc <= k_max_direct_path_class && caps.gpu_memory_reachable) {
    d.path = DataPath::direct;
    d.reason = pair + " (PXB or closer) and the backend reaches GPU memory: direct";
    return d;
  }
  d.path = DataPath::bounce;
  d.staging_numa = g.numa;
  d.reason = pair + (*pc <= k_max_direct_path_class ? "" : " (farther than PXB)") +
             (caps.gpu_memory_reachable ? "" : "; the backend cannot reach GPU memory") +
             ": bounce through pinned memory on NUMA " + std::to_string(g.numa);
  return d;
}

}  // namespace sluice::sched
