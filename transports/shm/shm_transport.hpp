// The shared-memory transport: transports of one host (services placed on
// one node, in one process or several) talking through shared memory.
//
// How it meets transports/transport.hpp:
// - Addresses are "shm:NAME", one abstract Unix socket per rail (shm_os.hpp).
//   The socket carries only the hand-shake: the connector creates a memfd
//   segment holding two SPSC rings (shm_ring.hpp), one per direction, and
//   passes it with its doorbell eventfd (SCM_RIGHTS); the acceptor answers
//   with its own doorbell. After that the socket stays open, silent, as the
//   liveness signal: the kernel closes it when the process dies or the
//   transport is destroyed, and the other side's epoll sees the hang-up.
// - One channel (ring pair) per rail per peer. connections_per_rail is
//   accepted (a node's config is shared by all its transports) but the
//   transport declares max_connections_per_rail = 1: a second ring pair would
//   add no parallelism, since one progress thread serves every ring.
// - Control frames go through the rail-0 ring in order, cut into records of
//   at most half the ring (shm_wire.hpp: message_first / message_more).
// - Bulk bytes are copied once, straight from the source region into the
//   destination region, by the serving side's progress thread: a put sends
//   only a descriptor (key, offset, length, the sender's address); the
//   receiver checks its region and range and copies from the sender's memory
//   (memcpy in the same process, process_vm_readv(2) across processes), then
//   acks; a get is served with process_vm_writev(2) into the requester's
//   region. Hence `stream` (the remote progress thread places the bytes), not
//   rdma_read/rdma_write, is declared. Cross-process copies need ptrace
//   access between the processes (same user; Yama ptrace_scope 0): both sides
//   test it in the hand-shake on a probe word, and a refusal ends the
//   connection with PeerDown naming the reason instead of failing later. The
//   peer's pid comes from the kernel (SO_PEERCRED), never from the peer.
// - TransportConfig::socket_buffer_bytes does not apply: no bulk byte and no
//   control frame passes through a socket (the rail sockets carry only the
//   hand-shake and then stay silent). The value is checked against its limits
//   like every transport's and otherwise ignored; the conformance suite's
//   tiny-buffer tests still run over shm and check its bytes.
// - Accepting is bounded by TransportConfig::accept as in tcp (transport.hpp,
//   AcceptLimits): an accepted socket must deliver its hello before the
//   hand-shake deadlines, each listener caps its connections, and a failing
//   accept() pauses the listener with a doubling back-off.
// - Completion of a put means the receiver has placed every byte and acked,
//   so a reply sent after OpDone never overtakes the data (as tcp).
// - A peer is lost on a hang-up or error on any of its sockets, or a corrupt
//   record in its ring: its channels close, its pending operations complete
//   with unavailable naming the peer, then PeerDown.
// Modelled on the shared-memory transports of UCX (src/uct/sm/mm: a FIFO of
// descriptors in a shared segment, doorbell signalling; src/uct/sm/scopy/cma:
// single-copy bulk through process_vm_readv/writev) and MPICH's Nemesis
// (LMT with CMA). No code was taken from either.
#pragma once

#include <cstdint>
#include <memory>

#include "core/proto/codec.hpp"
#include "core/proto/wire_limits.hpp"
#include "transports/transport.hpp"

namespace sluice::transport::shm {

// One put/get (as tcp: larger than any chunk a stripe pattern uses).
inline constexpr std::uint64_t k_shm_max_transfer_bytes = 1ULL << 30;
// One control frame: a proto frame at its limit.
inline constexpr std::uint64_t k_shm_max_message_bytes = proto::k_frame_header_bytes + proto::k_max_message_bytes;
// Data bytes of each ring (two per channel). 1 MiB holds ~20,000 bulk
// descriptors or two 512 KiB message records; a 16 MiB frame takes 33 records.
inline constexpr std::size_t k_shm_ring_bytes = 1ULL << 20;
// Live peers per transport.
inline constexpr std::size_t k_shm_max_peers = 4096;
// Events queued for poll(); past it the progress thread stops reading rings
// until the consumer drains (back-pressure instead of unbounded memory).
inline constexpr std::size_t k_shm_max_queued_events = 65536;
// Records one channel consumes per progress round, so a busy peer cannot
// starve the others.
inline constexpr std::size_t k_shm_records_per_round = 256;

Capabilities shm_capabilities();

// Validates the config (1..k_max_rails addresses "shm:NAME" or "shm:auto",
// connections per rail in 1..k_max_connections_per_rail; socket_buffer_bytes
// 0 or inside its limits, then ignored; a non-empty shared_secret is refused
// with unavailable: shm does not authenticate),
// listens on every rail and starts the progress thread.
Result<std::unique_ptr<Transport>> make_shm_transport(const TransportConfig& config);

}  // namespace sluice::transport::shm
