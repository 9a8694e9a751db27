#include "scenarios/deploy/spec_deployment.hpp"

#include <algorithm>
#include <exception>
#include <limits>
#include <map>
#include <numeric>
#include <utility>
#include <variant>

#include "core/workloads/phase_summary.hpp"

namespace sluice::emulate {
namespace {

Status bad(const std::string& what) { return error(StatusCode::invalid_argument, "emulate: " + what); }

std::uint32_t ms_of(TimeNs ns) {
  return static_cast<std::uint32_t>(std::min<TimeNs>(ns / k_ns_per_ms, std::numeric_limits<std::uint32_t>::max()));
}

// Storage buddy mirroring (the spec's heartbeat and offline times) and the
// fault plan's kills of storage servers; every other fault is refused here
// rather than left out.
// The node and role of the service a kill's subject names (storage:N, meta:N:
// FsDeployment's order, the shards' first servers, then their second ones).
// The node and role of a fault plan's storage:N or meta:N (meta counts the
// shards' first servers, then their second ones: faults::Role::meta's rule).
}  // namespace

std::optional<std::pair<NodeId, Role>> SpecDeployment::server_of(const scenario::FsSpec& fs, faults::Role role,
                                                                 std::uint32_t index) {
  if (role == faults::Role::storage) {
    if (index < fs.storage.size()) return std::make_pair(fs.storage[index].node, Role::storage);
    return std::nullopt;
  }
  if (role != faults::Role::meta) return std::nullopt;
  if (index < fs.meta_nodes.size()) return std::make_pair(fs.meta_nodes[index], Role::meta);
  if (index - fs.meta_nodes.size() < fs.meta_mirror_nodes.size()) {
    return std::make_pair(fs.meta_mirror_nodes[index - fs.meta_nodes.size()], Role::meta_mirror);
  }
  return std::nullopt;
}

namespace {

Result<std::pair<NodeId, Role>> killed_service(const scenario::ScenarioSpec& spec, const faults::Fault& f) {
  const bool kill = f.kind == faults::FaultKind::kill && f.subjects.size() == 1 &&
                    f.subjects[0].kind == faults::SubjectKind::service &&
                    (f.subjects[0].role == faults::Role::storage || f.subjects[0].role == faults::Role::meta);
  if (!kill) {
    return bad("fault \"" + f.to_string() +
               "\": the multi-process deployment runs kills of storage and metadata servers (storage:N, meta:N) so "
               "far; the other faults run in simulation and with --backend hw");
  }
  const auto& fs = spec.fs;
  if (auto server = SpecDeployment::server_of(fs, f.subjects[0].role, f.subjects[0].index)) return *server;
  if (f.subjects[0].role == faults::Role::storage) {
    return bad("fault \"" + f.to_string() + "\": there are " + std::to_string(fs.storage.size()) + " storage servers");
  }
  return bad("fault \"" + f.to_string() + "\": there are " +
             std::to_string(fs.meta_nodes.size() + fs.meta_mirror_nodes.size()) + " metadata servers");
}

// Storage and metadata buddy mirroring (the spec's heartbeat and offline
// times) and the fault plan's kills of storage and metadata servers; every
// other fault is refused here rather than left out.
Status carry_mirror_and_faults(const scenario::ScenarioSpec& spec, ClusterConfig& c) {
  c.mirror.storage = spec.fs.meta.mirror_file_data;
  c.mirror.metadata = !spec.fs.meta_mirror_nodes.empty();
  if (c.mirror.storage || c.mirror.metadata) {
    c.mirror.heartbeat_ms = ms_of(spec.fs.mgmt.check_interval_ns);
    c.mirror.probably_offline_ms = ms_of(spec.fs.mgmt.probably_offline_after_ns);
    c.mirror.offline_ms = ms_of(spec.fs.mgmt.offline_after_ns);
  }
  for (const faults::Fault& f : spec.faults.faults) {
    Result<std::pair<NodeId, Role>> killed = killed_service(spec, f);
    if (!killed.ok()) return killed.status();
    ClusterFault cf;
    cf.at_ms = ms_of(f.at_ns);
    cf.node = killed->first;
    cf.role = killed->second;
    cf.restart_after_ms = ms_of(f.duration_ns);
    c.faults.push_back(cf);
  }
  return ok_status();
}

// The spec's workload and file system, by the rules of emulated_point_run.hpp.
Status check_workload_and_fs(const scenario::ScenarioSpec& spec) {
  if (spec.workloads.empty() || spec.workloads.size() > k_max_cluster_workloads) {
    return bad("the point has " + std::to_string(spec.workloads.size()) +
               " workloads; the multi-process deployment runs 1.." + std::to_string(k_max_cluster_workloads));
  }
  for (const scenario::WorkloadSpec& w : spec.workloads) {
    if (w.clients.nodes.empty()) return bad("workload " + w.label + " has no client node");
  }
  if (spec.fs.meta_nodes.empty()) return bad("the file system has no metadata node");
  if (spec.fs.storage.empty()) return bad("the file system has no storage server");
  return ok_status();
}

// The workloads' part of cluster_of (the nodes with their targets made):
// each workload's client nodes in rank order and ranks per node, the first's
// sweep (a cluster JSON's), chunk and stripe.
void carry_workloads(const scenario::ScenarioSpec& spec, ClusterConfig& c) {
  const scenario::WorkloadSpec& w = spec.workloads.front();
  if (const auto* sweep = std::get_if<FileSweepConfig>(&w.config)) c.workload.sweep = *sweep;
  c.workload.chunk_bytes = spec.fs.meta.default_chunk_bytes;
  c.workload.ranks_per_client = w.clients.ranks_per_node;
  c.workload.client_nodes = w.clients.nodes;  // rank order, as WorkloadRun::node_of
  for (std::size_t i = 1; i < spec.workloads.size(); ++i) {
    c.later_workloads.push_back({spec.workloads[i].clients.nodes, spec.workloads[i].clients.ranks_per_node});
  }
  // A stripe wider than the targets gets every target, as the metadata
  // server's chooser gives it (core/layout/beegfs_target_choosers.cpp).
  c.workload.stripe_count = std::min(spec.fs.meta.default_stripe_count, c.storage_target_count());
}

}  // namespace

scenario::RunResult SpecDeployment::failed(const scenario::ScenarioSpec& spec, std::string why) {
  scenario::RunResult r;
  r.spec = spec;
  r.backend = scenario::Backend::emulate;
  r.ok = false;
  r.error = std::move(why);
  return r;
}

Result<ClusterConfig> SpecDeployment::cluster_of(const scenario::ScenarioSpec& spec) {
  if (spec.cluster == nullptr) return bad("the point has no cluster");
  const topo::Topology& t = *spec.cluster;
  const NodeId nodes = t.node_count();
  if (nodes < 2 || nodes > k_max_cluster_nodes) {
    return bad("the cluster has " + std::to_string(nodes) + " nodes; 2.." + std::to_string(k_max_cluster_nodes) +
               " can be emulated");
  }
  if (Status st = check_workload_and_fs(spec); !st.ok()) return st;
  ClusterConfig c;
  c.seed = spec.seed;
  c.max_wait_s = k_point_max_wait_s;
  std::map<NodeId, NodeSpec> by_node;
  for (NodeId n = 0; n < nodes; ++n) by_node[n].id = n;
  auto add_role = [&](NodeId n, Role role, const char* what) -> Status {
    if (n >= nodes) return bad(std::string(what) + " node " + std::to_string(n) + " is not in the cluster");
    if (!by_node[n].has(role)) by_node[n].roles.push_back(role);
    return ok_status();
  };
  if (Status st = add_role(spec.fs.mgmt_node, Role::mgmt, "mgmt"); !st.ok()) return st;
  for (std::size_t shard = 0; shard < spec.fs.meta_nodes.size(); ++shard) {
    const NodeId n = spec.fs.meta_nodes[shard];
    if (n < nodes && by_node[n].has(Role::meta)) {
      return bad("metadata shard " + std::to_string(shard) + " is on node " + std::to_string(n) +
                 " with another shard; the multi-process deployment runs one shard per node");
    }
    if (Status st = add_role(n, Role::meta, "metadata"); !st.ok()) return st;
  }
  // Metadata buddy mirroring: shard i's second server on meta_mirror_nodes[i].
  for (std::size_t shard = 0; shard < spec.fs.meta_mirror_nodes.size() && shard < spec.fs.meta_nodes.size(); ++shard) {
    const NodeId n = spec.fs.meta_mirror_nodes[shard];
    if (n < nodes && (by_node[n].has(Role::meta_mirror) || n == spec.fs.meta_nodes[shard])) {
      return bad("the second metadata server of shard " + std::to_string(shard) + " is on node " + std::to_string(n) +
                 (n == spec.fs.meta_nodes[shard] ? ", its first's node" : " with another second server") +
                 "; the multi-process deployment runs at most one of each per node");
    }
    if (Status st = add_role(n, Role::meta_mirror, "mirror metadata"); !st.ok()) return st;
    by_node[n].meta_mirror_of = spec.fs.meta_nodes[shard];
  }
  TargetId next_target = 1;
  for (const scenario::StorageServerSpec& s : spec.fs.storage) {
    if (Status st = add_role(s.node, Role::storage, "storage"); !st.ok()) return st;
    if (s.nvme.empty()) return bad("storage server on node " + std::to_string(s.node) + " has no target");
    for (std::size_t i = 0; i < s.nvme.size(); ++i) by_node[s.node].targets.push_back(next_target++);
  }
  for (const scenario::WorkloadSpec& each : spec.workloads) {
    for (NodeId n : each.clients.nodes) {
      if (Status st = add_role(n, Role::client, "client"); !st.ok()) return st;
    }
  }
  for (auto& [id, node] : by_node) c.nodes.push_back(std::move(node));
  carry_workloads(spec, c);
  // A node without a role would have nothing to run; the emulation needs a process per node.
  for (const NodeSpec& n : c.nodes) {
    if (n.roles.empty())
      return bad("node " + std::to_string(n.id) + " has no role (mgmt, metadata, storage or client)");
  }
  if (Status st = carry_mirror_and_faults(spec, c); !st.ok()) return st;
  if (Status st = validate(c); !st.ok()) return bad(st.message());
  return c;
}

namespace {

// The epoch row's au_pct, as WorkloadRun gives it in the other worlds (the mean AU of every
// rank and epoch), where the point has one train_epoch workload: the nodes' AU samples do
// not say which workload they came from.
void add_train_epoch_au(const scenario::ScenarioSpec& spec, const std::vector<double>& au_ratios,
                        std::vector<scenario::PhaseRow>& rows) {
  const auto is_training = [](const scenario::WorkloadSpec& w) {
    return std::holds_alternative<TrainEpochConfig>(w.config);
  };
  if (au_ratios.empty() || std::count_if(spec.workloads.begin(), spec.workloads.end(), is_training) != 1) return;
  const auto w = std::find_if(spec.workloads.begin(), spec.workloads.end(), is_training);
  for (scenario::PhaseRow& row : rows) {
    if (row.workload != w->label || row.phase != "epoch") continue;
    row.extra["au_pct"] =
        100.0 * std::accumulate(au_ratios.begin(), au_ratios.end(), 0.0) / static_cast<double>(au_ratios.size());
    return;
  }
}

// One row of the gathered results: a (workload, phase) summarized over its ranks.
using PhaseKey = std::pair<std::uint32_t, std::string>;
scenario::PhaseRow phase_row(const scenario::ScenarioSpec& spec, const PhaseKey& key, const PhaseSummary& s) {
  scenario::PhaseRow row;
  row.workload = spec.workloads.empty() ? std::string("file_sweep") : spec.workloads[key.first].label;
  row.phase = key.second;
  row.ranks = s.ranks;
  row.bytes = s.bytes;
  row.ops = s.ops;
  row.first_done_s = static_cast<double>(s.first_done_ns) / static_cast<double>(k_ns_per_s);
  row.last_done_s = static_cast<double>(s.last_done_ns) / static_cast<double>(k_ns_per_s);
  row.first_bytes_per_s = s.first_bytes_per_s;
  row.last_bytes_per_s = s.last_bytes_per_s;
  row.first_ops_per_s = s.first_ops_per_s;
  row.last_ops_per_s = s.last_ops_per_s;
  return row;
}

}  // namespace

scenario::RunResult SpecDeployment::result_of(const scenario::ScenarioSpec& spec, const nlohmann::json& gathered) {
  scenario::RunResult r;
  r.spec = spec;
  r.backend = scenario::Backend::emulate;
  try {
    r.ok = gathered.value("ok", false);
    // Rows per (workload, phase), in the order they first appear.
    using Key = PhaseKey;
    std::vector<Key> order;
    std::map<Key, std::vector<RankPhaseResult>> by_phase;
    std::vector<double> au_ratios;  // train_epoch's, every rank and epoch
    for (const auto& node : gathered.at("nodes")) {
      if (node.contains("train_epoch_au_ratios")) {
        for (const auto& a : node["train_epoch_au_ratios"]) au_ratios.push_back(a.get<double>());
      }
      const std::string status = node.value("status", std::string());
      if (!node.value("ok", false)) {
        const std::string line = "node " + std::to_string(node.value("node", 0)) + ": " + status;
        r.log_tail.push_back(line);
        if (r.error.empty()) r.error = line;
      }
      if (node.contains("counters")) {
        for (const auto& [name, value] : node["counters"].items()) {
          if (value.is_number()) r.counters[name] += value.get<double>();
        }
      }
      if (!node.contains("phases")) continue;
      for (const auto& p : node["phases"]) {
        RankPhaseResult rp;
        rp.phase = p.at("phase").get<std::string>();
        rp.rank = p.value("rank", 0u);
        rp.bytes = p.value("bytes", std::uint64_t{0});
        rp.ops = p.value("ops", std::uint64_t{0});
        rp.elapsed_ns = p.value("elapsed_ns", TimeNs{0});
        const Key key{p.value("workload", 0u), rp.phase};
        if (key.first >= std::max<std::size_t>(spec.workloads.size(), 1)) {
          return SpecDeployment::failed(spec, "emulate: the gathered results name workload " +
                                                  std::to_string(key.first) + " of a point with " +
                                                  std::to_string(spec.workloads.size()));
        }
        if (by_phase.find(key) == by_phase.end()) order.push_back(key);
        by_phase[key].push_back(std::move(rp));
      }
    }
    std::stable_sort(order.begin(), order.end(), [](const Key& a, const Key& b) { return a.first < b.first; });
    for (const Key& key : order) r.phases.push_back(phase_row(spec, key, summarize_phase(by_phase[key])));
    add_train_epoch_au(spec, au_ratios, r.phases);
    if (gathered.contains("emulation")) {
      const auto& e = gathered["emulation"];
      r.counters["emulate.link_bits_per_s"] = e.value("rate_bits_per_s", 0.0);
      r.counters["emulate.link_latency_ns"] = e.value("latency_ns", 0.0);
      if (e.contains("iperf_bits_per_s")) r.counters["emulate.iperf_bits_per_s"] = e["iperf_bits_per_s"].get<double>();
    }
  } catch (const std::exception& e) {
    return SpecDeployment::failed(spec, std::string("emulate: the gathered results are malformed: ") + e.what());
  }
  if (!r.ok && r.error.empty()) r.error = "emulate: the run failed (no node said why)";
  return r;
}

}  // namespace sluice::emulate
