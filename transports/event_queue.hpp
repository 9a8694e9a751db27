// What a transport's poll() hands out, with the eventfd behind its
// completion_fd(): readable exactly while events wait (transport.hpp,
// "Completion"). Shared by the transports that queue events on their own
// progress thread (tcp, shm). Not thread-safe: the owner calls it with its
// lock held.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "transports/transport.hpp"

namespace sluice::transport {

class EventQueue {
 public:
  // `event_fd`: an eventfd (non-blocking) the owner created and closes.
  void set_fd(int event_fd) { fd_ = event_fd; }

  void push(TransportEvent event) {
    const bool was_empty = events_.empty();
    events_.push_back(std::move(event));
    if (was_empty) ring();
  }

  // Moves up to min(max_events, k_max_poll_events) events to `out`; the fd
  // stays readable while more wait. Returns how many moved.
  std::size_t take(std::vector<TransportEvent>& out, std::size_t max_events) {
    std::uint64_t count = 0;
    [[maybe_unused]] const auto r = ::read(fd_, &count, sizeof count);  // reset before draining
    const std::size_t n = std::min({max_events, events_.size(), k_max_poll_events});
    for (std::size_t i = 0; i < n; ++i) {
      out.push_back(std::move(events_.front()));
      events_.pop_front();
    }
    if (!events_.empty()) ring();
    return n;
  }

  std::size_t size() const { return events_.size(); }

 private:
  void ring() {
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto w = ::write(fd_, &one, sizeof one);
  }

  int fd_ = -1;
  std::deque<TransportEvent> events_;
};

// [offset, offset + bytes) lies inside a region of `size` bytes (no overflow).
inline bool range_inside(std::uint64_t offset, std::uint64_t bytes, std::uint64_t size) {
  return offset <= size && bytes <= size - offset;
}

}  // namespace sluice::transport
