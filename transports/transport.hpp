// The transport contract: how one node's bytes reach another node.
//
// A transport is mechanism only (UCX UCT's "no decision logic"): it connects
// to peers, carries control frames, and moves bulk bytes between registered
// memory regions on the rail it is told to use. Which peer, which rail, how
// many operations in flight and direct-versus-bounce are decided in core/
// (core/sched) and handed down; nothing here chooses.
//
// Modelled on NCCL's net plugin (src/include/plugin/net/net_v*.h: every slot
// says whether it blocks, who owns the buffers and when outputs are valid) and
// UCX UCT (src/uct/api/uct.h: capabilities advertised as data, completion by
// polling or by an event fd, one conformance suite over every transport).
//
// ---- Objects -------------------------------------------------------------
// One Transport object per node (or per process standing in for a node). It
// owns its sockets/queue pairs and one progress thread of its own; every
// public call below is thread-safe unless it says otherwise, so several
// service event loops of the node may share it.
//
// Peers. connect() names a remote transport by its listen addresses and
// returns a PeerId at once; the connections come up in the background (a
// PeerUp event says when). A remote transport that connects to us appears as
// a PeerId of its own (PeerUp with accepted = true); the two directions are
// distinct peers even between the same two transports. Both kinds may be used
// for every operation.
//
// Rails. A transport is configured with one local address per rail (a NIC,
// or 127.0.0.1 / 127.0.0.2 ... on loopback). Rail r of this side talks to rail
// (r mod n) of a peer that listens on n rails; on an accepted peer, rail r is
// the connections that arrived at this side's rail r (an operation on a rail
// the peer never reached answers unavailable). Every bulk operation names its
// local rail: that is core/sched's choice (TransferSpec::src_nic), carried out
// here and never changed. Several connections per rail (queue pairs, sockets)
// are the transport's business: it may split one operation over them.
//
// Memory. Bulk bytes move only between *registered regions*. The owner of a
// region picks its 64-bit key (HwEnv uses the MemHandle region id) and remote
// peers name the region by that key; a transport that needs more than the key
// to reach remote memory (a verbs rkey and address) gets it one of two
// ways: carried (the owner asked remote_access() for it, sent it inside one
// of its own messages, and the peer passes it back in
// BulkRequest::remote_access: no round trip), or else resolved with the peer
// itself and cached (a query round trip: the fallback). Either way the owner
// knows who holds its keys and revokes them before deregister_region()
// returns. Transports that need no key (stream ones) record the grant,
// answer a keyless access and ignore a carried key. A region is identified by
// (transport, key).
//
// ---- Completion ----------------------------------------------------------
// Every accepted put()/get() completes exactly once with an OpDone event
// carrying its cookie: ok when the bytes are in place at the destination (for
// put, in the remote region; for get, in the local region), else an error.
// No call blocks on the network (deregister_region() alone may wait, for
// incoming transfers into the region to finish). Events are taken
// with poll() (non-blocking) or by waiting for completion_fd() to become
// readable (epoll/poll on it) and then calling poll().
//
// ---- Errors ----------------------------------------------------------------
// Calls return a Status for what is known at once: invalid_argument (a bad
// key, range, rail or frame), unavailable (an unknown or lost peer, a region
// kind the transport cannot reach), again (a named limit on queued work is
// reached: retry after some completions). A peer that vanishes (connection
// reset, EOF, a corrupt stream) is declared lost: each of its pending
// operations completes with unavailable naming the peer, a PeerDown event
// follows, and later calls naming it return unavailable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/common/status.hpp"
#include "core/proto/wire_limits.hpp"

namespace sluice::transport {

using PeerId = std::uint64_t;

// Limits every transport honours (each transport may declare lower ones in
// its Capabilities).
inline constexpr std::uint32_t k_max_rails = 16;  // NICs per node on the largest nodes modelled (DGX: 8-10)
inline constexpr std::uint32_t k_max_connections_per_rail = 16;  // NCCL NCCL_NSOCKS_PERTHREAD*NTHREADS caps at 64 total
inline constexpr std::size_t k_max_poll_events = 4096;           // events one poll() call may return
// A ReadChunk/WriteChunk carries at most one RDMA key per rail of the client.
static_assert(k_max_rails == proto::k_max_rdma_keys, "one carried RDMA key per rail");

// What memory a transport can move bytes into and out of.
enum class RegionKind : std::uint8_t {
  host = 0,  // host memory (pageable or pinned)
  cuda = 1,  // CUDA device memory by pointer (ucx: ucp_mem_map of CUDA memory; GPUDirect RDMA on a NIC)
};
inline constexpr std::size_t k_region_kind_count = 2;
std::string_view to_string(RegionKind kind);

// Declared capabilities: data, checked against behaviour by the conformance
// suite (tests/transports/).
struct Capabilities {
  std::vector<RegionKind> region_kinds;  // kinds register_region() accepts
  std::uint64_t max_message_bytes = 0;   // one control frame, header included
  std::uint64_t max_transfer_bytes = 0;  // one put() or get()
  bool rdma_write = false;               // put() completes without the remote CPU (one-sided)
  bool rdma_read = false;                // get() completes without the remote CPU (one-sided)
  bool stream = false;                   // put() and get() through a byte stream; the remote
                                         // transport's progress thread places or serves the bytes
  std::uint32_t max_rails = 0;
  std::uint32_t max_connections_per_rail = 0;
  // What the transport found on this machine, for `sluice backends` (ucx: the
  // UCX version, its transports and devices, GPU memory or why not); may be empty.
  std::string found;

  bool reaches(RegionKind kind) const;
  bool can_put() const { return rdma_write || stream; }
  bool can_get() const { return rdma_read || stream; }
  // "host; max message 16 MiB; max transfer 1 GiB; stream; 16 rails x 16 connections[; found]"
  std::string to_string() const;
};

// Where a peer listens: its listen_addresses(), one per rail, in the
// transport's own address syntax (tcp: "a.b.c.d:port").
struct PeerAddress {
  std::vector<std::string> rails;
};

// How a transport bounds what its listeners accept (issue 24: 500 idle or
// 1-byte-per-second connections were all kept, and a process out of
// descriptors spun in accept()). Every transport that accepts connections
// from sockets applies these (tcp, shm, ucx): check_accept_limits() in
// create(), then:
// - cap: past max_connections_per_listener open connections on one
//   listener, or max_handshaking_per_listener of them still in their
//   hand-shake, or when the hand-shakes on all listeners together would
//   hold more than max_handshake_bytes, a new connection is accepted and
//   closed at once, with a rate-limited log line naming its address;
// - deadlines: an accepted connection whose hand-shake (authentication when
//   there is a shared secret, then the hello) is not complete
//   handshake_deadline_ms after accept, or that sends nothing for
//   handshake_idle_ms before it is complete, is closed and logged
//   (rate-limited);
// - exhaustion: accept() failing (EMFILE, ENFILE, ENOBUFS, ENOMEM or any
//   error other than a retry) stops polling that listener for
//   accept_backoff_initial_ms, doubling on each further failure up to
//   accept_backoff_max_ms and back to the initial value after an accept
//   succeeds, so a level-triggered epoll on the listening socket never spins;
//   waiting connections stay in the kernel's backlog meanwhile;
// - log lines about refusals, expiries and accept failures: the first of
//   each kind, then at most one per log_interval_ms or per log_every_events
//   events, each with the number suppressed since the last line and how many
//   of them had each reason (base/rate_limited_log.hpp).
// The defaults, and why (units last in the names):
// Largest legitimate fan-in on one listener: a k_max_cluster_nodes (64) node
// emulated cluster with k_max_connections_per_rail (16) connections per rail
// is 1,024; four times that leaves room for client processes.
inline constexpr std::uint32_t k_default_max_connections_per_listener = 4096;
// A full 64-node cluster starting at once, 16 connections per rail each, is
// never refused; a flood past it is refused instead of holding descriptors
// until its deadline.
inline constexpr std::uint32_t k_default_max_handshaking_per_listener = 1024;
// The hand-shake is 2 round trips (challenges, the two proofs in turn, hello); 10 s covers a
// 2-core machine starting 64 node processes at once and emulated links with
// seconds of delay, and frees a flood's descriptors within 10 s.
inline constexpr std::uint32_t k_default_handshake_deadline_ms = 10'000;
// A connector sends its challenge or hello as soon as its connect completes,
// so 5 s of silence before the hand-shake is done is a dead or hostile peer.
inline constexpr std::uint32_t k_default_handshake_idle_ms = 5'000;
// 100 ms: a descriptor freed by a closing connection is used within a tenth
// of a second; doubling to 1.6 s keeps a long exhaustion below one accept()
// attempt (and one log line) a second.
inline constexpr std::uint32_t k_default_accept_backoff_initial_ms = 100;
inline constexpr std::uint32_t k_default_accept_backoff_max_ms = 1'600;
// One line a second per kind at most (issue 24's 92 MB in 10 s becomes ten
// lines), or one per 1,000 events when a burst is faster.
inline constexpr std::uint32_t k_default_accept_log_every_events = 1'000;
inline constexpr std::uint32_t k_default_accept_log_interval_ms = 1'000;
// Memory all accepted connections in their hand-shake may hold together, on
// all listeners of a transport (each charged what its transport lets one
// hold before the peer proved itself and said hello; tcp:
// k_tcp_handshake_connection_bytes, 4 KiB): past it a new connection is
// refused and logged with its address until hand-shakes complete or close.
// 64 MiB is k_max_rails listeners each at k_default_max_handshaking_per_listener
// 4 KiB hand-shakes: a full cluster starting at once is never refused, and a
// flood spread over every listener holds at most 64 MiB.
inline constexpr std::uint64_t k_default_max_handshake_bytes = 64ULL << 20;
// Upper bound of every *_ms limit above (one hour): longer is a mistake, and
// it keeps deadlines far from overflowing in nanoseconds.
inline constexpr std::uint32_t k_max_accept_limit_ms = 3'600'000;

struct AcceptLimits {
  std::uint32_t max_connections_per_listener = k_default_max_connections_per_listener;
  std::uint32_t max_handshaking_per_listener = k_default_max_handshaking_per_listener;
  std::uint32_t handshake_deadline_ms = k_default_handshake_deadline_ms;
  std::uint32_t handshake_idle_ms = k_default_handshake_idle_ms;
  std::uint32_t accept_backoff_initial_ms = k_default_accept_backoff_initial_ms;
  std::uint32_t accept_backoff_max_ms = k_default_accept_backoff_max_ms;
  std::uint32_t log_every_events = k_default_accept_log_every_events;
  std::uint32_t log_interval_ms = k_default_accept_log_interval_ms;
  std::uint64_t max_handshake_bytes = k_default_max_handshake_bytes;
};

struct TransportConfig {
  // This side's identity, sent to every peer when connecting (HwEnv: the node
  // id). Peers see it in PeerUp and in each message.
  std::uint64_t local_id = 0;
  // Local addresses, one per rail; a transport listens on each and sends rail
  // r's traffic from address r. Port 0 picks a free port.
  std::vector<std::string> rail_addresses;
  // Connections (sockets, QPs) per rail per peer; 1..k_max_connections_per_rail.
  std::uint32_t connections_per_rail = 2;
  // Operations posted (put/get) and not yet completed, over all peers; past it
  // put()/get() return again.
  std::uint32_t max_pending_ops = 4096;
  // Control-frame bytes queued to one peer and not yet sent; past it
  // send_message() returns again.
  std::uint64_t max_queued_message_bytes = 64ULL << 20;
  // Where the transport reports what it did on its own (a peer lost, a
  // fallback taken). Called with the transport's lock held, from its progress
  // thread or from a caller's thread inside a call; it must not call back
  // into the transport. May be empty.
  std::function<void(std::string_view)> log;
  // The cluster's shared secret (BeeGFS's connAuthFile idea, made a
  // challenge-response). Non-empty: every connection, in both directions,
  // must prove knowledge of it before anything else is accepted on it; a
  // peer that does not (no secret, another secret, or a malformed proof) is
  // refused, logged, and only its connection is closed — other peers keep
  // being served. Empty: no authentication (tests, trusted single hosts).
  // Transports that cannot authenticate refuse a non-empty secret in
  // create() rather than ignore it.
  std::string shared_secret;
  // The network namespace the transport's sockets live in: a namespace file
  // such as /run/netns/<name> (what `ip netns add` makes) or
  // /proc/<pid>/ns/net. Every socket is made in it, whichever thread calls,
  // so one process can hold nodes of an emulated cluster each behind its own
  // veth (HwWorld over netns). Needs CAP_SYS_ADMIN. Empty: the namespace of
  // the thread that creates the socket. Transports whose endpoints are not
  // network sockets refuse a non-empty value in create() rather than ignore it.
  std::string netns;
  // Kernel socket buffer size of every data socket. 0: the kernel's default
  // (and TCP's buffer auto-tuning). Otherwise SO_SNDBUF and SO_RCVBUF are set
  // to this value on every data socket, connected and accepted, before
  // connect() and before listen() (accepted sockets inherit the listener's),
  // so the TCP window is small from the handshake on. Used to force partial
  // sends and receives, as a slow link or a slow reader does: tests, and
  // reproducing "slow link" behaviour on loopback. The kernel doubles the
  // value for its bookkeeping and caps it at net.core.wmem_max/rmem_max
  // (socket(7)). Checked in create() by every transport, refused with
  // invalid_argument outside k_min_socket_buffer_bytes..
  // k_max_socket_buffer_bytes; a transport that moves bulk bytes without
  // sockets accepts the value and says in its header that it does not apply.
  std::uint32_t socket_buffer_bytes = 0;
  // Bounds on what the listeners accept (AcceptLimits above).
  AcceptLimits accept;
  // The PeerIds this transport hands out count up from here (>= 1). A
  // transport made of two others gives them disjoint ranges (tcp+shm,
  // transports/host_routed), so that their ids and the errors that name
  // them are the caller's as they are.
  PeerId first_peer_id = 1;
  // Grants (transports/region_grants.hpp). true: an incoming put or get of a
  // local region succeeds only when the owner granted the requesting peer
  // (remote_access(key, rail, grantee_id) with the peer's local_id); any
  // other is refused with permission_denied, its first refusal per peer
  // logged with the address. HwWorld turns it on in every deployment.
  // false: any connected peer may reach any region it names (transport tests).
  bool require_grants = false;
};

// Secret limits: at least 16 bytes (a guessable secret protects nothing),
// at most 4 KiB.
inline constexpr std::size_t k_min_shared_secret_bytes = 16;
inline constexpr std::size_t k_max_shared_secret_bytes = 4096;

// TransportConfig::socket_buffer_bytes limits (when not 0): below 1 KiB the
// kernel rounds up to its own minimum anyway (SOCK_MIN_RCVBUF), so a smaller
// value would not mean what it says; 64 MiB is above any bandwidth-delay
// product sluice models (100 Gbit/s x 5 ms).
inline constexpr std::uint32_t k_min_socket_buffer_bytes = 1024;
inline constexpr std::uint32_t k_max_socket_buffer_bytes = 64U << 20;

// ok when config.socket_buffer_bytes is 0 or inside the limits above, else
// invalid_argument naming the field, the value and the limits, prefixed with
// `transport_name` ("tcp transport: socket_buffer_bytes 100 outside ...").
// Every transport's create() calls it.
Status check_socket_buffer_bytes(const TransportConfig& config, std::string_view transport_name);

// ok when every field of config.accept is inside its limits (every count and max_handshake_bytes >= 1,
// max_handshaking_per_listener <= max_connections_per_listener, every *_ms in
// 1..k_max_accept_limit_ms, accept_backoff_initial_ms <=
// accept_backoff_max_ms), else invalid_argument naming the field and the
// value, prefixed with `transport_name`. Every transport that accepts
// connections from sockets calls it in create() (transports/accept_guard.cpp).
Status check_accept_limits(const TransportConfig& config, std::string_view transport_name);

// How a peer reaches one registered region through one of the owner's rails
// with one-sided operations: the region's base address as the owner's NIC
// sees it (virtual address), the rkey of the region's memory
// registration on that rail's device (one per device: an MR belongs to one
// protection domain), and the region's length. Offsets index from `address`.
struct RemoteRegionAccess {
  std::uint64_t address = 0;
  std::uint32_t rkey = 0;
  std::uint64_t length = 0;

  bool operator==(const RemoteRegionAccess&) const = default;
};

// One bulk operation. put: local [local_offset, +bytes) of region local_key ->
// the peer's region remote_key at remote_offset. get: the peer's range -> the
// local range.
//
// remote_access: the owner's RemoteRegionAccess for remote_key as seen through
// the peer's rail that this request's local rail reaches (rail r reaches the
// peer's rail r mod n), carried to us in a message. A transport that needs
// keys uses it instead of asking the peer and remembers it for later requests
// to the same (peer, rail, key); one that does not ignores it. A key that is
// wrong for the region fails the operation at the peer's NIC (verbs: a
// remote access error, which loses the peer), never silently.
struct BulkRequest {
  PeerId peer = 0;
  std::uint32_t rail = 0;  // local rail index, core/sched's choice
  std::uint64_t local_key = 0;
  std::uint64_t local_offset = 0;
  std::uint64_t remote_key = 0;
  std::uint64_t remote_offset = 0;
  std::uint64_t bytes = 0;
  std::uint64_t cookie = 0;  // returned unchanged in OpDone
  std::optional<RemoteRegionAccess> remote_access = std::nullopt;
};

// ---- Events (taken by poll()) -----------------------------------------------
struct OpDone {
  std::uint64_t cookie = 0;
  Status status;
  std::uint64_t bytes = 0;  // bytes moved when ok
};

// One control frame from a peer. The frame's header has been checked with
// proto::parse_header and frame.size() == header.frame_bytes(); the payload is
// not decoded (proto::decode does that, checking the payload CRC).
struct MessageReceived {
  PeerId peer = 0;
  std::uint64_t remote_id = 0;  // the sender's TransportConfig::local_id
  std::uint64_t tag = 0;        // the sender's tag, opaque here (HwEnv: the service pair)
  std::vector<std::byte> frame;
};

struct PeerUp {
  PeerId peer = 0;
  std::uint64_t remote_id = 0;
  bool accepted = false;  // true: the peer connected to us
};

struct PeerDown {
  PeerId peer = 0;
  std::uint64_t remote_id = 0;
  Status reason;  // unavailable, naming the peer and what happened
};

using TransportEvent = std::variant<OpDone, MessageReceived, PeerUp, PeerDown>;

class Transport {
 public:
  virtual ~Transport() = default;
  // Non-copyable: it owns sockets and a thread. The destructor stops the
  // progress thread and closes every connection; operations still pending
  // then are dropped without events (drain with poll() first).
  Transport() = default;
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // The registry name ("tcp") and the declared capabilities. Constant for
  // the object's life.
  virtual std::string_view name() const = 0;
  virtual const Capabilities& capabilities() const = 0;

  // The addresses peers connect() to, one per rail, with the ports actually
  // bound. Valid from construction (the factory listens before returning).
  virtual PeerAddress listen_address() const = 0;

  // Starts connecting to a peer; returns at once. Operations and messages may
  // be posted to the PeerId immediately: they wait until the connections are
  // up, and fail (OpDone / PeerDown) if they never come up.
  // invalid_argument: an address this transport cannot parse.
  virtual Result<PeerId> connect(const PeerAddress& remote) = 0;

  // Closes the peer's connections; its pending operations complete with
  // unavailable ("disconnected"), then PeerDown. Unknown peer: not_found.
  virtual Status disconnect(PeerId peer) = 0;

  // Makes [bytes.data(), +bytes.size()) reachable as region `key`. The memory
  // stays owned by the caller and must stay valid until deregister_region()
  // returns. unavailable: the kind is not in capabilities().region_kinds;
  // already_exists: the key is taken; invalid_argument: empty range.
  virtual Status register_region(std::uint64_t key, std::span<std::byte> bytes, RegionKind kind) = 0;

  // Unregisters. Blocks until no incoming transfer is still reading or
  // writing the region (it returns as soon as those finish or their peer is
  // lost); local operations naming the region must have completed before the
  // call (the caller's duty). Keys handed out by remote_access() are revoked
  // first. not_found: no such key.
  virtual Status deregister_region(std::uint64_t key) = 0;

  // What a peer needs to reach local region `key` through this side's rail
  // `rail` with no round trip (RemoteRegionAccess), to be carried in a
  // message to the peer whose TransportConfig::local_id is `grantee_id`. The
  // grant is recorded: deregister_region() revokes it at every connection
  // with that peer (both directions) and waits for the acks, as for a peer
  // that asked. Never blocks. A stream transport needs no key: it records the
  // grant (checked under TransportConfig::require_grants) and answers an
  // access with address and rkey 0. unavailable: this transport can grant
  // nothing (the default); not_found: no such region; invalid_argument: no
  // such rail.
  virtual Result<RemoteRegionAccess> remote_access(std::uint64_t key, std::uint32_t rail, std::uint64_t grantee_id);

  // Queues one control frame (a proto frame: proto::encode_into's output) to
  // `peer`, tagged. Takes the bytes. Frames to one PeerId arrive in the order
  // sent; delivery is not confirmed (no event): a lost peer loses them.
  // invalid_argument: not one whole valid frame, or over max_message_bytes;
  // unavailable: unknown or lost peer; again: max_queued_message_bytes.
  [[nodiscard]] virtual Status send_message(PeerId peer, std::uint64_t tag, std::vector<std::byte> frame) = 0;

  // Several control frames to `peer` at once, in order, each as
  // send_message() would queue it; a transport may gather them into fewer
  // system calls (tcp: one sendmsg for many frames; the default sends them
  // one by one). Returns how many were queued, counting from the first; when
  // fewer than all, *failure says why the next one was not, and it and the
  // rest were not queued (the caller still owns them).
  struct OutgoingMessage {
    std::uint64_t tag = 0;
    std::vector<std::byte> frame;
  };
  virtual std::size_t send_messages(PeerId peer, std::span<OutgoingMessage> messages, Status* failure);

  // Posts a bulk operation. On ok, exactly one OpDone with request.cookie
  // follows. The local range must lie in a registered region and stay
  // registered until then; the remote range is checked by the peer (an error
  // comes back in OpDone: not_found for an unknown key, invalid_argument for
  // a range outside the region or the carried key's range). Immediate errors:
  // invalid_argument (rail out of range, bad local range, bytes 0 or over
  // max_transfer_bytes), unavailable (peer unknown or lost, or the operation
  // not declared), again (max_pending_ops, or no room to remember a key).
  [[nodiscard]] virtual Status put(const BulkRequest& request) = 0;
  [[nodiscard]] virtual Status get(const BulkRequest& request) = 0;

  // Moves up to max_events pending events into `out` (appended), oldest
  // first, and returns how many. Never blocks.
  virtual std::size_t poll(std::vector<TransportEvent>& out, std::size_t max_events) = 0;

  // A file descriptor that is readable while events may be waiting (an
  // eventfd). Wait on it with epoll/poll, then call poll(); poll() resets it.
  // Spurious wake-ups are possible; missed ones are not. Owned by the
  // transport; valid for its life.
  virtual int completion_fd() const = 0;
};

// ---- Registry -------------------------------------------------------------------
// Each transport registers itself from its own folder (a static registrar in
// its .cpp; the library is linked whole-archive through the sluice_transports
// CMake target). No central list exists. The registry is base/registry.hpp's
// (shared with the storage backends): probes and every function of an entry
// run outside its lock, so they may take their time and may ask the registry
// about other entries.

struct TransportEntry {
  std::string name;
  // ok when the transport can be created on this machine/build; otherwise
  // unavailable with the reason ("built without UCX (libucx-dev not installed)").
  std::function<Status()> probe;
  std::function<Capabilities()> capabilities;
  std::function<Result<std::unique_ptr<Transport>>(const TransportConfig&)> create;
  // Local rail addresses for running on one host (tests, one-process
  // deployments); tcp: "127.0.0.1:0" per rail.
  std::function<std::vector<std::string>(std::uint32_t rails)> loopback_rails;
};

// Adds an entry; returns true so that it can initialise a static. A second
// entry with the same name is a bug: the process aborts with the registry's
// message naming it (SLUICE_ASSERT, in every build type).
bool register_transport(TransportEntry entry);

struct TransportListing {
  std::string name;
  bool available = false;
  std::string why_unavailable;  // empty when available
  Capabilities capabilities;
};

// Every registered transport, sorted by name, with its probe's verdict.
std::vector<TransportListing> list_transports();

// The named transport's loopback rail addresses (see TransportEntry);
// not_found for an unknown name.
Result<std::vector<std::string>> loopback_rail_addresses(std::string_view name, std::uint32_t rails);

// Creates the named transport. not_found: no such name (the message lists the
// names there are); unavailable: its probe failed (the message says why).
Result<std::unique_ptr<Transport>> create_transport(std::string_view name, const TransportConfig& config);

}  // namespace sluice::transport
