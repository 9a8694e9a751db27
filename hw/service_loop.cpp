#include "hw/service_loop.hpp"

#include "core/common/assert.hpp"

#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <string>

namespace sluice::hw {

void EventGate::add(Slot* slot) {
  std::lock_guard lock(slots_mu_);
  slots_.push_back(slot);
}

void EventGate::remove(Slot* slot) {
  std::lock_guard lock(slots_mu_);
  SLUICE_ASSERT(!slot->inside.load());
  std::erase(slots_, slot);
}

void EventGate::enter(Slot& slot) {
  while (true) {
    slot.inside.store(true);
    if (!closed_.load()) return;
    leave(slot);  // a writer waits: step back out and wait at the door
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return !closed_.load(); });
  }
}

void EventGate::leave(Slot& slot) {
  slot.inside.store(false);
  if (closed_.load()) {
    std::lock_guard lock(mu_);  // the writer checks the marks under mu_: no lost wake-up
    cv_.notify_all();
  }
}

void EventGate::exclusive(const std::function<void()>& fn) {
  std::lock_guard writer(writer_mu_);
  closed_.store(true);
  {
    std::lock_guard slots(slots_mu_);
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] {
      return std::none_of(slots_.begin(), slots_.end(), [](const Slot* s) { return s->inside.load(); });
    });
  }
  fn();
  {
    std::lock_guard lock(mu_);
    closed_.store(false);
  }
  cv_.notify_all();
}

ServiceLoop::ServiceLoop(Clock::time_point epoch, Progress* progress, EventGate* gate)
    : epoch_(epoch), progress_(progress), gate_(gate) {
  if (gate_ != nullptr) gate_->add(&gate_slot_);
}

ServiceLoop::~ServiceLoop() {
  stop();
  if (gate_ != nullptr) gate_->remove(&gate_slot_);
}

TimeNs ServiceLoop::now() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - epoch_).count();
}

void ServiceLoop::start() {
  if (thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    handling_ = true;  // the service's start() counts as an item being handled
  }
  thread_ = std::thread([this] {
    // "svc:meta:1": named for perf and top (15 characters at most).
    const std::string name = "svc:" + (service_ != nullptr ? service_->name() : std::string("closures"));
    ::pthread_setname_np(::pthread_self(), name.substr(0, 15).c_str());
    loop();
    thread_id_.store(std::thread::id{});  // a later thread may get this id: it is not this loop's
    timespec cpu{};
    if (::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0) {
      thread_cpu_ns_.store(static_cast<TimeNs>(cpu.tv_sec) * k_ns_per_s + cpu.tv_nsec);
    }
  });
}

void ServiceLoop::stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

bool ServiceLoop::drop_locked(const Event& event) {
  const auto* completion = std::get_if<Completion>(&event);
  const bool stale = completion != nullptr && completion->op < stale_below_op_;
  if (alive_ && !stale) return false;
  if (std::holds_alternative<Delivery>(event)) ++dropped_deliveries_;
  return true;
}

void ServiceLoop::push(Event event) {
  {
    std::lock_guard lock(mu_);
    if (drop_locked(event)) return;
    if (items_.size() >= k_max_loop_queue_events) ++overflows_;
    items_.emplace_back(std::move(event));
  }
  wake_.notify_one();
}

void ServiceLoop::push_all(std::vector<Event>& events) {
  if (events.empty()) return;
  {
    std::lock_guard lock(mu_);
    for (Event& event : events) {
      if (drop_locked(event)) continue;
      if (items_.size() >= k_max_loop_queue_events) ++overflows_;
      items_.emplace_back(std::move(event));
    }
  }
  events.clear();
  wake_.notify_one();
}

void ServiceLoop::add_timer(TimeNs at_ns, OpId op) {
  {
    std::lock_guard lock(mu_);
    timers_.push(Timer{at_ns, next_timer_seq_++, op, {}});
  }
  wake_.notify_one();
}

void ServiceLoop::run(std::function<void()> fn) {
  bool direct = false;
  {
    std::lock_guard lock(mu_);
    if (!thread_.joinable() || stop_) {
      direct = true;
    } else {
      items_.emplace_back(std::move(fn));
    }
  }
  if (direct) {
    fn();
    return;
  }
  wake_.notify_one();
}

void ServiceLoop::run_at(TimeNs at_ns, std::function<void()> fn) {
  {
    std::lock_guard lock(mu_);
    timers_.push(Timer{at_ns, next_timer_seq_++, 0, std::move(fn)});
  }
  wake_.notify_one();
}

void ServiceLoop::note_started(OpId op) {
  std::lock_guard lock(mu_);
  ledger_.started(op);
}

void ServiceLoop::kill(OpId stale_below_op) {
  std::lock_guard lock(mu_);
  alive_ = false;
  stale_below_op_ = std::max(stale_below_op_, stale_below_op);
  std::deque<Item> kept;
  for (Item& item : items_) {
    if (auto* event = std::get_if<Event>(&item)) {
      if (std::holds_alternative<Delivery>(*event)) ++dropped_deliveries_;
    } else {
      kept.push_back(std::move(item));  // closures: someone may wait for them (call())
    }
  }
  items_.swap(kept);
  std::vector<Timer> closures;
  while (!timers_.empty()) {
    if (timers_.top().fn) closures.push_back(timers_.top());
    timers_.pop();
  }
  for (Timer& t : closures) timers_.push(std::move(t));
}

void ServiceLoop::revive() {
  std::lock_guard lock(mu_);
  alive_ = true;
}

bool ServiceLoop::alive() const {
  std::lock_guard lock(mu_);
  return alive_;
}

std::uint64_t ServiceLoop::dropped_deliveries() const {
  std::lock_guard lock(mu_);
  return dropped_deliveries_;
}

bool ServiceLoop::idle() const {
  std::lock_guard lock(mu_);
  if (stop_) return true;  // a stopped loop handles nothing more: what waits there is dropped
  return !handling_ && items_.empty() && (timers_.empty() || timers_.top().at_ns > now());
}

std::uint64_t ServiceLoop::overflows() const {
  std::lock_guard lock(mu_);
  return overflows_;
}

void ServiceLoop::end_turn() {
  if (!turn_end_) return;
  if (gate_ != nullptr) gate_->enter(gate_slot_);
  turn_end_();
  if (gate_ != nullptr) gate_->leave(gate_slot_);
}

void ServiceLoop::loop() {
  thread_id_.store(std::this_thread::get_id());
  if (gate_ != nullptr) gate_->enter(gate_slot_);
  if (service_ != nullptr) service_->start();
  if (gate_ != nullptr) gate_->leave(gate_slot_);
  end_turn();
  std::uint32_t turn_items = 0;
  std::unique_lock lock(mu_);
  handling_ = false;
  lock.unlock();
  if (progress_ != nullptr) progress_->tick();
  lock.lock();
  while (!stop_) {
    // Due timers join the FIFO in deadline order, behind what already waits.
    const TimeNs t = now();
    while (!timers_.empty() && timers_.top().at_ns <= t) {
      if (timers_.top().fn) {
        items_.emplace_back(timers_.top().fn);
      } else {
        Completion c;
        c.op = timers_.top().op;
        Event event(std::move(c));
        if (!drop_locked(event)) items_.emplace_back(std::move(event));
      }
      timers_.pop();
    }
    if (items_.empty()) {
      if (timers_.empty()) {
        wake_.wait(lock);
      } else {
        wake_.wait_until(lock, epoch_ + std::chrono::nanoseconds(timers_.top().at_ns));
      }
      continue;
    }
    Item item = std::move(items_.front());
    items_.pop_front();
    if (const Event* event = std::get_if<Event>(&item); event != nullptr && service_ != nullptr) {
      if (const auto* c = std::get_if<Completion>(event)) ledger_.completed(c->op);
    }
    handling_ = true;
    lock.unlock();
    if (gate_ != nullptr) gate_->enter(gate_slot_);
    if (auto* fn = std::get_if<std::function<void()>>(&item)) {
      (*fn)();
    } else if (service_ != nullptr) {
      service_->on_event(std::get<Event>(item));
    }
    if (gate_ != nullptr) gate_->leave(gate_slot_);
    lock.lock();
    if (items_.empty() || ++turn_items >= k_max_loop_items_per_turn) {
      lock.unlock();  // still handling_: a world waiting for idleness waits for the turn's end too
      end_turn();
      turn_items = 0;
      lock.lock();
    }
    handling_ = false;
    lock.unlock();
    if (progress_ != nullptr) progress_->tick();
    lock.lock();
  }
}

}  // namespace sluice::hw
