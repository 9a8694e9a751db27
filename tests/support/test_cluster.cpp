#include "tests/support/test_cluster.hpp"

#include "core/workloads/barrier_service.hpp"

namespace sluice::testing {

TestCluster::TestCluster(TestClusterSpec spec) : spec_(std::move(spec)) {
  spec_.ns.shard_count = spec_.meta_shards;
  world_ = std::make_unique<TestWorld>(spec_.world);
  auto& mgmt = world_->add_service<MgmtService>(0, MgmtConfig{});
  mgmt_ = world_->endpoint_of(mgmt);
  auto& barrier = world_->add_service<BarrierService>(0);
  barrier_ = world_->endpoint_of(barrier);
  NodeId node = 1;
  for (std::uint32_t s = 0; s < spec_.meta_shards; ++s, ++node) {
    MetaServiceConfig mc;
    mc.shard = s;
    mc.mgmt = mgmt_;
    mc.ns = spec_.ns;
    mc.default_chunk_bytes = spec_.chunk_bytes;
    mc.default_stripe_count = spec_.stripe_count;
    mc.default_chooser = spec_.chooser;
    metas_.push_back(&world_->add_service<MetaService>(node, mc));
  }
  TargetId next_target = 1;
  for (std::uint32_t s = 0; s < spec_.storage_servers; ++s, ++node) {
    StorageServiceConfig sc;
    sc.mgmt = mgmt_;
    sc.max_queued_per_target = spec_.max_queued_per_target;
    sc.max_active_per_target = spec_.max_active_per_target;
    sc.egress_limit_bytes_per_s = spec_.egress_limit_bytes_per_s;
    sc.egress_burst_bytes = 1 * k_mib;
    for (std::uint32_t t = 0; t < spec_.targets_per_server; ++t) {
      world_->add_target(next_target, node);
      sc.targets.push_back(next_target++);
    }
    storages_.push_back(&world_->add_service<StorageService>(node, sc));
  }
  first_client_node_ = node;
}

std::vector<TargetId> TestCluster::targets() const {
  std::vector<TargetId> all;
  for (TargetId t = 1; t <= spec_.storage_servers * spec_.targets_per_server; ++t) all.push_back(t);
  return all;
}

ClientHost& TestCluster::add_host(std::unique_ptr<Workload> workload, std::uint32_t rank, std::uint32_t ranks,
                                  ClientConfig client) {
  client.mgmt = mgmt_;
  client.ns = spec_.ns;
  ClientHostConfig hc;
  hc.client = client;
  hc.rank = rank;
  hc.ranks = ranks;
  hc.barrier = barrier_;
  auto& host = world_->add_service<ClientHost>(client_node(rank), hc, std::move(workload));
  hosts_.push_back(&host);
  return host;
}

bool TestCluster::run_hosts(std::uint64_t max_events) {
  return world_->run_until(
      [this] {
        for (auto* h : hosts_) {
          if (!h->finished()) return false;
        }
        return true;
      },
      max_events);
}

}  // namespace sluice::testing
