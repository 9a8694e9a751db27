// ProgressLoop: the progress thread every socket-driven transport runs (tcp,
// shm; a new one starts from it): an epoll set with a wake eventfd, one
// thread that waits on the set and hands each ready descriptor's id to the
// transport, and the stop/join sequence.
//
// The transport keeps its own lock and its queue of completion events; the
// loop takes them by reference. Each turn: wait (epoll, the transport's
// timeout, without the lock), then under the lock wait until the transport's
// queue has room (bounded drain: a transport whose owner stops polling does
// not grow its queue without bound; the owner notifies `drained` when it
// takes events), hand over the ready ids (the wake eventfd, k_wake_id, is
// drained here), and let the transport run its per-turn work (after_turn).
//
// stop() (idempotent; the transport's destructor calls it first, while its
// state still exists) sets the stop flag under the lock, wakes a thread that
// waits for room or for events, and joins it. The descriptors close with the
// loop.
#pragma once

#include <sys/epoll.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "core/common/status.hpp"

namespace sluice::transport {

class ProgressLoop {
 public:
  // The wake eventfd's id in the epoll set; a transport numbers its own descriptors from 1.
  static constexpr std::uint64_t k_wake_id = 0;
  // Ready descriptors taken from the kernel per turn.
  static constexpr int k_batch = 64;

  struct Hooks {
    // The wait's timeout in ms (-1: none, 0: do not block); on the loop thread, without the lock.
    std::function<int()> wait_ms;
    // Under the lock: whether the transport's event queue takes more.
    std::function<bool()> has_room;
    // Under the lock: a ready descriptor (its id and epoll events).
    std::function<void(std::uint64_t id, std::uint32_t events)> ready;
    // Under the lock, after the turn's ready descriptors.
    std::function<void()> after_turn;
    // Optional, on the loop thread without the lock, after a wait that found
    // no descriptor ready: true to wait again at once without a turn (a
    // transport that busy-polls its descriptors with wait_ms() 0 takes the
    // lock only when one is ready or it asks for a turn). Empty: every wait is a turn.
    std::function<bool()> skip_idle_turn;
    // Said when the loop ends on an error (may be empty).
    std::function<void(const std::string&)> log;
  };

  // `what` names the transport in errors ("tcp transport").
  ProgressLoop(std::string what, std::mutex& mu, std::condition_variable& drained);
  ~ProgressLoop();
  ProgressLoop(const ProgressLoop&) = delete;
  ProgressLoop& operator=(const ProgressLoop&) = delete;

  // The epoll set and the wake eventfd (watched as k_wake_id); io_error naming the transport.
  Status open();
  int epoll_fd() const { return epoll_fd_; }
  // The wake eventfd: written to wake the thread (wake()); a transport may hand it to peers.
  int wake_fd() const { return wake_fd_; }
  // Adds `fd` to the set as `id` (level-triggered, EPOLLIN unless said).
  void watch(int fd, std::uint64_t id, std::uint32_t events = EPOLLIN) const;

  // Starts the thread, named `thread_name` (cut to 15 characters).
  void start(const std::string& thread_name, Hooks hooks);
  void wake() const;
  // Ends the thread (see above); the transport's lock must not be held.
  void stop();
  bool stopping() const { return stop_; }

 private:
  void run();

  std::string what_;
  std::mutex& mu_;
  std::condition_variable& drained_;
  Hooks hooks_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace sluice::transport
