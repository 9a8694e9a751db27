// Internals of the shm transport shared by its implementation files
// (shm_transport.cpp: set-up, public calls, failures, completion;
// shm_progress.cpp: the progress thread, hand-shake and ring service).
// Not part of any interface: include only from those files.
#pragma once

#include <sys/types.h>

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
#include "transports/shm/shm_ring.hpp"
#include "transports/shm/shm_transport.hpp"
#include "transports/shm/shm_wire.hpp"

namespace sluice::transport::shm::detail {

// epoll data ids: 0 the doorbell (the progress loop's wake eventfd, ProgressLoop::k_wake_id), 1 + rail
// the listening sockets, then channels.
inline constexpr std::uint64_t k_first_channel_id = 1ULL << 20;
// Connections taken from one listener per readiness event (as tcp): a flood
// of connects cannot hold the progress thread.
inline constexpr int k_accepts_per_event = 64;
inline constexpr std::size_t k_descriptor_bytes_max = 64;

struct Region {
  std::span<std::byte> bytes;
  RegionKind kind = RegionKind::host;
  RegionGrants grants;  // peers given it by remote_access()
};

// One record (or, for a message, a series of records) waiting for ring room.
struct TxItem {
  ShmRecord kind = ShmRecord::ack;
  std::array<std::byte, k_descriptor_bytes_max> head{};  // ShmBulk / ShmAck / ShmMessageHead
  std::size_t head_bytes = 0;
  std::vector<std::byte> body;      // a frame (message) or error text (ack)
  std::size_t sent = 0;             // of body, for a message cut into records
  bool started = false;             // a message's first record is in the ring
  std::uint64_t message_bytes = 0;  // counted against the peer's queue limit
};

enum class ChannelState : std::uint8_t { awaiting_hello, awaiting_reply, open };

struct Channel {
  Channel() = default;
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  ~Channel();

  std::uint64_t id = 0;
  int socket_fd = -1;
  int remote_doorbell_fd = -1;
  PeerId peer = 0;  // 0 until an accepted channel's hello names its group
  std::uint32_t local_rail = 0;
  ChannelState state = ChannelState::awaiting_hello;
  std::string remote;  // the address, for messages
  pid_t remote_pid = 0;
  std::byte* segment = nullptr;
  std::size_t segment_bytes = 0;
  ShmRing out;  // this side produces
  ShmRing in;   // this side consumes
  std::deque<TxItem> tx;

  // A control frame being reassembled from message records.
  bool rx_active = false;
  std::uint64_t rx_tag = 0;
  std::uint64_t rx_frame_bytes = 0;
  std::vector<std::byte> rx_frame;
};

struct Peer {
  PeerId id = 0;
  std::uint64_t remote_id = 0;
  bool accepted = false;
  bool up = false;
  std::string label;                              // "shm peer 3 (shm:NAME)"
  std::vector<std::vector<std::uint64_t>> rails;  // channel ids by local rail
  std::vector<std::uint32_t> cursor;              // round-robin start per rail (accepted peers)
  std::uint64_t control = 0;                      // rail 0's first channel: carries messages
  std::uint64_t expected = 0;                     // channels in the group
  std::uint64_t greeted = 0;                      // of them, those whose hand-shake completed
  std::uint64_t queued_message_bytes = 0;
  std::pair<std::uint64_t, std::uint64_t> group{0, 0};  // accepted: (connector instance, connector's peer id)
};

struct Op {
  std::uint64_t cookie = 0;
  PeerId peer = 0;
  std::uint64_t bytes = 0;
};

inline Capabilities make_capabilities() {
  Capabilities c;
  c.region_kinds = {RegionKind::host};
  c.max_message_bytes = k_shm_max_message_bytes;
  c.max_transfer_bytes = k_shm_max_transfer_bytes;
  c.stream = true;
  c.max_rails = k_max_rails;
  c.max_connections_per_rail = 1;
  return c;
}

class ShmTransport final : public Transport {
 public:
  explicit ShmTransport(TransportConfig config)
      : config_(std::move(config)),
        caps_(make_capabilities()),
        guard_(config_.accept, "shm", config_.rail_addresses.size(), config_.log) {}
  ~ShmTransport() override;

  Status open();

  std::string_view name() const override { return "shm"; }
  const Capabilities& capabilities() const override { return caps_; }
  PeerAddress listen_address() const override { return listen_address_; }
  Result<PeerId> connect(const PeerAddress& remote) override;
  Status disconnect(PeerId peer) override;
  Status register_region(std::uint64_t key, std::span<std::byte> bytes, RegionKind kind) override;
  Status deregister_region(std::uint64_t key) override;
  Result<RemoteRegionAccess> remote_access(std::uint64_t key, std::uint32_t rail, std::uint64_t grantee_id) override;
  Status send_message(PeerId peer, std::uint64_t tag, std::vector<std::byte> frame) override;
  Status put(const BulkRequest& request) override { return post(request, false); }
  Status get(const BulkRequest& request) override { return post(request, true); }
  std::size_t poll(std::vector<TransportEvent>& out, std::size_t max_events) override;
  int completion_fd() const override { return events_.fd(); }

 private:
  // Everything below runs with mu_ held.
  // shm_progress.cpp
  // The progress loop's hooks (transports/progress_loop.hpp).
  ProgressLoop::Hooks loop_hooks();
  void handle_listen(std::uint32_t rail);
  // The accept limits (TransportConfig::accept, accept_guard.hpp), as tcp:
  // a listener whose accept() fails leaves the epoll set for its back-off;
  // a channel whose hello does not arrive in time is closed.
  void set_listener_polled(std::uint32_t rail, bool polled);
  void service_accept_limits();
  int wait_timeout_ms(bool busy);
  void handle_socket(std::uint64_t id);
  void on_hello(Channel& c);
  void on_reply(Channel& c);
  void refuse_hello(Channel& c, const Status& why);
  bool service_channels();
  bool arm_channels();
  void consume(Channel& c);
  Status on_record(Channel& c, const RingRecord& record);
  Status on_message_record(Channel& c, const RingRecord& record);
  void serve_bulk(Channel& c, const ShmBulk& bulk, bool is_get);
  void on_ack(Channel& c, const ShmAck& ack, std::string_view text);
  void flush(Channel& c);
  bool write_front(Channel& c);
  std::size_t next_record_payload(const Channel& c) const;
  // shm_transport.cpp
  void enqueue(Channel& c, TxItem item);
  void ring_doorbell(int fd) const;
  void mark_up(Peer& p);
  void fail_channel(Channel& c, const std::string& why);
  void fail_peer(PeerId id, const std::string& why);
  void close_channel(std::uint64_t id);
  void complete_op(std::uint64_t op_id, const Status& status);
  void push_event(TransportEvent event);
  void log(const std::string& line) const;
  void reap();
  Status post(const BulkRequest& request, bool is_get);
  Peer* live_peer(PeerId id);
  Channel* channel(std::uint64_t id);
  Status start_channel(Peer& p, std::uint32_t rail, const std::string& name);

  TransportConfig config_;
  Capabilities caps_;
  AcceptGuard guard_;       // guarded by mu_
  GrantRefusals refusals_;  // guarded by mu_
  PeerAddress listen_address_;
  std::vector<std::string> listen_names_;
  std::vector<int> listen_fds_;
  std::uint64_t instance_ = 0;
  std::uint64_t probe_word_ = 0;  // read by peers in the hand-shake to test memory access
  bool busy_ = false;             // the progress thread's: channels had work last turn (do not block)

  mutable std::mutex mu_;
  std::condition_variable events_drained_;
  // Its wake eventfd is the doorbell: peers and our own callers ring it. After the lock and the
  // condition it waits on.
  ProgressLoop loop_{"shm transport", mu_, events_drained_};
  std::unordered_map<std::uint64_t, std::shared_ptr<Region>> regions_;
  std::map<std::uint64_t, std::unique_ptr<Channel>> channels_;
  PeerTable<Peer> peers_{config_.first_peer_id, k_shm_max_peers};
  std::vector<std::unique_ptr<Channel>> dead_channels_;  // closed, unmapped at a safe point
  std::map<std::uint64_t, Op> ops_;
  base::EventfdQueue<TransportEvent> events_;  // completion_fd(): readable while events wait
  std::uint64_t next_channel_id_ = k_first_channel_id;
  std::uint64_t next_op_ = 1;
};

}  // namespace sluice::transport::shm::detail
