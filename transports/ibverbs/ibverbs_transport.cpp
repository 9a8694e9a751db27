#include "transports/ibverbs/ibverbs_transport.hpp"

#include "transports/ibverbs/ibverbs_device.hpp"

#if SLUICE_HAVE_IBVERBS
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "transports/ibverbs/ibverbs_address.hpp"
#include "transports/ibverbs/ibverbs_transport_impl.hpp"

namespace sluice::transport::ibverbs {
namespace detail {
namespace {

std::string errno_text(int err) { return std::string(std::strerror(err)) + " (errno " + std::to_string(err) + ")"; }

Status set_nonblocking(int fd, const char* what) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    return error(StatusCode::io_error,
                 std::string("ibverbs transport: O_NONBLOCK on ") + what + ": " + errno_text(errno));
  }
  return ok_status();
}

}  // namespace

IbverbsTransportImpl::IbverbsTransportImpl(TransportConfig config) : config_(std::move(config)) {
  Result<std::vector<DeviceInfo>> devices = discover_devices();
  const std::vector<DeviceInfo> none;
  caps_ = declare_capabilities(devices.ok() ? *devices : none, detect_platform());
}

// ---- set-up and tear-down -------------------------------------------------

Status IbverbsTransportImpl::open() {
  if (config_.rail_addresses.empty() || config_.rail_addresses.size() > k_max_rails) {
    return error(StatusCode::invalid_argument, "ibverbs transport: " + std::to_string(config_.rail_addresses.size()) +
                                                   " rail addresses; need 1.." + std::to_string(k_max_rails));
  }
  if (config_.connections_per_rail == 0 || config_.connections_per_rail > k_max_connections_per_rail) {
    return error(StatusCode::invalid_argument, "ibverbs transport: connections_per_rail " +
                                                   std::to_string(config_.connections_per_rail) + " outside 1.." +
                                                   std::to_string(k_max_connections_per_rail));
  }
  if (config_.max_pending_ops == 0) {
    return error(StatusCode::invalid_argument, "ibverbs transport: max_pending_ops must be > 0");
  }
  // Checked like every transport's, then unused: RC QPs have no socket
  // buffers (ibverbs_transport.hpp).
  if (Status st = check_socket_buffer_bytes(config_, "ibverbs"); !st.ok()) return st;
  if (!config_.netns.empty()) {
    // rdma_cm ids take the namespace of the thread that makes them, and an
    // RDMA device belongs to one namespace; placing them is not done here.
    return error(StatusCode::unavailable, "ibverbs transport: a network namespace (" + config_.netns +
                                              ") is not supported; use tcp for a cluster emulated in namespaces");
  }
  for (const std::string& text : config_.rail_addresses) {
    Result<sockaddr_in> address = parse_rail_address(text);
    if (!address.ok()) return address.status();
    rail_addresses_.push_back(*address);
  }
  backend_ = std::make_unique<VerbsRegistrationBackend>(devices_);
  registrations_ = std::make_unique<RegistrationCache>(*backend_, k_ibv_max_registrations);
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll_fd_ < 0 || wake_fd_ < 0) {
    return error(StatusCode::io_error, "ibverbs transport: epoll/eventfd: " + errno_text(errno));
  }
  if (!events_.valid()) {
    return error(StatusCode::io_error, "ibverbs transport: eventfd: " + errno_text(events_.open_errno()));
  }
  cm_channel_ = rdma_create_event_channel();
  if (cm_channel_ == nullptr) {
    return error(StatusCode::unavailable, "ibverbs transport: rdma_create_event_channel: " + errno_text(errno));
  }
  if (Status st = set_nonblocking(cm_channel_->fd, "the rdma_cm event channel"); !st.ok()) return st;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = k_wake_tag;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  ev.data.u64 = k_cm_tag;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, cm_channel_->fd, &ev);

  for (std::uint32_t rail = 0; rail < rail_addresses_.size(); ++rail) {
    rdma_cm_id* id = nullptr;
    // The listening id's context is 1 + rail (below k_first_connection_id).
    if (rdma_create_id(cm_channel_, &id, reinterpret_cast<void*>(std::uintptr_t{1} + rail), RDMA_PS_TCP) != 0) {
      return error(StatusCode::unavailable, "ibverbs transport: rdma_create_id: " + errno_text(errno));
    }
    listen_ids_.push_back(id);
    sockaddr_in& address = rail_addresses_[rail];
    if (rdma_bind_addr(id, reinterpret_cast<sockaddr*>(&address)) != 0) {
      return error(StatusCode::unavailable, "ibverbs transport: rail " + std::to_string(rail) + " address " +
                                                config_.rail_addresses[rail] +
                                                ": rdma_bind_addr: " + errno_text(errno));
    }
    if (id->verbs == nullptr) {
      return error(StatusCode::unavailable, "ibverbs transport: rail " + std::to_string(rail) + " address " +
                                                config_.rail_addresses[rail] +
                                                " is not the address of an RDMA device's netdev");
    }
    Result<Device*> device = device_for(id->verbs);
    if (!device.ok()) return device.status();
    rail_device_.push_back((*device)->index);
    if (rdma_listen(id, k_ibv_listen_backlog) != 0) {
      return error(StatusCode::unavailable,
                   "ibverbs transport: rdma_listen on " + config_.rail_addresses[rail] + ": " + errno_text(errno));
    }
    address.sin_port = rdma_get_src_port(id);
    listen_address_.rails.push_back(format_rail_address(address));
  }
  loop_ = std::thread([this] { run_loop(); });
  return ok_status();
}

IbverbsTransportImpl::~IbverbsTransportImpl() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  events_drained_.notify_all();
  if (loop_.joinable()) {
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto n = ::write(wake_fd_, &one, sizeof one);
    loop_.join();
  }
  std::lock_guard lock(mu_);
  std::vector<std::uint64_t> ids;
  for (const auto& [id, c] : connections_) ids.push_back(id);
  for (std::uint64_t id : ids) destroy_connection(id);
  for (rdma_cm_id* id : listen_ids_) rdma_destroy_id(id);
  regions_.clear();
  revoking_.clear();
  registrations_.reset();  // deregisters what is left, before the PDs go
  for (auto& d : devices_) {
    if (d->cq != nullptr) ibv_destroy_cq(d->cq);
    if (d->channel != nullptr) ibv_destroy_comp_channel(d->channel);
    if (d->pd != nullptr) ibv_dealloc_pd(d->pd);
  }
  if (cm_channel_ != nullptr) rdma_destroy_event_channel(cm_channel_);
  for (int fd : {epoll_fd_, wake_fd_}) {
    if (fd >= 0) ::close(fd);
  }
}

void IbverbsTransportImpl::log(const std::string& line) const {
  if (config_.log) config_.log(line);
}

// ---- progress thread --------------------------------------------------------

void IbverbsTransportImpl::run_loop() {
  std::array<epoll_event, k_epoll_batch> ready{};
  while (!stop_) {
    const int n = ::epoll_wait(epoll_fd_, ready.data(), k_epoll_batch, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      log("ibverbs transport: epoll_wait failed: " + errno_text(errno) + "; progress thread stops");
      return;
    }
    std::unique_lock lock(mu_);
    events_drained_.wait(lock, [this] { return stop_ || events_.size() < k_ibv_max_queued_events; });
    if (stop_) return;
    for (int i = 0; i < n; ++i) {
      const std::uint64_t tag = ready[static_cast<std::size_t>(i)].data.u64;
      if (tag == k_wake_tag) {
        std::uint64_t count = 0;
        [[maybe_unused]] const auto r = ::read(wake_fd_, &count, sizeof count);
      } else if (tag == k_cm_tag) {
        handle_cm_events();
      } else if (tag - k_first_device_tag < devices_.size()) {
        Device& d = *devices_[tag - k_first_device_tag];
        ibv_cq* cq = nullptr;
        void* context = nullptr;
        while (ibv_get_cq_event(d.channel, &cq, &context) == 0) ibv_ack_cq_events(cq, 1);
        // Re-arm before draining so a completion arriving in between is not missed.
        ibv_req_notify_cq(d.cq, 0);
        drain_completions(d);
      }
    }
  }
}

void IbverbsTransportImpl::push_event(TransportEvent event) { events_.push(std::move(event)); }

std::size_t IbverbsTransportImpl::poll(std::vector<TransportEvent>& out, std::size_t max_events) {
  std::lock_guard lock(mu_);
  // The caller's thread polls the CQs too: completions reach it without a
  // hand-off when it polls in a loop (the contract's non-blocking poll).
  if (events_.size() < max_events) {
    for (auto& d : devices_) drain_completions(*d);
  }
  const std::size_t n = events_.pop(out, std::min(max_events, k_max_poll_events));
  events_drained_.notify_all();
  return n;
}

Peer* IbverbsTransportImpl::live_peer(PeerId id) {
  auto it = peers_.find(id);
  return it == peers_.end() ? nullptr : it->second.get();
}

Connection* IbverbsTransportImpl::connection(std::uint64_t id) {
  auto it = connections_.find(id);
  return it == connections_.end() ? nullptr : it->second.get();
}

}  // namespace detail

Result<std::unique_ptr<IbverbsTransport>> make_ibverbs_transport(const TransportConfig& config) {
  if (Status probe = ibverbs_probe(); !probe.ok()) {
    return error(StatusCode::unavailable, "ibverbs transport unavailable: " + probe.message());
  }
  auto t = std::make_unique<detail::IbverbsTransportImpl>(config);
  if (Status st = t->open(); !st.ok()) return st;
  return std::unique_ptr<IbverbsTransport>(std::move(t));
}

}  // namespace sluice::transport::ibverbs

#else  // built without rdma-core

namespace sluice::transport::ibverbs {

Result<std::unique_ptr<IbverbsTransport>> make_ibverbs_transport(const TransportConfig&) {
  return error(StatusCode::unavailable, "ibverbs transport unavailable: " + std::string(build_unavailable_reason()));
}

}  // namespace sluice::transport::ibverbs

#endif
