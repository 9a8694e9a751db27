// One node of a hardware world: its transport, its memory regions, its
// storage targets, and the dispatcher thread that turns transport and
// storage completions into events for the node's services.
//
// Memory regions are real host buffers (aligned to k_direct_io_alignment_bytes
// so that storage I/O can go O_DIRECT), zeroed, registered with the transport
// under their region id, so a peer names one by (node, region) exactly as a
// MemHandle does. GPU regions are cudaMalloc'd through the GPU memory
// operations the world was given (HwWorldConfig::gpu_memory, from
// hw_backends/cuda; hw_backends/gpu_memory_ops.hpp; without them alloc
// answers unavailable), and a transfer between a GPU region and host memory
// of this node is a cudaMemcpy.
//
// GPU regions and the transport (GPUDirect RDMA). alloc() registers a GPU
// region with the first of these that works:
//   1. peer memory: the transport declares RegionKind::cuda; register_region
//      by pointer (ucx: ucp_mem_map of CUDA memory; on an RDMA NIC GPUDirect
//      RDMA through nvidia-peermem or dma-buf, UCX's choice).
//   2. bounce: not registered; core/sched's plans bounce through pinned
//      memory, and a transport transfer naming the region is refused.
// A way the transport declares but that fails is a fallback: logged once per
// node with its reason, and reported by alloc() (GpuRegistration) for HwEnv
// to count (k_metric_gpu_peer_memory_fallback). A transport that does not
// declare it (tcp, shm) takes 2 with no fallback: that is the plan, not a
// failure.
//
// How a TransferSpec is carried out (mechanism only; the spec is core/sched's):
//   src and dst on this node   memmove on the calling service's thread
//   src here, dst remote       transport put into the remote region
//   dst here, src remote       transport get from the remote region
//   neither here               invalid_argument
// The rail is the spec's NIC index on this node (src_nic for a put, dst_nic
// for a get); k_no_id means rail 0, and an index past the node's rails wraps
// (NIC i -> rail i mod rails), logged once.
//
// Remote keys. On a one-sided transport (declares rdma_write or rdma_read) a
// put/get needs the remote region's key on the remote rail it reaches (rail
// r reaches the peer's rail r: every node of a world has the same rails).
// The spec's remote_region, when it names that rail, goes down with the
// request (BulkRequest::remote_access): no round trip. Otherwise the
// transport asks the owner (the fallback): transfer() says which happened,
// and the first fallback of each kind is logged. remote_access() is the
// owner's side: the key of a registered region for one rail, granted to a
// node (the transport revokes it there when the region is freed).
//
// Thread-safety: every public call may come from any service thread of the node.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/env.hpp"
#include "hw/service_loop.hpp"
#include "hw_backends/gpu_memory_ops.hpp"
#include "hw_backends/storage_backend.hpp"
#include "transports/transport.hpp"

namespace sluice::hw {

class HwWorld;

// Limit: freed host buffers a node keeps for reuse (HwNode::pooled_); past
// it, a freed buffer goes back to the C library. Beside the node memory
// limit (HwWorldConfig::node_memory_limit_bytes), which counts live regions.
inline constexpr std::uint64_t k_pooled_host_bytes = std::uint64_t{256} << 20;
// Peers reported down before they were filed, remembered at most (HwNode::early_down_).
inline constexpr std::size_t k_max_early_down_peers = 1024;

// Metric names HwEnv counts per GPU region allocated: where it was
// registered, and each declared way that failed (see "GPU regions" above).
inline constexpr std::string_view k_metric_gpu_region_peer_memory = "memory.gpu_region_peer_memory";
inline constexpr std::string_view k_metric_gpu_region_bounce = "memory.gpu_region_bounce";
inline constexpr std::string_view k_metric_gpu_peer_memory_fallback = "memory.gpu_peer_memory_fallback";

// How alloc() left a GPU region with the transport.
struct GpuRegistration {
  enum class Path : std::uint8_t { peer_memory = 0, bounce = 1 };
  Path path = Path::bounce;
  bool peer_memory_failed = false;  // declared, but the registration failed
};

class HwNode {
 public:
  HwNode(HwWorld& world, NodeId id);
  ~HwNode();
  HwNode(const HwNode&) = delete;
  HwNode& operator=(const HwNode&) = delete;

  // Creates the transport (listening on its rails). Called once, before start().
  Status open();
  NodeId id() const { return id_; }
  // The world's GPU memory operations (HwWorldConfig::gpu_memory), or nullptr.
  const GpuMemoryOps* gpu_memory() const;
  transport::PeerAddress address() const;

  Status add_target(TargetId target, const StorageTargetConfig& config);
  bool has_target(TargetId target) const { return targets_.contains(target); }

  // Starts and stops the dispatcher thread. stop() also closes the transport
  // (peers see this node vanish) and drops operations still pending.
  void start();
  void stop();

  // `gpu_registration`, when given, says what became of a GPU region (set on
  // success of a GPU allocation only).
  Result<MemHandle> alloc(MemKind kind, std::uint16_t device, std::uint64_t bytes,
                          GpuRegistration* gpu_registration = nullptr);
  void free(const MemHandle& region);
  // Env::open_window / close_window: a region id of its own over the range's
  // bytes, registered with the transport like the region it lies in, so a
  // peer's transfer names the window's key; closing deregisters it (waiting
  // for an incoming transfer moving bytes right then), after which a late
  // put or get naming it fails at this end with not_found.
  Result<MemHandle> open_window(const MemHandle& range);
  void close_window(const MemHandle& window);
  // The bytes of a range on this node; not_found / invalid_argument naming `what`.
  Result<std::span<std::byte>> resolve(const MemHandle& range, std::string_view what) const;
  std::uint64_t allocated_bytes() const;

  // Operations of a service on this node; the Completion{op} goes to `loop`.
  // transfer() answers how a one-sided transfer got its remote key.
  enum class RemoteKeyUse : std::uint8_t {
    not_needed = 0,  // a local copy, a stream transport, or failed before posting
    carried = 1,     // the spec's remote_region went down with the request
    fallback = 2,    // the transport resolves the key with the owner (query or its cache)
  };
  RemoteKeyUse transfer(ServiceLoop& loop, OpId op, const TransferSpec& spec);
  // The key of `range`'s registered region on the rail of `nic`, granted to
  // node `grantee` (see "Remote keys" above). unavailable: a GPU region on
  // the bounce path (not registered), a stopped node, or a transport that
  // needs no keys.
  Result<proto::RdmaRegionDesc> remote_access(const MemHandle& range, std::uint32_t nic, NodeId grantee);
  // Whether `range` is a GPU region the transport can move bytes into and
  // out of by itself (registered), so no bounce is needed.
  bool gpu_registered(const MemHandle& range);
  void storage_io(ServiceLoop& loop, OpId op, const StorageIoSpec& spec);
  // Control frames to services of another node, `to_node`, in order,
  // gathered into as few system calls as the transport allows. Each counts
  // as in flight (HwWorld::note_in_flight) until the receiving node hands it
  // to a loop. Returns how many were taken (from the first); the rest could
  // not be (*failure says why).
  struct Outgoing {
    Endpoint to;
    std::vector<std::byte> frame;
  };
  std::size_t send_all(Endpoint from, NodeId to_node, std::span<Outgoing> frames, Status* failure);
  // Transfers and storage I/O started and not yet handed back to their loop
  // (0 once the node is down: its pending operations are dropped).
  std::int64_t in_flight_ops() const { return down_ ? 0 : in_flight_ops_.load(); }

 private:
  // The key of this node's region `region` on the wire (HwWorld::region_wire_key).
  std::uint64_t wire_key(std::uint32_t region) const;
  struct Region {
    std::byte* data = nullptr;
    std::uint64_t length = 0;
    MemKind kind = MemKind::host;
    std::uint16_t device = 0;
    // Registered with the transport (host memory always; GPU memory where
    // the transport reaches it: "GPU regions" above).
    bool registered = false;
    bool window = false;  // open_window(): the memory belongs to another region
  };
  // Registers GPU region `region_id` by the first way that works ("GPU regions" above).
  GpuRegistration register_gpu_region(std::uint32_t region_id, std::byte* data, std::uint64_t bytes,
                                      std::uint16_t device);
  // Logs a GPU registration fallback, the first time per `logged` flag.
  void log_gpu_fallback_once(bool& logged, const std::string& line);
  struct Route {
    ServiceLoop* loop = nullptr;
    OpId op = 0;
  };

  void dispatch();
  void on_transport_event(transport::TransportEvent& event);
  // The deliveries of one poll, handed to their loops together (dispatcher thread only).
  void hand_over_deliveries();
  std::uint64_t route(ServiceLoop& loop, OpId op);
  void complete(std::uint64_t cookie, Completion c);
  Result<transport::PeerId> peer_for(NodeId node);
  std::uint32_t rail_of(std::uint32_t nic);
  // Posts, or parks the post for the dispatcher to retry while it says `again`.
  void post_or_defer(std::function<Status()> post, std::uint64_t cookie);
  void retry_deferred();

  HwWorld& world_;
  NodeId id_;
  std::unique_ptr<transport::Transport> transport_;
  transport::PeerAddress address_;  // cached at open(): other nodes read it while this one may stop
  std::atomic<bool> down_{false};
  std::atomic<std::int64_t> in_flight_ops_{0};
  std::map<TargetId, std::unique_ptr<StorageBackend>> targets_;
  std::thread dispatcher_;
  int wake_fd_ = -1;
  bool stopping_ = false;

  mutable std::mutex mu_;
  std::unordered_map<std::uint32_t, Region> regions_;
  // Freed host buffers kept for the next alloc of the same rounded size, at
  // most k_pooled_host_bytes: a fresh aligned_alloc of a chunk-sized buffer
  // page-faults and the kernel zeroes every page before alloc zeroes it again
  // (about 10% of the CPU of a 1 MiB file sweep through the whole stack on
  // the 2-core CI machine, perf record of make bench-hw, issue 20 P10).
  std::multimap<std::uint64_t, std::byte*> pooled_;  // rounded bytes -> buffer
  std::uint64_t pooled_bytes_ = 0;
  std::uint32_t next_region_ = 1;
  std::uint64_t allocated_bytes_ = 0;
  std::unordered_map<std::uint64_t, Route> routes_;
  std::uint64_t next_cookie_ = 1;
  std::map<NodeId, transport::PeerId> peers_;
  // Peers the transport reported down that were not in peers_: a connect
  // refused at once (a peer process that was killed and is not back yet) can
  // report its PeerDown before peer_for has filed the new peer, which would
  // then stay filed, dead, for good. peer_for looks here before it files one.
  // The oldest are dropped past k_max_early_down_peers (the window is short).
  std::deque<transport::PeerId> early_down_;
  // Deliveries of the poll being handled, by loop, and how many (dispatcher thread only).
  std::vector<std::pair<ServiceLoop*, std::vector<Event>>> pending_deliveries_;
  std::int64_t pending_delivery_count_ = 0;
  std::vector<std::pair<std::function<Status()>, std::uint64_t>> deferred_;
  bool rail_wrap_logged_ = false;
  bool no_key_logged_ = false;
  bool key_rail_logged_ = false;
  bool gpu_peer_memory_fallback_logged_ = false;
};

}  // namespace sluice::hw
