// The UCX transport ("ucx"): the transport contract (transports/transport.hpp)
// over UCX's ucp API, the engine Open MPI, NCCL's UCX plugin, NIXL and RAPIDS
// move GPU-direct data with. UCX picks the wire under one API: InfiniBand and
// RoCE verbs (rc, dc, ud with GPUDirect RDMA) where there is an RDMA NIC, shared
// memory (posix, sysv, cma) and cuda_copy/cuda_ipc between processes of one
// host, and TCP (RMA emulated in software, same API) elsewhere. UCX_TLS and
// UCX's other environment variables choose among them as for any UCX program.
//
// Shape:
// - One ucp context and worker per rail, its devices limited to the rail's
//   network interface (UCX_NET_DEVICES: the interface that holds the rail's
//   address; every device when the address is 0.0.0.0 or held by none). Each
//   worker listens on its rail's address (ucp_listener, UCX's sockaddr
//   connection manager) and its event fd sits in the transport's progress loop
//   (transports/progress_loop.hpp) beside a wake eventfd.
// - A peer is one UCX endpoint per rail of this side: rail r connects to the
//   peer's rail r mod n. UCX splits an endpoint's traffic over its own lanes
//   (UCX_MAX_RNDV_RAILS); TransportConfig::connections_per_rail does not apply
//   and is accepted for compatibility.
// - Control frames are UCX active messages on the rail-0 endpoint (so they keep
//   their order), the tag in the message header; frames above UCX's eager limit
//   arrive by rendezvous and are delivered in arrival order all the same.
// - put() and get() are ucp_put_nbx / ucp_get_nbx into the peer's region with
//   its packed remote key. The key is asked of the owner once per (peer, rail,
//   region) and cached (the query round trip of the contract: a packed UCX
//   key is larger than the 32-bit rkey a ReadChunk carries, so a carried key is
//   ignored). The owner hands a key only to a peer it granted the region
//   (remote_access) when TransportConfig::require_grants is on; the answer
//   carries the region's length, and a range outside it fails in the
//   completion with invalid_argument before any byte moves. A put completes
//   once the endpoint's flush says the bytes are in the remote region.
// - deregister_region() revokes the key at every peer that holds it: each peer
//   waits for its transfers using the key to finish, destroys the key and
//   answers; the owner unmaps once every holder answered or was lost, or after
//   k_ucx_revoke_wait_ms (logged).
// - Every connection proves the cluster's shared secret before anything else
//   is taken on it: the TCP transport's mutual challenge-response
//   (transports/tcp/tcp_auth.hpp) carried in active messages; the hello that
//   groups a connection under a peer comes after the proofs. Accepted
//   connections are bounded by TransportConfig::accept (transports/
//   accept_guard.hpp): caps, hand-shake deadlines, rate-limited log lines.
// - TransportConfig::netns is refused (UCX opens sockets on its own threads,
//   outside any namespace the transport could enter). socket_buffer_bytes is
//   checked and not applied: UCX sizes its own sockets, and UCX_TCP_SNDBUF/
//   RCVBUF of 4 KiB made UCX 1.13's tcp transport spin (the conformance
//   suite's slow-link test did not finish in 60 s, 2 CPU-minutes, 2-core VM).
//
// Threads: every UCX call runs under the transport's lock (workers in
// UCS_THREAD_MODE_SERIALIZED); the progress thread drives the workers. After
// activity it busy-polls their event fds for k_ucx_spin_us (without the lock
// while none is ready), then arms them and sleeps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/proto/codec.hpp"
#include "core/proto/wire_limits.hpp"
#include "transports/transport.hpp"

namespace sluice::transport::ucx {

// One put() or get(): the TCP transport's limit, so that the core's chunking is the same on either.
inline constexpr std::uint64_t k_ucx_max_transfer_bytes = 1ULL << 30;
// One control frame, header included (every transport carries the protocol's largest).
inline constexpr std::uint64_t k_ucx_max_message_bytes = proto::k_frame_header_bytes + proto::k_max_message_bytes;
// Peers at once (as tcp's k_tcp_max_peers).
inline constexpr std::size_t k_ucx_max_peers = 4096;
// Events waiting for poll(): past it the progress thread waits (the bounded drain of ProgressLoop).
inline constexpr std::size_t k_ucx_max_queued_events = 65536;
// Remote keys cached per transport: (peer, rail, region) entries; past it a put or get answers again.
inline constexpr std::size_t k_ucx_max_cached_keys = 65536;
// How long deregister_region() waits for the peers holding a key to answer its
// revocation: a live peer answers within its transfers' time; 10 s is the
// hand-shake deadline's order, past which the peer is logged and the memory
// unmapped all the same (its later accesses fail at its own side).
inline constexpr std::uint32_t k_ucx_revoke_wait_ms = 10'000;
// The progress loop's longest sleep while connections or operations exist,
// and while none do: its event fd wakes it for whatever arrives; the timeout
// bounds what UCX progresses without signalling (connection-manager events).
inline constexpr int k_ucx_active_poll_ms = 50;
// The longest sleep while a put or get is in flight: UCX completes some
// operations by polling (GPU-memory copies by their CUDA events) without
// setting an event fd, and such a completion would otherwise wait for the
// k_ucx_active_poll_ms timeout. 1 ms: epoll's finest wait. (It did not change
// study 1's GDS-on reads under mpirun on the GPU machine, whose cost is UCX's
// software-emulated put into GPU memory: docs/gpu.md.)
inline constexpr int k_ucx_pending_poll_ms = 1;
inline constexpr int k_ucx_idle_poll_ms = 200;
// ucp_worker_progress calls per worker per turn of the progress loop, at most
// (a worker that keeps finding work yields to the others and to the lock's waiters).
inline constexpr int k_ucx_progress_rounds = 64;
// How long the progress loop busy-polls the workers' event fds after their last
// activity (progress found some, work was posted) before it arms them and
// sleeps: what RDMA and UCX stacks do, trading a bounded spin for the
// wake-ups of a sleeping thread (each a few microseconds, on both sides of
// every round trip: P14's latency was 1.8x ucx_perftest's, which busy-polls).
// 100 us covers a loopback round trip over UCX's tcp (about 25 us) and the
// caller's turn before its next post, so a put-after-put caller keeps both
// loops polling; an idle transport sleeps after it (skip_idle_turn yields the
// CPU on every idle poll, so a 2-core host is not starved).
inline constexpr std::int64_t k_ucx_spin_us = 100;
// How long the probe of UCX (made in a child process: ucx_transport.cpp says why) may take.
inline constexpr int k_ucx_probe_timeout_ms = 10'000;
// How long the destructor progresses closing endpoints before it destroys the workers.
inline constexpr std::uint32_t k_ucx_close_wait_ms = 2'000;

// Whether UCX could be used here, and why not; the capabilities of this build with this UCX.
Status ucx_probe();
Capabilities ucx_capabilities();

Result<std::unique_ptr<Transport>> make_ucx_transport(const TransportConfig& config);

}  // namespace sluice::transport::ucx
