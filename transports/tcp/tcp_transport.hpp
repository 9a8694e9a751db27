// The TCP transport: epoll, non-blocking sockets, several connections per
// peer per rail, streaming put/get between registered host regions.
//
// How it meets transports/transport.hpp:
// - One progress thread per transport runs an epoll loop over the listening
//   sockets and every connection; public calls take the transport's lock,
//   queue their packets and try the send at once from the caller's thread
//   (so a small message costs no thread hand-off), leaving the rest to the
//   loop.
// - Bulk bytes are never staged: a put's body is sent with sendmsg() straight
//   from the registered region, and the receiver recv()s it straight into the
//   destination region at its offset (a get's answer likewise). Only packet
//   headers and control frames pass through small buffers.
// - A transfer of at least 2 x k_tcp_split_min_bytes is split into pieces of
//   at least k_tcp_split_min_bytes over the rail's connections, as NCCL's
//   socket transport splits a request over its sockets (net_socket.cc,
//   NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD); the op completes when every
//   piece is acknowledged.
// - TransportConfig::socket_buffer_bytes > 0 sets SO_SNDBUF/SO_RCVBUF on every
//   socket (tcp_address.hpp): on the listeners before listen() and on
//   connecting sockets before connect(), so the handshake already advertises
//   the small window, and again on each accepted socket. The send and receive
//   paths do not depend on it: they already take whatever partial sendmsg()
//   and recv() return.
// - Completion of a put means the receiver has placed every byte and said so
//   (put_ack), so a reply sent after OpDone never overtakes the data.
// - Accepting is bounded by TransportConfig::accept (transport.hpp,
//   AcceptLimits; the bookkeeping in accept_guard.hpp): the hand-shake of an
//   accepted connection (challenge/proof with a shared secret, then hello)
//   has a deadline and an idle deadline, each listener caps its connections,
//   and a listener whose accept() fails (EMFILE, ENFILE, ...) leaves the
//   epoll set for a doubling back-off instead of spinning; the lines about
//   all of it are rate-limited. The epoll_wait timeout is the next of those
//   deadlines.
// - Before its peer proved knowledge of the shared secret (tcp_auth.hpp), a
//   connection reads at most k_tcp_max_preauth_rx_bytes (the peer's one
//   challenge and one proof), queues at most k_tcp_max_preauth_tx_bytes
//   (this side's challenge and proof), and the acceptor signs nothing; a
//   second challenge, a proof before the challenge, any other packet or one
//   byte too many closes it, logged with the peer's address and the reason
//   (rate-limited; a folded line counts each reason). Accepted connections
//   in their hand-shake are charged k_tcp_handshake_connection_bytes each
//   against AcceptLimits::max_handshake_bytes, for the whole transport; the
//   memory is given back when the connection authenticates or closes.
// - A peer is lost on EOF, a reset, a socket error or a malformed packet on
//   any of its connections: all its connections close, every pending piece
//   completes with unavailable naming the peer, then PeerDown.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "core/proto/codec.hpp"
#include "core/proto/wire_limits.hpp"
#include "transports/tcp/tcp_auth.hpp"
#include "transports/tcp/tcp_wire.hpp"
#include "transports/transport.hpp"

namespace sluice::transport::tcp {

// One put/get. Large enough for any chunk a stripe pattern uses (BeeGFS and
// Lustre cap chunk/stripe size at 4 GiB; sluice's scenarios use <= 64 MiB).
inline constexpr std::uint64_t k_tcp_max_transfer_bytes = 1ULL << 30;
// One control frame: a proto frame at its limit.
inline constexpr std::uint64_t k_tcp_max_message_bytes = proto::k_frame_header_bytes + proto::k_max_message_bytes;
// Smallest piece a split transfer is cut into: below ~1 MiB per socket the
// per-piece ack costs more than the parallelism gains on loopback and 100G.
inline constexpr std::uint64_t k_tcp_split_min_bytes = 1ULL << 20;
// Bytes read from one connection per readiness event, so one busy socket
// cannot starve the others.
inline constexpr std::uint64_t k_tcp_read_budget_bytes = 4ULL << 20;
// One recv() of a connection's small packets (headers, control frames, error
// texts, short bulk bodies) into the progress thread's buffer, parsed from
// there: ~700 metadata frames per call instead of two calls per frame (make
// bench-meta). A bulk body of at least this much left goes straight into its
// region, with no copy.
inline constexpr std::size_t k_tcp_rx_buffer_bytes = 64 << 10;
// Packets gathered into one sendmsg() (IOV_MAX is 1024; 64 keeps the array on the stack).
inline constexpr std::size_t k_tcp_max_iov = 64;
// Live peers (connected and accepted) per transport.
inline constexpr std::size_t k_tcp_max_peers = 4096;
// Events queued for poll(); past it the progress thread stops reading until
// the consumer drains (back-pressure instead of unbounded memory).
inline constexpr std::size_t k_tcp_max_queued_events = 65536;
// Scratch used to drain the body of a refused put.
inline constexpr std::size_t k_tcp_drain_chunk_bytes = 64 * 1024;

// One authentication packet: a header and a nonce (challenge) or an HMAC (proof).
inline constexpr std::size_t k_tcp_auth_packet_bytes = k_tcp_packet_header_bytes + k_tcp_auth_bytes;
// Bytes a connection reads before its peer proved knowledge of the shared
// secret: the peer's challenge and its proof, nothing more (the connector's
// hello waits for the acceptor's proof, the acceptor's hello answers it).
// One byte more closes the connection ("pre-auth bytes over 144"), and no
// more than one byte more is ever read.
inline constexpr std::size_t k_tcp_max_preauth_rx_bytes = 2 * k_tcp_auth_packet_bytes;
// Bytes a connection queues before its peer proved itself: this side's
// challenge and proof (the acceptor's proof only once the connector's
// checked out); the hello waits in the ordinary queue, unsent.
inline constexpr std::size_t k_tcp_max_preauth_tx_bytes = 2 * k_tcp_auth_packet_bytes;
// The memory one accepted connection is charged while in its hand-shake,
// against AcceptLimits::max_handshake_bytes: a bound of what it holds before
// its peer proved itself (the connection's state, both bounds above, its
// queues; tcp_transport_impl.hpp checks the sum), rounded up to 4 KiB.
inline constexpr std::uint64_t k_tcp_handshake_connection_bytes = 4096;

// What connections whose peer has not proven itself hold now (tests, diagnostics).
struct TcpPreauthUsage {
  std::size_t connections = 0;     // connections (accepted or opened) whose peer has not proven itself
  std::uint64_t rx_bytes = 0;      // bytes read from them
  std::uint64_t queued_bytes = 0;  // bytes queued to them, not yet sent (authentication packets)
  // The most authentication bytes ever queued to one connection (<= k_tcp_max_preauth_tx_bytes).
  std::uint64_t peak_connection_queued_bytes = 0;
  std::uint64_t handshake_bytes = 0;  // charged against AcceptLimits::max_handshake_bytes
};
// For a transport made by make_tcp_transport; nullopt for any other.
std::optional<TcpPreauthUsage> tcp_preauth_usage(const Transport& transport);

Capabilities tcp_capabilities();

// Validates the config (at least one rail, <= k_max_rails, connections per
// rail in 1..k_max_connections_per_rail, parseable addresses,
// socket_buffer_bytes 0 or inside its limits), listens on every rail and
// starts the progress thread.
Result<std::unique_ptr<Transport>> make_tcp_transport(const TransportConfig& config);

}  // namespace sluice::transport::tcp
