#include "transports/progress_loop.hpp"

#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

namespace sluice::transport {

ProgressLoop::ProgressLoop(std::string what, std::mutex& mu, std::condition_variable& drained)
    : what_(std::move(what)), mu_(mu), drained_(drained) {}

ProgressLoop::~ProgressLoop() {
  stop();
  for (int fd : {epoll_fd_, wake_fd_}) {
    if (fd >= 0) ::close(fd);
  }
}

Status ProgressLoop::open() {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll_fd_ < 0 || wake_fd_ < 0) {
    return error(StatusCode::io_error, what_ + ": epoll/eventfd: " + std::strerror(errno));
  }
  watch(wake_fd_, k_wake_id);
  return ok_status();
}

void ProgressLoop::watch(int fd, std::uint64_t id, std::uint32_t events) const {
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = id;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
}

void ProgressLoop::start(const std::string& thread_name, Hooks hooks) {
  hooks_ = std::move(hooks);
  thread_ = std::thread([this, name = thread_name.substr(0, 15)] {
    ::pthread_setname_np(::pthread_self(), name.c_str());
    run();
  });
}

void ProgressLoop::wake() const {
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto n = ::write(wake_fd_, &one, sizeof one);
}

void ProgressLoop::stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  drained_.notify_all();
  if (thread_.joinable()) {
    wake();
    thread_.join();
  }
}

void ProgressLoop::run() {
  std::array<epoll_event, k_batch> ready{};
  while (!stop_) {
    const int n = ::epoll_wait(epoll_fd_, ready.data(), k_batch, hooks_.wait_ms());
    if (n < 0) {
      if (errno == EINTR) continue;
      if (hooks_.log) hooks_.log(what_ + ": epoll_wait failed: " + std::strerror(errno) + "; progress thread stops");
      return;
    }
    if (n == 0 && hooks_.skip_idle_turn && hooks_.skip_idle_turn()) continue;
    std::unique_lock lock(mu_);
    drained_.wait(lock, [this] { return stop_ || hooks_.has_room(); });
    if (stop_) return;
    for (int i = 0; i < n; ++i) {
      const epoll_event& e = ready[static_cast<std::size_t>(i)];
      if (e.data.u64 == k_wake_id) {
        std::uint64_t count = 0;
        [[maybe_unused]] const auto r = ::read(wake_fd_, &count, sizeof count);
      } else {
        hooks_.ready(e.data.u64, e.events);
      }
    }
    hooks_.after_turn();
  }
}

}  // namespace sluice::transport
