#include "hw_backends/hwloc/hwloc_import.hpp"

#include <hwloc.h>
#include <poll.h>
#include <sys/wait.h>
#include <chrono>
#include <csignal>
#include <string_view>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/topology/machine_assembler.hpp"

namespace sluice::hw {
namespace {

using topo::VertexId;
using topo::VertexKind;

constexpr unsigned k_vendor_nvidia = 0x10de;

class TopologyHandle {
 public:
  TopologyHandle() { ok_ = hwloc_topology_init(&t_) == 0; }
  ~TopologyHandle() {
    if (ok_) hwloc_topology_destroy(t_);
  }
  TopologyHandle(const TopologyHandle&) = delete;
  TopologyHandle& operator=(const TopologyHandle&) = delete;
  bool ok() const { return ok_; }
  hwloc_topology_t get() const { return t_; }

 private:
  hwloc_topology_t t_ = nullptr;
  bool ok_ = false;
};

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
    add_sockets();
    for (hwloc_obj_t b = hwloc_get_next_bridge(t_, nullptr); b != nullptr; b = hwloc_get_next_bridge(t_, b)) {
      if (b->attr->bridge.upstream_type != HWLOC_OBJ_BRIDGE_HOST || !interesting(b)) continue;
      const VertexId rp = m_.add_root_port(socket_of(b), below_bytes_per_s(b, 0));
      walk(b, rp, 0);
    }
    return m_.finish();
  }

 private:
  double speed(hwloc_obj_t o) const {
    const float gb_per_s = o->type == HWLOC_OBJ_BRIDGE ? o->attr->bridge.upstream.pci.linkspeed : o->attr->pcidev.linkspeed;
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

  void add_sockets() {
    const int packages = hwloc_get_nbobjs_by_type(t_, HWLOC_OBJ_PACKAGE);
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
      case VertexKind::nic:
        m_.add_nic(parent, speed(o), options_.nic_port_rate_bytes_per_s, nic_name(o));
        break;
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
      const std::tuple<unsigned, unsigned, unsigned> slot{c->attr->pcidev.domain, c->attr->pcidev.bus, c->attr->pcidev.dev};
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

// Loads `xml` into `topology` (I/O objects kept). hwloc wants the
// terminating NUL counted in the length.
Status load_xml(TopologyHandle& topology, const std::string& xml) {
  if (!topology.ok()) return error(StatusCode::internal, "hwloc import: hwloc_topology_init failed");
  if (hwloc_topology_set_io_types_filter(topology.get(), HWLOC_TYPE_FILTER_KEEP_ALL) != 0) {
    return error(StatusCode::internal, "hwloc import: cannot keep I/O objects (hwloc_topology_set_io_types_filter)");
  }
  if (hwloc_topology_set_xmlbuffer(topology.get(), xml.c_str(), static_cast<int>(xml.size() + 1)) != 0) {
    return error(StatusCode::invalid_argument,
                 std::string("hwloc import: hwloc rejected the XML (malformed or not a hwloc topology): ") + std::strerror(errno));
  }
  if (hwloc_topology_load(topology.get()) != 0) {
    return error(StatusCode::invalid_argument, std::string("hwloc import: hwloc could not load the XML topology: ") + std::strerror(errno));
  }
  return Status{};
}

bool write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

// libhwloc's XML reader trusts its input: hwloc 2.9 (Debian 12) dereferences
// a null bitmap in hwloc_topology_load when an object lacks complete_nodeset
// (found by tests/fuzz/fuzz_hwloc_xml.cpp; the input is in
// tests/fuzz/regressions/hwloc_xml/). So untrusted XML is first loaded in a
// child process, which hands back hwloc's own re-export of what it loaded:
// a crash there is an error here, and the parent only ever loads XML that
// libhwloc wrote itself from a topology it built. The child runs only
// libhwloc and write(2) before _exit, and the import runs at start-up (CLI,
// tests), not beside other threads that hold locks.
// Separates what libhwloc printed from the XML in the child's output.
constexpr std::string_view k_xml_marker = "\n<<sluice-hwloc-xml>>\n";

Result<std::string> canonical_xml(const std::string& xml) {
  int fds[2];
  if (::pipe(fds) != 0) return error(StatusCode::internal, std::string("hwloc import: pipe: ") + std::strerror(errno));
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return error(StatusCode::internal, std::string("hwloc import: fork: ") + std::strerror(errno));
  }
  if (child == 0) {
    ::close(fds[0]);
    // libhwloc reports some inputs on stderr and then calls abort(): send
    // that text to the parent (before the marker), with default signal
    // dispositions so that a crash ends only this process.
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::signal(sig, SIG_DFL);
    ::dup2(fds[1], STDERR_FILENO);
    int code = 3;
    {
      TopologyHandle topology;
      const Status loaded = load_xml(topology, xml);
      if (!loaded.ok()) {
        const std::string why = loaded.message();
        code = write_all(fds[1], why.data(), why.size()) ? 2 : 3;
      } else {
        char* out = nullptr;
        int out_bytes = 0;
        if (hwloc_topology_export_xmlbuffer(topology.get(), &out, &out_bytes, 0) == 0 && out_bytes > 0) {
          code = write_all(fds[1], k_xml_marker.data(), k_xml_marker.size()) &&
                         write_all(fds[1], out, static_cast<std::size_t>(out_bytes - 1))  // without the NUL
                     ? 0
                     : 3;
          hwloc_free_xmlbuffer(topology.get(), out);
        }
      }
    }
    ::close(fds[1]);
    ::_exit(code);
  }
  ::close(fds[1]);
  std::string reply;
  char chunk[65536];
  bool too_big = false;
  bool timed_out = false;
  // libhwloc can also take very long on some inputs (bitmaps with huge
  // indices; found by `make fuzz`): the loader gets k_hwloc_load_timeout_ms.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(k_hwloc_load_timeout_ms);
  for (;;) {
    const auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    pollfd pfd{fds[0], POLLIN, 0};
    const int ready = left_ms > 0 ? ::poll(&pfd, 1, static_cast<int>(left_ms)) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      timed_out = true;
      ::kill(child, SIGKILL);
      break;
    }
    const ssize_t r = ::read(fds[0], chunk, sizeof chunk);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    if (reply.size() + static_cast<std::size_t>(r) > k_max_hwloc_xml_bytes) {
      too_big = true;  // keep draining so the child can exit
      continue;
    }
    reply.append(chunk, static_cast<std::size_t>(r));
  }
  ::close(fds[0]);
  int wstatus = 0;
  while (::waitpid(child, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return error(StatusCode::invalid_argument, "hwloc import: libhwloc did not load the XML within k_hwloc_load_timeout_ms (" +
                                                   std::to_string(k_hwloc_load_timeout_ms) + " ms): it is malformed or absurd");
  }
  const std::size_t marker = reply.rfind(k_xml_marker);
  std::string said = reply.substr(0, marker == std::string::npos ? reply.size() : marker);
  while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
  if (WIFSIGNALED(wstatus)) {
    return error(StatusCode::invalid_argument, "hwloc import: libhwloc gave up on the XML (signal " +
                                                   std::to_string(WTERMSIG(wstatus)) + (said.empty() ? "" : ": " + said) +
                                                   "): it is malformed");
  }
  const int code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 3;
  if (code == 2) return error(StatusCode::invalid_argument, said);
  if (code != 0 || marker == std::string::npos) {
    return error(StatusCode::internal, "hwloc import: the XML loader process failed" + (said.empty() ? "" : ": " + said));
  }
  if (too_big) return error(StatusCode::invalid_argument, "hwloc import: re-exported XML exceeds k_max_hwloc_xml_bytes");
  return reply.substr(marker + k_xml_marker.size());
}

}  // namespace

Result<topo::Topology> import_hwloc_xml(std::string_view xml, const HwlocImportOptions& options) {
  if (xml.empty()) return error(StatusCode::invalid_argument, "hwloc import: empty XML");
  if (xml.size() > k_max_hwloc_xml_bytes) {
    return error(StatusCode::invalid_argument, "hwloc import: XML exceeds k_max_hwloc_xml_bytes");
  }
  auto canonical = canonical_xml(std::string(xml));
  if (!canonical.ok()) return canonical.status();
  TopologyHandle topology;
  if (Status s = load_xml(topology, *canonical); !s.ok()) return s;
  Importer importer(topology.get(), options);
  return importer.run();
}

}  // namespace sluice::hw
