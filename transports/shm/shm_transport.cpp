#include "transports/shm/shm_transport.hpp"

#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "core/proto/codec.hpp"
#include "transports/shm/shm_os.hpp"
#include "transports/shm/shm_transport_impl.hpp"

namespace sluice::transport::shm {
namespace detail {
namespace {

// Distinguishes the transports of one process (with the pid: of one host).
std::atomic<std::uint64_t> g_next_instance{1};

template <typename T>
void put_head(TxItem& item, const T& value) {
  static_assert(sizeof(T) <= k_descriptor_bytes_max);
  std::memcpy(item.head.data(), &value, sizeof value);
  item.head_bytes = sizeof value;
}

}  // namespace

Channel::~Channel() {
  if (socket_fd >= 0) ::close(socket_fd);
  if (remote_doorbell_fd >= 0) ::close(remote_doorbell_fd);
  unmap_segment(segment, segment_bytes);
}

// ---- set-up and tear-down -------------------------------------------------

Status ShmTransport::open() {
  if (config_.rail_addresses.empty() || config_.rail_addresses.size() > k_max_rails) {
    return error(StatusCode::invalid_argument, "shm transport: " + std::to_string(config_.rail_addresses.size()) +
                                                   " rail addresses; need 1.." + std::to_string(k_max_rails));
  }
  if (config_.connections_per_rail == 0 || config_.connections_per_rail > k_max_connections_per_rail) {
    return error(StatusCode::invalid_argument, "shm transport: connections_per_rail " +
                                                   std::to_string(config_.connections_per_rail) + " outside 1.." +
                                                   std::to_string(k_max_connections_per_rail));
  }
  if (config_.max_pending_ops == 0) {
    return error(StatusCode::invalid_argument, "shm transport: max_pending_ops must be > 0");
  }
  // Checked like every transport's, then unused: shm moves no bulk byte
  // through a socket (shm_transport.hpp).
  if (Status st = check_socket_buffer_bytes(config_, "shm"); !st.ok()) return st;
  if (Status st = check_accept_limits(config_, "shm"); !st.ok()) return st;
  if (!config_.shared_secret.empty()) {
    // The contract: a transport that cannot authenticate refuses a secret
    // rather than ignore it.
    return error(StatusCode::unavailable,
                 "shm transport: shared_secret authentication is not implemented for shm; use tcp, or no secret "
                 "on a trusted host");
  }
  if (!config_.netns.empty()) {
    // shm peers share this host's memory and unix sockets; a network
    // namespace would separate nothing.
    return error(StatusCode::unavailable, "shm transport: a network namespace (" + config_.netns +
                                              ") does not apply to shared memory; use tcp between namespaces");
  }
  const auto pid = static_cast<std::uint64_t>(::getpid());
  instance_ = (pid << 32) | (g_next_instance.fetch_add(1) & 0xFFFFFFFFULL);
  probe_word_ = instance_ ^ 0x5EC0DE5EC0DE5EC0ULL;
  if (Status st = loop_.open(); !st.ok()) return st;
  if (!events_.valid()) {
    return error(StatusCode::io_error, "shm transport: eventfd: " + errno_text(events_.open_errno()));
  }
  for (std::uint32_t rail = 0; rail < config_.rail_addresses.size(); ++rail) {
    Result<std::string> name = parse_shm_address(config_.rail_addresses[rail]);
    if (!name.ok()) return name.status();
    if (*name == k_shm_auto_name) {
      *name = "sluice-shm-" + std::to_string(pid) + "-" + std::to_string(instance_ & 0xFFFFFFFFULL) + "-" +
              std::to_string(rail);
    }
    Result<int> fd = listen_abstract(*name);
    if (!fd.ok()) return fd.status();
    listen_fds_.push_back(*fd);
    listen_names_.push_back(*name);
    listen_address_.rails.push_back(std::string(k_shm_address_prefix) + *name);
    loop_.watch(*fd, 1 + rail);
  }
  loop_.start("shm:" + std::to_string(config_.local_id), loop_hooks());
  return ok_status();
}

ShmTransport::~ShmTransport() {
  loop_.stop();
  channels_.clear();  // closes sockets (peers see the hang-up) and unmaps
  dead_channels_.clear();
  for (int fd : listen_fds_) ::close(fd);
}

void ShmTransport::log(const std::string& line) const {
  if (config_.log) config_.log(line);
}

void ShmTransport::ring_doorbell(int fd) const {
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto n = ::write(fd, &one, sizeof one);
}

void ShmTransport::reap() { dead_channels_.clear(); }

Channel* ShmTransport::channel(std::uint64_t id) {
  auto it = channels_.find(id);
  return it == channels_.end() ? nullptr : it->second.get();
}

Peer* ShmTransport::live_peer(PeerId id) { return peers_.find(id); }

// ---- failures -------------------------------------------------------------------

void ShmTransport::close_channel(std::uint64_t id) {
  auto it = channels_.find(id);
  if (it == channels_.end()) return;
  guard_.closed(id);
  ::epoll_ctl(loop_.epoll_fd(), EPOLL_CTL_DEL, it->second->socket_fd, nullptr);
  it->second->tx.clear();
  dead_channels_.push_back(std::move(it->second));  // a record of its ring may be in use up the stack
  channels_.erase(it);
}

void ShmTransport::fail_channel(Channel& c, const std::string& why) {
  if (c.peer != 0 && live_peer(c.peer) != nullptr) {
    fail_peer(c.peer, why);
  } else if (guard_.handshaking(c.id)) {
    // An accepted channel still in its hand-shake: rate-limited (a flood).
    guard_.log_handshake_failure("closing channel from " + c.remote + ": " + why, monotonic_now_ns());
    close_channel(c.id);
  } else {
    log("shm transport: closing channel from " + c.remote + ": " + why);
    close_channel(c.id);
  }
}

void ShmTransport::fail_peer(PeerId id, const std::string& why) {
  std::unique_ptr<Peer> p = peers_.take(id);
  if (p == nullptr) return;
  const Status reason(StatusCode::unavailable, p->label + " lost: " + why);
  log("shm transport: " + reason.message());
  for (const auto& rail : p->rails) {
    for (std::uint64_t c : rail) close_channel(c);
  }
  for (std::uint64_t op_id : orphaned_ops(ops_, id)) complete_op(op_id, reason);
  push_event(PeerDown{id, p->remote_id, reason});
}

void ShmTransport::mark_up(Peer& p) {
  p.up = true;
  push_event(PeerUp{p.id, p.remote_id, p.accepted});
  for (const auto& rail : p.rails) {
    for (std::uint64_t id : rail) {
      if (Channel* c = channel(id); c != nullptr) flush(*c);
    }
  }
}

// ---- completion -----------------------------------------------------------------

void ShmTransport::complete_op(std::uint64_t op_id, const Status& status) {
  auto it = ops_.find(op_id);
  if (it == ops_.end()) return;
  const Op op = it->second;
  ops_.erase(it);
  Status final = status;
  if (!status.ok() && status.message().find("shm peer") == std::string::npos) {
    const Peer* p = live_peer(op.peer);
    const std::string label = p != nullptr ? p->label : "shm peer " + std::to_string(op.peer);
    final = Status(status.code(), label + ": " + status.message());
  }
  push_event(OpDone{op.cookie, final, final.ok() ? op.bytes : 0});
}

void ShmTransport::push_event(TransportEvent event) { events_.push(std::move(event)); }

std::size_t ShmTransport::poll(std::vector<TransportEvent>& out, std::size_t max_events) {
  std::lock_guard lock(mu_);
  const std::size_t n = events_.pop(out, std::min(max_events, k_max_poll_events));
  if (n > 0) events_drained_.notify_all();
  reap();
  return n;
}

// ---- public calls ---------------------------------------------------------------

Status ShmTransport::start_channel(Peer& p, std::uint32_t rail, const std::string& name) {
  Result<int> socket_fd = connect_abstract(name);
  if (!socket_fd.ok()) return socket_fd.status();
  auto c = std::make_unique<Channel>();
  c->id = next_channel_id_++;
  c->socket_fd = *socket_fd;
  c->peer = p.id;
  c->local_rail = rail;
  c->state = ChannelState::awaiting_reply;
  c->remote = std::string(k_shm_address_prefix) + name;
  const std::size_t ring_footprint = ShmRing::footprint_bytes(k_shm_ring_bytes);
  int segment_fd = -1;
  Result<std::byte*> segment = create_segment(2 * ring_footprint, &segment_fd);
  if (!segment.ok()) return segment.status();
  c->segment = *segment;
  c->segment_bytes = 2 * ring_footprint;
  c->out = ShmRing(c->segment, k_shm_ring_bytes, true);
  c->in = ShmRing(c->segment + ring_footprint, k_shm_ring_bytes, true);
  ShmHello hello;
  hello.local_id = config_.local_id;
  hello.instance = instance_;
  hello.peer = p.id;
  hello.rail = rail;
  hello.channels = static_cast<std::uint32_t>(p.expected);
  hello.pid = static_cast<std::uint64_t>(::getpid());
  hello.probe_address = reinterpret_cast<std::uint64_t>(&probe_word_);
  hello.probe_value = probe_word_;
  hello.ring_bytes = k_shm_ring_bytes;
  const std::array<int, 2> fds{segment_fd, loop_.wake_fd()};
  const Status sent = send_with_fds(c->socket_fd, std::as_bytes(std::span(&hello, 1)), fds);
  ::close(segment_fd);  // the mapping and the peer's copy keep the memory
  if (!sent.ok()) return error(StatusCode::unavailable, "shm connect to " + c->remote + ": " + sent.message());
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP;
  ev.data.u64 = c->id;
  ::epoll_ctl(loop_.epoll_fd(), EPOLL_CTL_ADD, c->socket_fd, &ev);
  p.rails[rail].push_back(c->id);
  if (rail == 0) p.control = c->id;
  channels_.emplace(c->id, std::move(c));
  return ok_status();
}

Result<PeerId> ShmTransport::connect(const PeerAddress& remote) {
  if (remote.rails.empty() || remote.rails.size() > k_max_rails) {
    return error(StatusCode::invalid_argument, "shm connect: peer address has " + std::to_string(remote.rails.size()) +
                                                   " rails; need 1.." + std::to_string(k_max_rails));
  }
  std::vector<std::string> names;
  for (const std::string& text : remote.rails) {
    Result<std::string> name = parse_shm_address(text);
    if (!name.ok()) return name.status();
    if (*name == k_shm_auto_name) {
      return error(StatusCode::invalid_argument, "shm connect: '" + text + "' is not a listening address");
    }
    names.push_back(*name);
  }
  std::lock_guard lock(mu_);
  if (peers_.full()) {
    return error(StatusCode::again,
                 "shm connect: k_shm_max_peers (" + std::to_string(k_shm_max_peers) + ") live peers");
  }
  auto peer = std::make_unique<Peer>();
  Peer& p = *peer;
  p.id = peers_.draw_id();
  const PeerId id = p.id;
  p.label = "shm peer " + std::to_string(p.id) + " (" + remote.rails[0] + ")";
  const auto rails = static_cast<std::uint32_t>(config_.rail_addresses.size());
  p.rails.resize(rails);
  p.cursor.resize(rails);
  p.expected = rails;
  peers_.add(std::move(peer));
  for (std::uint32_t rail = 0; rail < rails; ++rail) {
    const Status st = start_channel(p, rail, names[rail % names.size()]);
    if (!st.ok()) {
      fail_peer(id, st.message());  // PeerDown follows; the id stays valid to name
      break;
    }
  }
  reap();
  return id;
}

Status ShmTransport::disconnect(PeerId peer) {
  std::lock_guard lock(mu_);
  if (live_peer(peer) == nullptr) {
    return error(StatusCode::not_found, "shm disconnect: no live peer " + std::to_string(peer));
  }
  fail_peer(peer, "disconnected by this side");
  reap();
  return ok_status();
}

Status ShmTransport::register_region(std::uint64_t key, std::span<std::byte> bytes, RegionKind kind) {
  if (!caps_.reaches(kind)) {
    return error(StatusCode::unavailable, "shm register region " + std::to_string(key) + ": " +
                                              std::string(to_string(kind)) +
                                              " memory is not reachable by shm (host only; stage it through host)");
  }
  if (bytes.empty()) {
    return error(StatusCode::invalid_argument, "shm register region " + std::to_string(key) + ": empty range");
  }
  std::lock_guard lock(mu_);
  if (regions_.contains(key)) {
    return error(StatusCode::already_exists, "shm register region: key " + std::to_string(key) + " is taken");
  }
  regions_.emplace(key, std::make_shared<Region>(Region{bytes, kind, {}}));
  return ok_status();
}

Status ShmTransport::deregister_region(std::uint64_t key) {
  // Incoming copies run on the progress thread under mu_, so holding it
  // means none is reading or writing the region.
  std::lock_guard lock(mu_);
  if (regions_.erase(key) == 0) {
    return error(StatusCode::not_found, "shm deregister region: no key " + std::to_string(key));
  }
  return ok_status();
}

Result<RemoteRegionAccess> ShmTransport::remote_access(std::uint64_t key, std::uint32_t rail,
                                                       std::uint64_t grantee_id) {
  std::lock_guard lock(mu_);
  return grant_stream_region("shm", regions_, key, rail, listen_address_.rails.size(), grantee_id);
}

void ShmTransport::enqueue(Channel& c, TxItem item) {
  c.tx.push_back(std::move(item));
  if (c.state != ChannelState::open) return;  // sent when the peer is up
  const Peer* p = live_peer(c.peer);
  if (p == nullptr || !p->up) return;
  flush(c);
  // Ring full: the progress thread waits for room on our behalf.
  if (!c.tx.empty()) ring_doorbell(loop_.wake_fd());
}

Status ShmTransport::send_message(PeerId peer, std::uint64_t tag, std::vector<std::byte> frame) {
  if (frame.size() > k_shm_max_message_bytes) {
    return error(StatusCode::invalid_argument, "shm send_message: frame of " + std::to_string(frame.size()) +
                                                   " bytes over k_shm_max_message_bytes " +
                                                   std::to_string(k_shm_max_message_bytes));
  }
  Result<proto::FrameHeader> header = proto::parse_header(frame);
  if (!header.ok()) {
    return error(StatusCode::invalid_argument, "shm send_message: not a valid frame: " + header.status().message());
  }
  if (header->frame_bytes() != frame.size()) {
    return error(StatusCode::invalid_argument, "shm send_message: frame header says " +
                                                   std::to_string(header->frame_bytes()) + " bytes, got " +
                                                   std::to_string(frame.size()));
  }
  std::lock_guard lock(mu_);
  Peer* p = live_peer(peer);
  Channel* c = p == nullptr ? nullptr : channel(p->control);
  if (c == nullptr) {
    return error(StatusCode::unavailable, "shm send_message: no live peer " + std::to_string(peer));
  }
  if (p->queued_message_bytes + frame.size() > config_.max_queued_message_bytes) {
    return error(StatusCode::again, "shm send_message: " + p->label + " has " +
                                        std::to_string(p->queued_message_bytes) +
                                        " bytes queued (max_queued_message_bytes " +
                                        std::to_string(config_.max_queued_message_bytes) + ")");
  }
  TxItem item;
  item.kind = ShmRecord::message_first;
  put_head(item, ShmMessageHead{tag, frame.size()});
  item.message_bytes = frame.size();
  item.body = std::move(frame);
  p->queued_message_bytes += item.message_bytes;
  enqueue(*c, std::move(item));
  reap();
  return ok_status();
}

Status ShmTransport::post(const BulkRequest& request, bool is_get) {
  const char* what = is_get ? "shm get" : "shm put";
  if (request.bytes == 0 || request.bytes > k_shm_max_transfer_bytes) {
    return error(StatusCode::invalid_argument, std::string(what) + ": " + std::to_string(request.bytes) +
                                                   " bytes outside 1..k_shm_max_transfer_bytes " +
                                                   std::to_string(k_shm_max_transfer_bytes));
  }
  if (request.rail >= config_.rail_addresses.size()) {
    return error(StatusCode::invalid_argument, std::string(what) + ": rail " + std::to_string(request.rail) +
                                                   " but this transport has " +
                                                   std::to_string(config_.rail_addresses.size()) + " rails");
  }
  std::lock_guard lock(mu_);
  auto local = regions_.find(request.local_key);
  if (local == regions_.end()) {
    return error(StatusCode::invalid_argument,
                 std::string(what) + ": no local region with key " + std::to_string(request.local_key));
  }
  const std::span<std::byte> bytes = local->second->bytes;
  if (!range_inside(request.local_offset, request.bytes, bytes.size())) {
    return error(StatusCode::invalid_argument,
                 std::string(what) + ": local range [" + std::to_string(request.local_offset) + ", +" +
                     std::to_string(request.bytes) + ") outside region " + std::to_string(request.local_key) + " of " +
                     std::to_string(bytes.size()) + " bytes");
  }
  Peer* p = live_peer(request.peer);
  if (p == nullptr) {
    return error(StatusCode::unavailable, std::string(what) + ": no live peer " + std::to_string(request.peer));
  }
  const std::vector<std::uint64_t>& lanes = p->rails[request.rail];
  if (lanes.empty()) {
    return error(StatusCode::unavailable,
                 std::string(what) + ": " + p->label + " has no channel on rail " + std::to_string(request.rail));
  }
  if (ops_.size() >= config_.max_pending_ops) {
    return error(StatusCode::again, std::string(what) + ": max_pending_ops (" +
                                        std::to_string(config_.max_pending_ops) + ") operations in flight");
  }
  const std::uint64_t lane = lanes[p->cursor[request.rail]++ % lanes.size()];
  Channel* c = channel(lane);
  if (c == nullptr) {
    return error(StatusCode::unavailable,
                 std::string(what) + ": " + p->label + " lost its rail " + std::to_string(request.rail) + " channel");
  }
  const std::uint64_t op_id = next_op_++;
  ops_.emplace(op_id, Op{request.cookie, p->id, request.bytes});
  TxItem item;
  item.kind = is_get ? ShmRecord::get : ShmRecord::put;
  put_head(item, ShmBulk{op_id, request.remote_key, request.remote_offset, request.bytes,
                         reinterpret_cast<std::uint64_t>(bytes.data() + request.local_offset)});
  enqueue(*c, std::move(item));
  reap();
  return ok_status();
}

}  // namespace detail

Capabilities shm_capabilities() { return detail::make_capabilities(); }

Result<std::unique_ptr<Transport>> make_shm_transport(const TransportConfig& config) {
  auto transport = std::make_unique<detail::ShmTransport>(config);
  Status st = transport->open();
  if (!st.ok()) return st;
  return std::unique_ptr<Transport>(std::move(transport));
}

namespace {
[[maybe_unused]] const bool k_registered =
    register_transport(TransportEntry{"shm", [] { return ok_status(); }, [] { return shm_capabilities(); },
                                      [](const TransportConfig& config) { return make_shm_transport(config); },
                                      [](std::uint32_t rails) { return std::vector<std::string>(rails, "shm:auto"); }});
}  // namespace

}  // namespace sluice::transport::shm
