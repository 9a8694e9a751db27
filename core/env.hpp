// The Env: the one seam between sluice's sans-I/O services and a world.
//
// Modelled on FoundationDB's INetwork (Net2 real, Sim2 simulated) and RocksDB's
// Env: the services of the file system are event-driven state machines that
// never touch a clock, a socket, a file, a thread or real randomness. They ask
// their Env to do things and react to the events it delivers. Three worlds
// implement it: SimEnv (sim/, SimGrid), HwEnv (hw/, real devices) and
// TestEnv (tests/support/, virtual time).
//
// Contract, for every implementation:
// - One Env object per service instance: it knows who the service is (self()).
// - Single-threaded delivery: the Env calls Service::on_event one event at a
//   time, never concurrently, never re-entrantly. Calls a service makes on its
//   Env are made from inside start() or on_event().
// - Operations (transfer, storage_io, compute, timer, fill, verify, checksum)
//   return an OpId at once and never block. Their completion arrives later as a
//   Completion event carrying the same OpId, *after* the current handler has
//   returned, even if the operation finished instantly. Every started operation
//   completes exactly once (success or an error Status); none is lost. A
//   service may leave a compute out where compute_charges_time() is false
//   (OpTable::after_compute): there is then no operation and no completion.
// - send() is fire-and-forget: a message may be delayed, lost or duplicated by
//   the world (TestEnv fault controls, a dead peer). Services protect themselves
//   with request ids, timeouts and retries; the Env reports only errors it can
//   see immediately (unknown endpoint, message too large).
// - Memory handles name ranges; the Env maps them. The caller keeps a handle's
//   range alive (not freed) until every operation that names it has completed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/common/ids.hpp"
#include "core/common/mem_handle.hpp"
#include "core/common/rng.hpp"
#include "core/common/status.hpp"
#include "core/common/units.hpp"
#include "core/proto/messages.hpp"

namespace sluice {

using OpId = std::uint64_t;

// How bytes move between two memory ranges (possibly on different nodes).
enum class TransferMode : std::uint8_t {
  rdma_write = 0,  // initiator pushes into a remote registered region (storage server -> client GPU)
  rdma_read = 1,   // initiator pulls from a remote registered region (storage server <- client)
  stream = 2,      // a byte stream (TCP); the receiver places bytes into the destination
  local_copy = 3,  // same node: PCIe/memory copy (bounce buffer -> GPU, host -> pinned)
};
std::string_view to_string(TransferMode mode);

// One bulk transfer. src and dst have the same length. The rail is chosen by
// core/sched: src_nic/dst_nic are NIC indices local to the src/dst node
// (k_no_id for a same-node copy, or to let the world use the node's only NIC).
//
// remote_region: for rdma_write (dst remote) and rdma_read (src remote), the
// remote region's key for the remote end's NIC (dst_nic for a write, src_nic
// for a read), as its owner granted it (Env::remote_access, carried in a
// ReadChunk/WriteChunk). With it a world that needs keys moves the bytes with
// no round trip to the owner; without it (nullopt) the world resolves the key
// itself (a verbs transport: a region_query, cached) and counts a fallback. Worlds that
// need no key ignore it; a key that does not match the region fails the
// transfer, as an HCA's rkey check does.
struct TransferSpec {
  MemHandle src;
  MemHandle dst;
  std::uint32_t src_nic = k_no_id;
  std::uint32_t dst_nic = k_no_id;
  TransferMode mode = TransferMode::stream;
  std::optional<proto::RdmaRegionDesc> remote_region = std::nullopt;
};

// Metric names every Env uses for the key a one-sided transfer used, so that
// every fallback to a query round trip is visible in the results.
inline constexpr std::string_view k_metric_rdma_key_carried = "transfer.rdma_key_carried";
inline constexpr std::string_view k_metric_rdma_key_fallback = "transfer.rdma_key_fallback";

// What a storage_io does to a chunk object (one per (target, file id)).
enum class StorageOp : std::uint8_t {
  read = 0,      // object bytes [object_offset, +buffer.length) -> buffer; a read past the end
                 // returns the bytes that exist (Completion.bytes says how many)
  write = 1,     // buffer -> object bytes at object_offset; the object grows as needed
  remove = 2,    // delete the object (ok if it does not exist)
  stat = 3,      // Completion.bytes = the object's size (0 if it does not exist)
  flush = 4,     // the target's node writes back every dirty byte it holds and drops its clean cached
                 // pages (sync + drop_caches, as elbencho's --sync --dropcache between phases);
                 // completes when nothing it holds is dirty. file_id, offset and buffer unused
  allocate = 5,  // reserves object bytes [object_offset, +length) on the drive (creating the object),
                 // so that writes there do not fail for space; its bytes and size are unchanged
                 // (fallocate(2) with FALLOC_FL_KEEP_SIZE)
  punch = 6,     // deallocates object bytes [object_offset, +length): they read as zeros after; the
                 // object's size is unchanged, a missing object stays missing
                 // (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)
};
std::string_view to_string(StorageOp op);

// One operation on a chunk object of a storage target, into or out of a memory
// range on the target's node (remove, stat, flush, allocate and punch name no range). sync = a write is durable when it
// completes (fsync / FUA).
struct StorageIoSpec {
  StorageOp op = StorageOp::read;
  TargetId target = k_no_id;
  FileId file_id = 0;
  std::uint64_t object_offset = 0;
  MemHandle buffer;  // unused by remove and stat
  bool sync = false;
  // write: through the host's page cache (write-back), as a storage server
  // that writes with buffered I/O (StorageServiceConfig::buffered_writes). A
  // world may complete it once the page cache holds it and write it back to
  // the drive after (SimEnv: SimProfile page_cache_*); sync still waits for
  // the drive. read: through the page cache (StorageServiceConfig::
  // buffered_reads), whose read-ahead a world may model (SimEnv: SimProfile
  // page_cache_read_ahead_bytes). HwEnv's backends do what their own
  // settings say (--storage-backend) and ignore it.
  bool buffered = false;
  // write: the CRC32C the buffer's bytes must have (the storage server
  // checked them against the client's). A world that keeps bytes refuses a
  // write whose buffer differs with `corrupt`, and stores CRC32Cs with the
  // object's bytes that every later read checks (corrupt when they changed
  // at rest); SimEnv keeps no bytes and ignores it.
  std::optional<std::uint32_t> crc32c = std::nullopt;
  // allocate, punch: the range's length (they name no buffer).
  std::uint64_t length = 0;
};

// Deterministic content for data written by workloads: byte i of a range is a
// function of (seed, stream_offset + i), so any range of a file can be
// regenerated or checked anywhere without storing it.
struct PatternSpec {
  std::uint64_t seed = 0;
  std::uint64_t stream_offset = 0;
};

// Named CPU service-time classes. SimEnv maps each to a calibrated cost per
// unit; HwEnv completes them at once (the real work already happened);
// TestEnv uses a configurable table.
enum class CostKind : std::uint8_t {
  meta_lookup = 0,
  meta_create,
  meta_mkdir,
  meta_stat,
  meta_readdir_entry,
  meta_unlink,
  meta_rename,
  meta_setattr,
  storage_request,  // per chunk request handled by a storage server
  client_request,   // per request issued by a client
  workload_step,    // a workload's compute step (units = nanoseconds of compute)
  count_,
};
std::string_view to_string(CostKind kind);

// The world's answer to an operation.
struct Completion {
  OpId op = 0;
  Status status;
  std::uint64_t bytes = 0;   // bytes moved/read/written/verified
  std::uint32_t crc32c = 0;  // checksum of the bytes, when crc_valid
  bool crc_valid = false;    // false in worlds that move no bytes (SimEnv)
};

// A control-plane message from another service.
struct Delivery {
  Endpoint from;
  proto::Message message;
};

using Event = std::variant<Delivery, Completion>;

enum class LogLevel : std::uint8_t { debug = 0, info, warn, error };

// Metrics recorder. Names carry units ("client.read_bytes", "meta.create_ops",
// "client.read_latency_ns"). Not thread-safe; owned by the service's Env.
class Metrics {
 public:
  virtual ~Metrics() = default;
  // Adds delta to a counter.
  virtual void count(std::string_view name, double delta) = 0;
  // Records one sample of a distribution (latency, size).
  virtual void sample(std::string_view name, double value) = 0;
};

// Where a virtual world's wall clock (Env::wall_ns) stands at its start:
// 2026-01-01T00:00:00Z, a date whose files no tool takes for unset times.
inline constexpr TimeNs k_virtual_wall_epoch_ns = 1'767'225'600'000'000'000;

class Env {
 public:
  virtual ~Env() = default;

  // Who this service is.
  virtual Endpoint self() const = 0;
  // Current time of this world. Monotonic; virtual in TestEnv/SimEnv.
  virtual TimeNs now() const = 0;
  // Wall-clock time in ns since the Unix epoch: the times a file system
  // records (mtime, atime, ctime). Real in HwEnv (CLOCK_REALTIME); in the
  // virtual worlds k_virtual_wall_epoch_ns + now(), so a run's times repeat.
  virtual TimeNs wall_ns() const = 0;
  // This service's random stream, derived from the run's seed and self().
  virtual Rng& rng() = 0;
  virtual Metrics& metrics() = 0;
  virtual void log(LogLevel level, std::string_view message) = 0;

  // Control plane. Returns an error only for what is known at once (unknown
  // endpoint, encoded message over the wire limit); delivery is not promised.
  [[nodiscard]] virtual Status send(Endpoint to, proto::Message message) = 0;

  // Data plane and devices; see the contract at the top of this file.
  virtual OpId transfer(const TransferSpec& spec) = 0;
  virtual OpId storage_io(const StorageIoSpec& spec) = 0;
  virtual OpId compute(CostKind kind, std::uint64_t units) = 0;
  // Whether compute() charges time of this world's own (SimEnv, TestEnv: the
  // cost model's) or stands for work the caller already did (HwEnv: false).
  // Where false, a service may leave the call out (OpTable::after_compute).
  virtual bool compute_charges_time() const { return true; }
  virtual OpId timer(TimeNs delay_ns) = 0;

  // Memory operations on this node. checksum completes with crc32c of the
  // range (crc_valid false where no bytes exist); fill writes the pattern;
  // verify completes with `corrupt` naming the first wrong byte.
  virtual OpId checksum(const MemHandle& range) = 0;
  virtual OpId fill(const MemHandle& range, const PatternSpec& pattern) = 0;
  virtual OpId verify(const MemHandle& range, const PatternSpec& pattern) = 0;

  // Memory regions on this node; alloc fails with no_space past the world's
  // limit. free releases a handle's whole region.
  virtual Result<MemHandle> alloc(MemKind kind, std::uint16_t device, std::uint64_t bytes) = 0;
  virtual void free(const MemHandle& region) = 0;

  // Windows: a second handle on the bytes of `range` (a range of a region of
  // this node), with a region id of its own, through which other nodes reach
  // those bytes for one request (the client hands a window, not its buffer,
  // to a storage server). close_window() is the fence the caller puts up when
  // it is done with the request, answered or abandoned: once it returns, no
  // transfer moves bytes into or out of the window's range through it; one
  // that arrives later fails at this end (not_found), as a late RDMA WRITE to
  // an invalidated key fails at the HCA (Lustre unlinks a bulk's memory
  // descriptor on a timeout for the same reason). So a server that executes
  // a request late cannot write into memory its owner has reused. A transfer
  // moving bytes at the moment of the close is waited for (HwEnv: the
  // transport's deregistration). The window's region must stay allocated
  // until the window is closed; a window is never freed with free().
  // Errors: those of a bad range (not_found, invalid_argument).
  virtual Result<MemHandle> open_window(const MemHandle& range) = 0;
  virtual void close_window(const MemHandle& window) = 0;

  // What node `grantee` needs to reach the whole region of `range` (a region
  // of this node) by one-sided RDMA through this node's NIC `nic` without
  // asking: address, rkey and length, to be carried in a message (ReadChunk /
  // WriteChunk). The grantee is recorded so that free() revokes the key there
  // before the memory goes. Answers at once, never blocks on the network.
  // unavailable: this world reaches remote memory without keys (TCP, shared
  // memory, SimEnv), or the region is not registered for RDMA (GPU memory
  // without GPUDirect RDMA); not_found / invalid_argument: no such region or
  // NIC. The default is a world without RDMA.
  virtual Result<proto::RdmaRegionDesc> remote_access(const MemHandle& range, std::uint32_t nic, NodeId grantee);

  // Whether a peer's transfer can reach `range` straight (one-sided or
  // stream) where the world's capabilities say its kind is reachable: false
  // for a GPU region the transport refused to register (HwEnv: a
  // ucp_mem_map or ibv_reg_mr that failed; the node logged and counted it).
  // The client then bounces that region's chunks instead of asking a server
  // to reach memory no key opens. The default: every region its kind allows.
  virtual bool transport_reaches(const MemHandle& /*range*/) { return true; }
};

// The keys to carry for `range` when `grantee` will reach it by one-sided
// RDMA over this node's NIC `nic`: one RdmaRegionDesc, or none when the Env
// cannot give one (a world without RDMA keys: then nothing is carried and the
// receiver's world resolves what it needs itself). An error other than
// unavailable (an unknown region or NIC) is logged on `env`: it is a bug.
std::vector<proto::RdmaRegionDesc> rdma_keys_for(Env& env, const MemHandle& range, std::uint32_t nic, NodeId grantee);

// A service: an event-driven state machine bound to one Env.
class Service {
 public:
  virtual ~Service() = default;
  // Called once when the world starts the service.
  virtual void start() = 0;
  // Called for each event addressed to this service.
  virtual void on_event(Event& event) = 0;
  // A short name for logs ("meta:1", "storage:3", "client:7").
  virtual std::string name() const = 0;
  // The service was killed and gets no more events: it lets go of what the
  // death of its process would release (open files, a database's lock), so
  // that the instance a restart builds can open them. A world that keeps the
  // dead instance alive (HwWorld: late completions may still name it) calls
  // this before it builds the new one.
  virtual void crashed() {}
};

}  // namespace sluice
