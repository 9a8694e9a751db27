// rdma_cm: devices behind the rails, connecting and accepting RC queue pairs,
// and tearing them down.
#if SLUICE_HAVE_IBVERBS
#include <fcntl.h>
#include <sys/epoll.h>

#include <cerrno>
#include <cstring>

#include "transports/ibverbs/ibverbs_address.hpp"
#include "transports/ibverbs/ibverbs_transport_impl.hpp"

namespace sluice::transport::ibverbs::detail {
namespace {

std::string errno_text(int err) { return std::string(std::strerror(err)) + " (errno " + std::to_string(err) + ")"; }

// The acceptor groups a peer's connections by (local_id, nonce): the nonce
// mixes this transport's first listen address into the peer id, so two
// transports that share a local_id by mistake still form distinct groups.
std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xFF51AFD7ED558CCDULL;  // MurmurHash3 fmix64
  x ^= x >> 33;
  return x;
}

std::uint64_t context_of(rdma_cm_id* id) {
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(id->context));
}

}  // namespace

std::uint64_t IbverbsTransportImpl::nonce_of(PeerId peer) const {
  const sockaddr_in& first = rail_addresses_.front();
  return mix((std::uint64_t{first.sin_addr.s_addr} << 16 | first.sin_port) ^ (peer << 48)) ^ peer;
}

Result<Device*> IbverbsTransportImpl::device_for(ibv_context* verbs) {
  for (auto& d : devices_) {
    if (d->verbs == verbs) return d.get();
  }
  auto d = std::make_unique<Device>();
  d->index = static_cast<std::uint32_t>(devices_.size());
  d->verbs = verbs;
  d->name = ibv_get_device_name(verbs->device);
  ibv_device_attr attr{};
  if (ibv_query_device(verbs, &attr) != 0) {
    return error(StatusCode::unavailable, "ibverbs transport: ibv_query_device " + d->name + ": " + errno_text(errno));
  }
  // Responder resources and initiator depth: what both the responder and the
  // initiator side of this device allow, capped.
  d->rd_atomic = static_cast<std::uint8_t>(
      std::clamp(std::min(attr.max_qp_rd_atom, attr.max_qp_init_rd_atom), 1, int{k_ibv_max_rd_atomic}));
  d->cq_entries = static_cast<std::uint32_t>(std::min(attr.max_cqe, k_ibv_cq_entries));
  d->pd = ibv_alloc_pd(verbs);
  d->channel = d->pd != nullptr ? ibv_create_comp_channel(verbs) : nullptr;
  d->cq =
      d->channel != nullptr ? ibv_create_cq(verbs, static_cast<int>(d->cq_entries), nullptr, d->channel, 0) : nullptr;
  if (d->cq == nullptr) {
    const std::string why = errno_text(errno);
    if (d->channel != nullptr) ibv_destroy_comp_channel(d->channel);
    if (d->pd != nullptr) ibv_dealloc_pd(d->pd);
    return error(StatusCode::unavailable, "ibverbs transport: protection domain / CQ on " + d->name + ": " + why);
  }
  const int flags = ::fcntl(d->channel->fd, F_GETFL);
  ::fcntl(d->channel->fd, F_SETFL, flags | O_NONBLOCK);
  ibv_req_notify_cq(d->cq, 0);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = k_first_device_tag + d->index;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, d->channel->fd, &ev);
  // Regions registered before this device appeared are registered on it too.
  for (auto& [key, region] : regions_) {
    RegistrationRequest req{d->index,
                            reinterpret_cast<std::uint64_t>(region->bytes.data()),
                            region->bytes.size(),
                            region->kind,
                            region->dmabuf_fd,
                            region->dmabuf_offset};
    Result<Registration> reg = registrations_->acquire(req);
    region->per_device.resize(devices_.size() + 1);
    if (reg.ok()) region->per_device[d->index] = *reg;
  }
  log("ibverbs transport: using device " + d->name);
  devices_.push_back(std::move(d));
  return devices_.back().get();
}

Connection& IbverbsTransportImpl::new_connection(rdma_cm_id* id) {
  auto c = std::make_unique<Connection>();
  c->id = next_connection_id_++;
  c->cm = id;
  id->context = reinterpret_cast<void*>(static_cast<std::uintptr_t>(c->id));
  Connection& ref = *c;
  connections_.emplace(ref.id, std::move(c));
  return ref;
}

Status IbverbsTransportImpl::create_queue_pair(Connection& c) {
  Result<Device*> device = device_for(c.cm->verbs);
  if (!device.ok()) return device.status();
  Device& d = **device;
  const std::uint32_t recv_slots = c.control ? k_ibv_recv_ring_slots : 0;
  if (d.outstanding + recv_slots + k_ibv_max_send_wr > d.cq_entries) {
    return error(StatusCode::again, "ibverbs transport: completion queue of " + d.name + " full (" +
                                        std::to_string(d.cq_entries) + " entries, k_ibv_cq_entries)");
  }
  c.device = &d;
  ibv_qp_init_attr attr{};
  attr.send_cq = d.cq;
  attr.recv_cq = d.cq;
  attr.qp_type = IBV_QPT_RC;
  attr.cap.max_send_wr = k_ibv_max_send_wr;
  attr.cap.max_recv_wr = std::max<std::uint32_t>(recv_slots, 1);
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  if (rdma_create_qp(c.cm, d.pd, &attr) != 0) {
    return error(StatusCode::unavailable, "ibverbs transport: rdma_create_qp on " + d.name + ": " + errno_text(errno));
  }
  if (!c.control) return ok_status();
  const std::size_t slots = std::size_t{k_ibv_recv_ring_slots} + k_ibv_send_ring_slots;
  c.ring.assign(slots * k_ibv_control_slot_bytes, std::byte{0});
  c.ring_mr = ibv_reg_mr(d.pd, c.ring.data(), c.ring.size(), IBV_ACCESS_LOCAL_WRITE);
  if (c.ring_mr == nullptr) {
    return error(StatusCode::unavailable,
                 "ibverbs transport: registering the control ring on " + d.name + ": " + errno_text(errno));
  }
  c.send_slot_message_bytes.assign(k_ibv_send_ring_slots, 0);
  for (std::uint32_t s = 0; s < k_ibv_send_ring_slots; ++s) c.free_send_slots.push_back(k_ibv_recv_ring_slots + s);
  for (std::uint32_t s = 0; s < k_ibv_recv_ring_slots; ++s) {
    if (Status st = post_receive(c, s); !st.ok()) return st;
  }
  return ok_status();
}

void IbverbsTransportImpl::destroy_connection(std::uint64_t id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  Connection& c = *it->second;
  for (auto w = wrs_.begin(); w != wrs_.end();) {
    if (w->second.connection == id) {
      if (c.device != nullptr && c.device->outstanding > 0) --c.device->outstanding;
      w = wrs_.erase(w);
    } else {
      ++w;
    }
  }
  if (c.cm != nullptr) {
    if (c.established) rdma_disconnect(c.cm);
    if (c.cm->qp != nullptr) rdma_destroy_qp(c.cm);
    rdma_destroy_id(c.cm);
  }
  if (c.ring_mr != nullptr) ibv_dereg_mr(c.ring_mr);
  connections_.erase(it);
}

// ---- connecting ----------------------------------------------------------------

Result<PeerId> IbverbsTransportImpl::connect(const PeerAddress& remote) {
  if (remote.rails.empty() || remote.rails.size() > k_max_rails) {
    return error(StatusCode::invalid_argument, "ibverbs connect: " + std::to_string(remote.rails.size()) +
                                                   " remote rails; need 1.." + std::to_string(k_max_rails));
  }
  std::vector<sockaddr_in> targets;
  for (const std::string& text : remote.rails) {
    Result<sockaddr_in> address = parse_rail_address(text);
    if (!address.ok()) return address.status();
    targets.push_back(*address);
  }
  std::lock_guard lock(mu_);
  if (peers_.size() >= k_ibv_max_peers) {
    return error(StatusCode::again, "ibverbs connect: " + std::to_string(peers_.size()) + " peers (k_ibv_max_peers)");
  }
  auto p = std::make_unique<Peer>();
  p->id = next_peer_++;
  p->label = "ibverbs peer " + std::to_string(p->id) + " (" + remote.rails[0] + ")";
  const auto rails = static_cast<std::uint32_t>(rail_addresses_.size());
  p->rails.resize(rails);
  p->cursor.assign(rails, 0);
  p->expected = rails * config_.connections_per_rail;
  Peer& peer = *p;
  peers_.emplace(peer.id, std::move(p));
  std::string failure;
  for (std::uint32_t rail = 0; rail < rails && failure.empty(); ++rail) {
    for (std::uint32_t i = 0; i < config_.connections_per_rail && failure.empty(); ++i) {
      rdma_cm_id* id = nullptr;
      if (rdma_create_id(cm_channel_, &id, nullptr, RDMA_PS_TCP) != 0) {
        failure = "rdma_create_id: " + errno_text(errno);
        break;
      }
      Connection& c = new_connection(id);
      c.peer = peer.id;
      c.local_rail = rail;
      c.remote_rail = rail % static_cast<std::uint32_t>(targets.size());
      c.index = i;
      c.control = rail == 0 && i == 0;
      c.remote = remote.rails[c.remote_rail];
      if (c.control) peer.control = c.id;
      peer.rails[rail].push_back(c.id);
      sockaddr_in source = rail_addresses_[rail];
      source.sin_port = 0;
      if (rdma_resolve_addr(id, reinterpret_cast<sockaddr*>(&source),
                            reinterpret_cast<sockaddr*>(&targets[c.remote_rail]), k_ibv_resolve_timeout_ms) != 0) {
        failure = "rdma_resolve_addr " + c.remote + ": " + errno_text(errno);
      }
    }
  }
  const PeerId id = peer.id;
  if (!failure.empty()) fail_peer(id, "connect failed: " + failure);
  return id;
}

Status IbverbsTransportImpl::disconnect(PeerId peer) {
  std::lock_guard lock(mu_);
  if (live_peer(peer) == nullptr) {
    return error(StatusCode::not_found, "ibverbs disconnect: no peer " + std::to_string(peer));
  }
  fail_peer(peer, "disconnected");
  return ok_status();
}

// ---- rdma_cm events ------------------------------------------------------------------

void IbverbsTransportImpl::handle_cm_events() {
  while (true) {
    rdma_cm_event* event = nullptr;
    if (rdma_get_cm_event(cm_channel_, &event) != 0) return;  // EAGAIN: drained
    // Copy what is needed and ack at once: rdma_destroy_id() waits for the
    // acks of its id's events, and handlers may destroy ids.
    const rdma_cm_event_type type = event->event;
    const int event_status = event->status;
    rdma_cm_id* id = event->id;
    const std::uint64_t listen_context = event->listen_id != nullptr ? context_of(event->listen_id) : 0;
    const std::uint64_t context = type == RDMA_CM_EVENT_CONNECT_REQUEST ? 0 : context_of(id);
    std::vector<std::byte> private_data;
    if ((type == RDMA_CM_EVENT_CONNECT_REQUEST || type == RDMA_CM_EVENT_ESTABLISHED) &&
        event->param.conn.private_data != nullptr) {
      const auto* bytes = static_cast<const std::byte*>(event->param.conn.private_data);
      private_data.assign(bytes, bytes + event->param.conn.private_data_len);
    }
    rdma_ack_cm_event(event);

    if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
      on_connect_request(id, static_cast<std::uint32_t>(listen_context - 1), private_data);
      continue;
    }
    Connection* c = connection(context);
    if (c == nullptr) continue;  // a connection already torn down
    switch (type) {
      case RDMA_CM_EVENT_ADDR_RESOLVED:
        if (Status st = create_queue_pair(*c); !st.ok()) {
          fail_connection(*c, st.message());
        } else if (rdma_resolve_route(c->cm, k_ibv_resolve_timeout_ms) != 0) {
          fail_connection(*c, "rdma_resolve_route " + c->remote + ": " + errno_text(errno));
        }
        break;
      case RDMA_CM_EVENT_ROUTE_RESOLVED: {
        Peer* p = live_peer(c->peer);
        if (p == nullptr) break;
        const HelloBytes hello = encode_hello(Hello{config_.local_id, nonce_of(p->id), c->local_rail, c->index,
                                                    p->expected, static_cast<std::uint32_t>(rail_addresses_.size())});
        rdma_conn_param param{};
        param.private_data = hello.data();
        param.private_data_len = static_cast<std::uint8_t>(hello.size());
        param.responder_resources = c->device->rd_atomic;
        param.initiator_depth = c->device->rd_atomic;
        param.retry_count = k_ibv_retry_count;
        param.rnr_retry_count = k_ibv_rnr_retry;
        std::uint8_t timeout = k_ibv_ack_timeout;
        rdma_set_option(c->cm, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout, sizeof timeout);
        if (rdma_connect(c->cm, &param) != 0)
          fail_connection(*c, "rdma_connect " + c->remote + ": " + errno_text(errno));
        break;
      }
      case RDMA_CM_EVENT_ESTABLISHED: on_established(*c, private_data); break;
      case RDMA_CM_EVENT_ADDR_ERROR:
      case RDMA_CM_EVENT_ROUTE_ERROR:
      case RDMA_CM_EVENT_CONNECT_ERROR:
      case RDMA_CM_EVENT_UNREACHABLE:
      case RDMA_CM_EVENT_REJECTED:
        fail_connection(*c, "connect to " + c->remote + " failed: " + rdma_event_str(type) + " (status " +
                                std::to_string(event_status) + ")");
        break;
      case RDMA_CM_EVENT_DISCONNECTED:
        fail_connection(*c, "disconnected by the remote side (" + c->remote + ")");
        break;
      case RDMA_CM_EVENT_DEVICE_REMOVAL: fail_connection(*c, "RDMA device removed"); break;
      default: break;  // TIMEWAIT_EXIT, ADDR_CHANGE, ...: nothing to do
    }
  }
}

void IbverbsTransportImpl::on_connect_request(rdma_cm_id* id, std::uint32_t rail,
                                              std::span<const std::byte> private_data) {
  Result<Hello> hello = decode_hello(private_data);
  if (!hello.ok() || rail >= rail_addresses_.size()) {
    log("ibverbs transport: refusing a connection: " + (hello.ok() ? "unknown rail" : hello.status().message()));
    rdma_reject(id, nullptr, 0);
    rdma_destroy_id(id);
    return;
  }
  const auto key = std::make_pair(hello->local_id, hello->nonce);
  Peer* p = nullptr;
  if (auto it = accepted_groups_.find(key); it != accepted_groups_.end()) p = live_peer(it->second);
  if (p == nullptr) {
    if (peers_.size() >= k_ibv_max_peers) {
      log("ibverbs transport: refusing a connection: k_ibv_max_peers reached");
      rdma_reject(id, nullptr, 0);
      rdma_destroy_id(id);
      return;
    }
    auto made = std::make_unique<Peer>();
    made->id = next_peer_++;
    made->accepted = true;
    made->remote_id = hello->local_id;
    made->group = key;
    made->expected = hello->group;
    made->rails.resize(rail_addresses_.size());
    made->cursor.assign(rail_addresses_.size(), 0);
    sockaddr* from = rdma_get_peer_addr(id);
    made->label =
        "ibverbs peer " + std::to_string(made->id) + " (" +
        (from != nullptr && from->sa_family == AF_INET ? format_rail_address(*reinterpret_cast<sockaddr_in*>(from))
                                                       : std::string("node ") + std::to_string(hello->local_id)) +
        ")";
    p = made.get();
    accepted_groups_[key] = p->id;
    peers_.emplace(p->id, std::move(made));
  }
  Connection& c = new_connection(id);
  c.peer = p->id;
  c.accepted = true;
  c.local_rail = rail;
  c.remote_rail = hello->rail;
  c.index = hello->connection;
  c.control = hello->rail == 0 && hello->connection == 0;
  c.remote = p->label;
  p->rails[rail].push_back(c.id);
  if (c.control) p->control = c.id;
  Status st = create_queue_pair(c);
  if (!st.ok()) {
    log("ibverbs transport: refusing a connection from " + p->label + ": " + st.message());
    rdma_reject(id, nullptr, 0);
    fail_peer(p->id, st.message());
    return;
  }
  const HelloBytes mine = encode_hello(Hello{config_.local_id, 0, 0, c.index, p->expected, 0});
  rdma_conn_param param{};
  param.private_data = mine.data();
  param.private_data_len = static_cast<std::uint8_t>(mine.size());
  param.responder_resources = c.device->rd_atomic;
  param.initiator_depth = c.device->rd_atomic;
  param.retry_count = k_ibv_retry_count;
  param.rnr_retry_count = k_ibv_rnr_retry;
  if (rdma_accept(id, &param) != 0) fail_peer(p->id, "rdma_accept: " + errno_text(errno));
}

void IbverbsTransportImpl::on_established(Connection& c, std::span<const std::byte> private_data) {
  Peer* p = live_peer(c.peer);
  if (p == nullptr) return;
  if (!c.accepted) {
    Result<Hello> hello = decode_hello(private_data);
    if (!hello.ok()) {
      fail_connection(c, "the acceptor's hello: " + hello.status().message());
      return;
    }
    p->remote_id = hello->local_id;
  }
  c.established = true;
  ++p->established;
  if (!p->up && p->established == p->expected) {
    p->up = true;
    push_event(PeerUp{p->id, p->remote_id, p->accepted});
    for (MessageReceived& m : p->early) {
      m.remote_id = p->remote_id;
      push_event(std::move(m));
    }
    p->early.clear();
  }
  flush_control(c);
  drain_waiting(c);
}

}  // namespace sluice::transport::ibverbs::detail
#endif
