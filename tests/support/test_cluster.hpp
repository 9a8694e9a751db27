// A small file-system cluster assembled in a TestWorld: one mgmt, metadata
// shards, storage servers with targets, and client hosts running workloads.
// Node numbering: 0 = mgmt (+ barrier), then metadata nodes, then storage
// nodes, then client nodes.
#pragma once

#include <memory>
#include <vector>

#include "core/services/meta_service.hpp"
#include "core/services/mgmt_service.hpp"
#include "core/services/storage_service.hpp"
#include "core/workloads/client_host.hpp"
#include "tests/support/test_world.hpp"

namespace sluice::testing {

struct TestClusterSpec {
  std::uint32_t meta_shards = 2;
  std::uint32_t storage_servers = 4;
  std::uint32_t targets_per_server = 1;
  std::uint32_t client_nodes = 3;
  NamespaceConfig ns;  // shard_count is set from meta_shards
  proto::ChooserKind chooser = proto::ChooserKind::randomized;
  std::uint64_t chunk_bytes = 512 * k_kib;
  std::uint32_t stripe_count = 4;
  std::uint32_t max_queued_per_target = 256;
  std::uint32_t max_active_per_target = 8;
  double egress_limit_bytes_per_s = 0;  // per storage server; 0 = none
  TestWorldConfig world;
};

class TestCluster {
 public:
  explicit TestCluster(TestClusterSpec spec);

  TestWorld& world() { return *world_; }
  Endpoint mgmt() const { return mgmt_; }
  Endpoint barrier() const { return barrier_; }
  const std::vector<MetaService*>& metas() const { return metas_; }
  const std::vector<StorageService*>& storages() const { return storages_; }
  const std::vector<ClientHost*>& hosts() const { return hosts_; }
  NodeId client_node(std::uint32_t i) const { return first_client_node_ + i % spec_.client_nodes; }
  std::vector<TargetId> targets() const;

  // A client host on client node (rank % client_nodes) running `workload`.
  ClientHost& add_host(std::unique_ptr<Workload> workload, std::uint32_t rank, std::uint32_t ranks,
                       ClientConfig client = {});
  // Runs until every host finished (or max_events); true if all finished.
  bool run_hosts(std::uint64_t max_events = 200'000'000);

 private:
  TestClusterSpec spec_;
  std::unique_ptr<TestWorld> world_;
  Endpoint mgmt_;
  Endpoint barrier_;
  std::vector<MetaService*> metas_;
  std::vector<StorageService*> storages_;
  std::vector<ClientHost*> hosts_;
  NodeId first_client_node_ = 0;
};

}  // namespace sluice::testing
