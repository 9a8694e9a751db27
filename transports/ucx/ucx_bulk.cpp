// The UCX transport's bulk path: a peer's packed remote key asked for once
// and cached, ucp_put_nbx + flush and ucp_get_nbx, and the revocation of a
// key when its owner deregisters the region (ucx_transport.hpp).
#if SLUICE_HAVE_UCX
#include "core/common/assert.hpp"
#include "transports/ucx/ucx_transport_impl.hpp"

namespace sluice::transport::ucx::detail {

namespace {

// Whether a status code from the wire names a StatusCode (the last one is permission_denied).
bool valid_status_code(std::uint32_t code) { return code <= static_cast<std::uint32_t>(StatusCode::permission_denied); }

}  // namespace

void UcxTransport::start_op(std::uint64_t op_id) {
  auto it = ops_.find(op_id);
  if (it == ops_.end()) return;
  const Op& op = it->second;
  Peer* p = live_peer(op.peer);
  if (p == nullptr)
    return complete_op(op_id, error(StatusCode::unavailable, "ucx: no live peer " + std::to_string(op.peer)));
  Conn* c = conn(p->rails[op.rail]);
  if (c == nullptr) {
    return complete_op(op_id, error(StatusCode::unavailable,
                                    "ucx: " + p->label + " has no connection on rail " + std::to_string(op.rail)));
  }
  const KeyRef ref{op.peer, op.rail, op.remote_key};
  auto k = keys_.find(ref);
  if (k != keys_.end()) {
    if (k->second->ready) return issue_op(op_id, k->second);
    k->second->waiting.push_back(op_id);
    return;
  }
  if (keys_.size() >= k_ucx_max_cached_keys) {
    return complete_op(
        op_id, error(StatusCode::again,
                     "ucx: k_ucx_max_cached_keys (" + std::to_string(k_ucx_max_cached_keys) + ") remote keys cached"));
  }
  auto entry = std::make_shared<RemoteKey>();
  entry->peer = op.peer;
  entry->conn = c->id;
  entry->key = op.remote_key;
  entry->waiting.push_back(op_id);
  keys_[ref] = entry;
  const std::uint64_t query = next_query_id_++;
  queries_[query] = entry;
  CtlHeader h;
  h.kind = static_cast<std::uint32_t>(CtlKind::key_query);
  h.a = op.remote_key;
  h.b = query;
  Status st = send_ctl(*c, h);
  if (!st.ok()) fail_conn(*c, st.message(), "send failed");
}

void UcxTransport::issue_op(std::uint64_t op_id, const std::shared_ptr<RemoteKey>& key) {
  auto it = ops_.find(op_id);
  if (it == ops_.end()) return;
  Op& op = it->second;
  const bool is_put = op.is_put;
  const char* what = is_put ? "ucx put" : "ucx get";
  if (op.remote_offset > key->length || op.bytes > key->length - op.remote_offset) {
    return complete_op(op_id, error(StatusCode::invalid_argument,
                                    std::string(what) + ": remote range " + std::to_string(op.remote_offset) + "+" +
                                        std::to_string(op.bytes) + " outside region " + std::to_string(key->key) +
                                        " of " + std::to_string(key->length) + " bytes"));
  }
  Conn* c = conn(key->conn);
  if (c == nullptr) return complete_op(op_id, error(StatusCode::unavailable, std::string(what) + ": connection lost"));
  op.key = key;
  ++key->in_flight;
  auto* box =
      new RequestBox{this, is_put ? RequestBox::What::put : RequestBox::What::get, op_id, 0, 0, 0, CtlHeader{}, {}};
  ucp_request_param_t rp{};
  rp.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  rp.cb.send = send_done_cb;
  rp.user_data = box;
  const std::uint64_t remote = key->address + op.remote_offset;
  void* request = op.is_put ? ucp_put_nbx(c->ep, op.local, op.bytes, remote, key->rkey, &rp)
                            : ucp_get_nbx(c->ep, op.local, op.bytes, remote, key->rkey, &rp);
  if (request == nullptr || UCS_PTR_IS_ERR(request)) {
    on_request_done(box, request == nullptr ? UCS_OK : UCS_PTR_STATUS(request));
    if (!is_put || !ops_.contains(op_id)) return;  // a get is done either way
  }
  if (!is_put) return;
  // A put is complete when the endpoint's flush says its bytes are in the remote region.
  auto* flush = new RequestBox{this, RequestBox::What::flush, op_id, 0, 0, 0, CtlHeader{}, {}};
  rp.user_data = flush;
  void* flushing = ucp_ep_flush_nbx(c->ep, &rp);
  if (flushing == nullptr || UCS_PTR_IS_ERR(flushing)) {
    on_request_done(flush, flushing == nullptr ? UCS_OK : UCS_PTR_STATUS(flushing));
  }
}

// The owner's side: the key of a region, to a peer it may reach (grants), through the rail the query came on.
void UcxTransport::on_key_query(Conn& c, const CtlHeader& h) {
  Peer* p = live_peer(c.peer);
  SLUICE_ASSERT(p != nullptr);
  CtlHeader reply;
  reply.kind = static_cast<std::uint32_t>(CtlKind::key_reply);
  reply.a = h.b;
  auto it = regions_.find(h.a);
  const bool known = it != regions_.end() && !it->second->revoking;
  Status refusal;
  if (config_.require_grants && (!known || !it->second->grants.allows(p->remote_id))) {
    refusal = refusals_.refuse("ucx", h.a, p->remote_id, c.remote, [this](const std::string& line) { log(line); });
  } else if (!known) {
    refusal = error(StatusCode::not_found,
                    "ucx: node " + std::to_string(config_.local_id) + " has no region with key " + std::to_string(h.a));
  }
  std::vector<std::byte> data;
  if (!refusal.ok()) {
    reply.status = static_cast<std::uint32_t>(refusal.code());
    const std::string& text = refusal.message();
    data.assign(reinterpret_cast<const std::byte*>(text.data()),
                reinterpret_cast<const std::byte*>(text.data()) + text.size());
  } else {
    Region& region = *it->second;
    reply.b = reinterpret_cast<std::uint64_t>(region.bytes.data());
    reply.c = region.bytes.size();
    data = region.mapping->packed[c.rail];
    region.holders.insert(c.id);
  }
  Status st = send_ctl(c, reply, std::move(data));
  if (!st.ok()) fail_conn(c, st.message(), "send failed");
}

void UcxTransport::on_key_reply(Conn& c, const CtlHeader& h, std::span<const std::byte> data) {
  auto q = queries_.find(h.a);
  if (q == queries_.end()) return;  // its ops already failed with their peer
  std::shared_ptr<RemoteKey> entry = q->second;
  queries_.erase(q);
  if (!valid_status_code(h.status)) {
    fail_conn(c, "key reply with status " + std::to_string(h.status), "bad packet");
    return;
  }
  Status failure;
  if (h.status != 0) {
    failure =
        Status(static_cast<StatusCode>(h.status), std::string(reinterpret_cast<const char*>(data.data()), data.size()));
  } else if (entry->retired) {
    failure = error(StatusCode::not_found, "ucx: region " + std::to_string(entry->key) + " was deregistered");
  } else {
    const ucs_status_t st = ucp_ep_rkey_unpack(c.ep, data.data(), &entry->rkey);
    if (st != UCS_OK)
      failure = error(StatusCode::unavailable, std::string("ucx: unpacking a remote key: ") + ucs_status_string(st));
  }
  std::vector<std::uint64_t> waiting = std::move(entry->waiting);
  entry->waiting.clear();
  if (!failure.ok()) {
    const KeyRef ref{entry->peer, conn(entry->conn) ? conn(entry->conn)->rail : 0, entry->key};
    auto k = keys_.find(ref);
    if (k != keys_.end() && k->second == entry) keys_.erase(k);
    for (std::uint64_t op : waiting) complete_op(op, failure);
    return;
  }
  entry->ready = true;
  entry->address = h.b;
  entry->length = h.c;
  for (std::uint64_t op : waiting) issue_op(op, entry);
}

// The holder's side: no new op takes the key; it is destroyed and the owner answered once its ops are done.
void UcxTransport::on_revoke(Conn& c, const CtlHeader& h) {
  std::shared_ptr<RemoteKey> entry;
  for (auto it = keys_.begin(); it != keys_.end(); ++it) {
    if (it->second->conn == c.id && it->second->key == h.a) {
      entry = it->second;
      break;
    }
  }
  if (!entry) {
    CtlHeader ack;
    ack.kind = static_cast<std::uint32_t>(CtlKind::revoke_ack);
    ack.a = h.b;
    Status st = send_ctl(c, ack);
    if (!st.ok()) fail_conn(c, st.message(), "send failed");
    return;
  }
  entry->acks.emplace_back(c.id, h.b);
  retire_key(entry);
}

void UcxTransport::on_revoke_ack(Conn& c, const CtlHeader& h) {
  auto it = revocations_.find(h.a);
  if (it == revocations_.end()) return;
  it->second.waiting.erase(c.id);
  revoked_.notify_all();
}

void UcxTransport::retire_key(const std::shared_ptr<RemoteKey>& key) {
  Conn* c = conn(key->conn);
  if (c != nullptr) {
    auto k = keys_.find(KeyRef{key->peer, c->rail, key->key});
    if (k != keys_.end() && k->second == key) keys_.erase(k);
  }
  key->retired = true;
  key->in_flight += 1;  // settled by the release below when nothing else uses it
  release_key_use(key);
}

void UcxTransport::release_key_use(const std::shared_ptr<RemoteKey>& key) {
  SLUICE_ASSERT(key->in_flight > 0);
  if (--key->in_flight > 0 || !key->retired) return;
  if (key->rkey != nullptr) {
    dead_rkeys_.push_back(key->rkey);
    key->rkey = nullptr;
  }
  for (const auto& [conn_id, revocation] : key->acks) {
    Conn* c = conn(conn_id);
    if (c == nullptr) continue;
    CtlHeader ack;
    ack.kind = static_cast<std::uint32_t>(CtlKind::revoke_ack);
    ack.a = revocation;
    Status st = send_ctl(*c, ack);
    if (!st.ok()) fail_conn(*c, st.message(), "send failed");
  }
  key->acks.clear();
}

// A lost peer's keys: none is used again; each is destroyed once UCX has closed the endpoints.
void UcxTransport::drop_peer_keys(PeerId peer) {
  for (auto it = keys_.begin(); it != keys_.end();) {
    if (std::get<0>(it->first) != peer) {
      ++it;
      continue;
    }
    std::shared_ptr<RemoteKey> key = it->second;
    it = keys_.erase(it);
    key->retired = true;
    key->acks.clear();
    if (key->in_flight == 0 && key->rkey != nullptr) {
      dead_rkeys_.push_back(key->rkey);
      key->rkey = nullptr;
    }
  }
  for (auto it = queries_.begin(); it != queries_.end();) {
    it = it->second->peer == peer ? queries_.erase(it) : std::next(it);
  }
}

void UcxTransport::forget_holder(std::uint64_t conn_id) {
  for (auto& [key, region] : regions_) region->holders.erase(conn_id);
  bool changed = false;
  for (auto& [id, revocation] : revocations_) changed = revocation.waiting.erase(conn_id) > 0 || changed;
  if (changed) revoked_.notify_all();
}

}  // namespace sluice::transport::ucx::detail
#endif  // SLUICE_HAVE_UCX
