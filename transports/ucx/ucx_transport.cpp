// The UCX transport: set-up, the public calls, peers and completion
// (ucx_transport.hpp says what it is). Without UCX at build time only the
// registry entry is here, saying why it is unavailable.
#include "transports/ucx/ucx_transport.hpp"

#include <string>

#if SLUICE_HAVE_UCX
#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "core/common/assert.hpp"
#include "core/proto/codec.hpp"
#include "transports/frame_checks.hpp"
#include "transports/tcp/tcp_address.hpp"
#include "transports/ucx/ucx_transport_impl.hpp"
#endif

namespace sluice::transport::ucx {

#if SLUICE_HAVE_UCX

namespace detail {
namespace {

std::string ucs_text(ucs_status_t status) { return ucs_status_string(status); }

// The interface holding `address` (exactly, or in its subnet); empty when none.
std::string interface_of(const sockaddr_in& address) {
  if (address.sin_addr.s_addr == htonl(INADDR_ANY)) return {};
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return {};
  std::string exact;
  std::string subnet;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET || i->ifa_netmask == nullptr) continue;
    const auto* a = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
    const auto* m = reinterpret_cast<const sockaddr_in*>(i->ifa_netmask);
    if (a->sin_addr.s_addr == address.sin_addr.s_addr && exact.empty()) exact = i->ifa_name;
    if ((a->sin_addr.s_addr & m->sin_addr.s_addr) == (address.sin_addr.s_addr & m->sin_addr.s_addr) && subnet.empty()) {
      subnet = i->ifa_name;
    }
  }
  ::freeifaddrs(list);
  return exact.empty() ? subnet : exact;
}

template <bool Control>
ucs_status_t am_cb(void* arg, const void* header, std::size_t header_bytes, void* data, std::size_t bytes,
                   const ucp_am_recv_param_t* param) {
  auto* ra = static_cast<RailArg*>(arg);
  return ra->transport->on_am(Control, header, header_bytes, data, bytes, param, ra->rail);
}

void conn_request_cb(ucp_conn_request_h request, void* arg) {
  auto* ra = static_cast<RailArg*>(arg);
  ra->transport->on_conn_request(ra->rail, request);
}

// Whether UCX_TLS (unset: every transport) names a shared-memory transport or an alias holding one.
bool tls_allow_shared_memory() {
  const char* tls = std::getenv("UCX_TLS");
  if (tls == nullptr) return true;
  std::istringstream names(tls);
  for (std::string name; std::getline(names, name, ',');) {
    if (!name.empty() && name[0] == '^') return true;  // an exclusion list: the rest stays in
    for (const char* shm : {"all", "sm", "shm", "mm", "posix", "sysv", "xpmem"}) {
      if (name == shm) return true;
    }
  }
  return false;
}

Result<ucp_context_h> make_context(const std::string& devices) {
  ucp_config_t* ucx_config = nullptr;
  ucs_status_t st = ucp_config_read(nullptr, nullptr, &ucx_config);
  if (st != UCS_OK) return error(StatusCode::unavailable, "ucx transport: ucp_config_read: " + ucs_text(st));
  if (!devices.empty()) (void)ucp_config_modify(ucx_config, "NET_DEVICES", devices.c_str());
  // Shared memory between the processes of a host: UCX 1.13 leaves its
  // mm transports (sysv, posix) out of an endpoint that handles peer errors
  // unless their error handling is on (openucx/ucx#8477); without it every
  // peer of this host went through tcp/lo. The environment's UCX_MM_ERROR_HANDLING wins.
  // Only where UCX_TLS lets shared memory in (UCX warns of a setting nothing used).
  if (std::getenv("UCX_MM_ERROR_HANDLING") == nullptr && tls_allow_shared_memory()) {
    (void)ucp_config_modify(ucx_config, "MM_ERROR_HANDLING", "y");
  }
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
  params.features = UCP_FEATURE_AM | UCP_FEATURE_RMA | UCP_FEATURE_WAKEUP;
  params.mt_workers_shared = 0;
  ucp_context_h context = nullptr;
  st = ucp_init(&params, ucx_config, &context);
  ucp_config_release(ucx_config);
  if (st != UCS_OK) return error(StatusCode::unavailable, "ucx transport: ucp_init: " + ucs_text(st));
  return context;
}

}  // namespace

UcxTransport::UcxTransport(TransportConfig config)
    : config_(std::move(config)), peers_(config_.first_peer_id, k_ucx_max_peers) {}

Status UcxTransport::open_rail(std::uint32_t index) {
  Rail& rail = rails_[index];
  Result<sockaddr_in> address = tcp::parse_ipv4_address(config_.rail_addresses[index]);
  if (!address.ok()) return address.status();
  rail.devices = interface_of(*address);
  Result<ucp_context_h> context = make_context(rail.devices);
  if (!context.ok()) return context.status();
  rail.context = *context;
  ucp_worker_params_t wp{};
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  ucs_status_t st = ucp_worker_create(rail.context, &wp, &rail.worker);
  if (st != UCS_OK) return error(StatusCode::unavailable, "ucx transport: ucp_worker_create: " + ucs_text(st));
  st = ucp_worker_get_efd(rail.worker, &rail.efd);
  if (st != UCS_OK) return error(StatusCode::unavailable, "ucx transport: ucp_worker_get_efd: " + ucs_text(st));
  rail_args_.push_back(std::make_unique<RailArg>(RailArg{this, index}));
  RailArg* arg = rail_args_.back().get();
  for (const bool control : {true, false}) {
    ucp_am_handler_param_t hp{};
    hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
    hp.id = control ? k_am_control : k_am_frame;
    hp.cb = control ? am_cb<true> : am_cb<false>;
    hp.arg = arg;
    st = ucp_worker_set_am_recv_handler(rail.worker, &hp);
    if (st != UCS_OK) return error(StatusCode::unavailable, "ucx transport: set_am_recv_handler: " + ucs_text(st));
  }
  ucp_listener_params_t lp{};
  lp.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
  lp.sockaddr.addr = reinterpret_cast<const sockaddr*>(&*address);
  lp.sockaddr.addrlen = sizeof(sockaddr_in);
  lp.conn_handler.cb = conn_request_cb;
  lp.conn_handler.arg = arg;
  st = ucp_listener_create(rail.worker, &lp, &rail.listener);
  if (st != UCS_OK) {
    return error(StatusCode::unavailable,
                 "ucx transport: cannot listen on " + config_.rail_addresses[index] + ": " + ucs_text(st));
  }
  ucp_listener_attr_t la{};
  la.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
  st = ucp_listener_query(rail.listener, &la);
  if (st != UCS_OK) return error(StatusCode::unavailable, "ucx transport: ucp_listener_query: " + ucs_text(st));
  rail.address = tcp::format_address(*reinterpret_cast<const sockaddr_in*>(&la.sockaddr));
  loop_.watch(rail.efd, 1 + index);
  return ok_status();
}

Status UcxTransport::start(const Capabilities& caps) {
  caps_ = caps;
  if (!events_.valid()) return error(StatusCode::io_error, "ucx transport: eventfd failed");
  Status st = loop_.open();
  if (!st.ok()) return st;
  guard_ = std::make_unique<AcceptGuard>(config_.accept, "ucx", config_.rail_addresses.size(), config_.log);
  rails_.resize(config_.rail_addresses.size());
  for (std::uint32_t r = 0; r < rails_.size(); ++r) {
    st = open_rail(r);
    if (!st.ok()) return st;
  }
  ProgressLoop::Hooks h;
  h.wait_ms = [this] { return wait_ms_.load(); };
  h.has_room = [this] { return events_.size() < k_ucx_max_queued_events; };
  h.ready = [this](std::uint64_t /*id*/, std::uint32_t /*events*/) {};
  h.after_turn = [this] { progress_all(); };
  h.skip_idle_turn = [this] { return skip_idle_turn(); };
  h.log = [this](const std::string& line) { log(line); };
  loop_.start("sluice-ucx", std::move(h));
  return ok_status();
}

// Under the lock: every worker until idle, then armed; the next wait's
// timeout. Within k_ucx_spin_us of the last activity (progress found some, or
// work was posted: kick()) the loop busy-polls the armed workers' event fds
// (wait 0, no turn while none is ready: skip_idle_turn) instead of sleeping.
void UcxTransport::progress_all() {
  std::int64_t now = monotonic_now_ns();
  bool busy = false;
  for (Rail& rail : rails_) {
    for (int round = 0; round < k_ucx_progress_rounds && ucp_worker_progress(rail.worker) != 0; ++round) {
      spin_until_ns_.store(now + k_ucx_spin_us * 1000);
    }
    if (ucp_worker_arm(rail.worker) == UCS_ERR_BUSY) busy = true;
  }
  if (busy) turn_wanted_.store(true);  // what is pending may not set an event fd
  now = monotonic_now_ns();
  guard_->service(
      now,
      [this](std::uint64_t id) {
        if (conns_.contains(id)) close_conn(id);
      },
      [](std::size_t) {});
  if (reap_closing()) {
    for (ucp_rkey_h rkey : dead_rkeys_) ucp_rkey_destroy(rkey);
    dead_rkeys_.clear();
  }
  // The event fd wakes the loop for what arrives; the timeout bounds what
  // UCX progresses without signalling it (its connection manager's events).
  const bool idle = conns_.empty() && ops_.empty() && closing_.empty();
  const bool spinning = !idle && now < spin_until_ns_.load();
  const int sleep_ms = idle ? k_ucx_idle_poll_ms : (ops_.empty() ? k_ucx_active_poll_ms : k_ucx_pending_poll_ms);
  int wait = busy || spinning ? 0 : sleep_ms;
  const int guard_ms = guard_->wait_ms(now);
  if (guard_ms >= 0) wait = std::min(wait, guard_ms);
  wait_ms_.store(wait);
}

// Without the lock (the loop's skip_idle_turn): whether the loop, busy-polling
// with nothing ready, goes on without a turn; past the spin window it takes one
// (which arms the workers and sets the sleeping wait). Each idle poll yields
// the CPU first: on a host with few cores the thread the poll waits for (the
// caller about to post, the peer about to answer) runs in its place.
bool UcxTransport::skip_idle_turn() {
  if (turn_wanted_.exchange(false)) return false;
  ::sched_yield();
  return monotonic_now_ns() < spin_until_ns_.load();
}

// Under the lock, after posting work on a worker: the loop takes a turn for it
// (progress and arm again, as UCX asks after new work), woken unless it is busy-polling.
void UcxTransport::kick() {
  spin_until_ns_.store(monotonic_now_ns() + k_ucx_spin_us * 1000);
  turn_wanted_.store(true);
  if (wait_ms_.load() != 0) loop_.wake();
}

UcxTransport::~UcxTransport() {
  loop_.stop();
  std::lock_guard lock(mu_);
  for (Rail& rail : rails_) {
    if (rail.listener != nullptr) ucp_listener_destroy(rail.listener);
    rail.listener = nullptr;
  }
  std::vector<PeerId> ids;
  for (const auto& [id, c] : conns_) {
    if (c->peer != 0) ids.push_back(c->peer);
  }
  for (PeerId id : ids) fail_peer(id, "transport closed", true);
  std::vector<std::uint64_t> left;
  for (const auto& [id, c] : conns_) left.push_back(id);
  for (std::uint64_t id : left) close_conn(id);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(k_ucx_close_wait_ms);
  while (!reap_closing() && std::chrono::steady_clock::now() < deadline) {
    for (Rail& rail : rails_) ucp_worker_progress(rail.worker);
  }
  for (ucp_rkey_h rkey : dead_rkeys_) ucp_rkey_destroy(rkey);
  for (auto& [ref, key] : keys_) {
    if (key->rkey != nullptr) ucp_rkey_destroy(key->rkey);
  }
  regions_.clear();  // unmaps every mapping while the contexts live
  mappings_.clear();
  for (Rail& rail : rails_) {
    if (rail.worker != nullptr) ucp_worker_destroy(rail.worker);
    if (rail.context != nullptr) ucp_cleanup(rail.context);
  }
}

bool UcxTransport::reap_closing() {
  std::erase_if(closing_, [](void* request) {
    if (ucp_request_check_status(request) == UCS_INPROGRESS) return false;
    ucp_request_free(request);
    return true;
  });
  return closing_.empty();
}

PeerAddress UcxTransport::listen_address() const {
  PeerAddress a;
  for (const Rail& rail : rails_) a.rails.push_back(rail.address);
  return a;
}

Conn* UcxTransport::conn(std::uint64_t id) const {
  auto it = conns_.find(id);
  return it == conns_.end() ? nullptr : it->second.get();
}

// ---- peers -------------------------------------------------------------------

Result<PeerId> UcxTransport::connect(const PeerAddress& remote) {
  if (remote.rails.empty() || remote.rails.size() > k_max_rails) {
    return error(StatusCode::invalid_argument, "ucx connect: peer address has " + std::to_string(remote.rails.size()) +
                                                   " rails; need 1.." + std::to_string(k_max_rails));
  }
  std::vector<sockaddr_in> targets;
  for (const std::string& text : remote.rails) {
    Result<sockaddr_in> a = tcp::parse_ipv4_address(text);
    if (!a.ok()) return a.status();
    targets.push_back(*a);
  }
  std::lock_guard lock(mu_);
  if (peers_.full()) {
    return error(StatusCode::unavailable,
                 "ucx connect: k_ucx_max_peers (" + std::to_string(k_ucx_max_peers) + ") live peers");
  }
  auto peer = std::make_unique<Peer>();
  peer->id = peers_.draw_id();
  peer->label = "ucx peer " + std::to_string(peer->id) + " (" + remote.rails[0] + ")";
  peer->rails.assign(rails_.size(), 0);
  peer->expected = static_cast<std::uint32_t>(rails_.size());
  std::uint64_t nonce = 0;
  Result<AuthBytes> random = tcp::make_auth_nonce();
  if (random.ok()) std::memcpy(&nonce, random->data(), sizeof nonce);
  peer->group = {config_.local_id, nonce};
  Peer& p = peers_.add(std::move(peer));
  for (std::uint32_t r = 0; r < rails_.size(); ++r) {
    const sockaddr_in& target = targets[r % targets.size()];
    ucp_ep_params_t ep = endpoint_params(this);
    ep.field_mask |= UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR;
    ep.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
    ep.sockaddr.addr = reinterpret_cast<const sockaddr*>(&target);
    ep.sockaddr.addrlen = sizeof target;
    ucp_ep_h handle = nullptr;
    const ucs_status_t st = ucp_ep_create(rails_[r].worker, &ep, &handle);
    if (st != UCS_OK) {
      const PeerId id = p.id;
      fail_peer(id, "ucp_ep_create to " + tcp::format_address(target) + ": " + ucs_text(st));
      return id;  // PeerDown says why, as for a peer that never answers
    }
    Conn& c = add_conn(handle, r, false, tcp::format_address(target));
    c.peer = p.id;
    p.rails[r] = c.id;
    if (r == 0) p.control = c.id;
    start_handshake(c);
  }
  loop_.wake();
  return p.id;
}

Status UcxTransport::disconnect(PeerId peer) {
  std::lock_guard lock(mu_);
  if (live_peer(peer) == nullptr)
    return error(StatusCode::not_found, "ucx disconnect: no peer " + std::to_string(peer));
  fail_peer(peer, "disconnected", true);
  loop_.wake();
  return ok_status();
}

void UcxTransport::fail_peer(PeerId id, const std::string& why, bool quiet) {
  std::unique_ptr<Peer> p = peers_.take(id);
  if (p == nullptr) return;
  const Status reason(StatusCode::unavailable, p->label + " lost: " + why);
  if (!quiet) log("ucx transport: " + reason.message());
  drop_peer_keys(id);
  for (std::uint64_t op_id : orphaned_ops(ops_, id)) complete_op(op_id, reason);
  std::vector<std::uint64_t> ids;
  for (const auto& [cid, c] : conns_) {
    if (c->peer == id) ids.push_back(cid);
  }
  for (std::uint64_t cid : ids) close_conn(cid);
  push_event(PeerDown{id, p->remote_id, reason});
}

void UcxTransport::peer_up(Peer& p, bool accepted) {
  p.up = true;
  std::string lanes;
  for (std::uint32_t r = 0; r < p.rails.size(); ++r) {
    const Conn* c = conn(p.rails[r]);
    if (c != nullptr) lanes += " rail " + std::to_string(r) + ": " + ep_lanes(c->ep) + ".";
  }
  log("ucx transport: " + p.label + " up;" + lanes);
  push_event(PeerUp{p.id, p.remote_id, accepted});
  std::vector<OutgoingMessage> frames = std::move(p.pending_frames);
  p.pending_frames.clear();
  Conn* control = conn(p.control);
  for (OutgoingMessage& m : frames) {
    p.queued_message_bytes -= m.frame.size();
    if (control == nullptr) break;
    (void)send_frame(*control, p, m.tag, std::move(m.frame));
  }
  std::vector<std::uint64_t> ops = std::move(p.pending_ops);
  p.pending_ops.clear();
  for (std::uint64_t op : ops) start_op(op);
}

// ---- messages ----------------------------------------------------------------

Status UcxTransport::queue_frame(Peer& p, std::uint64_t tag, std::vector<std::byte>& frame) {
  Status st = check_outgoing_frame("ucx", frame, k_ucx_max_message_bytes, "k_ucx_max_message_bytes");
  if (st.ok()) {
    st = check_message_queue_room("ucx", p.label, p.queued_message_bytes, frame.size(),
                                  config_.max_queued_message_bytes);
  }
  if (!st.ok()) return st;
  if (!p.up) {
    p.queued_message_bytes += frame.size();
    p.pending_frames.push_back(OutgoingMessage{tag, std::move(frame)});
    return ok_status();
  }
  Conn* control = conn(p.control);
  if (control == nullptr) return error(StatusCode::unavailable, "ucx send_message: " + p.label + " has no connection");
  return send_frame(*control, p, tag, std::move(frame));
}

Status UcxTransport::send_message(PeerId peer, std::uint64_t tag, std::vector<std::byte> frame) {
  OutgoingMessage one{tag, std::move(frame)};
  Status failure;
  return send_messages(peer, std::span<OutgoingMessage>(&one, 1), &failure) == 1 ? ok_status() : failure;
}

std::size_t UcxTransport::send_messages(PeerId peer, std::span<OutgoingMessage> messages, Status* failure) {
  std::lock_guard lock(mu_);
  Peer* p = live_peer(peer);
  if (p == nullptr) {
    *failure = error(StatusCode::unavailable, "ucx send_message: no live peer " + std::to_string(peer));
    return 0;
  }
  std::size_t queued = 0;
  for (; queued < messages.size(); ++queued) {
    Status st = queue_frame(*p, messages[queued].tag, messages[queued].frame);
    if (!st.ok()) {
      *failure = st;
      break;
    }
  }
  if (queued > 0) kick();
  return queued;
}

// ---- regions -------------------------------------------------------------------

Status UcxTransport::register_region(std::uint64_t key, std::span<std::byte> bytes, RegionKind kind) {
  if (!caps_.reaches(kind)) {
    return error(StatusCode::unavailable, "ucx register_region: region kind " + std::string(to_string(kind)) +
                                              " is not reachable with this UCX (" + caps_.to_string() + ")");
  }
  if (bytes.empty()) return error(StatusCode::invalid_argument, "ucx register_region: empty range");
  std::lock_guard lock(mu_);
  if (regions_.contains(key)) {
    return error(StatusCode::already_exists, "ucx register_region: key " + std::to_string(key) + " is taken");
  }
  Result<std::shared_ptr<Mapping>> mapping = mapping_for(key, bytes, kind);
  if (!mapping.ok()) return mapping.status();
  auto region = std::make_shared<Region>();
  region->bytes = bytes;
  region->kind = kind;
  region->mapping = std::move(mapping).value();
  regions_.emplace(key, std::move(region));
  return ok_status();
}

Result<std::shared_ptr<Mapping>> UcxTransport::mapping_for(std::uint64_t key, std::span<std::byte> bytes,
                                                           RegionKind kind) {
  // Every mapping that starts at or before `bytes` (a few: one per registered buffer).
  auto it = mappings_.upper_bound(bytes.data());
  while (it != mappings_.begin()) {
    --it;
    std::shared_ptr<Mapping> m = it->second.lock();
    if (!m) {
      it = mappings_.erase(it);
      continue;
    }
    if (m->holds(bytes, kind)) return m;
  }
  auto m = std::make_shared<Mapping>();
  m->bytes = bytes;
  m->kind = kind;
  m->contexts.assign(rails_.size(), nullptr);
  m->memh.assign(rails_.size(), nullptr);
  m->packed.resize(rails_.size());
  for (std::uint32_t r = 0; r < rails_.size(); ++r) {
    m->contexts[r] = rails_[r].context;
    ucp_mem_map_params_t mp{};
    mp.field_mask =
        UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_MEMORY_TYPE;
    mp.address = bytes.data();
    mp.length = bytes.size();
    mp.memory_type = kind == RegionKind::cuda ? UCS_MEMORY_TYPE_CUDA : UCS_MEMORY_TYPE_HOST;
    ucs_status_t st = ucp_mem_map(rails_[r].context, &mp, &m->memh[r]);
    void* packed = nullptr;
    std::size_t packed_bytes = 0;
    if (st == UCS_OK) st = ucp_rkey_pack(rails_[r].context, m->memh[r], &packed, &packed_bytes);
    if (st != UCS_OK) {
      return error(StatusCode::unavailable, "ucx register_region " + std::to_string(key) + " on rail " +
                                                std::to_string(r) + ": " + ucs_text(st));
    }  // what was mapped is unmapped with m
    const auto* begin = static_cast<const std::byte*>(packed);
    m->packed[r].assign(begin, begin + packed_bytes);
    ucp_rkey_buffer_release(packed);
  }
  mappings_[bytes.data()] = m;
  return m;
}

Result<RemoteRegionAccess> UcxTransport::remote_access(std::uint64_t key, std::uint32_t rail,
                                                       std::uint64_t grantee_id) {
  std::lock_guard lock(mu_);
  if (rail >= rails_.size()) {
    return error(StatusCode::invalid_argument,
                 "ucx remote_access of region " + std::to_string(key) + ": no rail " + std::to_string(rail));
  }
  auto it = regions_.find(key);
  if (it == regions_.end() || it->second->revoking) {
    return error(StatusCode::not_found, "ucx remote_access: no region with key " + std::to_string(key));
  }
  it->second->grants.grant(grantee_id);
  // The packed UCX key does not fit the carried 32-bit rkey: the peer asks for it once (ucx_transport.hpp).
  return RemoteRegionAccess{reinterpret_cast<std::uint64_t>(it->second->bytes.data()), 0, it->second->bytes.size()};
}

Status UcxTransport::deregister_region(std::uint64_t key) {
  std::unique_lock lock(mu_);
  auto it = regions_.find(key);
  if (it == regions_.end() || it->second->revoking) {
    return error(StatusCode::not_found, "ucx deregister_region: no region with key " + std::to_string(key));
  }
  std::shared_ptr<Region> region = it->second;
  region->revoking = true;
  const std::uint64_t revocation = next_revocation_id_++;
  Revocation& rv = revocations_[revocation];
  rv.key = key;
  for (std::uint64_t holder : region->holders) {
    Conn* c = conn(holder);
    if (c == nullptr) continue;
    CtlHeader h;
    h.kind = static_cast<std::uint32_t>(CtlKind::revoke);
    h.a = key;
    h.b = revocation;
    if (send_ctl(*c, h).ok()) rv.waiting.insert(holder);
  }
  loop_.wake();
  const bool answered = revoked_.wait_for(lock, std::chrono::milliseconds(k_ucx_revoke_wait_ms), [&] {
    auto r = revocations_.find(revocation);
    return r == revocations_.end() || r->second.waiting.empty();
  });
  if (!answered) {
    log("ucx transport: region " + std::to_string(key) + ": " +
        std::to_string(revocations_[revocation].waiting.size()) +
        " peer connection(s) did not answer its revocation in " + std::to_string(k_ucx_revoke_wait_ms) +
        " ms (k_ucx_revoke_wait_ms); unmapped all the same");
  }
  revocations_.erase(revocation);
  regions_.erase(key);  // its mapping goes with its last region
  return ok_status();
}

// ---- bulk posting and completion -------------------------------------------------------

Status UcxTransport::post(const BulkRequest& request, bool is_put) {
  const char* what = is_put ? "ucx put" : "ucx get";
  if (request.rail >= config_.rail_addresses.size()) {
    return error(StatusCode::invalid_argument, std::string(what) + ": no rail " + std::to_string(request.rail));
  }
  if (request.bytes == 0 || request.bytes > k_ucx_max_transfer_bytes) {
    return error(StatusCode::invalid_argument, std::string(what) + ": " + std::to_string(request.bytes) +
                                                   " bytes; need 1.." + std::to_string(k_ucx_max_transfer_bytes));
  }
  std::lock_guard lock(mu_);
  auto region = regions_.find(request.local_key);
  if (region == regions_.end() || region->second->revoking) {
    return error(StatusCode::invalid_argument,
                 std::string(what) + ": no local region with key " + std::to_string(request.local_key));
  }
  const std::span<std::byte> local = region->second->bytes;
  if (request.local_offset > local.size() || request.bytes > local.size() - request.local_offset) {
    return error(StatusCode::invalid_argument,
                 std::string(what) + ": local range " + std::to_string(request.local_offset) + "+" +
                     std::to_string(request.bytes) + " outside region " + std::to_string(request.local_key) + " of " +
                     std::to_string(local.size()) + " bytes");
  }
  Peer* p = live_peer(request.peer);
  if (p == nullptr)
    return error(StatusCode::unavailable, std::string(what) + ": no live peer " + std::to_string(request.peer));
  if (ops_.size() >= config_.max_pending_ops) {
    return error(StatusCode::again, std::string(what) + ": max_pending_ops (" +
                                        std::to_string(config_.max_pending_ops) + ") operations in flight");
  }
  const std::uint64_t id = next_op_id_++;
  Op& op = ops_[id];
  op.cookie = request.cookie;
  op.peer = request.peer;
  op.rail = request.rail;
  op.is_put = is_put;
  op.local = local.data() + request.local_offset;
  op.remote_key = request.remote_key;
  op.remote_offset = request.remote_offset;
  op.bytes = request.bytes;
  if (!p->up) {
    p->pending_ops.push_back(id);
  } else {
    start_op(id);
  }
  kick();
  return ok_status();
}

void UcxTransport::complete_op(std::uint64_t op_id, const Status& status) {
  auto it = ops_.find(op_id);
  if (it == ops_.end()) return;
  Op op = std::move(it->second);
  ops_.erase(it);
  if (op.key) release_key_use(op.key);
  push_event(OpDone{op.cookie, status, status.ok() ? op.bytes : 0});
}

std::size_t UcxTransport::poll(std::vector<TransportEvent>& out, std::size_t max_events) {
  std::lock_guard lock(mu_);
  const std::size_t n = events_.pop(out, std::min(max_events, k_max_poll_events));
  if (n > 0) events_drained_.notify_all();
  return n;
}

}  // namespace detail

namespace {

// "UCX 1.13.1 (self/memory0 tcp/lo tcp/eth0 sysv/memory posix/memory cma/memory); GPU memory: ..."
std::string what_ucx_found(ucp_context_h context, bool cuda) {
  std::string resources;
  char* text = nullptr;
  std::size_t size = 0;
  if (FILE* out = ::open_memstream(&text, &size); out != nullptr) {
    ucp_context_print_info(context, out);
    std::fclose(out);
    std::istringstream lines(std::string(text, size));
    std::free(text);
    for (std::string line; std::getline(lines, line);) {
      const auto at = line.find("flags -- ");
      if (line.find("resource") == std::string::npos || at == std::string::npos) continue;
      if (!resources.empty()) resources += " ";
      resources += line.substr(at + 9);
    }
  }
  return std::string("UCX ") + ucp_get_version_string() + " (" + resources +
         "); GPU memory: " + (cuda ? "cuda" : "no (this UCX was built without CUDA; the libucx-cu13 wheel has it)");
}

// What one UCX context says: "<c><found>" (c: '1' when it reaches CUDA memory), or "!<why>".
std::string query_ucx() {
  Result<ucp_context_h> context = detail::make_context("");
  if (!context.ok()) return "!" + context.status().message();
  ucp_context_attr_t attr{};
  attr.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES;
  const ucs_status_t st = ucp_context_query(*context, &attr);
  const bool cuda = st == UCS_OK && (attr.memory_types & UCS_BIT(UCS_MEMORY_TYPE_CUDA)) != 0;
  const std::string found = what_ucx_found(*context, cuda);
  ucp_cleanup(*context);
  if (st != UCS_OK) return std::string("!ucx: ucp_context_query: ") + ucs_status_string(st);
  return (cuda ? "1" : "0") + found;
}

// query_ucx() in a child process. A CUDA-enabled UCX initialises the CUDA
// driver when its context is made, and a process that did so cannot use CUDA
// in the children it forks afterwards (cudaErrorInitializationError: seen on
// the GPU machine when `sluice run` ran its points in children after the
// transport listing had probed UCX). k_ucx_probe_timeout_ms bounds it.
std::string query_ucx_in_child() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return "!ucx probe: pipe failed";
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return "!ucx probe: fork failed";
  }
  if (pid == 0) {
    ::close(fds[0]);
    const std::string answer = query_ucx();
    std::size_t at = 0;
    while (at < answer.size()) {
      const ssize_t n = ::write(fds[1], answer.data() + at, answer.size() - at);
      if (n <= 0) break;
      at += static_cast<std::size_t>(n);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string answer;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(k_ucx_probe_timeout_ms);
  for (char buf[4096];;) {
    pollfd pfd{fds[0], POLLIN, 0};
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || ::poll(&pfd, 1, static_cast<int>(left.count())) <= 0) {
      ::kill(pid, SIGKILL);
      answer = "!ucx probe: no answer from UCX in " + std::to_string(k_ucx_probe_timeout_ms) + " ms";
      break;
    }
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    answer.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  ::waitpid(pid, nullptr, 0);
  return answer.empty() ? "!ucx probe: the probing process ended without an answer" : answer;
}

// The capabilities of this UCX, from one context made once (in a child).
Result<Capabilities> probe_once() {
  const std::string answer = query_ucx_in_child();
  if (answer[0] == '!') return error(StatusCode::unavailable, answer.substr(1));
  Capabilities c;
  c.region_kinds = {RegionKind::host};
  if (answer[0] == '1') c.region_kinds.push_back(RegionKind::cuda);
  c.max_message_bytes = k_ucx_max_message_bytes;
  c.max_transfer_bytes = k_ucx_max_transfer_bytes;
  c.rdma_write = true;
  c.rdma_read = true;
  c.max_rails = k_max_rails;
  c.max_connections_per_rail = k_max_connections_per_rail;
  c.found = answer.substr(1);
  return c;
}

const Result<Capabilities>& probed() {
  static const Result<Capabilities> result = probe_once();
  return result;
}

}  // namespace

Status ucx_probe() { return probed().ok() ? ok_status() : probed().status(); }

Capabilities ucx_capabilities() { return probed().ok() ? *probed() : Capabilities{}; }

Result<std::unique_ptr<Transport>> make_ucx_transport(const TransportConfig& config) {
  Status st = ucx_probe();
  if (!st.ok()) return st;
  if (config.rail_addresses.empty() || config.rail_addresses.size() > k_max_rails) {
    return error(StatusCode::invalid_argument, "ucx transport: " + std::to_string(config.rail_addresses.size()) +
                                                   " rail addresses; need 1.." + std::to_string(k_max_rails));
  }
  if (config.connections_per_rail == 0 || config.connections_per_rail > k_max_connections_per_rail) {
    return error(StatusCode::invalid_argument, "ucx transport: connections_per_rail " +
                                                   std::to_string(config.connections_per_rail) + "; need 1.." +
                                                   std::to_string(k_max_connections_per_rail));
  }
  if (!config.netns.empty()) {
    return error(StatusCode::unavailable, "ucx transport: netns " + config.netns +
                                              " refused: UCX opens its sockets on its own threads, outside any "
                                              "namespace the transport could enter");
  }
  if (!config.shared_secret.empty() && (config.shared_secret.size() < k_min_shared_secret_bytes ||
                                        config.shared_secret.size() > k_max_shared_secret_bytes)) {
    return error(StatusCode::invalid_argument,
                 "ucx transport: shared secret of " + std::to_string(config.shared_secret.size()) + " bytes; need " +
                     std::to_string(k_min_shared_secret_bytes) + ".." + std::to_string(k_max_shared_secret_bytes));
  }
  st = check_socket_buffer_bytes(config, "ucx transport");
  if (!st.ok()) return st;
  st = check_accept_limits(config, "ucx transport");
  if (!st.ok()) return st;
  auto transport = std::make_unique<detail::UcxTransport>(config);
  st = transport->start(*probed());
  if (!st.ok()) return st;
  return std::unique_ptr<Transport>(std::move(transport));
}

#else  // !SLUICE_HAVE_UCX

Status ucx_probe() { return error(StatusCode::unavailable, "built without UCX (" SLUICE_UCX_WHY ")"); }
Capabilities ucx_capabilities() { return {}; }
Result<std::unique_ptr<Transport>> make_ucx_transport(const TransportConfig&) { return ucx_probe(); }

#endif

namespace {
[[maybe_unused]] const bool k_registered = register_transport(
    TransportEntry{"ucx", [] { return ucx_probe(); }, [] { return ucx_capabilities(); },
                   [](const TransportConfig& config) { return make_ucx_transport(config); },
                   [](std::uint32_t rails) { return std::vector<std::string>(rails, "127.0.0.1:0"); }});
}  // namespace

}  // namespace sluice::transport::ucx
