// Internals of the UCX transport shared by its implementation files
// (ucx_transport.cpp: set-up, public calls, peers and completion;
// ucx_connection.cpp: connections, authentication, hello and frames;
// ucx_bulk.cpp: remote keys, put/get, revocation). Include only from those.
#pragma once

#include <ucp/api/ucp.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "base/eventfd_queue.hpp"
#include "transports/accept_guard.hpp"
#include "transports/peer_table.hpp"
#include "transports/progress_loop.hpp"
#include "transports/region_grants.hpp"
#include "transports/tcp/tcp_auth.hpp"
#include "transports/ucx/ucx_transport.hpp"

namespace sluice::transport::ucx::detail {

using tcp::AuthBytes;

// Active message ids: control packets (CtlHeader) and proto frames (header: the tag).
inline constexpr unsigned k_am_control = 1;
inline constexpr unsigned k_am_frame = 2;

enum class CtlKind : std::uint32_t {
  challenge = 1,   // data: the sender's nonce
  proof = 2,       // a: the prover's node id; data: its proof
  hello = 3,       // connector -> acceptor. a: local_id, b: group nonce, c: connector rail, d: its rail count
  hello_ack = 4,   // acceptor -> connector. a: local_id
  key_query = 5,   // a: region key, b: query id
  key_reply = 6,   // a: query id, b: address, c: length, status; data: packed key or error text
  revoke = 7,      // a: region key, b: revocation id
  revoke_ack = 8,  // a: revocation id
};

// A control packet's header: fixed size, sent in the active message's header.
struct CtlHeader {
  std::uint32_t kind = 0;
  std::uint32_t status = 0;  // StatusCode (key_reply)
  std::uint64_t a = 0, b = 0, c = 0, d = 0;
};

// One UCX endpoint: a connection of this side (connector) or accepted on a rail.
struct Conn {
  std::uint64_t id = 0;
  ucp_ep_h ep = nullptr;
  std::uint32_t rail = 0;  // this side's rail (its worker)
  bool accepted = false;
  std::string remote;  // the peer's address, for messages
  PeerId peer = 0;     // 0 until grouped (hello)
  // Authentication (only with a shared secret).
  AuthBytes mine{};
  AuthBytes theirs{};
  bool got_challenge = false;
  bool sent_proof = false;
  bool authenticated = false;
  std::uint64_t authenticated_id = 0;
  // Frames in arrival order: a rendezvous frame holds its place until its bytes are in.
  std::uint64_t inbox_first_seq = 0;
  std::deque<std::optional<MessageReceived>> inbox;
};

struct Peer {
  PeerId id = 0;
  bool accepted = false;
  std::pair<std::uint64_t, std::uint64_t> group{0, 0};
  std::uint64_t remote_id = 0;
  std::string label;
  std::vector<std::uint64_t> rails;  // conn id per local rail (0: none)
  std::uint64_t control = 0;         // the conn frames go on
  std::uint32_t expected = 0;        // connections of the group
  std::uint32_t greeted = 0;
  bool up = false;
  std::uint64_t queued_message_bytes = 0;
  std::vector<Transport::OutgoingMessage> pending_frames;  // posted before up
  std::vector<std::uint64_t> pending_ops;                  // posted before up
};

// A peer's region as reached through one of our rails.
struct RemoteKey {
  PeerId peer = 0;
  std::uint64_t conn = 0;
  std::uint64_t key = 0;
  bool ready = false;
  std::uint64_t address = 0;
  std::uint64_t length = 0;
  ucp_rkey_h rkey = nullptr;
  std::vector<std::uint64_t> waiting;                         // op ids until the reply
  std::uint32_t in_flight = 0;                                // ops using rkey now
  bool retired = false;                                       // revoked by its owner: no new op takes it
  std::vector<std::pair<std::uint64_t, std::uint64_t>> acks;  // (conn, revocation id) to answer once idle
};
using KeyRef = std::tuple<PeerId, std::uint32_t, std::uint64_t>;

struct Op {
  std::uint64_t cookie = 0;
  PeerId peer = 0;
  std::uint32_t rail = 0;
  bool is_put = false;
  std::byte* local = nullptr;
  std::uint64_t remote_key = 0;
  std::uint64_t remote_offset = 0;
  std::uint64_t bytes = 0;
  std::shared_ptr<RemoteKey> key;  // while in flight
};

// A range mapped with UCX on every rail (each rail its context), with the
// packed key of each. Shared by the regions that lie inside it: HwEnv opens a
// window (a region of its own) on a buffer for every chunk, and a second
// ucp_mem_map of CUDA memory already mapped failed now and then in UCX 1.22
// ("rcache: failed to insert region [0x0..0x0]: Invalid parameter", GPU
// machine), besides costing a registration per chunk. Unmapped with its last region.
struct Mapping {
  std::span<std::byte> bytes;
  RegionKind kind = RegionKind::host;
  std::vector<ucp_context_h> contexts;
  std::vector<ucp_mem_h> memh;
  std::vector<std::vector<std::byte>> packed;
  Mapping() = default;
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() {
    for (std::size_t r = 0; r < memh.size(); ++r) {
      if (memh[r] != nullptr) ucp_mem_unmap(contexts[r], memh[r]);
    }
  }
  bool holds(std::span<std::byte> range, RegionKind k) const {
    return k == kind && range.data() >= bytes.data() && range.data() + range.size() <= bytes.data() + bytes.size();
  }
};

struct Region {
  std::span<std::byte> bytes;
  RegionKind kind = RegionKind::host;
  std::shared_ptr<Mapping> mapping;  // its own, or that of a region it lies in
  RegionGrants grants;
  std::set<std::uint64_t> holders;  // conns we gave a key on
  bool revoking = false;
};

struct Revocation {
  std::uint64_t key = 0;
  std::set<std::uint64_t> waiting;  // conns that have not answered
};

struct Rail {
  ucp_context_h context = nullptr;
  ucp_worker_h worker = nullptr;
  ucp_listener_h listener = nullptr;
  int efd = -1;
  std::string address;  // "a.b.c.d:port" as bound
  std::string devices;  // UCX_NET_DEVICES given
};

class UcxTransport;

// What a rail's listener and active-message handlers are given: the transport and the rail.
struct RailArg {
  UcxTransport* transport = nullptr;
  std::uint32_t rail = 0;
};

// What a UCX request's callback needs: the transport and what the request was for.
struct RequestBox {
  enum class What : std::uint8_t { send, put, flush, get, recv_frame };
  UcxTransport* transport = nullptr;
  What what = What::send;
  std::uint64_t id = 0;           // op id (put, flush, get), conn id (recv_frame), peer id (send of a frame)
  std::uint64_t seq = 0;          // recv_frame: the frame's place in its conn's inbox
  std::uint64_t tag = 0;          // recv_frame
  std::uint64_t frame_bytes = 0;  // send of a frame: counted in the peer's queue
  CtlHeader ctl;                  // send of a control packet: its header
  std::vector<std::byte> data;    // what is sent or received
};

// UCX callbacks shared by the implementation files (ucx_connection.cpp):
// an endpoint's error handler (arg: the transport) and every request's
// completion (user_data: its RequestBox).
void ep_error_cb(void* arg, ucp_ep_h ep, ucs_status_t status);
// An endpoint's parameters with its error handling (peer errors reported to `transport`).
ucp_ep_params_t endpoint_params(UcxTransport* transport);
void send_done_cb(void* request, ucs_status_t status, void* user_data);
// The lanes UCX chose for an endpoint, as ucx_info names transports and devices:
// "cm tcp; tcp/lo (am am_bw#0 rma_bw#0)" (from ucp_ep_print_info).
std::string ep_lanes(ucp_ep_h ep);

class UcxTransport final : public Transport {
 public:
  explicit UcxTransport(TransportConfig config);
  ~UcxTransport() override;

  Status start(const Capabilities& caps);

  std::string_view name() const override { return "ucx"; }
  const Capabilities& capabilities() const override { return caps_; }
  PeerAddress listen_address() const override;
  Result<PeerId> connect(const PeerAddress& remote) override;
  Status disconnect(PeerId peer) override;
  Status register_region(std::uint64_t key, std::span<std::byte> bytes, RegionKind kind) override;
  Status deregister_region(std::uint64_t key) override;
  Result<RemoteRegionAccess> remote_access(std::uint64_t key, std::uint32_t rail, std::uint64_t grantee_id) override;
  [[nodiscard]] Status send_message(PeerId peer, std::uint64_t tag, std::vector<std::byte> frame) override;
  std::size_t send_messages(PeerId peer, std::span<OutgoingMessage> messages, Status* failure) override;
  [[nodiscard]] Status put(const BulkRequest& request) override { return post(request, true); }
  [[nodiscard]] Status get(const BulkRequest& request) override { return post(request, false); }
  std::size_t poll(std::vector<TransportEvent>& out, std::size_t max_events) override;
  int completion_fd() const override { return events_.fd(); }

  // UCX callbacks (static trampolines in the .cpp files call these, under the lock).
  void on_conn_request(std::uint32_t rail, ucp_conn_request_h request);
  void on_ep_error(ucp_ep_h ep, ucs_status_t status);
  ucs_status_t on_am(bool control, const void* header, std::size_t header_bytes, void* data, std::size_t bytes,
                     const ucp_am_recv_param_t* param, std::uint32_t rail);
  void on_request_done(RequestBox* box, ucs_status_t status);

 private:
  // ucx_transport.cpp
  Status open_rail(std::uint32_t index);
  // The mapping `bytes` of `kind` lies in, or a new one; unavailable naming the rail UCX refused.
  Result<std::shared_ptr<Mapping>> mapping_for(std::uint64_t key, std::span<std::byte> bytes, RegionKind kind);
  void progress_all();
  bool skip_idle_turn();
  void kick();
  // Frees the endpoint closes that finished; true when none is left.
  bool reap_closing();
  void push_event(TransportEvent event) { events_.push(std::move(event)); }
  void log(const std::string& line) const {
    if (config_.log) config_.log(line);
  }
  Peer* live_peer(PeerId id) const { return peers_.find(id); }
  Conn* conn(std::uint64_t id) const;
  void fail_peer(PeerId id, const std::string& why, bool quiet = false);  // quiet: not logged (disconnect, close)
  void peer_up(Peer& p, bool accepted);
  Status post(const BulkRequest& request, bool is_put);
  Status queue_frame(Peer& p, std::uint64_t tag, std::vector<std::byte>& frame);
  void complete_op(std::uint64_t op_id, const Status& status);

  // ucx_connection.cpp
  Conn& add_conn(ucp_ep_h ep, std::uint32_t rail, bool accepted, std::string remote);
  void close_conn(std::uint64_t id);
  void fail_conn(Conn& c, const std::string& why, std::string_view reason);
  Result<bool> send_am(Conn& c, unsigned id, RequestBox* box, const void* header, std::size_t header_bytes,
                       std::uint32_t flags);
  Status send_ctl(Conn& c, const CtlHeader& h, std::vector<std::byte> data = {});
  Status send_frame(Conn& c, Peer& p, std::uint64_t tag, std::vector<std::byte> frame);
  void start_handshake(Conn& c);
  void on_control(Conn& c, const CtlHeader& h, std::span<const std::byte> data);
  void on_challenge(Conn& c, std::span<const std::byte> data);
  void on_proof(Conn& c, const CtlHeader& h, std::span<const std::byte> data);
  void send_proof(Conn& c);
  void send_hello(Conn& c);
  void on_hello(Conn& c, const CtlHeader& h);
  void on_hello_ack(Conn& c, const CtlHeader& h);
  void on_frame(Conn& c, std::uint64_t tag, void* data, std::size_t bytes, const ucp_am_recv_param_t* param);
  void deliver_frames(Conn& c);
  bool ready_for_data(Conn& c, std::string_view what);

  // ucx_bulk.cpp
  void start_op(std::uint64_t op_id);
  void issue_op(std::uint64_t op_id, const std::shared_ptr<RemoteKey>& key);
  void on_key_query(Conn& c, const CtlHeader& h);
  void on_key_reply(Conn& c, const CtlHeader& h, std::span<const std::byte> data);
  void on_revoke(Conn& c, const CtlHeader& h);
  void on_revoke_ack(Conn& c, const CtlHeader& h);
  void release_key_use(const std::shared_ptr<RemoteKey>& key);
  void retire_key(const std::shared_ptr<RemoteKey>& key);
  void drop_peer_keys(PeerId peer);
  void forget_holder(std::uint64_t conn_id);

  TransportConfig config_;
  Capabilities caps_;
  mutable std::mutex mu_;
  std::condition_variable events_drained_;
  std::condition_variable revoked_;
  ProgressLoop loop_{"ucx transport", mu_, events_drained_};  // after the lock and the condition it waits on
  base::EventfdQueue<TransportEvent> events_;
  std::vector<Rail> rails_;
  std::vector<std::unique_ptr<RailArg>> rail_args_;  // one per rail, alive as long as its worker
  std::unique_ptr<AcceptGuard> guard_;
  std::atomic<int> wait_ms_{0};
  // Busy-polling (progress_all): until when (monotonic_now_ns()), and whether a turn is owed before then.
  std::atomic<std::int64_t> spin_until_ns_{0};
  std::atomic<bool> turn_wanted_{false};
  PeerTable<Peer> peers_;
  std::unordered_map<std::uint64_t, std::unique_ptr<Conn>> conns_;
  std::unordered_map<ucp_ep_h, std::uint64_t> conn_of_ep_;
  std::uint64_t next_conn_id_ = 1;
  std::vector<void*> closing_;  // ucp_ep_close_nbx requests still running
  // Remote keys no op uses any more, destroyed once no endpoint is closing (a
  // force-closed endpoint's cancelled requests may still name theirs).
  std::vector<ucp_rkey_h> dead_rkeys_;
  std::map<std::uint64_t, Op> ops_;
  std::uint64_t next_op_id_ = 1;
  std::map<KeyRef, std::shared_ptr<RemoteKey>> keys_;
  std::map<std::uint64_t, std::shared_ptr<RemoteKey>> queries_;  // query id -> entry
  std::uint64_t next_query_id_ = 1;
  std::map<std::uint64_t, std::shared_ptr<Region>> regions_;
  // Mappings by their start address, for a region that lies inside one (Mapping above).
  std::map<const std::byte*, std::weak_ptr<Mapping>> mappings_;
  std::map<std::uint64_t, Revocation> revocations_;
  std::uint64_t next_revocation_id_ = 1;
  GrantRefusals refusals_;
};

}  // namespace sluice::transport::ucx::detail
