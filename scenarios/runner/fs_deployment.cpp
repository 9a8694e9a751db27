#include "scenarios/runner/fs_deployment.hpp"

#include <algorithm>
#include <set>
#include <utility>

namespace sluice::scenario {

Status FsDeployment::validate(const ScenarioSpec& spec) {
  if (!spec.cluster) return error(StatusCode::invalid_argument, "scenario has no cluster");
  const topo::Topology& t = *spec.cluster;
  const FsSpec& fs = spec.fs;
  auto node_exists = [&](NodeId node, const std::string& what) -> Status {
    if (node < t.node_count()) return ok_status();
    return error(StatusCode::invalid_argument, what + " node " + std::to_string(node) +
                                                   " does not exist (the cluster has " +
                                                   std::to_string(t.node_count()) + " nodes)");
  };
  if (Status s = node_exists(fs.mgmt_node, "fs: mgmt"); !s.ok()) return s;
  if (fs.meta_nodes.empty()) return error(StatusCode::invalid_argument, "fs: no metadata server (meta_nodes is empty)");
  for (NodeId node : fs.meta_nodes) {
    if (Status s = node_exists(node, "fs: metadata server"); !s.ok()) return s;
  }
  if (!fs.meta_mirror_nodes.empty()) {
    if (fs.meta_mirror_nodes.size() != fs.meta_nodes.size()) {
      return error(StatusCode::invalid_argument, "fs: " + std::to_string(fs.meta_mirror_nodes.size()) +
                                                     " mirror metadata servers for " +
                                                     std::to_string(fs.meta_nodes.size()) + " shards");
    }
    if (!fs.mgmt.meta_mirror || !fs.meta.mirror.enabled) {
      return error(StatusCode::invalid_argument,
                   "fs: mirror metadata servers are placed but metadata mirroring is off in mgmt or the servers");
    }
    for (NodeId node : fs.meta_mirror_nodes) {
      if (Status s = node_exists(node, "fs: mirror metadata server"); !s.ok()) return s;
    }
  }
  if (fs.storage.empty()) return error(StatusCode::invalid_argument, "fs: no storage server");
  std::set<std::pair<NodeId, std::uint32_t>> drives;
  for (const StorageServerSpec& server : fs.storage) {
    if (Status s = node_exists(server.node, "fs: storage server"); !s.ok()) return s;
    if (server.nvme.empty()) {
      return error(StatusCode::invalid_argument,
                   "fs: storage server on node " + std::to_string(server.node) + " has no NVMe drive");
    }
    const std::uint32_t have = t.count(server.node, topo::VertexKind::nvme);
    for (std::uint32_t nvme : server.nvme) {
      if (nvme >= have) {
        return error(StatusCode::invalid_argument, "fs: node " + std::to_string(server.node) + " has no NVMe drive " +
                                                       std::to_string(nvme) + " (it has " + std::to_string(have) + ")");
      }
      if (!drives.emplace(server.node, nvme).second) {
        return error(StatusCode::invalid_argument, "fs: NVMe drive " + std::to_string(nvme) + " of node " +
                                                       std::to_string(server.node) + " is given to two targets");
      }
    }
  }
  return ok_status();
}

NamespaceConfig FsDeployment::namespace_config_of(const ScenarioSpec& spec) {
  NamespaceConfig ns = spec.fs.meta.ns;
  ns.policy = spec.fs.policy;
  ns.shard_count = static_cast<std::uint32_t>(spec.fs.meta_nodes.size());
  return ns;
}

NamespaceConfig FsDeployment::namespace_config() const { return namespace_config_of(*spec_); }

MetaServiceConfig FsDeployment::meta_config_of(const ScenarioSpec& spec, ShardId shard) {
  MetaServiceConfig meta = spec.fs.meta;
  meta.shard = shard;
  meta.ns = namespace_config_of(spec);
  return meta;
}

MetaServiceConfig FsDeployment::meta_config(ShardId shard) const {
  MetaServiceConfig meta = meta_config_of(*spec_, shard);
  meta.mgmt = mgmt_;
  return meta;
}

bool FsDeployment::registered() const {
  // A mirrored metadata server answers nothing before mgmt told it its role:
  // a workload started earlier would meet "has not learnt its mirror role"
  // and the client's back-off (issue 19: a failover study's stall landed
  // in its set-up instead of its writes).
  return std::all_of(metas_.begin(), metas_.end(),
                     [](const MetaService* m) {
                       return m->registered() && m->mirror_role() != MetaService::MirrorRole::unknown;
                     }) &&
         std::all_of(storages_.begin(), storages_.end(), [](const StorageService* s) { return s->registered(); }) &&
         mgmt_service_->meta_mirrors_in_sync(meta_shards());
}

ClientHostConfig FsDeployment::client_host_config_of(const ScenarioSpec& spec, const WorkloadRun& run,
                                                     std::uint32_t rank) {
  ClientHostConfig config;
  config.client = spec.fs.client;
  config.client.ns = namespace_config_of(spec);
  config.client.stripe_flavor = spec.fs.meta.stripe_flavor;
  config.client.planner.topology = spec.cluster;
  config.client.planner.node = run.node_of(rank);
  config.client.planner.caps.gpu_memory_reachable = spec.fs.gds != GdsMode::off;
  config.rank = rank;
  config.ranks = run.ranks();
  config.gpu = run.gpu_of(rank);
  if (spec.cluster != nullptr) config.host_numa = rank_host_numa(run.spec().clients, rank, *spec.cluster);
  return config;
}

ClientHostConfig FsDeployment::client_host_config(const WorkloadRun& run, std::uint32_t rank) const {
  ClientHostConfig config = client_host_config_of(*spec_, run, rank);
  config.client.mgmt = mgmt_;
  config.barrier = barrier_;
  return config;
}

}  // namespace sluice::scenario
