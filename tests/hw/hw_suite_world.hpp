// HwSuiteWorld: TestWorld's surface on HwEnv, so that TestCluster
// (BasicTestCluster<HwSuiteWorld>) and the shared services suite
// (tests/core/services/fs_shared_suite.hpp) run on real threads, loopback
// TCP and chunk files, in one process. It wraps an hw::HwWorld and applies
// the test's fault rules (core/world.hpp) through the world's hooks.
//
// Time is real: run_until and run_until_idle are bounded by
// k_max_run_wall_ns of wall time besides their event counts (a hang becomes
// a failure, not a stuck CI job); run_for lets real time pass, then waits
// until the world is idle (HwWorld::idle), so that effects the services
// still owe (chunk removals after an unlink) are visible to the test.
//
// Differences from TestWorld a test may meet: no byte-level access to
// regions or objects (object_count counts a target's chunk files); the
// spec's TestWorldConfig is ignored except its seed; a service killed while
// it handles an event finishes that event.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "hw/hw_world.hpp"
#include "det/fault_rules.hpp"
#include "tests/support/test_cluster.hpp"

namespace sluice::testing {

// Wall-time bound on one run_until / run_until_idle (the suite's longest
// legitimate run waits out a client's RPC, 2 + 4 + 8 s: RpcLimits::give_up_ns).
inline constexpr TimeNs k_max_run_wall_ns = 60 * k_ns_per_s;

class HwSuiteWorld {
 public:
  // `storage_root` must exist; it is removed with everything in it when the
  // world is destroyed (after the world stopped).
  HwSuiteWorld(hw::HwWorldConfig config, std::string storage_root);
  ~HwSuiteWorld();
  HwSuiteWorld(const HwSuiteWorld&) = delete;
  HwSuiteWorld& operator=(const HwSuiteWorld&) = delete;

  hw::HwWorld& hw_world() { return *world_; }
  const std::string& storage_root() const { return storage_root_; }

  template <typename S, typename... Args>
  S& add_service(NodeId node, Args&&... args) {
    return world_->add_service<S>(node, std::forward<Args>(args)...);
  }
  Endpoint endpoint_of(const Service& service) const { return world_->endpoint_of(service); }
  Env& env_of(const Service& service) { return world_->env_of(service); }
  // A target directory under the storage root (a test failure if it cannot be made).
  void add_target(TargetId target, NodeId node);
  NodeId node_of_target(TargetId target) const { return world_->node_of_target(target); }
  // Chunk files in the target's directory.
  std::size_t object_count(TargetId target) const;

  // A test failure if the world cannot start.
  void start();
  std::uint64_t run_until_idle(std::uint64_t max_events = 50'000'000);
  bool run_until(const std::function<bool()>& done, std::uint64_t max_events = 50'000'000);
  // Real time passes, then the world settles (idle, bounded by k_max_run_wall_ns).
  void run_for(TimeNs duration_ns);
  TimeNs now() const { return world_->now(); }

  // Fault rules: the match functions run one at a time (under a lock), on
  // the sending service's thread.
  void add_fault(MessageRule rule) { rules_.add(std::move(rule)); }
  void add_transfer_fault(TransferRule rule) { rules_.add(std::move(rule)); }
  void clear_faults() { rules_.clear(); }
  // Replaces the rules' hooks (before start(); the rules then no longer apply).
  void set_message_hook(MessageHook hook) { world_->set_message_hook(std::move(hook)); }
  void set_transfer_hook(TransferHook hook) { world_->set_transfer_hook(std::move(hook)); }
  void kill(Endpoint service) { world_->kill(service); }
  void revive(Endpoint service) { world_->revive(service); }
  // A fresh instance at the same endpoint (hw::HwWorld::restart).
  [[nodiscard]] Status restart(Endpoint service) { return world_->restart(service); }
  bool alive(Endpoint service) const { return world_->alive(service); }

  double counter(std::string_view name) const { return world_->counter(name); }
  // Merged over every service; valid until the next call with the same name.
  const Distribution* samples(std::string_view name) const;
  std::vector<std::string> logs() const { return world_->logs(); }
  std::uint64_t messages_sent() const { return world_->messages_sent(); }
  std::uint64_t messages_dropped() const { return world_->messages_dropped(); }

 private:
  std::string storage_root_;
  FaultRules rules_;
  mutable std::mutex samples_mu_;
  mutable std::map<std::string, Distribution, std::less<>> samples_;
  std::unique_ptr<hw::HwWorld> world_;  // last: stopped and destroyed first
};

// TestCluster's world on HwEnv: loopback TCP between nodes, posix chunk
// files under a fresh temporary directory, seeded from spec.world.seed.
template <>
std::unique_ptr<HwSuiteWorld> make_cluster_world<HwSuiteWorld>(const TestClusterSpec& spec);

// HwEnv as a world kind for the shared services suite.
struct HwEnvKind {
  using World = HwSuiteWorld;
  // In-process: each test's world stops its threads and removes its files
  // when the test body returns, so nothing leaks into the next test.
  static void isolate(const std::function<void()>& body) { body(); }
  static std::string isolate_capture(const std::function<std::string()>& body) { return body(); }
  static constexpr bool k_virtual_time = false;
  // 5 rounds of the 7 mixed sizes per rank (~23 MiB written and read back
  // per rank): every size and path is exercised while the five end-to-end
  // tests stay within seconds on a loaded 2-core machine.
  static constexpr std::size_t k_files_per_rank = 35;
  // Each entry is a real create round trip through loopback TCP and two
  // threads (~80 us here, several times that on a loaded 2-core CI machine):
  // 100,000 (the TestEnv figure) would take most of the suite's budget.
  // 20,000 still spans about ten server-capped readdir pages (1,024 entries
  // each, MetaServiceConfig::readdir_page_max_entries) on each of the two stripes.
  static constexpr std::size_t k_big_directory_entries = 20'000;
};

}  // namespace sluice::testing
