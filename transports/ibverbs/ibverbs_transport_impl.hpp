// Internals of the ibverbs transport shared by its implementation files
// (ibverbs_transport.cpp: set-up, public calls; ibverbs_connect.cpp: rdma_cm;
// ibverbs_memory.cpp: registration; ibverbs_data_path.cpp: posting work and
// handling control messages; ibverbs_completion.cpp: CQ polling, completion
// and failures). Only compiled with rdma-core. Include only from those files.
#pragma once

#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/eventfd_queue.hpp"
#include "transports/ibverbs/ibverbs_registration_cache.hpp"
#include "transports/ibverbs/ibverbs_remote_key_cache.hpp"
#include "transports/ibverbs/ibverbs_transfer_split.hpp"
#include "transports/ibverbs/ibverbs_transport.hpp"
#include "transports/ibverbs/ibverbs_wire.hpp"
#include "transports/region_grants.hpp"

namespace sluice::transport::ibverbs::detail {

// epoll data: the wake eventfd, the rdma_cm event channel, then one per device.
inline constexpr std::uint64_t k_wake_tag = 0;
inline constexpr std::uint64_t k_cm_tag = 1;
inline constexpr std::uint64_t k_first_device_tag = 2;
inline constexpr int k_epoll_batch = 16;
// Listening ids carry 1 + rail as context; connections carry their id (>= this).
inline constexpr std::uint64_t k_first_connection_id = 1ULL << 20;
// rdma_listen backlog: every client's connections arrive at once at start-up.
inline constexpr int k_ibv_listen_backlog = 1024;

struct Device {
  std::uint32_t index = 0;
  ibv_context* verbs = nullptr;  // owned by librdmacm
  std::string name;
  ibv_pd* pd = nullptr;
  ibv_comp_channel* channel = nullptr;
  ibv_cq* cq = nullptr;
  std::uint32_t cq_entries = 0;
  std::uint32_t outstanding = 0;  // work requests that will produce a completion
  std::uint8_t rd_atomic = 1;
};

struct Region {
  std::uint64_t key = 0;
  std::span<std::byte> bytes;
  RegionKind kind = RegionKind::host;
  int dmabuf_fd = -1;
  std::uint64_t dmabuf_offset = 0;
  std::vector<Registration> per_device;  // by Device::index
  std::set<PeerId> exported_to;          // peers that asked for it
  std::set<std::uint64_t> granted_to;    // remote ids (TransportConfig::local_id) given its key by remote_access()
  std::set<PeerId> awaiting_acks;        // deregistration: revokes not yet acked
};

// One SEND waiting for a send slot or for the connection to come up.
struct TxItem {
  ControlHeaderBytes head{};
  std::shared_ptr<const std::vector<std::byte>> body;  // frame, packed region or error text
  std::size_t body_offset = 0;
  std::size_t body_bytes = 0;
  std::uint64_t message_bytes = 0;  // counted against the peer's queue limit
};

// One piece of a bulk operation not yet posted (ibverbs_transfer_split.hpp).
struct PendingPiece {
  std::uint64_t op = 0;
  std::uint64_t offset = 0;  // within the operation
  std::uint64_t bytes = 0;
};

struct Connection {
  std::uint64_t id = 0;
  rdma_cm_id* cm = nullptr;
  PeerId peer = 0;
  std::uint32_t local_rail = 0;
  std::uint32_t remote_rail = 0;
  std::uint32_t index = 0;  // within the rail
  bool accepted = false;
  bool control = false;  // (rail 0, connection 0): SEND/RECV
  bool established = false;
  Device* device = nullptr;
  std::string remote;  // address text, for messages
  // Control QP only: receive slots, then send slots, registered as one MR.
  std::vector<std::byte> ring;
  ibv_mr* ring_mr = nullptr;
  std::vector<std::uint32_t> free_send_slots;
  std::vector<std::uint64_t> send_slot_message_bytes;
  std::deque<TxItem> backlog;
  std::uint32_t posted_sends = 0;    // send-queue work requests not completed
  std::deque<PendingPiece> waiting;  // bulk pieces waiting for room or for the connection
  // Reassembly of a fragmented frame.
  bool in_message = false;
  std::uint64_t message_tag = 0;
  std::uint64_t message_total = 0;
  std::vector<std::byte> message;
};

struct Peer {
  PeerId id = 0;
  std::uint64_t remote_id = 0;
  bool accepted = false;
  bool up = false;
  std::string label;                              // "ibverbs peer 3 (10.0.0.2:4791)"
  std::vector<std::vector<std::uint64_t>> rails;  // connection ids by local rail
  std::vector<std::uint32_t> cursor;              // round-robin start per rail
  std::uint64_t control = 0;
  std::uint32_t expected = 0;
  std::uint32_t established = 0;
  std::uint64_t queued_message_bytes = 0;
  std::pair<std::uint64_t, std::uint64_t> group{0, 0};  // accepted: (remote id, connector's nonce)
  // Frames that arrived before PeerUp: a QP takes SENDs once it is ready to
  // receive, which can be before this side has processed ESTABLISHED on all
  // connections. Delivered right after PeerUp so PeerUp always comes first.
  std::vector<MessageReceived> early;
};

struct Op {
  std::uint64_t id = 0;
  BulkRequest request;
  bool is_get = false;
  std::uint64_t use = 0;  // RemoteKeyCache use while posted
  RemoteRegionDesc remote;
  std::uint64_t local_address = 0;  // request.local_offset included
  std::uint32_t lkey = 0;           // of the local region on the rail's device
  std::uint32_t pieces_left = 0;    // posted pieces not yet completed
  Status status;                    // the first piece error
};

enum class WrKind : std::uint8_t { recv, send, bulk };

struct WrInfo {
  WrKind kind = WrKind::recv;
  std::uint64_t connection = 0;
  std::uint32_t slot = 0;
  std::uint64_t op = 0;
};

class IbverbsTransportImpl;

// ibv_reg_mr / ibv_reg_dmabuf_mr on one transport's devices.
class VerbsRegistrationBackend final : public RegistrationBackend {
 public:
  explicit VerbsRegistrationBackend(const std::vector<std::unique_ptr<Device>>& devices) : devices_(devices) {}
  Result<Registration> register_memory(const RegistrationRequest& request, void** handle) override;
  void deregister_memory(void* handle) override;

 private:
  const std::vector<std::unique_ptr<Device>>& devices_;
};

class IbverbsTransportImpl final : public IbverbsTransport {
 public:
  explicit IbverbsTransportImpl(TransportConfig config);
  ~IbverbsTransportImpl() override;

  Status open();

  std::string_view name() const override { return "ibverbs"; }
  const Capabilities& capabilities() const override { return caps_; }
  PeerAddress listen_address() const override { return listen_address_; }
  Result<PeerId> connect(const PeerAddress& remote) override;
  Status disconnect(PeerId peer) override;
  Status register_region(std::uint64_t key, std::span<std::byte> bytes, RegionKind kind) override;
  Status deregister_region(std::uint64_t key) override;
  Status send_message(PeerId peer, std::uint64_t tag, std::vector<std::byte> frame) override;
  Status put(const BulkRequest& request) override { return post(request, false); }
  Status get(const BulkRequest& request) override { return post(request, true); }
  std::size_t poll(std::vector<TransportEvent>& out, std::size_t max_events) override;
  int completion_fd() const override { return events_.fd(); }
  Status register_dmabuf_region(std::uint64_t key, std::span<std::byte> device_bytes, int dmabuf_fd,
                                std::uint64_t dmabuf_offset) override;
  Result<RemoteRegionDesc> export_region(std::uint64_t key, std::uint32_t rail, PeerId peer) override;
  Status import_region(PeerId peer, std::uint32_t rail, std::uint64_t remote_key,
                       const RemoteRegionDesc& desc) override;
  Result<RemoteRegionAccess> remote_access(std::uint64_t key, std::uint32_t rail, std::uint64_t grantee_id) override;
  KeyStats key_stats() const override;

 private:
  // Everything below runs with mu_ held.
  // ibverbs_transport.cpp
  void run_loop();
  void log(const std::string& line) const;
  void push_event(TransportEvent event);
  Peer* live_peer(PeerId id);
  GrantRefusals refusals_;  // guarded by mu_
  Connection* connection(std::uint64_t id);
  Status add_region(std::uint64_t key, std::span<std::byte> bytes, RegionKind kind, int dmabuf_fd,
                    std::uint64_t dmabuf_offset);
  // ibverbs_memory.cpp: enters a carried key and starts the operations that
  // waited for a query of the same entry; false: no room in the cache.
  bool prime_remote_key(PeerId peer, std::uint32_t rail, std::uint64_t key, const RemoteRegionDesc& desc);
  // ibverbs_connect.cpp
  Result<Device*> device_for(ibv_context* verbs);
  std::uint64_t nonce_of(PeerId peer) const;
  void handle_cm_events();
  void on_connect_request(rdma_cm_id* id, std::uint32_t rail, std::span<const std::byte> private_data);
  void on_established(Connection& c, std::span<const std::byte> private_data);
  Status create_queue_pair(Connection& c);
  Connection& new_connection(rdma_cm_id* id);
  void destroy_connection(std::uint64_t id);
  // ibverbs_data_path.cpp
  Status post(const BulkRequest& request, bool is_get);
  void start_op(Op& op);
  bool post_bulk(Connection& c, Op& op, const PendingPiece& piece);
  void piece_done(std::uint64_t op_id, Status status);
  void queue_control(Connection& c, TxItem item);
  void flush_control(Connection& c);
  void send_region_query(Peer& p, std::uint32_t rail, std::uint64_t key);
  void send_simple(PeerId peer, ControlKind kind, std::uint64_t key);
  Status post_receive(Connection& c, std::uint32_t slot);
  void on_receive(Connection& c, std::span<const std::byte> bytes);
  void on_region_query(Connection& c, const ControlHeader& h);
  void on_region_answer(Connection& c, const ControlHeader& h, std::span<const std::byte> body);
  void drain_waiting(Connection& c);
  std::uint32_t remote_rail_of(const Peer& p, std::uint32_t local_rail) const;
  // ibverbs_completion.cpp
  std::size_t drain_completions(Device& d);
  void on_completion(const ibv_wc& wc);
  void complete_op(std::uint64_t op_id, Status status);
  void fail_peer(PeerId id, const std::string& why);
  void fail_connection(Connection& c, const std::string& why);

  TransportConfig config_;
  Capabilities caps_;
  PeerAddress listen_address_;
  std::vector<sockaddr_in> rail_addresses_;
  std::vector<rdma_cm_id*> listen_ids_;
  std::vector<std::uint32_t> rail_device_;  // rail -> Device::index
  rdma_event_channel* cm_channel_ = nullptr;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::thread loop_;
  std::atomic<bool> stop_{false};

  mutable std::mutex mu_;
  std::condition_variable revoke_acked_;
  std::condition_variable events_drained_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::unique_ptr<VerbsRegistrationBackend> backend_;
  std::unique_ptr<RegistrationCache> registrations_;
  RemoteKeyCache remote_keys_{k_ibv_max_cached_remote_regions};
  std::unordered_map<std::uint64_t, std::shared_ptr<Region>> regions_;
  std::map<std::uint64_t, std::shared_ptr<Region>> revoking_;  // deregistrations waiting for acks
  std::unordered_map<std::uint64_t, std::unique_ptr<Connection>> connections_;
  std::unordered_map<PeerId, std::unique_ptr<Peer>> peers_;
  std::map<std::pair<std::uint64_t, std::uint64_t>, PeerId> accepted_groups_;
  std::unordered_map<std::uint64_t, Op> ops_;
  std::unordered_map<std::uint64_t, WrInfo> wrs_;
  base::EventfdQueue<TransportEvent> events_;  // completion_fd(): readable while events wait
  std::uint64_t next_connection_id_ = k_first_connection_id;
  PeerId next_peer_ = 1;
  std::uint64_t next_op_ = 1;
  std::uint64_t next_wr_ = 1;
};

}  // namespace sluice::transport::ibverbs::detail
