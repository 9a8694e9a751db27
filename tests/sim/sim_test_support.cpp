#include "tests/sim/sim_test_support.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string_view>

#include "core/topology/cluster_builders.hpp"
#include "core/topology/machine_builders.hpp"
#include "sim/sim_process.hpp"

namespace sluice::testing {

sim::SimRuntimeConfig test_config(sim::SimRuntimeConfig config) {
  const char* mode = std::getenv("SLUICE_TEST_SIM_MODE");
  if (mode != nullptr && std::string_view(mode) == "fluid") config.fluid = true;
  return config;
}

std::string in_child_capture(const std::function<std::string()>& body) {
  Result<std::string> r = sim::run_in_child([&]() -> Result<std::string> {
    std::string out = body();
    if (::testing::Test::HasFailure()) return error(StatusCode::internal, "the test failed in the child (see above)");
    return out;
  });
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? r.value() : std::string();
}

void in_child(const std::function<void()>& body) {
  in_child_capture([&] {
    body();
    return std::string();
  });
}

std::shared_ptr<const topo::Topology> small_cluster(const SmallClusterSpec& spec) {
  topo::GenericMachine m;
  m.sockets = spec.sockets;
  m.gpus = spec.gpus;
  m.nics = spec.nics;
  m.nvmes = spec.nvmes;
  m.nic_port_rate_bytes_per_s = spec.network_bytes_per_s;
  m.nvme_read_bytes_per_s = spec.nvme_read_bytes_per_s;
  m.nvme_write_bytes_per_s = spec.nvme_write_bytes_per_s;
  Result<topo::Topology> machine = topo::generic_machine(m);
  if (!machine.ok()) {
    ADD_FAILURE() << machine.status().to_string();
    return nullptr;
  }
  topo::StarOptions star;
  star.link_bytes_per_s = spec.network_bytes_per_s;
  star.link_latency_ns = spec.network_latency_ns;
  Result<topo::Topology> cluster = topo::star_cluster(*machine, spec.nodes, star);
  if (!cluster.ok()) {
    ADD_FAILURE() << cluster.status().to_string();
    return nullptr;
  }
  return std::make_shared<const topo::Topology>(std::move(cluster).value());
}

void Probe::on_event(Event& event) {
  ++handler_depth;
  max_handler_depth = std::max(max_handler_depth, handler_depth);
  if (auto* c = std::get_if<Completion>(&event)) {
    completions[c->op] = *c;
    done_at_ns[c->op] = env_.now();
    order.push_back(c->op);
    if (on_completion) on_completion(*this, *c);
  } else {
    deliveries.push_back(std::get<Delivery>(event));
    delivered_at_ns.push_back(env_.now());
  }
  --handler_depth;
}

}  // namespace sluice::testing
