#include "transports/tcp/tcp_transport.hpp"

#include <pthread.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include "transports/frame_checks.hpp"
#include "transports/tcp/tcp_address.hpp"
#include "transports/tcp/tcp_transport_impl.hpp"

namespace sluice::transport::tcp {
namespace detail {

// ---- set-up and tear-down -------------------------------------------------

Status TcpTransport::open() {
  if (config_.rail_addresses.empty() || config_.rail_addresses.size() > k_max_rails) {
    return error(StatusCode::invalid_argument, "tcp transport: " + std::to_string(config_.rail_addresses.size()) +
                                                   " rail addresses; need 1.." + std::to_string(k_max_rails));
  }
  if (config_.connections_per_rail == 0 || config_.connections_per_rail > k_max_connections_per_rail) {
    return error(StatusCode::invalid_argument, "tcp transport: connections_per_rail " +
                                                   std::to_string(config_.connections_per_rail) + " outside 1.." +
                                                   std::to_string(k_max_connections_per_rail));
  }
  if (config_.max_pending_ops == 0) {
    return error(StatusCode::invalid_argument, "tcp transport: max_pending_ops must be > 0");
  }
  if (!config_.shared_secret.empty() && (config_.shared_secret.size() < k_min_shared_secret_bytes ||
                                         config_.shared_secret.size() > k_max_shared_secret_bytes)) {
    return error(StatusCode::invalid_argument,
                 "tcp transport: shared secret of " + std::to_string(config_.shared_secret.size()) + " bytes outside " +
                     std::to_string(k_min_shared_secret_bytes) + ".." + std::to_string(k_max_shared_secret_bytes));
  }
  if (Status st = check_socket_buffer_bytes(config_, "tcp"); !st.ok()) return st;
  if (Status st = check_accept_limits(config_, "tcp"); !st.ok()) return st;
  if (!config_.netns.empty()) {
    Result<int> ns = open_netns(config_.netns);
    if (!ns.ok()) return ns.status();
    netns_fd_ = *ns;
  }
  if (Status st = loop_.open(); !st.ok()) return st;
  if (!events_.valid()) {
    return error(StatusCode::io_error, "tcp transport: eventfd: " + errno_text(events_.open_errno()));
  }
  for (std::uint32_t rail = 0; rail < config_.rail_addresses.size(); ++rail) {
    Result<sockaddr_in> address = parse_ipv4_address(config_.rail_addresses[rail]);
    if (!address.ok()) return address.status();
    Result<int> fd = listen_socket(*address, netns_fd_, config_.socket_buffer_bytes);
    if (!fd.ok()) return fd.status();
    listen_fds_.push_back(*fd);
    rail_addresses_.push_back(*address);
    listen_address_.rails.push_back(format_address(*address));
    loop_.watch(*fd, 1 + rail);
  }
  loop_.start("tcp:" + std::to_string(config_.local_id), loop_hooks());
  return ok_status();
}

TcpTransport::~TcpTransport() {
  loop_.stop();
  for (auto& [id, c] : connections_) {
    if (c->fd >= 0) ::close(c->fd);
  }
  connections_.clear();
  dead_connections_.clear();
  for (int fd : listen_fds_) ::close(fd);
  if (netns_fd_ >= 0) ::close(netns_fd_);
}

void TcpTransport::log(const std::string& line) const {
  if (config_.log) config_.log(line);
}

// ---- progress thread --------------------------------------------------------

ProgressLoop::Hooks TcpTransport::loop_hooks() {
  ProgressLoop::Hooks h;
  h.wait_ms = [this] {
    // Only the progress thread adds deadlines and pauses, so none can appear
    // between here and the wait.
    std::lock_guard lock(mu_);
    return guard_.wait_ms(monotonic_now_ns());
  };
  h.has_room = [this] { return events_.size() < k_tcp_max_queued_events; };
  h.ready = [this](std::uint64_t id, std::uint32_t events) {
    if (id < k_first_conn_id) {
      handle_listen(static_cast<std::uint32_t>(id - 1));
    } else {
      handle_connection(id, events);
    }
  };
  h.after_turn = [this] {
    service_accept_limits();
    reap();
  };
  h.log = [this](const std::string& line) { log(line); };
  return h;
}

void TcpTransport::reap() { dead_connections_.clear(); }

void TcpTransport::handle_listen(std::uint32_t rail) {
  for (int taken = 0; taken < k_accepts_per_event; ++taken) {
    sockaddr_in from{};
    socklen_t len = sizeof from;
    const int fd = ::accept4(listen_fds_[rail], reinterpret_cast<sockaddr*>(&from), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      if (err == EINTR || err == ECONNABORTED) continue;
      // Out of descriptors (or any other failure): leave the epoll set for
      // the back-off instead of being woken again at once by the
      // level-triggered listener (issue 24: 100% CPU, 117k lines/s).
      if (guard_.accept_failed(rail, err, listen_address_.rails[rail], monotonic_now_ns())) {
        set_listener_polled(rail, false);
      }
      return;
    }
    guard_.accepted(rail);
    admit_connection(rail, fd, from);
  }
}

void TcpTransport::admit_connection(std::uint32_t rail, int fd, const sockaddr_in& from) {
  const std::uint64_t id = next_connection_id_++;
  if (!guard_.admit(rail, id, format_address(from), monotonic_now_ns())) {
    ::close(fd);  // over a cap: accepted and closed at once (logged, rate-limited, by the guard)
    return;
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  // Inherited from the listener already (set before listen()); set again
  // so every data socket carries the limit whatever the kernel copies.
  if (Status st = set_socket_buffer_bytes(fd, config_.socket_buffer_bytes); !st.ok()) {
    log(st.message() + "; connection from " + format_address(from) + " refused");
    guard_.closed(id);
    ::close(fd);
    return;
  }
  auto c = std::make_unique<Connection>();
  c->id = id;
  c->fd = fd;
  c->local_rail = rail;
  c->accepted = true;
  c->remote = format_address(from);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = c->id;
  ::epoll_ctl(loop_.epoll_fd(), EPOLL_CTL_ADD, fd, &ev);
  Connection& placed = *connections_.emplace(c->id, std::move(c)).first->second;
  start_auth(placed);
}

void TcpTransport::set_listener_polled(std::uint32_t rail, bool polled) {
  poll_listener(loop_.epoll_fd(), listen_fds_[rail], 1 + rail, polled);
}

void TcpTransport::service_accept_limits() {
  guard_.service(
      monotonic_now_ns(),
      [this](std::uint64_t id) {
        if (connection(id) != nullptr) close_connection(id);
      },
      [this](std::size_t rail) { set_listener_polled(static_cast<std::uint32_t>(rail), true); });
}

Connection* TcpTransport::connection(std::uint64_t id) {
  auto it = connections_.find(id);
  return it == connections_.end() ? nullptr : it->second.get();
}

Peer* TcpTransport::live_peer(PeerId id) { return peers_.find(id); }

void TcpTransport::handle_connection(std::uint64_t id, std::uint32_t events) {
  Connection* c = connection(id);
  if (c == nullptr) return;  // closed earlier in this batch
  if (c->connecting) {
    if ((events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) != 0) finish_connect(*c);
    return;
  }
  if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0) read_from(*c);
  if (c->dead) return;
  if ((events & EPOLLOUT) != 0) flush(*c);
}

void TcpTransport::finish_connect(Connection& c) {
  int err = 0;
  socklen_t len = sizeof err;
  ::getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
  if (err != 0) {
    fail_connection(c, "connect to " + c.remote + " failed: " + errno_text(err), "connect failed");
    return;
  }
  c.connecting = false;
  flush(c);
}

// ---- failures -------------------------------------------------------------------

void TcpTransport::close_connection(std::uint64_t id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  Connection& c = *it->second;
  guard_.closed(id);
  ::epoll_ctl(loop_.epoll_fd(), EPOLL_CTL_DEL, c.fd, nullptr);
  ::close(c.fd);
  c.fd = -1;
  c.dead = true;
  c.tx.clear();
  c.auth_tx.clear();
  c.pin.release();
  dead_connections_.push_back(std::move(it->second));
  connections_.erase(it);
}

void TcpTransport::fail_connection(Connection& c, const std::string& why, std::string_view reason) {
  if (c.peer != 0) {
    fail_peer(c.peer, why);
  } else if (guard_.handshaking(c.id)) {
    // An accepted connection still in its hand-shake: rate-limited, as a
    // flood of garbage or of closing sockets would otherwise flood the log.
    guard_.log_handshake_failure("closing connection " + c.remote + ": " + why, monotonic_now_ns(), reason);
    close_connection(c.id);
  } else {
    log("tcp transport: closing connection " + c.remote + ": " + why);
    close_connection(c.id);
  }
}

TcpPreauthUsage TcpTransport::preauth_usage() const {
  std::lock_guard lock(mu_);
  TcpPreauthUsage u;
  for (const auto& [id, c] : connections_) {
    if (c->authenticated) continue;
    ++u.connections;
    u.rx_bytes += c->preauth_rx_bytes;
    for (const TxItem& item : c->auth_tx) u.queued_bytes += item.total() - item.sent;
  }
  u.peak_connection_queued_bytes = peak_auth_tx_bytes_;
  u.handshake_bytes = guard_.handshake_bytes();
  return u;
}

void TcpTransport::fail_peer(PeerId id, const std::string& why) {
  std::unique_ptr<Peer> p = peers_.take(id);
  if (p == nullptr) return;
  const Status reason(StatusCode::unavailable, p->label + " lost: " + why);
  log("tcp transport: " + reason.message());
  for (const auto& rail : p->rails) {
    for (std::uint64_t conn : rail) close_connection(conn);
  }
  for (std::uint64_t piece_id : orphaned_ops(pieces_, id)) complete_piece(piece_id, reason);
  push_event(PeerDown{id, p->remote_id, reason});
}

// ---- completion -----------------------------------------------------------------

void TcpTransport::complete_piece(std::uint64_t piece_id, const Status& status) {
  auto it = pieces_.find(piece_id);
  if (it == pieces_.end()) return;
  const std::uint64_t op_id = it->second.op;
  const PeerId peer = it->second.peer;
  pieces_.erase(it);
  auto op_it = ops_.find(op_id);
  if (op_it == ops_.end()) return;
  Op& op = op_it->second;
  if (!status.ok() && op.status.ok()) {
    const Peer* p = live_peer(peer);
    const bool named = status.message().find("tcp peer") != std::string::npos;
    op.status = named || p == nullptr ? status : Status(status.code(), p->label + ": " + status.message());
  }
  if (--op.pieces_left > 0) return;
  push_event(OpDone{op.cookie, op.status, op.status.ok() ? op.bytes : 0});
  ops_.erase(op_it);
}

void TcpTransport::push_event(TransportEvent event) { events_.push(std::move(event)); }

std::size_t TcpTransport::poll(std::vector<TransportEvent>& out, std::size_t max_events) {
  std::lock_guard lock(mu_);
  const std::size_t n = events_.pop(out, std::min(max_events, k_max_poll_events));
  if (n > 0) events_drained_.notify_all();
  reap();
  return n;
}

// ---- public calls ---------------------------------------------------------------

namespace {

// The address of each of the peer's rails; invalid_argument for a bad count or address.
Result<std::vector<sockaddr_in>> parse_rail_targets(const PeerAddress& remote) {
  if (remote.rails.empty() || remote.rails.size() > k_max_rails) {
    return error(StatusCode::invalid_argument, "tcp connect: peer address has " + std::to_string(remote.rails.size()) +
                                                   " rails; need 1.." + std::to_string(k_max_rails));
  }
  std::vector<sockaddr_in> targets;
  for (const std::string& text : remote.rails) {
    Result<sockaddr_in> a = parse_ipv4_address(text);
    if (!a.ok()) return a.status();
    targets.push_back(*a);
  }
  return targets;
}

}  // namespace

Peer& TcpTransport::add_peer(const PeerAddress& remote, std::uint32_t rails) {
  auto peer = std::make_unique<Peer>();
  Peer& p = *peer;
  p.id = peers_.draw_id();
  p.label = "tcp peer " + std::to_string(p.id) + " (" + remote.rails[0] + ")";
  p.rails.resize(rails);
  p.cursor.resize(rails);
  p.expected = std::uint64_t{rails} * config_.connections_per_rail;
  return peers_.add(std::move(peer));
}

Result<bool> TcpTransport::open_peer_connection(Peer& p, std::uint32_t rail, std::uint32_t index,
                                                const sockaddr_in& target) {
  const PeerId id = p.id;
  bool in_progress = false;
  Result<int> fd = connect_socket(rail_addresses_[rail], target, netns_fd_, &in_progress, config_.socket_buffer_bytes);
  if (!fd.ok()) return fd.status();
  auto c = std::make_unique<Connection>();
  c->id = next_connection_id_++;
  c->fd = *fd;
  c->peer = p.id;
  c->local_rail = rail;
  c->connecting = in_progress;
  c->remote = format_address(target);
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLOUT;
  ev.data.u64 = c->id;
  c->out_armed = true;
  ::epoll_ctl(loop_.epoll_fd(), EPOLL_CTL_ADD, c->fd, &ev);
  p.rails[rail].push_back(c->id);
  if (rail == 0 && index == 0) p.control = c->id;
  Connection& placed = *connections_.emplace(c->id, std::move(c)).first->second;
  start_auth(placed);
  if (live_peer(id) == nullptr) return false;
  TxItem hello;
  hello.head = encode_packet_header(PacketHeader{PacketKind::hello, StatusCode::ok, 0, config_.local_id, p.id,
                                                 (std::uint64_t{rail} << 32) | index, p.expected});
  enqueue(placed, std::move(hello));
  return live_peer(id) != nullptr;  // false: the send failed at once, fail_peer has run and freed p
}

Result<PeerId> TcpTransport::connect(const PeerAddress& remote) {
  Result<std::vector<sockaddr_in>> targets = parse_rail_targets(remote);
  if (!targets.ok()) return targets.status();
  std::lock_guard lock(mu_);
  if (peers_.full()) {
    return error(StatusCode::again,
                 "tcp connect: k_tcp_max_peers (" + std::to_string(k_tcp_max_peers) + ") live peers");
  }
  const auto rails = static_cast<std::uint32_t>(config_.rail_addresses.size());
  Peer& p = add_peer(remote, rails);
  const PeerId id = p.id;
  std::string failure;
  for (std::uint32_t rail = 0; rail < rails && failure.empty(); ++rail) {
    const sockaddr_in& target = (*targets)[rail % targets->size()];
    for (std::uint32_t index = 0; index < config_.connections_per_rail; ++index) {
      Result<bool> alive = open_peer_connection(p, rail, index, target);
      if (!alive.ok()) {
        failure = alive.status().message();
        break;
      }
      if (!*alive) {  // fail_peer has run and freed p
        reap();
        return id;
      }
    }
  }
  if (!failure.empty()) fail_peer(id, failure);  // PeerDown follows; the id stays valid to name
  reap();
  return id;
}

Status TcpTransport::disconnect(PeerId peer) {
  std::lock_guard lock(mu_);
  if (live_peer(peer) == nullptr) {
    return error(StatusCode::not_found, "tcp disconnect: no live peer " + std::to_string(peer));
  }
  fail_peer(peer, "disconnected by this side");
  reap();
  return ok_status();
}

std::shared_ptr<Region> TcpTransport::find_region(std::uint64_t key) {
  auto it = regions_.find(key);
  return it == regions_.end() ? nullptr : it->second;
}

Status TcpTransport::register_region(std::uint64_t key, std::span<std::byte> bytes, RegionKind kind) {
  if (!caps_.reaches(kind)) {
    return error(StatusCode::unavailable, "tcp register region " + std::to_string(key) + ": " +
                                              std::string(to_string(kind)) +
                                              " memory is not reachable by tcp (host only; stage it through host)");
  }
  if (bytes.empty()) {
    return error(StatusCode::invalid_argument, "tcp register region " + std::to_string(key) + ": empty range");
  }
  std::lock_guard lock(mu_);
  if (regions_.contains(key)) {
    return error(StatusCode::already_exists, "tcp register region: key " + std::to_string(key) + " is taken");
  }
  auto region = std::make_shared<Region>();
  region->bytes = bytes;
  region->kind = kind;
  regions_.emplace(key, std::move(region));
  return ok_status();
}

Status TcpTransport::deregister_region(std::uint64_t key) {
  std::unique_lock lock(mu_);
  auto it = regions_.find(key);
  if (it == regions_.end()) {
    return error(StatusCode::not_found, "tcp deregister region: no key " + std::to_string(key));
  }
  std::shared_ptr<Region> region = std::move(it->second);
  regions_.erase(it);
  region_released_.wait(lock, [&] { return region->users == 0; });
  return ok_status();
}

Result<RemoteRegionAccess> TcpTransport::remote_access(std::uint64_t key, std::uint32_t rail,
                                                       std::uint64_t grantee_id) {
  std::lock_guard lock(mu_);
  return grant_stream_region("tcp", regions_, key, rail, listen_address_.rails.size(), grantee_id);
}

Result<TxItem> TcpTransport::message_item(Peer& p, std::uint64_t tag, std::vector<std::byte>& frame) {
  Status st = check_outgoing_frame("tcp", frame, k_tcp_max_message_bytes, "k_tcp_max_message_bytes");
  if (st.ok()) {
    st = check_message_queue_room("tcp", p.label, p.queued_message_bytes, frame.size(),
                                  config_.max_queued_message_bytes);
  }
  if (!st.ok()) return st;
  TxItem item;
  item.head = encode_packet_header(PacketHeader{PacketKind::message, StatusCode::ok, 0, 0, tag, 0, frame.size()});
  item.body_bytes = frame.size();
  item.message_bytes = frame.size();
  item.owned = std::move(frame);
  p.queued_message_bytes += item.message_bytes;
  return item;
}

Status TcpTransport::send_message(PeerId peer, std::uint64_t tag, std::vector<std::byte> frame) {
  OutgoingMessage one{tag, std::move(frame)};
  Status failure;
  return send_messages(peer, std::span<OutgoingMessage>(&one, 1), &failure) == 1 ? ok_status() : failure;
}

// All queued first, then one flush: the frames leave in as few sendmsg
// calls as k_tcp_max_iov allows (make bench-meta: one sendmsg per reply was
// most of a metadata server thread's system time).
std::size_t TcpTransport::send_messages(PeerId peer, std::span<OutgoingMessage> messages, Status* failure) {
  std::lock_guard lock(mu_);
  Peer* p = live_peer(peer);
  if (p == nullptr || p->control == 0) {
    *failure = error(StatusCode::unavailable, "tcp send_message: no live peer " + std::to_string(peer));
    return 0;
  }
  Connection* c = connection(p->control);
  if (c == nullptr) {
    *failure = error(StatusCode::unavailable, "tcp send_message: " + p->label + " has no connection");
    return 0;
  }
  std::size_t queued = 0;
  for (; queued < messages.size(); ++queued) {
    Result<TxItem> item = message_item(*p, messages[queued].tag, messages[queued].frame);
    if (!item.ok()) {
      *failure = item.status();
      break;
    }
    enqueue(*c, std::move(item).value(), false);
  }
  if (queued > 0) flush(*c);
  reap();
  return queued;
}

Status TcpTransport::post(const BulkRequest& request, bool is_get) {
  const char* what = is_get ? "tcp get" : "tcp put";
  if (request.bytes == 0 || request.bytes > k_tcp_max_transfer_bytes) {
    return error(StatusCode::invalid_argument, std::string(what) + ": " + std::to_string(request.bytes) +
                                                   " bytes outside 1..k_tcp_max_transfer_bytes " +
                                                   std::to_string(k_tcp_max_transfer_bytes));
  }
  if (request.rail >= config_.rail_addresses.size()) {
    return error(StatusCode::invalid_argument, std::string(what) + ": rail " + std::to_string(request.rail) +
                                                   " but this transport has " +
                                                   std::to_string(config_.rail_addresses.size()) + " rails");
  }
  std::lock_guard lock(mu_);
  auto local = find_region(request.local_key);
  if (!local) {
    return error(StatusCode::invalid_argument,
                 std::string(what) + ": no local region with key " + std::to_string(request.local_key));
  }
  if (!range_inside(request.local_offset, request.bytes, local->bytes.size())) {
    return error(StatusCode::invalid_argument,
                 std::string(what) + ": local range [" + std::to_string(request.local_offset) + ", +" +
                     std::to_string(request.bytes) + ") outside region " + std::to_string(request.local_key) + " of " +
                     std::to_string(local->bytes.size()) + " bytes");
  }
  Peer* p = live_peer(request.peer);
  if (p == nullptr) {
    return error(StatusCode::unavailable, std::string(what) + ": no live peer " + std::to_string(request.peer));
  }
  const std::vector<std::uint64_t>& lanes = p->rails[request.rail];
  if (lanes.empty()) {
    return error(StatusCode::unavailable,
                 std::string(what) + ": " + p->label + " has no connection on rail " + std::to_string(request.rail));
  }
  if (ops_.size() >= config_.max_pending_ops) {
    return error(StatusCode::again, std::string(what) + ": max_pending_ops (" +
                                        std::to_string(config_.max_pending_ops) + ") operations in flight");
  }
  const std::uint64_t lane_count = lanes.size();
  const std::uint64_t by_size = std::max<std::uint64_t>(1, request.bytes / k_tcp_split_min_bytes);
  const std::uint64_t pieces = std::min(lane_count, by_size);
  const std::uint64_t piece_bytes = (request.bytes + pieces - 1) / pieces;
  const std::uint64_t op_id = next_op_++;
  ops_.emplace(op_id, Op{request.cookie, static_cast<std::uint32_t>(pieces), request.bytes, ok_status()});
  const std::uint32_t cursor = p->cursor[request.rail];
  const std::vector<std::uint64_t> lanes_copy = lanes;  // a failure below may free the peer
  const PeerId peer_id = p->id;
  for (std::uint64_t i = 0; i < pieces; ++i) {
    const std::uint64_t at = i * piece_bytes;
    const std::uint64_t len = std::min(piece_bytes, request.bytes - at);
    const std::uint64_t piece_id = next_piece_++;
    std::byte* local_bytes = local->bytes.data() + request.local_offset + at;
    pieces_.emplace(piece_id, Piece{op_id, peer_id, is_get, is_get ? local_bytes : nullptr, len});
    Connection* c = connection(lanes_copy[(cursor + i) % lane_count]);
    if (c == nullptr) continue;  // the peer failed while posting: fail_peer completed the piece
    TxItem item;
    item.head = encode_packet_header(PacketHeader{is_get ? PacketKind::get_request : PacketKind::put, StatusCode::ok, 0,
                                                  piece_id, request.remote_key, request.remote_offset + at, len});
    if (!is_get) {
      item.body = local_bytes;
      item.body_bytes = len;
    }
    enqueue(*c, std::move(item));
  }
  if (Peer* still = live_peer(peer_id); still != nullptr) {
    still->cursor[request.rail] = static_cast<std::uint32_t>((cursor + pieces) % lane_count);
  } else {
    // The peer was lost while posting; pieces not yet sent never reached a
    // connection, so complete them here (each op completes exactly once).
    std::vector<std::uint64_t> left;
    for (const auto& [piece_id, piece] : pieces_) {
      if (piece.op == op_id) left.push_back(piece_id);
    }
    for (std::uint64_t piece_id : left) {
      complete_piece(piece_id, Status(StatusCode::unavailable, "tcp peer " + std::to_string(peer_id) + " lost"));
    }
  }
  reap();
  return ok_status();
}

}  // namespace detail

Capabilities tcp_capabilities() { return detail::make_capabilities(); }

std::optional<TcpPreauthUsage> tcp_preauth_usage(const Transport& transport) {
  const auto* tcp = dynamic_cast<const detail::TcpTransport*>(&transport);
  if (tcp == nullptr) return std::nullopt;
  return tcp->preauth_usage();
}

Result<std::unique_ptr<Transport>> make_tcp_transport(const TransportConfig& config) {
  auto transport = std::make_unique<detail::TcpTransport>(config);
  Status st = transport->open();
  if (!st.ok()) return st;
  return std::unique_ptr<Transport>(std::move(transport));
}

namespace {
[[maybe_unused]] const bool k_registered = register_transport(
    TransportEntry{"tcp", [] { return ok_status(); }, [] { return tcp_capabilities(); },
                   [](const TransportConfig& config) { return make_tcp_transport(config); },
                   [](std::uint32_t rails) { return std::vector<std::string>(rails, "127.0.0.1:0"); }});
}  // namespace

}  // namespace sluice::transport::tcp
