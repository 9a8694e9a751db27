#include "transports/tcp/tcp_transport.hpp"

#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "transports/tcp/tcp_address.hpp"
#include "transports/tcp/tcp_wire.hpp"

namespace sluice::transport::tcp {
namespace {

// epoll data ids: 0 the wake eventfd, 1 + rail the listening sockets, then connections.
constexpr std::uint64_t k_wake_id = 0;
constexpr std::uint64_t k_first_conn_id = 1ULL << 20;
constexpr int k_epoll_batch = 64;
constexpr std::uint64_t k_max_group_connections = std::uint64_t{k_max_rails} * k_max_connections_per_rail;

struct Region {
  std::span<std::byte> bytes;
  RegionKind kind = RegionKind::host;
  std::uint32_t users = 0;  // incoming transfers reading or writing it right now
};

// Keeps a region registered while an incoming put writes into it or a get
// answer is sent from it. Created and destroyed with the transport lock held.
class RegionPin {
 public:
  RegionPin() = default;
  RegionPin(std::shared_ptr<Region> region, std::condition_variable* released)
      : region_(std::move(region)), released_(released) {
    ++region_->users;
  }
  RegionPin(RegionPin&& other) noexcept : region_(std::move(other.region_)), released_(other.released_) {}
  RegionPin& operator=(RegionPin&& other) noexcept {
    if (this != &other) {
      release();
      region_ = std::move(other.region_);
      released_ = other.released_;
    }
    return *this;
  }
  RegionPin(const RegionPin&) = delete;
  RegionPin& operator=(const RegionPin&) = delete;
  ~RegionPin() { release(); }

  void release() {
    if (!region_) return;
    if (--region_->users == 0) released_->notify_all();
    region_.reset();
  }

 private:
  std::shared_ptr<Region> region_;
  std::condition_variable* released_ = nullptr;
};

struct TxItem {
  PacketHeaderBytes head{};
  std::string text;                  // error text after the header (acks)
  std::vector<std::byte> owned;      // a control frame
  const std::byte* body = nullptr;   // region bytes (zero copy) or owned.data()
  std::size_t body_bytes = 0;
  std::size_t sent = 0;              // of head + text + body
  std::uint64_t message_bytes = 0;   // counted against the peer's queue limit
  RegionPin pin;

  std::size_t total() const { return head.size() + text.size() + body_bytes; }
};

enum class RxState : std::uint8_t { header, message_body, bulk_body, discard_body, error_text };

struct Connection {
  std::uint64_t id = 0;
  int fd = -1;
  PeerId peer = 0;  // 0 until an accepted connection's hello names its group
  std::uint32_t local_rail = 0;
  bool accepted = false;
  bool connecting = false;
  bool greeted = false;  // the peer's hello has arrived
  bool out_armed = false;
  bool dead = false;
  std::string remote;    // address text, for messages
  std::deque<TxItem> tx;

  RxState rx = RxState::header;
  PacketHeaderBytes head{};
  std::size_t head_have = 0;
  PacketHeader cur;
  std::byte* dst = nullptr;  // bulk_body: where the next byte goes
  std::uint64_t left = 0;    // body/text bytes still to read
  std::vector<std::byte> message;
  std::string text;
  RegionPin pin;                      // put target while its body arrives
  Status refusal;                     // why a put's body is being discarded
  std::uint64_t piece = 0;            // get_data: the local piece being filled
};

struct Peer {
  PeerId id = 0;
  std::uint64_t remote_id = 0;
  bool accepted = false;
  bool up = false;
  std::string label;  // "tcp peer 3 (127.0.0.1:4000)"
  std::vector<std::vector<std::uint64_t>> rails;  // connection ids by local rail
  std::vector<std::uint32_t> cursor;              // round-robin start per rail
  std::uint64_t control = 0;                      // the (rail 0, connection 0) connection: carries messages
  std::uint64_t expected = 0;                     // connections in the group
  std::uint64_t greeted = 0;                      // of them, those whose hello arrived
  std::uint64_t queued_message_bytes = 0;
  std::pair<std::uint64_t, std::uint64_t> group{0, 0};  // accepted: (remote id, connector's nonce)
};

struct Op {
  std::uint64_t cookie = 0;
  std::uint32_t pieces_left = 0;
  std::uint64_t bytes = 0;
  Status status;
};

struct Piece {
  std::uint64_t op = 0;
  PeerId peer = 0;
  bool is_get = false;
  std::byte* dst = nullptr;  // get: where the answer goes
  std::uint64_t bytes = 0;
};

Capabilities make_capabilities() {
  Capabilities c;
  c.region_kinds = {RegionKind::host};
  c.max_message_bytes = k_tcp_max_message_bytes;
  c.max_transfer_bytes = k_tcp_max_transfer_bytes;
  c.stream = true;
  c.max_rails = k_max_rails;
  c.max_connections_per_rail = k_max_connections_per_rail;
  return c;
}

bool range_inside(std::uint64_t offset, std::uint64_t bytes, std::uint64_t size) {
  return offset <= size && bytes <= size - offset;
}

class TcpTransport final : public Transport {
 public:
  explicit TcpTransport(TransportConfig config) : config_(std::move(config)), caps_(make_capabilities()) {}
  ~TcpTransport() override;

  Status open();

  std::string_view name() const override { return "tcp"; }
  const Capabilities& capabilities() const override { return caps_; }
  PeerAddress listen_address() const override { return listen_address_; }
  Result<PeerId> connect(const PeerAddress& remote) override;
  Status disconnect(PeerId peer) override;
  Status register_region(std::uint64_t key, std::span<std::byte> bytes, RegionKind kind) override;
  Status deregister_region(std::uint64_t key) override;
  Status send_message(PeerId peer, std::uint64_t tag, std::vector<std::byte> frame) override;
  Status put(const BulkRequest& request) override { return post(request, false); }
  Status get(const BulkRequest& request) override { return post(request, true); }
  std::size_t poll(std::vector<TransportEvent>& out, std::size_t max_events) override;
  int completion_fd() const override { return event_fd_; }

 private:
  // Everything below runs with mu_ held.
  void run_loop();
  void handle_listen(std::uint32_t rail);
  void handle_connection(std::uint64_t id, std::uint32_t events);
  void finish_connect(Connection& c);
  void read_from(Connection& c);
  void consumed(Connection& c, std::size_t n);
  void on_header(Connection& c);
  void on_hello(Connection& c, const PacketHeader& h);
  void on_body_done(Connection& c);
  void start_text(Connection& c);
  void enqueue(Connection& c, TxItem item);
  void flush(Connection& c);
  void set_out_interest(Connection& c, bool on);
  void fail_connection(Connection& c, const std::string& why);
  void fail_peer(PeerId id, const std::string& why);
  void close_connection(std::uint64_t id);
  void complete_piece(std::uint64_t piece_id, const Status& status);
  void push_event(TransportEvent event);
  void log(const std::string& line) const;
  void reap();
  Status post(const BulkRequest& request, bool is_get);
  Peer* live_peer(PeerId id);
  Connection* connection(std::uint64_t id);
  std::shared_ptr<Region> find_region(std::uint64_t key);
  Status check_remote_range(std::uint64_t key, std::uint64_t offset, std::uint64_t bytes,
                            std::shared_ptr<Region>* region);

  TransportConfig config_;
  Capabilities caps_;
  PeerAddress listen_address_;
  std::vector<sockaddr_in> rail_addresses_;
  std::vector<int> listen_fds_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  int event_fd_ = -1;
  std::thread loop_;
  std::atomic<bool> stop_{false};

  mutable std::mutex mu_;
  std::condition_variable region_released_;
  std::condition_variable events_drained_;
  std::unordered_map<std::uint64_t, std::shared_ptr<Region>> regions_;
  std::unordered_map<std::uint64_t, std::unique_ptr<Connection>> connections_;
  std::unordered_map<PeerId, std::unique_ptr<Peer>> peers_;
  std::map<std::pair<std::uint64_t, std::uint64_t>, PeerId> accepted_groups_;
  std::vector<std::unique_ptr<Connection>> dead_connections_;  // closed, freed at a safe point
  std::unordered_map<std::uint64_t, Op> ops_;
  std::unordered_map<std::uint64_t, Piece> pieces_;
  std::deque<TransportEvent> events_;
  std::vector<std::byte> drain_scratch_ = std::vector<std::byte>(k_tcp_drain_chunk_bytes);
  std::uint64_t next_connection_id_ = k_first_conn_id;
  PeerId next_peer_ = 1;
  std::uint64_t next_op_ = 1;
  std::uint64_t next_piece_ = 1;
};

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
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  event_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll_fd_ < 0 || wake_fd_ < 0 || event_fd_ < 0) {
    return error(StatusCode::io_error, "tcp transport: epoll/eventfd: " + errno_text(errno));
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = k_wake_id;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  for (std::uint32_t rail = 0; rail < config_.rail_addresses.size(); ++rail) {
    Result<sockaddr_in> address = parse_ipv4_address(config_.rail_addresses[rail]);
    if (!address.ok()) return address.status();
    Result<int> fd = listen_socket(*address);
    if (!fd.ok()) return fd.status();
    listen_fds_.push_back(*fd);
    rail_addresses_.push_back(*address);
    listen_address_.rails.push_back(format_address(*address));
    ev.data.u64 = 1 + rail;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, *fd, &ev);
  }
  loop_ = std::thread([this] { run_loop(); });
  return ok_status();
}

TcpTransport::~TcpTransport() {
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
  for (auto& [id, c] : connections_) {
    if (c->fd >= 0) ::close(c->fd);
  }
  connections_.clear();
  dead_connections_.clear();
  for (int fd : listen_fds_) ::close(fd);
  for (int fd : {epoll_fd_, wake_fd_, event_fd_}) {
    if (fd >= 0) ::close(fd);
  }
}

void TcpTransport::log(const std::string& line) const {
  if (config_.log) config_.log(line);
}

// ---- progress thread --------------------------------------------------------

void TcpTransport::run_loop() {
  std::array<epoll_event, k_epoll_batch> ready{};
  while (!stop_) {
    const int n = ::epoll_wait(epoll_fd_, ready.data(), k_epoll_batch, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      log("tcp transport: epoll_wait failed: " + errno_text(errno) + "; progress thread stops");
      return;
    }
    std::unique_lock lock(mu_);
    events_drained_.wait(lock, [this] { return stop_ || events_.size() < k_tcp_max_queued_events; });
    if (stop_) return;
    for (int i = 0; i < n; ++i) {
      const std::uint64_t id = ready[static_cast<std::size_t>(i)].data.u64;
      if (id == k_wake_id) {
        std::uint64_t count = 0;
        [[maybe_unused]] const auto r = ::read(wake_fd_, &count, sizeof count);
      } else if (id < k_first_conn_id) {
        handle_listen(static_cast<std::uint32_t>(id - 1));
      } else {
        handle_connection(id, ready[static_cast<std::size_t>(i)].events);
      }
    }
    reap();
  }
}

void TcpTransport::reap() { dead_connections_.clear(); }

void TcpTransport::handle_listen(std::uint32_t rail) {
  while (true) {
    sockaddr_in from{};
    socklen_t len = sizeof from;
    const int fd = ::accept4(listen_fds_[rail], reinterpret_cast<sockaddr*>(&from), &len,
                             SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) log("tcp transport: accept: " + errno_text(errno));
      return;
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto c = std::make_unique<Connection>();
    c->id = next_connection_id_++;
    c->fd = fd;
    c->local_rail = rail;
    c->accepted = true;
    c->remote = format_address(from);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = c->id;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
    connections_.emplace(c->id, std::move(c));
  }
}

Connection* TcpTransport::connection(std::uint64_t id) {
  auto it = connections_.find(id);
  return it == connections_.end() ? nullptr : it->second.get();
}

Peer* TcpTransport::live_peer(PeerId id) {
  auto it = peers_.find(id);
  return it == peers_.end() ? nullptr : it->second.get();
}

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
    fail_connection(c, "connect to " + c.remote + " failed: " + errno_text(err));
    return;
  }
  c.connecting = false;
  flush(c);
}

// ---- receive path -----------------------------------------------------------

void TcpTransport::read_from(Connection& c) {
  std::uint64_t budget = k_tcp_read_budget_bytes;
  while (!c.dead && budget > 0) {
    std::byte* into = nullptr;
    std::uint64_t want = 0;
    switch (c.rx) {
      case RxState::header:
        into = c.head.data() + c.head_have;
        want = c.head.size() - c.head_have;
        break;
      case RxState::message_body:
        into = c.message.data() + (c.message.size() - c.left);
        want = c.left;
        break;
      case RxState::bulk_body:
        into = c.dst;
        want = c.left;
        break;
      case RxState::discard_body:
        into = drain_scratch_.data();
        want = std::min<std::uint64_t>(c.left, drain_scratch_.size());
        break;
      case RxState::error_text:
        into = reinterpret_cast<std::byte*>(c.text.data()) + (c.text.size() - c.left);
        want = c.left;
        break;
    }
    want = std::min(want, budget);
    const ssize_t n = ::recv(c.fd, into, want, 0);
    if (n == 0) {
      fail_connection(c, "connection from/to " + c.remote + " closed by the remote side");
      return;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      fail_connection(c, "receive from " + c.remote + ": " + errno_text(errno));
      return;
    }
    budget -= static_cast<std::uint64_t>(n);
    consumed(c, static_cast<std::size_t>(n));
  }
}

void TcpTransport::consumed(Connection& c, std::size_t n) {
  if (c.rx == RxState::header) {
    c.head_have += n;
    if (c.head_have == c.head.size()) {
      c.head_have = 0;
      on_header(c);
    }
    return;
  }
  c.left -= n;
  if (c.rx == RxState::bulk_body) c.dst += n;
  if (c.left == 0) on_body_done(c);
}

Status TcpTransport::check_remote_range(std::uint64_t key, std::uint64_t offset, std::uint64_t bytes,
                                        std::shared_ptr<Region>* region) {
  auto found = find_region(key);
  if (!found) {
    return error(StatusCode::not_found, "no region with key " + std::to_string(key) + " at the remote side");
  }
  if (!range_inside(offset, bytes, found->bytes.size())) {
    return error(StatusCode::invalid_argument, "range [" + std::to_string(offset) + ", +" + std::to_string(bytes) +
                                                   ") outside region " + std::to_string(key) + " of " +
                                                   std::to_string(found->bytes.size()) + " bytes at the remote side");
  }
  *region = std::move(found);
  return ok_status();
}

void TcpTransport::on_header(Connection& c) {
  Result<PacketHeader> decoded = decode_packet_header(c.head);
  if (!decoded.ok()) {
    fail_connection(c, decoded.status().message());
    return;
  }
  const PacketHeader h = *decoded;
  c.cur = h;
  if (!c.greeted) {
    if (h.kind != PacketKind::hello) {
      fail_connection(c, "first packet from " + c.remote + " is not a hello");
      return;
    }
    on_hello(c, h);
    return;
  }
  const bool bulk = h.kind == PacketKind::put || h.kind == PacketKind::get_request ||
                    (h.kind == PacketKind::get_data && h.status == StatusCode::ok);
  if (bulk && (h.length == 0 || h.length > k_tcp_max_transfer_bytes)) {
    fail_connection(c, "packet length " + std::to_string(h.length) + " outside 1..k_tcp_max_transfer_bytes");
    return;
  }
  switch (h.kind) {
    case PacketKind::hello:
      fail_connection(c, "second hello from " + c.remote);
      return;
    case PacketKind::message:
      if (h.length < proto::k_frame_header_bytes || h.length > k_tcp_max_message_bytes) {
        fail_connection(c, "control frame of " + std::to_string(h.length) + " bytes outside " +
                               std::to_string(proto::k_frame_header_bytes) + "..k_tcp_max_message_bytes");
        return;
      }
      c.message.assign(h.length, std::byte{0});
      c.left = h.length;
      c.rx = RxState::message_body;
      return;
    case PacketKind::put: {
      std::shared_ptr<Region> region;
      c.refusal = check_remote_range(h.key, h.offset, h.length, &region);
      c.left = h.length;
      if (c.refusal.ok()) {
        c.dst = region->bytes.data() + h.offset;
        c.pin = RegionPin(std::move(region), &region_released_);
        c.rx = RxState::bulk_body;
      } else {
        c.rx = RxState::discard_body;
      }
      return;
    }
    case PacketKind::get_request: {
      std::shared_ptr<Region> region;
      const Status st = check_remote_range(h.key, h.offset, h.length, &region);
      TxItem item;
      PacketHeader reply{PacketKind::get_data, st.code(), 0, h.op, h.key, h.offset, st.ok() ? h.length : 0};
      if (st.ok()) {
        item.body = region->bytes.data() + h.offset;
        item.body_bytes = h.length;
        item.pin = RegionPin(std::move(region), &region_released_);
      } else {
        item.text = st.message().substr(0, k_tcp_max_error_text_bytes);
        reply.text_bytes = static_cast<std::uint16_t>(item.text.size());
      }
      item.head = encode_packet_header(reply);
      enqueue(c, std::move(item));
      return;
    }
    case PacketKind::get_data: {
      auto it = pieces_.find(h.op);
      if (it == pieces_.end() || !it->second.is_get || it->second.peer != c.peer) {
        fail_connection(c, "get_data for unknown piece " + std::to_string(h.op));
        return;
      }
      if (h.status != StatusCode::ok) {
        start_text(c);
        return;
      }
      if (h.length != it->second.bytes) {
        fail_connection(c, "get_data of " + std::to_string(h.length) + " bytes for a piece of " +
                               std::to_string(it->second.bytes));
        return;
      }
      c.piece = h.op;
      c.dst = it->second.dst;
      c.left = h.length;
      c.rx = RxState::bulk_body;
      return;
    }
    case PacketKind::put_ack: {
      auto it = pieces_.find(h.op);
      if (it == pieces_.end() || it->second.is_get || it->second.peer != c.peer) {
        fail_connection(c, "put_ack for unknown piece " + std::to_string(h.op));
        return;
      }
      if (h.status != StatusCode::ok) {
        start_text(c);
        return;
      }
      complete_piece(h.op, ok_status());
      return;
    }
  }
}

void TcpTransport::start_text(Connection& c) {
  c.text.assign(c.cur.text_bytes, '\0');
  c.left = c.cur.text_bytes;
  c.rx = RxState::error_text;
  if (c.left == 0) on_body_done(c);
}

void TcpTransport::on_hello(Connection& c, const PacketHeader& h) {
  c.greeted = true;
  if (!c.accepted) {
    // The acceptor's answer: it has grouped this connection.
    Peer* p = live_peer(c.peer);
    if (p == nullptr) return;
    p->remote_id = h.op;
    if (++p->greeted == p->expected) {
      p->up = true;
      push_event(PeerUp{p->id, p->remote_id, false});
    }
    return;
  }
  const auto rail = static_cast<std::uint32_t>(h.offset >> 32);
  const auto index = static_cast<std::uint32_t>(h.offset & 0xFFFFFFFFu);
  if (h.length == 0 || h.length > k_max_group_connections || rail >= k_max_rails ||
      index >= k_max_connections_per_rail) {
    fail_connection(c, "hello from " + c.remote + " with a bad group (rail " + std::to_string(rail) +
                           ", connection " + std::to_string(index) + ", group of " + std::to_string(h.length) + ")");
    return;
  }
  const std::pair<std::uint64_t, std::uint64_t> group{h.op, h.key};
  auto found = accepted_groups_.find(group);
  Peer* p = nullptr;
  if (found == accepted_groups_.end()) {
    if (peers_.size() >= k_tcp_max_peers) {
      fail_connection(c, "refused: k_tcp_max_peers (" + std::to_string(k_tcp_max_peers) + ") live peers");
      return;
    }
    auto peer = std::make_unique<Peer>();
    peer->id = next_peer_++;
    peer->remote_id = h.op;
    peer->accepted = true;
    peer->label = "tcp peer " + std::to_string(peer->id) + " (remote id " + std::to_string(h.op) + " from " +
                  c.remote + ")";
    peer->rails.resize(config_.rail_addresses.size());
    peer->cursor.resize(config_.rail_addresses.size());
    peer->expected = h.length;
    peer->group = group;
    p = peer.get();
    accepted_groups_.emplace(group, p->id);
    peers_.emplace(p->id, std::move(peer));
  } else {
    p = live_peer(found->second);
    if (p == nullptr || p->expected != h.length) {
      fail_connection(c, "hello from " + c.remote + " for a lost or inconsistent connection group");
      return;
    }
  }
  c.peer = p->id;
  p->rails[c.local_rail].push_back(c.id);
  if (rail == 0 && index == 0) p->control = c.id;
  TxItem reply;
  reply.head = encode_packet_header(PacketHeader{PacketKind::hello, StatusCode::ok, 0, config_.local_id, 0, 0, 0});
  enqueue(c, std::move(reply));
  if (c.dead) return;
  if (++p->greeted == p->expected) {
    p->up = true;
    push_event(PeerUp{p->id, p->remote_id, true});
  }
}

void TcpTransport::on_body_done(Connection& c) {
  const PacketHeader h = c.cur;
  c.rx = RxState::header;
  switch (h.kind) {
    case PacketKind::message: {
      std::vector<std::byte> frame = std::move(c.message);
      c.message = {};
      Result<proto::FrameHeader> fh = proto::parse_header(frame);
      if (!fh.ok() || fh->frame_bytes() != frame.size()) {
        fail_connection(c, "malformed control frame: " +
                               (fh.ok() ? "header says " + std::to_string(fh->frame_bytes()) + " bytes, packet " +
                                              std::to_string(frame.size())
                                        : fh.status().message()));
        return;
      }
      Peer* p = live_peer(c.peer);
      push_event(MessageReceived{c.peer, p != nullptr ? p->remote_id : 0, h.key, std::move(frame)});
      return;
    }
    case PacketKind::hello:
    case PacketKind::get_request:
      return;  // no body: on_header finished them
    case PacketKind::put: {
      c.pin.release();
      TxItem ack;
      PacketHeader a{PacketKind::put_ack, c.refusal.code(), 0, h.op, h.key, h.offset, 0};
      if (!c.refusal.ok()) {
        ack.text = c.refusal.message().substr(0, k_tcp_max_error_text_bytes);
        a.text_bytes = static_cast<std::uint16_t>(ack.text.size());
      }
      ack.head = encode_packet_header(a);
      enqueue(c, std::move(ack));
      return;
    }
    case PacketKind::get_data:
      if (h.status == StatusCode::ok) {
        complete_piece(c.piece, ok_status());
      } else {
        complete_piece(h.op, Status(h.status, "get from " + c.remote + ": " + c.text));
      }
      return;
    case PacketKind::put_ack:
      complete_piece(h.op, Status(h.status, "put to " + c.remote + ": " + c.text));
      return;
  }
}

// ---- send path ----------------------------------------------------------------

void TcpTransport::enqueue(Connection& c, TxItem item) {
  if (c.dead) return;
  c.tx.push_back(std::move(item));
  TxItem& placed = c.tx.back();
  if (!placed.owned.empty()) placed.body = placed.owned.data();
  flush(c);
}

void TcpTransport::set_out_interest(Connection& c, bool on) {
  if (c.out_armed == on || c.dead) return;
  epoll_event ev{};
  ev.events = EPOLLIN | (on ? EPOLLOUT : 0u);
  ev.data.u64 = c.id;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev);
  c.out_armed = on;
}

void TcpTransport::flush(Connection& c) {
  if (c.dead || c.connecting) return;
  while (!c.tx.empty()) {
    std::array<iovec, k_tcp_max_iov> iov{};
    std::size_t count = 0;
    for (TxItem& item : c.tx) {
      if (count + 3 > iov.size()) break;
      std::size_t at = item.sent;
      const auto add = [&](const void* base, std::size_t bytes) {
        if (at < bytes) {
          iov[count++] = iovec{const_cast<std::byte*>(static_cast<const std::byte*>(base)) + at, bytes - at};
          at = 0;
        } else {
          at -= bytes;
        }
      };
      add(item.head.data(), item.head.size());
      add(item.text.data(), item.text.size());
      add(item.body, item.body_bytes);
    }
    msghdr msg{};
    msg.msg_iov = iov.data();
    msg.msg_iovlen = count;
    const ssize_t n = ::sendmsg(c.fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        set_out_interest(c, true);
        return;
      }
      fail_connection(c, "send to " + c.remote + ": " + errno_text(errno));
      return;
    }
    auto sent = static_cast<std::size_t>(n);
    Peer* p = live_peer(c.peer);
    while (sent > 0 && !c.tx.empty()) {
      TxItem& front = c.tx.front();
      const std::size_t rest = front.total() - front.sent;
      if (sent < rest) {
        front.sent += sent;
        sent = 0;
      } else {
        sent -= rest;
        if (p != nullptr) p->queued_message_bytes -= front.message_bytes;
        c.tx.pop_front();
      }
    }
  }
  set_out_interest(c, false);
}

// ---- failures -------------------------------------------------------------------

void TcpTransport::close_connection(std::uint64_t id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  Connection& c = *it->second;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.fd, nullptr);
  ::close(c.fd);
  c.fd = -1;
  c.dead = true;
  c.tx.clear();
  c.pin.release();
  dead_connections_.push_back(std::move(it->second));
  connections_.erase(it);
}

void TcpTransport::fail_connection(Connection& c, const std::string& why) {
  if (c.peer != 0) {
    fail_peer(c.peer, why);
  } else {
    log("tcp transport: closing connection " + c.remote + ": " + why);
    close_connection(c.id);
  }
}

void TcpTransport::fail_peer(PeerId id, const std::string& why) {
  auto it = peers_.find(id);
  if (it == peers_.end()) return;
  std::unique_ptr<Peer> p = std::move(it->second);
  peers_.erase(it);
  if (p->accepted) accepted_groups_.erase(p->group);
  const Status reason(StatusCode::unavailable, p->label + " lost: " + why);
  log("tcp transport: " + reason.message());
  for (const auto& rail : p->rails) {
    for (std::uint64_t conn : rail) close_connection(conn);
  }
  std::vector<std::uint64_t> orphaned;
  for (const auto& [piece_id, piece] : pieces_) {
    if (piece.peer == id) orphaned.push_back(piece_id);
  }
  std::sort(orphaned.begin(), orphaned.end());  // complete in posting order
  for (std::uint64_t piece_id : orphaned) complete_piece(piece_id, reason);
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

void TcpTransport::push_event(TransportEvent event) {
  const bool was_empty = events_.empty();
  events_.push_back(std::move(event));
  if (was_empty) {
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto n = ::write(event_fd_, &one, sizeof one);
  }
}

std::size_t TcpTransport::poll(std::vector<TransportEvent>& out, std::size_t max_events) {
  std::lock_guard lock(mu_);
  std::uint64_t count = 0;
  [[maybe_unused]] const auto r = ::read(event_fd_, &count, sizeof count);  // reset before draining
  const std::size_t n = std::min({max_events, events_.size(), k_max_poll_events});
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(std::move(events_.front()));
    events_.pop_front();
  }
  if (!events_.empty()) {
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto w = ::write(event_fd_, &one, sizeof one);
  }
  if (n > 0) events_drained_.notify_all();
  reap();
  return n;
}

// ---- public calls ---------------------------------------------------------------

Result<PeerId> TcpTransport::connect(const PeerAddress& remote) {
  if (remote.rails.empty() || remote.rails.size() > k_max_rails) {
    return error(StatusCode::invalid_argument, "tcp connect: peer address has " +
                                                   std::to_string(remote.rails.size()) + " rails; need 1.." +
                                                   std::to_string(k_max_rails));
  }
  std::vector<sockaddr_in> targets;
  for (const std::string& text : remote.rails) {
    Result<sockaddr_in> a = parse_ipv4_address(text);
    if (!a.ok()) return a.status();
    targets.push_back(*a);
  }
  std::lock_guard lock(mu_);
  if (peers_.size() >= k_tcp_max_peers) {
    return error(StatusCode::again, "tcp connect: k_tcp_max_peers (" + std::to_string(k_tcp_max_peers) +
                                        ") live peers");
  }
  auto peer = std::make_unique<Peer>();
  Peer& p = *peer;
  p.id = next_peer_++;
  const PeerId id = p.id;
  p.label = "tcp peer " + std::to_string(p.id) + " (" + remote.rails[0] + ")";
  const auto rails = static_cast<std::uint32_t>(config_.rail_addresses.size());
  p.rails.resize(rails);
  p.cursor.resize(rails);
  p.expected = std::uint64_t{rails} * config_.connections_per_rail;
  peers_.emplace(p.id, std::move(peer));
  std::string failure;
  for (std::uint32_t rail = 0; rail < rails && failure.empty(); ++rail) {
    const sockaddr_in& target = targets[rail % targets.size()];
    for (std::uint32_t index = 0; index < config_.connections_per_rail; ++index) {
      bool in_progress = false;
      Result<int> fd = connect_socket(rail_addresses_[rail], target, &in_progress);
      if (!fd.ok()) {
        failure = fd.status().message();
        break;
      }
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
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, c->fd, &ev);
      p.rails[rail].push_back(c->id);
      if (rail == 0 && index == 0) p.control = c->id;
      Connection& placed = *connections_.emplace(c->id, std::move(c)).first->second;
      TxItem hello;
      hello.head = encode_packet_header(PacketHeader{PacketKind::hello, StatusCode::ok, 0, config_.local_id, p.id,
                                                     (std::uint64_t{rail} << 32) | index, p.expected});
      enqueue(placed, std::move(hello));
      if (live_peer(id) == nullptr) {  // the send failed at once: fail_peer has run and freed p
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

Status TcpTransport::send_message(PeerId peer, std::uint64_t tag, std::vector<std::byte> frame) {
  if (frame.size() > k_tcp_max_message_bytes) {
    return error(StatusCode::invalid_argument, "tcp send_message: frame of " + std::to_string(frame.size()) +
                                                   " bytes over k_tcp_max_message_bytes " +
                                                   std::to_string(k_tcp_max_message_bytes));
  }
  Result<proto::FrameHeader> header = proto::parse_header(frame);
  if (!header.ok()) {
    return error(StatusCode::invalid_argument, "tcp send_message: not a valid frame: " + header.status().message());
  }
  if (header->frame_bytes() != frame.size()) {
    return error(StatusCode::invalid_argument, "tcp send_message: frame header says " +
                                                   std::to_string(header->frame_bytes()) + " bytes, got " +
                                                   std::to_string(frame.size()));
  }
  std::lock_guard lock(mu_);
  Peer* p = live_peer(peer);
  if (p == nullptr || p->control == 0) {
    return error(StatusCode::unavailable, "tcp send_message: no live peer " + std::to_string(peer));
  }
  if (p->queued_message_bytes + frame.size() > config_.max_queued_message_bytes) {
    return error(StatusCode::again, "tcp send_message: " + p->label + " has " +
                                        std::to_string(p->queued_message_bytes) +
                                        " bytes queued (max_queued_message_bytes " +
                                        std::to_string(config_.max_queued_message_bytes) + ")");
  }
  Connection* c = connection(p->control);
  if (c == nullptr) return error(StatusCode::unavailable, "tcp send_message: " + p->label + " has no connection");
  TxItem item;
  item.head = encode_packet_header(PacketHeader{PacketKind::message, StatusCode::ok, 0, 0, tag, 0, frame.size()});
  item.body_bytes = frame.size();
  item.message_bytes = frame.size();
  item.owned = std::move(frame);
  p->queued_message_bytes += item.message_bytes;
  enqueue(*c, std::move(item));
  reap();
  return ok_status();
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
    return error(StatusCode::invalid_argument, std::string(what) + ": local range [" +
                                                   std::to_string(request.local_offset) + ", +" +
                                                   std::to_string(request.bytes) + ") outside region " +
                                                   std::to_string(request.local_key) + " of " +
                                                   std::to_string(local->bytes.size()) + " bytes");
  }
  Peer* p = live_peer(request.peer);
  if (p == nullptr) {
    return error(StatusCode::unavailable, std::string(what) + ": no live peer " + std::to_string(request.peer));
  }
  const std::vector<std::uint64_t>& lanes = p->rails[request.rail];
  if (lanes.empty()) {
    return error(StatusCode::unavailable, std::string(what) + ": " + p->label + " has no connection on rail " +
                                              std::to_string(request.rail));
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
    item.head = encode_packet_header(PacketHeader{is_get ? PacketKind::get_request : PacketKind::put,
                                                  StatusCode::ok, 0, piece_id, request.remote_key,
                                                  request.remote_offset + at, len});
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

}  // namespace

Capabilities tcp_capabilities() { return make_capabilities(); }

Result<std::unique_ptr<Transport>> make_tcp_transport(const TransportConfig& config) {
  auto transport = std::make_unique<TcpTransport>(config);
  Status st = transport->open();
  if (!st.ok()) return st;
  return std::unique_ptr<Transport>(std::move(transport));
}

namespace {
[[maybe_unused]] const bool k_registered = register_transport(TransportEntry{
    "tcp", [] { return ok_status(); }, [] { return tcp_capabilities(); },
    [](const TransportConfig& config) { return make_tcp_transport(config); },
    [](std::uint32_t rails) { return std::vector<std::string>(rails, "127.0.0.1:0"); }});
}  // namespace

}  // namespace sluice::transport::tcp
