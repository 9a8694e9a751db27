#include "tests/support/test_cluster_impl.hpp"

namespace sluice::testing {

std::uint32_t cluster_node_count(const TestClusterSpec& spec) {
  return 1 + spec.meta_shards * (spec.meta_mirror ? 2 : 1) +
         static_cast<std::uint32_t>(spec.targets_per_server.size()) + spec.client_nodes;
}

template <>
std::unique_ptr<TestWorld> make_cluster_world<TestWorld>(const TestClusterSpec& spec) {
  return std::make_unique<TestWorld>(spec.world);
}

template class BasicTestCluster<TestWorld>;

}  // namespace sluice::testing
