#include "sim/sim_platform.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u.hpp>

namespace sluice::sim {
namespace {

namespace sg = simgrid::s4u;
using topo::LinkClass;
using topo::VertexId;
using topo::VertexKind;

// The profile the factor callbacks read (one platform per process).
const SimProfile* g_profile = nullptr;

double seconds(TimeNs ns) { return static_cast<double>(ns) * 1e-9; }

std::string edge_name(const topo::Topology& t, topo::EdgeId e) {
  const auto& l = t.link(e);
  return "e" + std::to_string(e) + "/" + t.vertex(l.a).name + "--" + t.vertex(l.b).name;
}

}  // namespace

SimPlatform::~SimPlatform() {
  // SimGrid owns hosts, links and zones; they live as long as the engine.
  if (g_profile == &profile_) g_profile = nullptr;
}

// Each NIC's network link (nic_uplink_) and each node's first cabled NIC (first_nic_).
void SimPlatform::find_nic_uplinks() {
  const topo::Topology& t = *topology_;
  const NodeId nodes = t.node_count();
  first_nic_.assign(nodes, k_no_id);
  nic_uplink_.assign(t.vertex_count(), topo::k_no_edge);
  for (VertexId v = 0; v < t.vertex_count(); ++v) {
    const auto& vx = t.vertex(v);
    if (vx.kind != VertexKind::nic) continue;
    for (topo::EdgeId e : t.links_of(v)) {
      if (t.link(e).spec.link_class == LinkClass::network) {
        nic_uplink_[v] = e;
        break;
      }
    }
  }
  for (NodeId n = 0; n < nodes; ++n) {
    for (std::uint32_t i = 0; i < t.count(n, VertexKind::nic); ++i) {
      Result<VertexId> nic = t.device(n, VertexKind::nic, i);
      if (nic.ok() && nic_uplink_[*nic] != topo::k_no_edge) {
        first_nic_[n] = i;
        break;
      }
    }
  }
}

Result<std::unique_ptr<SimPlatform>> SimPlatform::build(std::shared_ptr<const topo::Topology> cluster,
                                                        const SimProfile& profile) {
  if (!cluster) return error(StatusCode::invalid_argument, "sim platform: no topology");
  if (Status s = validate(profile); !s.ok()) return s;
  if (!sg::Engine::has_instance()) {
    return error(StatusCode::internal, "sim platform: no s4u::Engine exists in this process");
  }
  if (sg::Engine::get_instance()->get_host_count() != 0 || g_profile != nullptr) {
    return error(StatusCode::unavailable,
                 "sim platform: this process already has a platform (SimGrid allows one engine per process; run "
                 "each simulation in its own child process, see sim/sim_process.hpp)");
  }
  std::unique_ptr<SimPlatform> p(new SimPlatform());
  p->topology_ = std::move(cluster);
  p->profile_ = profile;
  g_profile = &p->profile_;

  // One network model per simulation: CM02 is max-min sharing without the
  // LV08 TCP factors; the per-class factors come from the callbacks below.
  // Cross-traffic (5% of a flow charged to the reverse route) is a TCP-ack
  // effect that must not load PCIe: off.
  sg::Engine::set_config("network/model:CM02");
  sg::Engine::set_config("network/crosstraffic:0");
  sg::Engine::set_config("network/TCP-gamma", tcp_gamma(profile));

  p->find_nic_uplinks();
  const topo::Topology& t = *p->topology_;

  // The root: one leaf (or none) makes the leaf the root; several leaves sit
  // under a FullZone routing between their switches.
  std::vector<VertexId> leaf_switches;
  for (VertexId v = 0; v < t.vertex_count(); ++v) {
    if (p->nic_uplink_[v] == topo::k_no_edge) continue;
    const VertexId sw = t.other_end(p->nic_uplink_[v], v);
    if (std::find(leaf_switches.begin(), leaf_switches.end(), sw) == leaf_switches.end()) leaf_switches.push_back(sw);
  }
  std::sort(leaf_switches.begin(), leaf_switches.end());
  if (leaf_switches.size() > k_max_leaves) {
    return error(StatusCode::invalid_argument,
                 "sim platform: " + std::to_string(leaf_switches.size()) + " leaf switches exceed k_max_leaves");
  }
  p->stats_.leaves = leaf_switches.size();
  p->root_ = leaf_switches.size() > 1 ? sg::create_full_zone("cluster") : sg::create_star_zone("cluster");
  ++p->stats_.zones;

  if (Status s = p->build_links(); !s.ok()) return s;
  if (Status s = p->build_local_zones(p->root_); !s.ok()) return s;
  if (Status s = p->build_leaves(); !s.ok()) return s;
  if (Status s = p->build_disks(); !s.ok()) return s;
  p->install_factor_callbacks();
  p->root_->seal();
  p->stats_.hosts = sg::Engine::get_instance()->get_host_count();
  return p;
}

Status SimPlatform::build_links() {
  const topo::Topology& t = *topology_;
  links_.resize(t.link_count());
  // Each SimGrid link's data (s4u::Link is Extendable) points at its
  // LinkInfo, so the factor callbacks read a link's class without a lookup.
  link_info_.resize(2 * t.link_count());
  for (topo::EdgeId e = 0; e < t.link_count(); ++e) {
    const topo::LinkSpec& spec = t.link(e).spec;
    const std::string name = edge_name(t, e);
    link_info_[2 * e] = LinkInfo{spec.link_class, e, true};
    link_info_[2 * e + 1] = LinkInfo{spec.link_class, e, !spec.full_duplex};
    void* tag = &link_info_[2 * e];
    void* tag_back = &link_info_[2 * e + 1];
    if (spec.full_duplex) {
      sg::SplitDuplexLink* link = root_->create_split_duplex_link(name, spec.bandwidth_ab_bytes_per_s);
      link->set_latency(seconds(spec.latency_ns) * k_sim_latency_scale);
      link->seal();
      sg::Link* up = link->get_link_up();
      sg::Link* down = link->get_link_down();
      up->set_bandwidth(spec.bandwidth_ab_bytes_per_s);
      down->set_bandwidth(spec.bandwidth_ba_bytes_per_s);
      up->set_data(tag);
      down->set_data(tag_back);
      links_[e] = SgLink{up, down};
    } else {
      // Both directions share one capacity: the larger stated rate.
      sg::Link* link = root_->create_link(name, std::max(spec.bandwidth_ab_bytes_per_s, spec.bandwidth_ba_bytes_per_s));
      link->set_latency(seconds(spec.latency_ns) * k_sim_latency_scale);
      link->set_sharing_policy(sg::Link::SharingPolicy::SHARED);
      link->seal();
      link->set_data(tag);
      links_[e] = SgLink{link, link};
    }
    ++stats_.links;
  }
  return ok_status();
}

Status SimPlatform::build_local_zones(sg::NetZone* parent) {
  const topo::Topology& t = *topology_;
  local_hosts_.assign(t.vertex_count(), nullptr);
  copy_hosts_.assign(t.vertex_count(), nullptr);
  drive_hosts_.assign(t.node_count(), {});
  const NodeId nodes = t.node_count();
  auto links_of_route = [this, &t](const topo::Route& r) {
    std::vector<sg::LinkInRoute> out;
    VertexId at = r.source;
    for (topo::EdgeId e : r.edges) {
      const bool forward = t.link(e).a == at;
      out.emplace_back(forward ? links_[e].a_to_b : links_[e].b_to_a);
      at = forward ? t.link(e).b : t.link(e).a;
    }
    return out;
  };
  for (NodeId first = 0; first < nodes; first += k_nodes_per_local_zone) {
    sg::NetZone* zone = sg::create_full_zone("local" + std::to_string(first / k_nodes_per_local_zone));
    zone->set_parent(parent);
    ++stats_.zones;
    for (NodeId n = first; n < std::min<NodeId>(nodes, first + k_nodes_per_local_zone); ++n) {
      std::vector<VertexId> memories;
      for (VertexKind kind : {VertexKind::host_memory, VertexKind::gpu}) {
        for (std::uint32_t i = 0; i < t.count(n, kind); ++i) {
          Result<VertexId> v = t.device(n, kind, i);
          if (v.ok()) memories.push_back(*v);
        }
      }
      for (VertexId m : memories) {
        sg::Host* host = zone->create_host(t.vertex(m).name, 1e9);
        const auto& vx = t.vertex(m);
        if (vx.kind == VertexKind::host_memory && vx.index == 0)
          host->set_core_count(static_cast<int>(profile_.cpu_cores_per_node));
        host->seal();
        local_hosts_[m] = host;
      }
      for (VertexId m : memories) {
        if (t.vertex(m).kind != VertexKind::host_memory) continue;
        topo::EdgeId memory_link = topo::k_no_edge;
        for (topo::EdgeId e : t.links_of(m)) {
          if (t.link(e).spec.link_class == LinkClass::memory) memory_link = e;
        }
        if (memory_link == topo::k_no_edge) continue;
        sg::Host* copy = zone->create_host(t.vertex(m).name + "#copy", 1e9);
        copy->seal();
        copy_hosts_[m] = copy;
        // Read (memory -> socket), then write (socket -> memory).
        zone->add_route(local_hosts_[m]->get_netpoint(), copy->get_netpoint(), nullptr, nullptr,
                        links_of_route(topo::Route{m, m, {memory_link, memory_link}}), false);
      }
      if (Status s = add_drive_hosts(zone, n, links_of_route); !s.ok()) return s;
      for (VertexId a : memories) {
        for (VertexId b : memories) {
          if (a == b) continue;
          Result<topo::Route> r = t.machine_route(a, b);
          if (!r.ok()) return error(r.status().code(), "sim platform: " + r.status().message());
          zone->add_route(local_hosts_[a]->get_netpoint(), local_hosts_[b]->get_netpoint(), nullptr, nullptr,
                          links_of_route(*r), false);
        }
      }
    }
    zone->seal();
  }
  return ok_status();
}

template <typename LinksOfRoute>
Status SimPlatform::add_drive_hosts(sg::NetZone* zone, NodeId n, const LinksOfRoute& links_of_route) {
  // A drive's bytes cross its PCIe link, its switch's uplink and the memory
  // link between the drive and the host memory of its NUMA node: a host at
  // the drive, routed to that memory, carries them beside the drive's own
  // work (SimRuntime's drive work), so that drives share switch uplinks with
  // each other and with the NICs on them, as the bound counts them.
  const topo::Topology& t = *topology_;
  drive_hosts_[n].assign(t.count(n, VertexKind::nvme), DriveHosts{});
  for (std::uint32_t i = 0; i < t.count(n, VertexKind::nvme); ++i) {
    Result<VertexId> v = t.device(n, VertexKind::nvme, i);
    if (!v.ok()) continue;
    Result<VertexId> mem = t.device(n, VertexKind::host_memory, t.vertex(*v).numa);
    if (!mem.ok() || local_hosts_[*mem] == nullptr) continue;  // build_disks says why the drive is unusable
    Result<topo::Route> out = t.machine_route(*v, *mem);
    Result<topo::Route> in = t.machine_route(*mem, *v);
    if (!out.ok()) return error(out.status().code(), "sim platform: " + out.status().message());
    if (!in.ok()) return error(in.status().code(), "sim platform: " + in.status().message());
    sg::Host* drive = zone->create_host(t.vertex(*v).name + "#pcie", 1e9);
    drive->seal();
    zone->add_route(drive->get_netpoint(), local_hosts_[*mem]->get_netpoint(), nullptr, nullptr, links_of_route(*out),
                    false);
    zone->add_route(local_hosts_[*mem]->get_netpoint(), drive->get_netpoint(), nullptr, nullptr, links_of_route(*in),
                    false);
    drive_hosts_[n][i] = DriveHosts{drive, local_hosts_[*mem]};
  }
  return ok_status();
}

Status SimPlatform::build_leaves() {
  const topo::Topology& t = *topology_;
  auto links_of_route = [this, &t](const topo::Route& r, std::vector<sg::LinkInRoute>& out) {
    VertexId at = r.source;
    for (topo::EdgeId e : r.edges) {
      const bool forward = t.link(e).a == at;
      out.emplace_back(forward ? links_[e].a_to_b : links_[e].b_to_a);
      at = forward ? t.link(e).b : t.link(e).a;
    }
  };
  const bool single_leaf = stats_.leaves <= 1;
  std::map<VertexId, sg::NetZone*> leaves;  // by switch vertex
  std::map<VertexId, simgrid::kernel::routing::NetPoint*> centres;
  auto leaf_of = [&](VertexId sw) {
    auto it = leaves.find(sw);
    if (it != leaves.end()) return it->second;
    sg::NetZone* zone = root_;
    if (!single_leaf) {
      zone = sg::create_star_zone("leaf:" + t.vertex(sw).name);
      zone->set_parent(root_);
      ++stats_.zones;
      simgrid::kernel::routing::NetPoint* centre = zone->create_router(t.vertex(sw).name);
      zone->add_route(centre, nullptr, nullptr, nullptr, {}, true);
      centres[sw] = centre;
    }
    leaves[sw] = zone;
    return zone;
  };
  rail_hosts_.assign(t.vertex_count(), {});
  for (NodeId n = 0; n < t.node_count(); ++n) {
    const std::uint32_t nics = t.count(n, VertexKind::nic);
    for (VertexKind kind : {VertexKind::host_memory, VertexKind::gpu}) {
      for (std::uint32_t i = 0; i < t.count(n, kind); ++i) {
        Result<VertexId> m = t.device(n, kind, i);
        if (!m.ok()) continue;
        rail_hosts_[*m].assign(nics, nullptr);
        for (std::uint32_t r = 0; r < nics; ++r) {
          Result<VertexId> nic = t.device(n, VertexKind::nic, r);
          if (!nic.ok() || nic_uplink_[*nic] == topo::k_no_edge) continue;
          const topo::EdgeId uplink = nic_uplink_[*nic];
          const VertexId sw = t.other_end(uplink, *nic);
          sg::NetZone* leaf = leaf_of(sw);
          Result<topo::Route> out_route = t.machine_route(*m, *nic);
          Result<topo::Route> in_route = t.machine_route(*nic, *m);
          if (!out_route.ok()) return error(out_route.status().code(), "sim platform: " + out_route.status().message());
          if (!in_route.ok()) return error(in_route.status().code(), "sim platform: " + in_route.status().message());
          std::vector<sg::LinkInRoute> up;
          links_of_route(*out_route, up);
          links_of_route(topo::Route{*nic, sw, {uplink}}, up);
          std::vector<sg::LinkInRoute> down;
          links_of_route(topo::Route{sw, *nic, {uplink}}, down);
          links_of_route(*in_route, down);
          sg::Host* host = leaf->create_host(t.vertex(*m).name + "@" + t.vertex(*nic).name, 1e9);
          leaf->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, up, false);
          leaf->add_route(nullptr, host->get_netpoint(), nullptr, nullptr, down, false);
          rail_hosts_[*m][r] = host;
        }
      }
    }
  }
  if (!single_leaf) {
    if (Status s = route_across_leaves(leaves, centres, links_of_route); !s.ok()) return s;
    for (auto& [sw, zone] : leaves) zone->seal();
  }
  return ok_status();
}

template <typename LinksOfRoute>
Status SimPlatform::route_across_leaves(const std::map<VertexId, sg::NetZone*>& leaves,
                                        const std::map<VertexId, simgrid::kernel::routing::NetPoint*>& centres,
                                        const LinksOfRoute& links_of_route) {
  const topo::Topology& t = *topology_;
  // Per leaf: the switches above it (sorted) and its pooled links to them.
  struct Pool {
    std::vector<VertexId> spines;
    SgLink link;  // a_to_b: leaf -> spines, b_to_a: spines -> leaf
  };
  std::map<VertexId, Pool> pools;
  for (const auto& [sw, zone] : leaves) {
    Pool& pool = pools[sw];
    double up = 0, down = 0;
    TimeNs latency_ns = 0;
    for (topo::EdgeId e : t.links_of(sw)) {
      const VertexId other = t.other_end(e, sw);
      if (t.vertex(other).kind != VertexKind::net_switch || leaves.count(other) != 0) continue;
      const topo::Link& l = t.link(e);
      const bool forward = l.a == sw;
      up += forward ? l.spec.bandwidth_ab_bytes_per_s : l.spec.bandwidth_ba_bytes_per_s;
      down += forward ? l.spec.bandwidth_ba_bytes_per_s : l.spec.bandwidth_ab_bytes_per_s;
      latency_ns = std::max(latency_ns, l.spec.latency_ns);
      pool.spines.push_back(other);
    }
    std::sort(pool.spines.begin(), pool.spines.end());
    if (pool.spines.empty()) continue;
    sg::SplitDuplexLink* link = root_->create_split_duplex_link(t.vertex(sw).name + "#spines", up);
    link->set_latency(seconds(latency_ns) * k_sim_latency_scale);
    link->seal();
    pool.link = SgLink{link->get_link_up(), link->get_link_down()};
    pool.link.a_to_b->set_bandwidth(up);
    pool.link.b_to_a->set_bandwidth(down);
    pool.link.a_to_b->set_data(&pool_info_);
    pool.link.b_to_a->set_data(&pool_info_);
    ++stats_.links;
  }
  for (const auto& [sw_a, zone_a] : leaves) {
    for (const auto& [sw_b, zone_b] : leaves) {
      if (sw_a == sw_b) continue;
      const Pool& a = pools.at(sw_a);
      const Pool& b = pools.at(sw_b);
      std::vector<sg::LinkInRoute> links;
      if (!a.spines.empty() && a.spines == b.spines) {
        links = {sg::LinkInRoute(a.link.a_to_b), sg::LinkInRoute(b.link.b_to_a)};
      } else {
        Result<topo::Route> r = t.fabric_route(sw_a, sw_b);
        if (!r.ok()) return error(r.status().code(), "sim platform: " + r.status().message());
        links_of_route(*r, links);
      }
      root_->add_route(zone_a->get_netpoint(), zone_b->get_netpoint(), centres.at(sw_a), centres.at(sw_b), links,
                       false);
    }
  }
  return ok_status();
}

Status SimPlatform::build_disks() {
  const topo::Topology& t = *topology_;
  disks_.assign(t.node_count(), {});
  disk_channels_.assign(t.node_count(), {});
  for (NodeId n = 0; n < t.node_count(); ++n) {
    const std::uint32_t count = t.count(n, VertexKind::nvme);
    disks_[n].assign(count, nullptr);
    disk_channels_[n].assign(count, {});
    for (std::uint32_t i = 0; i < count; ++i) {
      Result<VertexId> v = t.device(n, VertexKind::nvme, i);
      if (!v.ok()) continue;
      const auto& vx = t.vertex(*v);
      if (vx.nvme_read_bytes_per_s <= 0 || vx.nvme_write_bytes_per_s <= 0) continue;  // disk() says why
      Result<VertexId> mem = t.device(n, VertexKind::host_memory, vx.numa);
      if (!mem.ok() || local_hosts_[*mem] == nullptr) {
        return error(StatusCode::invalid_argument,
                     "sim platform: NVMe " + vx.name + " has no host memory on NUMA " + std::to_string(vx.numa));
      }
      // The profile's factors go on the disk itself: every use of the drive's
      // rate (SimRuntime's occupancy bytes, a streamed read's first segment) reads it.
      const double read_rate = vx.nvme_read_bytes_per_s * profile_.disk_read_bandwidth_factor;
      const double write_rate = vx.nvme_write_bytes_per_s * profile_.disk_write_bandwidth_factor;
      sg::Disk* disk = local_hosts_[*mem]->create_disk(vx.name, read_rate, write_rate);
      disk->seal();
      disks_[n][i] = disk;
      const std::uint32_t channels = profile_.disk_channels;
      for (std::uint32_t c = 0; channels > 1 && c < channels; ++c) {
        sg::Disk* channel = local_hosts_[*mem]->create_disk(vx.name + "#ch" + std::to_string(c), read_rate / channels,
                                                            write_rate / channels);
        channel->seal();
        disk_channels_[n][i].push_back(channel);
      }
      ++stats_.disks;
    }
  }
  return ok_status();
}

double SimPlatform::latency_factor(const std::vector<sg::Link*>& links, const SimProfile& profile) {
  double raw = 0;
  double scaled = 0;
  for (const sg::Link* l : links) {
    const LinkInfo* i = info(l);
    const double lat = l->get_latency();
    raw += lat;
    scaled += lat * (i != nullptr ? profile.factors(i->link_class).latency_factor : 1.0);
  }
  // The links carry k_sim_latency_scale times their latency: undone here.
  return (raw > 0 ? scaled / raw : 1.0) / k_sim_latency_scale;
}

double SimPlatform::tcp_gamma(const SimProfile& profile) { return profile.tcp_window_bytes * k_sim_latency_scale; }

double SimPlatform::bandwidth_factor(const std::vector<sg::Link*>& links, const SimProfile& profile) {
  double factor = 1.0;
  bool any = false;
  for (const sg::Link* l : links) {
    const LinkInfo* i = info(l);
    if (i == nullptr) continue;
    const double f = profile.factors(i->link_class).bandwidth_factor;
    factor = any ? std::min(factor, f) : f;
    any = true;
  }
  return factor;
}

void SimPlatform::install_factor_callbacks() {
  auto* model = root_->get_network_model();
  model->set_lat_factor_cb([](double, const sg::Host*, const sg::Host*, const std::vector<sg::Link*>& links,
                              const std::unordered_set<sg::NetZone*>&) {
    return g_profile != nullptr ? latency_factor(links, *g_profile) : 1.0 / k_sim_latency_scale;
  });
  model->set_bw_factor_cb([](double, const sg::Host*, const sg::Host*, const std::vector<sg::Link*>& links,
                             const std::unordered_set<sg::NetZone*>&) {
    return g_profile != nullptr ? bandwidth_factor(links, *g_profile) : 1.0;
  });
}

Result<topo::VertexId> SimPlatform::memory_vertex(const MemHandle& handle) const {
  const VertexKind kind = handle.kind == MemKind::gpu ? VertexKind::gpu : VertexKind::host_memory;
  Result<VertexId> v = topology_->device(handle.node, kind, handle.device);
  if (!v.ok()) {
    return error(StatusCode::not_found, "sim: node " + std::to_string(handle.node) + " has no " +
                                            (kind == VertexKind::gpu ? "GPU " : "host memory on NUMA ") +
                                            std::to_string(handle.device) + " for " + handle.to_string());
  }
  return v;
}

sg::Host* SimPlatform::local_host(VertexId memory) const {
  return memory < local_hosts_.size() ? local_hosts_[memory] : nullptr;
}

Result<sg::Host*> SimPlatform::rail_host(VertexId memory, std::uint32_t nic) const {
  const auto& vx = topology_->vertex(memory);
  if (nic == k_no_id) nic = first_nic_[vx.node];
  if (nic == k_no_id) {
    return error(StatusCode::unavailable, "sim: node " + std::to_string(vx.node) + " has no NIC with a network link");
  }
  if (memory >= rail_hosts_.size() || nic >= rail_hosts_[memory].size()) {
    return error(StatusCode::not_found, "sim: node " + std::to_string(vx.node) + " has no NIC " + std::to_string(nic));
  }
  sg::Host* h = rail_hosts_[memory][nic];
  if (h == nullptr) {
    return error(StatusCode::unavailable,
                 "sim: NIC " + std::to_string(nic) + " of node " + std::to_string(vx.node) + " has no network link");
  }
  return h;
}

sg::Host* SimPlatform::copy_host(VertexId memory) const {
  return memory < copy_hosts_.size() ? copy_hosts_[memory] : nullptr;
}

sg::Host* SimPlatform::cpu_host(NodeId node) const {
  Result<VertexId> mem = topology_->device(node, VertexKind::host_memory, 0);
  return mem.ok() ? local_host(*mem) : nullptr;
}

SimPlatform::DriveHosts SimPlatform::drive_hosts(NodeId node, std::uint32_t index) const {
  if (node >= drive_hosts_.size() || index >= drive_hosts_[node].size()) return DriveHosts{};
  return drive_hosts_[node][index];
}

Result<sg::Disk*> SimPlatform::disk(NodeId node, std::uint32_t index) const {
  if (node >= disks_.size() || index >= disks_[node].size()) {
    return error(StatusCode::not_found,
                 "sim: node " + std::to_string(node) + " has no NVMe drive " + std::to_string(index));
  }
  if (disks_[node][index] == nullptr) {
    return error(StatusCode::unavailable, "sim: NVMe drive " + std::to_string(index) + " of node " +
                                              std::to_string(node) + " has no read/write rate in the topology");
  }
  return disks_[node][index];
}

const std::vector<sg::Disk*>& SimPlatform::disk_channels(NodeId node, std::uint32_t index) const {
  static const std::vector<sg::Disk*> none;
  if (node >= disk_channels_.size() || index >= disk_channels_[node].size()) return none;
  return disk_channels_[node][index];
}

std::uint32_t SimPlatform::first_nic(NodeId node) const {
  return node < first_nic_.size() ? first_nic_[node] : k_no_id;
}

const LinkInfo* SimPlatform::info(const sg::Link* link) { return link->get_data<LinkInfo>(); }

std::vector<LinkInfo> SimPlatform::route(const sg::Host* from, const sg::Host* to) const {
  std::vector<sg::Link*> links;
  double latency = 0;
  from->route_to(to, links, &latency);
  std::vector<LinkInfo> out;
  for (const sg::Link* l : links) {
    const LinkInfo* i = info(l);
    if (i != nullptr && i->edge != topo::k_no_edge) out.push_back(*i);
  }
  return out;
}

sg::Link* SimPlatform::link_of(topo::EdgeId edge, bool a_to_b) const {
  if (edge >= links_.size()) return nullptr;
  return a_to_b ? links_[edge].a_to_b : links_[edge].b_to_a;
}

}  // namespace sluice::sim
