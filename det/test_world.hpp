// TestEnv: the deterministic, virtual-time world for unit and integration tests.
//
// A TestWorld holds services (each bound to its own TestEnv), node memories,
// storage targets and one event queue ordered by (virtual time, sequence
// number), so a run is a pure function of its configuration and seed. Time only
// moves when the queue is drained: tests never sleep and never read a clock.
//
// The resource model is deliberately simple but not free: each storage target
// and each service's CPU serve one operation at a time (FIFO, busy-until), so
// queues and back-pressure in the services are exercised; transfers take
// latency + bytes/bandwidth without sharing; messages take a fixed latency.
// Bytes really move (memory regions and chunk objects are byte vectors) unless
// move_bytes is off, so reads can be verified end to end.
//
// Fault controls (used by tests of retries and timeouts): rules that drop,
// delay or duplicate matching messages, and kill/revive of a service (a dead
// service receives nothing and its pending completions are discarded).
// Whole-world faults for fault plans (core/faults; tests/soak drives them):
// restart of a service as a fresh instance (a crashed process coming back),
// slow targets, network partitions and seeded random message loss.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <span>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/env.hpp"
#include "core/world.hpp"
#include "det/fault_rules.hpp"

namespace sluice::testing {

struct TestWorldConfig {
  std::uint64_t seed = 1;
  TimeNs message_latency_ns = 5 * k_ns_per_us;
  TimeNs transfer_latency_ns = 2 * k_ns_per_us;
  double transfer_bytes_per_s = 12.5e9;  // 100 Gb/s
  double local_copy_bytes_per_s = 25e9;  // PCIe Gen4 x16, effective
  TimeNs storage_latency_ns = 20 * k_ns_per_us;
  double storage_read_bytes_per_s = 3.2e9;
  double storage_write_bytes_per_s = 2.0e9;
  double memory_op_bytes_per_s = 10e9;  // fill / verify / checksum
  std::array<TimeNs, static_cast<std::size_t>(CostKind::count_)> cost_ns_per_unit{2000, 10000, 10000, 2000, 200, 5000,
                                                                                  5000, 3000,  1000,  500,  1};
  bool roundtrip_messages_through_codec = true;  // every message is encoded and decoded
  bool move_bytes = true;
  std::uint64_t node_memory_limit_bytes = 8 * k_gib;
  std::uint64_t target_capacity_bytes = 1 * k_tib;
  // RDMA keys: TestEnv::remote_access grants synthetic keys (a function of
  // seed, node, region and NIC: TestWorld::rdma_key_of) and a transfer that
  // carries a key checks it against the region, failing as an HCA's rkey
  // check does. Off: a world without RDMA keys (Env's default answer), so
  // messages carry none.
  bool rdma_keys = false;
};

class TestWorld;

class TestEnv final : public Env, public Metrics {
 public:
  TestEnv(TestWorld& world, Endpoint self, Rng rng) : world_(world), self_(self), rng_(rng) {}

  Endpoint self() const override { return self_; }
  TimeNs now() const override;
  TimeNs wall_ns() const override { return k_virtual_wall_epoch_ns + now(); }
  Rng& rng() override { return rng_; }
  Metrics& metrics() override { return *this; }
  void log(LogLevel level, std::string_view message) override;

  [[nodiscard]] Status send(Endpoint to, proto::Message message) override;
  OpId transfer(const TransferSpec& spec) override;
  OpId storage_io(const StorageIoSpec& spec) override;
  OpId compute(CostKind kind, std::uint64_t units) override;
  OpId timer(TimeNs delay_ns) override;
  OpId checksum(const MemHandle& range) override;
  OpId fill(const MemHandle& range, const PatternSpec& pattern) override;
  OpId verify(const MemHandle& range, const PatternSpec& pattern) override;
  Result<MemHandle> alloc(MemKind kind, std::uint16_t device, std::uint64_t bytes) override;
  void free(const MemHandle& region) override;
  Result<MemHandle> open_window(const MemHandle& range) override;
  void close_window(const MemHandle& window) override;
  Result<proto::RdmaRegionDesc> remote_access(const MemHandle& range, std::uint32_t nic, NodeId grantee) override;

  void count(std::string_view name, double delta) override;
  void sample(std::string_view name, double value) override;

 private:
  TestWorld& world_;
  Endpoint self_;
  Rng rng_;
  TimeNs cpu_busy_until_ns_ = 0;
};

struct Distribution {
  std::vector<double> values;
  double sum() const;
  double percentile(double p) const;  // p in [0,100]
};

class TestWorld {
 public:
  explicit TestWorld(TestWorldConfig config = {});
  ~TestWorld();
  TestWorld(const TestWorld&) = delete;
  TestWorld& operator=(const TestWorld&) = delete;

  const TestWorldConfig& config() const { return config_; }

  // Creates a service on `node`: S is constructed as S(Env&, args...). The
  // world owns it. Services start when start() is called (or at once if the
  // world has started already).
  template <typename S, typename... Args>
  S& add_service(NodeId node, Args&&... args) {
    Endpoint ep{node, next_service_index_++};
    auto env = std::make_unique<TestEnv>(*this, ep, root_rng_.fork((std::uint64_t{node} << 32) | ep.service));
    ServiceFactory factory = restart_factory<S>(args...);
    auto service = std::make_unique<S>(*env, std::forward<Args>(args)...);
    S& ref = *service;
    add_entry(ep, std::move(env), std::move(service), std::move(factory));
    return ref;
  }
  Endpoint endpoint_of(const Service& service) const;
  Env& env_of(const Service& service);

  // A storage target on a node (chunk objects live in memory).
  void add_target(TargetId target, NodeId node);
  NodeId node_of_target(TargetId target) const;

  void start();
  // Runs events until none is left or max_events ran; returns events run.
  std::uint64_t run_until_idle(std::uint64_t max_events = 50'000'000);
  // Runs until done() is true (checked after each event), the queue is empty,
  // or max_events ran. Returns done().
  bool run_until(const std::function<bool()>& done, std::uint64_t max_events = 50'000'000);
  // Runs every event up to virtual time t, then sets the clock to t.
  void run_for(TimeNs duration_ns);
  TimeNs now() const { return now_ns_; }

  // Fault controls. Rules (core/world.hpp) apply through the world's hooks,
  // which are the rules' own unless a test sets other hooks.
  void add_fault(MessageRule rule) { rules_.add(std::move(rule)); }
  void add_transfer_fault(TransferRule rule) { rules_.add(std::move(rule)); }
  void clear_faults() { rules_.clear(); }
  void set_message_hook(MessageHook hook) { message_hook_ = std::move(hook); }
  void set_transfer_hook(TransferHook hook) { transfer_hook_ = std::move(hook); }
  void kill(Endpoint service);
  void revive(Endpoint service);
  bool alive(Endpoint service) const;
  // The service comes back as a fresh instance built from its original
  // arguments (a restarted process): what the old instance started is
  // dropped, the memory it allocated is freed, its targets' objects stay.
  // References to the old instance are invalid afterwards. unavailable for
  // a service built from arguments that cannot be copied; not_found for an
  // unknown endpoint. Call between events, never from inside a service.
  [[nodiscard]] Status restart(Endpoint service);
  // Storage I/O on `target` takes `factor` times as long (1.0: normal).
  void set_disk_slowdown(TargetId target, double factor);
  // Each set of nodes is cut off from every node outside it: messages
  // between the two sides are lost, transfers fail with unavailable.
  void set_partitions(std::vector<std::vector<NodeId>> partitions) { partitions_ = std::move(partitions); }
  bool partitioned(NodeId a, NodeId b) const;
  // Every message is lost with loss_probability (from the world's seeded
  // fault Rng) and otherwise arrives extra_delay_ns later.
  void set_message_faults(double loss_probability, TimeNs extra_delay_ns);

  // Direct access for tests.
  std::vector<std::byte>* region_bytes(NodeId node, std::uint32_t region);
  std::span<std::byte> bytes(const MemHandle& range);
  const std::vector<std::byte>* object_bytes(TargetId target, FileId file_id) const;
  // Mutable, for tests that corrupt data at rest (a silent bit flip on a drive).
  std::vector<std::byte>* object_bytes(TargetId target, FileId file_id) {
    return const_cast<std::vector<std::byte>*>(std::as_const(*this).object_bytes(target, file_id));
  }
  std::size_t object_count(TargetId target) const;
  std::uint64_t allocated_bytes(NodeId node) const;

  // Metrics summed over all services (counters) and merged (samples).
  double counter(std::string_view name) const;
  const Distribution* samples(std::string_view name) const;
  const std::map<std::string, double, std::less<>>& counters() const { return counters_; }
  const std::vector<std::string>& logs() const { return logs_; }
  std::uint64_t messages_sent() const { return messages_sent_; }
  std::uint64_t messages_dropped() const { return messages_dropped_; }
  // The synthetic key of region `region` of `node` on NIC `nic` (config rdma_keys).
  proto::RdmaRegionDesc rdma_key_of(NodeId node, std::uint32_t region, std::uint32_t nic) const;
  // Called with every transfer a service starts (its endpoint, the spec as given).
  void set_transfer_observer(std::function<void(Endpoint, const TransferSpec&)> observer) {
    transfer_observer_ = std::move(observer);
  }

 private:
  friend class TestEnv;

  struct Entry {
    std::unique_ptr<TestEnv> env;
    std::unique_ptr<Service> service;
    ServiceFactory factory;  // empty: cannot restart
    bool alive = true;
    std::uint64_t incarnation = 0;  // bumped by kill: pending completions of a dead incarnation are dropped
    CompletionLedger ledger;        // the Env contract: each op completes once
  };
  struct Pending {
    TimeNs at_ns = 0;
    std::uint64_t seq = 0;
    Endpoint to;
    std::uint64_t incarnation = 0;
    std::function<void(Event&)> before;  // side effect at delivery time (moves bytes), may fill the event
    Event event;
  };
  struct Later {
    bool operator()(const Pending& a, const Pending& b) const {
      return a.at_ns != b.at_ns ? a.at_ns > b.at_ns : a.seq > b.seq;
    }
  };
  struct Region {
    MemKind kind = MemKind::host;
    std::uint16_t device = 0;
    std::uint64_t length = 0;
    std::vector<std::byte> bytes;
    Endpoint owner;  // the service that allocated it (restart frees it)
    // A window (Env::open_window): no bytes of its own; it names
    // [parent_offset, +length) of region `parent`.
    std::uint32_t parent = 0;
    std::uint64_t parent_offset = 0;
  };
  struct Node {
    std::uint32_t next_region = 1;
    std::uint64_t allocated_bytes = 0;
    std::unordered_map<std::uint32_t, Region> regions;
  };
  struct Target {
    NodeId node = k_no_id;
    TimeNs busy_until_ns = 0;
    std::map<FileId, std::uint64_t> sizes;             // every object's size (authoritative)
    std::map<FileId, std::vector<std::byte>> objects;  // contents, when move_bytes
    // CRC32C at rest, as the hardware backends keep it (hw_backends/chunk_files.hpp):
    // per k_test_crc_block_bytes block of an object's contents, recorded by
    // the writes that touched it and checked by every read.
    std::map<FileId, std::vector<std::optional<std::uint32_t>>> block_crcs;
  };

  void add_entry(Endpoint ep, std::unique_ptr<TestEnv> env, std::unique_ptr<Service> service, ServiceFactory factory);
  OpId schedule_completion(Endpoint to, TimeNs at_ns, std::function<void(Completion&)> effect);
  void push(Pending p);
  bool step();
  Status check_range(const MemHandle& range, NodeId expected_node, const char* what) const;
  // A storage read or write's effect on its target's object when it
  // completes: the bytes (move_bytes) with the CRC32Cs at rest, the size.
  void stored_read(const StorageIoSpec& spec, Completion& c);
  void stored_write(const StorageIoSpec& spec, Completion& c);
  // StorageOp::punch: the object's bytes in the range become zeros (its size stays).
  void stored_punch(const StorageIoSpec& spec);
  Entry* entry(Endpoint ep);

  TestWorldConfig config_;
  Rng root_rng_;
  Rng fault_rng_;  // message loss draws, apart from every service's stream
  TimeNs now_ns_ = 0;
  std::uint64_t next_seq_ = 0;
  OpId next_op_ = 1;
  ServiceIndex next_service_index_ = 0;
  bool started_ = false;
  std::priority_queue<Pending, std::vector<Pending>, Later> queue_;
  std::map<Endpoint, Entry> services_;
  std::map<NodeId, Node> nodes_;
  std::map<TargetId, Target> targets_;
  FaultRules rules_;
  MessageHook message_hook_ = rules_.message_hook();
  TransferHook transfer_hook_ = rules_.transfer_hook();
  std::map<TargetId, double> disk_slowdown_;
  std::vector<std::vector<NodeId>> partitions_;
  double loss_probability_ = 0.0;
  TimeNs extra_delay_ns_ = 0;
  std::map<std::string, double, std::less<>> counters_;
  std::map<std::string, Distribution, std::less<>> samples_;
  std::vector<std::string> logs_;
  std::uint64_t messages_sent_ = 0;
  std::uint64_t messages_dropped_ = 0;
  std::function<void(Endpoint, const TransferSpec&)> transfer_observer_;
};

}  // namespace sluice::testing
