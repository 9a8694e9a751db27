// The ibverbs transport: RC queue pairs set up through rdma_cm, SEND/RECV for
// control frames, one-sided RDMA WRITE (put) and READ (get) between
// registered regions, on InfiniBand or RoCE NICs (soft-RoCE included).
//
// How it meets transports/transport.hpp, split by concern as NCCL's net_ib
// (src/transport/net_ib/: init, connect, reg, p2p):
// - ibverbs_device.cpp: discovery (ibv_get_device_list, ports, link layer,
//   GIDs) into plain data (ibverbs_capabilities.hpp), from which the declared
//   capabilities and the "unavailable: <why>" come.
// - ibverbs_connect.cpp: rdma_cm. Each rail address gets a listening
//   rdma_cm id; connect() resolves address and route and connects
//   connections_per_rail RC QPs per rail, the hello (ibverbs_wire.hpp) riding
//   in the private data. Rail r talks to the peer's rail (r mod n). The QP of
//   (rail 0, connection 0) is the peer's control QP: it alone carries SENDs
//   and has the pre-posted receive ring (k_ibv_recv_ring_slots slots of
//   k_ibv_control_slot_bytes); frames larger than a slot are fragmented, RC
//   keeps them in order.
// - ibverbs_memory.cpp: registration. A region is registered on the
//   protection domain of every device behind a rail (RegistrationCache:
//   counted, bounded); host memory with ibv_reg_mr, CUDA memory with ibv_reg_mr
//   through a peer-memory client, dmabuf memory with ibv_reg_dmabuf_mr and the
//   exporter's fd (Transport::register_dmabuf_region; unavailable, with the
//   verbs error named, where the build or the driver has no dma-buf support).
// - ibverbs_data_path.cpp: put = RDMA WRITE, get = RDMA READ on the QPs of
//   the request's rail (large transfers split over them, round-robin,
//   ibverbs_transfer_split.hpp; the op completes when every piece has); the remote address and
//   rkey come from RemoteKeyCache, filled by a key the request carries
//   (BulkRequest::remote_access, granted by the owner's remote_access() and
//   sent in a message: no round trip) or given up front by import_region(),
//   else by region_query/region_answer over the control QP (the fallback,
//   counted in key_stats()).
// - ibverbs_completion.cpp: one CQ per device with a completion channel; the
//   progress thread sleeps in epoll on the channels, the rdma_cm event channel
//   and a wake fd, and drains the CQs with ibv_poll_cq (non-blocking); poll()
//   also drains them from the caller's thread before taking events.
// Completion of a put is the RC acknowledgement of the WRITE: the bytes are
// in the remote region when OpDone comes, without the remote CPU. A QP error
// (retry exceeded, remote access error, flush) or an rdma_cm disconnect
// declares the peer lost: pending operations complete unavailable naming it,
// then PeerDown.
//
// TransportConfig::socket_buffer_bytes does not apply: bulk bytes move by RDMA
// WRITE/READ and control frames by SEND on RC QPs, none through a kernel
// socket (rdma_cm's own connection set-up included), so there is no
// SO_SNDBUF/SO_RCVBUF to set; flow is bounded by the QP depths above and the
// receive ring. The value is checked against its limits like every
// transport's and otherwise ignored.
//
// deregister_region() revokes the region at every peer that asked for it,
// and at every connection of the nodes it was granted to by remote_access(),
// and waits for their acks (they ack once their transfers into it completed), so
// the contract's "blocks until no incoming transfer" holds for one-sided
// transfers too; a peer lost meanwhile counts as acked.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/proto/wire_limits.hpp"
#include "transports/ibverbs/ibverbs_capabilities.hpp"
#include "transports/ibverbs/ibverbs_wire.hpp"
#include "transports/transport.hpp"

namespace sluice::transport::ibverbs {

// Control-QP receive ring: slots pre-posted per peer, and their size. 64 KiB
// slots carry every small proto frame in one SEND (a ReadChunk is ~100 bytes);
// a 16 MiB frame takes 1024 fragments. 1 MiB of ring per peer keeps a server
// with a thousand clients at 1 GiB. Receivers repost a slot as soon as it is copied out; a sender
// meeting an empty ring is held back by the HCA (RNR retry) rather than
// failing (k_ibv_rnr_retry).
inline constexpr std::uint32_t k_ibv_control_slot_bytes = 16 * 1024;
inline constexpr std::uint32_t k_ibv_recv_ring_slots = 32;
// SEND buffers per control QP (registered, reused as SENDs complete).
inline constexpr std::uint32_t k_ibv_send_ring_slots = 32;
// Work requests posted and not completed per QP; more wait in software.
inline constexpr std::uint32_t k_ibv_max_send_wr = 256;
// Completion queue entries per device (every QP of the device shares it).
inline constexpr int k_ibv_cq_entries = 8192;
// Work completions taken per ibv_poll_cq call.
inline constexpr int k_ibv_poll_batch = 32;
// RDMA READs in flight per QP (initiator depth / responder resources), capped
// by the device's max_qp_rd_atom; NCCL uses the device maximum.
inline constexpr std::uint8_t k_ibv_max_rd_atomic = 16;
// Transport retries, RNR retries (7 = forever) and the local ACK timeout
// exponent (4.096 us x 2^18 ~ 1.07 s): NCCL_IB_RETRY_CNT=7, NCCL_IB_TIMEOUT=18.
inline constexpr std::uint8_t k_ibv_retry_count = 7;
inline constexpr std::uint8_t k_ibv_rnr_retry = 7;
inline constexpr std::uint8_t k_ibv_ack_timeout = 18;
// rdma_resolve_addr / rdma_resolve_route time limits.
inline constexpr int k_ibv_resolve_timeout_ms = 2000;
// Live peers per transport, and events queued for poll() (past it the
// progress thread stops draining CQs until the consumer catches up).
inline constexpr std::size_t k_ibv_max_peers = 4096;
inline constexpr std::size_t k_ibv_max_queued_events = 65536;

// ok, or unavailable with the reason: "built without rdma-core (...)", "no
// RDMA device (...)", "... none with an active port (...)".
Status ibverbs_probe();
// The declaration for this machine's devices (declare_capabilities()).
Capabilities ibverbs_capabilities();
// One local address per rail for single-host runs ("a.b.c.d:0" of the
// devices' RoCE IPv4 GIDs); empty without a usable device.
std::vector<std::string> ibverbs_loopback_rails(std::uint32_t rails);

// The Transport, plus what only RDMA can do.
class IbverbsTransport : public Transport {
 public:
  // What `peer` needs to reach local region `key` through this side's rail
  // `rail` without asking (to be carried in a ReadChunk/WriteChunk). The peer
  // is remembered: deregister_region() revokes the region there and waits for
  // its ack, as for a peer that asked. not_found (key), invalid_argument
  // (rail), unavailable (peer).
  virtual Result<RemoteRegionDesc> export_region(std::uint64_t key, std::uint32_t rail, PeerId peer) = 0;

  // Primes the remote-key cache: the peer's region `remote_key` as seen from
  // local rail `rail` is `desc` (from a message the peer sent). Later
  // put()/get() to it skip the region_query round trip.
  virtual Status import_region(PeerId peer, std::uint32_t rail, std::uint64_t remote_key,
                               const RemoteRegionDesc& desc) = 0;

  // How this side learnt the remote keys it used, since creation: region
  // queries sent (the round-trip fallback) and carried keys taken.
  struct KeyStats {
    std::uint64_t queries = 0;
    std::uint64_t carried = 0;
  };
  virtual KeyStats key_stats() const = 0;
};

// Validates the config (1..k_max_rails rail addresses "a.b.c.d:port" on RDMA
// devices, connections per rail in 1..k_max_connections_per_rail,
// socket_buffer_bytes 0 or inside its limits, then ignored), listens on
// every rail and starts the progress thread. unavailable (probe's reason)
// without rdma-core or without a device.
Result<std::unique_ptr<IbverbsTransport>> make_ibverbs_transport(const TransportConfig& config);

}  // namespace sluice::transport::ibverbs
