#include "core/topology/path_class.hpp"

#include <string>

namespace sluice::topo {

std::string_view to_string(PathClass path_class) {
  switch (path_class) {
    case PathClass::loc: return "X";
    case PathClass::pix: return "PIX";
    case PathClass::pxb: return "PXB";
    case PathClass::phb: return "PHB";
    case PathClass::node: return "NODE";
    case PathClass::sys: return "SYS";
    case PathClass::net: return "NET";
  }
  return "?";
}

Result<PathClass> parse_path_class(std::string_view text) {
  if (text == "X") return PathClass::loc;
  if (text == "PIX") return PathClass::pix;
  if (text == "PXB") return PathClass::pxb;
  if (text == "PHB") return PathClass::phb;
  if (text == "NODE") return PathClass::node;
  if (text == "SYS" || text == "SOC") return PathClass::sys;
  if (text == "NET") return PathClass::net;
  return error(StatusCode::invalid_argument, "path class: unknown name '" + std::string(text) + "'");
}

Result<PathClass> path_class(const Topology& topology, VertexId a, VertexId b) {
  if (!topology.contains(a) || !topology.contains(b)) {
    return error(StatusCode::not_found, "path_class: unknown vertex id");
  }
  for (VertexId v : {a, b}) {
    const Vertex& x = topology.vertex(v);
    if (!is_device(x.kind)) {
      return error(StatusCode::invalid_argument, "path_class: '" + x.name + "' is a " + std::string(to_string(x.kind)) +
                                                     ", not a device (gpu, nic, nvme)");
    }
  }
  if (a == b) return PathClass::loc;
  if (topology.vertex(a).node != topology.vertex(b).node) return PathClass::net;
  auto route = topology.machine_route(a, b);
  if (!route.ok()) return route.status();
  const auto path = topology.route_vertices(*route);
  int sockets = 0, root_ports = 0, bridges = 0;
  for (std::size_t i = 1; i + 1 < path.size(); ++i) {
    const Vertex& x = topology.vertex(path[i]);
    switch (x.kind) {
      case VertexKind::cpu_socket: ++sockets; break;
      case VertexKind::pcie_root_port: ++root_ports; break;
      case VertexKind::pcie_switch: bridges += x.pcie_bridge ? 1 : 0; break;
      default: break;
    }
  }
  if (sockets >= 2) return PathClass::sys;
  if (sockets == 1) return PathClass::node;
  if (root_ports > 0) return PathClass::phb;
  return bridges <= 1 ? PathClass::pix : PathClass::pxb;
}

}  // namespace sluice::topo
