// SimWorld: TestWorld's surface on SimEnv, so that TestCluster
// (BasicTestCluster<SimWorld>) and the shared services suite run on the
// simulated machine model. It wraps a sim::SimRuntime and applies the test's
// fault rules (core/world.hpp) through the runtime's hooks.
//
// One SimWorld per process (SimGrid): tests run each in a child process
// (SimEnvKind::isolate).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/sim_runtime.hpp"
#include "tests/sim/sim_test_support.hpp"
#include "det/fault_rules.hpp"
#include "tests/support/test_cluster.hpp"

namespace sluice::testing {

class SimWorld {
 public:
  // Aborts the (child) process with the reason if the runtime cannot be made.
  SimWorld(std::shared_ptr<const topo::Topology> cluster, sim::SimRuntimeConfig config);

  sim::SimRuntime& runtime() { return *rt_; }

  template <typename S, typename... Args>
  S& add_service(NodeId node, Args&&... args) {
    return rt_->add_service<S>(node, std::forward<Args>(args)...);
  }
  Endpoint endpoint_of(const Service& service) const { return rt_->endpoint_of(service); }
  Env& env_of(const Service& service) { return rt_->env_of(service); }
  // The node's next NVMe drive becomes `target` (a test failure if it has none).
  void add_target(TargetId target, NodeId node);
  NodeId node_of_target(TargetId target) const { return rt_->node_of_target(target); }
  std::size_t object_count(TargetId target) const { return rt_->object_count(target); }

  void start() { rt_->start(); }
  std::uint64_t run_until_idle(std::uint64_t max_events = 50'000'000) { return rt_->run_until_idle(max_events); }
  bool run_until(const std::function<bool()>& done, std::uint64_t max_events = 50'000'000) {
    return rt_->run_until(done, max_events);
  }
  void run_for(TimeNs duration_ns) { rt_->run_for(duration_ns); }
  TimeNs now() const { return rt_->now(); }

  void add_fault(MessageRule rule) { rules_.add(std::move(rule)); }
  void add_transfer_fault(TransferRule rule) { rules_.add(std::move(rule)); }
  void clear_faults() { rules_.clear(); }
  // Replaces the rules' hooks (the rules then no longer apply).
  void set_message_hook(MessageHook hook) { rt_->set_message_hook(std::move(hook)); }
  void set_transfer_hook(TransferHook hook) { rt_->set_transfer_hook(std::move(hook)); }
  void kill(Endpoint service) { rt_->kill(service); }
  void revive(Endpoint service) { rt_->revive(service); }
  bool alive(Endpoint service) const { return rt_->alive(service); }
  [[nodiscard]] Status restart(Endpoint service) { return rt_->restart(service); }

  double counter(std::string_view name) const { return rt_->counter(name); }
  const Distribution* samples(std::string_view name) const;
  const std::vector<std::string>& logs() const { return rt_->logs(); }
  std::uint64_t messages_sent() const { return rt_->messages_sent(); }
  std::uint64_t messages_dropped() const { return rt_->messages_dropped(); }

 private:
  FaultRules rules_;
  std::unique_ptr<sim::SimRuntime> rt_;
  mutable std::map<std::string, Distribution, std::less<>> samples_;
};

// TestCluster's world on SimEnv: generic machines (one socket, a GPU per
// rank of a client node, one 100 Gb/s NIC, enough 3.2/2.0 GB/s NVMe drives
// for the targets) on a 100 Gb/s star, seeded from spec.world.seed.
template <>
std::unique_ptr<SimWorld> make_cluster_world<SimWorld>(const TestClusterSpec& spec);

// Adjusts the SimRuntimeConfig that make_cluster_world<SimWorld> builds
// (e.g. streamed reads for the coalescing tests). Process-wide: set it in
// the test's child process; an empty function restores the defaults.
void set_cluster_sim_config(std::function<void(sim::SimRuntimeConfig&)> adjust);

// SimEnv as a world kind for the shared services suite.
struct SimEnvKind {
  using World = SimWorld;
  static void isolate(const std::function<void()>& body) { in_child(body); }
  static std::string isolate_capture(const std::function<std::string()>& body) { return in_child_capture(body); }
  static constexpr std::size_t k_files_per_rank = 100;
  static constexpr std::size_t k_big_directory_entries = 100'000;
  static constexpr bool k_virtual_time = true;
};

}  // namespace sluice::testing
