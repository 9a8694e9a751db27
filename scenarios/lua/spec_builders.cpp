#include "scenarios/lua/spec_builders.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

#include "core/layout/stripe_pattern.hpp"
#include "core/namespace/namespace_config.hpp"
#include "core/sched/rail_selector.hpp"
#include "core/topology/cluster_builders.hpp"
#include "core/topology/machine_builders.hpp"
#include "core/topology/nvidia_smi_import.hpp"
#include "core/workloads/workload_limits.hpp"
#include "scenarios/lua/config_fields.hpp"
#include "scenarios/lua/field_tables.hpp"
#include "scenarios/lua/script_units.hpp"

namespace sluice::scenario {
namespace {

std::shared_ptr<const topo::Topology> checked(Result<topo::Topology> t, const std::string& what) {
  if (!t.ok()) throw ScriptError(what + ": " + t.status().message());
  return std::make_shared<const topo::Topology>(std::move(t).value());
}

void check(const Status& s, const std::string& what) {
  if (!s.ok()) throw ScriptError(what + ": " + s.message());
}

void merge(BuildInfo& info, const FieldReader& r, const std::string& prefix = "") {
  for (const SweepAxisUse& axis : r.sweeps()) {
    if (!prefix.empty()) {
      throw ScriptError(r.context() + ": " + axis.key + ": a list here cannot be swept over; sweep a field of the " +
                        "object itself (e.g. sweep = { " + axis.key + " = {...} } is not supported inside " + prefix +
                        ")");
    }
    info.sweeps.push_back(axis);
  }
  for (const std::string& k : r.known()) info.known.push_back(prefix.empty() ? k : prefix + "." + k);
}

std::string ms_text(TimeNs ns) { return std::to_string(ns / k_ns_per_ms) + " ms"; }

std::string node_text(const topo::Topology& cluster, NodeId node) {
  return "node " + std::to_string(node) + " (" + cluster.machine_name(node) + ")";
}

void check_node(const topo::Topology& cluster, std::uint64_t node, const std::string& field) {
  if (node >= cluster.node_count()) {
    throw ScriptError(field + ": node " + std::to_string(node) + " does not exist (the cluster has " +
                      std::to_string(cluster.node_count()) + " nodes, 0.." + std::to_string(cluster.node_count() - 1) +
                      ")");
  }
}

proto::ChooserKind chooser_of(const std::string& name) { return value_named(chooser_names(), name); }

// stripe = { chunk = "1MiB", count = 4, chooser = "roundrobin" } of a workload: CreateOptions.
CreateOptions read_create(FieldReader& r, BuildInfo& info) {
  CreateOptions create;
  const ScriptTable* stripe = r.table("stripe");
  if (stripe == nullptr) return create;
  FieldReader s(*stripe, r.context() + " stripe", workload_stripe_fields());
  if (auto v = s.size("chunk")) create.chunk_bytes = *v;
  if (auto v = s.count("count")) create.stripe_count = static_cast<std::uint32_t>(*v);
  if (auto v = s.choice("chooser")) create.chooser = chooser_of(*v);
  s.finish();
  merge(info, s, "stripe");
  return create;
}

// Client placement common to every workload.
struct Placement {
  std::optional<std::vector<std::uint64_t>> nodes;
  std::optional<std::uint64_t> ranks_per_node;  // nullopt with gpus = true: the GPU count
  bool gpus = false;
};

Placement read_placement(FieldReader& r, bool gpus_default) {
  Placement p;
  p.nodes = r.count_list("client_nodes");
  p.gpus = gpus_default;
  const ScriptValue* v = r.get("ranks_per_node");
  if (v != nullptr) {
    if (v->string() != nullptr && *v->string() == "gpus") {
      p.gpus = true;
    } else {
      p.gpus = false;
      p.ranks_per_node = r.count("ranks_per_node");
    }
  }
  return p;
}

ClientPlacement resolve_placement(const Placement& p, const topo::Topology* cluster, const FsBuild* fs,
                                  const std::string& context) {
  ClientPlacement out;
  if (cluster == nullptr) return out;
  if (p.nodes) {
    if (p.nodes->empty()) throw ScriptError(context + ": client_nodes: the list is empty");
    for (std::size_t i = 0; i < p.nodes->size(); ++i) {
      check_node(*cluster, (*p.nodes)[i], context + ": client_nodes[" + std::to_string(i + 1) + "]");
      out.nodes.push_back(static_cast<NodeId>((*p.nodes)[i]));
    }
  } else if (fs != nullptr && !fs->client_nodes.empty()) {
    out.nodes = fs->client_nodes;
  } else {
    for (NodeId n = 0; n < cluster->node_count(); ++n) out.nodes.push_back(n);
  }
  if (p.gpus) {
    std::uint32_t gpus = cluster->count(out.nodes.front(), topo::VertexKind::gpu);
    for (NodeId n : out.nodes) gpus = std::min(gpus, cluster->count(n, topo::VertexKind::gpu));
    out.ranks_per_node = std::max<std::uint32_t>(1, gpus);
  } else {
    out.ranks_per_node = static_cast<std::uint32_t>(p.ranks_per_node.value_or(1));
  }
  return out;
}

std::uint32_t ranks_of(const ClientPlacement& c) {
  return static_cast<std::uint32_t>(c.nodes.size()) * c.ranks_per_node;
}

std::uint64_t per_rank(std::uint64_t total, std::uint32_t ranks) {
  return ranks == 0 ? total : (total + ranks - 1) / ranks;
}

}  // namespace

const std::vector<std::string>& machine_types() {
  static const std::vector<std::string> k{
      "dgx_a100",  "azure_nd40rs_v2", "critical_io_gpu_host", "critical_io_recorder",
      "dgx2_like", "generic",         "import_nvidia_smi"};
  return k;
}
const std::vector<std::string>& fabric_types() {
  static const std::vector<std::string> k{"infiniband", "ethernet"};
  return k;
}
const std::vector<std::string>& fs_types() {
  static const std::vector<std::string> k{"beeond", "beegfs", "lustre_like", "gekkofs_like"};
  return k;
}
const std::vector<std::string>& workload_types() {
  static const std::vector<std::string> k{"file_sweep",       "md_bench", "train_epoch",
                                          "checkpoint_burst", "stage_in", "gpu_stream"};
  return k;
}

topo::GenericMachine read_generic_machine(const ScriptTable& args) {
  const std::string context = "sl.machines.generic";
  FieldReader r(args, context, machine_fields("generic"));
  topo::GenericMachine g;
  read_script_fields(r, g, {{"nic_port_rate_bytes_per_s", [&] {
                               if (auto v = r.number("nic_gbps")) g.nic_port_rate_bytes_per_s = gbps_to_bytes_per_s(*v);
                             }}});
  r.finish();
  if (!r.sweeps().empty()) throw ScriptError(context + ": " + r.sweeps().front().key + ": one value, not a list");
  return g;
}

std::shared_ptr<const topo::Topology> build_machine(const std::string& type, const ScriptTable& args) {
  const std::string context = "sl.machines." + type;
  if (std::find(machine_types().begin(), machine_types().end(), type) == machine_types().end()) {
    throw ScriptError("sl.machines: no machine \"" + type + "\"");
  }
  if (type == "generic") return checked(topo::generic_machine(read_generic_machine(args)), context);
  FieldReader r(args, context, machine_fields(type));
  if (type == "critical_io_recorder") {
    const auto nvme = r.count("nvme");
    r.finish();
    if (!r.sweeps().empty()) throw ScriptError(context + ": nvme: one number, not a list");
    return checked(topo::critical_io_recorder(static_cast<std::uint32_t>(nvme.value_or(k_recorder_default_nvme))),
                   context);
  }
  r.finish();
  if (type == "dgx_a100") return checked(topo::dgx_a100(), context);
  if (type == "azure_nd40rs_v2") return checked(topo::azure_nd40rs_v2(), context);
  if (type == "critical_io_gpu_host") return checked(topo::critical_io_gpu_host(), context);
  if (type == "dgx2_like") return checked(topo::dgx2_like(), context);
  throw ScriptError("sl.machines: no machine \"" + type + "\"");
}

std::shared_ptr<const topo::Topology> build_imported_machine(const std::string& text, const ScriptTable& options) {
  const std::string context = "sl.machines.import_nvidia_smi";
  FieldReader r(options, context, machine_fields("import_nvidia_smi"));
  topo::NvidiaSmiImportOptions o;
  if (auto v = r.count("pcie_gen")) o.pcie_gen = static_cast<int>(*v);
  if (auto v = r.rate("nic_port_rate_bytes_per_s")) o.nic_port_rate_bytes_per_s = *v;
  if (auto v = r.number("nic_gbps")) o.nic_port_rate_bytes_per_s = gbps_to_bytes_per_s(*v);
  if (auto v = r.size("gpu_memory_bytes")) o.gpu_memory_bytes = *v;
  if (auto v = r.size("memory_bytes_per_socket")) o.memory_bytes_per_socket = *v;
  if (auto v = r.rate("memory_bytes_per_s")) o.memory_bytes_per_s = *v;
  if (auto v = r.rate("inter_socket_bytes_per_s")) o.inter_socket_bytes_per_s = *v;
  r.finish();
  return checked(topo::import_nvidia_smi_topo(text, o), context);
}

FabricSpec build_fabric(const std::string& type, const ScriptTable& args) {
  if (std::find(fabric_types().begin(), fabric_types().end(), type) == fabric_types().end()) {
    throw ScriptError("sl.fabric: no fabric \"" + type + "\"");
  }
  FieldReader r(args, "sl.fabric." + type, fabric_fields(type));
  FabricSpec f;
  f.type = type;
  f.link_latency_ns = fabric_default_latency_ns(type);
  if (auto v = r.number("gbps")) f.link_bytes_per_s = gbps_to_bytes_per_s(*v);
  if (auto v = r.rate("rate")) {
    if (f.link_bytes_per_s > 0) r.fail("rate", "give gbps or rate, not both");
    f.link_bytes_per_s = *v;
  }
  if (auto v = r.duration("latency")) f.link_latency_ns = *v;
  r.finish();
  if (!r.sweeps().empty()) {
    throw ScriptError("sl.fabric." + type + ": " + r.sweeps().front().key +
                      ": one value, not a list (to compare fabrics, build one cluster per fabric)");
  }
  if (f.link_latency_ns > topo::k_max_link_latency_ns) r.fail("latency", "more than 1 s is surely a unit mistake");
  return f;
}

namespace {

// The machines of sl.cluster: a list (machines = {...}) or one copied (node =, nodes =).
struct ClusterMachines {
  std::vector<const topo::Topology*> parts;
  std::string names;  // "4 machines", "2 x dgx_a100"
};

ClusterMachines cluster_machines(const ScriptValue* machines, const ScriptObject* node,
                                 const std::optional<std::uint64_t>& nodes) {
  ClusterMachines out;
  if (machines == nullptr) {
    if (node == nullptr) throw ScriptError("sl.cluster: node: missing (e.g. node = sl.machines.dgx_a100())");
    const std::uint64_t n = nodes.value_or(1);
    out.parts.assign(n, node->topology.get());
    out.names = std::to_string(n) + " x " + node->type;
    return out;
  }
  if (node != nullptr) throw ScriptError("sl.cluster: give node (one machine, copied) or machines (a list), not both");
  const ScriptTable* list = machines->table();
  if (list == nullptr || !list->fields.empty() || list->list.empty()) {
    throw ScriptError("sl.cluster: machines: expected a list of machines, not " + machines->type_name());
  }
  for (std::size_t i = 0; i < list->list.size(); ++i) {
    const ScriptObject* m = list->list[i].object();
    if (m == nullptr || m->kind != ObjectKind::machine) {
      throw ScriptError("sl.cluster: machines[" + std::to_string(i + 1) + "]: expected a machine, not " +
                        list->list[i].type_name());
    }
    out.parts.push_back(m->topology.get());
  }
  if (nodes && *nodes != out.parts.size()) {
    throw ScriptError("sl.cluster: nodes = " + std::to_string(*nodes) + " but machines lists " +
                      std::to_string(out.parts.size()));
  }
  if (list->list.size() > topo::k_max_cluster_nodes) throw ScriptError("sl.cluster: machines: too many");
  out.names = std::to_string(out.parts.size()) + " machines";
  return out;
}

// sl.cluster's topology = "star" | "fat_tree" with its fat-tree fields.
struct ClusterShape {
  bool fat_tree = false;
  std::optional<std::uint64_t> nodes_per_leaf;
  std::optional<std::uint64_t> spines;
  std::optional<double> oversubscription;
};

// The machines joined by the fabric into a star or a fat tree.
Result<topo::Topology> connect_machines(const std::vector<const topo::Topology*>& parts, const ClusterShape& shape,
                                        const FabricSpec& fabric) {
  if (!shape.fat_tree && (shape.nodes_per_leaf || shape.spines || shape.oversubscription)) {
    throw ScriptError("sl.cluster: nodes_per_leaf, spines and oversubscription need topology = \"fat_tree\"");
  }
  if (shape.fat_tree) {
    topo::FatTreeOptions o;
    o.nodes_per_leaf = static_cast<std::uint32_t>(shape.nodes_per_leaf.value_or(o.nodes_per_leaf));
    o.spines = static_cast<std::uint32_t>(shape.spines.value_or(o.spines));
    o.oversubscription = shape.oversubscription.value_or(o.oversubscription);
    o.link_bytes_per_s = fabric.link_bytes_per_s;
    o.link_latency_ns = fabric.link_latency_ns;
    return topo::fat_tree_cluster(std::span<const topo::Topology* const>(parts), o);
  }
  topo::StarOptions o;
  o.link_bytes_per_s = fabric.link_bytes_per_s;
  o.link_latency_ns = fabric.link_latency_ns;
  return topo::star_cluster(std::span<const topo::Topology* const>(parts), o);
}

// "2 x dgx_a100, fat tree, infiniband 200 Gb/s" (the fabric only when one was given).
std::string cluster_description(const std::string& names, bool fat_tree, const FabricSpec* fabric) {
  std::string out = names + ", " + (fat_tree ? "fat tree" : "star");
  if (fabric != nullptr) {
    out += ", " + fabric->type;
    if (fabric->link_bytes_per_s > 0) {
      char buf[32];
      std::snprintf(buf, sizeof buf, " %g Gb/s", fabric->link_bytes_per_s * 8 / 1e9);
      out += buf;
    }
  }
  return out;
}

}  // namespace

ClusterBuild build_cluster(const ScriptTable& args) {
  FieldReader r(args, "sl.cluster", cluster_fields());
  ClusterBuild out;
  const auto nodes = r.count("nodes");
  const ScriptObject* node = r.object("node");
  const ScriptValue* machines = r.get("machines");
  const ScriptObject* fabric_obj = r.object("fabric");
  const auto shape_name = r.choice("topology");
  ClusterShape shape;
  shape.nodes_per_leaf = r.count("nodes_per_leaf");
  shape.spines = r.count("spines");
  shape.oversubscription = r.number("oversubscription");
  r.finish();
  merge(out.info, r);

  FabricSpec fabric;
  fabric.link_latency_ns = topo::k_network_link_latency_ns;
  if (fabric_obj != nullptr) fabric = build_fabric(fabric_obj->type, fabric_obj->args);

  const ClusterMachines machine_list = cluster_machines(machines, node, nodes);
  shape.fat_tree = shape_name.value_or("star") == "fat_tree";
  out.topology = checked(connect_machines(machine_list.parts, shape, fabric), "sl.cluster");
  out.description = cluster_description(machine_list.names, shape.fat_tree, fabric_obj != nullptr ? &fabric : nullptr);
  return out;
}

// Buddy groups over the deployment's targets (ids 1, 2, ... in server order,
// then drive order, as FsDeployment gives them), each pair on two different
// servers, as `beegfs-ctl --addmirrorgroup --automatic` pairs them: targets
// are dealt round-robin over the servers (drive 0 of every server, then drive
// 1, ...) and consecutive ones paired.
std::vector<proto::BuddyGroupDesc> pair_buddy_targets(const std::vector<StorageServerSpec>& servers,
                                                      const topo::Topology& cluster, const std::string& context) {
  std::vector<std::vector<TargetId>> ids(servers.size());
  TargetId next = 1;
  std::size_t deepest = 0;
  for (std::size_t s = 0; s < servers.size(); ++s) {
    for (std::size_t d = 0; d < servers[s].nvme.size(); ++d) ids[s].push_back(next++);
    deepest = std::max(deepest, servers[s].nvme.size());
  }
  std::vector<std::pair<TargetId, std::size_t>> dealt;  // (target, server index)
  for (std::size_t d = 0; d < deepest; ++d) {
    for (std::size_t s = 0; s < servers.size(); ++s) {
      if (d < ids[s].size()) dealt.emplace_back(ids[s][d], s);
    }
  }
  if (servers.size() < 2) {
    throw ScriptError(context + ": mirror: buddy mirroring needs storage servers on two nodes at least (there is " +
                      std::to_string(servers.size()) + ")");
  }
  if (dealt.size() % 2 != 0) {
    throw ScriptError(context + ": mirror: " + std::to_string(dealt.size()) +
                      " storage targets cannot be paired into buddy groups (an even number is needed)");
  }
  std::vector<proto::BuddyGroupDesc> groups;
  for (std::size_t i = 0; i + 1 < dealt.size(); i += 2) {
    if (dealt[i].second == dealt[i + 1].second) {
      throw ScriptError(context + ": mirror: target " + std::to_string(dealt[i + 1].first) + " on " +
                        node_text(cluster, servers[dealt[i + 1].second].node) +
                        " has no buddy on another server (give the servers the same number of targets)");
    }
    groups.push_back(
        proto::BuddyGroupDesc{static_cast<GroupId>(groups.size() + 1), dealt[i].first, dealt[i + 1].first});
  }
  return groups;
}

namespace {

// What sl.fs reads besides the FsSpec fields it sets at once: where the
// services go, and what the stripe and mirror tables asked for.
struct FsFields {
  std::optional<std::uint64_t> mgmt_node;
  std::optional<std::uint64_t> meta_servers;
  std::optional<std::vector<std::uint64_t>> meta_nodes;
  std::optional<std::vector<std::uint64_t>> storage_nodes;
  std::optional<std::uint64_t> targets_per_node;
  std::optional<std::vector<std::uint64_t>> client_nodes;
  bool stripe_count_given = false;
  bool mirrored = false;       // storage buddy mirroring
  bool meta_mirrored = false;  // a second server for every metadata shard
};

// mgmt_node, meta_servers, meta_nodes, storage_nodes, targets_per_node, client_nodes.
FsFields read_fs_placement(FieldReader& r) {
  FsFields f;
  f.mgmt_node = r.count("mgmt_node");
  f.meta_servers = r.count("meta_servers");
  f.meta_nodes = r.count_list("meta_nodes");
  f.storage_nodes = r.count_list("storage_nodes");
  f.targets_per_node = r.count("targets_per_node");
  f.client_nodes = r.count_list("client_nodes");
  return f;
}

// stripe = { chunk =, count =, chooser = }: the default layout of new files; true when count was given.
bool read_fs_stripe(FieldReader& r, const std::string& context, FsSpec& fs, BuildInfo& info) {
  const ScriptTable* stripe = r.table("stripe");
  if (stripe == nullptr) return false;
  bool count_given = false;
  FieldReader s(*stripe, context + " stripe", fs_stripe_fields(fs.preset));
  if (auto v = s.size("chunk")) fs.meta.default_chunk_bytes = *v;
  if (auto v = s.count("count")) {
    fs.meta.default_stripe_count = static_cast<std::uint32_t>(*v);
    count_given = true;
  }
  if (auto v = s.choice("chooser")) fs.meta.default_chooser = chooser_of(*v);
  s.finish();
  merge(info, s, "stripe");
  return count_given;
}

// The namespace fields: policy, directory striping and hashing, the mkdir and split rules.
void read_fs_namespace(FieldReader& r, NamespaceConfig& ns) { read_script_fields(r, ns); }

// The services' tunables: GDS, the storage targets' limits, the clients' chunks in flight and rails.
void read_fs_tunables(FieldReader& r, FsSpec& fs) {
  if (auto v = r.choice("gds")) fs.gds = value_named(gds_names(), *v);
  read_script_fields(r, fs.storage_config);
  read_script_fields(r, fs.client, {{"max_inflight_chunks", [&] {
                                       if (auto v = r.count("rail_connections")) {
                                         fs.client.planner.rails.max_connections_per_nic =
                                             static_cast<std::uint32_t>(*v);
                                       }
                                     }}});
}

// mirror = { heartbeat = "500ms", offline_after = "4s" }: storage buddy
// mirroring (BeeGFS buddy groups, paired by place_fs once the targets are
// known); sets f.mirrored and f.meta_mirrored.
void read_fs_mirror(FieldReader& r, const std::string& context, FsSpec& fs, BuildInfo& info, FsFields& f) {
  const ScriptTable* mirror = r.table("mirror");
  if (mirror == nullptr) return;
  FieldReader m(*mirror, context + " mirror", fs_mirror_fields());
  f.mirrored = m.boolean("storage").value_or(k_lua_mirror_storage);
  // metadata = true: every shard gets a second server (BeeGFS `beegfs-ctl --mirrormd`).
  f.meta_mirrored = m.boolean("metadata").value_or(k_lua_mirror_metadata);
  const TimeNs heartbeat = m.duration("heartbeat").value_or(k_lua_mirror_heartbeat_ns);
  const TimeNs probably = m.duration("probably_offline_after").value_or(k_lua_mirror_probably_offline_ns);
  const TimeNs offline = m.duration("offline_after").value_or(k_lua_mirror_offline_ns);
  m.finish();
  merge(info, m, "mirror");
  if (heartbeat <= 0) throw ScriptError(context + ": mirror.heartbeat: must be longer than 0");
  if (probably <= heartbeat) {
    throw ScriptError(context + ": mirror.probably_offline_after: must be longer than the heartbeat (" +
                      ms_text(heartbeat) + ")");
  }
  if (offline < probably) {
    throw ScriptError(context + ": mirror.offline_after: must be at least probably_offline_after (" +
                      ms_text(probably) + ")");
  }
  if (f.mirrored || f.meta_mirrored) {
    fs.mgmt.check_interval_ns = heartbeat;
    fs.mgmt.probably_offline_after_ns = probably;
    fs.mgmt.offline_after_ns = offline;
    fs.storage_config.heartbeat_interval_ns = heartbeat;
  }
  if (f.mirrored) {
    fs.storage_config.mirror.enabled = true;
    fs.meta.mirror_file_data = true;
  }
  if (f.meta_mirrored) {
    fs.mgmt.meta_mirror = true;
    fs.meta.mirror.enabled = true;
    fs.meta.mirror.heartbeat_interval_ns = heartbeat;
  }
}

// The placement fields against each other (no cluster needed).
void check_fs_placement(const FsFields& f, const std::string& context) {
  if (f.meta_servers && f.meta_nodes && *f.meta_servers != f.meta_nodes->size()) {
    throw ScriptError(context + ": meta_servers = " + std::to_string(*f.meta_servers) + " but meta_nodes lists " +
                      std::to_string(f.meta_nodes->size()) + " nodes");
  }
  if (f.meta_nodes && f.meta_nodes->empty()) throw ScriptError(context + ": meta_nodes: the list is empty");
  if (f.storage_nodes && f.storage_nodes->empty()) throw ScriptError(context + ": storage_nodes: the list is empty");
}

// Without a cluster (sl.fs.*{} time): the namespace over the shards the fields name.
void set_unplaced_namespace(FsSpec& fs, NamespaceConfig ns, const FsFields& f, const std::string& context) {
  ns.shard_count = static_cast<std::uint32_t>(f.meta_nodes ? f.meta_nodes->size() : f.meta_servers.value_or(1));
  if (ns.policy == MetaPolicy::striped_dir && ns.dir_stripe_count > ns.shard_count) {
    ns.shard_count = ns.dir_stripe_count;
  }
  check(validate_config(ns), context);
  fs.meta.ns = ns;
  fs.client.ns = ns;
}

// The storage server nodes: storage_nodes, else every node with a drive
// (every_node presets), else the GPU-less nodes with NVMe drives.
std::vector<NodeId> storage_servers(const topo::Topology& cluster,
                                    const std::optional<std::vector<std::uint64_t>>& storage_nodes, bool every_node,
                                    const std::string& context) {
  const NodeId nodes = cluster.node_count();
  std::vector<NodeId> servers;
  if (storage_nodes) {
    for (std::size_t i = 0; i < storage_nodes->size(); ++i) {
      check_node(cluster, (*storage_nodes)[i], context + ": storage_nodes[" + std::to_string(i + 1) + "]");
      const auto n = static_cast<NodeId>((*storage_nodes)[i]);
      if (std::find(servers.begin(), servers.end(), n) != servers.end()) {
        throw ScriptError(context + ": storage_nodes: node " + std::to_string(n) + " is listed twice");
      }
      servers.push_back(n);
    }
  } else if (every_node) {
    // Every node with a drive (a node without NVMe has nothing to give).
    for (NodeId n = 0; n < nodes; ++n) {
      if (cluster.count(n, topo::VertexKind::nvme) > 0) servers.push_back(n);
    }
    if (servers.empty()) throw ScriptError(context + ": no node of the cluster has an NVMe drive for a storage target");
  } else {
    for (NodeId n = 0; n < nodes; ++n) {
      if (cluster.count(n, topo::VertexKind::gpu) == 0 && cluster.count(n, topo::VertexKind::nvme) > 0) {
        servers.push_back(n);
      }
    }
    if (servers.empty()) {
      throw ScriptError(context +
                        ": storage_nodes: missing, and no node of the cluster is a GPU-less machine with "
                        "NVMe drives to serve as one");
    }
  }
  return servers;
}

// A storage server on each server node, over its first targets_per_node NVMe drives (default: all).
void add_storage_servers(FsSpec& fs, const topo::Topology& cluster, const std::vector<NodeId>& servers,
                         const std::optional<std::uint64_t>& targets_per_node, const std::string& context) {
  for (NodeId n : servers) {
    const std::uint32_t drives = cluster.count(n, topo::VertexKind::nvme);
    if (drives == 0) {
      throw ScriptError(context + ": " + node_text(cluster, n) + " has no NVMe drive to serve as a storage target");
    }
    if (targets_per_node && *targets_per_node > drives) {
      throw ScriptError(context + ": targets_per_node = " + std::to_string(*targets_per_node) + " but " +
                        node_text(cluster, n) + " has " + std::to_string(drives) + " NVMe drive(s)");
    }
    StorageServerSpec server;
    server.node = n;
    const std::uint32_t used = static_cast<std::uint32_t>(targets_per_node.value_or(drives));
    for (std::uint32_t d = 0; d < used; ++d) server.nvme.push_back(d);
    fs.storage.push_back(server);
  }
}

// Metadata shards: explicit nodes, or meta_servers spread from the first candidate node.
void place_meta_shards(FsSpec& fs, const topo::Topology& cluster, const FsFields& f,
                       const std::vector<NodeId>& meta_candidates, const std::string& type,
                       const std::string& context) {
  const NodeId nodes = cluster.node_count();
  if (f.meta_nodes) {
    for (std::size_t i = 0; i < f.meta_nodes->size(); ++i) {
      check_node(cluster, (*f.meta_nodes)[i], context + ": meta_nodes[" + std::to_string(i + 1) + "]");
      fs.meta_nodes.push_back(static_cast<NodeId>((*f.meta_nodes)[i]));
    }
  } else {
    const std::uint64_t shards = f.meta_servers.value_or(type == "gekkofs_like" ? nodes : 1);
    for (std::uint64_t i = 0; i < shards; ++i) fs.meta_nodes.push_back(meta_candidates[i % meta_candidates.size()]);
  }
}

// The client nodes: client_nodes, else every node (every_node presets), else
// the nodes that serve nothing (every node when all of them serve).
std::vector<NodeId> fs_client_nodes(const topo::Topology& cluster,
                                    const std::optional<std::vector<std::uint64_t>>& client_nodes, bool every_node,
                                    const std::vector<NodeId>& servers, const FsSpec& fs, const std::string& context) {
  const NodeId nodes = cluster.node_count();
  std::vector<NodeId> clients;
  if (client_nodes) {
    if (client_nodes->empty()) throw ScriptError(context + ": client_nodes: the list is empty");
    for (std::size_t i = 0; i < client_nodes->size(); ++i) {
      check_node(cluster, (*client_nodes)[i], context + ": client_nodes[" + std::to_string(i + 1) + "]");
      clients.push_back(static_cast<NodeId>((*client_nodes)[i]));
    }
  } else if (every_node) {
    for (NodeId n = 0; n < nodes; ++n) clients.push_back(n);
  } else {
    std::set<NodeId> busy(servers.begin(), servers.end());
    busy.insert(fs.meta_nodes.begin(), fs.meta_nodes.end());
    busy.insert(fs.mgmt_node);
    for (NodeId n = 0; n < nodes; ++n) {
      if (busy.count(n) == 0) clients.push_back(n);
    }
    if (clients.empty()) {
      for (NodeId n = 0; n < nodes; ++n) clients.push_back(n);
    }
  }
  return clients;
}

// The second server of each shard on the next candidate node that is not
// the shard's own (as `beegfs-ctl --addmirrorgroup --automatic` pairs
// metadata nodes on different hosts).
void pair_meta_mirrors(FsSpec& fs, const std::vector<NodeId>& meta_candidates, const topo::Topology& cluster,
                       const std::string& context) {
  std::vector<NodeId> candidates = meta_candidates;
  for (NodeId n : fs.meta_nodes) {
    if (std::find(candidates.begin(), candidates.end(), n) == candidates.end()) candidates.push_back(n);
  }
  for (std::size_t shard = 0; shard < fs.meta_nodes.size(); ++shard) {
    const NodeId primary = fs.meta_nodes[shard];
    auto at = std::find(candidates.begin(), candidates.end(), primary);
    const std::size_t from = static_cast<std::size_t>(at - candidates.begin());
    std::optional<NodeId> buddy;
    for (std::size_t k = 1; k <= candidates.size() && !buddy; ++k) {
      const NodeId n = candidates[(from + k) % candidates.size()];
      if (n != primary) buddy = n;
    }
    if (!buddy) {
      throw ScriptError(context + ": mirror.metadata: shard " + std::to_string(shard) + " on " +
                        node_text(cluster, primary) +
                        " has no other node for its second server (metadata mirroring needs two nodes)");
    }
    fs.meta_mirror_nodes.push_back(*buddy);
  }
}

// With the cluster: the services on its nodes (storage servers, metadata
// shards, mgmt, clients, the mirrors' pairs), then the namespace over the shards.
void place_fs(FsBuild& out, NamespaceConfig ns, const topo::Topology& cluster, const FsFields& f,
              const std::string& type, const std::string& context) {
  FsSpec& fs = out.spec;
  const bool every_node = fs_preset(type).every_node;
  const NodeId nodes = cluster.node_count();
  const std::vector<NodeId> servers = storage_servers(cluster, f.storage_nodes, every_node, context);
  add_storage_servers(fs, cluster, servers, f.targets_per_node, context);
  std::vector<NodeId> meta_candidates;
  if (every_node) {
    for (NodeId n = 0; n < nodes; ++n) meta_candidates.push_back(n);
  } else {
    meta_candidates = servers;
  }
  place_meta_shards(fs, cluster, f, meta_candidates, type, context);
  if (f.mgmt_node) {
    check_node(cluster, *f.mgmt_node, context + ": mgmt_node");
    fs.mgmt_node = static_cast<NodeId>(*f.mgmt_node);
  } else {
    fs.mgmt_node = every_node ? 0 : servers.front();
  }
  out.client_nodes = fs_client_nodes(cluster, f.client_nodes, every_node, servers, fs, context);
  std::uint32_t targets = 0;
  for (const StorageServerSpec& s : fs.storage) targets += static_cast<std::uint32_t>(s.nvme.size());
  if (f.mirrored) fs.mgmt.buddy_groups = pair_buddy_targets(fs.storage, cluster, context);
  if (f.meta_mirrored) pair_meta_mirrors(fs, meta_candidates, cluster, context);
  if (type == "gekkofs_like" && !f.stripe_count_given) {
    fs.meta.default_stripe_count = std::min<std::uint32_t>(targets, k_max_stripe_count);
  }
  ns.shard_count = static_cast<std::uint32_t>(fs.meta_nodes.size());
  if (ns.policy == MetaPolicy::striped_dir && ns.dir_stripe_count > ns.shard_count) {
    throw ScriptError(context + ": dir_stripe_count = " + std::to_string(ns.dir_stripe_count) + " but there are " +
                      std::to_string(ns.shard_count) + " metadata shards");
  }
  check(validate_config(ns), context);
  fs.policy = ns.policy;
  fs.meta.ns = ns;
  fs.client.ns = ns;
}

}  // namespace

FsBuild build_fs(const std::string& type, const ScriptTable& args, const topo::Topology* cluster) {
  const std::string context = "sl.fs." + type;
  if (std::find(fs_types().begin(), fs_types().end(), type) == fs_types().end()) {
    throw ScriptError("sl.fs: no file system \"" + type + "\"");
  }
  FieldReader r(args, context, fs_fields(type));
  FsBuild out;
  FsSpec& fs = out.spec;
  fs.preset = type;
  const FsPreset preset = fs_preset(type);
  StripeFlavor flavor = preset.flavor;
  fs.meta.default_chunk_bytes = preset.chunk_bytes;
  fs.meta.default_stripe_count = preset.stripe_count;
  fs.meta.default_chooser = preset.chooser;
  fs.storage_config.buffered_reads = preset.buffered_reads;
  NamespaceConfig ns;
  ns.policy = preset.policy;

  FsFields f = read_fs_placement(r);
  f.stripe_count_given = read_fs_stripe(r, context, fs, out.info);
  if (auto v = r.choice("flavor")) flavor = value_named(stripe_flavor_names(), *v);
  read_fs_namespace(r, ns);
  read_fs_tunables(r, fs);
  read_fs_mirror(r, context, fs, out.info, f);
  r.finish();
  merge(out.info, r);

  fs.meta.stripe_flavor = flavor;
  fs.client.stripe_flavor = flavor;
  check(StripePattern::validate(flavor, fs.meta.default_chunk_bytes, {0}), context + ": stripe.chunk");
  if (ns.policy == MetaPolicy::path_hash) ns.dir_hash = DirHashKind::fnv_1a_64;
  if (ns.policy == MetaPolicy::dir_owner) ns.dir_hash = DirHashKind::none;
  check_fs_placement(f, context);
  if (cluster == nullptr) {
    set_unplaced_namespace(fs, ns, f, context);
  } else {
    place_fs(out, ns, *cluster, f, type, context);
  }
  return out;
}

namespace {

SweepPhase sweep_phase_of(const std::string& n) { return value_named(sweep_phase_names(), n); }

// op = {...}: the measured operations, with mkdir, delete and rmdir around them (instead of phases).
void read_sweep_op(FieldReader& r, FileSweepConfig& c) {
  auto v = r.choice_list("op");
  if (!v) return;
  if (r.get("phases") != nullptr) r.fail("op", "give op (the measured operations) or phases (every phase), not both");
  c.phases = {SweepPhase::mkdir};
  for (const std::string& n : *v) c.phases.push_back(sweep_phase_of(n));
  if (std::find(v->begin(), v->end(), "delete") == v->end()) c.phases.push_back(SweepPhase::delete_files);
  c.phases.push_back(SweepPhase::rmdir);
}

// The fields of sl.workload.file_sweep (an elbencho-like sweep); files = N splits N over the ranks.
FileSweepConfig read_file_sweep(FieldReader& r, BuildInfo& info, std::uint32_t ranks) {
  FileSweepConfig c;
  read_script_fields(r, c,
                     {{"files_per_rank",
                       [&] {
                         if (auto v = r.count("files")) c.files_per_rank = per_rank(*v, ranks);
                       }},
                      {"file_bytes",
                       [&] {
                         if (auto v = r.size("size")) c.file_bytes = *v;
                       }},
                      {"block_bytes",
                       [&] {
                         if (auto v = r.size("block")) c.block_bytes = *v;
                         // elbencho: a block is at most the file
                         if (c.file_bytes > 0 && c.block_bytes > c.file_bytes) c.block_bytes = c.file_bytes;
                       }},
                      {"phases", [&] {
                         read_sweep_op(r, c);
                         c.create = read_create(r, info);
                       }}});
  return c;
}

// The fields of sl.workload.md_bench (metadata operations); files = N splits N over the ranks.
MdBenchConfig read_md_bench(FieldReader& r, BuildInfo& info, std::uint32_t ranks) {
  MdBenchConfig c;
  read_script_fields(r, c,
                     {{"files_per_rank",
                       [&] {
                         if (auto v = r.count("files")) c.files_per_rank = per_rank(*v, ranks);
                       }},
                      {"remove_dirs", [&] { c.create = read_create(r, info); }}});
  return c;
}

// The fields of a workload whose config lists them all but its stripe table.
template <class Config>
Config read_workload_fields(FieldReader& r, BuildInfo& info) {
  Config c;
  read_script_fields(r, c, {{"pattern_seed", [&] { c.create = read_create(r, info); }}});
  return c;
}

// The fields of sl.workload.checkpoint_burst; the stripe flavor defaults to the file system's.
CheckpointConfig read_checkpoint_burst(FieldReader& r, BuildInfo& info, const FsBuild* fs) {
  CheckpointConfig c;
  if (fs != nullptr) c.stripe_flavor = fs->spec.meta.stripe_flavor;
  read_script_fields(r, c, {{"pattern_seed", [&] {
                               c.create = read_create(r, info);
                               if (auto v = r.choice("stripe_flavor")) {
                                 c.stripe_flavor = value_named(stripe_flavor_names(), *v);
                               }
                               if (auto v = r.count_list("known_targets")) {
                                 for (std::uint64_t t : *v) c.known_targets.push_back(static_cast<std::uint32_t>(t));
                               }
                             }}});
  return c;
}

}  // namespace

WorkloadBuild build_workload(const std::string& type, const ScriptTable& args, const topo::Topology* cluster,
                             const FsBuild* fs) {
  const std::string context = "sl.workload." + type;
  if (std::find(workload_types().begin(), workload_types().end(), type) == workload_types().end()) {
    throw ScriptError("sl.workload: no workload \"" + type + "\"");
  }
  FieldReader r(args, context, workload_fields(type));
  WorkloadBuild out;
  WorkloadSpec& w = out.spec;
  w.label = r.text("label").value_or(type);
  const bool gpu_ranks = type == "train_epoch" || type == "checkpoint_burst" || type == "gpu_stream";
  const Placement placement = read_placement(r, gpu_ranks);
  w.clients = resolve_placement(placement, cluster, fs, context);
  const std::uint32_t ranks = ranks_of(w.clients);
  // Every field read: unknown ones refused, the sweep axes noted, then the whole config checked.
  auto finish = [&](const Status& valid) {
    r.finish();
    merge(out.info, r);
    check(valid, context);
  };

  if (type == "file_sweep") {
    const FileSweepConfig c = read_file_sweep(r, out.info, ranks);
    finish(FileSweep::validate(c));
    w.config = c;
  } else if (type == "md_bench") {
    const MdBenchConfig c = read_md_bench(r, out.info, ranks);
    finish(MdBench::validate(c));
    w.config = c;
  } else if (type == "train_epoch") {
    const TrainEpochConfig c = read_workload_fields<TrainEpochConfig>(r, out.info);
    finish(TrainEpoch::validate(c));
    w.config = c;
  } else if (type == "checkpoint_burst") {
    const CheckpointConfig c = read_checkpoint_burst(r, out.info, fs);
    finish(CheckpointBurst::validate(c));
    w.config = c;
  } else if (type == "stage_in") {
    const StageInConfig c = read_workload_fields<StageInConfig>(r, out.info);
    finish(StageIn::validate(c));
    w.config = c;
  } else if (type == "gpu_stream") {
    const StreamConfig c = read_workload_fields<StreamConfig>(r, out.info);
    finish(GpuStream::validate(c));
    w.config = c;
  } else {
    throw ScriptError("sl.workload: no workload \"" + type + "\"");
  }
  return out;
}

}  // namespace sluice::scenario
