// HwWorld: a deployment of services on real hardware inside one process
// (`sluice run --backend hw` on one machine): every node gets a transport
// listening on loopback, every storage target a directory of real chunk
// files, every service its own event-loop thread. Services are the same
// objects that run in TestWorld and SimEnv, added the same way.
//
// Life cycle: add_target() while stopped, add_service() before or after
// start() (after start() a service starts at once, on a new node if need
// be), start(), wait for the services (wait_until/call, or run_until), then
// stop() (or the destructor). Before start() nothing runs; after stop()
// nothing runs again.
//
// For tests of faults (tests/hw/hw_suite_world.hpp runs the
// shared services suite on this world): a message hook that drops, delays
// or duplicates control messages; kill/revive of one service; run_until and
// run_until_idle, which look at the services only while every loop is
// between events (EventGate), each bounded by events and by wall time.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "core/common/rng.hpp"
#include "core/world.hpp"
#include "hw/hw_env.hpp"
#include "hw/hw_node.hpp"
#include "hw/service_loop.hpp"
#include "hw_backends/storage_backend.hpp"

namespace sluice::hw {

// Log lines kept in memory (the oldest are dropped past it).
inline constexpr std::size_t k_max_world_log_lines = 100000;
// run_until/run_until_idle look at the services at most this often: each
// look holds every service loop between events for a moment.
inline constexpr TimeNs k_min_check_interval_ns = 200 * k_ns_per_us;

// Message and transfer hooks (core/world.hpp). In this world a message hook
// is called by HwEnv::send on the sending service's thread, for every
// message (also between services of one node), before it leaves;
// concurrently from several services, so it must be thread-safe. It may call
// kill/revive/alive, counter and log on the world; it must not call
// run_until, run_until_idle, wait_until, call, stop or add_service (they wait
// for the services). A transfer hook gives extra real time before a transfer
// is posted to the transport; it is called on the starting service's thread,
// concurrently from several.
// run_until's bounds when the caller gives none (the World contract's run_until(done)).
inline constexpr std::uint64_t k_default_run_max_events = 50'000'000;
inline constexpr TimeNs k_default_run_max_wait_ns = 600 * k_ns_per_s;

// Where one node's transport lives when the world is spread over network
// namespaces (an emulated cluster, scenarios/netns/netns_cluster.hpp):
// the namespace file and one listen address per rail ("a.b.c.d:0").
struct NodeNetwork {
  std::string netns;
  std::vector<std::string> rail_addresses;
};

struct HwWorldConfig {
  std::uint64_t seed = 1;
  std::string transport = "tcp";     // a registered transport
  std::uint32_t rails_per_node = 1;  // loopback rails per node
  std::uint32_t connections_per_rail = 2;
  std::string storage_backend = "posix";  // a registered storage backend
  std::string storage_root;               // targets live in <root>/node<N>/target<T>; required with targets
  std::uint32_t storage_queue_depth = 16;
  DirectIoMode direct_io = DirectIoMode::auto_;
  std::uint64_t node_memory_limit_bytes = 8ULL << 30;
  // The cluster's shared secret: every node's transport refuses peers that
  // cannot prove it (transport.hpp, TransportConfig::shared_secret). Empty: none.
  std::string shared_secret;
  // Region keys on the wire (what transports register and peers name in
  // put/get) are a keyed bijection of (node, region id), region_wire_key(),
  // so a peer cannot guess another node's keys from the small region ids.
  // 0: the key is derived from shared_secret when there is one, else drawn
  // at random by this world (all its nodes agree). The processes of one
  // multi-process run without a secret must all pass the same non-zero value.
  std::uint64_t region_key_salt = 0;
  // Empty: every node listens on loopback (rails_per_node rails) in this
  // process's namespace. Set: node N's transport lives in the namespace and
  // on the addresses node_network(N) gives (TransportConfig::netns), so the
  // traffic between nodes crosses the emulated links; a node it has no place
  // for fails to open with its error. Called on the owner's thread.
  std::function<Result<NodeNetwork>(NodeId)> node_network;
  // Every log line also goes here (from any thread); may be empty.
  std::function<void(std::string_view)> log;
  // Fault injection for tests (see MessageHook); empty: every message goes once.
  MessageHook message_hook;
  // Fault injection on the data path (see TransferHook); empty: none.
  TransferHook transfer_hook;
  // GPU memory (cudaMalloc, copies, pattern kernels, dma-buf export):
  // hw_backends/cuda's cuda::gpu_memory_ops(), or a fake in tests. nullptr:
  // alloc(MemKind::gpu) answers unavailable with the reason. Not owned; it
  // outlives the world.
  const GpuMemoryOps* gpu_memory = nullptr;
  // Wraps each target's backend when it is made (e.g. in a
  // FaultyStorageBackend, hw_backends/faulty_storage_backend.hpp); called
  // from add_target on the owner's thread. Empty: the backend as made.
  std::function<std::unique_ptr<StorageBackend>(TargetId, std::unique_ptr<StorageBackend>)> wrap_storage_backend;
};

class HwWorld {
 public:
  explicit HwWorld(HwWorldConfig config);
  ~HwWorld();
  HwWorld(const HwWorld&) = delete;
  HwWorld& operator=(const HwWorld&) = delete;

  const HwWorldConfig& config() const { return config_; }

  // Creates a service on `node` as S(Env&, args...). The world owns it.
  // After start() it starts at once (defer_start() is for services added
  // before start()). Call from the thread that owns the world, never from a
  // service or a hook.
  template <typename S, typename... Args>
  S& add_service(NodeId node, Args&&... args) {
    Endpoint ep;
    Entry e = new_entry(node, ep);
    e.factory = restart_factory<S>(args...);
    auto service = std::make_unique<S>(*e.env, std::forward<Args>(args)...);
    S& ref = *service;
    e.loop->bind(service.get());
    e.service = std::move(service);
    insert_entry(ep, std::move(e));
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
  // One service dies (its node and transport live on): it handles no more
  // events, messages to it are dropped (counted in messages_dropped()), and
  // completions of operations it started before are dropped, also after
  // revive(). Any thread, including a message hook. As TestWorld::kill.
  void kill(Endpoint service);
  void revive(Endpoint service);
  bool alive(Endpoint service) const;
  // The service comes back as a fresh instance built from copies of its
  // original arguments, at the same endpoint (a crashed process restarted):
  // the old instance handles no more events, completions of the operations
  // it started are dropped (as after kill), and the new one starts on the
  // same loop thread. The old instance and the memory regions it allocated
  // are kept until the world is destroyed: operations it started may still
  // be using them on other threads. Counters carry on. unavailable for a
  // service built from move-only arguments; not_found for an unknown
  // endpoint. From the owner's thread, never from a service or a hook.
  [[nodiscard]] Status restart(Endpoint service);

  Endpoint endpoint_of(const Service& service) const;
  // The Env of a service of this world (asserted). Use it on the service's
  // loop thread (call()), or before start().
  Env& env_of(const Service& service);
  TimeNs now() const;
  // The hooks (see above); set before start() (asserted): the service
  // threads read them without a lock.
  void set_message_hook(MessageHook hook);
  void set_transfer_hook(TransferHook hook);

  // fn runs on the service's loop thread each time the service's messages
  // are about to leave (its outbox, once per loop turn: HwEnv), before any
  // of them does, with the service now at that endpoint (a restart replaces
  // it): a metadata server's group commit (MetaService::commit_store), so
  // that no reply acknowledges what its store could still lose. Set before
  // the world starts.
  void before_messages_leave(const Service& service, std::function<void(Service&)> fn);

  // Runs fn on the service's loop thread, between its events, and returns
  // fn's result: the race-free way to read a running service's state. What
  // fn sends has left (the outbox is flushed) when call() returns.
  template <typename F>
  auto call(const Service& service, F fn) -> std::invoke_result_t<F> {
    using R = std::invoke_result_t<F>;
    ServiceLoop* loop = loop_of(endpoint_of(service));
    auto task = std::make_shared<std::packaged_task<R()>>([fn = std::move(fn), loop]() mutable -> R {
      struct FlushAfter {
        ServiceLoop* loop;
        ~FlushAfter() { loop->flush_turn(); }
      } flush_after{loop};
      return fn();
    });
    std::future<R> result = task->get_future();
    loop->run([task] { (*task)(); });
    return result.get();
  }

  // Runs fn on the service's loop thread, between its events, and returns
  // at once: how a thread outside the world (a FUSE worker) hands work to a
  // service without waiting for it.
  void post(const Service& service, std::function<void()> fn) { loop_of(endpoint_of(service))->run(std::move(fn)); }

  // Waits until done() holds (checked after every event any service
  // handles) or max_wait_ns passes; returns done().
  bool wait_until(const std::function<bool()>& done, TimeNs max_wait_ns);
  // Starts the world if needed and waits until done() holds, `max_events`
  // items were handled, or `max_wait_ns` of wall time passed; returns
  // whether done() held. done() runs while every service loop is between
  // events, so it may read services' state directly (what it saw true was
  // written before). Not from a service thread.
  bool run_until(const std::function<bool()>& done, std::uint64_t max_events = k_default_run_max_events,
                 TimeNs max_wait_ns = k_default_run_max_wait_ns);
  // Starts the world if needed and lets `duration_ns` of real time pass
  // while the services run on their threads (the real world's run_for).
  void run_for(TimeNs duration_ns);
  // Starts the world if needed and waits until it is idle (see idle()), or
  // the bounds pass; returns the items handled meanwhile.
  std::uint64_t run_until_idle(std::uint64_t max_events, TimeNs max_wait_ns);
  // No message in flight (sent and not yet handed to its loop, or held by a
  // delay), no transfer or storage I/O pending, no loop with an item queued,
  // due or being handled. Timers due later do not count. Exact within one
  // process; a message lost with a killed node's connection keeps it false.
  bool idle();
  // Items (events, closures, starts) handled by every loop so far.
  std::uint64_t events_handled() const { return progress_.generation(); }

  // Counters summed over every service; samples merged; log lines.
  double counter(std::string_view name) const;
  std::vector<double> samples(std::string_view name) const;
  std::vector<std::string> logs() const;
  // After stop(): the CPU time of the services' loop threads, summed by kind
  // of service (the name before its first ':': "storage", "meta", "client",
  // "mgmt"), in ns. What a request costs a server's thread is its kind's
  // time over its requests (calibration of the simulator's CPU costs).
  std::map<std::string, double> thread_cpu_ns() const;
  // The wire key of region `region` of node `owner` (region_key_salt).
  std::uint64_t region_wire_key(NodeId owner, std::uint32_t region) const;
  // True once stop() began (the nodes then drop their transports' chatter).
  bool shutting_down() const { return shutting_down_.load(); }
  HwNode* node(NodeId id);
  // Control messages sent (before the hook; a duplicate counts once) and
  // lost (dropped by the hook, or addressed to a dead service).
  std::uint64_t messages_sent() const { return messages_sent_.load(); }
  std::uint64_t messages_dropped() const;

  // For HwEnv and HwNode.
  MessageFate message_fate(const Endpoint& from, const Endpoint& to, const proto::Message& m) const;
  TimeNs transfer_delay(const Endpoint& self, const TransferSpec& spec) const;
  void note_message_sent() { messages_sent_.fetch_add(1); }
  void note_message_dropped() { hook_dropped_.fetch_add(1); }
  // +1 when a message leaves (or is held by a delay), -1 when handed to its loop.
  void note_in_flight(std::int64_t delta) { in_flight_messages_.fetch_add(delta); }
  ServiceLoop* loop_of(Endpoint endpoint) const;
  Result<transport::PeerAddress> address_of(NodeId node) const;
  void log(std::string line);
  NodeId node_of_target(TargetId target) const;

 private:
  struct Entry {
    std::unique_ptr<ServiceLoop> loop;
    std::unique_ptr<HwEnv> env;
    std::unique_ptr<Service> service;
    ServiceFactory factory;                         // empty: cannot restart
    std::vector<std::unique_ptr<Service>> retired;  // instances replaced by restart()
    bool deferred = false;
  };

  Entry new_entry(NodeId node, Endpoint& ep);
  void insert_entry(Endpoint ep, Entry e);
  // With topology_mu_ held exclusively.
  HwNode& node_for(NodeId id);
  bool idle_between_events() const;

  HwWorldConfig config_;
  ServiceLoop::Clock::time_point epoch_;
  Progress progress_;
  EventGate gate_;
  Rng root_rng_;
  // Guards nodes_, node_open_, entries_ and target_nodes_: services and
  // dispatchers look endpoints up while the owner adds services.
  mutable std::shared_mutex topology_mu_;
  std::map<NodeId, std::unique_ptr<HwNode>> nodes_;
  std::map<NodeId, Status> node_open_;
  std::map<Endpoint, Entry> entries_;
  std::map<TargetId, NodeId> target_nodes_;
  ServiceIndex next_service_index_ = 0;
  bool started_ = false;
  bool stopped_ = false;
  // Set when stop() begins; read by the nodes' transport threads.
  std::atomic<bool> shutting_down_{false};
  std::uint64_t region_key_salt_ = 0;  // fixed at construction
  std::atomic<std::uint64_t> messages_sent_{0};
  std::atomic<std::uint64_t> hook_dropped_{0};
  std::atomic<std::int64_t> in_flight_messages_{0};
  mutable std::mutex log_mu_;
  std::vector<std::string> logs_;
};

}  // namespace sluice::hw
