// Completion: draining the CQs (non-blocking ibv_poll_cq, from the progress
// thread and from poll()), completing operations, and losing peers.
#if SLUICE_HAVE_IBVERBS
#include <algorithm>
#include <array>

#include "transports/ibverbs/ibverbs_transport_impl.hpp"

namespace sluice::transport::ibverbs::detail {

std::size_t IbverbsTransportImpl::drain_completions(Device& d) {
  std::size_t total = 0;
  std::array<ibv_wc, k_ibv_poll_batch> wcs{};
  while (events_.size() < k_ibv_max_queued_events) {
    const int n = ibv_poll_cq(d.cq, k_ibv_poll_batch, wcs.data());
    if (n <= 0) break;  // empty, or an error the next completion event reports
    for (int i = 0; i < n; ++i) on_completion(wcs[static_cast<std::size_t>(i)]);
    total += static_cast<std::size_t>(n);
  }
  return total;
}

void IbverbsTransportImpl::on_completion(const ibv_wc& wc) {
  auto it = wrs_.find(wc.wr_id);
  if (it == wrs_.end()) return;  // its connection was torn down
  const WrInfo w = it->second;
  wrs_.erase(it);
  Connection* c = connection(w.connection);
  if (c == nullptr) return;
  if (c->device->outstanding > 0) --c->device->outstanding;
  if (wc.status != IBV_WC_SUCCESS) {
    const char* what = w.kind == WrKind::recv ? "RECV" : w.kind == WrKind::send ? "SEND" : "RDMA";
    fail_connection(*c, std::string("work completion error on ") + what + ": " + ibv_wc_status_str(wc.status) +
                            " (vendor error " + std::to_string(wc.vendor_err) + ")");
    return;
  }
  switch (w.kind) {
    case WrKind::recv: {
      const std::span<const std::byte> bytes(c->ring.data() + std::size_t{w.slot} * k_ibv_control_slot_bytes,
                                             wc.byte_len);
      on_receive(*c, bytes);
      c = connection(w.connection);  // the message may have failed the peer
      if (c == nullptr) return;
      if (Status st = post_receive(*c, w.slot); !st.ok()) fail_connection(*c, st.message());
      return;
    }
    case WrKind::send: {
      --c->posted_sends;
      c->free_send_slots.push_back(w.slot);
      if (Peer* p = live_peer(c->peer)) {
        p->queued_message_bytes -=
            std::min(p->queued_message_bytes, c->send_slot_message_bytes[w.slot - k_ibv_recv_ring_slots]);
      }
      break;
    }
    case WrKind::bulk:
      --c->posted_sends;
      piece_done(w.op, ok_status());
      break;
  }
  c = connection(w.connection);
  if (c == nullptr) return;
  flush_control(*c);
  if ((c = connection(w.connection)) != nullptr) drain_waiting(*c);
}

void IbverbsTransportImpl::piece_done(std::uint64_t op_id, Status status) {
  auto it = ops_.find(op_id);
  if (it == ops_.end()) return;
  Op& op = it->second;
  if (!status.ok() && op.status.ok()) op.status = std::move(status);
  if (op.pieces_left > 0) --op.pieces_left;
  if (op.pieces_left == 0) complete_op(op_id, op.status);
}

void IbverbsTransportImpl::complete_op(std::uint64_t op_id, Status status) {
  auto it = ops_.find(op_id);
  if (it == ops_.end()) return;
  const Op op = std::move(it->second);
  ops_.erase(it);
  if (op.use != 0) {
    if (auto ack = remote_keys_.finished(op.use)) send_simple(ack->first, ControlKind::region_revoke_ack, ack->second);
  }
  const std::uint64_t bytes = status.ok() ? op.request.bytes : 0;
  push_event(OpDone{op.request.cookie, std::move(status), bytes});
}

void IbverbsTransportImpl::fail_connection(Connection& c, const std::string& why) {
  if (c.peer != 0 && live_peer(c.peer) != nullptr) {
    fail_peer(c.peer, why);
  } else {
    log("ibverbs transport: closing connection " + c.remote + ": " + why);
    destroy_connection(c.id);
  }
}

void IbverbsTransportImpl::fail_peer(PeerId id, const std::string& why) {
  Peer* p = live_peer(id);
  if (p == nullptr) return;
  const Status reason(StatusCode::unavailable, "ibverbs: " + p->label + ": " + why);
  log(reason.message());
  // Every pending operation completes once, oldest first.
  std::vector<std::uint64_t> failed;
  for (const auto& [op_id, op] : ops_) {
    if (op.request.peer == id) failed.push_back(op_id);
  }
  std::sort(failed.begin(), failed.end());
  remote_keys_.forget_peer(id);
  for (std::uint64_t op_id : failed) {
    auto it = ops_.find(op_id);
    const std::uint64_t cookie = it->second.request.cookie;
    ops_.erase(it);
    push_event(OpDone{cookie, reason, 0});
  }
  for (auto& [key, region] : regions_) region->exported_to.erase(id);
  for (auto& [key, region] : revoking_) region->awaiting_acks.erase(id);
  revoke_acked_.notify_all();
  for (const auto& rail : p->rails) {
    for (std::uint64_t conn : rail) destroy_connection(conn);
  }
  if (p->accepted) accepted_groups_.erase(p->group);
  // An accepted peer that never came up was never announced.
  const bool announce = !p->accepted || p->up;
  const std::uint64_t remote_id = p->remote_id;
  peers_.erase(id);
  if (announce) push_event(PeerDown{id, remote_id, reason});
}

}  // namespace sluice::transport::ibverbs::detail
#endif
