// One service's event loop on hardware: a thread that delivers the service's
// events one at a time (the Env contract: never concurrently, never
// re-entrantly), fires its timers, and runs closures other threads hand it
// between events (so a test can read a service's state without a race).
//
// Any thread may push(); timers are added by the service itself. Events wait
// in one FIFO, bounded by k_max_loop_queue_events: past it push() still
// accepts (dropping a completion would break "every operation completes
// once") but counts the overflow, which the world reports.
//
// Every item (event, closure, the service's start()) is handled inside the
// world's EventGate when one is given, so that another thread can look at
// the state of every service at once between events (HwWorld::run_until).
//
// kill()/revive() model a crashed service process whose thread the world
// keeps (so that call() still works): a dead loop delivers no event (they are
// dropped and counted) and fires no timer of the service; closures still run.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <queue>
#include <thread>
#include <variant>
#include <vector>

#include "core/env.hpp"
#include "core/world.hpp"

namespace sluice::hw {

// Events queued for one service before the world reports the backlog.
inline constexpr std::size_t k_max_loop_queue_events = 1 << 20;
// Items a loop handles between two calls of its turn-end hook when items
// keep coming (it is called at once when the queue runs dry). HwEnv sends a
// turn's messages there, gathered: 64 items of a few microseconds each keep
// a reply's extra wait within about a tenth of a millisecond, and gather
// ~30 metadata replies (two items each: request, CPU completion) into one
// sendmsg (make bench-meta).
inline constexpr std::uint32_t k_max_loop_items_per_turn = 64;

// A counter every loop bumps after each item it handles, so that a thread
// waiting for some state (a test, the CLI) re-checks only when something
// happened, without polling on a clock.
class Progress {
 public:
  // Every loop ticks after every item: a process-wide lock here was taken
  // by every service thread for every message (make bench-meta, perf). The
  // lock and the notify are only for when a thread waits. No wake-up is
  // lost: a waiter counts itself before it reads the generation, a ticker
  // bumps the generation before it reads the count (both sequentially
  // consistent), so one of them sees the other.
  void tick() {
    generation_.fetch_add(1);
    if (waiters_.load() == 0) return;
    { std::lock_guard lock(mu_); }  // a waiter between its check and its sleep is asleep after this
    cv_.notify_all();
  }
  std::uint64_t generation() const { return generation_.load(); }
  // Waits until the generation differs from `seen` or `timeout` passes; returns the generation.
  std::uint64_t wait_past(std::uint64_t seen, std::chrono::milliseconds timeout) {
    waiters_.fetch_add(1);
    {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, timeout, [&] { return generation_.load() != seen; });
    }
    waiters_.fetch_sub(1);
    return generation_.load();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<std::uint32_t> waiters_{0};
};

// A writer-preferring gate between the service loops (many "handlers", each
// inside enter()/leave() while it handles one item) and one thread that
// wants every handler out (exclusive()). Handlers never wait for each other;
// exclusive() waits for the handlers inside to leave and holds new ones at
// the door while fn runs. Each handler marks itself in a slot of its own
// (its own cache line): a count shared by every loop, bumped twice per item
// by every thread, was a line every core fought over (make bench-meta). The
// fast path is two stores and a load per item. No wake-up is lost: a
// handler stores its mark before it reads closed_, the writer stores closed_
// before it reads the marks (sequentially consistent), and a handler that
// leaves while the door is closed notifies under mu_. exclusive() must not
// be called from inside a handler (it would wait for itself), and fn must
// not wait for a service (no HwWorld::call).
class EventGate {
 public:
  struct alignas(64) Slot {
    std::atomic<bool> inside{false};
  };
  // A handler's slot, added before its first enter() and removed after its last leave().
  void add(Slot* slot);
  void remove(Slot* slot);
  void enter(Slot& slot);
  void leave(Slot& slot);
  void exclusive(const std::function<void()>& fn);

 private:
  std::atomic<bool> closed_{false};
  std::mutex mu_;  // guards the waits below
  std::condition_variable cv_;
  std::mutex writer_mu_;  // one exclusive() at a time
  std::mutex slots_mu_;   // guards slots_
  std::vector<Slot*> slots_;
};

class ServiceLoop {
 public:
  using Clock = std::chrono::steady_clock;

  // `epoch` is the world's time zero; `progress` ticks after each item;
  // `gate` (may be null) is entered around each item.
  ServiceLoop(Clock::time_point epoch, Progress* progress, EventGate* gate = nullptr);
  ~ServiceLoop();
  ServiceLoop(const ServiceLoop&) = delete;
  ServiceLoop& operator=(const ServiceLoop&) = delete;

  void bind(Service* service) { service_ = service; }
  // Called on the loop thread, inside the gate and before the loop counts as
  // idle, after the last queued item (or k_max_loop_items_per_turn of them)
  // and after the service's start(). Set before start().
  void set_turn_end(std::function<void()> fn) { turn_end_ = std::move(fn); }
  // The turn-end hook at once, from inside an item on the loop thread (a
  // closure that must see its sends leave before it returns: HwWorld::call).
  void flush_turn() {
    if (turn_end_) turn_end_();
  }
  // Whether the caller is this loop's thread.
  bool on_loop_thread() const { return std::this_thread::get_id() == thread_id_.load(); }
  // Starts the thread, which calls service->start() first.
  void start();
  // Stops after the item being handled; pending items and timers are dropped.
  void stop();
  bool running() const { return thread_.joinable(); }

  void push(Event event);
  // Several at once, in order: one lock and one wake-up (HwNode's dispatcher
  // hands over a poll's deliveries to each loop so). Empties `events`.
  void push_all(std::vector<Event>& events);
  // Completion{op} at world time at_ns (now or later).
  void add_timer(TimeNs at_ns, OpId op);
  // Runs fn on the loop thread between events (at once if not started).
  void run(std::function<void()> fn);
  // Runs fn on the loop thread at world time at_ns (never earlier), dead or
  // alive; dropped by stop(). Used for messages a fault rule delays.
  void run_at(TimeNs at_ns, std::function<void()> fn);

  // The service dies: queued events and its timers are dropped, events
  // pushed while dead are dropped (counted in dropped_deliveries() if they
  // are messages), and completions of operations with an id below
  // `stale_below_op` (those started before the death) are dropped forever,
  // also after revive(). The handler running now, if any, finishes.
  void kill(OpId stale_below_op);
  void revive();
  bool alive() const;
  std::uint64_t dropped_deliveries() const;

  // True when nothing is queued, no timer is due and no item is being
  // handled (timers due later do not count: they are the future), or
  // once stopped.
  bool idle() const;

  TimeNs now() const;
  std::uint64_t overflows() const;
  // The CPU time the loop's thread used, in ns: known once the thread has
  // ended (stop()), 0 before. The service's own work plus the loop's
  // (HwWorld::thread_cpu_ns sums it by kind of service).
  TimeNs thread_cpu_ns() const { return thread_cpu_ns_.load(); }

  // The Env contract's ledger (core/world.hpp): HwEnv notes each OpId it
  // hands out; the loop checks each Completion it delivers against it.
  // Completions a kill made stale are dropped, not delivered, so their
  // entries stay (bounded by the operations in flight at the kill).
  void note_started(OpId op);

 private:
  struct Timer {
    TimeNs at_ns = 0;
    std::uint64_t seq = 0;
    OpId op = 0;
    std::function<void()> fn;  // set: a closure (run_at), not a completion
    bool operator>(const Timer& o) const { return at_ns != o.at_ns ? at_ns > o.at_ns : seq > o.seq; }
  };
  using Item = std::variant<Event, std::function<void()>>;

  void loop();
  void end_turn();
  // With mu_ held: whether a dead (or stale) event must be dropped.
  bool drop_locked(const Event& event);

  Clock::time_point epoch_;
  Progress* progress_;
  EventGate* gate_;
  EventGate::Slot gate_slot_;
  Service* service_ = nullptr;
  std::function<void()> turn_end_;
  std::thread thread_;
  std::atomic<std::thread::id> thread_id_{};
  std::atomic<TimeNs> thread_cpu_ns_{0};
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Item> items_;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  std::uint64_t next_timer_seq_ = 0;
  std::uint64_t overflows_ = 0;
  bool stop_ = false;
  bool alive_ = true;
  bool handling_ = false;
  OpId stale_below_op_ = 0;
  std::uint64_t dropped_deliveries_ = 0;
  CompletionLedger ledger_;  // under mu_
};

}  // namespace sluice::hw
