// The shm transport's progress thread: accepts and completes hand-shakes,
// watches the sockets for hang-ups, consumes the inbound rings (serving bulk
// copies, reassembling frames, completing acked operations) and refills the
// outbound rings; then arms every ring and sleeps on epoll.
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "core/proto/codec.hpp"
#include "transports/shm/shm_os.hpp"
#include "core/proto/wire_traits.hpp"
#include "transports/shm/shm_transport_impl.hpp"

namespace sluice::transport::shm::detail {
namespace {

// Rings of a hand-shake: powers of two in this range (ours are k_shm_ring_bytes).
constexpr std::uint64_t k_min_ring_bytes = 4096;
constexpr std::uint64_t k_max_ring_bytes = 64ULL << 20;
// Error text carried in an ack.
constexpr std::size_t k_max_ack_text_bytes = 1024;

// Closes received descriptors unless taken.
struct ReceivedFds {
  std::array<int, k_shm_max_passed_fds> fds{-1, -1};
  std::size_t count = 0;
  ~ReceivedFds() {
    for (std::size_t i = 0; i < count; ++i) {
      if (fds[i] >= 0) ::close(fds[i]);
    }
  }
  int take(std::size_t i) { return std::exchange(fds[i], -1); }
};

Status check_access(pid_t pid, std::uint64_t address, std::uint64_t expected) {
  if (pid == ::getpid()) return ok_status();
  std::uint64_t value = 0;
  const Status st = copy_from_process(pid, address, std::as_writable_bytes(std::span(&value, 1)));
  if (!st.ok()) {
    return error(StatusCode::unavailable, "cannot reach the memory of process " + std::to_string(pid) + " (" +
                                              st.message() +
                                              "); cross-process shm needs ptrace access: same user, "
                                              "kernel.yama.ptrace_scope = 0");
  }
  if (value != expected) {
    return error(StatusCode::corrupt, "process " + std::to_string(pid) + " probe word mismatch");
  }
  return ok_status();
}

bool valid_ring_bytes(std::uint64_t bytes) {
  return bytes >= k_min_ring_bytes && bytes <= k_max_ring_bytes && (bytes & (bytes - 1)) == 0;
}

}  // namespace

ProgressLoop::Hooks ShmTransport::loop_hooks() {
  ProgressLoop::Hooks h;
  h.wait_ms = [this] { return wait_timeout_ms(busy_); };
  h.has_room = [this] { return events_.size() < k_shm_max_queued_events; };
  h.ready = [this](std::uint64_t id, std::uint32_t) {
    if (id < k_first_channel_id) {
      handle_listen(static_cast<std::uint32_t>(id - 1));
    } else {
      handle_socket(id);
    }
  };
  h.after_turn = [this] {
    busy_ = service_channels();
    if (!busy_) busy_ = !arm_channels();
    service_accept_limits();
    reap();
  };
  h.log = [this](const std::string& line) { log(line); };
  return h;
}

int ShmTransport::wait_timeout_ms(bool busy) {
  if (busy) return 0;
  // Only the progress thread adds deadlines and pauses: none can appear
  // between here and epoll_wait.
  std::lock_guard lock(mu_);
  return guard_.wait_ms(monotonic_now_ns());
}

void ShmTransport::set_listener_polled(std::uint32_t rail, bool polled) {
  poll_listener(loop_.epoll_fd(), listen_fds_[rail], 1 + rail, polled);
}

void ShmTransport::service_accept_limits() {
  guard_.service(
      monotonic_now_ns(),
      [this](std::uint64_t id) {
        if (channel(id) != nullptr) close_channel(id);
      },
      [this](std::size_t rail) { set_listener_polled(static_cast<std::uint32_t>(rail), true); });
}

// ---- hand-shake -------------------------------------------------------------------

void ShmTransport::handle_listen(std::uint32_t rail) {
  for (int taken = 0; taken < k_accepts_per_event; ++taken) {
    const int fd = ::accept4(listen_fds_[rail], nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      if (err == EINTR || err == ECONNABORTED) continue;
      // Out of descriptors (or any other failure): leave the epoll set for
      // the back-off instead of spinning on the level-triggered listener.
      if (guard_.accept_failed(rail, err, listen_address_.rails[rail], monotonic_now_ns())) {
        set_listener_polled(rail, false);
      }
      return;
    }
    guard_.accepted(rail);
    const std::uint64_t id = next_channel_id_++;
    // Abstract unix sockets carry no address; the connector's pid comes with its hello.
    if (!guard_.admit(rail, id, "a connector on shm:" + listen_names_[rail], monotonic_now_ns())) {
      ::close(fd);
      continue;
    }
    auto c = std::make_unique<Channel>();
    c->id = id;
    c->socket_fd = fd;
    c->local_rail = rail;
    c->state = ChannelState::awaiting_hello;
    c->remote = "a connector on shm:" + listen_names_[rail];
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.u64 = c->id;
    ::epoll_ctl(loop_.epoll_fd(), EPOLL_CTL_ADD, fd, &ev);
    channels_.emplace(c->id, std::move(c));
  }
}

void ShmTransport::handle_socket(std::uint64_t id) {
  Channel* c = channel(id);
  if (c == nullptr) return;  // closed earlier in this batch
  switch (c->state) {
    case ChannelState::awaiting_hello:
      on_hello(*c);                                 // a failed one is closed, but stays allocated until reap()
      if (c->peer != 0) guard_.handshake_done(id);  // grouped: no deadline any more
      return;
    case ChannelState::awaiting_reply: on_reply(*c); return;
    case ChannelState::open: break;
  }
  // After the hand-shake the socket is silent: readiness means a hang-up.
  std::byte probe{};
  const ssize_t n = ::recv(c->socket_fd, &probe, 1, MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n > 0) {
    fail_channel(*c, "unexpected datagram after the hand-shake");
  } else {
    fail_channel(*c, n == 0 ? "the other side closed (process gone or transport destroyed)"
                            : "socket error: " + errno_text(errno));
  }
}

void ShmTransport::refuse_hello(Channel& c, const Status& why) {
  ShmHelloReply reply;
  reply.status = static_cast<std::uint16_t>(why.code());
  reply.local_id = config_.local_id;
  const std::string text = why.message().substr(0, sizeof(reply.text) - 1);
  std::memcpy(reply.text, text.data(), text.size());
  send_with_fds(c.socket_fd, std::as_bytes(std::span(&reply, 1)), {}).ignore();  // best effort: closing anyway
  fail_channel(c, "hand-shake refused: " + why.message());
}

void ShmTransport::on_hello(Channel& c) {
  ShmHello hello;
  ReceivedFds fds;
  bool eof = false;
  const Status st =
      receive_with_fds(c.socket_fd, std::as_writable_bytes(std::span(&hello, 1)), fds.fds.data(), &fds.count, &eof);
  if (st.code() == StatusCode::again) return;
  if (!st.ok() || eof) {
    fail_channel(c, eof ? "closed before its hand-shake" : st.message());
    return;
  }
  if (hello.magic != k_shm_magic || hello.version != k_shm_wire_version || fds.count != 2 ||
      !valid_ring_bytes(hello.ring_bytes) || hello.channels == 0 || hello.channels > k_max_rails ||
      hello.rail >= hello.channels) {
    refuse_hello(c, error(StatusCode::corrupt, "malformed hello (magic, version, descriptors, ring size or rails)"));
    return;
  }
  const std::size_t footprint = ShmRing::footprint_bytes(hello.ring_bytes);
  Result<std::byte*> segment = map_segment(fds.fds[0], 2 * footprint);
  if (!segment.ok()) {
    refuse_hello(c, segment.status());
    return;
  }
  c.segment = *segment;
  c.segment_bytes = 2 * footprint;
  c.in = ShmRing(c.segment, hello.ring_bytes, false);  // the connector's outbound ring comes first
  c.out = ShmRing(c.segment + footprint, hello.ring_bytes, false);
  c.remote_doorbell_fd = fds.take(1);
  Result<pid_t> pid = socket_peer_pid(c.socket_fd);  // the kernel's word, not the hello's
  if (!pid.ok()) {
    refuse_hello(c, pid.status());
    return;
  }
  c.remote_pid = *pid;
  if (Status access = check_access(c.remote_pid, hello.probe_address, hello.probe_value); !access.ok()) {
    refuse_hello(c, access);
    return;
  }
  const std::pair<std::uint64_t, std::uint64_t> group{hello.instance, hello.peer};
  Peer* p = peers_.accepted(group);
  if (p == nullptr) {
    if (peers_.full()) {
      refuse_hello(c, error(StatusCode::again, "k_shm_max_peers (" + std::to_string(k_shm_max_peers) + ") live peers"));
      return;
    }
    auto peer = std::make_unique<Peer>();
    p = peer.get();
    p->id = peers_.draw_id();
    p->remote_id = hello.local_id;
    p->accepted = true;
    p->label = "shm peer " + std::to_string(p->id) + " (accepted on shm:" + listen_names_[c.local_rail] +
               " from process " + std::to_string(c.remote_pid) + ")";
    p->rails.resize(config_.rail_addresses.size());
    p->cursor.resize(config_.rail_addresses.size());
    p->expected = hello.channels;
    p->group = group;
    peers_.add(std::move(peer));
  }
  c.peer = p->id;
  p->rails[c.local_rail].push_back(c.id);
  if (hello.rail == 0) p->control = c.id;  // the connector's message channel carries ours too
  ShmHelloReply reply;
  reply.local_id = config_.local_id;
  reply.pid = static_cast<std::uint64_t>(::getpid());
  reply.probe_address = reinterpret_cast<std::uint64_t>(&probe_word_);
  reply.probe_value = probe_word_;
  const std::array<int, 1> ours{loop_.wake_fd()};
  if (Status sent = send_with_fds(c.socket_fd, std::as_bytes(std::span(&reply, 1)), ours); !sent.ok()) {
    fail_channel(c, "hand-shake reply: " + sent.message());
    return;
  }
  c.state = ChannelState::open;
  if (++p->greeted == p->expected) mark_up(*p);
}

void ShmTransport::on_reply(Channel& c) {
  ShmHelloReply reply;
  ReceivedFds fds;
  bool eof = false;
  const Status st =
      receive_with_fds(c.socket_fd, std::as_writable_bytes(std::span(&reply, 1)), fds.fds.data(), &fds.count, &eof);
  if (st.code() == StatusCode::again) return;
  if (!st.ok() || eof) {
    fail_channel(c, eof ? "closed during the hand-shake" : st.message());
    return;
  }
  if (reply.magic != k_shm_magic || reply.version != k_shm_wire_version) {
    fail_channel(c, "malformed hand-shake reply");
    return;
  }
  if (reply.status != 0) {
    reply.text[sizeof(reply.text) - 1] = '\0';
    fail_channel(c, std::string("refused by ") + c.remote + ": " + reply.text);
    return;
  }
  if (fds.count != 1) {
    fail_channel(c, "hand-shake reply without the doorbell descriptor");
    return;
  }
  c.remote_doorbell_fd = fds.take(0);
  Result<pid_t> pid = socket_peer_pid(c.socket_fd);
  if (!pid.ok()) {
    fail_channel(c, pid.status().message());
    return;
  }
  c.remote_pid = *pid;
  if (Status access = check_access(c.remote_pid, reply.probe_address, reply.probe_value); !access.ok()) {
    fail_channel(c, access.message());
    return;
  }
  Peer* p = live_peer(c.peer);
  if (p == nullptr) return;
  p->remote_id = reply.local_id;
  c.state = ChannelState::open;
  if (++p->greeted == p->expected) mark_up(*p);
}

// ---- rings ------------------------------------------------------------------------

bool ShmTransport::service_channels() {
  std::vector<std::uint64_t> ids;
  ids.reserve(channels_.size());
  for (const auto& [id, c] : channels_) {
    if (c->state == ChannelState::open) ids.push_back(id);
  }
  bool more = false;
  for (std::uint64_t id : ids) {
    Channel* c = channel(id);
    if (c == nullptr) continue;
    const Peer* p = live_peer(c->peer);
    if (p == nullptr || !p->up) continue;
    consume(*c);
    if (events_.size() >= k_shm_max_queued_events) return true;  // the loop waits for poll()
    c = channel(id);
    if (c == nullptr) continue;
    flush(*c);
    more = more || !c->in.empty();
  }
  return more;
}

void ShmTransport::consume(Channel& c) {
  for (std::size_t i = 0; i < k_shm_records_per_round && events_.size() < k_shm_max_queued_events; ++i) {
    RingRecord record;
    bool has_record = false;
    if (Status st = c.in.peek(record, has_record); !st.ok()) {
      fail_channel(c, st.message());
      return;
    }
    if (!has_record) return;
    if (Status st = on_record(c, record); !st.ok()) {
      fail_channel(c, st.message());
      return;
    }
    if (channel(c.id) == nullptr) return;
    if (c.in.release()) ring_doorbell(c.remote_doorbell_fd);
  }
}

Status ShmTransport::on_record(Channel& c, const RingRecord& record) {
  switch (static_cast<ShmRecord>(record.kind)) {
    case ShmRecord::message_first:
    case ShmRecord::message_more: return on_message_record(c, record);
    case ShmRecord::put:
    case ShmRecord::get: {
      if (record.payload.size() != sizeof(ShmBulk)) break;
      ShmBulk bulk;
      std::memcpy(&bulk, record.payload.data(), sizeof bulk);
      serve_bulk(c, bulk, static_cast<ShmRecord>(record.kind) == ShmRecord::get);
      return ok_status();
    }
    case ShmRecord::ack: {
      if (record.payload.size() < sizeof(ShmAck)) break;
      ShmAck ack;
      std::memcpy(&ack, record.payload.data(), sizeof ack);
      if (ack.text_bytes != record.payload.size() - sizeof ack ||
          ack.status > static_cast<std::uint32_t>(proto::WireEnumMax<StatusCode>::value)) {
        break;
      }
      const auto text = record.payload.subspan(sizeof ack);
      on_ack(c, ack, std::string_view(reinterpret_cast<const char*>(text.data()), text.size()));
      return ok_status();
    }
  }
  return error(StatusCode::corrupt, "corrupt ring record (kind " + std::to_string(record.kind) + ", " +
                                        std::to_string(record.payload.size()) + " bytes)");
}

Status ShmTransport::on_message_record(Channel& c, const RingRecord& record) {
  std::span<const std::byte> bytes = record.payload;
  if (static_cast<ShmRecord>(record.kind) == ShmRecord::message_first) {
    ShmMessageHead head;
    if (c.rx_active || bytes.size() < sizeof head) {
      return error(StatusCode::corrupt, "message record out of sequence");
    }
    std::memcpy(&head, bytes.data(), sizeof head);
    bytes = bytes.subspan(sizeof head);
    if (head.frame_bytes < proto::k_frame_header_bytes || head.frame_bytes > k_shm_max_message_bytes) {
      return error(StatusCode::corrupt, "message of " + std::to_string(head.frame_bytes) + " bytes outside " +
                                            std::to_string(proto::k_frame_header_bytes) + ".." +
                                            std::to_string(k_shm_max_message_bytes));
    }
    c.rx_active = true;
    c.rx_tag = head.tag;
    c.rx_frame_bytes = head.frame_bytes;
    c.rx_frame.clear();
    c.rx_frame.reserve(head.frame_bytes);
  } else if (!c.rx_active) {
    return error(StatusCode::corrupt, "message continuation without a start");
  }
  if (bytes.size() > c.rx_frame_bytes - c.rx_frame.size()) {
    return error(StatusCode::corrupt, "message records overrun the frame length");
  }
  c.rx_frame.insert(c.rx_frame.end(), bytes.begin(), bytes.end());
  if (c.rx_frame.size() < c.rx_frame_bytes) return ok_status();
  c.rx_active = false;
  Result<proto::FrameHeader> header = proto::parse_header(c.rx_frame);
  if (!header.ok() || header->frame_bytes() != c.rx_frame.size()) {
    return error(StatusCode::corrupt, "received frame failed its header check");
  }
  const Peer* p = live_peer(c.peer);
  push_event(MessageReceived{c.peer, p == nullptr ? 0 : p->remote_id, c.rx_tag, std::move(c.rx_frame)});
  c.rx_frame = {};
  return ok_status();
}

void ShmTransport::serve_bulk(Channel& c, const ShmBulk& bulk, bool is_get) {
  Status st;
  auto it = regions_.find(bulk.remote_key);
  const Peer* p = live_peer(c.peer);
  const std::uint64_t remote_id = p != nullptr ? p->remote_id : 0;
  if (config_.require_grants && (it == regions_.end() || !it->second->grants.allows(remote_id))) {
    // An unknown key reads as an ungranted one: a peer learns nothing of which keys exist.
    st = refusals_.refuse("shm", bulk.remote_key, remote_id, c.remote, [this](const std::string& line) { log(line); });
  } else if (it == regions_.end()) {
    st = error(StatusCode::not_found,
               "no region with key " + std::to_string(bulk.remote_key) + " at " + listen_address_.rails[0]);
  } else if (bulk.bytes == 0 || bulk.bytes > k_shm_max_transfer_bytes ||
             !range_inside(bulk.remote_offset, bulk.bytes, it->second->bytes.size())) {
    st = error(StatusCode::invalid_argument, "range [" + std::to_string(bulk.remote_offset) + ", +" +
                                                 std::to_string(bulk.bytes) + ") outside region " +
                                                 std::to_string(bulk.remote_key) + " of " +
                                                 std::to_string(it->second->bytes.size()) + " bytes");
  } else {
    const std::span<std::byte> mine = it->second->bytes.subspan(bulk.remote_offset, bulk.bytes);
    st = is_get ? copy_to_process(c.remote_pid, bulk.address, mine)
                : copy_from_process(c.remote_pid, bulk.address, mine);
  }
  TxItem ack;
  ack.kind = ShmRecord::ack;
  const std::string text = st.message().substr(0, k_max_ack_text_bytes);
  const ShmAck head{bulk.op, static_cast<std::uint32_t>(st.code()), static_cast<std::uint32_t>(text.size())};
  std::memcpy(ack.head.data(), &head, sizeof head);
  ack.head_bytes = sizeof head;
  ack.body.assign(reinterpret_cast<const std::byte*>(text.data()),
                  reinterpret_cast<const std::byte*>(text.data()) + text.size());  // empty: no memcpy from null
  enqueue(c, std::move(ack));
}

void ShmTransport::on_ack(Channel& c, const ShmAck& ack, std::string_view text) {
  auto it = ops_.find(ack.op);
  if (it == ops_.end() || it->second.peer != c.peer) {
    log("shm transport: ack for unknown operation " + std::to_string(ack.op) + " ignored");
    return;
  }
  const auto code = static_cast<StatusCode>(ack.status);
  complete_op(ack.op, code == StatusCode::ok ? ok_status() : Status(code, std::string(text)));
}

std::size_t ShmTransport::next_record_payload(const Channel& c) const {
  const TxItem& item = c.tx.front();
  const std::size_t max_payload = c.out.max_payload_bytes();
  switch (item.kind) {
    case ShmRecord::message_first:
      if (!item.started) return std::min(max_payload, item.head_bytes + item.body.size());
      return std::min(max_payload, item.body.size() - item.sent);
    case ShmRecord::ack: return item.head_bytes + item.body.size();
    default: return item.head_bytes;
  }
}

bool ShmTransport::write_front(Channel& c) {
  TxItem& item = c.tx.front();
  const std::size_t payload = next_record_payload(c);
  const bool continuation = item.kind == ShmRecord::message_first && item.started;
  std::byte* at =
      c.out.reserve(static_cast<std::uint16_t>(continuation ? ShmRecord::message_more : item.kind), payload);
  if (at == nullptr) return false;
  bool done = true;
  if (item.kind == ShmRecord::message_first) {
    std::size_t body_bytes = payload;
    if (!item.started) {
      std::memcpy(at, item.head.data(), item.head_bytes);
      at += item.head_bytes;
      body_bytes -= item.head_bytes;
      item.started = true;
    }
    std::memcpy(at, item.body.data() + item.sent, body_bytes);
    item.sent += body_bytes;
    done = item.sent == item.body.size();
  } else {
    std::memcpy(at, item.head.data(), item.head_bytes);
    if (!item.body.empty()) std::memcpy(at + item.head_bytes, item.body.data(), item.body.size());
  }
  if (c.out.commit()) ring_doorbell(c.remote_doorbell_fd);
  if (done) {
    if (item.message_bytes > 0) {
      if (Peer* p = live_peer(c.peer); p != nullptr) p->queued_message_bytes -= item.message_bytes;
    }
    c.tx.pop_front();
  }
  return true;
}

void ShmTransport::flush(Channel& c) {
  if (c.state != ChannelState::open) return;
  const Peer* p = live_peer(c.peer);
  if (p == nullptr || !p->up) return;
  while (!c.tx.empty() && write_front(c)) {
  }
}

bool ShmTransport::arm_channels() {
  for (auto& [id, c] : channels_) {
    if (c->state != ChannelState::open) continue;
    const Peer* p = live_peer(c->peer);
    if (p == nullptr || !p->up) continue;
    if (!c->in.arm_consumer()) return false;
    if (!c->tx.empty() && !c->out.arm_producer(next_record_payload(*c))) return false;
  }
  return true;
}

}  // namespace sluice::transport::shm::detail
