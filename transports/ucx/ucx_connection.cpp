// The UCX transport's connections: endpoints accepted and opened, the
// shared-secret hand-shake, the hello that groups a connection under a peer,
// control packets and frames in and out.
#if SLUICE_HAVE_UCX
#include <arpa/inet.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <sstream>

#include "core/common/assert.hpp"
#include "transports/tcp/tcp_address.hpp"
#include "transports/ucx/ucx_transport_impl.hpp"

namespace sluice::transport::ucx::detail {

void send_done_cb(void* request, ucs_status_t status, void* user_data) {
  auto* box = static_cast<RequestBox*>(user_data);
  box->transport->on_request_done(box, status);
  ucp_request_free(request);
}

void ep_error_cb(void* arg, ucp_ep_h ep, ucs_status_t status) {
  static_cast<UcxTransport*>(arg)->on_ep_error(ep, status);
}

ucp_ep_params_t endpoint_params(UcxTransport* transport) {
  ucp_ep_params_t ep{};
  ep.field_mask = UCP_EP_PARAM_FIELD_ERR_HANDLER | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  ep.err_handler.cb = ep_error_cb;
  ep.err_handler.arg = transport;
  return ep;
}

std::string ep_lanes(ucp_ep_h ep) {
  char* text = nullptr;
  std::size_t size = 0;
  FILE* out = ::open_memstream(&text, &size);
  if (out == nullptr) return "(lanes unknown)";
  ucp_ep_print_info(ep, out);
  std::fclose(out);
  // "#   lane[1]:  3:sysv/memory.0 md[2]  -> md[2]/sysv/sysdev[255] am am_bw#0" -> "sysv/memory (am am_bw#0)"
  static const std::regex k_lane(R"(lane\[\d+\]:\s+(?:cm (\S+)|\d+:(\S+?)\.\d+ .*-> \S+\s*(.*)))");
  std::string lanes;
  std::istringstream lines(std::string(text, size));
  std::free(text);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, k_lane)) continue;
    if (!lanes.empty()) lanes += "; ";
    if (m[1].matched) {
      lanes += "cm " + m[1].str();
    } else {
      lanes += m[2].str();
      if (m[3].length() > 0) lanes += " (" + m[3].str() + ")";
    }
  }
  return lanes.empty() ? "(no lanes)" : lanes;
}

namespace {

void recv_done_cb(void* request, ucs_status_t status, std::size_t /*length*/, void* user_data) {
  auto* box = static_cast<RequestBox*>(user_data);
  box->transport->on_request_done(box, status);
  ucp_request_free(request);
}

std::string address_text(const sockaddr_storage& address) {
  if (address.ss_family != AF_INET) return "(not IPv4)";
  return tcp::format_address(*reinterpret_cast<const sockaddr_in*>(&address));
}

}  // namespace

Conn& UcxTransport::add_conn(ucp_ep_h ep, std::uint32_t rail, bool accepted, std::string remote) {
  auto c = std::make_unique<Conn>();
  c->id = next_conn_id_++;
  c->ep = ep;
  c->rail = rail;
  c->accepted = accepted;
  c->remote = std::move(remote);
  Conn& ref = *c;
  conn_of_ep_[ep] = ref.id;
  conns_.emplace(ref.id, std::move(c));
  return ref;
}

void UcxTransport::close_conn(std::uint64_t id) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  std::unique_ptr<Conn> c = std::move(it->second);
  conns_.erase(it);
  conn_of_ep_.erase(c->ep);
  guard_->closed(id);
  forget_holder(id);
  ucp_request_param_t rp{};
  rp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  // Force: a flushing close leaves the endpoint registered while it fails,
  // and UCX 1.13 aborts the process (ucp_request_send: "unexpected error")
  // when a peer's software-emulated put or get arrives and its answer goes
  // out on such an endpoint (seen with UCX_TLS=tcp). The peer learns of the
  // close from its connection manager all the same.
  rp.flags = UCP_EP_CLOSE_FLAG_FORCE;
  void* request = ucp_ep_close_nbx(c->ep, &rp);
  if (request != nullptr && !UCS_PTR_IS_ERR(request)) closing_.push_back(request);
}

void UcxTransport::fail_conn(Conn& c, const std::string& why, std::string_view reason) {
  if (c.peer != 0) {
    fail_peer(c.peer, why);
  } else if (guard_->handshaking(c.id)) {
    guard_->log_handshake_failure("closing connection " + c.remote + ": " + why, monotonic_now_ns(), reason);
    close_conn(c.id);
  } else {
    log("ucx transport: closing connection " + c.remote + ": " + why);
    close_conn(c.id);
  }
}

void UcxTransport::on_conn_request(std::uint32_t rail, ucp_conn_request_h request) {
  ucp_conn_request_attr_t attr{};
  attr.field_mask = UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR;
  std::string from = "(unknown address)";
  if (ucp_conn_request_query(request, &attr) == UCS_OK) from = address_text(attr.client_address);
  const std::uint64_t id = next_conn_id_;
  if (!guard_->admit(rail, id, from, monotonic_now_ns())) {
    (void)ucp_listener_reject(rails_[rail].listener, request);
    return;
  }
  ucp_ep_params_t ep = endpoint_params(this);
  ep.field_mask |= UCP_EP_PARAM_FIELD_CONN_REQUEST;
  ep.conn_request = request;
  ucp_ep_h handle = nullptr;
  const ucs_status_t st = ucp_ep_create(rails_[rail].worker, &ep, &handle);
  if (st != UCS_OK) {
    guard_->closed(id);
    log("ucx transport: cannot accept " + from + " on rail " + std::to_string(rail) + ": " + ucs_status_string(st));
    return;
  }
  Conn& c = add_conn(handle, rail, true, from);
  SLUICE_ASSERT(c.id == id);
  start_handshake(c);
}

void UcxTransport::on_ep_error(ucp_ep_h ep, ucs_status_t status) {
  auto it = conn_of_ep_.find(ep);
  if (it == conn_of_ep_.end()) return;  // closed by us already
  Conn* c = conn(it->second);
  if (c == nullptr) return;
  fail_conn(*c, std::string("connection to ") + c->remote + " failed: " + ucs_status_string(status), "endpoint error");
}

// ---- sending -------------------------------------------------------------------

// One active message from `box` (its header at `header`, its data box->data),
// which the transport owns until UCX is done with it: true while UCX still
// sends it (the box goes back in send_done_cb), false when it left at once.
Result<bool> UcxTransport::send_am(Conn& c, unsigned id, RequestBox* box, const void* header, std::size_t header_bytes,
                                   std::uint32_t flags) {
  ucp_request_param_t rp{};
  rp.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
  rp.flags = UCP_AM_SEND_FLAG_REPLY | flags;
  rp.cb.send = send_done_cb;
  rp.user_data = box;
  void* request = ucp_am_send_nbx(c.ep, id, header, header_bytes, box->data.data(), box->data.size(), &rp);
  if (request == nullptr || UCS_PTR_IS_ERR(request)) delete box;
  if (UCS_PTR_IS_ERR(request)) {
    return error(StatusCode::unavailable,
                 std::string("ucx: send to ") + c.remote + ": " + ucs_status_string(UCS_PTR_STATUS(request)));
  }
  return request != nullptr;
}

Status UcxTransport::send_ctl(Conn& c, const CtlHeader& h, std::vector<std::byte> data) {
  auto* box = new RequestBox{this, RequestBox::What::send, 0, 0, 0, 0, h, std::move(data)};
  Result<bool> sent = send_am(c, k_am_control, box, &box->ctl, sizeof box->ctl, UCP_AM_SEND_FLAG_EAGER);
  return sent.ok() ? ok_status() : sent.status();
}

Status UcxTransport::send_frame(Conn& c, Peer& p, std::uint64_t tag, std::vector<std::byte> frame) {
  const std::uint64_t bytes = frame.size();
  auto* box = new RequestBox{this, RequestBox::What::send, p.id, 0, tag, bytes, CtlHeader{}, std::move(frame)};
  Result<bool> sent = send_am(c, k_am_frame, box, &box->tag, sizeof box->tag, 0);
  if (!sent.ok())
    return error(StatusCode::unavailable, "ucx send_message: " + p.label + ": " + sent.status().message());
  if (*sent) p.queued_message_bytes += bytes;  // until send_done_cb
  return ok_status();
}

// ---- the hand-shake ---------------------------------------------------------------
// With a shared secret: both sides send a challenge at once; the connector
// proves once the acceptor's challenge is in, the acceptor once that proof
// checked out, the connector says hello once the acceptor's proof checked out
// (tcp_auth.hpp). Without one: the connector says hello at once.

void UcxTransport::start_handshake(Conn& c) {
  if (config_.shared_secret.empty()) {
    if (!c.accepted) send_hello(c);
    return;
  }
  Result<AuthBytes> nonce = tcp::make_auth_nonce();
  if (!nonce.ok()) {
    fail_conn(c, nonce.status().message(), "no nonce");
    return;
  }
  c.mine = *nonce;
  CtlHeader h;
  h.kind = static_cast<std::uint32_t>(CtlKind::challenge);
  std::vector<std::byte> data(c.mine.begin(), c.mine.end());
  Status st = send_ctl(c, h, std::move(data));
  if (!st.ok()) fail_conn(c, st.message(), "send failed");
}

void UcxTransport::on_challenge(Conn& c, std::span<const std::byte> data) {
  if (config_.shared_secret.empty() || c.got_challenge || data.size() != c.theirs.size()) {
    fail_conn(c, "unexpected or malformed challenge", "bad challenge");
    return;
  }
  std::memcpy(c.theirs.data(), data.data(), data.size());
  c.got_challenge = true;
  if (c.accepted) return;  // the acceptor proves only after the connector did
  send_proof(c);
}

// This side's proof on `c`, as its role on the connection gives it (tcp_auth.hpp).
void UcxTransport::send_proof(Conn& c) {
  const AuthBytes& acceptor_nonce = c.accepted ? c.mine : c.theirs;
  const AuthBytes& connector_nonce = c.accepted ? c.theirs : c.mine;
  const tcp::AuthRole role = c.accepted ? tcp::AuthRole::acceptor : tcp::AuthRole::connector;
  const AuthBytes proof =
      tcp::auth_proof(config_.shared_secret, role, acceptor_nonce, connector_nonce, config_.local_id);
  CtlHeader h;
  h.kind = static_cast<std::uint32_t>(CtlKind::proof);
  h.a = config_.local_id;
  c.sent_proof = true;
  Status st = send_ctl(c, h, std::vector<std::byte>(proof.begin(), proof.end()));
  if (!st.ok()) fail_conn(c, st.message(), "send failed");
}

void UcxTransport::on_proof(Conn& c, const CtlHeader& h, std::span<const std::byte> data) {
  AuthBytes received{};
  if (config_.shared_secret.empty() || !c.got_challenge || c.authenticated || data.size() != received.size() ||
      (!c.accepted && !c.sent_proof)) {
    fail_conn(c, "unexpected or malformed proof", "bad proof");
    return;
  }
  std::memcpy(received.data(), data.data(), data.size());
  const AuthBytes& acceptor_nonce = c.accepted ? c.mine : c.theirs;
  const AuthBytes& connector_nonce = c.accepted ? c.theirs : c.mine;
  const tcp::AuthRole prover = c.accepted ? tcp::AuthRole::connector : tcp::AuthRole::acceptor;
  const AuthBytes expected = tcp::auth_proof(config_.shared_secret, prover, acceptor_nonce, connector_nonce, h.a);
  if (!tcp::auth_proof_matches(expected, received)) {
    fail_conn(c, "refused " + c.remote + ": wrong proof of the shared secret", "wrong proof");
    return;
  }
  c.authenticated = true;
  c.authenticated_id = h.a;
  guard_->activity(c.id, monotonic_now_ns());
  if (!c.accepted) {
    send_hello(c);
    return;
  }
  send_proof(c);
}

void UcxTransport::send_hello(Conn& c) {
  Peer* p = live_peer(c.peer);
  if (p == nullptr) return;
  CtlHeader h;
  h.kind = static_cast<std::uint32_t>(CtlKind::hello);
  h.a = config_.local_id;
  h.b = p->group.second;
  h.c = c.rail;
  h.d = p->expected;
  Status st = send_ctl(c, h);
  if (!st.ok()) fail_conn(c, st.message(), "send failed");
}

void UcxTransport::on_hello(Conn& c, const CtlHeader& h) {
  if (!c.accepted || c.peer != 0 || h.d == 0 || h.d > k_max_rails || h.c >= h.d) {
    fail_conn(c, "unexpected hello or a bad group (rail " + std::to_string(h.c) + " of " + std::to_string(h.d) + ")",
              "bad hello");
    return;
  }
  if (!config_.shared_secret.empty() && h.a != c.authenticated_id) {
    fail_conn(c,
              "refused " + c.remote + ": its hello claims node " + std::to_string(h.a) +
                  " but it authenticated as node " + std::to_string(c.authenticated_id),
              "hello claims another node");
    return;
  }
  const std::pair<std::uint64_t, std::uint64_t> group{h.a, h.b};
  Peer* p = peers_.accepted(group);
  if (p == nullptr) {
    if (peers_.full()) {
      fail_conn(c, "refused " + c.remote + ": k_ucx_max_peers (" + std::to_string(k_ucx_max_peers) + ") live peers",
                "k_ucx_max_peers");
      return;
    }
    auto peer = std::make_unique<Peer>();
    peer->id = peers_.draw_id();
    peer->remote_id = h.a;
    peer->accepted = true;
    peer->group = group;
    peer->label =
        "ucx peer " + std::to_string(peer->id) + " (remote id " + std::to_string(h.a) + " from " + c.remote + ")";
    peer->rails.assign(rails_.size(), 0);
    peer->expected = static_cast<std::uint32_t>(h.d);
    p = &peers_.add(std::move(peer));
  } else if (p->expected != h.d) {
    fail_conn(c, "hello from " + c.remote + " for an inconsistent connection group", "bad hello");
    return;
  }
  c.peer = p->id;
  guard_->handshake_done(c.id);
  if (p->rails[c.rail] == 0) p->rails[c.rail] = c.id;
  if (h.c == 0) p->control = c.id;
  CtlHeader ack;
  ack.kind = static_cast<std::uint32_t>(CtlKind::hello_ack);
  ack.a = config_.local_id;
  Status st = send_ctl(c, ack);
  if (!st.ok()) {
    fail_conn(c, st.message(), "send failed");
    return;
  }
  if (++p->greeted == p->expected) peer_up(*p, true);
}

void UcxTransport::on_hello_ack(Conn& c, const CtlHeader& h) {
  Peer* p = live_peer(c.peer);
  if (c.accepted || p == nullptr || p->up) {
    fail_conn(c, "unexpected hello answer", "bad hello");
    return;
  }
  if (!config_.shared_secret.empty() && h.a != c.authenticated_id) {
    fail_conn(c, "its hello answer claims another node than it authenticated as", "hello claims another node");
    return;
  }
  p->remote_id = h.a;
  if (++p->greeted == p->expected) peer_up(*p, false);
}

// ---- receiving ---------------------------------------------------------------------

// Frames, keys and revocations only on a connection that is authenticated (with a secret) and grouped.
bool UcxTransport::ready_for_data(Conn& c, std::string_view what) {
  if (c.peer != 0 && live_peer(c.peer) != nullptr && (config_.shared_secret.empty() || c.authenticated)) return true;
  fail_conn(c, std::string(what) + " before the hand-shake completed", "early packet");
  return false;
}

ucs_status_t UcxTransport::on_am(bool control, const void* header, std::size_t header_bytes, void* data,
                                 std::size_t bytes, const ucp_am_recv_param_t* param, std::uint32_t /*rail*/) {
  if ((param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) == 0) return UCS_OK;  // not ours: no sender to name
  auto it = conn_of_ep_.find(param->reply_ep);
  if (it == conn_of_ep_.end()) return UCS_OK;
  Conn* c = conn(it->second);
  if (c == nullptr) return UCS_OK;
  if (guard_->handshaking(c->id)) guard_->activity(c->id, monotonic_now_ns());
  const bool rndv = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
  if (control) {
    CtlHeader h;
    if (header_bytes != sizeof h || rndv) {
      fail_conn(*c, "malformed control packet (" + std::to_string(header_bytes) + "-byte header)", "bad packet");
      return UCS_OK;
    }
    std::memcpy(&h, header, sizeof h);
    on_control(*c, h, std::span<const std::byte>(static_cast<const std::byte*>(data), bytes));
    return UCS_OK;
  }
  std::uint64_t tag = 0;
  if (header_bytes != sizeof tag) {
    fail_conn(*c, "malformed frame header (" + std::to_string(header_bytes) + " bytes)", "bad packet");
    return UCS_OK;
  }
  std::memcpy(&tag, header, sizeof tag);
  on_frame(*c, tag, data, bytes, param);
  return UCS_OK;
}

void UcxTransport::on_control(Conn& c, const CtlHeader& h, std::span<const std::byte> data) {
  const auto kind = static_cast<CtlKind>(h.kind);
  const bool auth_done = config_.shared_secret.empty() || c.authenticated;
  switch (kind) {
    case CtlKind::challenge: return on_challenge(c, data);
    case CtlKind::proof: return on_proof(c, h, data);
    default: break;
  }
  if (!auth_done) {
    fail_conn(c, "packet " + std::to_string(h.kind) + " before authentication", "early packet");
    return;
  }
  switch (kind) {
    case CtlKind::hello: return on_hello(c, h);
    case CtlKind::hello_ack: return on_hello_ack(c, h);
    case CtlKind::key_query:
      if (ready_for_data(c, "key query")) on_key_query(c, h);
      return;
    case CtlKind::key_reply:
      if (ready_for_data(c, "key reply")) on_key_reply(c, h, data);
      return;
    case CtlKind::revoke:
      if (ready_for_data(c, "revocation")) on_revoke(c, h);
      return;
    case CtlKind::revoke_ack:
      if (ready_for_data(c, "revocation answer")) on_revoke_ack(c, h);
      return;
    default: fail_conn(c, "unknown control packet " + std::to_string(h.kind), "bad packet");
  }
}

void UcxTransport::on_frame(Conn& c, std::uint64_t tag, void* data, std::size_t bytes,
                            const ucp_am_recv_param_t* param) {
  if (!ready_for_data(c, "frame")) return;
  Peer* p = live_peer(c.peer);
  const std::uint64_t seq = c.inbox_first_seq + c.inbox.size();
  if (bytes > k_ucx_max_message_bytes) {
    fail_conn(c, "frame of " + std::to_string(bytes) + " bytes over k_ucx_max_message_bytes", "oversized frame");
    return;
  }
  if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) == 0) {
    MessageReceived m{p->id, p->remote_id, tag, {}};
    const auto* begin = static_cast<const std::byte*>(data);
    m.frame.assign(begin, begin + bytes);
    c.inbox.emplace_back(std::move(m));
    deliver_frames(c);
    return;
  }
  c.inbox.emplace_back(std::nullopt);  // its place, until the bytes are in
  auto* box =
      new RequestBox{this, RequestBox::What::recv_frame, c.id, seq, tag, 0, CtlHeader{}, std::vector<std::byte>(bytes)};
  ucp_request_param_t rp{};
  rp.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  rp.cb.recv_am = recv_done_cb;
  rp.user_data = box;
  void* request = ucp_am_recv_data_nbx(rails_[c.rail].worker, data, box->data.data(), bytes, &rp);
  if (request == nullptr) {
    on_request_done(box, UCS_OK);
  } else if (UCS_PTR_IS_ERR(request)) {
    on_request_done(box, UCS_PTR_STATUS(request));
  }
}

void UcxTransport::deliver_frames(Conn& c) {
  while (!c.inbox.empty() && c.inbox.front().has_value()) {
    push_event(std::move(*c.inbox.front()));
    c.inbox.pop_front();
    ++c.inbox_first_seq;
  }
}

void UcxTransport::on_request_done(RequestBox* box, ucs_status_t status) {
  std::unique_ptr<RequestBox> owned(box);
  switch (box->what) {
    case RequestBox::What::send: {
      if (box->frame_bytes == 0) return;
      Peer* p = live_peer(box->id);
      if (p != nullptr) p->queued_message_bytes -= box->frame_bytes;
      return;
    }
    case RequestBox::What::recv_frame: {
      Conn* c = conn(box->id);
      if (c == nullptr) return;
      if (status != UCS_OK) {
        fail_conn(*c, std::string("receiving a frame: ") + ucs_status_string(status), "receive failed");
        return;
      }
      Peer* p = live_peer(c->peer);
      if (p == nullptr || box->seq < c->inbox_first_seq) return;
      c->inbox[box->seq - c->inbox_first_seq] = MessageReceived{p->id, p->remote_id, box->tag, std::move(box->data)};
      deliver_frames(*c);
      return;
    }
    case RequestBox::What::put:
    case RequestBox::What::flush:
    case RequestBox::What::get: {
      auto it = ops_.find(box->id);
      if (it == ops_.end()) return;
      if (status != UCS_OK) {
        // The endpoint failed under the operation: the peer is lost, and
        // every operation on it completes naming it (its error handler may
        // come later than this completion).
        const char* what = box->what == RequestBox::What::get ? "a get" : "a put";
        fail_peer(it->second.peer, std::string(what) + " failed: " + ucs_status_string(status));
        return;
      }
      if (box->what != RequestBox::What::put) complete_op(box->id, ok_status());  // a put completes at its flush
      return;
    }
  }
}

}  // namespace sluice::transport::ucx::detail
#endif  // SLUICE_HAVE_UCX
