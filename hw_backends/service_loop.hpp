// One service's event loop on hardware: a thread that delivers the service's
// events one at a time (the Env contract: never concurrently, never
// re-entrantly), fires its timers, and runs closures other threads hand it
// between events (so a test can read a service's state without a race).
//
// Any thread may push(); timers are added by the service itself. Events wait
// in one FIFO, bounded by k_max_loop_queue_events: past it push() still
// accepts (dropping a completion would break "every operation completes
// once") but counts the overflow, which the world reports.
#pragma once

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

namespace sluice::hw {

// Events queued for one service before the world reports the backlog.
inline constexpr std::size_t k_max_loop_queue_events = 1 << 20;

// A counter every loop bumps after each item it handles, so that a thread
// waiting for some state (a test, the CLI) re-checks only when something
// happened, without polling on a clock.
class Progress {
 public:
  void tick() {
    {
      std::lock_guard lock(mu_);
      ++generation_;
    }
    cv_.notify_all();
  }
  std::uint64_t generation() const {
    std::lock_guard lock(mu_);
    return generation_;
  }
  // Waits until the generation differs from `seen` or `timeout` passes; returns the generation.
  std::uint64_t wait_past(std::uint64_t seen, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, timeout, [&] { return generation_ != seen; });
    return generation_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::uint64_t generation_ = 0;
};

class ServiceLoop {
 public:
  using Clock = std::chrono::steady_clock;

  // `epoch` is the world's time zero; `progress` ticks after each item.
  ServiceLoop(Clock::time_point epoch, Progress* progress);
  ~ServiceLoop();
  ServiceLoop(const ServiceLoop&) = delete;
  ServiceLoop& operator=(const ServiceLoop&) = delete;

  void bind(Service* service) { service_ = service; }
  // Starts the thread, which calls service->start() first.
  void start();
  // Stops after the item being handled; pending items and timers are dropped.
  void stop();
  bool running() const { return thread_.joinable(); }

  void push(Event event);
  // Completion{op} at world time at_ns (now or later).
  void add_timer(TimeNs at_ns, OpId op);
  // Runs fn on the loop thread between events (at once if not started).
  void run(std::function<void()> fn);

  TimeNs now() const;
  std::uint64_t overflows() const;

 private:
  struct Timer {
    TimeNs at_ns = 0;
    std::uint64_t seq = 0;
    OpId op = 0;
    bool operator>(const Timer& o) const { return at_ns != o.at_ns ? at_ns > o.at_ns : seq > o.seq; }
  };
  using Item = std::variant<Event, std::function<void()>>;

  void loop();

  Clock::time_point epoch_;
  Progress* progress_;
  Service* service_ = nullptr;
  std::thread thread_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Item> items_;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  std::uint64_t next_timer_seq_ = 0;
  std::uint64_t overflows_ = 0;
  bool stop_ = false;
};

}  // namespace sluice::hw
