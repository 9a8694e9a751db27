// The receive path: packets parsed off each socket, bulk bodies received
// straight into the destination region, acknowledgements queued.
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <span>
#include <string>

#include "core/common/assert.hpp"
#include "core/proto/codec.hpp"
#include "transports/tcp/tcp_address.hpp"
#include "transports/tcp/tcp_transport_impl.hpp"

namespace sluice::transport::tcp::detail {

// ---- receive path -----------------------------------------------------------

void TcpTransport::rx_target(Connection& c, std::byte** into, std::uint64_t* want) {
  switch (c.rx) {
    case RxState::header:
      *into = c.head.data() + c.head_have;
      *want = c.head.size() - c.head_have;
      return;
    case RxState::message_body:
      *into = c.message.data() + (c.message.size() - c.left);
      *want = c.left;
      return;
    case RxState::bulk_body:
      *into = c.dst;
      *want = c.left;
      return;
    case RxState::discard_body:
      *into = drain_scratch_.data();
      *want = std::min<std::uint64_t>(c.left, drain_scratch_.size());
      return;
    case RxState::error_text:
      *into = reinterpret_cast<std::byte*>(c.text.data()) + (c.text.size() - c.left);
      *want = c.left;
      return;
  }
}

void TcpTransport::feed(Connection& c, std::span<const std::byte> bytes) {
  while (!c.dead && !bytes.empty()) {
    std::byte* into = nullptr;
    std::uint64_t want = 0;
    rx_target(c, &into, &want);
    SLUICE_ASSERT(want > 0);  // every state wants at least one byte (an empty error text ends at once)
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(want, bytes.size()));
    if (c.rx != RxState::discard_body) std::memcpy(into, bytes.data(), n);
    bytes = bytes.subspan(n);
    consumed(c, n);
  }
}

void TcpTransport::read_from(Connection& c) {
  std::uint64_t budget = k_tcp_read_budget_bytes;
  while (!c.dead && budget > 0) {
    std::byte* into = nullptr;
    std::uint64_t want = 0;
    rx_target(c, &into, &want);
    // A long bulk body straight into its region; everything else through
    // rx_buffer_, as many packets as one recv() brings.
    const bool direct = c.rx == RxState::bulk_body && want >= rx_buffer_.size();
    if (!direct) {
      into = rx_buffer_.data();
      want = rx_buffer_.size();
    }
    want = std::min(want, budget);
    // Before the peer proved itself: one byte past the bound at most.
    if (!c.authenticated) want = std::min<std::uint64_t>(want, k_tcp_max_preauth_rx_bytes + 1 - c.preauth_rx_bytes);
    const ssize_t n = ::recv(c.fd, into, want, 0);
    if (n == 0) {
      fail_connection(c, "connection from/to " + c.remote + " closed by the remote side", "closed by the remote side");
      return;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      fail_connection(c, "receive from " + c.remote + ": " + errno_text(errno), "receive error");
      return;
    }
    budget -= static_cast<std::uint64_t>(n);
    if (!c.authenticated) {
      c.preauth_rx_bytes += static_cast<std::uint64_t>(n);
      if (c.preauth_rx_bytes > k_tcp_max_preauth_rx_bytes) {
        const std::string reason = "pre-auth bytes over " + std::to_string(k_tcp_max_preauth_rx_bytes);
        fail_connection(c,
                        "refused unauthenticated peer " + c.remote + ": " + reason +
                            " (k_tcp_max_preauth_rx_bytes: its challenge and proof)",
                        reason);
        return;
      }
    }
    // An accepted connection before its hello names its group is in its
    // hand-shake: bytes move its idle deadline (handshake_idle_ms).
    if (c.accepted && c.peer == 0) guard_.activity(c.id, monotonic_now_ns());
    if (direct) {
      consumed(c, static_cast<std::size_t>(n));
    } else {
      feed(c, std::span<const std::byte>(rx_buffer_.data(), static_cast<std::size_t>(n)));
    }
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

Status TcpTransport::check_remote_range(const Connection& c, std::uint64_t key, std::uint64_t offset,
                                        std::uint64_t bytes, std::shared_ptr<Region>* region) {
  auto found = find_region(key);
  const Peer* p = live_peer(c.peer);
  const std::uint64_t remote_id = p != nullptr ? p->remote_id : 0;
  if (config_.require_grants && (!found || !found->grants.allows(remote_id))) {
    // An unknown key reads as an ungranted one: a peer learns nothing of which keys exist.
    return refusals_.refuse("tcp", key, remote_id, c.remote, [this](const std::string& line) { log(line); });
  }
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
    fail_connection(c, decoded.status().message(), "bad packet header");
    return;
  }
  const PacketHeader h = *decoded;
  c.cur = h;
  const bool auth_packet = h.kind == PacketKind::challenge || h.kind == PacketKind::proof;
  if (auth_packet) {
    if (!admit_auth_header(c, h)) return;
    c.message.assign(h.length, std::byte{0});
    c.left = h.length;
    c.rx = RxState::message_body;
    return;
  }
  if (!c.authenticated) {
    fail_connection(c,
                    "refused unauthenticated peer " + c.remote + ": it sent a " +
                        std::to_string(static_cast<int>(h.kind)) +
                        "-packet before proving knowledge of the shared secret",
                    "packet before authentication");
    return;
  }
  if (!c.greeted) {
    if (h.kind != PacketKind::hello) {
      fail_connection(c, "first packet from " + c.remote + " is not a hello", "first packet not a hello");
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
    case PacketKind::challenge:
    case PacketKind::proof: return;  // handled above
    case PacketKind::hello: fail_connection(c, "second hello from " + c.remote); return;
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
      c.refusal = check_remote_range(c, h.key, h.offset, h.length, &region);
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
      const Status st = check_remote_range(c, h.key, h.offset, h.length, &region);
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
        fail_connection(
            c, "get_data of " + std::to_string(h.length) + " bytes for a piece of " + std::to_string(it->second.bytes));
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

bool TcpTransport::hello_matches_proof(Connection& c, const PacketHeader& h) {
  if (config_.shared_secret.empty() || h.op == c.authenticated_id) return true;
  // Identity is what the handshake proved, not what a hello claims.
  fail_connection(c,
                  "refused " + c.remote + ": its hello claims node " + std::to_string(h.op) +
                      " but it authenticated as node " + std::to_string(c.authenticated_id),
                  "hello claims another node");
  return false;
}

void TcpTransport::on_hello(Connection& c, const PacketHeader& h) {
  if (!hello_matches_proof(c, h)) return;
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
    fail_connection(c,
                    "hello from " + c.remote + " with a bad group (rail " + std::to_string(rail) + ", connection " +
                        std::to_string(index) + ", group of " + std::to_string(h.length) + ")",
                    "bad hello group");
    return;
  }
  const std::pair<std::uint64_t, std::uint64_t> group{h.op, h.key};
  Peer* p = peers_.accepted(group);
  if (p == nullptr) {
    if (peers_.full()) {
      fail_connection(c,
                      "refused " + c.remote + ": k_tcp_max_peers (" + std::to_string(k_tcp_max_peers) + ") live peers",
                      "k_tcp_max_peers");
      return;
    }
    auto peer = std::make_unique<Peer>();
    peer->id = peers_.draw_id();
    peer->remote_id = h.op;
    peer->accepted = true;
    peer->label =
        "tcp peer " + std::to_string(peer->id) + " (remote id " + std::to_string(h.op) + " from " + c.remote + ")";
    peer->rails.resize(config_.rail_addresses.size());
    peer->cursor.resize(config_.rail_addresses.size());
    peer->expected = h.length;
    peer->group = group;
    p = &peers_.add(std::move(peer));
  } else {
    if (p->expected != h.length) {
      fail_connection(c, "hello from " + c.remote + " for a lost or inconsistent connection group", "bad hello group");
      return;
    }
  }
  c.peer = p->id;
  guard_.handshake_done(c.id);  // authenticated (if a secret is set) and grouped: no deadline any more
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

void TcpTransport::start_auth(Connection& c) {
  if (config_.shared_secret.empty()) return;
  Result<AuthBytes> nonce = make_auth_nonce();
  if (!nonce.ok()) {
    fail_connection(c, nonce.status().message(), "no nonce");
    return;
  }
  c.authenticated = false;
  c.nonce = *nonce;
  TxItem challenge;
  challenge.head = encode_packet_header(
      PacketHeader{PacketKind::challenge, StatusCode::ok, 0, config_.local_id, 0, 0, k_tcp_auth_bytes});
  challenge.owned.assign(c.nonce.begin(), c.nonce.end());
  challenge.body_bytes = k_tcp_auth_bytes;
  enqueue(c, std::move(challenge));
}

bool TcpTransport::admit_auth_header(Connection& c, const PacketHeader& h) {
  const auto refuse = [&](const std::string& what, std::string_view reason) {
    fail_connection(
        c, "refused " + std::string(c.authenticated ? "peer " : "unauthenticated peer ") + c.remote + ": " + what,
        reason);
    return false;
  };
  if (config_.shared_secret.empty()) {
    return refuse("it asks for authentication and this side has no shared secret", "no shared secret here");
  }
  if (h.length != k_tcp_auth_bytes) {
    return refuse(
        "authentication packet of " + std::to_string(h.length) + " bytes, expected " + std::to_string(k_tcp_auth_bytes),
        "bad authentication packet");
  }
  // One challenge, then one proof (tcp_auth.hpp), and nothing of either once the peer proved itself.
  if (c.authenticated) return refuse("an authentication packet after it proved itself", "authentication repeated");
  if (h.kind == PacketKind::challenge && c.peer_challenged) return refuse("a second challenge", "second challenge");
  if (h.kind == PacketKind::proof && !c.peer_challenged)
    return refuse("a proof before its challenge", "proof before challenge");
  return true;
}

void TcpTransport::send_proof(Connection& c) {
  const AuthRole self = c.accepted ? AuthRole::acceptor : AuthRole::connector;
  const AuthBytes& acceptor_nonce = c.accepted ? c.nonce : c.peer_nonce;
  const AuthBytes& connector_nonce = c.accepted ? c.peer_nonce : c.nonce;
  const AuthBytes answer = auth_proof(config_.shared_secret, self, acceptor_nonce, connector_nonce, config_.local_id);
  TxItem proof;
  proof.head = encode_packet_header(
      PacketHeader{PacketKind::proof, StatusCode::ok, 0, config_.local_id, 0, 0, k_tcp_auth_bytes});
  proof.owned.assign(answer.begin(), answer.end());
  proof.body_bytes = k_tcp_auth_bytes;
  enqueue(c, std::move(proof));
}

// admit_auth_header() let only the first challenge and then one proof through.
void TcpTransport::on_auth_packet(Connection& c, const PacketHeader& h, const std::vector<std::byte>& body) {
  AuthBytes got{};
  std::copy(body.begin(), body.end(), got.begin());
  if (h.kind == PacketKind::challenge) {
    c.peer_nonce = got;
    c.peer_challenged = true;
    // The connector proves first; the acceptor signs nothing until then.
    if (!c.accepted) send_proof(c);
    return;
  }
  const AuthRole other = c.accepted ? AuthRole::connector : AuthRole::acceptor;
  const AuthBytes& acceptor_nonce = c.accepted ? c.nonce : c.peer_nonce;
  const AuthBytes& connector_nonce = c.accepted ? c.peer_nonce : c.nonce;
  if (!auth_proof_matches(auth_proof(config_.shared_secret, other, acceptor_nonce, connector_nonce, h.op), got)) {
    fail_connection(c, "refused peer " + c.remote + ": wrong authentication proof (another or no shared secret)",
                    "wrong proof");
    return;
  }
  c.authenticated = true;
  c.authenticated_id = h.op;
  if (c.accepted) send_proof(c);  // now that the connector proved itself
  if (c.dead) return;
  flush(c);  // what waited for the peer to prove itself (the connector's hello)
}

void TcpTransport::on_body_done(Connection& c) {
  const PacketHeader h = c.cur;
  c.rx = RxState::header;
  switch (h.kind) {
    case PacketKind::challenge:
    case PacketKind::proof: {
      const std::vector<std::byte> body = std::move(c.message);
      c.message = {};
      on_auth_packet(c, h, body);
      return;
    }
    case PacketKind::message: {
      std::vector<std::byte> frame = std::move(c.message);
      c.message = {};
      Result<proto::FrameHeader> fh = proto::parse_header(frame);
      if (!fh.ok() || fh->frame_bytes() != frame.size()) {
        fail_connection(c, "malformed control frame: " + (fh.ok() ? "header says " + std::to_string(fh->frame_bytes()) +
                                                                        " bytes, packet " + std::to_string(frame.size())
                                                                  : fh.status().message()));
        return;
      }
      Peer* p = live_peer(c.peer);
      push_event(MessageReceived{c.peer, p != nullptr ? p->remote_id : 0, h.key, std::move(frame)});
      return;
    }
    case PacketKind::hello:
    case PacketKind::get_request: return;  // no body: on_header finished them
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
    case PacketKind::put_ack: complete_piece(h.op, Status(h.status, "put to " + c.remote + ": " + c.text)); return;
  }
}

}  // namespace sluice::transport::tcp::detail
