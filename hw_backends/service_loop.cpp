#include "hw_backends/service_loop.hpp"

namespace sluice::hw {

ServiceLoop::ServiceLoop(Clock::time_point epoch, Progress* progress)
    : epoch_(epoch), progress_(progress) {}

ServiceLoop::~ServiceLoop() { stop(); }

TimeNs ServiceLoop::now() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - epoch_).count();
}

void ServiceLoop::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { loop(); });
}

void ServiceLoop::stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void ServiceLoop::push(Event event) {
  {
    std::lock_guard lock(mu_);
    if (items_.size() >= k_max_loop_queue_events) ++overflows_;
    items_.emplace_back(std::move(event));
  }
  wake_.notify_one();
}

void ServiceLoop::add_timer(TimeNs at_ns, OpId op) {
  {
    std::lock_guard lock(mu_);
    timers_.push(Timer{at_ns, next_timer_seq_++, op});
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

std::uint64_t ServiceLoop::overflows() const {
  std::lock_guard lock(mu_);
  return overflows_;
}

void ServiceLoop::loop() {
  if (service_ != nullptr) service_->start();
  if (progress_ != nullptr) progress_->tick();
  std::unique_lock lock(mu_);
  while (!stop_) {
    // Due timers join the FIFO in deadline order, behind what already waits.
    const TimeNs t = now();
    while (!timers_.empty() && timers_.top().at_ns <= t) {
      Completion c;
      c.op = timers_.top().op;
      items_.emplace_back(Event(std::move(c)));
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
    lock.unlock();
    if (auto* fn = std::get_if<std::function<void()>>(&item)) {
      (*fn)();
    } else if (service_ != nullptr) {
      service_->on_event(std::get<Event>(item));
    }
    if (progress_ != nullptr) progress_->tick();
    lock.lock();
  }
}

}  // namespace sluice::hw
