#include "scenarios/deploy/cluster_config.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <type_traits>

#include "base/json_text.hpp"
#include "core/common/assert.hpp"

namespace sluice::emulate {
namespace {

constexpr std::array<Role, 5> k_roles = {Role::mgmt, Role::meta, Role::storage, Role::client, Role::meta_mirror};
constexpr const char* k_role_names = "mgmt, meta, storage, client, meta_mirror";

// A fault's JSON key for the role of the service it kills.
std::string fault_key(Role role) { return "kill_" + std::string(to_string(role)) + "_node"; }
constexpr std::array<SweepPhase, 6> k_sweep_phases = {SweepPhase::mkdir, SweepPhase::write,        SweepPhase::read,
                                                      SweepPhase::stat,  SweepPhase::delete_files, SweepPhase::rmdir};

Status bad(const std::string& where, const std::string& what) {
  return error(StatusCode::invalid_argument, "cluster config: " + where + ": " + what);
}

// Longest string quoted back in an error message.
constexpr std::size_t k_max_quoted_chars = 40;
// Integers travel through a double only up to 2^53: beyond it a float is not
// an exact integer any more.
constexpr double k_max_exact_double = 9007199254740992.0;

// A JSON value as an error message shows it: numbers and booleans as
// written, strings quoted (cut), containers by kind. Never a whole dump: a
// deep or huge document must not make a huge message.
std::string quote_cut(const std::string& text) {
  if (text.size() <= k_max_quoted_chars) return "\"" + text + "\"";
  return "\"" + text.substr(0, k_max_quoted_chars) + "...\"";
}

std::string describe(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::object: return "an object";
    case nlohmann::json::value_t::array: return "an array";
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::string: return "the string " + quote_cut(v.get_ref<const std::string&>());
    default: return v.dump();  // a number or a boolean: short, and it cannot throw
  }
}

// `v` as an integer of type T: a JSON integer in T's range, or a float with
// no fractional part inside T's range and +-2^53 (1e3 is 1000; 1.7, 1e30,
// NaN are errors). Anything else (a string "3", a boolean) is an error too.
// The error names `path` and T's range.
template <typename T>
Status read_integer(const nlohmann::json& v, const std::string& path, T& out) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
  using Limits = std::numeric_limits<T>;
  const auto wrong = [&] {
    return bad(path, "expected an integer in " + std::to_string(Limits::min()) + ".." + std::to_string(Limits::max()) +
                         ", got " + describe(v));
  };
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(Limits::max())) return wrong();
    out = static_cast<T>(u);
    return ok_status();
  }
  if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (std::is_unsigned_v<T>
            ? i < 0
            : (i < static_cast<std::int64_t>(Limits::min()) || i > static_cast<std::int64_t>(Limits::max()))) {
      return wrong();
    }
    out = static_cast<T>(i);
    return ok_status();
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d) || std::trunc(d) != d || std::fabs(d) > k_max_exact_double ||
        d < static_cast<double>(Limits::min()) || d > static_cast<double>(Limits::max())) {
      return wrong();
    }
    out = static_cast<T>(d);  // exact: integral, in range and below 2^53
    return ok_status();
  }
  return wrong();
}

Status read_value(const nlohmann::json& v, const std::string& path, std::string& out) {
  if (!v.is_string()) return bad(path, "expected a string, got " + describe(v));
  out = v.get_ref<const std::string&>();
  return ok_status();
}

Status read_value(const nlohmann::json& v, const std::string& path, bool& out) {
  if (!v.is_boolean()) return bad(path, "expected true or false, got " + describe(v));
  out = v.get<bool>();
  return ok_status();
}

template <typename T>
requires std::is_integral_v<T> Status read_value(const nlohmann::json& v, const std::string& path, T& out) {
  return read_integer(v, path, out);
}

// An array, every element read as T with its index in the path ("nodes[3].targets[1]").
template <typename T>
Status read_value(const nlohmann::json& v, const std::string& path, std::vector<T>& out) {
  if (!v.is_array()) return bad(path, "expected an array, got " + describe(v));
  std::vector<T> items(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (Status st = read_value(v[i], path + "[" + std::to_string(i) + "]", items[i]); !st.ok()) return st;
  }
  out = std::move(items);
  return ok_status();
}

// Strict object reading: every key read is remembered, leftovers are errors.
// Every value is checked for its type and range before it is stored (issue
// 24: node id 4294967297 became 1, target 1.7 became 1, 1e30 became 0), and
// every error names the value's path; no nlohmann exception escapes.
class ObjectReader {
 public:
  // `where`: the object's path ("nodes[2]"); "" for the document itself.
  ObjectReader(const nlohmann::json& json, std::string where) : json_(json), where_(std::move(where)) {
    if (!json_.is_object()) status_ = bad(name(), "expected an object, got " + describe(json_));
  }

  template <typename T>
  void read(const char* key, T& out) {
    const nlohmann::json* value = raw(key);
    if (value == nullptr) return;
    if (Status st = read_value(*value, path(key), out); !st.ok()) status_ = std::move(st);
  }
  const nlohmann::json* raw(const char* key) {
    seen_.insert(key);
    if (!status_.ok() || !json_.is_object()) return nullptr;
    auto it = json_.find(key);
    return it == json_.end() ? nullptr : &*it;
  }
  Status finish() {
    if (!status_.ok() || !json_.is_object()) return status_;
    for (const auto& [key, value] : json_.items()) {
      if (!seen_.contains(key)) return bad(name(), "unknown key " + quote_cut(key));
    }
    return ok_status();
  }
  void fail(Status st) {
    if (status_.ok()) status_ = std::move(st);
  }
  const Status& status() const { return status_; }

 private:
  std::string path(const char* key) const { return where_.empty() ? std::string(key) : where_ + "." + key; }
  std::string name() const { return where_.empty() ? "the document" : where_; }

  const nlohmann::json& json_;
  std::string where_;
  std::set<std::string, std::less<>> seen_;
  Status status_;
};

Result<SweepPhase> parse_phase(std::string_view text) {
  for (SweepPhase p : k_sweep_phases) {
    if (to_string(p) == text) return p;
  }
  return bad("workload.phases",
             "unknown phase \"" + std::string(text) + "\" (mkdir, write, read, stat, delete, rmdir)");
}

}  // namespace

std::string_view to_string(Role role) {
  switch (role) {
    case Role::mgmt: return "mgmt";
    case Role::meta: return "meta";
    case Role::storage: return "storage";
    case Role::client: return "client";
    case Role::meta_mirror: return "meta_mirror";
  }
  return "unknown";
}

Result<Role> parse_role(std::string_view text) {
  for (Role r : k_roles) {
    if (to_string(r) == text) return r;
  }
  return bad("roles", "unknown role \"" + std::string(text) + "\" (" + k_role_names + ")");
}

bool NodeSpec::has(Role role) const { return std::find(roles.begin(), roles.end(), role) != roles.end(); }

const NodeSpec* ClusterConfig::node(NodeId id) const {
  for (const NodeSpec& n : nodes) {
    if (n.id == id) return &n;
  }
  return nullptr;
}

std::uint32_t ClusterConfig::client_count() const {
  return static_cast<std::uint32_t>(
      std::count_if(nodes.begin(), nodes.end(), [](const NodeSpec& n) { return n.has(Role::client); }));
}

std::vector<NodeId> ClusterConfig::client_nodes_of(std::size_t w) const {
  if (w > 0) return w <= later_workloads.size() ? later_workloads[w - 1].client_nodes : std::vector<NodeId>{};
  if (!workload.client_nodes.empty()) return workload.client_nodes;
  std::vector<NodeId> ids;
  for (const NodeSpec& n : nodes) {
    if (n.has(Role::client)) ids.push_back(n.id);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::uint32_t ClusterConfig::ranks_per_client_of(std::size_t w) const {
  if (w == 0) return workload.ranks_per_client;
  return w <= later_workloads.size() ? later_workloads[w - 1].ranks_per_client : 0;
}

std::uint32_t ClusterConfig::storage_target_count() const {
  std::uint32_t count = 0;
  for (const NodeSpec& n : nodes) count += static_cast<std::uint32_t>(n.targets.size());
  return count;
}

std::uint32_t ClusterConfig::stripe_count() const {
  return workload.stripe_count > 0 ? workload.stripe_count : storage_target_count();
}

Result<ClusterConfig> default_cluster(std::uint32_t nodes) {
  if (nodes < 2 || nodes > k_max_cluster_nodes) {
    return bad("nodes", std::to_string(nodes) + " nodes; a cluster has 2.." + std::to_string(k_max_cluster_nodes) +
                            " (node 0 serves mgmt, meta and the client, the others storage)");
  }
  ClusterConfig c;
  for (NodeId id = 0; id < nodes; ++id) {
    NodeSpec n;
    n.id = id;
    if (id == 0) {
      n.roles = {Role::mgmt, Role::meta, Role::client};
    } else {
      n.roles = {Role::storage};
      n.targets = {id};
    }
    c.nodes.push_back(std::move(n));
  }
  c.workload.sweep.phases = {SweepPhase::mkdir, SweepPhase::write, SweepPhase::read, SweepPhase::delete_files,
                             SweepPhase::rmdir};
  c.workload.sweep.files_per_rank = 8;
  c.workload.sweep.file_bytes = 4 * k_mib;
  c.workload.sweep.block_bytes = 1 * k_mib;
  c.workload.sweep.threads = 4;
  c.workload.sweep.pattern_data = true;
  return c;
}

namespace {

// validate's part for the workload, on a cluster of `targets` storage targets.
Status validate_workload(const ClusterWorkload& w, std::size_t targets) {
  if (w.chunk_bytes == 0) return bad("workload.chunk_bytes", "must be > 0");
  if (w.mounted() && w.ranks_per_client != 1) {
    return bad("workload.ranks_per_client", "a mount serves one client per node");
  }
  if (w.stripe_count > targets) {
    return bad("workload.stripe_count",
               std::to_string(w.stripe_count) + " is more than the " + std::to_string(targets) + " targets");
  }
  // The sweep's own check (root_dir, sizes), named as the config's.
  if (Status st = FileSweep::validate(w.sweep); !st.ok()) return bad("workload", st.message());
  return ok_status();
}

// validate's part for which nodes run each workload's ranks.
Status validate_client_placement(const ClusterConfig& c) {
  if (c.workload_count() > k_max_cluster_workloads) {
    return bad("later_workloads", std::to_string(c.later_workloads.size()) + " later workloads; at most " +
                                      std::to_string(k_max_cluster_workloads - 1));
  }
  if (c.workload.mounted() && !c.later_workloads.empty()) return bad("later_workloads", "a mount is the only workload");
  std::set<NodeId> placed;
  for (std::size_t w = 0; w < c.workload_count(); ++w) {
    const std::string where = w == 0 ? std::string("workload") : "later_workloads[" + std::to_string(w - 1) + "]";
    const std::uint32_t per = c.ranks_per_client_of(w);
    if (per == 0 || per > k_max_ranks_per_client) {
      return bad(where + ".ranks_per_client",
                 std::to_string(per) + " is outside 1.." + std::to_string(k_max_ranks_per_client));
    }
    const std::vector<NodeId> nodes = c.client_nodes_of(w);
    if (nodes.empty()) return bad(where + ".client_nodes", "no client node");
    std::set<NodeId> seen;
    for (NodeId id : nodes) {
      const NodeSpec* n = c.node(id);
      if (n == nullptr || !n->has(Role::client)) {
        return bad(where + ".client_nodes", "node " + std::to_string(id) + " has no client role");
      }
      if (!seen.insert(id).second) return bad(where + ".client_nodes", "node " + std::to_string(id) + " repeated");
      placed.insert(id);
    }
  }
  for (const NodeSpec& n : c.nodes) {
    if (n.has(Role::client) && !placed.contains(n.id)) {
      return bad("nodes[" + std::to_string(n.id) + "]", "a client node that runs no workload's ranks");
    }
  }
  return ok_status();
}

// validate's part for mirror and faults.
Status validate_meta_mirrors(const ClusterConfig& c) {
  std::set<NodeId> mirrored;
  std::size_t metas = 0;
  for (const NodeSpec& n : c.nodes) {
    if (n.has(Role::meta)) ++metas;
    if (!n.has(Role::meta_mirror)) continue;
    const std::string where = "nodes[" + std::to_string(n.id) + "].meta_mirror_of";
    if (!c.mirror.metadata) return bad(where, "a meta_mirror node needs mirror.metadata");
    const NodeSpec* primary = c.node(n.meta_mirror_of);
    if (primary == nullptr || !primary->has(Role::meta) || primary->id == n.id) {
      return bad(where, "node " + std::to_string(n.meta_mirror_of) + " is not another node's metadata server");
    }
    if (!mirrored.insert(n.meta_mirror_of).second) {
      return bad(where, "the shard of node " + std::to_string(n.meta_mirror_of) + " has two second servers");
    }
  }
  if (c.mirror.metadata && mirrored.size() != metas) {
    return bad("mirror.metadata", std::to_string(mirrored.size()) + " of the " + std::to_string(metas) +
                                      " metadata servers have a meta_mirror node; every shard needs one");
  }
  return ok_status();
}

Status validate_mirror_and_faults(const ClusterConfig& c) {
  if (c.mirror.storage || c.mirror.metadata) {
    if (c.mirror.heartbeat_ms == 0 || c.mirror.probably_offline_ms <= c.mirror.heartbeat_ms ||
        c.mirror.offline_ms < c.mirror.probably_offline_ms) {
      return bad("mirror", "needs 0 < heartbeat_ms < probably_offline_ms <= offline_ms");
    }
  }
  if (c.mirror.storage) {
    if (Result<std::vector<proto::BuddyGroupDesc>> g = buddy_groups(c); !g.ok()) return g.status();
  }
  if (Status st = validate_meta_mirrors(c); !st.ok()) return st;
  for (std::size_t i = 0; i < c.faults.size(); ++i) {
    const ClusterFault& f = c.faults[i];
    const NodeSpec* n = c.node(f.node);
    if (n == nullptr || !n->has(f.role)) {
      return bad("faults[" + std::to_string(i) + "]." + fault_key(f.role),
                 "node " + std::to_string(f.node) + " has no " + std::string(to_string(f.role)) + " service");
    }
  }
  return ok_status();
}

}  // namespace

Status validate(const ClusterConfig& c) {
  if (c.nodes.empty() || c.nodes.size() > k_max_cluster_nodes) {
    return bad("nodes",
               std::to_string(c.nodes.size()) + " nodes; 1.." + std::to_string(k_max_cluster_nodes) + " allowed");
  }
  if (c.run_id.empty() || c.run_id.size() > 64 || !std::all_of(c.run_id.begin(), c.run_id.end(), [](char ch) {
        return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '-' || ch == '_';
      })) {
    return bad("run_id", "\"" + c.run_id + "\" must be 1..64 characters of [A-Za-z0-9_-]");
  }
  if (c.rails_per_node == 0 || c.rails_per_node > k_max_node_rails) {
    return bad("rails_per_node", std::to_string(c.rails_per_node) + " not in 1.." + std::to_string(k_max_node_rails));
  }
  if (c.connections_per_rail == 0 || c.connections_per_rail > 16) {
    return bad("connections_per_rail", std::to_string(c.connections_per_rail) + " not in 1..16");
  }
  if (c.max_wait_s == 0 || c.max_wait_s > k_max_wait_limit_s) {
    return bad("max_wait_s", std::to_string(c.max_wait_s) + " not in 1.." + std::to_string(k_max_wait_limit_s));
  }
  if (c.storage_root.empty() || c.storage_root[0] != '/') return bad("storage_root", "must be an absolute path");
  if (c.meta_store != "rocksdb" && c.meta_store != "memory") {
    return bad("meta_store", "\"" + c.meta_store.substr(0, 40) + "\" is not rocksdb or memory");
  }
  if (std::find(k_cluster_transports.begin(), k_cluster_transports.end(), c.transport) == k_cluster_transports.end()) {
    return bad("transport", "\"" + c.transport.substr(0, 40) + "\" is not tcp, tcp+shm or ucx");
  }
  if (c.insecure && !c.shared_secret_file.empty()) {
    return bad("insecure", "true together with a shared_secret_file: choose one");
  }
  std::set<NodeId> ids;
  std::set<TargetId> targets;
  std::uint32_t mgmt = 0, meta = 0, storage = 0, clients = 0;
  for (const NodeSpec& n : c.nodes) {
    const std::string where = "nodes[" + std::to_string(n.id) + "]";
    if (n.id >= k_max_cluster_nodes) return bad(where, "node id past " + std::to_string(k_max_cluster_nodes - 1));
    if (!ids.insert(n.id).second) return bad(where, "duplicate node id");
    if (n.roles.empty()) return bad(where, "no roles");
    if (n.address.empty()) return bad(where, "no address");
    if (n.has(Role::mgmt)) ++mgmt;
    if (n.has(Role::meta)) ++meta;
    if (n.has(Role::client)) ++clients;
    if (n.has(Role::storage)) {
      ++storage;
      if (n.targets.empty() || n.targets.size() > k_max_targets_per_node) {
        return bad(where, "a storage node has 1.." + std::to_string(k_max_targets_per_node) + " targets");
      }
    } else if (!n.targets.empty()) {
      return bad(where, "targets on a node without the storage role");
    }
    for (TargetId t : n.targets) {
      if (t == k_no_id || !targets.insert(t).second) return bad(where, "target " + std::to_string(t) + " repeated");
    }
  }
  if (mgmt != 1) return bad("nodes", std::to_string(mgmt) + " mgmt nodes; exactly one is needed");
  if (meta == 0 || storage == 0 || clients == 0) {
    return bad("nodes", "needs at least one meta, one storage and one client node");
  }
  if (Status st = validate_workload(c.workload, targets.size()); !st.ok()) return st;
  if (Status st = validate_client_placement(c); !st.ok()) return st;
  return validate_mirror_and_faults(c);
}

namespace {

// to_json's workload for a mount.
nlohmann::json mount_json(const ClusterWorkload& w) {
  const ClusterMount& m = w.mount;
  return {{"kind", "mount"},
          {"mount_point", m.mount_point},
          {"direct_io", m.direct_io},
          {"sync_writes", m.sync_writes},
          {"entry_timeout_ms", m.entry_timeout_ms},
          {"attr_timeout_ms", m.attr_timeout_ms},
          {"threads", m.threads},
          {"max_mount_s", m.max_mount_s},
          {"chunk_bytes", w.chunk_bytes},
          {"stripe_count", w.stripe_count},
          {"ranks_per_client", w.ranks_per_client}};
}

}  // namespace

nlohmann::json to_json(const ClusterConfig& c) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const NodeSpec& n : c.nodes) {
    nlohmann::json roles = nlohmann::json::array();
    for (Role r : n.roles) roles.push_back(std::string(to_string(r)));
    nodes.push_back({{"id", n.id}, {"roles", roles}, {"address", n.address}, {"targets", n.targets}});
    if (n.has(Role::meta_mirror)) nodes.back()["meta_mirror_of"] = n.meta_mirror_of;
  }
  nlohmann::json phases = nlohmann::json::array();
  for (SweepPhase p : c.workload.sweep.phases) phases.push_back(std::string(to_string(p)));
  const FileSweepConfig& s = c.workload.sweep;
  nlohmann::json doc = {{"run_id", c.run_id},
                        {"seed", c.seed},
                        {"rails_per_node", c.rails_per_node},
                        {"connections_per_rail", c.connections_per_rail},
                        {"storage_backend", c.storage_backend},
                        {"storage_root", c.storage_root},
                        {"node_memory_limit_bytes", c.node_memory_limit_bytes},
                        {"max_wait_s", c.max_wait_s},
                        {"shared_secret_file", c.shared_secret_file},
                        {"insecure", c.insecure},
                        {"meta_store", c.meta_store},
                        {"transport", c.transport},
                        {"nodes", nodes},
                        {"workload",
                         {{"kind", "file_sweep"},
                          {"root_dir", s.root_dir},
                          {"threads", s.threads},
                          {"files_per_rank", s.files_per_rank},
                          {"file_bytes", s.file_bytes},
                          {"block_bytes", s.block_bytes},
                          {"phases", phases},
                          {"pattern_data", s.pattern_data},
                          {"sync_writes", s.sync_writes},
                          {"pattern_seed", s.pattern_seed},
                          {"chunk_bytes", c.workload.chunk_bytes},
                          {"stripe_count", c.workload.stripe_count},
                          {"ranks_per_client", c.workload.ranks_per_client}}}};
  if (c.workload.mounted()) doc["workload"] = mount_json(c.workload);
  if (!c.workload.client_nodes.empty()) doc["workload"]["client_nodes"] = c.workload.client_nodes;
  if (!c.later_workloads.empty()) {
    doc["later_workloads"] = nlohmann::json::array();
    for (const ClusterLaterWorkload& w : c.later_workloads) {
      doc["later_workloads"].push_back({{"client_nodes", w.client_nodes}, {"ranks_per_client", w.ranks_per_client}});
    }
  }
  if (c.mirror.storage || c.mirror.metadata) {
    doc["mirror"] = {{"storage", c.mirror.storage},
                     {"metadata", c.mirror.metadata},
                     {"heartbeat_ms", c.mirror.heartbeat_ms},
                     {"probably_offline_ms", c.mirror.probably_offline_ms},
                     {"offline_ms", c.mirror.offline_ms}};
  }
  if (!c.faults.empty()) {
    doc["faults"] = nlohmann::json::array();
    for (const ClusterFault& f : c.faults) {
      doc["faults"].push_back(
          {{"at_ms", f.at_ms}, {fault_key(f.role), f.node}, {"restart_after_ms", f.restart_after_ms}});
    }
  }
  return doc;
}

namespace {

Result<NodeSpec> parse_node(const nlohmann::json& json, std::size_t index) {
  const std::string where = "nodes[" + std::to_string(index) + "]";
  NodeSpec n;
  n.id = static_cast<NodeId>(index);
  std::vector<std::string> roles;
  ObjectReader r(json, where);
  r.read("id", n.id);
  r.read("roles", roles);
  r.read("address", n.address);
  r.read("targets", n.targets);
  r.read("meta_mirror_of", n.meta_mirror_of);
  if (Status st = r.finish(); !st.ok()) return st;
  for (std::size_t i = 0; i < roles.size(); ++i) {
    Result<Role> parsed = parse_role(roles[i]);
    if (!parsed.ok()) {
      return bad(where + ".roles[" + std::to_string(i) + "]",
                 "unknown role " + quote_cut(roles[i]) + " (" + k_role_names + ")");
    }
    n.roles.push_back(*parsed);
  }
  return n;
}

Status parse_workload(const nlohmann::json& json, ClusterWorkload& workload) {
  FileSweepConfig& s = workload.sweep;
  ObjectReader r(json, "workload");
  std::string kind = "file_sweep";
  std::vector<std::string> phases;
  r.read("kind", kind);
  r.read("root_dir", s.root_dir);
  r.read("threads", s.threads);
  r.read("files_per_rank", s.files_per_rank);
  r.read("file_bytes", s.file_bytes);
  r.read("block_bytes", s.block_bytes);
  r.read("phases", phases);
  r.read("pattern_data", s.pattern_data);
  r.read("sync_writes", s.sync_writes);
  r.read("pattern_seed", s.pattern_seed);
  r.read("chunk_bytes", workload.chunk_bytes);
  r.read("stripe_count", workload.stripe_count);
  r.read("ranks_per_client", workload.ranks_per_client);
  r.read("client_nodes", workload.client_nodes);
  ClusterMount& m = workload.mount;
  r.read("mount_point", m.mount_point);
  r.read("direct_io", m.direct_io);
  r.read("sync_writes", m.sync_writes);
  r.read("entry_timeout_ms", m.entry_timeout_ms);
  r.read("attr_timeout_ms", m.attr_timeout_ms);
  r.read("threads", m.threads);
  r.read("max_mount_s", m.max_mount_s);
  if (Status st = r.finish(); !st.ok()) return st;
  if (kind == "mount") {
    if (m.mount_point.empty() || m.mount_point.front() != '/') {
      return bad("workload.mount_point", "a mount needs an absolute mount_point, got " + quote_cut(m.mount_point));
    }
    if (m.threads == 0 || m.threads > 1024) return bad("workload.threads", "must be within [1, 1024]");
    if (m.max_mount_s == 0) return bad("workload.max_mount_s", "must be > 0");
    return ok_status();
  }
  if (r.raw("mount_point") != nullptr) return bad("workload.mount_point", "only for kind \"mount\"");
  if (kind != "file_sweep") {
    return bad("workload.kind", quote_cut(kind) + "; file_sweep and mount run multi-process");
  }
  if (r.raw("phases") != nullptr) {
    s.phases.clear();
    for (std::size_t i = 0; i < phases.size(); ++i) {
      Result<SweepPhase> parsed = parse_phase(phases[i]);
      if (!parsed.ok()) {
        return bad("workload.phases[" + std::to_string(i) + "]",
                   "unknown phase " + quote_cut(phases[i]) + " (mkdir, write, read, stat, delete, rmdir)");
      }
      s.phases.push_back(*parsed);
    }
  }
  return ok_status();
}

Status parse_later_workloads(const nlohmann::json& json, std::vector<ClusterLaterWorkload>& later) {
  if (!json.is_array()) return bad("later_workloads", "expected an array, got " + describe(json));
  if (json.size() >= k_max_cluster_workloads) {
    return bad("later_workloads", std::to_string(json.size()) + " later workloads; at most " +
                                      std::to_string(k_max_cluster_workloads - 1));
  }
  for (std::size_t i = 0; i < json.size(); ++i) {
    ClusterLaterWorkload w;
    ObjectReader r(json[i], "later_workloads[" + std::to_string(i) + "]");
    r.read("client_nodes", w.client_nodes);
    r.read("ranks_per_client", w.ranks_per_client);
    if (Status st = r.finish(); !st.ok()) return st;
    later.push_back(std::move(w));
  }
  return ok_status();
}

Status parse_faults(const nlohmann::json& json, std::vector<ClusterFault>& faults) {
  if (!json.is_array()) return bad("faults", "expected an array, got " + describe(json));
  if (json.size() > k_max_cluster_faults) {
    return bad("faults", std::to_string(json.size()) + " faults; at most " + std::to_string(k_max_cluster_faults));
  }
  for (std::size_t i = 0; i < json.size(); ++i) {
    ClusterFault f;
    const std::string where = "faults[" + std::to_string(i) + "]";
    ObjectReader r(json[i], where);
    r.read("at_ms", f.at_ms);
    r.read("restart_after_ms", f.restart_after_ms);
    int kills = 0;
    for (Role role : {Role::storage, Role::meta, Role::meta_mirror}) {
      const std::string key = fault_key(role);
      if (r.raw(key.c_str()) == nullptr) continue;
      r.read(key.c_str(), f.node);
      f.role = role;
      ++kills;
    }
    if (!r.status().ok()) return r.status();
    if (kills != 1) {
      return bad(where + ".kill_storage_node",
                 "one of kill_storage_node, kill_meta_node, kill_meta_mirror_node is "
                 "required, and only one");
    }
    if (Status st = r.finish(); !st.ok()) return st;
    faults.push_back(f);
  }
  return ok_status();
}

}  // namespace

Result<ClusterConfig> parse_cluster_config(const nlohmann::json& json) {
  ClusterConfig c;
  ObjectReader top(json, "");
  top.read("run_id", c.run_id);
  top.read("seed", c.seed);
  top.read("rails_per_node", c.rails_per_node);
  top.read("connections_per_rail", c.connections_per_rail);
  top.read("storage_backend", c.storage_backend);
  top.read("storage_root", c.storage_root);
  top.read("node_memory_limit_bytes", c.node_memory_limit_bytes);
  top.read("max_wait_s", c.max_wait_s);
  top.read("shared_secret_file", c.shared_secret_file);
  top.read("insecure", c.insecure);
  top.read("meta_store", c.meta_store);
  top.read("transport", c.transport);
  if (const nlohmann::json* nodes = top.raw("nodes")) {
    if (!nodes->is_array()) return bad("nodes", "expected an array, got " + describe(*nodes));
    if (nodes->size() > k_max_cluster_nodes) {
      return bad("nodes",
                 std::to_string(nodes->size()) + " nodes; 1.." + std::to_string(k_max_cluster_nodes) + " allowed");
    }
    for (std::size_t i = 0; i < nodes->size(); ++i) {
      Result<NodeSpec> n = parse_node((*nodes)[i], i);
      if (!n.ok()) return n.status();
      c.nodes.push_back(std::move(n).value());
    }
  }
  if (const nlohmann::json* w = top.raw("workload")) {
    if (Status st = parse_workload(*w, c.workload); !st.ok()) return st;
  }
  if (const nlohmann::json* later = top.raw("later_workloads")) {
    if (Status st = parse_later_workloads(*later, c.later_workloads); !st.ok()) return st;
  }
  if (const nlohmann::json* m = top.raw("mirror")) {
    ObjectReader r(*m, "mirror");
    r.read("storage", c.mirror.storage);
    r.read("metadata", c.mirror.metadata);
    r.read("heartbeat_ms", c.mirror.heartbeat_ms);
    r.read("probably_offline_ms", c.mirror.probably_offline_ms);
    r.read("offline_ms", c.mirror.offline_ms);
    if (Status st = r.finish(); !st.ok()) return st;
  }
  if (const nlohmann::json* faults = top.raw("faults")) {
    if (Status st = parse_faults(*faults, c.faults); !st.ok()) return st;
  }
  if (Status st = top.finish(); !st.ok()) return st;
  if (Status st = validate(c); !st.ok()) return st;
  return c;
}

Result<ClusterConfig> parse_cluster_config_text(std::string_view text) {
  Result<nlohmann::json> json = base::parse_json_text(text);
  if (!json.ok()) return error(StatusCode::invalid_argument, "cluster config: " + json.status().message());
  return parse_cluster_config(*json);
}

ServicePlan plan_services(const ClusterConfig& config) {
  ServicePlan plan;
  std::vector<const NodeSpec*> nodes;
  for (const NodeSpec& n : config.nodes) nodes.push_back(&n);
  std::sort(nodes.begin(), nodes.end(), [](const NodeSpec* a, const NodeSpec* b) { return a->id < b->id; });
  // Shards in node order; a second server takes its primary's.
  std::map<NodeId, ShardId> shard_of;
  for (const NodeSpec* n : nodes) {
    if (n->has(Role::meta)) shard_of[n->id] = plan.meta_shards++;
  }
  // Each workload's client nodes (rank order) and rank count.
  std::vector<std::vector<NodeId>> clients_of;
  for (std::size_t w = 0; w < config.workload_count(); ++w) {
    clients_of.push_back(config.client_nodes_of(w));
    plan.client_ranks.push_back(static_cast<std::uint32_t>(clients_of.back().size()) * config.ranks_per_client_of(w));
  }
  ServiceIndex index = 0;
  for (const NodeSpec* n : nodes) {
    const auto add = [&](Role role, bool barrier) -> PlannedService& {
      PlannedService s;
      s.node = n->id;
      s.index = index++;
      s.role = role;
      s.barrier = barrier;
      plan.services.push_back(s);
      return plan.services.back();
    };
    if (n->has(Role::mgmt)) {
      plan.mgmt = Endpoint{n->id, add(Role::mgmt, false).index};
      plan.barrier = Endpoint{n->id, add(Role::mgmt, true).index};
    }
    if (n->has(Role::meta)) add(Role::meta, false).shard = shard_of[n->id];
    if (n->has(Role::meta_mirror)) {
      SLUICE_ASSERT(shard_of.contains(n->meta_mirror_of));  // validate(): a meta node's
      add(Role::meta_mirror, false).shard = shard_of[n->meta_mirror_of];
    }
    if (n->has(Role::storage)) add(Role::storage, false);
    // A node's clients: its ranks of the first workload, then of each later one.
    for (std::size_t w = 0; w < clients_of.size(); ++w) {
      const auto at = std::find(clients_of[w].begin(), clients_of[w].end(), n->id);
      if (at == clients_of[w].end()) continue;
      const std::uint32_t per = config.ranks_per_client_of(w);
      const auto position = static_cast<std::uint32_t>(at - clients_of[w].begin());
      for (std::uint32_t j = 0; j < per; ++j) {
        PlannedService& s = add(Role::client, false);
        s.rank = position * per + j;
        s.workload = static_cast<std::uint32_t>(w);
      }
    }
  }
  return plan;
}

Result<std::vector<proto::BuddyGroupDesc>> buddy_groups(const ClusterConfig& config) {
  std::vector<proto::BuddyGroupDesc> groups;
  if (!config.mirror.storage) return groups;
  // Targets dealt across the storage nodes (first target of each node, then
  // the second ...), so that consecutive targets sit on different nodes.
  std::vector<const NodeSpec*> storage;
  for (const NodeSpec& n : config.nodes) {
    if (n.has(Role::storage)) storage.push_back(&n);
  }
  std::sort(storage.begin(), storage.end(), [](const NodeSpec* a, const NodeSpec* b) { return a->id < b->id; });
  std::vector<std::pair<TargetId, NodeId>> dealt;
  for (std::size_t d = 0;; ++d) {
    bool any = false;
    for (const NodeSpec* n : storage) {
      if (d < n->targets.size()) {
        dealt.emplace_back(n->targets[d], n->id);
        any = true;
      }
    }
    if (!any) break;
  }
  if (dealt.size() % 2 != 0) {
    return bad("mirror", std::to_string(dealt.size()) + " storage targets cannot be paired into buddy groups");
  }
  for (std::size_t i = 0; i + 1 < dealt.size(); i += 2) {
    if (dealt[i].second == dealt[i + 1].second) {
      return bad("mirror", "targets " + std::to_string(dealt[i].first) + " and " + std::to_string(dealt[i + 1].first) +
                               " would mirror each other on node " + std::to_string(dealt[i].second) +
                               "; buddies must be on different nodes");
    }
    groups.push_back(
        proto::BuddyGroupDesc{static_cast<GroupId>(groups.size() + 1), dealt[i].first, dealt[i + 1].first});
  }
  return groups;
}

}  // namespace sluice::emulate
