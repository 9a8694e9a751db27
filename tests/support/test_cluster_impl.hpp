// BasicTestCluster's member definitions, for the files that instantiate it
// (test_cluster.cpp for TestWorld, tests/sim/sim_world.cpp for SimWorld).
#pragma once

#include <algorithm>

#include "tests/support/test_cluster.hpp"

namespace sluice::testing {

template <ClusterWorld World>
NamespaceConfig BasicTestCluster<World>::namespace_config() const {
  NamespaceConfig ns = spec_.meta.ns;
  ns.policy = spec_.policy;
  ns.shard_count = spec_.meta_shards;
  return ns;
}

template <ClusterWorld World>
BasicTestCluster<World>::BasicTestCluster(TestClusterSpec spec)
    : spec_(std::move(spec)), world_(make_cluster_world<World>(spec_)) {
  NodeId node = 0;
  mgmt_service_ = &world_->template add_service<MgmtService>(node, spec_.mgmt);
  mgmt_ = world_->endpoint_of(*mgmt_service_);
  if (spec_.barrier)
    barrier_ = world_->endpoint_of(world_->template add_service<BarrierService>(node, spec_.barrier_config));
  ++node;
  const NamespaceConfig ns = namespace_config();
  const std::uint32_t meta_servers = spec_.meta_shards * (spec_.meta_mirror ? 2 : 1);
  for (std::uint32_t i = 0; i < meta_servers; ++i, ++node) {
    MetaServiceConfig meta = spec_.meta;
    meta.shard = i % spec_.meta_shards;  // with meta_mirror the second half are the shards' second servers
    meta.mirror.second = i >= spec_.meta_shards;
    meta.mgmt = mgmt_;
    meta.ns = ns;
    if (spec_.durable_meta) {
      metas_.push_back(&world_->template add_service<MetaService>(node, meta, MetaDisk{}));
    } else {
      metas_.push_back(&world_->template add_service<MetaService>(node, meta));
    }
  }
  TargetId next_target = 1;
  for (std::uint32_t count : spec_.targets_per_server) {
    StorageServiceConfig storage = spec_.storage;
    storage.mgmt = mgmt_;
    storage.targets.clear();
    for (std::uint32_t t = 0; t < count; ++t) {
      world_->add_target(next_target, node);
      storage.targets.push_back(next_target);
      targets_.push_back(next_target);
      ++next_target;
    }
    storages_.push_back(&world_->template add_service<StorageService>(node, storage));
    ++node;
  }
  for (std::uint32_t c = 0; c < spec_.client_nodes; ++c) client_nodes_.push_back(node++);

  if (!spec_.wait_for_registration) return;
  const bool registered = world_->run_until(
      [this] {
        return std::all_of(metas_.begin(), metas_.end(), [](const MetaService* m) { return m->registered(); }) &&
               std::all_of(storages_.begin(), storages_.end(), [](const StorageService* s) { return s->registered(); });
      },
      spec_.max_setup_events);
  if (!registered) {
    std::string why = "cluster servers did not all register with mgmt";
    const auto& logs = world_->logs();
    for (std::size_t i = logs.size() > 5 ? logs.size() - 5 : 0; i < logs.size(); ++i) why += "\n  " + logs[i];
    ready_ = error(StatusCode::timed_out, why);
  }
}

template <ClusterWorld World>
ClientHost& BasicTestCluster<World>::add_host(std::unique_ptr<Workload> workload, std::uint32_t rank,
                                              std::uint32_t ranks) {
  return add_host(std::move(workload), rank, ranks, spec_.client);
}

template <ClusterWorld World>
ClientHost& BasicTestCluster<World>::add_host(std::unique_ptr<Workload> workload, std::uint32_t rank,
                                              std::uint32_t ranks, const ClientConfig& client) {
  ClientHostConfig config;
  config.client = client;
  config.client.mgmt = mgmt_;
  config.client.ns = namespace_config();
  config.client.stripe_flavor = spec_.meta.stripe_flavor;
  config.rank = rank;
  config.ranks = ranks;
  config.barrier = barrier_;
  config.gpu = static_cast<std::uint16_t>(rank % spec_.ranks_per_client_node);
  const NodeId node = client_nodes_[(rank / spec_.ranks_per_client_node) % client_nodes_.size()];
  hosts_.push_back(&world_->template add_service<ClientHost>(node, config, std::move(workload)));
  return *hosts_.back();
}

template <ClusterWorld World>
std::vector<ClientHost*> BasicTestCluster<World>::launch(
    const std::function<std::unique_ptr<Workload>(std::uint32_t rank)>& make, std::uint32_t ranks) {
  hosts_.clear();
  const std::uint32_t total = ranks == 0 ? this->ranks() : std::min(ranks, this->ranks());
  for (std::uint32_t rank = 0; rank < total; ++rank) add_host(make(rank), rank, total);
  return hosts_;
}

template <ClusterWorld World>
bool BasicTestCluster<World>::run(std::uint64_t max_events) {
  return world_->run_until(
      [this] { return std::all_of(hosts_.begin(), hosts_.end(), [](const ClientHost* h) { return h->finished(); }); },
      max_events);
}

template <ClusterWorld World>
std::string BasicTestCluster<World>::failures() const {
  std::string out;
  for (const ClientHost* h : hosts_) {
    if (!h->finished()) {
      out += h->name() + ": not finished\n";
    } else if (!h->result().ok()) {
      out += h->name() + ": " + h->result().to_string() + "\n";
    }
  }
  return out;
}

}  // namespace sluice::testing
