// AcceptGuard: the bookkeeping behind TransportConfig::accept (AcceptLimits,
// transports/transport.hpp) for a transport's listeners: the caps, the
// hand-shake deadlines, the back-off of a listener whose accept() fails, and
// the rate-limited log lines about all three. Mechanism shared by the
// transports that accept from sockets (tcp, shm); each keeps its own
// connections and epoll set and asks the guard what to do:
//
//   accept() failed        accept_failed() -> pause: stop polling the listener
//   accept() succeeded     accepted(), then admit() -> false: close it at once
//   bytes arrived          activity() (only while the hand-shake runs)
//   hand-shake complete    handshake_done()
//   connection closed      closed() (every admitted connection, once)
//   each progress round    expired() -> close those; resume_due() -> poll again
//   before epoll_wait      wait_ms(): the timeout until the next of these
//
// Not thread-safe: the transport's lock guards it. Times are
// monotonic_now_ns() values (CLOCK_MONOTONIC, as epoll_wait's timeout), passed
// in so that the guard itself reads no clock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/rate_limited_log.hpp"
#include "transports/transport.hpp"

namespace sluice::transport {

// CLOCK_MONOTONIC in nanoseconds.
std::int64_t monotonic_now_ns();

// Adds (polled) or removes listening socket `listen_fd` in `epoll_fd`, its
// events tagged `tag` (EPOLLIN): how a listener pauses for its back-off.
void poll_listener(int epoll_fd, int listen_fd, std::uint64_t tag, bool polled);

class AcceptGuard {
 public:
  // `transport_name` prefixes every line ("tcp transport: ..."); `log` may
  // be empty. `handshake_connection_bytes`: the memory the transport lets
  // one connection hold during its hand-shake (tcp:
  // k_tcp_handshake_connection_bytes), charged against
  // AcceptLimits::max_handshake_bytes; 0: not charged.
  AcceptGuard(const AcceptLimits& limits, std::string transport_name, std::size_t listeners,
              std::function<void(std::string_view)> log, std::uint64_t handshake_connection_bytes = 0);

  // accept() on listener `listener` (named `listener_name` in the line)
  // failed with `err`. Returns true when the caller must stop polling the
  // listener until resume_due() names it: every error except EINTR, EAGAIN
  // and ECONNABORTED (which the caller retries or ends its loop on). Logs
  // the failure and the pause (rate-limited).
  bool accept_failed(std::size_t listener, int err, std::string_view listener_name, std::int64_t now_ns);
  // accept() succeeded on the listener: its back-off starts again from the initial value.
  void accepted(std::size_t listener);

  // A connection `id` from `from` accepted on `listener`: true when it may
  // start its hand-shake (counted from now on, its deadlines running);
  // false when a cap is reached (the listener's counts, or the memory of all
  // hand-shakes on all listeners, max_handshake_bytes): the caller closes it
  // at once. The refusal is logged here (rate-limited), naming `from`.
  bool admit(std::size_t listener, std::uint64_t id, std::string_view from, std::int64_t now_ns);
  // Bytes arrived on `id` during its hand-shake: its idle deadline moves.
  void activity(std::uint64_t id, std::int64_t now_ns);
  // `id`'s hand-shake is complete: no deadline any more; it stays counted
  // against max_connections_per_listener until closed().
  void handshake_done(std::uint64_t id);
  // `id` is closed. Unknown ids (connections this side opened) are ignored.
  void closed(std::uint64_t id);
  bool handshaking(std::uint64_t id) const { return handshaking_.contains(id); }

  // Connections whose hand-shake deadline or idle deadline has passed, with
  // the reason for the caller's log and close. Logged here (one
  // rate-limited line for all of them); they are no longer counted as in
  // their hand-shake (the caller closes them and calls closed()).
  std::vector<std::pair<std::uint64_t, std::string>> expired(std::int64_t now_ns);
  // Paused listeners whose pause has ended: the caller polls them again.
  std::vector<std::size_t> resume_due(std::int64_t now_ns);
  // Both at once, for a transport's progress loop: close(id) for each expired
  // connection, resume(listener) for each listener whose back-off ended.
  void service(std::int64_t now_ns, const std::function<void(std::uint64_t)>& close,
               const std::function<void(std::size_t)>& resume);
  // Milliseconds until the next deadline or pause end (rounded up, at least
  // 0), or -1 when nothing is due: epoll_wait's timeout.
  int wait_ms(std::int64_t now_ns) const;

  // A line (without the "<name> transport: " prefix, which is added) about
  // a connection still in its hand-shake that failed (a bad packet, a wrong
  // proof, EOF): rate-limited like the rest, so a flood of garbage cannot
  // flood the log either. `reason`: a short fixed text ("second challenge",
  // never an address) under which a suppressed failure is counted in the
  // next line (base::RateLimitedLog::line_suffix).
  void log_handshake_failure(const std::string& line, std::int64_t now_ns, std::string_view reason = {});

  std::size_t open_connections(std::size_t listener) const { return listeners_[listener].open; }
  std::size_t handshaking_connections(std::size_t listener) const { return listeners_[listener].handshaking; }
  // The memory charged to the connections in their hand-shake on all listeners.
  std::uint64_t handshake_bytes() const { return handshaking_.size() * handshake_connection_bytes_; }

 private:
  struct Listener {
    std::size_t open = 0;         // admitted and not closed
    std::size_t handshaking = 0;  // of them, still in their hand-shake
    bool paused = false;
    std::int64_t resume_ns = 0;
    std::uint32_t backoff_ms = 0;  // the next pause; 0: the initial one
  };
  struct Handshake {
    std::int64_t deadline_ns = 0;  // accept + handshake_deadline_ms
    std::int64_t last_rx_ns = 0;
    std::string from;
  };
  void emit(base::RateLimitedLog& limit, const std::string& line, std::int64_t now_ns, std::string_view reason);
  std::int64_t due_ns(const Handshake& h) const;

  static constexpr std::int64_t k_never = std::numeric_limits<std::int64_t>::max();
  AcceptLimits limits_;
  std::uint64_t handshake_connection_bytes_ = 0;
  std::string name_;
  std::function<void(std::string_view)> log_;
  std::vector<Listener> listeners_;
  std::unordered_map<std::uint64_t, std::size_t> open_;  // id -> listener
  std::unordered_map<std::uint64_t, Handshake> handshaking_;
  std::int64_t next_check_ns_ = k_never;  // no deadline passes before it (may be early, never late)
  base::RateLimitedLog refused_log_;
  base::RateLimitedLog expired_log_;
  base::RateLimitedLog failed_log_;
  base::RateLimitedLog accept_error_log_;
};

}  // namespace sluice::transport
