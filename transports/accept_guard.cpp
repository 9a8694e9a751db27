#include "transports/accept_guard.hpp"

#include <sys/epoll.h>

#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace sluice::transport {
namespace {

constexpr std::int64_t k_ns_per_ms = 1'000'000;

std::string accept_errno_text(int err) {
  const char* name = nullptr;
  switch (err) {
    case EMFILE: name = "EMFILE"; break;
    case ENFILE: name = "ENFILE"; break;
    case ENOBUFS: name = "ENOBUFS"; break;
    case ENOMEM: name = "ENOMEM"; break;
    default: break;
  }
  char buffer[128] = {};
  // The GNU strerror_r returns the text (maybe not in buffer); thread-safe, unlike strerror.
  const std::string text = ::strerror_r(err, buffer, sizeof buffer);
  return text + (name != nullptr ? std::string(" (") + name + ")" : " (errno " + std::to_string(err) + ")");
}

Status check_count(std::string_view transport, const char* field, std::uint32_t value) {
  if (value >= 1) return ok_status();
  return error(StatusCode::invalid_argument,
               std::string(transport) + " transport: accept." + field + " " + std::to_string(value) + " must be >= 1");
}

Status check_ms(std::string_view transport, const char* field, std::uint32_t value) {
  if (value >= 1 && value <= k_max_accept_limit_ms) return ok_status();
  return error(StatusCode::invalid_argument, std::string(transport) + " transport: accept." + field + " " +
                                                 std::to_string(value) + " outside 1..k_max_accept_limit_ms " +
                                                 std::to_string(k_max_accept_limit_ms));
}

}  // namespace

Status check_accept_limits(const TransportConfig& config, std::string_view transport_name) {
  const AcceptLimits& a = config.accept;
  for (const auto& [field, value] : {std::pair{"max_connections_per_listener", a.max_connections_per_listener},
                                     std::pair{"max_handshaking_per_listener", a.max_handshaking_per_listener},
                                     std::pair{"log_every_events", a.log_every_events}}) {
    if (Status st = check_count(transport_name, field, value); !st.ok()) return st;
  }
  for (const auto& [field, value] :
       {std::pair{"handshake_deadline_ms", a.handshake_deadline_ms},
        std::pair{"handshake_idle_ms", a.handshake_idle_ms},
        std::pair{"accept_backoff_initial_ms", a.accept_backoff_initial_ms},
        std::pair{"accept_backoff_max_ms", a.accept_backoff_max_ms}, std::pair{"log_interval_ms", a.log_interval_ms}}) {
    if (Status st = check_ms(transport_name, field, value); !st.ok()) return st;
  }
  if (a.max_handshake_bytes == 0) {
    return error(StatusCode::invalid_argument,
                 std::string(transport_name) + " transport: accept.max_handshake_bytes 0 must be >= 1");
  }
  if (a.max_handshaking_per_listener > a.max_connections_per_listener) {
    return error(StatusCode::invalid_argument,
                 std::string(transport_name) + " transport: accept.max_handshaking_per_listener " +
                     std::to_string(a.max_handshaking_per_listener) + " over accept.max_connections_per_listener " +
                     std::to_string(a.max_connections_per_listener));
  }
  if (a.accept_backoff_initial_ms > a.accept_backoff_max_ms) {
    return error(StatusCode::invalid_argument,
                 std::string(transport_name) + " transport: accept.accept_backoff_initial_ms " +
                     std::to_string(a.accept_backoff_initial_ms) + " over accept.accept_backoff_max_ms " +
                     std::to_string(a.accept_backoff_max_ms));
  }
  return ok_status();
}

std::int64_t monotonic_now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

AcceptGuard::AcceptGuard(const AcceptLimits& limits, std::string transport_name, std::size_t listeners,
                         std::function<void(std::string_view)> log, std::uint64_t handshake_connection_bytes)
    : limits_(limits),
      handshake_connection_bytes_(handshake_connection_bytes),
      name_(std::move(transport_name)),
      log_(std::move(log)),
      listeners_(listeners),
      refused_log_(limits.log_every_events, std::int64_t{limits.log_interval_ms} * k_ns_per_ms),
      expired_log_(limits.log_every_events, std::int64_t{limits.log_interval_ms} * k_ns_per_ms),
      failed_log_(limits.log_every_events, std::int64_t{limits.log_interval_ms} * k_ns_per_ms),
      accept_error_log_(limits.log_every_events, std::int64_t{limits.log_interval_ms} * k_ns_per_ms) {}

void AcceptGuard::emit(base::RateLimitedLog& limit, const std::string& line, std::int64_t now_ns,
                       std::string_view reason) {
  if (!limit.admit(now_ns, reason) || !log_) return;
  log_(name_ + " transport: " + line + limit.line_suffix());
}

bool AcceptGuard::accept_failed(std::size_t listener, int err, std::string_view listener_name, std::int64_t now_ns) {
  if (err == EINTR || err == EAGAIN || err == EWOULDBLOCK || err == ECONNABORTED) return false;
  Listener& l = listeners_[listener];
  const std::uint32_t pause_ms = l.backoff_ms == 0 ? limits_.accept_backoff_initial_ms : l.backoff_ms;
  l.backoff_ms =
      static_cast<std::uint32_t>(std::min<std::uint64_t>(std::uint64_t{pause_ms} * 2, limits_.accept_backoff_max_ms));
  l.paused = true;
  l.resume_ns = now_ns + std::int64_t{pause_ms} * k_ns_per_ms;
  emit(accept_error_log_,
       "accept on " + std::string(listener_name) + ": " + accept_errno_text(err) + "; not accepting on it for " +
           std::to_string(pause_ms) + " ms (connections wait in the kernel's backlog; accept_backoff_initial_ms " +
           std::to_string(limits_.accept_backoff_initial_ms) + ", doubling to accept_backoff_max_ms " +
           std::to_string(limits_.accept_backoff_max_ms) + ")",
       now_ns, accept_errno_text(err));
  return true;
}

void AcceptGuard::accepted(std::size_t listener) { listeners_[listener].backoff_ms = 0; }

bool AcceptGuard::admit(std::size_t listener, std::uint64_t id, std::string_view from, std::int64_t now_ns) {
  Listener& l = listeners_[listener];
  const char* cap = nullptr;
  std::uint64_t limit = 0;
  if (l.open >= limits_.max_connections_per_listener) {
    cap = "max_connections_per_listener";
    limit = limits_.max_connections_per_listener;
  } else if (l.handshaking >= limits_.max_handshaking_per_listener) {
    cap = "max_handshaking_per_listener";
    limit = limits_.max_handshaking_per_listener;
  } else if (handshake_bytes() + handshake_connection_bytes_ > limits_.max_handshake_bytes) {
    cap = "max_handshake_bytes";
    limit = limits_.max_handshake_bytes;
  }
  if (cap != nullptr) {
    emit(refused_log_,
         "refused a connection from " + std::string(from) + " on listener " + std::to_string(listener) + ": " + cap +
             " (" + std::to_string(limit) + ") reached (" + std::to_string(l.open) + " open, " +
             std::to_string(l.handshaking) + " in their hand-shake; " + std::to_string(handshake_bytes()) +
             " bytes held by hand-shakes on all listeners)",
         now_ns, cap);
    return false;
  }
  ++l.open;
  ++l.handshaking;
  open_.emplace(id, listener);
  Handshake h{now_ns + std::int64_t{limits_.handshake_deadline_ms} * k_ns_per_ms, now_ns, std::string(from)};
  next_check_ns_ = std::min(next_check_ns_, due_ns(h));
  handshaking_.emplace(id, std::move(h));
  return true;
}

std::int64_t AcceptGuard::due_ns(const Handshake& h) const {
  return std::min(h.deadline_ns, h.last_rx_ns + std::int64_t{limits_.handshake_idle_ms} * k_ns_per_ms);
}

void AcceptGuard::activity(std::uint64_t id, std::int64_t now_ns) {
  // next_check_ns_ stays: it may now be early, which costs one empty sweep.
  if (auto it = handshaking_.find(id); it != handshaking_.end()) it->second.last_rx_ns = now_ns;
}

void AcceptGuard::handshake_done(std::uint64_t id) {
  auto it = handshaking_.find(id);
  if (it == handshaking_.end()) return;
  handshaking_.erase(it);
  if (auto open = open_.find(id); open != open_.end()) --listeners_[open->second].handshaking;
}

void AcceptGuard::closed(std::uint64_t id) {
  handshake_done(id);
  auto it = open_.find(id);
  if (it == open_.end()) return;
  --listeners_[it->second].open;
  open_.erase(it);
}

std::vector<std::pair<std::uint64_t, std::string>> AcceptGuard::expired(std::int64_t now_ns) {
  std::vector<std::pair<std::uint64_t, std::string>> out;
  if (now_ns < next_check_ns_) return out;
  next_check_ns_ = k_never;
  std::vector<std::pair<std::uint64_t, const char*>> limit_of;  // which limit each missed
  for (const auto& [id, h] : handshaking_) {
    const std::int64_t idle_end = h.last_rx_ns + std::int64_t{limits_.handshake_idle_ms} * k_ns_per_ms;
    if (now_ns >= h.deadline_ns) {
      out.emplace_back(id, "connection from " + h.from + " did not complete its hand-shake within " +
                               std::to_string(limits_.handshake_deadline_ms) + " ms (handshake_deadline_ms)");
      limit_of.emplace_back(id, "handshake_deadline_ms");
    } else if (now_ns >= idle_end) {
      out.emplace_back(id, "connection from " + h.from + " sent nothing for " +
                               std::to_string(limits_.handshake_idle_ms) +
                               " ms during its hand-shake (handshake_idle_ms)");
      limit_of.emplace_back(id, "handshake_idle_ms");
    } else {
      next_check_ns_ = std::min(next_check_ns_, due_ns(h));
    }
  }
  std::sort(out.begin(), out.end());  // close in accept order: a reproducible log
  std::sort(limit_of.begin(), limit_of.end());
  for (std::size_t i = 0; i < out.size(); ++i) {
    handshake_done(out[i].first);
    emit(expired_log_, "closing a " + out[i].second, now_ns, limit_of[i].second);
  }
  return out;
}

std::vector<std::size_t> AcceptGuard::resume_due(std::int64_t now_ns) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < listeners_.size(); ++i) {
    if (listeners_[i].paused && now_ns >= listeners_[i].resume_ns) {
      listeners_[i].paused = false;
      out.push_back(i);
    }
  }
  return out;
}

int AcceptGuard::wait_ms(std::int64_t now_ns) const {
  std::int64_t due = next_check_ns_;
  for (const Listener& l : listeners_) {
    if (l.paused) due = std::min(due, l.resume_ns);
  }
  if (due == k_never) return -1;
  if (due <= now_ns) return 0;
  const std::int64_t ms = (due - now_ns + k_ns_per_ms - 1) / k_ns_per_ms;
  return static_cast<int>(std::min<std::int64_t>(ms, std::int64_t{k_max_accept_limit_ms}));
}

void AcceptGuard::log_handshake_failure(const std::string& line, std::int64_t now_ns, std::string_view reason) {
  emit(failed_log_, line, now_ns, reason);
}

void poll_listener(int epoll_fd, int listen_fd, std::uint64_t tag, bool polled) {
  if (!polled) {
    ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, listen_fd, nullptr);
    return;
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = tag;
  ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listen_fd, &ev);
}

void AcceptGuard::service(std::int64_t now_ns, const std::function<void(std::uint64_t)>& close,
                          const std::function<void(std::size_t)>& resume) {
  for (const auto& [id, why] : expired(now_ns)) close(id);  // logged here (rate-limited)
  for (std::size_t listener : resume_due(now_ns)) resume(listener);
}

}  // namespace sluice::transport
