// A thread-safe queue of completions with an eventfd that is readable while
// the queue may be non-empty: the completion side of the storage backends.
// Producers (worker threads, submit() for inline completions) push; the
// consumer pops from poll() and waits on fd() with epoll.
#pragma once

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

namespace sluice::hw {

template <class T>
class CompletionQueue {
 public:
  CompletionQueue() : fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}
  ~CompletionQueue() {
    if (fd_ >= 0) ::close(fd_);
  }
  CompletionQueue(const CompletionQueue&) = delete;
  CompletionQueue& operator=(const CompletionQueue&) = delete;

  bool valid() const { return fd_ >= 0; }
  int fd() const { return fd_; }

  void push(T item) {
    std::lock_guard lock(mu_);
    const bool was_empty = items_.empty();
    items_.push_back(std::move(item));
    if (was_empty) signal();
  }

  // Moves up to max items to `out`; the fd is reset first and set again when
  // items remain, so a reader never misses one.
  std::size_t pop(std::vector<T>& out, std::size_t max) {
    std::lock_guard lock(mu_);
    std::uint64_t count = 0;
    [[maybe_unused]] const auto r = ::read(fd_, &count, sizeof count);
    const std::size_t n = std::min(max, items_.size());
    for (std::size_t i = 0; i < n; ++i) {
      out.push_back(std::move(items_.front()));
      items_.pop_front();
    }
    if (!items_.empty()) signal();
    return n;
  }

  // Sets the fd without an item (a source with its own queue has work).
  void signal() const {
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto w = ::write(fd_, &one, sizeof one);
  }

 private:
  int fd_;
  std::mutex mu_;
  std::deque<T> items_;
};

}  // namespace sluice::hw
