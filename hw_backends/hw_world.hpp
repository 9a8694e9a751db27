// HwWorld: a deployment of services on real hardware inside one process
// (`sluice run --backend hw` on one machine): every node gets a transport
// listening on loopback, every storage target a directory of real chunk
// files, every service its own event-loop thread. Services are the same
// objects that run in TestWorld and SimEnv, added the same way.
//
// Life cycle: add_service()/add_target() while stopped, start(), wait for
// the services (wait_until/call), then stop() (or the destructor). Before
// start() nothing runs; after stop() nothing runs again.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "core/common/rng.hpp"
#include "hw_backends/hw_env.hpp"
#include "hw_backends/hw_node.hpp"
#include "hw_backends/service_loop.hpp"
#include "hw_backends/storage_backend.hpp"

namespace sluice::hw {

// Log lines kept in memory (the oldest are dropped past it).
inline constexpr std::size_t k_max_world_log_lines = 100000;

struct HwWorldConfig {
  std::uint64_t seed = 1;
  std::string transport = "tcp";             // a registered transport
  std::uint32_t rails_per_node = 1;          // loopback rails per node
  std::uint32_t connections_per_rail = 2;
  std::string storage_backend = "posix";     // a registered storage backend
  std::string storage_root;                  // targets live in <root>/node<N>/target<T>; required with targets
  std::uint32_t storage_queue_depth = 16;
  DirectIoMode direct_io = DirectIoMode::auto_;
  std::uint64_t node_memory_limit_bytes = 8ULL << 30;
  // The cluster's shared secret: every node's transport refuses peers that
  // cannot prove it (transport.hpp, TransportConfig::shared_secret). Empty: none.
  std::string shared_secret;
  // Every log line also goes here (from any thread); may be empty.
  std::function<void(std::string_view)> log;
};

class HwWorld {
 public:
  explicit HwWorld(HwWorldConfig config);
  ~HwWorld();
  HwWorld(const HwWorld&) = delete;
  HwWorld& operator=(const HwWorld&) = delete;

  const HwWorldConfig& config() const { return config_; }

  // Creates a service on `node` as S(Env&, args...). The world owns it.
  template <typename S, typename... Args>
  S& add_service(NodeId node, Args&&... args) {
    Entry& e = new_entry(node);
    auto service = std::make_unique<S>(*e.env, std::forward<Args>(args)...);
    S& ref = *service;
    e.loop->bind(service.get());
    e.service = std::move(service);
    return ref;
  }
  // A storage target (a directory under storage_root) on `node`.
  Status add_target(TargetId target, NodeId node);

  // Opens every node's transport and starts dispatchers and service loops.
  // Fails (and starts nothing) when a node could not open.
  Status start();
  // Keeps a service out of start(): it starts at start_service(), so that a
  // deployment brings servers up before clients, as a real cluster is
  // brought up (mgmt, then metadata and storage servers, then clients).
  void defer_start(const Service& service);
  void start_service(const Service& service);
  void stop();
  // Stops one node's services and closes its transport, as if its process
  // died: peers see the connections drop and their pending operations fail.
  void kill_node(NodeId node);

  Endpoint endpoint_of(const Service& service) const;
  TimeNs now() const;

  // Runs fn on the service's loop thread, between its events, and returns
  // fn's result: the race-free way to read a running service's state.
  template <typename F>
  auto call(const Service& service, F fn) -> std::invoke_result_t<F> {
    using R = std::invoke_result_t<F>;
    ServiceLoop* loop = loop_of(endpoint_of(service));
    auto task = std::make_shared<std::packaged_task<R()>>(std::move(fn));
    std::future<R> result = task->get_future();
    loop->run([task] { (*task)(); });
    return result.get();
  }

  // Waits until done() holds (checked after every event any service
  // handles) or max_wait_ns passes; returns done().
  bool wait_until(const std::function<bool()>& done, TimeNs max_wait_ns);

  // Counters summed over every service; log lines.
  double counter(std::string_view name) const;
  std::vector<std::string> logs() const;
  HwNode* node(NodeId id);

  // For HwEnv and HwNode.
  ServiceLoop* loop_of(Endpoint endpoint) const;
  Result<transport::PeerAddress> address_of(NodeId node) const;
  void log(std::string line);
  NodeId node_of_target(TargetId target) const;

 private:
  struct Entry {
    std::unique_ptr<ServiceLoop> loop;
    std::unique_ptr<HwEnv> env;
    std::unique_ptr<Service> service;
    bool deferred = false;
  };

  Entry& new_entry(NodeId node);
  HwNode& node_for(NodeId id);

  HwWorldConfig config_;
  ServiceLoop::Clock::time_point epoch_;
  Progress progress_;
  Rng root_rng_;
  std::map<NodeId, std::unique_ptr<HwNode>> nodes_;
  std::map<NodeId, Status> node_open_;
  std::map<Endpoint, Entry> entries_;
  std::map<TargetId, NodeId> target_nodes_;
  ServiceIndex next_service_index_ = 0;
  bool started_ = false;
  bool stopped_ = false;
  mutable std::mutex log_mu_;
  std::vector<std::string> logs_;
};

}  // namespace sluice::hw
