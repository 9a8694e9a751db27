// The data path: control frames over SEND/RECV on the control QP (with
// fragmentation and the region query/answer/revoke exchange), and bulk
// operations as RDMA WRITE/READ.
#if SLUICE_HAVE_IBVERBS
#include <algorithm>
#include <cstring>

#include "core/proto/codec.hpp"
#include "transports/region_range.hpp"
#include "transports/ibverbs/ibverbs_transport_impl.hpp"

namespace sluice::transport::ibverbs::detail {
namespace {

constexpr std::size_t k_fragment_bytes = k_ibv_control_slot_bytes - k_ibv_control_header_bytes;

}  // namespace

// ---- control frames --------------------------------------------------------------

Status IbverbsTransportImpl::send_message(PeerId peer, std::uint64_t tag, std::vector<std::byte> frame) {
  if (frame.size() > caps_.max_message_bytes) {
    return error(StatusCode::invalid_argument, "ibverbs send_message: frame of " + std::to_string(frame.size()) +
                                                   " bytes over the max message of " +
                                                   std::to_string(caps_.max_message_bytes));
  }
  Result<proto::FrameHeader> header = proto::parse_header(frame);
  if (!header.ok()) {
    return error(StatusCode::invalid_argument, "ibverbs send_message: not a valid frame: " + header.status().message());
  }
  if (header->frame_bytes() != frame.size()) {
    return error(StatusCode::invalid_argument, "ibverbs send_message: frame header says " +
                                                   std::to_string(header->frame_bytes()) + " bytes, got " +
                                                   std::to_string(frame.size()));
  }
  std::lock_guard lock(mu_);
  Peer* p = live_peer(peer);
  Connection* c = p != nullptr ? connection(p->control) : nullptr;
  if (c == nullptr) return error(StatusCode::unavailable, "ibverbs send_message: no live peer " + std::to_string(peer));
  if (p->queued_message_bytes + frame.size() > config_.max_queued_message_bytes) {
    return error(StatusCode::again, "ibverbs send_message: " + p->label + " has " +
                                        std::to_string(p->queued_message_bytes) +
                                        " bytes queued (max_queued_message_bytes " +
                                        std::to_string(config_.max_queued_message_bytes) + ")");
  }
  auto body = std::make_shared<const std::vector<std::byte>>(std::move(frame));
  const std::size_t total = body->size();
  std::size_t at = 0;
  do {
    TxItem item;
    const bool first = at == 0;
    item.head = encode_control_header(ControlHeader{first ? ControlKind::message_first : ControlKind::message_more,
                                                    StatusCode::ok, 0, first ? tag : 0, first ? total : 0, 0, 0});
    item.body = body;
    item.body_offset = at;
    item.body_bytes = std::min(k_fragment_bytes, total - at);
    item.message_bytes = item.body_bytes;
    at += item.body_bytes;
    p->queued_message_bytes += item.message_bytes;
    queue_control(*c, std::move(item));
  } while (at < total);
  flush_control(*c);
  return ok_status();
}

void IbverbsTransportImpl::queue_control(Connection& c, TxItem item) { c.backlog.push_back(std::move(item)); }

void IbverbsTransportImpl::flush_control(Connection& c) {
  if (!c.established || !c.control) return;
  while (!c.backlog.empty() && !c.free_send_slots.empty() && c.posted_sends < k_ibv_max_send_wr &&
         c.device->outstanding < c.device->cq_entries) {
    TxItem item = std::move(c.backlog.front());
    c.backlog.pop_front();
    const std::uint32_t slot = c.free_send_slots.back();
    c.free_send_slots.pop_back();
    std::byte* at = c.ring.data() + std::size_t{slot} * k_ibv_control_slot_bytes;
    std::memcpy(at, item.head.data(), item.head.size());
    if (item.body_bytes > 0) std::memcpy(at + item.head.size(), item.body->data() + item.body_offset, item.body_bytes);
    c.send_slot_message_bytes[slot - k_ibv_recv_ring_slots] = item.message_bytes;
    ibv_sge sge{};
    sge.addr = reinterpret_cast<std::uint64_t>(at);
    sge.length = static_cast<std::uint32_t>(item.head.size() + item.body_bytes);
    sge.lkey = c.ring_mr->lkey;
    ibv_send_wr wr{};
    wr.wr_id = next_wr_++;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr* bad = nullptr;
    if (const int err = ibv_post_send(c.cm->qp, &wr, &bad); err != 0) {
      fail_connection(c, "ibv_post_send (SEND): " + std::string(std::strerror(err)));
      return;
    }
    wrs_.emplace(wr.wr_id, WrInfo{WrKind::send, c.id, slot, 0});
    ++c.posted_sends;
    ++c.device->outstanding;
  }
}

Status IbverbsTransportImpl::post_receive(Connection& c, std::uint32_t slot) {
  ibv_sge sge{};
  sge.addr = reinterpret_cast<std::uint64_t>(c.ring.data() + std::size_t{slot} * k_ibv_control_slot_bytes);
  sge.length = k_ibv_control_slot_bytes;
  sge.lkey = c.ring_mr->lkey;
  ibv_recv_wr wr{};
  wr.wr_id = next_wr_++;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (const int err = ibv_post_recv(c.cm->qp, &wr, &bad); err != 0) {
    return error(StatusCode::unavailable, "ibverbs transport: ibv_post_recv: " + std::string(std::strerror(err)));
  }
  wrs_.emplace(wr.wr_id, WrInfo{WrKind::recv, c.id, slot, 0});
  ++c.device->outstanding;
  return ok_status();
}

void IbverbsTransportImpl::send_simple(PeerId peer, ControlKind kind, std::uint64_t key) {
  Peer* p = live_peer(peer);
  Connection* c = p != nullptr ? connection(p->control) : nullptr;
  if (c == nullptr) return;
  TxItem item;
  item.head = encode_control_header(ControlHeader{kind, StatusCode::ok, 0, key, 0, 0, 0});
  queue_control(*c, std::move(item));
  flush_control(*c);
}

std::uint32_t IbverbsTransportImpl::remote_rail_of(const Peer& p, std::uint32_t local_rail) const {
  for (std::uint64_t id : p.rails[local_rail]) {
    auto it = connections_.find(id);
    if (it != connections_.end()) return it->second->remote_rail;
  }
  return 0;
}

void IbverbsTransportImpl::send_region_query(Peer& p, std::uint32_t rail, std::uint64_t key) {
  Connection* c = connection(p.control);
  if (c == nullptr) return;
  TxItem item;
  item.head = encode_control_header(
      ControlHeader{ControlKind::region_query, StatusCode::ok, 0, key, rail, remote_rail_of(p, rail), 0});
  queue_control(*c, std::move(item));
  flush_control(*c);
}

void IbverbsTransportImpl::on_receive(Connection& c, std::span<const std::byte> bytes) {
  Result<ControlHeader> header = decode_control_header(bytes);
  if (!header.ok()) {
    fail_connection(c, header.status().message());
    return;
  }
  const ControlHeader& h = *header;
  const std::span<const std::byte> body = bytes.subspan(k_ibv_control_header_bytes);
  Peer* p = live_peer(c.peer);
  if (p == nullptr) return;
  switch (h.kind) {
    case ControlKind::message_first:
    case ControlKind::message_more: {
      const bool first = h.kind == ControlKind::message_first;
      if (first == c.in_message) {
        fail_connection(c, std::string("control stream out of step: ") + std::string(to_string(h.kind)) +
                               (first ? " inside a frame" : " outside a frame"));
        return;
      }
      if (first) {
        if (h.a == 0 || h.a > caps_.max_message_bytes) {
          fail_connection(c, "a frame of " + std::to_string(h.a) + " bytes announced");
          return;
        }
        c.in_message = true;
        c.message_tag = h.key;
        c.message_total = h.a;
        c.message.clear();
        c.message.reserve(h.a);
      }
      if (body.size() > c.message_total - c.message.size()) {
        fail_connection(c, "frame fragment overruns the announced " + std::to_string(c.message_total) + " bytes");
        return;
      }
      c.message.insert(c.message.end(), body.begin(), body.end());
      if (c.message.size() == c.message_total) {
        c.in_message = false;
        MessageReceived received{p->id, p->remote_id, c.message_tag, std::move(c.message)};
        if (p->up) {
          push_event(std::move(received));
        } else {
          p->early.push_back(std::move(received));
        }
        c.message = {};
      }
      return;
    }
    case ControlKind::region_query: on_region_query(c, h); return;
    case ControlKind::region_answer: on_region_answer(c, h, body); return;
    case ControlKind::region_revoke:
      if (remote_keys_.revoke(p->id, h.key)) send_simple(p->id, ControlKind::region_revoke_ack, h.key);
      return;
    case ControlKind::region_revoke_ack:
      if (auto it = revoking_.find(h.key); it != revoking_.end()) {
        it->second->awaiting_acks.erase(p->id);
        revoke_acked_.notify_all();
      }
      return;
  }
}

void IbverbsTransportImpl::on_region_query(Connection& c, const ControlHeader& h) {
  ControlHeader answer{ControlKind::region_answer, StatusCode::ok, 0, h.key, h.a, h.b, 0};
  std::vector<std::byte> body;
  auto it = regions_.find(h.key);
  const Peer* p = live_peer(c.peer);
  const std::uint64_t remote_id = p != nullptr ? p->remote_id : 0;
  Status refused;
  if (config_.require_grants && (it == regions_.end() || !it->second->granted_to.contains(remote_id))) {
    // Only a peer the owner granted (remote_access) learns the key; an
    // unknown key reads as an ungranted one.
    refused = refusals_.refuse("ibverbs", h.key, remote_id, c.remote, [this](const std::string& line) { log(line); });
  } else if (it == regions_.end()) {
    refused = error(StatusCode::not_found, "ibverbs: node " + std::to_string(config_.local_id) +
                                               " has no region with key " + std::to_string(h.key));
  } else if (h.b >= rail_device_.size()) {
    refused = error(StatusCode::invalid_argument,
                    "ibverbs: node " + std::to_string(config_.local_id) + " has no rail " + std::to_string(h.b));
  }
  if (!refused.ok()) {
    const std::string& text = refused.message();
    answer.status = refused.code();
    answer.text_bytes = static_cast<std::uint16_t>(std::min<std::size_t>(text.size(), k_ibv_max_error_text_bytes));
    const auto* chars = reinterpret_cast<const std::byte*>(text.data());
    body.assign(chars, chars + answer.text_bytes);
  } else {
    Region& region = *it->second;
    const Registration& reg = region.per_device[rail_device_[h.b]];
    const PackedRegion packed = pack_remote_region(
        RemoteRegionDesc{reinterpret_cast<std::uint64_t>(region.bytes.data()), reg.rkey, region.bytes.size()});
    body.assign(packed.begin(), packed.end());
    region.exported_to.insert(c.peer);
  }
  TxItem item;
  item.head = encode_control_header(answer);
  item.body_bytes = body.size();
  item.body = std::make_shared<const std::vector<std::byte>>(std::move(body));
  queue_control(c, std::move(item));
  flush_control(c);
}

void IbverbsTransportImpl::on_region_answer(Connection& c, const ControlHeader& h, std::span<const std::byte> body) {
  if (h.a >= rail_addresses_.size()) {
    fail_connection(c, "region_answer for rail " + std::to_string(h.a));
    return;
  }
  Result<RemoteRegionDesc> answer = error(StatusCode::internal, "");
  if (h.status == StatusCode::ok) {
    answer = unpack_remote_region(body);
    if (!answer.ok()) {
      fail_connection(c, answer.status().message());
      return;
    }
  } else {
    const std::size_t n = std::min<std::size_t>(h.text_bytes, body.size());
    answer = error(h.status, std::string(reinterpret_cast<const char*>(body.data()), n));
  }
  const PeerId peer = c.peer;
  for (const RemoteKeyCache::Waiter& w : remote_keys_.answered(peer, static_cast<std::uint32_t>(h.a), h.key, answer)) {
    auto op = ops_.find(w.op);
    if (op == ops_.end()) {
      if (w.use != 0) remote_keys_.finished(w.use);
      continue;
    }
    if (!answer.ok()) {
      complete_op(w.op, answer.status());
      continue;
    }
    op->second.use = w.use;
    op->second.remote = *answer;
    start_op(op->second);
  }
}

// ---- bulk operations ---------------------------------------------------------------

Status IbverbsTransportImpl::post(const BulkRequest& request, bool is_get) {
  const char* what = is_get ? "ibverbs get" : "ibverbs put";
  if (request.bytes == 0 || request.bytes > caps_.max_transfer_bytes) {
    return error(StatusCode::invalid_argument, std::string(what) + ": " + std::to_string(request.bytes) +
                                                   " bytes outside 1.." + std::to_string(caps_.max_transfer_bytes));
  }
  if (request.rail >= rail_addresses_.size()) {
    return error(StatusCode::invalid_argument, std::string(what) + ": rail " + std::to_string(request.rail) +
                                                   " but this transport has " + std::to_string(rail_addresses_.size()) +
                                                   " rails");
  }
  std::lock_guard lock(mu_);
  auto local = regions_.find(request.local_key);
  if (local == regions_.end()) {
    return error(StatusCode::invalid_argument,
                 std::string(what) + ": no local region with key " + std::to_string(request.local_key));
  }
  const Region& region = *local->second;
  if (!range_inside(request.local_offset, request.bytes, region.bytes.size())) {
    return error(StatusCode::invalid_argument,
                 std::string(what) + ": local range [" + std::to_string(request.local_offset) + ", +" +
                     std::to_string(request.bytes) + ") outside region " + std::to_string(request.local_key) + " of " +
                     std::to_string(region.bytes.size()) + " bytes");
  }
  Peer* p = live_peer(request.peer);
  if (p == nullptr) {
    return error(StatusCode::unavailable, std::string(what) + ": no live peer " + std::to_string(request.peer));
  }
  if (p->rails[request.rail].empty()) {
    return error(StatusCode::unavailable,
                 std::string(what) + ": " + p->label + " has no connection on rail " + std::to_string(request.rail));
  }
  if (ops_.size() >= config_.max_pending_ops) {
    return error(StatusCode::again,
                 std::string(what) + ": " + std::to_string(ops_.size()) + " operations pending (max_pending_ops)");
  }
  Op op;
  op.id = next_op_++;
  op.request = request;
  op.is_get = is_get;
  op.local_address = reinterpret_cast<std::uint64_t>(region.bytes.data()) + request.local_offset;
  op.lkey = region.per_device[rail_device_[request.rail]].lkey;
  if (request.remote_access) {
    // The owner's key came with the request: no region_query round trip.
    if (!prime_remote_key(request.peer, request.rail, request.remote_key, *request.remote_access)) {
      return error(StatusCode::again, std::string(what) + ": k_ibv_max_cached_remote_regions entries all in use");
    }
    // Operations that waited for a query of this entry started just now; one
    // of them may have lost the peer.
    p = live_peer(request.peer);
    if (p == nullptr) {
      return error(StatusCode::unavailable, std::string(what) + ": peer " + std::to_string(request.peer) + " lost");
    }
  }
  RemoteKeyCache::Lookup look = remote_keys_.want(request.peer, request.rail, request.remote_key, op.id);
  if (look.verdict == RemoteKeyCache::Verdict::full) {
    return error(StatusCode::again, std::string(what) + ": k_ibv_max_cached_remote_regions entries all in use");
  }
  const std::uint64_t id = op.id;
  Op& stored = ops_.emplace(id, std::move(op)).first->second;
  if (look.verdict == RemoteKeyCache::Verdict::hit) {
    stored.use = look.use;
    stored.remote = look.desc;
    start_op(stored);
  } else if (look.verdict == RemoteKeyCache::Verdict::query) {
    send_region_query(*p, request.rail, request.remote_key);
  }
  return ok_status();
}

void IbverbsTransportImpl::start_op(Op& op) {
  Result<std::uint64_t> address =
      remote_address_of(op.remote, op.request.remote_key, op.request.remote_offset, op.request.bytes);
  if (!address.ok()) {
    complete_op(op.id, address.status());
    return;
  }
  Peer* p = live_peer(op.request.peer);
  if (p == nullptr) return;  // failed with the peer
  const std::vector<std::uint64_t> rail = p->rails[op.request.rail];
  std::uint32_t& cursor = p->cursor[op.request.rail];
  const std::vector<TransferPiece> pieces = split_transfer(op.request.bytes, static_cast<std::uint32_t>(rail.size()));
  op.pieces_left = static_cast<std::uint32_t>(pieces.size());
  const std::uint64_t op_id = op.id;
  const PeerId peer = op.request.peer;  // `op` may be completed (erased) inside the loop
  for (const TransferPiece& piece : pieces) {
    const std::uint64_t conn_id = rail[cursor % rail.size()];
    cursor = static_cast<std::uint32_t>((cursor + 1) % rail.size());
    Connection* c = connection(conn_id);
    if (c == nullptr) {
      piece_done(op_id, error(StatusCode::unavailable, "ibverbs: " + p->label + ": connection gone"));
      continue;
    }
    c->waiting.push_back(PendingPiece{op_id, piece.offset, piece.bytes});
    drain_waiting(*c);
    if (live_peer(peer) == nullptr) return;  // posting failed the peer
  }
}

void IbverbsTransportImpl::drain_waiting(Connection& c) {
  const std::uint64_t id = c.id;
  while (c.established && !c.waiting.empty() && c.posted_sends < k_ibv_max_send_wr &&
         c.device->outstanding < c.device->cq_entries) {
    const PendingPiece piece = c.waiting.front();
    c.waiting.pop_front();
    auto op = ops_.find(piece.op);
    if (op == ops_.end()) continue;
    if (!post_bulk(c, op->second, piece) && connection(id) == nullptr) return;
  }
}

bool IbverbsTransportImpl::post_bulk(Connection& c, Op& op, const PendingPiece& piece) {
  ibv_sge sge{};
  sge.addr = op.local_address + piece.offset;
  sge.length = static_cast<std::uint32_t>(piece.bytes);
  sge.lkey = op.lkey;
  ibv_send_wr wr{};
  wr.wr_id = next_wr_++;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = op.is_get ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = op.remote.address + op.request.remote_offset + piece.offset;
  wr.wr.rdma.rkey = op.remote.rkey;
  ibv_send_wr* bad = nullptr;
  if (const int err = ibv_post_send(c.cm->qp, &wr, &bad); err != 0) {
    piece_done(op.id, error(StatusCode::io_error, "ibverbs: ibv_post_send (" +
                                                      std::string(op.is_get ? "RDMA READ" : "RDMA WRITE") + ") to " +
                                                      c.remote + ": " + std::strerror(err)));
    return false;
  }
  wrs_.emplace(wr.wr_id, WrInfo{WrKind::bulk, c.id, 0, op.id});
  ++c.posted_sends;
  ++c.device->outstanding;
  return true;
}

}  // namespace sluice::transport::ibverbs::detail
#endif
