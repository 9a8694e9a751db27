// TestCluster: a small sluice cluster assembled in a TestWorld, for
// end-to-end tests of workloads (and of the services under them).
// BasicTestCluster<World> is the same cluster in another world with TestWorld's
// surface (tests/sim/sim_world.hpp: SimWorld on SimEnv), made by
// make_cluster_world<World>(spec); TestCluster = BasicTestCluster<TestWorld>.
//
// Layout (node ids in this order):
//   node 0                 mgmt and, if spec.barrier, the barrier service
//   nodes 1..M             one metadata server each (shards 0..M-1)
//   next M nodes           with meta_mirror: a second server of each shard
//                          (mgmt makes whichever registers first primary)
//   next S nodes           one storage server each, with targets_per_server[s]
//                          targets (ids 1, 2, ... in server order)
//   next C nodes           client nodes: ranks_per_client_node ClientHosts each
//                          (rank = node index * ranks_per_client_node + local
//                          index, gpu = local index)
// The constructor builds and starts the servers and runs the world until every
// metadata shard and storage target is registered with mgmt (bounded by
// spec.max_setup_events); ready() says whether that worked. launch() then adds
// the client hosts with their workloads; run() runs until every host finished.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/services/client.hpp"
#include "core/services/meta_service.hpp"
#include "core/services/mgmt_service.hpp"
#include "core/services/storage_service.hpp"
#include "core/workloads/barrier_service.hpp"
#include "core/workloads/client_host.hpp"
#include "core/services/meta_disk.hpp"
#include "det/test_world.hpp"

namespace sluice::testing {

struct TestClusterSpec {
  TestWorldConfig world;  // TestWorld's configuration (other worlds ignore it)
  std::uint32_t meta_shards = 2;
  std::vector<std::uint32_t> targets_per_server = {1, 2, 1, 2};
  std::uint32_t client_nodes = 3;
  std::uint32_t ranks_per_client_node = 1;
  bool barrier = true;
  MetaPolicy policy = MetaPolicy::dir_owner;
  // Two metadata servers per shard (metadata buddy mirroring); also set
  // mgmt.meta_mirror and meta.mirror (meta_mirrored_spec() does).
  bool meta_mirror = false;
  // Metadata servers keep their namespace on a MetaDisk (meta_disk.hpp) that
  // survives a restart; off: in memory, lost when the server is rebuilt.
  bool durable_meta = false;
  // Templates: the cluster fills in mgmt, shard, targets and the namespace.
  MgmtConfig mgmt;
  MetaServiceConfig meta;
  StorageServiceConfig storage;
  ClientConfig client;
  BarrierServiceConfig barrier_config;
  std::uint64_t max_setup_events = 1'000'000;
  // Run until every server registered before returning from the constructor;
  // off to test clients that start before the servers are up.
  bool wait_for_registration = true;
};

// Nodes the cluster uses: mgmt + metadata + storage + client nodes.
std::uint32_t cluster_node_count(const TestClusterSpec& spec);

// What BasicTestCluster and the shared services suite need of a world: the
// World contract (core/world.hpp) and the test surface beside it: storage
// targets, fault rules (applied through the world's hooks) and metrics.
// TestWorld, SimWorld (tests/sim/sim_world.hpp) and HwSuiteWorld
// (tests/hw/hw_suite_world.hpp) have it.
template <class W>
concept ClusterWorld = World<W> && requires(W& w, const W& cw, TargetId target, NodeId node, MessageRule message_rule,
                                            TransferRule transfer_rule, std::string_view name) {
  w.add_target(target, node);
  { cw.node_of_target(target) } -> std::same_as<NodeId>;
  w.start();
  { w.run_until_idle() } -> std::same_as<std::uint64_t>;
  w.add_fault(message_rule);
  w.add_transfer_fault(transfer_rule);
  w.clear_faults();
  { cw.samples(name) } -> std::same_as<const Distribution*>;
  cw.logs();
};

// The world a BasicTestCluster<World> runs in; specialised per world.
template <class World>
std::unique_ptr<World> make_cluster_world(const TestClusterSpec& spec);
template <>
std::unique_ptr<TestWorld> make_cluster_world<TestWorld>(const TestClusterSpec& spec);

template <ClusterWorld World>
class BasicTestCluster {
 public:
  explicit BasicTestCluster(TestClusterSpec spec = {});

  // ok once every shard and target registered.
  const Status& ready() const { return ready_; }
  World& world() { return *world_; }
  const TestClusterSpec& spec() const { return spec_; }
  Endpoint mgmt() const { return mgmt_; }
  const MgmtService& mgmt_service() const { return *mgmt_service_; }
  Endpoint barrier() const { return barrier_; }
  const std::vector<TargetId>& targets() const { return targets_; }
  const std::vector<NodeId>& client_nodes() const { return client_nodes_; }
  std::uint32_t ranks() const { return spec_.client_nodes * spec_.ranks_per_client_node; }
  NamespaceConfig namespace_config() const;

  // Adds one ClientHost per rank running make(rank); returns them by rank.
  // ranks == 0: all ranks of the cluster; otherwise only ranks [0, ranks)
  // (each told that the run has `ranks` ranks).
  std::vector<ClientHost*> launch(const std::function<std::unique_ptr<Workload>(std::uint32_t rank)>& make,
                                  std::uint32_t ranks = 0);

  // launch() with the same config for every rank; returns the workloads by rank.
  template <class W, class Config>
  std::vector<W*> launch_all(const Config& config, std::uint32_t ranks = 0) {
    std::vector<W*> out;
    launch(
        [&](std::uint32_t) {
          auto w = std::make_unique<W>(config);
          out.push_back(w.get());
          return w;
        },
        ranks);
    return out;
  }

  // Runs until every launched host finished (or max_events); true if all finished.
  // One more client host: `rank` of `ranks`, on client node rank / ranks_per_client_node.
  ClientHost& add_host(std::unique_ptr<Workload> workload, std::uint32_t rank, std::uint32_t ranks);
  ClientHost& add_host(std::unique_ptr<Workload> workload, std::uint32_t rank, std::uint32_t ranks,
                       const ClientConfig& client);
  bool run(std::uint64_t max_events = 20'000'000);
  const std::vector<MetaService*>& metas() const { return metas_; }
  const std::vector<StorageService*>& storages() const { return storages_; }
  // The hosts of the last launch, by rank.
  const std::vector<ClientHost*>& hosts() const { return hosts_; }
  // "" when every host of the last launch finished ok; else one line per problem.
  std::string failures() const;

 private:
  TestClusterSpec spec_;
  std::unique_ptr<World> world_;
  Status ready_;
  Endpoint mgmt_;
  MgmtService* mgmt_service_ = nullptr;
  Endpoint barrier_;
  std::vector<MetaService*> metas_;
  std::vector<StorageService*> storages_;
  std::vector<TargetId> targets_;
  std::vector<NodeId> client_nodes_;
  std::vector<ClientHost*> hosts_;
};

using TestCluster = BasicTestCluster<TestWorld>;
extern template class BasicTestCluster<TestWorld>;

}  // namespace sluice::testing
