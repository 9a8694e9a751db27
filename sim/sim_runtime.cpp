#include "sim/sim_runtime.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include <simgrid/kernel/Timer.hpp>
#include <simgrid/kernel/resource/Action.hpp>
#include <simgrid/s4u.hpp>
#include <simgrid/simix.hpp>
#include <xbt/log.h>

#include "core/common/assert.hpp"
#include "core/common/rng.hpp"
#include "core/faults/fault_control.hpp"
#include "core/proto/codec.hpp"
#include "sim/sim_env.hpp"

namespace sluice::sim {

static_assert(FaultWorld<SimRuntime>, "SimRuntime keeps the World contract (core/world.hpp)");

namespace sg = simgrid::s4u;

// Where an op was made: the service that made it and how many it had made
// before. Its own, not the run's: a service makes its ops in the order it
// takes its events, whichever order the engine ran the services in.
struct MadeBy {
  Endpoint service;
  std::uint64_t seq = 0;
  auto operator<=>(const MadeBy&) const = default;
};

// An event waiting in a service's ready queue, tagged with the incarnation of
// the service it was meant for (kill drops what was meant for the dead one).
// Events that reach a service at the same simulated instant wait in the order
// of the ops behind them (`made`), not in the order the engine ended those
// ops: SimGrid and FluidNet break the ties of activities that end together
// differently, and a service that took them in either order would give the
// two modes different answers (SimRuntime::deliver).
struct ReadyEvent {
  std::uint64_t incarnation = 0;
  Event event;
  TimeNs at_ns = 0;  // the instant, to the nanosecond (SimRuntime::now)
  MadeBy made;
};

// One service: its Env, its actor and its ready queue.
struct ServiceSlot {
  Endpoint endpoint;
  std::unique_ptr<SimEnv> env;
  std::unique_ptr<Service> service;
  std::deque<ReadyEvent> ready;
  sg::SemaphorePtr wake;
  sg::ActorPtr actor;
  bool waiting = false;  // blocked on `wake`
  bool spawned = false;
  bool alive = true;
  std::uint64_t incarnation = 0;
  bool start_pending = false;    // restart(): the new instance starts on this actor
  bool cpu_busy = false;         // a compute of this service is executing
  std::deque<SimOp*> cpu_queue;  // computes waiting for it (FIFO)
  std::uint64_t ops_made = 0;    // MadeBy::seq of its next op
  CompletionLedger ledger;       // the Env contract: each op handed out completes once
};

// What an operation does when it finishes.
// write_back: the drive work of a buffered write, after the write completed.
// read_ahead: the drive work of a read-ahead piece (SimProfile page_cache_read_ahead_bytes).
// drive_pcie: per chunk, the PCIe crossing of a drive work (`parent`), a
// SimGrid comm beside the drive's FluidNet flows.
enum class OpKind : std::uint8_t {
  completion,
  message,
  compute,
  storage,
  stream_disk,
  write_back,
  read_ahead,
  drive_pcie
};

// The background drive work of a streamed read, and the transfers out of its
// buffer whose communication ended before it (parked until it ends).
struct ReadStream {
  bool disk_done = false;
  std::vector<SimOp*> parked;
};

// A piece of an object the drive reads ahead (SimRuntime::read_buffered):
// the reads that found it while it was being read wait here, each a copy out
// of the cache scheduled when the piece is in.
struct ReadAheadPiece {
  std::uint64_t bytes = 0;
  bool done = false;
  std::vector<SimOp*> waiting;
  // A read waits for it: it goes to its drive's queue of wanted pieces
  // (Target::wanted_read_aheads, first-come), ahead of those read for later.
  bool wanted = false;
  bool queued = false;  // in one of its drive's two queues, not yet at the drive
  SimOp* work = nullptr;
};
// The SimGrid work behind it (none: only a kernel timer).
enum class Work : std::uint8_t { none, comm, io, exec };

struct SimOp {
  OpKind kind = OpKind::completion;
  Work work = Work::none;
  ServiceSlot* owner = nullptr;
  std::uint64_t owner_incarnation = 0;
  MadeBy made;
  Completion result;
  sg::Host* src = nullptr;  // comm source; exec host
  sg::Host* dst = nullptr;  // comm destination
  sg::Disk* disk = nullptr;
  // Drive work on the channels of `target` (SimProfile disk_channels > 1):
  // `amount` bytes on each of channel_count channels, from channel_first on
  // (wrapping). 0: `amount` bytes on `disk`.
  std::uint32_t channel_first = 0;
  std::uint32_t channel_count = 0;
  bool write = false;
  // Drive work: the bytes that cross PCIe between the drive and its host
  // memory (SimPlatform::drive_hosts), a comm that runs beside the disk
  // activity; the work ends when both have. 0: the disk alone.
  sg::Host* pcie_from = nullptr;
  sg::Host* pcie_to = nullptr;
  double pcie_bytes = 0;
  // Drive work: its parts (a FluidNet flow per drive or channel share, and
  // its PCIe crossing) not yet ended; the op ends with the last.
  std::uint32_t drive_parts = 0;
  bool drive_ok = true;
  SimOp* parent = nullptr;  // kind == drive_pcie: the drive work it is part of
  double amount = 0;        // bytes (comm, io) or flops (exec)
  TimeNs delay_ns = 0;      // before the work starts; the whole op when work == none
  sg::ActivityPtr activity;
  bool done = false;
  // kind == message
  ServiceSlot* to = nullptr;
  std::uint64_t to_incarnation = 0;
  std::optional<Delivery> delivery;
  // A transfer: its ends, checked again when it completes (a window closed
  // meanwhile fails it, as on hardware; Env::open_window)
  std::optional<std::pair<MemHandle, MemHandle>> transfer_ends;
  // kind == storage: effect applied when the operation completes
  StorageOp storage_op = StorageOp::read;
  TargetId target = k_no_id;
  FileId file_id = 0;
  std::uint64_t end_offset = 0;
  // The op is drive work at `target`: counted in Target::requests_at_drive
  // until it finishes (the batch share of SimProfile disk_batch_occupancy_ns).
  // Kept, not derived from kind and work: it also makes the release happen
  // once (release_drive clears it).
  bool at_drive = false;
  // kind == stream_disk: the stream it drives; a transfer: the stream it waits for
  std::shared_ptr<ReadStream> stream;
  // kind == read_ahead: the piece it reads
  std::shared_ptr<ReadAheadPiece> piece;
  // A staged copy host <-> GPU (SimProfile staging_*) is two comms in a row:
  // when the first ends, the op becomes `then` (the first activity is kept
  // until the op is released). A phase lasts at least min_duration_s (a CPU
  // copy: its bytes at one thread's rate; SimGrid 3.32 ignores a rate cap on
  // host-to-host comms), i.e. it ends at the later of its comm's end and
  // phase_not_before_s.
  struct CommPhase {
    sg::Host* src = nullptr;
    sg::Host* dst = nullptr;
    double amount = 0;
    double min_duration_s = 0;
  };
  std::optional<CommPhase> then;
  double phase_not_before_s = 0;
  sg::ActivityPtr first_activity;
};

// What a waiter issues (SimRuntime::idle_waiters_ keeps each kind apart).
enum class WaiterKind : std::uint8_t { exec = 0, comm = 1 };

// An actor that issues one execution at a time and waits for it
// (a plain wait), then hands the result over; or issues a communication that
// a kernel timer made due (no actor context there) and returns at once.
struct Waiter {
  WaiterKind kind = WaiterKind::exec;
  sg::ActorPtr actor;
  sg::SemaphorePtr go;
  SimOp* op = nullptr;
};

namespace {

// Stack of a waiter actor: it only starts, waits and hands over.
constexpr unsigned k_waiter_stack_bytes = 256 * 1024;

WaiterKind waiter_kind(Work work) {
  SLUICE_ASSERT_MSG(work != Work::io, "drive work is FluidNet flows, never a waiter's");
  return work == Work::comm ? WaiterKind::comm : WaiterKind::exec;
}

// The runtime of this process (SimGrid: one engine per process). The
// completion signal is static, so it reaches the runtime through this.
SimRuntime* g_runtime = nullptr;
bool g_signal_connected = false;

double seconds(TimeNs ns) { return static_cast<double>(ns) * 1e-9; }

// The part of a disk request's time that it cannot overlap with others
// (SimProfile disk_*_request_bytes_per_s); a rate of 0 means none.
TimeNs request_time_ns(std::uint64_t bytes, double bytes_per_s) {
  return bytes_per_s > 0 ? transfer_time_ns(bytes, bytes_per_s) : 0;
}

// A host-to-host comm for `op`, not started.
sg::CommPtr make_comm(const SimOp& op) {
  sg::CommPtr comm = sg::Comm::sendto_init(op.src, op.dst);
  comm->set_payload_size(static_cast<std::uint64_t>(op.amount));
  return comm;
}

}  // namespace

// ---- creation and teardown ----------------------------------------------------

Result<std::unique_ptr<SimRuntime>> SimRuntime::create(std::shared_ptr<const topo::Topology> cluster,
                                                       SimRuntimeConfig config) {
  if (sg::Engine::has_instance()) {
    return error(StatusCode::unavailable,
                 "sim: this process already ran a simulation (SimGrid allows one engine per process and cannot reset "
                 "it); run each simulation in its own child process (sim/sim_process.hpp)");
  }
  if (Status s = validate(config.profile); !s.ok()) return s;
  std::unique_ptr<SimRuntime> rt(new SimRuntime());
  rt->config_ = std::move(config);
  // Message-loss draws get a stream of their own, apart from every service's
  // (node << 32 | index) stream.
  rt->fault_rng_ = Rng(rt->config_.seed).fork(0xFA17'0000'0000'0000ULL);
  // SimGrid prints every configuration change at INFO level; keep warnings.
  xbt_log_control_set("root.thresh:warning");
  rt->engine_ = new sg::Engine("sluice-sim");  // lives until the process exits (see the header)
  if (rt->config_.actor_stack_kib > 0) {
    sg::Engine::set_config("contexts/stack-size", static_cast<int>(rt->config_.actor_stack_kib));
  }
  rt->engine_->track_vetoed_activities(&rt->vetoed_);
  Result<std::unique_ptr<SimPlatform>> platform = SimPlatform::build(std::move(cluster), rt->config_.profile);
  if (!platform.ok()) return platform.status();
  rt->platform_ = std::move(platform).value();
  {
    SimRuntime* self = rt.get();
    rt->fluid_ = std::make_unique<FluidNet>(FluidNet::Config{rt->config_.fluid_resolve_share, k_fluid_small_flow_bytes},
                                            [self](std::uint64_t token) { self->fluid_done(token); });
  }
  if (!g_signal_connected) {
    g_signal_connected = true;
    // SimGrid 3.32 also records in the vetoed set some host-to-host comms
    // that then start normally (measured: ~1 per 1,000 comms in the metadata
    // storm); any entry ends the main loop, so a run would return to
    // run_until() after nearly every event. Only the pause's own veto counts.
    sg::Activity::on_veto_cb([](sg::Activity& a) {
      if (g_runtime != nullptr && &a != g_runtime->veto_.get()) g_runtime->vetoed_.erase(&a);
    });
    sg::Link::on_communication_state_change_cb(
        [](simgrid::kernel::resource::NetworkAction& network_action, simgrid::kernel::resource::Action::State) {
          if (g_runtime == nullptr) return;
          // NetworkAction is not in SimGrid's public headers; its only base
          // is resource::Action (public, and first), so the cast is a view of
          // that base. The communication tests would fail if that changed.
          const auto& action = reinterpret_cast<const simgrid::kernel::resource::Action&>(network_action);
          const auto state = action.get_state();
          if (state == simgrid::kernel::resource::Action::State::FINISHED ||
              state == simgrid::kernel::resource::Action::State::FAILED) {
            g_runtime->on_comm_done(action.get_activity(), state == simgrid::kernel::resource::Action::State::FINISHED);
          }
        });
  }
  g_runtime = rt.get();
  return rt;
}

SimRuntime::~SimRuntime() {
  if (g_runtime != this) return;
  // End every actor: wake the blocked ones and let them all run once.
  shutting_down_ = true;
  if (fluid_timer_ != nullptr) {
    fluid_timer_->remove();  // the flows in flight never end
    fluid_timer_ = nullptr;
  }
  for (auto& [ep, slot] : slots_) {
    if (slot->spawned && slot->waiting) {
      slot->waiting = false;
      slot->wake->release();
    }
  }
  // Idle waiters end too; busy ones stay blocked on their activity (never
  // run again) and their semaphore has no waiter, so it can go.
  for (auto& idle : idle_waiters_) {
    for (Waiter* w : idle) w->go->release();
    idle.clear();
  }
  if (started_) engine_->run_until(sg::Engine::get_clock());
  g_runtime = nullptr;
  engine_->track_vetoed_activities(nullptr);
  veto_ = nullptr;
  // Activities still in flight stay with the engine (never run again);
  // their SimOps go.
  for (SimOp* op : live_ops_) {
    if (!op->done) static_cast<void>(op->activity.detach());
    delete op;
  }
  live_ops_.clear();
  slots_.clear();
  for (auto& w : waiters_) {
    if (w->actor) static_cast<void>(w->actor.detach());  // busy ones are still blocked inside SimGrid
  }
}

// ---- services -------------------------------------------------------------------

Env& SimRuntime::create_env(NodeId node) {
  if (platform_->cpu_host(node) == nullptr) {
    std::fprintf(stderr,
                 "sim: cannot place a service on node %u: the topology has %u nodes (or the node has no host "
                 "memory 0)\n",
                 node, platform_->topology().node_count());
    std::abort();
  }
  const Endpoint ep{node, next_service_index_[node]++};
  auto slot = std::make_unique<ServiceSlot>();
  slot->endpoint = ep;
  slot->env =
      std::make_unique<SimEnv>(*this, *slot, ep, Rng(config_.seed).fork((std::uint64_t{node} << 32) | ep.service));
  Env& env = *slot->env;
  unadopted_.push_back(std::move(slot));
  return env;
}

void SimRuntime::adopt_service(Env& env, std::unique_ptr<Service> service) {
  auto it = std::find_if(unadopted_.begin(), unadopted_.end(), [&](const auto& s) { return s->env.get() == &env; });
  SLUICE_ASSERT_MSG(it != unadopted_.end(), "adopt_service: env not made by create_env");
  std::unique_ptr<ServiceSlot> slot = std::move(*it);
  unadopted_.erase(it);
  slot->service = std::move(service);
  slot->wake = sg::Semaphore::create(0);
  ServiceSlot& ref = *slot;
  slots_.emplace(ref.endpoint, std::move(slot));
  if (started_) spawn(ref);
}

Endpoint SimRuntime::endpoint_of(const Service& service) const {
  for (const auto& [ep, slot] : slots_) {
    if (slot->service.get() == &service) return ep;
  }
  return {};
}

Env& SimRuntime::env_of(const Service& service) {
  for (auto& [ep, slot] : slots_) {
    if (slot->service.get() == &service) return *slot->env;
  }
  SLUICE_ASSERT_MSG(false, "env_of: " + service.name() + " is not a service of this runtime");
  std::abort();  // not reached
}

// ---- targets ----------------------------------------------------------------------

Status SimRuntime::add_target(TargetId target, NodeId node, std::uint32_t nvme_index) {
  if (targets_.count(target) != 0) {
    return error(StatusCode::already_exists, "sim: storage target " + std::to_string(target) + " exists already");
  }
  Result<sg::Disk*> disk = platform_->disk(node, nvme_index);
  if (!disk.ok()) return disk.status();
  Target t;
  t.node = node;
  t.disk = *disk;
  t.channels = platform_->disk_channels(node, nvme_index);
  const SimPlatform::DriveHosts pcie = platform_->drive_hosts(node, nvme_index);
  t.drive_host = pcie.drive;
  t.memory_host = pcie.memory;
  targets_.emplace(target, std::move(t));
  return ok_status();
}

Status SimRuntime::add_target(TargetId target, NodeId node) {
  std::uint32_t& next = next_nvme_[node];
  Status s = add_target(target, node, next);
  if (s.ok()) ++next;
  return s;
}

Status SimRuntime::preload_object(TargetId target, FileId file_id, std::uint64_t bytes) {
  auto it = targets_.find(target);
  if (it == targets_.end()) return error(StatusCode::not_found, "sim: no storage target " + std::to_string(target));
  it->second.sizes[file_id] = bytes;
  return ok_status();
}

NodeId SimRuntime::node_of_target(TargetId target) const {
  auto it = targets_.find(target);
  return it == targets_.end() ? k_no_id : it->second.node;
}

std::size_t SimRuntime::object_count(TargetId target) const {
  auto it = targets_.find(target);
  return it == targets_.end() ? 0 : it->second.sizes.size();
}

std::uint64_t SimRuntime::object_bytes(TargetId target, FileId file_id) const {
  auto it = targets_.find(target);
  if (it == targets_.end()) return 0;
  auto f = it->second.sizes.find(file_id);
  return f == it->second.sizes.end() ? 0 : f->second;
}

// ---- the Env operations ---------------------------------------------------------------

TimeNs SimRuntime::now() const { return static_cast<TimeNs>(std::llround(sg::Engine::get_clock() * 1e9)); }

OpId SimRuntime::handed_out(ServiceSlot& self, OpId op) {
  self.ledger.started(op);
  return op;
}

SimOp* SimRuntime::new_op(ServiceSlot& owner) {
  auto* op = new SimOp();
  op->owner = &owner;
  op->owner_incarnation = owner.incarnation;
  op->result.op = next_op_++;
  op->made = MadeBy{owner.endpoint, owner.ops_made++};
  live_ops_.insert(op);
  return op;
}

OpId SimRuntime::fail_now(ServiceSlot& owner, Status status) {
  SimOp* op = new_op(owner);
  op->result.status = std::move(status);
  schedule(op);
  return op->result.op;
}

void SimRuntime::schedule(SimOp* op) {
  ++inflight_;
  if (op->work == Work::none || op->delay_ns > 0) {
    // A kernel timer, set directly: SimRuntime runs with sequential contexts
    // only, so no other context can touch the timer heap meanwhile.
    ++timers_set_;
    simgrid::kernel::timer::Timer::set(sg::Engine::get_clock() + seconds(op->delay_ns), [this, op] {
      op->delay_ns = 0;
      if (op->work == Work::none) {
        finish(op, true);
      } else {
        launch(op);
      }
    });
    return;
  }
  pending_starts_.push_back(op);
}

void SimRuntime::launch(SimOp* op) {
  ++activities_started_;
  switch (op->work) {
    case Work::none: finish(op, true); return;
    case Work::comm:
      if (config_.fluid) {
        fluid_start(op, op->src, op->dst, op->amount);
        return;
      }
      if (sg::Actor::is_maestro()) {
        hand_to_waiter(op);  // a comm must be issued by an actor (see the header)
        return;
      }
      {
        // Issued by this actor (sender = this actor), never waited for.
        sg::CommPtr comm = make_comm(*op);
        comm->start();
        comms_in_flight_.emplace(comm->get_impl(), op);
        op->activity = std::move(comm);
      }
      return;
    case Work::io: drive_work(op); return;
    case Work::exec: hand_to_waiter(op); return;
  }
}

void SimRuntime::hand_to_waiter(SimOp* op) {
  Waiter* w = nullptr;
  const WaiterKind kind = waiter_kind(op->work);
  std::vector<Waiter*>& idle = idle_waiters_[static_cast<std::size_t>(kind)];
  if (!idle.empty()) {
    w = idle.back();
    idle.pop_back();
  } else {
    waiters_.push_back(std::make_unique<Waiter>());
    w = waiters_.back().get();
    w->kind = kind;
    w->go = sg::Semaphore::create(0);
    w->actor = sg::Actor::init("waiter" + std::to_string(waiters_.size()), platform_->cpu_host(0));
    w->actor->set_stacksize(k_waiter_stack_bytes);
    w->actor->start([this, w] { waiter_main(*w); });
  }
  w->op = op;
  w->go->release();
}

void SimRuntime::waiter_main(Waiter& w) {
  for (;;) {
    w.go->acquire();
    if (shutting_down_) return;
    SimOp* op = w.op;
    w.op = nullptr;
    if (op->work == Work::comm) {
      SLUICE_ASSERT(w.kind == WaiterKind::comm);
      launch(op);  // from this actor's context now; completes through the signal
      --activities_started_;
      idle_waiters_[static_cast<std::size_t>(WaiterKind::comm)].push_back(&w);
      continue;
    }
    SLUICE_ASSERT(w.kind == waiter_kind(op->work));
    bool ok = true;
    try {
      sg::Exec::init()->set_flops_amount(op->amount)->set_host(op->src)->wait();
    } catch (const simgrid::Exception&) {
      ok = false;  // a resource failed under it
    }
    if (shutting_down_) return;
    finish(op, ok);
    idle_waiters_[static_cast<std::size_t>(w.kind)].push_back(&w);
  }
}

void SimRuntime::flush_starts() {
  if (pending_starts_.empty() && finished_.empty()) return;
  std::vector<SimOp*> batch;
  batch.swap(pending_starts_);
  std::vector<SimOp*> dead;
  dead.swap(finished_);
  for (SimOp* op : dead) {
    live_ops_.erase(op);
    delete op;
  }
  if (batch.empty()) return;
  if (sg::Actor::is_maestro()) {  // ops made between runs, from the main context
    for (SimOp* op : batch) launch(op);
    return;
  }
  // Comms are set up here, in this actor's context (their sender is this
  // actor); then one simcall starts them all and wakes the waiters.
  std::vector<sg::CommPtr> comms(batch.size());
  for (std::size_t i = 0; i < batch.size(); ++i) {
    SimOp* op = batch[i];
    if (op->work != Work::comm || config_.fluid) continue;
    comms[i] = make_comm(*op);
  }
  simgrid::kernel::actor::simcall_answered([this, &batch, &comms] {
    for (std::size_t i = 0; i < batch.size(); ++i) {
      SimOp* op = batch[i];
      ++activities_started_;
      if (op->work == Work::comm && config_.fluid) {
        fluid_start(op, op->src, op->dst, op->amount);
      } else if (op->work == Work::comm) {
        comms[i]->start();
        comms_in_flight_.emplace(comms[i]->get_impl(), op);
        op->activity = std::move(comms[i]);
      } else {
        --activities_started_;
        launch(op);  // a drive's work (its PCIe part fluid in fluid mode) or an execution
      }
    }
  });
}

void SimRuntime::on_comm_done(const void* activity_impl, bool ok) {
  auto it = comms_in_flight_.find(activity_impl);
  if (it == comms_in_flight_.end()) return;
  SimOp* op = it->second;
  comms_in_flight_.erase(it);
  comm_ended(op, ok);
}

void SimRuntime::comm_ended(SimOp* op, bool ok) {
  if (ok && (op->then || op->phase_not_before_s > sg::Engine::get_clock())) {
    // A phase of a staged copy ended: it counts as ended no earlier than its
    // minimum duration; then the next phase starts (from a kernel timer, in
    // maestro, as delayed comms start) or the op finishes. The op stays in
    // flight meanwhile.
    ++timers_set_;
    simgrid::kernel::timer::Timer::set(std::max(sg::Engine::get_clock(), op->phase_not_before_s), [this, op] {
      if (!op->then) return finish(op, true);
      op->first_activity = std::move(op->activity);
      op->src = op->then->src;
      op->dst = op->then->dst;
      op->amount = op->then->amount;
      op->phase_not_before_s = sg::Engine::get_clock() + op->then->min_duration_s;
      op->then.reset();
      launch(op);
    });
    return;
  }
  finish(op, ok);
}

void SimRuntime::fluid_start(SimOp* op, sg::Host* src, sg::Host* dst, double bytes) {
  static_assert(alignof(SimOp) >= 2, "the low bit of a SimOp's address tags a drive work's part");
  fluid_->start(sg::Engine::get_clock(), fluid_route(src, dst), bytes, reinterpret_cast<std::uintptr_t>(op));
  fluid_arm();
}

std::uint32_t SimRuntime::fluid_route(sg::Host* src, sg::Host* dst) {
  const std::pair<const sg::Host*, const sg::Host*> key{src, dst};
  if (auto it = fluid_routes_.find(key); it != fluid_routes_.end()) return it->second;
  // As NetworkCm02Model prices a comm (cross-traffic off, weight-S 0): the
  // route's raw latency is its sharing penalty and bounds the rate at
  // tcp_gamma / (2 x latency); the rate is also bounded by the slowest link;
  // the factor callbacks (SimPlatform) give the latency and bandwidth factors.
  std::vector<sg::Link*> links;
  double latency = 0;
  src->route_to(dst, links, &latency);
  FluidNet::Route route;
  for (sg::Link* l : links) {
    auto [it, fresh] = fluid_links_.try_emplace(l, 0);
    if (fresh) it->second = fluid_->add_link(l->get_bandwidth());
    route.links.push_back(it->second);
    route.bound = std::min(route.bound, l->get_bandwidth());
  }
  const SimProfile& p = config_.profile;
  route.latency_s = latency * SimPlatform::latency_factor(links, p);
  route.factor = SimPlatform::bandwidth_factor(links, p);
  if (latency > 0) {
    route.penalty = latency;  // k_sim_latency_scale times the route's latency, as CM02's
    if (p.tcp_window_bytes > 0) route.bound = std::min(route.bound, SimPlatform::tcp_gamma(p) / (2.0 * latency));
  }
  const std::uint32_t id = fluid_->add_route(std::move(route));
  fluid_routes_.emplace(key, id);
  return id;
}

void SimRuntime::drive_work(SimOp* op) {
  // One share on the drive, or one on each of channel_count channels, and the
  // PCIe crossing beside them (fluid mode: a flow too; per chunk: a SimGrid
  // comm, sharing the PCIe links with the network's comms).
  const Target& target = targets_.at(op->target);
  const std::uint32_t shares = op->channel_count == 0 ? 1 : op->channel_count;
  SLUICE_ASSERT_MSG(op->channel_count <= target.channels.size(), "a request spans at most its drive's channels");
  const bool pcie = op->pcie_bytes >= 1.0 && op->pcie_from != nullptr && op->pcie_to != nullptr;
  op->drive_parts = shares + (pcie ? 1 : 0);
  const std::uint64_t token = reinterpret_cast<std::uintptr_t>(op) | 1u;
  const double now = sg::Engine::get_clock();
  for (std::uint32_t i = 0; i < shares; ++i) {
    const sg::Disk* disk =
        op->channel_count == 0 ? op->disk : target.channels[(op->channel_first + i) % target.channels.size()];
    fluid_->start(now, fluid_disk_route(disk, op->write), op->amount, token);
  }
  if (pcie && config_.fluid) {
    fluid_->start(now, fluid_route(op->pcie_from, op->pcie_to), op->pcie_bytes, token);
  } else if (pcie) {
    SimOp* part = new_op(*op->owner);
    part->kind = OpKind::drive_pcie;
    part->parent = op;
    part->work = Work::comm;
    part->src = op->pcie_from;
    part->dst = op->pcie_to;
    part->amount = op->pcie_bytes;
    ++inflight_;  // as schedule() counts it; launched now, beside the drive's flows
    launch(part);
  }
  fluid_arm();
}

void SimRuntime::drive_part_done(SimOp* op, bool ok) {
  SLUICE_ASSERT(op->drive_parts > 0);
  if (!ok) op->drive_ok = false;
  if (--op->drive_parts == 0) finish(op, op->drive_ok);
}

std::uint32_t SimRuntime::fluid_disk_route(const sg::Disk* disk, bool write) {
  const std::pair<const sg::Disk*, bool> key{disk, write};
  if (auto it = fluid_disk_routes_.find(key); it != fluid_disk_routes_.end()) return it->second;
  // As SimGrid's disk model (S19) shares a drive: each I/O crosses the
  // drive's own constraint (the larger of its two rates) and its read or
  // write constraint, penalty 1, no latency.
  auto [links, fresh] = fluid_disk_links_.try_emplace(disk);
  if (fresh) {
    const double read = disk->get_read_bandwidth();
    const double written = disk->get_write_bandwidth();
    links->second = {fluid_->add_link(std::max(read, written)), fluid_->add_link(read), fluid_->add_link(written)};
  }
  FluidNet::Route route;
  route.links = {links->second[0], links->second[write ? 2 : 1]};
  route.small_ok = false;
  const std::uint32_t id = fluid_->add_route(std::move(route));
  fluid_disk_routes_.emplace(key, id);
  return id;
}

void SimRuntime::fluid_done(std::uint64_t token) {
  auto* op = reinterpret_cast<SimOp*>(static_cast<std::uintptr_t>(token & ~std::uint64_t{1}));
  if ((token & 1) == 0) {
    comm_ended(op, true);
    return;
  }
  drive_part_done(op, true);
}

void SimRuntime::fluid_arm() {
  const double next = fluid_->next_event();
  if (next == std::numeric_limits<double>::infinity()) return;
  if (fluid_timer_ != nullptr) {
    if (fluid_timer_at_ <= next) return;
    fluid_timer_->remove();
  }
  ++timers_set_;
  fluid_timer_at_ = std::max(next, sg::Engine::get_clock());
  fluid_timer_ = simgrid::kernel::timer::Timer::set(fluid_timer_at_, [this] {
    fluid_timer_ = nullptr;
    fluid_->advance(std::max(sg::Engine::get_clock(), fluid_timer_at_));
    fluid_arm();
  });
}

void SimRuntime::count_at_drive(SimOp& op, Target& target) {
  SLUICE_ASSERT_MSG(!op.at_drive, "a drive request is counted once");
  op.at_drive = true;
  ++target.requests_at_drive;
}

void SimRuntime::release_drive(SimOp& op) {
  if (!op.at_drive) return;
  Target& target = targets_.at(op.target);
  SLUICE_ASSERT_MSG(target.requests_at_drive > 0, "a finished drive request was counted at its target");
  --target.requests_at_drive;
  op.at_drive = false;
}

void SimRuntime::apply_storage_effect(SimOp& op) {
  if (op.kind != OpKind::storage || !op.result.status.ok()) return;
  auto& sizes = targets_[op.target].sizes;
  switch (op.storage_op) {
    case StorageOp::write: {
      auto& size = sizes[op.file_id];
      size = std::max(size, op.end_offset);
      break;
    }
    case StorageOp::remove: sizes.erase(op.file_id); break;
    case StorageOp::allocate: sizes.try_emplace(op.file_id, 0); break;  // the object exists, its size unchanged
    case StorageOp::stat: {
      auto it = sizes.find(op.file_id);
      op.result.bytes = it == sizes.end() ? 0 : it->second;
      break;
    }
    case StorageOp::read:
    case StorageOp::punch:  // SimEnv keeps no bytes; the size stays
    case StorageOp::flush: break;
  }
}

void SimRuntime::end_stream(SimOp& disk) {
  // The drive work of a streamed read ended: release the transfers out of
  // its buffer that were waiting for it (the stream's inflight count kept
  // the run from looking idle meanwhile).
  ReadStream& stream = *disk.stream;
  stream.disk_done = true;
  for (auto it = streams_.begin(); it != streams_.end(); ++it) {
    if (it->second.get() == &stream) {
      streams_.erase(it);
      break;
    }
  }
  std::vector<SimOp*> parked;
  parked.swap(stream.parked);
  for (SimOp* t : parked) {
    deliver(*t->owner, t->owner_incarnation, Event{t->result}, t->made);
    finished_.push_back(t);
  }
  disk.stream = nullptr;
}

bool SimRuntime::finish_background(SimOp* op, bool ok) {
  switch (op->kind) {
    case OpKind::write_back: written_back(*op); break;
    case OpKind::stream_disk: end_stream(*op); break;
    case OpKind::read_ahead: end_read_ahead(*op, ok); break;
    case OpKind::drive_pcie:
      finished_.push_back(op);
      drive_part_done(op->parent, ok);
      return true;
    case OpKind::completion:
    case OpKind::message:
    case OpKind::compute:
    case OpKind::storage: return false;
  }
  finished_.push_back(op);
  return true;
}

void SimRuntime::finish(SimOp* op, bool ok) {
  op->done = true;
  --inflight_;
  if (!ok && op->result.status.ok()) {
    op->result.status = error(StatusCode::io_error, "sim: the simulated activity failed (a resource turned off)");
  }
  release_drive(*op);
  apply_storage_effect(*op);
  if (finish_background(op, ok)) return;
  if (op->stream && !op->stream->disk_done) {
    // A transfer out of a streamed read's buffer: done when the drive is.
    op->stream->parked.push_back(op);  // released (and then freed) with the stream
    op->stream = nullptr;
    return;
  }
  switch (op->kind) {
    case OpKind::message:
      if (ok) deliver(*op->to, op->to_incarnation, Event{std::move(*op->delivery)}, op->made);
      break;
    case OpKind::compute: {
      ServiceSlot& slot = *op->owner;
      deliver(slot, op->owner_incarnation, Event{op->result}, op->made);
      if (!slot.cpu_queue.empty()) {
        SimOp* next = slot.cpu_queue.front();
        slot.cpu_queue.pop_front();
        launch(next);
      } else {
        slot.cpu_busy = false;
      }
      break;
    }
    case OpKind::storage: deliver(*op->owner, op->owner_incarnation, Event{op->result}, op->made); break;
    case OpKind::completion:
    case OpKind::stream_disk:
    case OpKind::write_back:
    case OpKind::read_ahead:
    case OpKind::drive_pcie:
      if (op->transfer_ends && op->result.status.ok()) {
        const auto& [src, dst] = *op->transfer_ends;
        Status s = check_range(src, src.node, "transfer source");
        if (s.ok()) s = check_range(dst, dst.node, "transfer destination");
        if (!s.ok()) {
          op->result.status = Status(s.code(), s.message() + " (gone before the transfer completed: a closed window)");
          op->result.bytes = 0;
        }
      }
      deliver(*op->owner, op->owner_incarnation, Event{op->result}, op->made);
      break;
  }
  finished_.push_back(op);
}

void SimRuntime::deliver(ServiceSlot& to, std::uint64_t incarnation, Event event, const MadeBy& made) {
  // Behind the events of earlier instants, and among those of this instant in
  // the order their ops were made (ReadyEvent).
  const TimeNs at_ns = now();
  auto pos = to.ready.end();
  while (pos != to.ready.begin()) {
    auto before = std::prev(pos);
    if (before->at_ns != at_ns || before->made < made) break;
    pos = before;
  }
  to.ready.insert(pos, ReadyEvent{incarnation, std::move(event), at_ns, made});
  ++ready_events_;
  wake(to);
}

void SimRuntime::wake(ServiceSlot& slot) {
  if (!slot.waiting) return;
  slot.waiting = false;
  ++runnable_actors_;
  slot.wake->release();
}

Status SimRuntime::check_range(const MemHandle& range, NodeId expected_node, const char* what) const {
  std::optional<std::uint64_t> region_length;
  if (auto n = memory_.find(range.node); n != memory_.end()) {
    if (auto r = n->second.regions.find(range.region); r != n->second.regions.end()) region_length = r->second.length;
  }
  return sluice::check_range(range, expected_node, region_length, what);
}

Status SimRuntime::send(ServiceSlot& from, Endpoint to, proto::Message message) {
  auto it = slots_.find(to);
  if (it == slots_.end()) return error(StatusCode::unavailable, "send to unknown endpoint " + to.to_string());
  if (config_.validate_messages) {
    if (Status v = proto::validate(message); !v.ok()) return v;
  }
  sg::Host* src = nullptr;
  sg::Host* dst = nullptr;
  if (from.endpoint.node != to.node) {
    auto host_of = [this](NodeId node) -> Result<sg::Host*> {
      Result<topo::VertexId> mem = platform_->topology().device(node, topo::VertexKind::host_memory, 0);
      if (!mem.ok()) return mem.status();
      return platform_->rail_host(*mem, k_no_id);
    };
    Result<sg::Host*> s = host_of(from.endpoint.node);
    if (!s.ok()) return error(StatusCode::unavailable, "send to " + to.to_string() + ": " + s.status().message());
    Result<sg::Host*> d = host_of(to.node);
    if (!d.ok()) return error(StatusCode::unavailable, "send to " + to.to_string() + ": " + d.status().message());
    src = *s;
    dst = *d;
  }
  ++messages_sent_;
  // Whole-world faults (fault plans) first; the hook's rules apply to what survives.
  if (partitioned(from.endpoint.node, to.node) ||
      (loss_probability_ > 0.0 && fault_rng_.uniform01() < loss_probability_)) {
    ++messages_dropped_;
    return ok_status();
  }
  MessageFate fate;
  if (message_hook_) fate = message_hook_(from.endpoint, to, message);
  fate.extra_delay_ns += extra_delay_ns_;
  if (fate.drop || fate.copies == 0) {
    ++messages_dropped_;
    return ok_status();
  }
  const std::uint32_t copies = std::min(fate.copies, k_max_message_copies);
  const double bytes =
      static_cast<double>(proto::encoded_size(message) + config_.profile.message_overhead_bytes + fate.extra_bytes);
  ServiceSlot& dest = *it->second;
  for (std::uint32_t c = 0; c < copies; ++c) {
    SimOp* op = new_op(from);
    op->kind = OpKind::message;
    op->to = &dest;
    op->to_incarnation = dest.incarnation;
    op->delivery = Delivery{from.endpoint, c + 1 == copies ? std::move(message) : message};
    op->delay_ns = std::max<TimeNs>(fate.extra_delay_ns, 0) + static_cast<TimeNs>(c);
    if (src == nullptr) {
      op->delay_ns += config_.profile.local_message_latency_ns;
    } else {
      op->work = Work::comm;
      op->src = src;
      op->dst = dst;
      op->amount = bytes;
    }
    schedule(op);
  }
  return ok_status();
}

Result<std::pair<sg::Host*, sg::Host*>> SimRuntime::transfer_hosts(const TransferSpec& spec) const {
  Result<topo::VertexId> vs = platform_->memory_vertex(spec.src);
  if (!vs.ok()) return vs.status();
  Result<topo::VertexId> vd = platform_->memory_vertex(spec.dst);
  if (!vd.ok()) return vd.status();
  if (spec.src.node == spec.dst.node) {
    // One node: the machine's own route, whatever NICs were named.
    return std::pair{platform_->local_host(*vs), platform_->local_host(*vd)};
  }
  Result<sg::Host*> s = platform_->rail_host(*vs, spec.src_nic);
  if (!s.ok()) return s.status();
  Result<sg::Host*> d = platform_->rail_host(*vd, spec.dst_nic);
  if (!d.ok()) return d.status();
  return std::pair{*s, *d};
}

Result<std::vector<LinkInfo>> SimRuntime::transfer_route(const TransferSpec& spec) const {
  Result<std::pair<sg::Host*, sg::Host*>> hosts = transfer_hosts(spec);
  if (!hosts.ok()) return hosts.status();
  if (hosts->first == hosts->second) return std::vector<LinkInfo>{};
  return platform_->route(hosts->first, hosts->second);
}

double SimRuntime::link_bytes(topo::EdgeId edge, bool a_to_b) const {
  const std::size_t i = 2 * std::size_t{edge} + (a_to_b ? 0 : 1);
  return i < link_bytes_.size() ? link_bytes_[i] : 0.0;
}

OpId SimRuntime::transfer(ServiceSlot& self, const TransferSpec& spec) {
  if (spec.src.length != spec.dst.length) {
    return fail_now(self, error(StatusCode::invalid_argument,
                                "transfer lengths differ: " + spec.src.to_string() + " -> " + spec.dst.to_string()));
  }
  if (Status s = check_range(spec.src, spec.src.node, "transfer source"); !s.ok()) return fail_now(self, s);
  if (Status s = check_range(spec.dst, spec.dst.node, "transfer destination"); !s.ok()) return fail_now(self, s);
  Result<std::pair<sg::Host*, sg::Host*>> hosts = transfer_hosts(spec);
  if (!hosts.ok()) {
    return fail_now(self, error(hosts.status().code(), "transfer " + spec.src.to_string() + " -> " +
                                                           spec.dst.to_string() + ": " + hosts.status().message()));
  }
  if (partitioned(spec.src.node, spec.dst.node)) {
    return fail_now(self, error(StatusCode::unavailable, "transfer " + spec.src.to_string() + " -> " +
                                                             spec.dst.to_string() + ": the nodes are partitioned"));
  }
  SimOp* op = new_op(self);
  op->result.bytes = spec.src.length;
  op->amount = static_cast<double>(spec.src.length);
  op->transfer_ends = std::pair{spec.src, spec.dst};
  const TimeNs fault_delay_ns = transfer_hook_ ? std::max<TimeNs>(transfer_hook_(self.endpoint, spec), 0) : 0;
  if (!streams_.empty()) {
    if (auto it = streams_.find({spec.src.node, spec.src.region}); it != streams_.end()) op->stream = it->second;
  }
  if (hosts->first == hosts->second) {
    op->delay_ns = transfer_time_ns(spec.src.length, config_.profile.same_location_copy_bytes_per_s);
  } else {
    op->work = Work::comm;
    op->src = hosts->first;
    op->dst = hosts->second;
    stage_through_cpu(*op, spec);
    if (config_.account_link_bytes) {
      if (link_bytes_.empty()) link_bytes_.assign(2 * platform_->topology().link_count(), 0.0);
      auto account = [this](sg::Host* from, sg::Host* to, double bytes) {
        for (const LinkInfo& l : platform_->route(from, to)) {
          link_bytes_[2 * std::size_t{l.edge} + (l.a_to_b ? 0 : 1)] += bytes;
        }
      };
      account(op->src, op->dst, op->amount);
      if (op->then) account(op->then->src, op->then->dst, op->then->amount);
    }
  }
  op->delay_ns += fault_delay_ns;
  schedule(op);
  return op->result.op;
}

void SimRuntime::stage_through_cpu(SimOp& op, const TransferSpec& spec) const {
  const SimProfile& p = config_.profile;
  if (p.staging_cpu_copies == 0 || spec.src.node != spec.dst.node) return;
  const bool to_gpu = spec.dst.kind == MemKind::gpu && spec.src.kind != MemKind::gpu;
  const bool from_gpu = spec.src.kind == MemKind::gpu && spec.dst.kind != MemKind::gpu;
  if (!to_gpu && !from_gpu) return;
  Result<topo::VertexId> host_memory = platform_->memory_vertex(to_gpu ? spec.src : spec.dst);
  if (!host_memory.ok()) return;
  sg::Host* copy = platform_->copy_host(*host_memory);
  if (copy == nullptr) return;
  // staging_cpu_copies passes of the bytes through host memory, one after
  // the other on one thread: one flow of that many times the bytes.
  const double cpu_bytes = op.amount * static_cast<double>(p.staging_cpu_copies);
  const SimOp::CommPhase cpu{platform_->local_host(*host_memory), copy, cpu_bytes,
                             cpu_bytes / p.staging_cpu_copy_bytes_per_s};
  const SimOp::CommPhase dma{op.src, op.dst, op.amount, 0};
  // To the GPU: read() copies out of the kernel buffer, then cudaMemcpy.
  // From the GPU: cudaMemcpy, then write() copies into the kernel buffer.
  const SimOp::CommPhase& first = to_gpu ? cpu : dma;
  op.then = to_gpu ? dma : cpu;
  op.src = first.src;
  op.dst = first.dst;
  op.amount = first.amount;
  op.phase_not_before_s = sg::Engine::get_clock() + first.min_duration_s;
}

double SimRuntime::spread_over_channels(SimOp& op, const Target& target, const StorageIoSpec& spec,
                                        std::uint64_t bytes) const {
  if (target.channels.empty()) return 1.0;
  const auto channels = static_cast<std::uint64_t>(target.channels.size());
  const std::uint64_t first_piece = spec.object_offset / config_.profile.disk_channel_stripe_bytes;
  // Where a file's pieces start: a fixed mix of its id, so files begin on
  // different channels as an FTL spreads them.
  std::uint64_t state = spec.file_id;
  const std::uint64_t h = splitmix64(state);
  op.channel_first = static_cast<std::uint32_t>((h + first_piece) % channels);
  op.channel_count = shares_of(target, bytes);
  return static_cast<double>(op.channel_count);
}

std::uint32_t SimRuntime::shares_of(const Target& target, std::uint64_t bytes) const {
  if (target.channels.empty()) return 1;
  const std::uint64_t stripe = config_.profile.disk_channel_stripe_bytes;
  const std::uint64_t stripes = std::max<std::uint64_t>(1, (bytes + stripe - 1) / stripe);
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(target.channels.size(), stripes));
}

const sg::Disk* SimRuntime::share_unit(const Target& target) {
  return target.channels.empty() ? target.disk : target.channels.front();
}

void SimRuntime::price_storage_request(SimOp& op, const Target& target, const StorageIoSpec& spec) const {
  const SimProfile& p = config_.profile;
  // This request's share of a batch's fixed drive time: the requests at the
  // drive (this one too) share it (SimProfile disk_batch_occupancy_ns).
  const TimeNs batch_share_ns = p.disk_batch_occupancy_ns / (target.requests_at_drive + 1);
  const TimeNs occupancy_ns = p.disk_request_occupancy_ns + batch_share_ns;
  // The occupancy is device time per request: on channels each of a
  // request's shares pays its part of it, beside its part of the bytes.
  const sg::Disk* unit = share_unit(target);
  switch (spec.op) {
    case StorageOp::read: {
      auto size_it = target.sizes.find(spec.file_id);
      const std::uint64_t size = size_it == target.sizes.end() ? 0 : size_it->second;
      const std::uint64_t n =
          spec.object_offset < size ? std::min<std::uint64_t>(spec.buffer.length, size - spec.object_offset) : 0;
      op.result.bytes = n;
      op.pcie_from = target.drive_host;
      op.pcie_to = target.memory_host;
      op.pcie_bytes = static_cast<double>(n);
      op.delay_ns = p.disk_read_latency_ns + request_time_ns(n, p.disk_read_request_bytes_per_s);
      const double shares = spread_over_channels(op, target, spec, n);
      op.amount = (static_cast<double>(n) + seconds(occupancy_ns) * unit->get_read_bandwidth()) / shares;
      break;
    }
    case StorageOp::write: {
      op.result.bytes = spec.buffer.length;
      op.end_offset = spec.object_offset + spec.buffer.length;
      op.write = true;
      op.pcie_from = target.memory_host;
      op.pcie_to = target.drive_host;
      op.pcie_bytes = static_cast<double>(spec.buffer.length);
      op.delay_ns = p.disk_write_latency_ns + (spec.sync ? p.disk_sync_latency_ns : 0) +
                    request_time_ns(spec.buffer.length, p.disk_write_request_bytes_per_s);
      const double shares = spread_over_channels(op, target, spec, spec.buffer.length);
      op.amount =
          (static_cast<double>(spec.buffer.length) + seconds(occupancy_ns) * unit->get_write_bandwidth()) / shares;
      break;
    }
    case StorageOp::remove:
    case StorageOp::stat:
    case StorageOp::allocate:  // an extent map change, no data moved (ext4, XFS: fallocate(2))
    case StorageOp::punch: op.delay_ns = p.disk_metadata_latency_ns; break;
    case StorageOp::flush: break;  // its time is the write-back it waits for (flush_page_cache)
  }
}

double SimRuntime::price_slowed(SimOp& op, const Target& target, const StorageIoSpec& spec) const {
  price_storage_request(op, target, spec);
  auto slow = disk_slowdown_.find(spec.target);
  if (slow == disk_slowdown_.end()) return 1.0;
  // A slow drive (fault plans): every request's latency and drive work grow by the factor.
  op.delay_ns = static_cast<TimeNs>(static_cast<double>(op.delay_ns) * slow->second);
  op.amount *= slow->second;
  return slow->second;
}

OpId SimRuntime::storage_io(ServiceSlot& self, const StorageIoSpec& spec) {
  auto it = targets_.find(spec.target);
  if (it == targets_.end() || it->second.node != self.endpoint.node) {
    return fail_now(
        self, error(StatusCode::not_found, "storage target " + std::to_string(spec.target) + " is not on this node"));
  }
  Target& target = it->second;
  const bool needs_buffer = spec.op == StorageOp::read || spec.op == StorageOp::write;
  if (needs_buffer) {
    if (Status s = check_range(spec.buffer, target.node, "storage buffer"); !s.ok()) return fail_now(self, s);
  }
  SimOp* op = new_op(self);
  op->kind = OpKind::storage;
  op->storage_op = spec.op;
  op->target = spec.target;
  op->file_id = spec.file_id;
  const double slowdown = price_slowed(*op, target, spec);
  if (spec.op == StorageOp::flush) return flush_page_cache(op, target);
  if (spec.op == StorageOp::write || spec.op == StorageOp::remove || spec.op == StorageOp::punch) {
    drop_read_ahead(target, spec.file_id);
  }
  if (spec.op == StorageOp::read && spec.buffered && op->result.bytes > 0) {
    if (std::optional<OpId> id = read_buffered(self, op, target, spec)) return *id;
  }
  if (spec.op == StorageOp::write && spec.buffered && !spec.sync && op->result.bytes > 0) {
    if (PageCache& cache = page_cache(target.node); cache.limit_bytes > 0) {
      return write_buffered(self, op, target, cache);
    }
  }
  const std::uint64_t segment = config_.stream_read_segment_bytes;
  if (spec.op == StorageOp::read && segment > 0 && op->result.bytes > segment) {
    return stream_read(self, op, target, spec, slowdown);
  }
  if (needs_buffer && op->amount >= 1.0) {
    op->work = Work::io;
    op->disk = target.disk;
    count_at_drive(*op, target);
  }
  schedule(op);
  return op->result.op;
}

SimOp* SimRuntime::new_drive_work(ServiceSlot& self, const SimOp& priced, const Target& target) {
  SimOp* work = new_op(self);
  work->work = Work::io;
  work->disk = target.disk;
  work->channel_first = priced.channel_first;
  work->channel_count = priced.channel_count;
  work->write = priced.write;
  work->pcie_from = priced.pcie_from;
  work->pcie_to = priced.pcie_to;
  work->pcie_bytes = priced.pcie_bytes;
  work->amount = priced.amount;
  work->delay_ns = priced.delay_ns;
  work->target = priced.target;
  return work;
}

OpId SimRuntime::stream_read(ServiceSlot& self, SimOp* op, Target& target, const StorageIoSpec& spec, double slowdown) {
  // The op completes after its first segment; the drive work runs on as a
  // background op that transfers out of the buffer wait for.
  const std::uint64_t segment = config_.stream_read_segment_bytes;
  ++streamed_reads_;
  auto stream = std::make_shared<ReadStream>();
  SimOp* disk = new_drive_work(self, *op, target);
  disk->kind = OpKind::stream_disk;
  disk->stream = stream;
  count_at_drive(*disk, target);
  streams_[{spec.buffer.node, spec.buffer.region}] = stream;
  schedule(disk);
  // The first segment waits for its own share of the request time, not
  // the whole read's. It stays >= the segment's own latency, as
  // floor(a) - floor(b) >= floor(a - b).
  const double rate = config_.profile.disk_read_request_bytes_per_s;
  const TimeNs rest_ns = request_time_ns(op->result.bytes, rate) - request_time_ns(segment, rate);
  // On channels (SimProfile disk_channels) the segment runs at the rate of
  // those its stripes span.
  const double segment_rate = share_unit(target)->get_read_bandwidth() * shares_of(target, segment);
  op->delay_ns +=
      transfer_time_ns(segment, segment_rate) - static_cast<TimeNs>(static_cast<double>(rest_ns) * slowdown);
  schedule(op);
  return op->result.op;
}

std::uint64_t SimRuntime::host_memory_bytes(NodeId node) const {
  const topo::Topology& topology = platform_->topology();
  std::uint64_t bytes = 0;
  for (std::uint32_t i = 0; i < topology.count(node, topo::VertexKind::host_memory); ++i) {
    if (Result<topo::VertexId> m = topology.device(node, topo::VertexKind::host_memory, i); m.ok()) {
      bytes += topology.vertex(*m).host_memory_bytes;
    }
  }
  return bytes;
}

SimRuntime::PageCache& SimRuntime::page_cache(NodeId node) {
  auto [it, made] = page_caches_.try_emplace(node);
  if (made) {
    const std::uint64_t memory = host_memory_bytes(node);
    it->second.limit_bytes =
        static_cast<std::uint64_t>(config_.profile.page_cache_dirty_ratio * static_cast<double>(memory));
    it->second.read_ahead_limit_bytes = memory - std::min(memory, it->second.limit_bytes);
  }
  return it->second;
}

std::uint64_t SimRuntime::read_ahead_bytes(NodeId node) const {
  auto it = page_caches_.find(node);
  return it == page_caches_.end() ? 0 : it->second.read_ahead_bytes;
}

std::optional<OpId> SimRuntime::read_buffered(ServiceSlot& self, SimOp* op, Target& target, const StorageIoSpec& spec) {
  const std::uint64_t window = config_.profile.page_cache_read_ahead_bytes;
  if (window == 0) return std::nullopt;
  ++buffered_reads_;
  const std::uint64_t offset = spec.object_offset;
  const std::uint64_t bytes = op->result.bytes;
  Target::ReadAhead& stream = target.read_ahead[spec.file_id];
  PageCache& cache = page_cache(target.node);
  std::shared_ptr<ReadAheadPiece> found;
  if (auto it = stream.pieces.find(offset); it != stream.pieces.end() && it->second->bytes >= bytes) {
    found = it->second;
    stream.pieces.erase(it);
    SLUICE_ASSERT_MSG(cache.read_ahead_bytes >= found->bytes, "a piece's bytes were counted read ahead");
    cache.read_ahead_bytes -= found->bytes;
  }
  // Sequential: the read starts the object, found its piece, or lies within
  // a window of where its stream stands (reads of several threads arrive a
  // little out of order), as the kernel's on-demand read-ahead keeps a
  // stream going (mm/readahead.c).
  const bool sequential =
      offset == 0 || found != nullptr || (offset + window >= stream.next && offset <= stream.window_end + window);
  if (!sequential) return std::nullopt;
  stream.next = std::max(stream.next, offset + bytes);
  stream.window_end = std::max(stream.window_end, offset + bytes);
  auto size = target.sizes.find(spec.file_id);
  const std::uint64_t object_bytes = size == target.sizes.end() ? 0 : size->second;
  read_ahead(self, target, stream, spec, bytes, std::min(object_bytes, offset + bytes + window));
  if (found == nullptr) return std::nullopt;
  ++read_ahead_hits_;
  // A copy out of the cache, once the piece is in.
  op->amount = 0;
  op->pcie_bytes = 0;
  op->delay_ns = transfer_time_ns(bytes, config_.profile.page_cache_copy_bytes_per_s);
  const OpId id = op->result.op;
  if (found->done) {
    schedule(op);
    return id;
  }
  found->waiting.push_back(op);
  if (!found->wanted) {
    // A read needs it now: ahead of the pieces read for later.
    found->wanted = true;
    if (found->queued) {
      auto queued = std::find(target.read_aheads.begin(), target.read_aheads.end(), found->work);
      SLUICE_ASSERT_MSG(queued != target.read_aheads.end(), "a queued piece is in its drive's queue");
      target.read_aheads.erase(queued);
      target.wanted_read_aheads.push_back(found->work);
    }
  }
  return id;
}

void SimRuntime::read_ahead(ServiceSlot& self, Target& target, Target::ReadAhead& stream, const StorageIoSpec& spec,
                            std::uint64_t piece, std::uint64_t until) {
  PageCache& cache = page_cache(target.node);
  while (stream.window_end < until) {
    const std::uint64_t bytes = std::min(piece, until - stream.window_end);
    if (cache.read_ahead_bytes + bytes > cache.read_ahead_limit_bytes) {
      count("sim.read_ahead_over_memory", 1);
      return;
    }
    StorageIoSpec ahead = spec;
    ahead.object_offset = stream.window_end;
    ahead.buffer.length = bytes;
    SimOp* work = new_op(self);
    work->kind = OpKind::read_ahead;
    work->storage_op = StorageOp::read;
    work->target = spec.target;
    work->file_id = spec.file_id;
    price_slowed(*work, target, ahead);
    work->piece = std::make_shared<ReadAheadPiece>();
    work->piece->bytes = bytes;
    work->piece->work = work;
    stream.pieces[stream.window_end] = work->piece;
    cache.read_ahead_bytes += bytes;
    stream.window_end += bytes;
    ++read_ahead_pieces_;
    if (work->amount >= 1.0) {
      work->work = Work::io;
      work->disk = target.disk;
    }
    // Its access time first (k_read_aheads_at_drive), then the drive's queue.
    // Counted in flight from now until it finishes.
    const TimeNs access_ns = work->delay_ns;
    work->delay_ns = 0;
    ++inflight_;
    ++timers_set_;
    simgrid::kernel::timer::Timer::set(sg::Engine::get_clock() + seconds(access_ns), [this, work] {
      Target& at = targets_.at(work->target);
      work->piece->queued = true;
      (work->piece->wanted ? at.wanted_read_aheads : at.read_aheads).push_back(work);
      start_read_aheads(at);
    });
  }
}

void SimRuntime::start_read_aheads(Target& target) {
  for (;;) {
    std::deque<SimOp*>& queue = target.wanted_read_aheads.empty() ? target.read_aheads : target.wanted_read_aheads;
    if (target.read_aheads_at_drive >= k_read_aheads_at_drive || queue.empty()) return;
    SimOp* work = queue.front();
    queue.pop_front();
    work->piece->queued = false;
    work->piece->work = nullptr;
    ++target.read_aheads_at_drive;
    if (work->work == Work::io) count_at_drive(*work, target);
    launch(work);  // counted in flight since read_ahead()
  }
}

void SimRuntime::drop_read_ahead(Target& target, std::optional<FileId> file) {
  if (target.read_ahead.empty()) return;
  PageCache& cache = page_cache(target.node);
  auto drop = [&](Target::ReadAhead& stream) {
    for (const auto& [offset, piece] : stream.pieces) {
      SLUICE_ASSERT_MSG(cache.read_ahead_bytes >= piece->bytes, "a piece's bytes were counted read ahead");
      cache.read_ahead_bytes -= piece->bytes;
    }
  };
  if (file) {
    auto it = target.read_ahead.find(*file);
    if (it == target.read_ahead.end()) return;
    drop(it->second);
    target.read_ahead.erase(it);
    return;
  }
  for (auto& [id, stream] : target.read_ahead) drop(stream);
  target.read_ahead.clear();
}

void SimRuntime::end_read_ahead(SimOp& work, bool ok) {
  Target& target = targets_.at(work.target);
  SLUICE_ASSERT_MSG(target.read_aheads_at_drive > 0, "a finished read-ahead piece was counted at its drive");
  --target.read_aheads_at_drive;
  start_read_aheads(target);
  ReadAheadPiece& piece = *work.piece;
  piece.done = true;
  std::vector<SimOp*> waiting;
  waiting.swap(piece.waiting);
  for (SimOp* read : waiting) {
    if (!ok) {
      read->result.status = error(StatusCode::io_error, "sim: the read-ahead of this read's bytes failed");
      read->result.bytes = 0;
    }
    schedule(read);
  }
  work.piece = nullptr;
}

std::uint64_t SimRuntime::dirty_bytes(NodeId node) const {
  auto it = page_caches_.find(node);
  return it == page_caches_.end() ? 0 : it->second.dirty_bytes;
}

OpId SimRuntime::write_buffered(ServiceSlot& self, SimOp* write, Target& target, PageCache& cache) {
  ++buffered_writes_;
  SimOp* back = new_drive_work(self, *write, target);
  back->kind = OpKind::write_back;
  back->result.bytes = write->result.bytes;
  // The write itself is one thread's copy into the cache.
  write->amount = 0;
  write->delay_ns = transfer_time_ns(write->result.bytes, config_.profile.page_cache_copy_bytes_per_s);
  // A write larger than the whole budget goes when the cache is clean.
  if (cache.dirty_bytes == 0 || cache.dirty_bytes + write->result.bytes <= cache.limit_bytes) {
    admit_dirty(cache, write, back);
  } else {
    ++throttled_writes_;
    cache.waiting.emplace_back(write, back);
  }
  return write->result.op;
}

void SimRuntime::admit_dirty(PageCache& cache, SimOp* write, SimOp* back) {
  cache.dirty_bytes += write->result.bytes;
  SLUICE_ASSERT_MSG(cache.dirty_bytes <= std::max(cache.limit_bytes, write->result.bytes),
                    "a node's dirty bytes stay within its budget (or are one write larger than it)");
  schedule(write);
  Target& target = targets_.at(back->target);
  target.write_backs.push_back(back);
  ++inflight_;  // queued write-backs keep the run going (schedule() counts them again, less this)
  start_write_backs(target);
}

void SimRuntime::start_write_backs(Target& target) {
  while (target.write_backs_at_drive < k_write_backs_at_drive && !target.write_backs.empty()) {
    SimOp* back = target.write_backs.front();
    target.write_backs.pop_front();
    --inflight_;
    ++target.write_backs_at_drive;
    count_at_drive(*back, target);
    schedule(back);
  }
}

void SimRuntime::written_back(SimOp& back) {
  Target& target = targets_.at(back.target);
  SLUICE_ASSERT_MSG(target.write_backs_at_drive > 0, "a finished write-back was counted at its drive");
  --target.write_backs_at_drive;
  start_write_backs(target);
  PageCache& cache = page_caches_.at(target.node);
  SLUICE_ASSERT_MSG(cache.dirty_bytes >= back.result.bytes, "a write-back's bytes were counted dirty");
  cache.dirty_bytes -= back.result.bytes;
  while (!cache.waiting.empty()) {
    auto [write, next_back] = cache.waiting.front();
    if (cache.dirty_bytes != 0 && cache.dirty_bytes + write->result.bytes > cache.limit_bytes) break;
    cache.waiting.pop_front();
    admit_dirty(cache, write, next_back);
  }
  if (cache.dirty_bytes != 0) return;
  for (SimOp* flush : cache.flushes) {
    --inflight_;
    schedule(flush);
  }
  cache.flushes.clear();
}

OpId SimRuntime::flush_page_cache(SimOp* flush, Target& target) {
  ++flushes_;
  drop_read_ahead(target, std::nullopt);
  const OpId id = flush->result.op;
  PageCache& cache = page_cache(target.node);
  if (cache.dirty_bytes == 0) {
    schedule(flush);
    return id;
  }
  ++flushes_waited_;
  ++inflight_;  // a waiting flush keeps the run going, as a queued write-back does
  cache.flushes.push_back(flush);
  return id;
}

OpId SimRuntime::compute(ServiceSlot& self, CostKind kind, std::uint64_t units) {
  const double cost_ns = static_cast<double>(config_.profile.cost_ns(kind)) * static_cast<double>(units);
  SimOp* op = new_op(self);
  if (kind == CostKind::workload_step || cost_ns <= 0) {
    // Accelerator time (or nothing): a delay that occupies no CPU.
    op->delay_ns = static_cast<TimeNs>(std::llround(cost_ns));
    schedule(op);
    return op->result.op;
  }
  op->kind = OpKind::compute;
  op->work = Work::exec;
  op->src = platform_->cpu_host(self.endpoint.node);
  op->amount = cost_ns;  // 1 flop = 1 ns at the CPU host's 1e9 flop/s
  ++inflight_;
  if (!self.cpu_busy) {
    self.cpu_busy = true;
    pending_starts_.push_back(op);
  } else {
    self.cpu_queue.push_back(op);
  }
  return op->result.op;
}

OpId SimRuntime::timer(ServiceSlot& self, TimeNs delay_ns) {
  SimOp* op = new_op(self);
  op->delay_ns = std::max<TimeNs>(delay_ns, 0);
  schedule(op);
  return op->result.op;
}

OpId SimRuntime::memory_op(ServiceSlot& self, const MemHandle& range, const char* what) {
  if (Status s = check_range(range, self.endpoint.node, what); !s.ok()) return fail_now(self, s);
  SimOp* op = new_op(self);
  op->result.bytes = range.length;
  op->delay_ns = transfer_time_ns(range.length, config_.profile.memory_op_bytes_per_s);
  schedule(op);
  return op->result.op;
}

std::uint32_t SimRuntime::memory_pool(ServiceSlot& self, MemKind kind, std::uint16_t device) {
  const NodeId node = self.endpoint.node;
  const topo::Topology& topology = platform_->topology();
  std::uint32_t key = k_host_pool;
  std::uint64_t gpu_bytes = 0;
  if (kind == MemKind::gpu && config_.node_memory_limit_bytes == 0) {
    if (Result<topo::VertexId> gpu = topology.device(node, topo::VertexKind::gpu, device); gpu.ok()) {
      gpu_bytes = topology.vertex(*gpu).gpu_memory_bytes;
    }
    if (gpu_bytes > 0) key = device;  // a GPU of no size counts against the host pool
  }
  auto [it, made] = memory_[node].pools.try_emplace(key);
  if (!made) return key;
  MemoryPool& pool = it->second;
  if (config_.node_memory_limit_bytes > 0) {
    pool.limit_bytes = config_.node_memory_limit_bytes;
  } else if (key != k_host_pool) {
    pool.limit_bytes = gpu_bytes;
  } else {
    pool.limit_bytes = host_memory_bytes(node);
    if (pool.limit_bytes == 0) {
      pool.limit_bytes = k_unsized_node_memory_bytes;
      log(self, LogLevel::info,
          "node " + std::to_string(node) + ": the machine model gives no host memory size; its buffers may use " +
              std::to_string(k_unsized_node_memory_bytes) + " bytes (k_unsized_node_memory_bytes)");
    }
  }
  return key;
}

Result<MemHandle> SimRuntime::alloc(ServiceSlot& self, MemKind kind, std::uint16_t device, std::uint64_t bytes) {
  if (bytes == 0) return error(StatusCode::invalid_argument, "alloc of 0 bytes");
  const std::uint32_t key = memory_pool(self, kind, device);
  NodeMemory& node = memory_[self.endpoint.node];
  MemoryPool& pool = node.pools.at(key);
  if (pool.allocated_bytes + bytes > pool.limit_bytes) {
    const std::string which = key == k_host_pool ? "host" : "GPU " + std::to_string(device);
    return error(StatusCode::no_space, "node " + std::to_string(self.endpoint.node) + " " + which + " memory limit " +
                                           std::to_string(pool.limit_bytes) + " bytes reached");
  }
  const std::uint32_t id = node.next_region++;
  node.regions.emplace(id, Region{kind, device, bytes, self.endpoint, false, key});
  pool.allocated_bytes += bytes;
  SLUICE_ASSERT_MSG(pool.allocated_bytes <= pool.limit_bytes, "a node's memory pool stays within its limit");
  return MemHandle{self.endpoint.node, kind, device, id, 0, bytes};
}

void SimRuntime::release_memory(MemoryPool& pool, std::uint64_t bytes) {
  SLUICE_ASSERT_MSG(pool.allocated_bytes >= bytes, "a freed region was counted in its pool (" +
                                                       std::to_string(pool.allocated_bytes) + " bytes held, " +
                                                       std::to_string(bytes) + " freed)");
  pool.allocated_bytes -= bytes;
}

void SimRuntime::free(const MemHandle& region) {
  auto n = memory_.find(region.node);
  if (n == memory_.end()) return;
  auto it = n->second.regions.find(region.region);
  if (it == n->second.regions.end()) return;
  if (!it->second.window) release_memory(n->second.pools.at(it->second.pool), it->second.length);
  n->second.regions.erase(it);
}

// No bytes exist here: a window is a region id of the range's length whose
// transfers are checked again when they complete (see transfer_ends).
Result<MemHandle> SimRuntime::open_window(ServiceSlot& self, const MemHandle& range) {
  if (Status s = check_range(range, self.endpoint.node, "window range"); !s.ok()) return s;
  NodeMemory& node = memory_[self.endpoint.node];
  const std::uint32_t id = node.next_region++;
  node.regions.emplace(id, Region{range.kind, range.device, range.length, self.endpoint, true});
  return MemHandle{self.endpoint.node, range.kind, range.device, id, 0, range.length};
}

std::uint64_t SimRuntime::allocated_bytes(NodeId node) const {
  auto n = memory_.find(node);
  if (n == memory_.end()) return 0;
  std::uint64_t total = 0;
  for (const auto& [key, pool] : n->second.pools) total += pool.allocated_bytes;
  return total;
}

void SimRuntime::log(ServiceSlot& self, LogLevel level, std::string_view message) {
  static constexpr const char* k_level_names[] = {"debug", "info", "warn", "error"};
  std::string line = std::to_string(now()) + " " + k_level_names[static_cast<int>(level)] + " " +
                     self.endpoint.to_string() + " " + std::string(message);
  if (config_.log_sink) config_.log_sink(line);
  if (logs_.size() >= config_.max_log_lines) {
    ++logs_dropped_;
    return;
  }
  logs_.push_back(std::move(line));
}

void SimRuntime::count(std::string_view name, double delta) {
  auto it = counters_.find(name);
  if (it == counters_.end()) it = counters_.emplace(std::string(name), 0.0).first;
  it->second += delta;
}

void SimRuntime::sample(std::string_view name, double value) {
  auto it = samples_.find(name);
  if (it == samples_.end()) it = samples_.emplace(std::string(name), std::vector<double>{}).first;
  it->second.push_back(value);
}

double SimRuntime::counter(std::string_view name) const {
  auto it = counters_.find(name);
  return it == counters_.end() ? 0.0 : it->second;
}

const std::vector<double>* SimRuntime::samples(std::string_view name) const {
  auto it = samples_.find(name);
  return it == samples_.end() ? nullptr : &it->second;
}

// ---- faults ----------------------------------------------------------------------

void SimRuntime::kill(Endpoint service) {
  auto it = slots_.find(service);
  if (it == slots_.end()) return;
  it->second->alive = false;
  ++it->second->incarnation;
  it->second->ledger.forget_all();
}

void SimRuntime::revive(Endpoint service) {
  auto it = slots_.find(service);
  if (it != slots_.end()) it->second->alive = true;
}

bool SimRuntime::alive(Endpoint service) const {
  auto it = slots_.find(service);
  return it != slots_.end() && it->second->alive;
}

Status SimRuntime::restart(Endpoint service) {
  auto it = slots_.find(service);
  if (it == slots_.end()) return error(StatusCode::not_found, "restart: no service at " + service.to_string());
  auto factory = factories_.find(service);
  if (factory == factories_.end()) {
    return error(StatusCode::unavailable,
                 "restart of " + it->second->service->name() + ": it was built from arguments that cannot be copied");
  }
  ServiceSlot& slot = *it->second;
  ++slot.incarnation;  // what the old instance started, and messages already sent to it, are dropped
  slot.ledger.forget_all();
  // The crashed process's memory is gone (staging buffers it held).
  NodeMemory& memory = memory_[service.node];
  for (auto r = memory.regions.begin(); r != memory.regions.end();) {
    if (r->second.owner == service) {
      if (!r->second.window) release_memory(memory.pools.at(r->second.pool), r->second.length);
      r = memory.regions.erase(r);
    } else {
      ++r;
    }
  }
  // Between runs every spawned actor is blocked on its semaphore, outside
  // on_event, so the old instance can go. The new one starts on the slot's
  // own actor (actor_main), as a service added after start() does.
  slot.service = factory->second(*slot.env);
  slot.alive = true;
  if (slot.spawned) {
    slot.start_pending = true;
    wake(slot);
  }
  return ok_status();
}

void SimRuntime::set_disk_slowdown(TargetId target, double factor) {
  if (factor <= 1.0) {
    disk_slowdown_.erase(target);
  } else {
    disk_slowdown_[target] = factor;
  }
}

bool SimRuntime::partitioned(NodeId a, NodeId b) const { return faults::partitioned(partitions_, a, b); }

void SimRuntime::set_message_faults(double loss_probability, TimeNs extra_delay_ns) {
  loss_probability_ = std::clamp(loss_probability, 0.0, 1.0);
  extra_delay_ns_ = std::max<TimeNs>(extra_delay_ns, 0);
}

// ---- actors and run control ---------------------------------------------------------

void SimRuntime::spawn(ServiceSlot& slot) {
  slot.spawned = true;
  ++runnable_actors_;
  ServiceSlot* s = &slot;
  slot.actor = sg::Actor::create("svc" + slot.endpoint.to_string(), platform_->cpu_host(slot.endpoint.node),
                                 [this, s] { actor_main(*s); });
}

void SimRuntime::actor_main(ServiceSlot& slot) {
  if (shutting_down_) return;
  slot.service->start();
  for (;;) {
    if (slot.start_pending && !shutting_down_) {
      slot.start_pending = false;
      slot.service->start();
    }
    while (!slot.ready.empty() && !pause_requested_ && !shutting_down_) {
      ReadyEvent r = std::move(slot.ready.front());
      slot.ready.pop_front();
      --ready_events_;
      if (!slot.alive || r.incarnation != slot.incarnation) {
        if (std::holds_alternative<Delivery>(r.event)) ++messages_dropped_;
        continue;
      }
      if (const auto* c = std::get_if<Completion>(&r.event)) slot.ledger.completed(c->op);
      slot.service->on_event(r.event);
      ++events_;
      if (events_ >= event_budget_ || (stop_when_ && stop_when_())) request_pause();
    }
    flush_starts();
    if (shutting_down_) return;
    if (!slot.ready.empty() && !pause_requested_) continue;
    slot.waiting = true;
    --runnable_actors_;
    if (pause_on_idle_ && idle()) request_pause();
    slot.wake->acquire();
    if (shutting_down_) return;
  }
}

bool SimRuntime::idle() const {
  return inflight_ == 0 && ready_events_ == 0 && runnable_actors_ == 0 && pending_starts_.empty();
}

void SimRuntime::request_pause() {
  if (pause_requested_) return;
  pause_requested_ = true;
  // SimGrid 3.32 has no "stop now": its main loop returns when an activity
  // it tracks was vetoed (Engine::track_vetoed_activities). An Exec without a
  // host is vetoed when started. The kernel timer at the current date keeps
  // the solver from jumping the clock forward before the loop returns.
  veto_ = sg::Exec::init();
  veto_->vetoable_start();
  ++timers_set_;
  simgrid::kernel::timer::Timer::set(sg::Engine::get_clock(), [] {});
}

void SimRuntime::resume_actors() {
  for (auto& [ep, slot] : slots_) {
    if (!slot->ready.empty()) wake(*slot);
  }
}

void SimRuntime::run_engine(double until_s) {
  flush_starts();
  ++engine_runs_;
  engine_->run_until(until_s);
  if (!pause_requested_) vetoed_.clear();  // nothing of ours: never let a stale entry stop the next run
  if (pause_requested_) {
    vetoed_.clear();
    veto_ = nullptr;
    pause_requested_ = false;
  }
}

void SimRuntime::start() {
  if (started_) return;
  started_ = true;
  for (auto& [ep, slot] : slots_) spawn(*slot);
}

bool SimRuntime::run_until(const std::function<bool()>& done, std::uint64_t max_events) {
  start();
  stop_when_ = done;
  event_budget_ = max_events > ~std::uint64_t{0} - events_ ? ~std::uint64_t{0} : events_ + max_events;
  pause_on_idle_ = true;
  while (!done() && events_ < event_budget_) {
    if (idle() && pending_starts_.empty()) break;
    resume_actors();
    run_engine(sg::Engine::get_clock() + k_run_horizon_s);
  }
  stop_when_ = nullptr;
  event_budget_ = ~std::uint64_t{0};
  pause_on_idle_ = false;
  return done();
}

std::uint64_t SimRuntime::run_until_idle(std::uint64_t max_events) {
  const std::uint64_t before = events_;
  run_until([] { return false; }, max_events);
  return events_ - before;
}

void SimRuntime::run_for(TimeNs duration_ns) {
  start();
  const TimeNs target_ns = now() + std::max<TimeNs>(duration_ns, 0);
  event_budget_ = ~std::uint64_t{0};
  // SimGrid's loop ends within 10 us of the date asked; go on until there.
  for (int rounds = 0; now() < target_ns && rounds < 1000; ++rounds) {
    resume_actors();
    run_engine(seconds(target_ns));
  }
}

}  // namespace sluice::sim
