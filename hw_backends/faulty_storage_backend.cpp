#include "hw_backends/faulty_storage_backend.hpp"

#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "core/proto/crc32c.hpp"

namespace sluice::hw {

namespace {

bool probability(double p) { return p >= 0.0 && p <= 1.0; }

void flip_bit(std::span<std::byte> bytes, Rng& rng) {
  const std::uint64_t bit = rng.uniform(bytes.size() * 8);
  bytes[bit / 8] ^= static_cast<std::byte>(1u << (bit % 8));
}

}  // namespace

Status FaultyStorageBackend::check(const StorageFaultConfig& f) {
  if (!probability(f.error_probability) || !probability(f.torn_write_probability) ||
      !probability(f.read_flip_probability) || !probability(f.rest_flip_probability)) {
    return error(StatusCode::invalid_argument, "faulty storage backend: every fault probability must be in [0, 1]");
  }
  return ok_status();
}

Result<std::unique_ptr<FaultyStorageBackend>> FaultyStorageBackend::create(std::unique_ptr<StorageBackend> inner,
                                                                           StorageFaultConfig faults,
                                                                           std::uint64_t seed) {
  if (!inner) return error(StatusCode::invalid_argument, "faulty storage backend: no inner backend");
  if (Status s = check(faults); !s.ok()) return s;
  std::unique_ptr<FaultyStorageBackend> b(new FaultyStorageBackend(std::move(inner), faults, seed));
  if (Status s = b->open_fds(); !s.ok()) return s;
  return b;
}

Status FaultyStorageBackend::open_fds() {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  timer_fd_ = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);  // steady_clock's clock on Linux
  if (epoll_fd_ < 0 || timer_fd_ < 0) {
    return error(StatusCode::io_error, "faulty storage backend: epoll/timerfd: " + std::string(std::strerror(errno)));
  }
  for (int fd : {inner().completion_fd(), timer_fd_}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      return error(StatusCode::io_error, "faulty storage backend: epoll_ctl: " + std::string(std::strerror(errno)));
    }
  }
  return ok_status();
}

FaultyStorageBackend::FaultyStorageBackend(std::unique_ptr<StorageBackend> inner, StorageFaultConfig faults,
                                           std::uint64_t seed)
    : StorageBackendWrapper(std::move(inner)),
      name_("faulty(" + std::string(this->inner().name()) + ")"),
      faults_(faults),
      rng_(seed) {}

// The wrapped backend would be destroyed last (with the base), after pending_
// freed the copies that rest-flipped writes still write from: drop it first.
FaultyStorageBackend::~FaultyStorageBackend() {
  destroy_inner();
  for (int fd : {epoll_fd_, timer_fd_}) {
    if (fd >= 0) ::close(fd);
  }
}

Status FaultyStorageBackend::set_slowdown(double factor) {
  if (!std::isfinite(factor) || factor < 1.0) {
    return error(StatusCode::invalid_argument,
                 "faulty storage backend: slowdown factor " + std::to_string(factor) + " must be finite and >= 1");
  }
  std::lock_guard<std::mutex> lock(mu_);
  slowdown_ = factor;
  if (factor == 1.0 && !held_.empty()) arm_timer(Clock::now());  // wake the caller to take them
  return ok_status();
}

std::size_t FaultyStorageBackend::held() const {
  std::lock_guard<std::mutex> lock(mu_);
  return held_.size();
}

void FaultyStorageBackend::arm_timer(Clock::time_point due) {
  itimerspec spec{};
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(due.time_since_epoch()).count();
  // An absolute 0 would disarm: a due time in the past fires at once all the same.
  const std::int64_t at = std::max<std::int64_t>(ns, 1);
  spec.it_value.tv_sec = static_cast<time_t>(at / 1'000'000'000);
  spec.it_value.tv_nsec = static_cast<long>(at % 1'000'000'000);
  ::timerfd_settime(timer_fd_, TFD_TIMER_ABSTIME, &spec, nullptr);
}

void FaultyStorageBackend::hold_and_release(std::vector<StorageCompletion>& out, std::size_t first,
                                            std::size_t max_completions) {
  std::uint64_t expirations = 0;
  [[maybe_unused]] const auto r = ::read(timer_fd_, &expirations, sizeof expirations);  // reset its readability
  if (submitted_.empty() && held_.empty()) return;
  const Clock::time_point now = Clock::now();
  std::size_t kept = first;
  for (std::size_t i = first; i < out.size(); ++i) {
    auto s = submitted_.find(out[i].cookie);
    if (s != submitted_.end() && slowdown_ > 1.0) {
      const auto service = now - s->second;
      const auto extra = std::chrono::duration_cast<Clock::duration>(service * (slowdown_ - 1.0));
      held_.emplace(now + extra, std::move(out[i]));
      ++stats_.slowed;
    } else {
      if (kept != i) out[kept] = std::move(out[i]);
      ++kept;
    }
    if (s != submitted_.end()) submitted_.erase(s);
  }
  out.resize(kept);
  while (!held_.empty() && out.size() - first < max_completions && (slowdown_ == 1.0 || held_.begin()->first <= now)) {
    out.push_back(std::move(held_.begin()->second));
    held_.erase(held_.begin());
  }
  if (!held_.empty()) arm_timer(out.size() - first < max_completions ? held_.begin()->first : now);
}

Status FaultyStorageBackend::set_faults(const StorageFaultConfig& faults) {
  if (Status s = check(faults); !s.ok()) return s;
  std::lock_guard<std::mutex> lock(mu_);
  faults_ = faults;
  return ok_status();
}

StorageFaultStats FaultyStorageBackend::fault_stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

FaultyStorageBackend::Fate FaultyStorageBackend::draw(const StorageRequest& request) {
  const bool read = request.op == StorageOp::read;
  const bool write = request.op == StorageOp::write;
  if ((!read && !write) || request.buffer.empty()) return Fate::none;
  // One uniform draw split over the fates, so probabilities add up as written.
  double u = rng_.uniform01();
  if (u < faults_.error_probability) return Fate::error;
  u -= faults_.error_probability;
  if (write) {
    if (u < faults_.torn_write_probability) return Fate::torn;
    u -= faults_.torn_write_probability;
    if (u < faults_.rest_flip_probability) return Fate::rest_flip;
  } else if (u < faults_.read_flip_probability) {
    return Fate::read_flip;
  }
  return Fate::none;
}

Status FaultyStorageBackend::submit(const StorageRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
  if (slowdown_ > 1.0) {
    Status st = submit_fated(request);
    if (st.ok()) submitted_[request.cookie] = Clock::now();
    return st;
  }
  return submit_fated(request);
}

Status FaultyStorageBackend::submit_fated(const StorageRequest& request) {
  const Fate fate = pending_.contains(request.cookie) ? Fate::none : draw(request);
  if (fate == Fate::none) return inner().submit(request);
  StorageRequest sent = request;
  Pending p;
  p.fate = fate;
  p.buffer = request.buffer;
  switch (fate) {
    case Fate::none:
    case Fate::read_flip: break;
    case Fate::error:
      // A failed write leaves the object as it was: ask the inner backend
      // something harmless so that its completion (and fd) carry the failure.
      if (request.op == StorageOp::write) {
        sent.op = StorageOp::stat;
        sent.buffer = {};
      }
      break;
    case Fate::torn: {
      // Whole O_DIRECT blocks (the drive's atomic unit), fewer than the request has.
      const std::uint64_t blocks = (request.buffer.size() - 1) / k_direct_io_alignment_bytes;
      const std::uint64_t kept = blocks == 0 ? 0 : rng_.uniform(blocks + 1) * k_direct_io_alignment_bytes;
      p.kept = kept;
      if (kept == 0) {
        sent.op = StorageOp::stat;
        sent.buffer = {};
      } else {
        sent.buffer = request.buffer.subspan(0, kept);
      }
      break;
    }
    case Fate::rest_flip: {
      const std::size_t size = request.buffer.size();
      const std::size_t rounded =
          (size + k_direct_io_alignment_bytes - 1) / k_direct_io_alignment_bytes * k_direct_io_alignment_bytes;
      void* raw = std::aligned_alloc(k_direct_io_alignment_bytes, rounded);
      if (raw == nullptr) return inner().submit(request);  // no memory for the copy: no fault this time
      p.copy = std::unique_ptr<std::byte, void (*)(void*)>(static_cast<std::byte*>(raw), &std::free);
      std::memcpy(p.copy.get(), request.buffer.data(), size);
      p.asked_crc32c = proto::crc32c(request.buffer);
      std::span<std::byte> flipped(p.copy.get(), size);
      flip_bit(flipped, rng_);
      sent.buffer = flipped;
      break;
    }
  }
  Status s = inner().submit(sent);
  if (!s.ok()) return s;  // nothing was injected
  pending_.emplace(request.cookie, std::move(p));
  return ok_status();
}

std::size_t FaultyStorageBackend::poll(std::vector<StorageCompletion>& out, std::size_t max_completions) {
  const std::size_t first = out.size();
  inner().poll(out, max_completions);
  std::lock_guard<std::mutex> lock(mu_);
  for (std::size_t i = first; i < out.size(); ++i) {
    StorageCompletion& c = out[i];
    auto it = pending_.find(c.cookie);
    if (it == pending_.end()) continue;
    Pending& p = it->second;
    switch (p.fate) {
      case Fate::none: break;
      case Fate::error:
        c.status = error(StatusCode::io_error, "injected I/O error (faulty storage backend)");
        c.bytes = 0;
        c.crc_valid = false;
        ++stats_.errors;
        break;
      case Fate::torn:
        c.status =
            error(StatusCode::io_error, "injected torn write: " + std::to_string(c.status.ok() ? p.kept : 0) + " of " +
                                            std::to_string(p.buffer.size()) + " bytes reached the object");
        c.bytes = 0;
        c.crc_valid = false;
        ++stats_.torn_writes;
        break;
      case Fate::read_flip:
        if (c.status.ok() && c.bytes > 0) {
          flip_bit(p.buffer.subspan(0, c.bytes), rng_);
          ++stats_.read_flips;
        }
        break;
      case Fate::rest_flip:
        if (c.status.ok()) {
          c.crc32c = p.asked_crc32c;  // the drive claims it stored what it was given
          ++stats_.rest_flips;
        }
        break;
    }
    pending_.erase(it);
  }
  hold_and_release(out, first, max_completions);
  return out.size() - first;
}

}  // namespace sluice::hw
