#include "hw_backends/hwloc/hwloc_import.hpp"

#include "hw_backends/hwloc/hwloc_topology_handle.hpp"

#include <hwloc.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/topology/machine_assembler.hpp"

namespace sluice::hw {
namespace {

using topo::VertexId;
using topo::VertexKind;

constexpr unsigned k_vendor_nvidia = 0x10de;

using TopologyHandle = HwlocTopology;

// The topology walked here is a HwlocLoader's checked re-export: bridge and OS
// device types are hwloc's enumerators, bitmaps and nesting are bounded.
bool is_pci_bridge(hwloc_obj_t o) {
  return o->type == HWLOC_OBJ_BRIDGE && o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI;
}

std::optional<VertexKind> classify(hwloc_obj_t o) {
  if (o->type != HWLOC_OBJ_PCI_DEVICE) return std::nullopt;
  const unsigned cls = o->attr->pcidev.class_id;
  if ((cls == 0x0302 || cls == 0x0300) && o->attr->pcidev.vendor_id == k_vendor_nvidia) return VertexKind::gpu;
  if (cls == 0x0207 || cls == 0x0200) return VertexKind::nic;
  if (cls == 0x0108) return VertexKind::nvme;
  return std::nullopt;
}

// A bridge at `level` below its host bridge (root ports are level 1) starts a
// new switch when the level is even (a switch upstream port); odd levels are
// root ports and switch downstream ports, which belong to the vertex above.
bool starts_switch(int level) { return level % 2 == 0; }

// The OS device info value `name` of the first OS device of `type` under o.
const char* osdev_info(hwloc_obj_t o, hwloc_obj_osdev_type_e type, const char* name) {
  for (hwloc_obj_t c = o->io_first_child; c != nullptr; c = c->next_sibling) {
    if (c->type != HWLOC_OBJ_OS_DEVICE || c->attr->osdev.type != type) continue;
    if (const char* v = hwloc_obj_get_info_by_name(c, name)) return v;
  }
  return nullptr;
}

std::uint64_t kib_info(hwloc_obj_t o, hwloc_obj_osdev_type_e type, const char* name) {
  const char* v = osdev_info(o, type, name);
  if (v == nullptr) return 0;
  return std::strtoull(v, nullptr, 10) * k_kib;
}

std::string nic_name(hwloc_obj_t o) {
  for (auto type : {HWLOC_OBJ_OSDEV_OPENFABRICS, HWLOC_OBJ_OSDEV_NETWORK}) {
    for (hwloc_obj_t c = o->io_first_child; c != nullptr; c = c->next_sibling) {
      if (c->type == HWLOC_OBJ_OS_DEVICE && c->attr->osdev.type == type && c->name != nullptr) return c->name;
    }
  }
  return {};
}

class Importer {
 public:
  Importer(hwloc_topology_t t, const HwlocImportOptions& options) : t_(t), options_(options), m_("hwloc_import") {}

  Result<topo::Topology> run() {
    if (Status s = add_sockets(); !s.ok()) return s;
    for (hwloc_obj_t b = hwloc_get_next_bridge(t_, nullptr); b != nullptr; b = hwloc_get_next_bridge(t_, b)) {
      if (b->attr->bridge.upstream_type != HWLOC_OBJ_BRIDGE_HOST || !interesting(b)) continue;
      const VertexId rp = m_.add_root_port(socket_of(b), below_bytes_per_s(b, 0));
      walk(b, rp, 0);
    }
    return m_.finish();
  }

 private:
  double speed(hwloc_obj_t o) const {
    const float gb_per_s =
        o->type == HWLOC_OBJ_BRIDGE ? o->attr->bridge.upstream.pci.linkspeed : o->attr->pcidev.linkspeed;
    if (!(gb_per_s > 0)) return options_.default_pcie_bytes_per_s;
    return static_cast<double>(gb_per_s) * 1e9 * topo::k_pcie_protocol_efficiency;
  }

  bool interesting(hwloc_obj_t o) const {
    if (classify(o)) return true;
    for (hwloc_obj_t c = o->io_first_child; c != nullptr; c = c->next_sibling) {
      if (interesting(c)) return true;
    }
    return false;
  }

  // What the vertex for `o` carries towards its parent: the links of its first vertices below.
  double below_bytes_per_s(hwloc_obj_t o, int level) const {
    double sum = 0;
    for (hwloc_obj_t c = o->io_first_child; c != nullptr; c = c->next_sibling) {
      if (!interesting(c)) continue;
      if (is_pci_bridge(c) && !starts_switch(level + 1)) {
        sum += below_bytes_per_s(c, level + 1);
      } else if (is_pci_bridge(c) || classify(c)) {
        sum += speed(c);
      }
    }
    return sum > 0 ? sum : options_.default_pcie_bytes_per_s;
  }

  Status add_sockets() {
    // Packages inside packages sit at several depths: hwloc counts them as -1
    // and their logical indices are not one range (found by make fuzz).
    if (hwloc_get_type_depth(t_, HWLOC_OBJ_PACKAGE) == HWLOC_TYPE_DEPTH_MULTIPLE) {
      return error(StatusCode::invalid_argument, "hwloc import: packages are nested in packages");
    }
    const int packages = hwloc_get_nbobjs_by_type(t_, HWLOC_OBJ_PACKAGE);
    if (packages > static_cast<int>(k_max_hwloc_packages)) {
      return error(StatusCode::invalid_argument, "hwloc import: " + std::to_string(packages) +
                                                     " packages, above k_max_hwloc_packages (" +
                                                     std::to_string(k_max_hwloc_packages) + ")");
    }
    const int numas = hwloc_get_nbobjs_by_type(t_, HWLOC_OBJ_NUMANODE);
    const int sockets = packages > 0 ? packages : 1;
    std::vector<std::uint64_t> memory(static_cast<std::size_t>(sockets), 0);
    for (int i = 0; i < numas; ++i) {
      hwloc_obj_t numa = hwloc_get_obj_by_type(t_, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
      if (numa == nullptr) continue;
      hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(t_, HWLOC_OBJ_PACKAGE, numa);
      memory[pkg != nullptr ? pkg->logical_index : 0] += numa->attr->numanode.local_memory;
    }
    for (int s = 0; s < sockets; ++s) {
      sockets_.push_back(m_.add_socket(memory[static_cast<std::size_t>(s)], options_.memory_bytes_per_s));
      for (int o = 0; o < s; ++o) {
        m_.link_sockets(sockets_[static_cast<std::size_t>(o)], sockets_.back(), options_.inter_socket_bytes_per_s,
                        topo::k_inter_socket_latency_ns);
      }
    }
    return Status{};
  }

  // The socket of the package the host bridge is local to (package 0 when it is machine-wide).
  VertexId socket_of(hwloc_obj_t host_bridge) const {
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(t_, host_bridge);
    if (anc == nullptr) return sockets_[0];
    hwloc_obj_t pkg = anc->type == HWLOC_OBJ_PACKAGE ? anc : hwloc_get_ancestor_obj_by_type(t_, HWLOC_OBJ_PACKAGE, anc);
    if (pkg == nullptr && anc->cpuset != nullptr) {
      // Below a package-wide Group or cache: the package that contains the locality.
      for (hwloc_obj_t p = hwloc_get_next_obj_by_type(t_, HWLOC_OBJ_PACKAGE, nullptr); p != nullptr;
           p = hwloc_get_next_obj_by_type(t_, HWLOC_OBJ_PACKAGE, p)) {
        if (hwloc_bitmap_isincluded(anc->cpuset, p->cpuset)) pkg = p;
      }
    }
    return sockets_[pkg != nullptr ? pkg->logical_index : 0];
  }

  void add_device(hwloc_obj_t o, VertexKind kind, VertexId parent) {
    switch (kind) {
      case VertexKind::gpu:
        m_.add_gpu(parent, speed(o), kib_info(o, HWLOC_OBJ_OSDEV_COPROC, "CUDAGlobalMemorySize"));
        break;
      case VertexKind::nic: m_.add_nic(parent, speed(o), options_.nic_port_rate_bytes_per_s, nic_name(o)); break;
      case VertexKind::nvme:
        m_.add_nvme(parent, speed(o), options_.nvme_read_bytes_per_s, options_.nvme_write_bytes_per_s,
                    kib_info(o, HWLOC_OBJ_OSDEV_BLOCK, "Size"));
        break;
      default: break;
    }
  }

  void walk(hwloc_obj_t o, VertexId vertex, int level) {
    // NIC functions of one PCI device (domain, bus, device) share that device's link.
    std::map<std::tuple<unsigned, unsigned, unsigned>, int> nic_functions;
    for (hwloc_obj_t c = o->io_first_child; c != nullptr; c = c->next_sibling) {
      if (classify(c) == VertexKind::nic) {
        ++nic_functions[{c->attr->pcidev.domain, c->attr->pcidev.bus, c->attr->pcidev.dev}];
      }
    }
    std::map<std::tuple<unsigned, unsigned, unsigned>, VertexId> adapters;
    for (hwloc_obj_t c = o->io_first_child; c != nullptr; c = c->next_sibling) {
      if (!interesting(c)) continue;
      if (is_pci_bridge(c)) {
        const int child_level = level + 1;
        walk(c, starts_switch(child_level) ? m_.add_switch(vertex, speed(c)) : vertex, child_level);
        continue;
      }
      const auto kind = classify(c);
      if (!kind) continue;
      VertexId parent = vertex;
      const std::tuple<unsigned, unsigned, unsigned> slot{c->attr->pcidev.domain, c->attr->pcidev.bus,
                                                          c->attr->pcidev.dev};
      if (*kind == VertexKind::nic && nic_functions[slot] > 1) {
        auto [it, fresh] = adapters.emplace(slot, topo::k_no_vertex);
        if (fresh) {
          char name[64];
          std::snprintf(name, sizeof name, "adapter_%04x:%02x:%02x", c->attr->pcidev.domain, c->attr->pcidev.bus,
                        c->attr->pcidev.dev);
          it->second = m_.add_switch(vertex, speed(c), false, name);
        }
        parent = it->second;
      }
      add_device(c, *kind, parent);
    }
  }

  hwloc_topology_t t_;
  HwlocImportOptions options_;
  topo::MachineAssembler m_;
  std::vector<VertexId> sockets_;
};

}  // namespace

Result<topo::Topology> import_hwloc_xml(std::string_view xml, HwlocLoader& loader, const HwlocImportOptions& options) {
  auto canonical = loader.load(xml);
  if (!canonical.ok()) return canonical.status();
  TopologyHandle topology;
  if (!topology.ok()) return error(StatusCode::internal, "hwloc import: hwloc_topology_init failed");
  if (Status s = load_checked_hwloc_xml(topology.get(), *canonical); !s.ok()) return s;
  Importer importer(topology.get(), options);
  return importer.run();
}

Result<topo::Topology> import_hwloc_xml(std::string_view xml, const HwlocImportOptions& options) {
  // One loader process for the whole process, and one import at a time: the
  // loader is forked from here, and a fork while another thread is inside
  // libhwloc could copy a held lock into it (hwloc_loader.hpp).
  static std::mutex mutex;
  static HwlocLoader loader;
  const std::lock_guard<std::mutex> lock(mutex);
  return import_hwloc_xml(xml, loader, options);
}

}  // namespace sluice::hw
