// Internals of the TCP transport shared by its implementation files
// (tcp_transport.cpp: set-up, public calls, failures and completion;
// tcp_receive_path.cpp; tcp_send_path.cpp), split by concern as NCCL splits
// its IB transport. Not part of any interface: include only from those files.
#pragma once

#include <netinet/in.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/eventfd_queue.hpp"
#include "transports/accept_guard.hpp"
#include "transports/region_grants.hpp"
#include "transports/peer_table.hpp"
#include "transports/progress_loop.hpp"
#include "transports/region_range.hpp"
#include "transports/tcp/tcp_transport.hpp"
#include "transports/tcp/tcp_auth.hpp"
#include "transports/tcp/tcp_wire.hpp"

namespace sluice::transport::tcp::detail {

// epoll data ids: 0 the wake eventfd (ProgressLoop::k_wake_id), 1 + rail the listening sockets, then
// connections.
inline constexpr std::uint64_t k_first_conn_id = 1ULL << 20;
// Connections taken from one listener per readiness event: a flood of
// connects cannot hold the progress thread (level-triggered epoll reports the
// rest on the next round).
inline constexpr int k_accepts_per_event = 64;
inline constexpr std::uint64_t k_max_group_connections = std::uint64_t{k_max_rails} * k_max_connections_per_rail;

struct Region {
  std::span<std::byte> bytes;
  RegionKind kind = RegionKind::host;
  std::uint32_t users = 0;  // incoming transfers reading or writing it right now
  RegionGrants grants;      // peers given it by remote_access()
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
  std::string text;                 // error text after the header (acks)
  std::vector<std::byte> owned;     // a control frame
  const std::byte* body = nullptr;  // region bytes (zero copy) or owned.data()
  std::size_t body_bytes = 0;
  std::size_t sent = 0;             // of head + text + body
  std::uint64_t message_bytes = 0;  // counted against the peer's queue limit
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
  std::string remote;  // address text, for messages
  std::deque<TxItem> tx;
  // Authentication (tcp_auth.hpp), with a shared secret only. Until the
  // peer's proof checked out, only its one challenge and then its one proof
  // are accepted, at most k_tcp_max_preauth_rx_bytes are read, and only
  // auth_tx (at most k_tcp_max_preauth_tx_bytes: our challenge and proof) is sent.
  bool authenticated = true;
  std::uint64_t authenticated_id = 0;  // the node id the peer proved (shared secret set)
  AuthBytes nonce{};                   // our challenge to the peer
  AuthBytes peer_nonce{};              // the peer's challenge
  bool peer_challenged = false;        // the peer's challenge has arrived
  std::uint64_t preauth_rx_bytes = 0;  // bytes read before the peer proved itself
  std::uint64_t auth_tx_bytes = 0;     // bytes ever put in auth_tx
  std::deque<TxItem> auth_tx;

  RxState rx = RxState::header;
  PacketHeaderBytes head{};
  std::size_t head_have = 0;
  PacketHeader cur;
  std::byte* dst = nullptr;  // bulk_body: where the next byte goes
  std::uint64_t left = 0;    // body/text bytes still to read
  std::vector<std::byte> message;
  std::string text;
  RegionPin pin;            // put target while its body arrives
  Status refusal;           // why a put's body is being discarded
  std::uint64_t piece = 0;  // get_data: the local piece being filled
};

struct Peer {
  PeerId id = 0;
  std::uint64_t remote_id = 0;
  bool accepted = false;
  bool up = false;
  std::string label;                              // "tcp peer 3 (127.0.0.1:4000)"
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

inline Capabilities make_capabilities() {
  Capabilities c;
  c.region_kinds = {RegionKind::host};
  c.max_message_bytes = k_tcp_max_message_bytes;
  c.max_transfer_bytes = k_tcp_max_transfer_bytes;
  c.stream = true;
  c.max_rails = k_max_rails;
  c.max_connections_per_rail = k_max_connections_per_rail;
  return c;
}

// What a connection holds before its peer proved itself, charged against
// AcceptLimits::max_handshake_bytes (k_tcp_handshake_connection_bytes, 4 KiB,
// rounds it up): the Connection, the first block and map of each of its
// two send queues (libstdc++'s std::deque allocates 512 bytes and a
// 64-byte map when made), its challenge and proof, the bytes it may read,
// its address text and the maps' nodes.
inline constexpr std::size_t k_tcp_handshake_connection_parts_bytes =
    sizeof(Connection) + 2 * (512 + 64) + k_tcp_max_preauth_tx_bytes + k_tcp_max_preauth_rx_bytes + 256;
static_assert(k_tcp_handshake_connection_parts_bytes <= k_tcp_handshake_connection_bytes,
              "k_tcp_handshake_connection_bytes must cover what one hand-shaking connection holds");

class TcpTransport final : public Transport {
 public:
  explicit TcpTransport(TransportConfig config)
      : config_(std::move(config)),
        caps_(make_capabilities()),
        guard_(config_.accept, "tcp", config_.rail_addresses.size(), config_.log, k_tcp_handshake_connection_bytes) {}
  ~TcpTransport() override;

  Status open();

  std::string_view name() const override { return "tcp"; }
  const Capabilities& capabilities() const override { return caps_; }
  PeerAddress listen_address() const override { return listen_address_; }
  Result<PeerId> connect(const PeerAddress& remote) override;
  Status disconnect(PeerId peer) override;
  Status register_region(std::uint64_t key, std::span<std::byte> bytes, RegionKind kind) override;
  Status deregister_region(std::uint64_t key) override;
  Result<RemoteRegionAccess> remote_access(std::uint64_t key, std::uint32_t rail, std::uint64_t grantee_id) override;
  Status send_message(PeerId peer, std::uint64_t tag, std::vector<std::byte> frame) override;
  std::size_t send_messages(PeerId peer, std::span<OutgoingMessage> messages, Status* failure) override;
  Status put(const BulkRequest& request) override { return post(request, false); }
  Status get(const BulkRequest& request) override { return post(request, true); }
  std::size_t poll(std::vector<TransportEvent>& out, std::size_t max_events) override;
  int completion_fd() const override { return events_.fd(); }
  // What connections whose peer has not proven itself hold (tcp_preauth_usage in tcp_transport.hpp).
  TcpPreauthUsage preauth_usage() const;

 private:
  // Everything below runs with mu_ held.
  // The progress loop's hooks (transports/progress_loop.hpp).
  ProgressLoop::Hooks loop_hooks();
  void handle_listen(std::uint32_t rail);
  // The accept limits (TransportConfig::accept, accept_guard.hpp): a
  // listener out of descriptors leaves the epoll set for its back-off and
  // comes back in service_accept_limits(), which also closes connections
  // whose hand-shake missed its deadline.
  void set_listener_polled(std::uint32_t rail, bool polled);
  void service_accept_limits();
  void admit_connection(std::uint32_t rail, int fd, const sockaddr_in& from);
  void handle_connection(std::uint64_t id, std::uint32_t events);
  void finish_connect(Connection& c);
  void read_from(Connection& c);
  // Where the connection's next received bytes go, and how many it wants.
  void rx_target(Connection& c, std::byte** into, std::uint64_t* want);
  // Hands `bytes` (received into rx_buffer_) to the connection's packets.
  void feed(Connection& c, std::span<const std::byte> bytes);
  void consumed(Connection& c, std::size_t n);
  void on_header(Connection& c);
  void on_hello(Connection& c, const PacketHeader& h);
  // false when h (a hello) claims another node than c's peer proved: c is refused.
  bool hello_matches_proof(Connection& c, const PacketHeader& h);
  // Authentication: start() queues our challenge; on_auth_packet() answers
  // a challenge or checks a proof (tcp_auth.hpp).
  void start_auth(Connection& c);
  void on_auth_packet(Connection& c, const PacketHeader& h, const std::vector<std::byte>& body);
  // on_header's checks of a challenge or proof header: false when it refused the connection.
  bool admit_auth_header(Connection& c, const PacketHeader& h);
  // Queues this side's proof on c (both nonces known).
  void send_proof(Connection& c);
  void flush_queue(Connection& c, std::deque<TxItem>& queue);
  void on_body_done(Connection& c);
  void start_text(Connection& c);
  void enqueue(Connection& c, TxItem item, bool flush_now = true);
  // send_message's checks of one frame, and its packet (mu_ held).
  Result<TxItem> message_item(Peer& p, std::uint64_t tag, std::vector<std::byte>& frame);
  void flush(Connection& c);
  void set_out_interest(Connection& c, bool on);
  // Closes c (its peer with it, if grouped), logged with `why`; `reason`: a
  // short fixed text naming the kind of failure, under which a failure
  // during the hand-shake is counted when the rate limit folds its line.
  void fail_connection(Connection& c, const std::string& why, std::string_view reason = {});
  void fail_peer(PeerId id, const std::string& why);
  void close_connection(std::uint64_t id);
  void complete_piece(std::uint64_t piece_id, const Status& status);
  void push_event(TransportEvent event);
  void log(const std::string& line) const;
  void reap();
  Status post(const BulkRequest& request, bool is_get);
  // connect()'s steps. Adds a peer entry expecting connections_per_rail connections on each of `rails` rails.
  Peer& add_peer(const PeerAddress& remote, std::uint32_t rails);
  // Opens connection `index` of `rail` to `target` for peer p and queues its hello: the socket's error when it
  // could not be opened; false when the peer failed meanwhile (fail_peer has run and freed p).
  Result<bool> open_peer_connection(Peer& p, std::uint32_t rail, std::uint32_t index, const sockaddr_in& target);
  Peer* live_peer(PeerId id);
  Connection* connection(std::uint64_t id);
  std::shared_ptr<Region> find_region(std::uint64_t key);
  // The region an incoming put/get on connection c may reach, checked for
  // range and (require_grants) for c's peer's grant.
  Status check_remote_range(const Connection& c, std::uint64_t key, std::uint64_t offset, std::uint64_t bytes,
                            std::shared_ptr<Region>* region);

  TransportConfig config_;
  Capabilities caps_;
  AcceptGuard guard_;       // guarded by mu_
  GrantRefusals refusals_;  // guarded by mu_
  PeerAddress listen_address_;
  std::vector<sockaddr_in> rail_addresses_;
  std::vector<int> listen_fds_;
  int netns_fd_ = -1;  // TransportConfig::netns, open while the transport lives

  mutable std::mutex mu_;
  std::condition_variable region_released_;
  std::condition_variable events_drained_;
  ProgressLoop loop_{"tcp transport", mu_, events_drained_};  // after the lock and the condition it waits on
  std::unordered_map<std::uint64_t, std::shared_ptr<Region>> regions_;
  std::unordered_map<std::uint64_t, std::unique_ptr<Connection>> connections_;
  PeerTable<Peer> peers_{config_.first_peer_id, k_tcp_max_peers};
  std::vector<std::unique_ptr<Connection>> dead_connections_;  // closed, freed at a safe point
  std::unordered_map<std::uint64_t, Op> ops_;
  std::unordered_map<std::uint64_t, Piece> pieces_;
  base::EventfdQueue<TransportEvent> events_;  // completion_fd(): readable while events wait
  std::vector<std::byte> drain_scratch_ = std::vector<std::byte>(k_tcp_drain_chunk_bytes);
  std::vector<std::byte> rx_buffer_ = std::vector<std::byte>(k_tcp_rx_buffer_bytes);
  std::uint64_t peak_auth_tx_bytes_ = 0;  // the most ever put in one connection's auth_tx
  std::uint64_t next_connection_id_ = k_first_conn_id;
  std::uint64_t next_op_ = 1;
  std::uint64_t next_piece_ = 1;
};

}  // namespace sluice::transport::tcp::detail
