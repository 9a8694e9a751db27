// SimRuntime: one simulated run. It owns the process's s4u::Engine, the
// platform built from a topology (sim_platform.hpp), the services with their
// SimEnvs (sim_env.hpp), the storage targets and memory regions, and the
// metrics; it runs the simulation and can pause it when a condition holds.
//
// Event delivery (the design the issue asks to measure; see the bench)
// - One SimGrid actor per service, on its node's CPU host. The actor delivers
//   the service's events one at a time from its own ready queue, so a
//   service is never re-entered and runs single-threaded, as core/env.hpp
//   requires. Actors block only on their own s4u::Semaphore (a SimGrid
//   object, never an OS lock or thread).
// - No actor waits on a set of activities (wait_any over thousands of
//   activities costs O(set) per event). Instead:
//   * communications (messages, transfers) are host-to-host comms the
//     service's actor issues (batched: one simcall per drained queue) and
//     never waits for; SimGrid's network-action signal
//     (s4u::Link::on_communication_state_change) says when each one ends,
//     and a map from kernel activity to operation finds it;
//   * executions, which have no such signal, are each issued and waited
//     for (a plain wait) by a pooled "waiter" actor;
//   * drive work is flows of the runtime's FluidNet (sim/fluid_net.hpp): a
//     drive's own and read or write constraints, shared as SimGrid's S19
//     disk model shares them, without its rounding (S19 advances an I/O by
//     rint(rate x step) bytes at every step of the whole simulation, so a
//     drive ran faster or slower than its rate as other events came denser
//     or sparser: docs/sim.md, fluid mode) and without its full update of
//     every drive action at every step; its PCIe crossing is a comm beside
//     it (a flow in fluid mode). In fluid mode every communication is a
//     flow too (SimRuntimeConfig::fluid).
//   The result goes into the owner's ready queue and releases its semaphore.
// - Activities are never issued by maestro. SimGrid 3.32 keeps an actor's
//   activities in a list that it searches linearly at each completion;
//   maestro-issued ones pile up in maestro's list (measured: the cost per
//   chunk grew with every chunk simulated so far). Executions and
//   timer-made comms have waiters of their own, so an execution waiter's
//   list holds its one activity (waiters_). Host-to-host comms (Comm::sendto) still pass
//   through one process-wide list whoever issues them, so a comm's
//   completion costs O(comms in flight); that is what limits the bench at
//   1,024 clients (tests/bench/sim_bench.cpp says by how much). Mailbox
//   comms avoid it but need an actor on each end's host: future work.
// - Timers, delays before a disk request, same-node messages and memory
//   operations (checksum/fill/verify) are SimGrid kernel timers
//   (simgrid::kernel::timer::Timer), which cost no activity at all.
// - Single-threaded: SimGrid runs with sequential contexts; SimRuntime sets
//   kernel timers from actor code directly, which is safe only there.
//
// Determinism: SimGrid orders simultaneous events in a fixed way, every
// container whose order can reach a result is ordered, and each service's
// Rng is forked from the run seed and its endpoint, so the same topology,
// profile, services and seed give the same run, byte for byte.
//
// One per process: SimGrid allows one engine per process and it cannot be
// reset. create() fails if this process already ran a simulation; run each
// simulation in its own child process (sim_process.hpp). The destructor ends
// the service actors; the engine itself stays until the process exits.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <simgrid/forward.h>

#include "core/env.hpp"
#include "core/topology/topology.hpp"
#include "core/world.hpp"
#include "sim/fluid_net.hpp"
#include "sim/sim_platform.hpp"
#include "sim/sim_profile.hpp"

namespace sluice::sim {

// Write-backs of buffered writes (SimProfile page_cache_*) at one drive at
// once; the others wait in its queue, oldest first. Linux writes a device's
// dirty pages back from one flusher work item per device, not one I/O per
// write; and SimGrid shares a disk among its activities at a cost that grows
// with their number (thousands of absorbed writes made one BeeOND sweep
// point run for minutes instead of seconds). Enough to keep the drive busy:
// the drive's rate is shared by what is at it.
inline constexpr std::uint32_t k_write_backs_at_drive = 4;

// Read-ahead pieces of buffered reads (SimProfile page_cache_read_ahead_bytes)
// a drive works on at once. A piece's access time (the drive's per-request
// latency and request time, SimProfile disk_read_*) elapses while it waits
// in the drive's queue, over the piece before it, as a device queue overlaps
// its requests' latencies; the drive then reads the ready pieces one after
// the other at its full rate, oldest first, so they end one after the other.
// Shared among every stream's window at once (SimGrid's fair sharing), the
// pieces of all streams ended together and the network idled while they
// were read, then carried them in a burst (roofline configuration 9: 0.68
// of its bound); four at once, with their latencies in step, left the
// drive idle a latency in every four pieces (0.79 of the bound of drive-bound
// configurations).
inline constexpr std::uint32_t k_read_aheads_at_drive = 1;

class SimEnv;
struct SimOp;
struct ServiceSlot;
struct Waiter;
struct ReadStream;
struct ReadAheadPiece;
struct MadeBy;

struct SimRuntimeConfig {
  std::uint64_t seed = 1;
  SimProfile profile = default_profile();
  // Memory a node's services may alloc. 0: the machine model's, host and
  // pinned buffers against the host memory of the node's sockets and each
  // GPU's buffers against that GPU's memory; where the model gives no size,
  // k_unsized_node_memory_bytes for the node (said once in the log). Not 0:
  // one pool of that size for every kind on every node (tests use it to run
  // out of memory on purpose).
  std::uint64_t node_memory_limit_bytes = 0;
  // Checks every message against the wire limits (proto::validate) so that a
  // message too big for the wire fails in simulation as it would on hardware.
  bool validate_messages = true;
  // Log lines kept (then counted in logs_dropped()).
  std::size_t max_log_lines = 100'000;
  // Also handed every log line as it is logged, kept or not (the runner's
  // crash log: scenarios/runner/crash_log.hpp); may be empty.
  std::function<void(std::string_view line)> log_sink;
  // Stack of each service actor; 0 keeps SimGrid's default (8 MiB, committed
  // lazily). Lower it for tens of thousands of services.
  std::uint32_t actor_stack_kib = 0;
  // Count the bytes of every transfer on each topology link it crosses
  // (link_bytes()); costs a route lookup per transfer, so off by default.
  bool account_link_bytes = false;
  // Streamed reads (the companion of chunk coalescing, ClientConfig::coalesce):
  // a storage read of more than this many bytes (0 = off) is modelled as a
  // server that streams it in segments of this size, overlapping the drive
  // and the network as the same bytes in per-chunk requests would: the read
  // completes once its first segment is in the buffer (per-request latency +
  // segment / drive rate + segment / SimProfile disk_read_request_bytes_per_s),
  // the rest of the drive work continues in the background, and a transfer
  // out of that buffer starts at once but completes no earlier than that
  // drive work. Without it a merged request reads everything before the
  // first byte leaves, which per-chunk requests do not
  // (tests/sim/sim_coalesce_test.cpp measures both).
  std::uint64_t stream_read_segment_bytes = 0;
  // Fluid mode (issue 50; sim/fluid_net.hpp): every communication (messages,
  // transfers, a drive's PCIe crossing) is a flow of a FluidNet instead of a
  // SimGrid activity; the same sharing model, solved again once the flows
  // that started or ended reach fluid_resolve_share of those in flight.
  // Requests, disk I/Os, computations, faults and latencies stay discrete.
  bool fluid = false;
  double fluid_resolve_share = k_fluid_resolve_share;
};

// Message and transfer hooks (MessageFate, MessageHook, TransferHook) are
// the World contract's (core/world.hpp).

// Limits.
// run_until() lets the clock run at most this far per call (a guard; a
// run pauses long before, when the condition holds or nothing is left).
inline constexpr double k_run_horizon_s = 1e9;
// A node whose machine model gives no host memory size may alloc this much
// (SimRuntimeConfig::node_memory_limit_bytes = 0); the log says so once.
inline constexpr std::uint64_t k_unsized_node_memory_bytes = 8 * k_gib;

class SimRuntime {
 public:
  // Creates the engine and the platform. unavailable if this process already
  // has a simulation.
  static Result<std::unique_ptr<SimRuntime>> create(std::shared_ptr<const topo::Topology> cluster,
                                                    SimRuntimeConfig config = {});
  ~SimRuntime();
  SimRuntime(const SimRuntime&) = delete;
  SimRuntime& operator=(const SimRuntime&) = delete;

  // ---- services ----
  // The Env of the next service on `node` (its endpoint is fixed now), then
  // adopt the service built on it. add_service does both: S(Env&, args...).
  Env& create_env(NodeId node);
  void adopt_service(Env& env, std::unique_ptr<Service> service);
  template <typename S, typename... Args>
  S& add_service(NodeId node, Args&&... args) {
    Env& env = create_env(node);
    if (ServiceFactory factory = restart_factory<S>(args...)) factories_[env.self()] = std::move(factory);
    auto service = std::make_unique<S>(env, std::forward<Args>(args)...);
    S& ref = *service;
    adopt_service(env, std::move(service));
    return ref;
  }
  Endpoint endpoint_of(const Service& service) const;
  // The Env of a service of this runtime (asserted).
  Env& env_of(const Service& service);
  std::size_t service_count() const { return slots_.size(); }

  // ---- storage targets: target -> NVMe drive of a node ----
  Status add_target(TargetId target, NodeId node, std::uint32_t nvme_index);
  // The node's next NVMe drive not yet given to a target.
  Status add_target(TargetId target, NodeId node);
  NodeId node_of_target(TargetId target) const;
  std::size_t object_count(TargetId target) const;
  std::uint64_t object_bytes(TargetId target, FileId file_id) const;
  // Makes a chunk object exist with `bytes` bytes, as if written before the
  // run (a data set that is already on the drives).
  Status preload_object(TargetId target, FileId file_id, std::uint64_t bytes);

  // ---- running ----
  // Starts the services (their actors run from the next run call).
  void start();
  // Runs until done() holds (checked after every delivered event), nothing
  // is left to happen, or max_events more events were delivered; returns
  // done(). The clock stops where the condition became true.
  bool run_until(const std::function<bool()>& done, std::uint64_t max_events = 50'000'000);
  // Runs until nothing is left (or max_events); returns the events delivered.
  std::uint64_t run_until_idle(std::uint64_t max_events = 50'000'000);
  // Runs every event up to now + duration; the clock then reads that time.
  void run_for(TimeNs duration_ns);
  TimeNs now() const;

  // ---- faults ----
  void set_message_hook(MessageHook hook) { message_hook_ = std::move(hook); }
  void set_transfer_hook(TransferHook hook) { transfer_hook_ = std::move(hook); }
  // A dead service receives nothing; completions of operations it started
  // before dying are dropped (also after revive).
  void kill(Endpoint service);
  void revive(Endpoint service);
  bool alive(Endpoint service) const;
  // Fault plans (core/faults; FaultControl in tests/soak). Call these from
  // the main thread between run calls, never from a service.
  // The service comes back as a fresh instance built from its original
  // arguments (a restarted process) that starts on its actor at the next
  // run; what the old instance started is dropped, the memory it allocated
  // is freed, its targets' objects stay. References to the old instance are
  // invalid afterwards. unavailable for a service built from arguments that
  // cannot be copied.
  [[nodiscard]] Status restart(Endpoint service);
  // Disk work on `target` is `factor` times larger (1.0: normal speed).
  void set_disk_slowdown(TargetId target, double factor);
  // Each set of nodes is cut off from every node outside it: messages
  // between the sides are lost, transfers fail with unavailable.
  void set_partitions(std::vector<std::vector<NodeId>> partitions) { partitions_ = std::move(partitions); }
  bool partitioned(NodeId a, NodeId b) const;
  // Every message is lost with loss_probability (a seeded Rng of its own)
  // and otherwise arrives extra_delay_ns later; applied before the hook.
  void set_message_faults(double loss_probability, TimeNs extra_delay_ns);

  // ---- routes ----
  // The topology links a transfer would load, in order (empty for a copy
  // within one memory); the same host choice transfer() makes.
  Result<std::vector<LinkInfo>> transfer_route(const TransferSpec& spec) const;
  // Bytes transfers moved over topology link `edge` in direction a->b
  // (a_to_b) or b->a, with account_link_bytes on (messages not counted).
  double link_bytes(topo::EdgeId edge, bool a_to_b) const;

  // ---- results ----
  const std::map<std::string, double, std::less<>>& counters() const { return counters_; }
  double counter(std::string_view name) const;
  const std::vector<double>* samples(std::string_view name) const;
  const std::map<std::string, std::vector<double>, std::less<>>& all_samples() const { return samples_; }
  const std::vector<std::string>& logs() const { return logs_; }
  std::uint64_t logs_dropped() const { return logs_dropped_; }
  std::uint64_t messages_sent() const { return messages_sent_; }
  std::uint64_t messages_dropped() const { return messages_dropped_; }
  std::uint64_t events_delivered() const { return events_; }
  // SimGrid activities (communications, disk I/Os, executions) started, and
  // kernel timers set: the cost drivers of a run.
  std::uint64_t activities_started() const { return activities_started_; }
  std::uint64_t timers_set() const { return timers_set_; }
  // Storage reads modelled as streams (stream_read_segment_bytes).
  std::uint64_t streamed_reads() const { return streamed_reads_; }
  // Buffered writes (StorageIoSpec::buffered) the page cache took, and those
  // of them that waited for write-back to make room (SimProfile page_cache_*).
  std::uint64_t buffered_writes() const { return buffered_writes_; }
  // StorageOp::flush ops (a storage server's sync + drop of its caches), and
  // those that had dirty bytes to wait for.
  std::uint64_t flushes() const { return flushes_; }
  std::uint64_t flushes_waited() const { return flushes_waited_; }
  std::uint64_t throttled_writes() const { return throttled_writes_; }
  // Buffered reads (StorageIoSpec::buffered on a read), the read-ahead
  // pieces the drives read for them, and the reads that found their piece
  // (SimProfile page_cache_read_ahead_bytes).
  std::uint64_t buffered_reads() const { return buffered_reads_; }
  std::uint64_t read_ahead_pieces() const { return read_ahead_pieces_; }
  std::uint64_t read_ahead_hits() const { return read_ahead_hits_; }
  // Bytes of `node`'s page cache read ahead and not yet consumed or dropped.
  std::uint64_t read_ahead_bytes(NodeId node) const;
  // Bytes of `node`'s page cache not yet written back.
  std::uint64_t dirty_bytes(NodeId node) const;
  // The runtime's FluidNet: drive work in both modes, every communication in
  // fluid mode; its solves, flows, bytes and measured strays (sim/fluid_net.hpp).
  const FluidNet& fluid() const { return *fluid_; }
  // Times the SimGrid main loop was entered (a pause or idle ends each).
  std::uint64_t engine_runs() const { return engine_runs_; }
  std::uint64_t allocated_bytes(NodeId node) const;
  const SimPlatform& platform() const { return *platform_; }
  const SimRuntimeConfig& config() const { return config_; }
  const SimProfile& profile() const { return config_.profile; }

 private:
  friend class SimEnv;
  struct Region {
    MemKind kind = MemKind::host;
    std::uint16_t device = 0;
    std::uint64_t length = 0;
    Endpoint owner;          // the service that allocated it (restart frees it)
    bool window = false;     // Env::open_window: counts no memory of its own
    std::uint32_t pool = 0;  // NodeMemory::pools key it counts against (not a window)
  };
  // A node's memory pools: key k_host_pool for host and pinned buffers (and
  // GPU buffers where the model gives the GPU no size), else the GPU index.
  struct MemoryPool {
    std::uint64_t limit_bytes = 0;
    std::uint64_t allocated_bytes = 0;
  };
  static constexpr std::uint32_t k_host_pool = 0xffffffffu;
  struct NodeMemory {
    std::uint32_t next_region = 1;
    std::map<std::uint32_t, MemoryPool> pools;
    std::map<std::uint32_t, Region> regions;
  };
  struct Target {
    NodeId node = k_no_id;
    simgrid::s4u::Disk* disk = nullptr;
    // Where its bytes cross PCIe (SimPlatform::drive_hosts); nullptr: not modelled.
    simgrid::s4u::Host* drive_host = nullptr;
    simgrid::s4u::Host* memory_host = nullptr;
    // Its channels (SimProfile disk_channels > 1), which then do all its drive work.
    std::vector<simgrid::s4u::Disk*> channels;
    std::map<FileId, std::uint64_t> sizes;
    // Reads and writes the drive is working on (SimProfile disk_batch_occupancy_ns).
    std::uint32_t requests_at_drive = 0;
    // Write-backs of buffered writes waiting for the drive, and those at it
    // (at most k_write_backs_at_drive).
    std::deque<SimOp*> write_backs;
    std::uint32_t write_backs_at_drive = 0;
    // Read-ahead of buffered reads, per object (SimProfile
    // page_cache_read_ahead_bytes): where its stream's last read ended, how
    // far the drive was asked to read ahead, and the pieces read or being
    // read and not yet consumed, by object offset.
    struct ReadAhead {
      std::uint64_t next = 0;
      std::uint64_t window_end = 0;
      std::map<std::uint64_t, std::shared_ptr<ReadAheadPiece>> pieces;
    };
    std::map<FileId, ReadAhead> read_ahead;
    // Read-ahead pieces whose access time has elapsed, waiting for the
    // drive, and those at it (at most k_read_aheads_at_drive). The pieces a
    // read waits for go first, in the order reads came to want them (FIFO:
    // wanted first-come, a piece a read has waited for longest is not passed
    // by those wanted after it); then the pieces read for later, oldest first.
    std::deque<SimOp*> wanted_read_aheads;
    std::deque<SimOp*> read_aheads;
    std::uint32_t read_aheads_at_drive = 0;
  };

  SimRuntime() = default;

  // Called by SimEnv (actor context, or main between runs).
  Status send(ServiceSlot& from, Endpoint to, proto::Message message);
  // The Env contract's ledger (core/world.hpp): `op` was handed to the service.
  OpId handed_out(ServiceSlot& self, OpId op);
  OpId transfer(ServiceSlot& self, const TransferSpec& spec);
  OpId storage_io(ServiceSlot& self, const StorageIoSpec& spec);
  OpId compute(ServiceSlot& self, CostKind kind, std::uint64_t units);
  OpId timer(ServiceSlot& self, TimeNs delay_ns);
  OpId memory_op(ServiceSlot& self, const MemHandle& range, const char* what);
  Result<MemHandle> alloc(ServiceSlot& self, MemKind kind, std::uint16_t device, std::uint64_t bytes);
  // The key of the pool (NodeMemory::pools) a buffer of `kind` on `device`
  // of self's node counts against, made with its limit on first use.
  std::uint32_t memory_pool(ServiceSlot& self, MemKind kind, std::uint16_t device);
  // A region of `bytes` leaves `pool` (free, or a restart dropping its owner's).
  static void release_memory(MemoryPool& pool, std::uint64_t bytes);
  void free(const MemHandle& region);
  Result<MemHandle> open_window(ServiceSlot& self, const MemHandle& range);
  void log(ServiceSlot& self, LogLevel level, std::string_view message);
  void count(std::string_view name, double delta);
  void sample(std::string_view name, double value);

  // Operation plumbing.
  SimOp* new_op(ServiceSlot& owner);
  OpId fail_now(ServiceSlot& owner, Status status);
  void schedule(SimOp* op);  // start now (batched) or after op's delay
  void launch(SimOp* op);    // start the work now (any context)
  void hand_to_waiter(SimOp* op);
  void waiter_main(Waiter& waiter);
  void flush_starts();              // start the batch (one simcall)
  void finish(SimOp* op, bool ok);  // deliver the result
  // finish() of an op no service waits for (a write-back, a streamed read's
  // or a read-ahead piece's drive work, a drive work's PCIe part); false
  // for the others.
  bool finish_background(SimOp* op, bool ok);
  void on_comm_done(const void* activity_impl, bool ok);
  // A communication of `op` ended (a SimGrid comm's signal or a fluid flow):
  // the next phase of a staged copy, or the op's end.
  void comm_ended(SimOp* op, bool ok);
  // Fluid mode: op's comm (src -> dst, `bytes`) as a flow.
  void fluid_start(SimOp* op, simgrid::s4u::Host* src, simgrid::s4u::Host* dst, double bytes);
  // op's drive work: its shares FluidNet flows, its PCIe crossing a flow
  // (fluid mode) or a SimGrid comm (per chunk).
  void drive_work(SimOp* op);
  // A part of op's drive work ended; the op ends with the last.
  void drive_part_done(SimOp* op, bool ok);
  // The FluidNet route of an I/O on `disk` (made on first use).
  std::uint32_t fluid_disk_route(const simgrid::s4u::Disk* disk, bool write);
  // The FluidNet route between two hosts (made on first use, from SimGrid's
  // route and the platform's factors, as CM02 prices a comm).
  std::uint32_t fluid_route(simgrid::s4u::Host* src, simgrid::s4u::Host* dst);
  // A fluid flow ended (its token: the op, low bit set for a part of its drive work).
  void fluid_done(std::uint64_t token);
  // Keeps one kernel timer at the fluid network's next event.
  void fluid_arm();
  void deliver(ServiceSlot& to, std::uint64_t incarnation, Event event, const MadeBy& made);
  void wake(ServiceSlot& slot);
  Status check_range(const MemHandle& range, NodeId expected_node, const char* what) const;
  // A storage request's result bytes, its delay before the drive work and
  // that work in bytes (SimProfile disk_*), before any fault-plan slowdown.
  void price_storage_request(SimOp& op, const Target& target, const StorageIoSpec& spec) const;
  // price_storage_request, then the target's fault-plan slowdown on the
  // request's latency and drive work; returns the factor (1: none).
  double price_slowed(SimOp& op, const Target& target, const StorageIoSpec& spec) const;
  // Puts a request of `bytes` on the target's channels (SimProfile
  // disk_channels, disk_channel_stripe_bytes): sets op's channel_first and
  // channel_count; returns the number of shares its bytes split into (1
  // without channels).
  double spread_over_channels(SimOp& op, const Target& target, const StorageIoSpec& spec, std::uint64_t bytes) const;
  // The shares a drive request of `bytes` splits into: 1 on a target
  // without channels, else one channel per stripe, at most all of them.
  std::uint32_t shares_of(const Target& target, std::uint64_t bytes) const;
  // The resource one share runs on: the drive, or one of its (equal) channels.
  static const simgrid::s4u::Disk* share_unit(const Target& target);
  // `op` is a read or write the target's drive works on until it finishes.
  void count_at_drive(SimOp& op, Target& target);
  // The page cache of a storage node (SimProfile page_cache_*): its dirty
  // bytes not yet written back, and the buffered writes waiting for room,
  // each with its write-back (in arrival order). limit_bytes 0: no
  // write-back on this node (no host memory size, or dirty_ratio 0).
  // read_ahead_limit_bytes: (1 - dirty_ratio) x host memory, which the
  // read-ahead pieces (read_ahead_bytes) stay within.
  struct PageCache {
    std::uint64_t limit_bytes = 0;
    std::uint64_t dirty_bytes = 0;
    std::uint64_t read_ahead_limit_bytes = 0;
    std::uint64_t read_ahead_bytes = 0;
    std::deque<std::pair<SimOp*, SimOp*>> waiting;
    std::vector<SimOp*> flushes;  // StorageOp::flush ops waiting for dirty_bytes to reach 0
  };
  PageCache& page_cache(NodeId node);
  // The host memory of `node`'s sockets in the machine model (0: not given).
  std::uint64_t host_memory_bytes(NodeId node) const;
  // `write` (priced as a drive write) becomes a copy into the page cache,
  // and its drive work a write-back that follows it.
  OpId write_buffered(ServiceSlot& self, SimOp* write, Target& target, PageCache& cache);
  void admit_dirty(PageCache& cache, SimOp* write, SimOp* back);
  // Starts queued write-backs of `target` while fewer than
  // k_write_backs_at_drive are at its drive.
  void start_write_backs(Target& target);
  // A write-back ended: its bytes are clean; waiting writes that now fit start.
  void written_back(SimOp& back);
  // StorageOp::flush: completes once `target`'s node holds no dirty bytes (at
  // once when it holds none); the target's read-ahead is dropped (the drop of
  // the caches: the model keeps no other clean pages).
  OpId flush_page_cache(SimOp* flush, Target& target);
  // A buffered read `op` (priced by price_slowed): if it
  // continues its object's stream, the drive reads ahead; if its piece was
  // read ahead, it becomes a copy out of the cache once the piece is there.
  // nullopt: it goes to the drive as an unbuffered read does.
  std::optional<OpId> read_buffered(ServiceSlot& self, SimOp* op, Target& target, const StorageIoSpec& spec);
  // The drive reads [window_end, until) of the object ahead, in pieces of `piece` bytes.
  void read_ahead(ServiceSlot& self, Target& target, Target::ReadAhead& stream, const StorageIoSpec& spec,
                  std::uint64_t piece, std::uint64_t until);
  // Drops the read-ahead of one object of `target` (or of all: nullopt).
  void drop_read_ahead(Target& target, std::optional<FileId> file);
  // A read-ahead piece's drive work ended: the reads waiting for it go on.
  void end_read_ahead(SimOp& piece, bool ok);
  // Starts queued read-ahead pieces of `target` while fewer than
  // k_read_aheads_at_drive are at its drive.
  void start_read_aheads(Target& target);
  // A background op doing the drive work `priced` was priced for, at `target`
  // (a streamed read's, a write-back's; the caller sets its kind): not yet
  // counted at the drive nor scheduled.
  SimOp* new_drive_work(ServiceSlot& self, const SimOp& priced, const Target& target);
  // `op` (a priced read longer than SimRuntimeConfig::stream_read_segment_bytes,
  // already slowed by `slowdown`) as a streamed read.
  OpId stream_read(ServiceSlot& self, SimOp* op, Target& target, const StorageIoSpec& spec, double slowdown);
  // The drive work of a streamed read ended (OpKind::stream_disk).
  void end_stream(SimOp& disk);
  // A finished op leaves its target's drive (count_at_drive's count).
  void release_drive(SimOp& op);
  // A finished storage op's effect on its target: a write's object size, a
  // remove, a stat's size (ops that succeeded).
  void apply_storage_effect(SimOp& op);
  // A same-node copy between host memory and a GPU becomes a staged copy:
  // the CPU copies of SimProfile staging_* and the DMA, one after the other.
  void stage_through_cpu(SimOp& op, const TransferSpec& spec) const;
  // The SimGrid hosts a transfer runs between (equal for a copy within one memory).
  Result<std::pair<simgrid::s4u::Host*, simgrid::s4u::Host*>> transfer_hosts(const TransferSpec& spec) const;

  // Actors and run control.
  void spawn(ServiceSlot& slot);
  void actor_main(ServiceSlot& slot);
  bool idle() const;
  void request_pause();
  void resume_actors();
  void run_engine(double until_s);

  SimRuntimeConfig config_;
  simgrid::s4u::Engine* engine_ = nullptr;
  std::unique_ptr<SimPlatform> platform_;
  std::map<Endpoint, std::unique_ptr<ServiceSlot>> slots_;
  std::vector<std::unique_ptr<ServiceSlot>> unadopted_;  // envs created, services not yet adopted
  std::map<NodeId, ServiceIndex> next_service_index_;
  std::map<NodeId, NodeMemory> memory_;
  std::map<TargetId, Target> targets_;
  std::map<NodeId, std::uint32_t> next_nvme_;
  std::vector<double> link_bytes_;  // [2 x EdgeId + (a_to_b ? 0 : 1)], with account_link_bytes
  MessageHook message_hook_;
  TransferHook transfer_hook_;
  std::map<Endpoint, ServiceFactory> factories_;  // for restart()
  std::map<TargetId, double> disk_slowdown_;
  std::vector<std::vector<NodeId>> partitions_;
  double loss_probability_ = 0.0;
  TimeNs extra_delay_ns_ = 0;
  Rng fault_rng_{0};  // reseeded from the run's seed by create()

  // Fluid mode (config_.fluid): the network's flows, its links by SimGrid
  // link and its routes by pair of hosts, and the kernel timer at its next event.
  std::unique_ptr<FluidNet> fluid_;
  std::unordered_map<const simgrid::s4u::Link*, std::uint32_t> fluid_links_;
  struct HostPairHash {
    std::size_t operator()(const std::pair<const simgrid::s4u::Host*, const simgrid::s4u::Host*>& p) const {
      return std::hash<const void*>()(p.first) * 1000003u ^ std::hash<const void*>()(p.second);
    }
  };
  std::unordered_map<std::pair<const simgrid::s4u::Host*, const simgrid::s4u::Host*>, std::uint32_t, HostPairHash>
      fluid_routes_;
  std::map<const simgrid::s4u::Disk*, std::array<std::uint32_t, 3>> fluid_disk_links_;  // drive, read, write
  std::map<std::pair<const simgrid::s4u::Disk*, bool>, std::uint32_t> fluid_disk_routes_;
  simgrid::kernel::timer::Timer* fluid_timer_ = nullptr;
  double fluid_timer_at_ = 0;

  // Operations.
  OpId next_op_ = 1;
  std::vector<SimOp*> pending_starts_;
  std::vector<SimOp*> finished_;         // released at the next flush (their activity may still be in use)
  std::unordered_set<SimOp*> live_ops_;  // every SimOp not yet released (teardown; hashed: one insert and erase per op)
  std::uint64_t inflight_ = 0;           // activities and timers not yet finished
  std::uint64_t ready_events_ = 0;       // events waiting in ready queues
  std::uint64_t runnable_actors_ = 0;    // actors not blocked on their semaphore
  std::unordered_map<const void*, SimOp*> comms_in_flight_;  // by kernel activity (lookup only)
  // Streamed reads whose drive work is still running, by (node, region) of their buffer.
  std::map<std::pair<NodeId, std::uint32_t>, std::shared_ptr<ReadStream>> streams_;
  std::map<NodeId, PageCache> page_caches_;
  // Waiters, and the idle ones of each kind (WaiterKind): those that wait for
  // executions and those that only issue comms a kernel timer made due.
  // Kept apart because SimGrid 3.32 keeps a list of each actor's activities:
  // an execution's end searches its issuer's list linearly (ExecImpl::post),
  // while a comm never waited for (ours) leaves its in it.
  std::vector<std::unique_ptr<Waiter>> waiters_;
  std::array<std::vector<Waiter*>, 2> idle_waiters_;

  // Run control.
  bool started_ = false;
  bool shutting_down_ = false;
  bool pause_requested_ = false;
  bool pause_on_idle_ = false;
  std::function<bool()> stop_when_;
  std::uint64_t event_budget_ = ~std::uint64_t{0};
  std::set<simgrid::s4u::Activity*> vetoed_;
  simgrid::s4u::ActivityPtr veto_;

  // Results.
  std::uint64_t events_ = 0;
  std::uint64_t activities_started_ = 0;
  std::uint64_t timers_set_ = 0;
  std::uint64_t streamed_reads_ = 0;
  std::uint64_t buffered_writes_ = 0;
  std::uint64_t flushes_ = 0;
  std::uint64_t flushes_waited_ = 0;
  std::uint64_t throttled_writes_ = 0;
  std::uint64_t buffered_reads_ = 0;
  std::uint64_t read_ahead_pieces_ = 0;
  std::uint64_t read_ahead_hits_ = 0;
  std::uint64_t engine_runs_ = 0;
  std::uint64_t messages_sent_ = 0;
  std::uint64_t messages_dropped_ = 0;
  std::map<std::string, double, std::less<>> counters_;
  std::map<std::string, std::vector<double>, std::less<>> samples_;
  std::vector<std::string> logs_;
  std::uint64_t logs_dropped_ = 0;
};

}  // namespace sluice::sim
