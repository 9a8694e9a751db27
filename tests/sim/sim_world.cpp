#include "tests/sim/sim_world.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "core/topology/cluster_builders.hpp"
#include "core/topology/machine_builders.hpp"
#include "tests/support/test_cluster_impl.hpp"

namespace sluice::testing {

SimWorld::SimWorld(std::shared_ptr<const topo::Topology> cluster, sim::SimRuntimeConfig config) {
  Result<std::unique_ptr<sim::SimRuntime>> rt =
      sim::SimRuntime::create(std::move(cluster), test_config(std::move(config)));
  if (!rt.ok()) {
    std::fprintf(stderr, "SimWorld: %s\n", rt.status().to_string().c_str());
    std::abort();
  }
  rt_ = std::move(rt).value();
  rt_->set_message_hook(rules_.message_hook());
  rt_->set_transfer_hook(rules_.transfer_hook());
}

void SimWorld::add_target(TargetId target, NodeId node) {
  Status s = rt_->add_target(target, node);
  EXPECT_TRUE(s.ok()) << s.to_string();
}

const Distribution* SimWorld::samples(std::string_view name) const {
  const std::vector<double>* values = rt_->samples(name);
  if (values == nullptr) return nullptr;
  Distribution& d = samples_[std::string(name)];
  d.values = *values;
  return &d;
}

namespace {
std::function<void(sim::SimRuntimeConfig&)>& cluster_sim_config() {
  static std::function<void(sim::SimRuntimeConfig&)> adjust;
  return adjust;
}
}  // namespace

void set_cluster_sim_config(std::function<void(sim::SimRuntimeConfig&)> adjust) {
  cluster_sim_config() = std::move(adjust);
}

template <>
std::unique_ptr<SimWorld> make_cluster_world<SimWorld>(const TestClusterSpec& spec) {
  std::uint32_t drives = 1;
  for (std::uint32_t t : spec.targets_per_server) drives = std::max(drives, t);
  SmallClusterSpec shape;
  shape.nodes = cluster_node_count(spec);
  shape.gpus = std::max<std::uint32_t>(1, spec.ranks_per_client_node);
  shape.nvmes = drives;
  shape.network_bytes_per_s = 12.5e9;
  shape.network_latency_ns = 300;
  sim::SimRuntimeConfig config;
  config.seed = spec.world.seed;
  config.node_memory_limit_bytes = spec.world.node_memory_limit_bytes;
  config.validate_messages = spec.world.roundtrip_messages_through_codec;
  if (cluster_sim_config()) cluster_sim_config()(config);
  return std::make_unique<SimWorld>(small_cluster(shape), config);
}

template class BasicTestCluster<SimWorld>;

}  // namespace sluice::testing
