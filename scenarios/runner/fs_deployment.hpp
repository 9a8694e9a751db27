// FsDeployment: the file system of a ScenarioSpec placed on a world (SimRuntime
// today; HwWorld has the same add_service/endpoint_of surface), as a cluster
// administrator brings one up:
//   mgmt and the barrier service on FsSpec::mgmt_node;
//   metadata shard i on FsSpec::meta_nodes[i] (namespace: FsSpec::policy over
//   meta_nodes.size() shards, the rest of FsSpec::meta.ns kept), and its
//   second server on FsSpec::meta_mirror_nodes[i] when mirrored;
//   storage server s on FsSpec::storage[s].node with one target per listed
//   NVMe drive; target ids are 1, 2, ... in server order, then drive order.
// Clients (ClientHosts, one per workload rank) get the same namespace and
// stripe flavor, and a chunk planner over the cluster topology on their own
// node; GdsMode sets what the planner may assume the transport reaches
// (KvikIO CompatMode): on and auto = GPU memory is reachable, so a chunk goes
// direct where core/sched's path rule allows it (GPU<->NIC PXB or closer) and
// bounces elsewhere; off = GPU memory is never reached directly, every GPU
// chunk bounces. "on" additionally fails the run when any chunk bounced (the
// runner checks the client's counters), as GDS without compat mode would.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/services/meta_service.hpp"
#include "core/services/mgmt_service.hpp"
#include "core/services/storage_service.hpp"
#include "core/workloads/barrier_service.hpp"
#include "core/workloads/client_host.hpp"
#include "scenarios/runner/workload_run.hpp"
#include "scenarios/scenario_spec.hpp"

namespace sluice::scenario {

// Makes a storage target of a drive: (target, node, nvme index) -> Status.
using AddTargetFn = std::function<Status(TargetId target, NodeId node, std::uint32_t nvme_index)>;
// The durable store of one metadata server (MetaServiceConfig::open_store):
// (node, shard, second server of a mirrored shard) -> its opener; empty: in memory.
using MetaStoreFn =
    std::function<std::function<Result<std::unique_ptr<MetaStore>>()>(NodeId node, ShardId shard, bool second)>;

class FsDeployment {
 public:
  // Checks the FsSpec against the cluster (nodes and drives exist, at least
  // one shard and one storage server); invalid_argument naming the problem.
  static Status validate(const ScenarioSpec& spec);

  // Adds every server to `world` (not started). Requires validate(spec).ok().
  // `model`: the machines the world runs on when it models spec.cluster
  // (SimEnv): each target is then staged and served by its drive's NUMA node
  // and nearest NIC (sched::place_targets). Null (a world on this machine,
  // whose NICs are not the modelled ones): the storage config's defaults.
  template <class World>
  static Result<FsDeployment> deploy(World& world, const ScenarioSpec& spec, const AddTargetFn& add_target,
                                     const MetaStoreFn& meta_store = {}, const topo::Topology* model = nullptr) {
    FsDeployment d(spec);
    const FsSpec& fs = spec.fs;
    d.mgmt_service_ = &world.template add_service<MgmtService>(fs.mgmt_node, fs.mgmt);
    d.mgmt_ = world.endpoint_of(*d.mgmt_service_);
    d.barrier_ = world.endpoint_of(world.template add_service<BarrierService>(fs.mgmt_node, BarrierServiceConfig{}));
    for (std::size_t shard = 0; shard < fs.meta_nodes.size(); ++shard) {
      MetaServiceConfig first = d.meta_config(static_cast<ShardId>(shard));
      if (meta_store) first.open_store = meta_store(fs.meta_nodes[shard], static_cast<ShardId>(shard), false);
      d.metas_.push_back(&world.template add_service<MetaService>(fs.meta_nodes[shard], first));
    }
    for (std::size_t shard = 0; shard < fs.meta_mirror_nodes.size(); ++shard) {
      MetaServiceConfig second = d.meta_config(static_cast<ShardId>(shard));
      second.mirror.second = true;
      if (meta_store) second.open_store = meta_store(fs.meta_mirror_nodes[shard], static_cast<ShardId>(shard), true);
      d.metas_.push_back(&world.template add_service<MetaService>(fs.meta_mirror_nodes[shard], second));
    }
    TargetId next = 1;
    for (const StorageServerSpec& server : fs.storage) {
      StorageServiceConfig config = fs.storage_config;
      config.mgmt = d.mgmt_;
      config.targets.clear();
      for (std::uint32_t nvme : server.nvme) {
        Status s = add_target(next, server.node, nvme);
        if (!s.ok()) {
          return error(s.code(), "storage target " + std::to_string(next) + " on node " + std::to_string(server.node) +
                                     " drive " + std::to_string(nvme) + ": " + s.message());
        }
        config.targets.push_back(next);
        d.targets_.push_back(next);
        ++next;
      }
      if (model != nullptr) {
        Result<std::vector<sched::TargetPlace>> places = sched::place_targets(*model, server.node, server.nvme);
        if (!places.ok()) return places.status();
        config.target_places = std::move(places).value();
      }
      d.storages_.push_back(&world.template add_service<StorageService>(server.node, config));
    }
    return d;
  }

  // True once every metadata shard and storage server registered with mgmt,
  // every mirrored metadata server has learnt its role (primary or
  // secondary) from mgmt, and every metadata mirror is in sync
  // (MgmtService::meta_mirrors_in_sync). Read in the world's thread (sim),
  // or through world.call (hw: hw_point_run.cpp).
  bool registered() const;
  // The ClientHost config of one rank of a workload.
  ClientHostConfig client_host_config(const WorkloadRun& run, std::uint32_t rank) const;

  // The same settings from the spec alone, with no endpoint filled in (mgmt,
  // barrier): what a deployment spread over processes (the cluster path,
  // scenarios/deploy/node_runner.hpp) starts each service's config from.
  static NamespaceConfig namespace_config_of(const ScenarioSpec& spec);
  static MetaServiceConfig meta_config_of(const ScenarioSpec& spec, ShardId shard);
  static ClientHostConfig client_host_config_of(const ScenarioSpec& spec, const WorkloadRun& run, std::uint32_t rank);

  Endpoint mgmt() const { return mgmt_; }
  Endpoint barrier() const { return barrier_; }
  const std::vector<TargetId>& targets() const { return targets_; }
  const std::vector<MetaService*>& metas() const { return metas_; }
  const std::vector<StorageService*>& storages() const { return storages_; }
  const MgmtService& mgmt_service() const { return *mgmt_service_; }
  std::size_t meta_shards() const { return spec_->fs.meta_nodes.size(); }
  NamespaceConfig namespace_config() const;

 private:
  explicit FsDeployment(const ScenarioSpec& spec) : spec_(&spec) {}
  MetaServiceConfig meta_config(ShardId shard) const;

  const ScenarioSpec* spec_;
  MgmtService* mgmt_service_ = nullptr;
  Endpoint mgmt_;
  Endpoint barrier_;
  std::vector<MetaService*> metas_;
  std::vector<StorageService*> storages_;
  std::vector<TargetId> targets_;
};

}  // namespace sluice::scenario
