// EventfdQueue<T>: a thread-safe FIFO with an eventfd that is readable
// exactly while items wait. The completion side of the mechanism: what a
// transport's poll() hands out (transports/transport.hpp, "Completion") and
// what a storage backend's poll() returns (hw_backends/storage_backend.hpp),
// each with completion_fd() = fd(). Producers (progress threads, workers,
// calls that complete inline) push; the consumer pops from poll() and sleeps
// on fd() with epoll/poll in between.
//
// The fd: non-blocking, close-on-exec, owned by the queue. It is set when
// the queue goes from empty to non-empty, and pop() resets it before taking
// items and sets it again when some remain, so a waiter never misses an
// item; spurious wake-ups are possible (signal(), or a reader that emptied
// the queue after the fd woke another). Its own mutex guards the items: a
// leaf lock, so an owner may call in with its own lock held.
#pragma once

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <utility>
#include <vector>

namespace sluice::base {

template <class T>
class EventfdQueue {
 public:
  EventfdQueue() : fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)), open_errno_(fd_ < 0 ? errno : 0) {}
  ~EventfdQueue() {
    if (fd_ >= 0) ::close(fd_);
  }
  EventfdQueue(const EventfdQueue&) = delete;
  EventfdQueue& operator=(const EventfdQueue&) = delete;

  // False when eventfd() failed (open_errno() says why): check before use.
  bool valid() const { return fd_ >= 0; }
  int open_errno() const { return open_errno_; }
  // Readable while items wait (see above).
  int fd() const { return fd_; }

  void push(T item) {
    std::lock_guard lock(mu_);
    const bool was_empty = items_.empty();
    items_.push_back(std::move(item));
    if (was_empty) signal();
  }

  // Moves up to `max` items, oldest first, to the end of `out` and returns
  // how many. Never blocks.
  std::size_t pop(std::vector<T>& out, std::size_t max) {
    std::lock_guard lock(mu_);
    std::uint64_t count = 0;
    [[maybe_unused]] const auto r = ::read(fd_, &count, sizeof count);  // reset before draining
    const std::size_t n = std::min(max, items_.size());
    for (std::size_t i = 0; i < n; ++i) {
      out.push_back(std::move(items_.front()));
      items_.pop_front();
    }
    if (!items_.empty()) signal();
    return n;
  }

  std::size_t size() const {
    std::lock_guard lock(mu_);
    return items_.size();
  }

  // Sets the fd without an item: a source with a queue of its own has work
  // (an io_uring with completions to reap), so a waiter calls pop() again.
  void signal() const {
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto w = ::write(fd_, &one, sizeof one);
  }

 private:
  const int fd_;
  const int open_errno_;
  mutable std::mutex mu_;
  std::deque<T> items_;
};

}  // namespace sluice::base
