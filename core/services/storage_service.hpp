// Storage server (BeeGFS beegfs-storage, a Lustre OSS): owns storage targets
// and serves chunk requests on them.
//
// ReadChunk:  storage_io(read) target -> staging buffer, then transfer staging
//             -> the client's memory handle along the rail the client chose
//             (RDMA WRITE when the client asked for a direct path, a stream
//             otherwise), then ChunkReply{bytes, crc32c of what was read}.
// WriteChunk: transfer client memory -> staging (RDMA READ or stream),
//             checksum the staging bytes against the client's CRC32C,
//             storage_io(write) staging -> target, then ChunkReply.
//
// Duplicates. A client retries a chunk request whose reply is late (its
// RPC timeout), under the same request id. A retry of a request this server
// is still executing is answered `in_progress` (the client keeps waiting for
// the one reply) and one already answered gets that reply again, from a
// bounded ReplyCache: a chunk request is executed once. Executing it twice
// sent the same bytes into the client's memory twice, the second time after
// the client had taken the first reply and reused the buffer (issue 26:
// wrong bytes read back over slow links, where replies are late).
//
// Limits, per target: at most max_active requests at the device (the queue
// depth) and max_queued waiting behind them; a request beyond that is answered
// `again` (back-pressure: the client backs off and retries). Staging memory is
// bounded by staging_budget_bytes. Egress (reads leaving this server) can be
// capped by a token bucket from core/sched so that many clients cannot congest
// this server's port (docs/seeds.md#nvmesh-remote-nvme).
//
// Buddy mirroring (StorageMirrorConfig::enabled; BeeGFS storage buddy
// mirroring, see MgmtService for groups, states and switchover): the server
// fetches the maps from mgmt every maps_refresh_interval_ns to learn, per
// target, its buddy group, its role and its buddy's state.
// - A WriteChunk to a primary target is written locally and, at the same
//   time, forwarded to the secondary as a MirrorWrite (the secondary pulls
//   the bytes from this server's staging buffer and checks their CRC32C);
//   the client gets its ChunkReply only once both wrote.
// - Reads go to the primary. Chunk requests for a target that is a secondary
//   are refused with `unavailable` (the client refreshes its maps and goes
//   to the primary), MirrorWrites from a target that is not the primary with
//   invalid_argument (a stale primary must not write to the new one).
// - When a forward fails, or the secondary is not good, the primary writes
//   alone, as BeeGFS does: it first has mgmt record the secondary as
//   needs_resync (SetTargetConsistency; mgmt refuses it from a target that
//   is no longer primary, so a primary switched away from cannot acknowledge
//   alone), then acknowledges, and records the changed chunk objects in a
//   bounded ResyncLog (resync_log.hpp).
// - Once mgmt shows the secondary online again, the primary resyncs it:
//   copies each recorded object extent (MirrorWrite, resync) or removal
//   (MirrorRemove), or every object of the target after a log overflow; new
//   writes meanwhile are recorded too. When nothing is left it forwards again
//   and reports the secondary good. A resync that fails is retried on the
//   next maps refresh; after max_resync_failures in a row the secondary is
//   reported bad (BeeGFS: left to an operator).
// - Unlinks (RemoveChunks) on a primary are forwarded the same way
//   (MirrorRemove); a lost one is recorded for the resync. Allocations
//   (AllocateChunk) are forwarded as MirrorAllocate before the reply, as
//   writes are.
// Writes a secondary receives use their own staging budget
// (StorageMirrorConfig::staging_budget_bytes), so two servers that are each
// other's secondaries cannot hold all staging memory waiting on each other.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/env.hpp"
#include "core/sched/peer_rail.hpp"
#include "core/sched/token_bucket.hpp"
#include "core/services/resync_log.hpp"
#include "core/services/rpc.hpp"
#include "core/common/field_info.hpp"

namespace sluice {

// Buddy mirroring at a storage server (see the top of this file). Off by
// default; to mirror a cluster's data also define MgmtConfig::buddy_groups,
// give servers heartbeats and mgmt heartbeat checking (for switchover), and
// set MetaServiceConfig::mirror_file_data so new files are buddy-mirrored.
struct StorageMirrorConfig {
  bool enabled = false;
  // Maps refresh (roles, buddy states); also the period at which a pending
  // resync is started or retried.
  TimeNs maps_refresh_interval_ns = 500 * k_ns_per_ms;
  // Forwarding to the secondary. timeout_ns x max_attempts must stay below
  // the clients' RPC timeout (RpcLimits::timeout_ns, 2 s by default), or a
  // client resends its write while the primary still waits for its buddy.
  RpcLimits forward_rpc{.timeout_ns = 400 * k_ns_per_ms, .max_attempts = 2};
  // Chunk objects recorded per secondary while it is not good; beyond, a full resync.
  std::size_t resync_log_max_files = ResyncLog::k_default_max_files;
  // A resync copies an object in pieces of this size, one at a time per target.
  std::uint64_t resync_piece_bytes = 4 * k_mib;
  // Failed resync attempts in a row, answered by the secondary with an error of
  // the copy itself (corrupt, io_error, no_space, ...), after which it is
  // reported bad. Timeouts, back-pressure and role refusals (the secondary's
  // maps still show it as primary) are retried without counting.
  std::uint32_t max_resync_failures = 5;
  // Staging memory for MirrorWrites this server receives as a secondary (and
  // for its own resync pieces), apart from staging_budget_bytes.
  std::uint64_t staging_budget_bytes = 128 * k_mib;
  // How long after start a primary waits (answering `again`) for its buddy
  // to appear in the maps before it treats the buddy as unreachable.
  TimeNs buddy_register_wait_ns = 10 * k_ns_per_s;
};

// Its fields, one description each (core/common/field_info.hpp).
template <class V>
void fields(V& v, StorageMirrorConfig& c) {
  v("enabled", c.enabled, plain("storage buddy mirroring at this server"));
  v("maps_refresh_interval_ns", c.maps_refresh_interval_ns,
    duration_in(0, k_field_max_unbounded, "refresh of roles and buddy states; pending resyncs start on it"));
  v("forward_rpc", c.forward_rpc, plain("RPC limits of the forwarding to the secondary"));
  v("resync_log_max_files", c.resync_log_max_files,
    count_of("objects", 1, 1e12, "chunk objects recorded per secondary while it is not good; beyond, a full resync"));
  v("resync_piece_bytes", c.resync_piece_bytes,
    bytes_in(1, k_field_max_unbounded, "a resync copies in pieces of this"));
  v("max_resync_failures", c.max_resync_failures,
    count_of("failures", 1, 1e9, "failed resyncs in a row before the secondary is reported bad"));
  v("staging_budget_bytes", c.staging_budget_bytes,
    bytes_in(1, k_field_max_unbounded, "staging memory for the writes it receives as a secondary"));
  v("buddy_register_wait_ns", c.buddy_register_wait_ns,
    duration_in(0, k_field_max_unbounded, "how long a primary waits for its buddy to appear after start"));
}

// max_active_per_target's and max_queued_per_target's upper bounds: requests.
inline constexpr std::uint64_t k_max_active_per_target_limit = 4096;
inline constexpr std::uint64_t k_max_queued_per_target_limit = 1'000'000;

struct StorageServiceConfig {
  Endpoint mgmt;
  std::vector<TargetId> targets;
  std::uint64_t target_capacity_bytes = 1 * k_tib;
  std::uint32_t max_active_per_target = 8;    // requests at the device at once (queue depth)
  std::uint32_t max_queued_per_target = 256;  // waiting requests; more are answered `again`
  std::uint64_t staging_budget_bytes = 512 * k_mib;
  std::uint16_t staging_numa = 0;      // NUMA node of the staging buffers
  std::uint32_t server_nic = k_no_id;  // default NIC when the client names none
  // Per target (aligned with `targets`): the NUMA node that stages its chunks
  // and the NIC that serves them (sched::place_targets: the drive's own, the
  // nearest), over staging_numa and the NIC the client named. Empty: those
  // two for every target (a world that does not model the machine).
  std::vector<sched::TargetPlace> target_places;
  double egress_limit_bytes_per_s = 0;  // 0 = no egress rate limit
  std::uint64_t egress_burst_bytes = 4 * k_mib;
  TimeNs heartbeat_interval_ns = 0;  // 0 = no heartbeats
  RpcLimits rpc;
  StorageMirrorConfig mirror;  // buddy mirroring; off by default
  // Coalescing fidelity (docs/sim.md, "flow coalescing"). When > 0, a request
  // of L bytes stands for ceil(L / slot_piece_bytes) per-chunk requests, each
  // of which would hold one of the target's max_active_per_target slots. The
  // service then integrates over time the pieces its active requests stand
  // for ("storage.slot_piece_ns") and those beyond max_active_per_target
  // ("storage.slot_excess_piece_ns"): service that a per-chunk protocol could
  // not have given at that moment. It also counts the pieces its requests
  // stood for ("storage.slot_pieces") and those of them that came in merged
  // writes ("storage.slot_merged_write_pieces"). 0 = not measured.
  std::uint64_t slot_piece_bytes = 0;
  // Chunk writes go through the host's page cache (buffered I/O, the
  // default of a BeeGFS storage server): StorageIoSpec::buffered. SimEnv
  // then completes a write once a dirty-page budget holds it and writes it
  // back to the drive after (docs/sim.md, "Page cache"). Off: every write
  // waits for the drive (O_DIRECT).
  bool buffered_writes = false;
  // Chunk reads go through the page cache (buffered I/O, as a BeeGFS storage
  // server reads): StorageIoSpec::buffered on reads. SimEnv then reads ahead
  // of a sequential stream (docs/sim.md, "Page cache"). Off: every read is a
  // drive request of its own (O_DIRECT).
  bool buffered_reads = false;
};

// Its fields, one description each (core/common/field_info.hpp), in the
// order the reference lists the script's. Not listed: what a deployment
// sets for each server itself (mgmt, targets, target_places).
template <class V>
void fields(V& v, StorageServiceConfig& c) {
  constexpr bool s = k_script_field;
  const double none = k_field_max_unbounded;
  v("egress_limit_bytes_per_s", c.egress_limit_bytes_per_s,
    rate_in(0, none, "storage servers' send rate limit (0: none)", s));
  v("egress_burst_bytes", c.egress_burst_bytes, bytes_in(1, none, "token bucket depth of that limit", s));
  v("max_active_per_target", c.max_active_per_target,
    count_of("requests", 1, k_max_active_per_target_limit, "requests at one target's device at once (queue depth)", s));
  v("max_queued_per_target", c.max_queued_per_target,
    count_of("requests", 0, k_max_queued_per_target_limit, "requests waiting at one target; more are answered `again`",
             s));
  v("staging_budget_bytes", c.staging_budget_bytes, bytes_in(1, none, "staging memory of each storage server", s));
  v("target_capacity_bytes", c.target_capacity_bytes, bytes_in(1, none, "capacity of each storage target", s));
  v("buffered_writes", c.buffered_writes,
    plain("storage servers write through the page cache (write-back under a dirty budget; sim: SimProfile "
          "page_cache_*); false: every write waits for its drive",
          s));
  v("buffered_reads", c.buffered_reads,
    plain("storage servers read through the page cache (sim: read-ahead of sequential reads, SimProfile "
          "page_cache_read_ahead_bytes); false: every read is a drive request (O_DIRECT)",
          s));
  v("staging_numa", c.staging_numa, count_of("NUMA node", 0, 65535, "NUMA node of the staging buffers"));
  v("server_nic", c.server_nic, count_of("NIC", 0, 4294967295.0, "default NIC when the client names none"));
  v("heartbeat_interval_ns", c.heartbeat_interval_ns, duration_in(0, none, "heartbeats to mgmt (0: none)"));
  v("rpc", c.rpc, plain("RPC limits of its calls"));
  v("mirror", c.mirror, plain("storage buddy mirroring"));
  v("slot_piece_bytes", c.slot_piece_bytes,
    bytes_in(0, none, "coalescing fidelity: per-chunk pieces a merged request stands for (0: not measured)"));
}

class StorageService final : public Service {
 public:
  StorageService(Env& env, StorageServiceConfig config);

  // Called again after the world revived a killed service, start() is a
  // restart: what only lived in memory is gone (requests in flight, their
  // staging, maps, the resync logs) and the targets register again. The
  // chunk objects and their sizes stay, as on a disk.
  void start() override;
  void on_event(Event& event) override;
  std::string name() const override;

  bool registered() const { return registered_targets_ == config_.targets.size(); }
  std::uint64_t requests_served() const { return requests_served_; }
  std::uint64_t again_replies() const { return again_replies_; }
  // Buddy mirroring, for tests and reports. Whether `target` is the primary of
  // a group and forwards its writes (its secondary is good as far as it knows).
  bool mirror_forwarding(TargetId target) const;
  // Whether `target` is a primary whose secondary still needs a resync (or is resyncing).
  bool mirror_resync_pending(TargetId target) const;
  std::uint64_t resyncs_completed() const { return resyncs_completed_; }

 private:
  struct Request {
    Endpoint from;
    proto::Message message;  // ReadChunk or WriteChunk
  };
  struct TargetState {
    std::uint32_t active = 0;
    std::deque<Request> queued;
    // StorageServiceConfig::slot_piece_bytes: the pieces the active requests
    // stand for, and since when that number holds.
    std::uint64_t active_pieces = 0;
    TimeNs pieces_since = 0;
    // Its entry of StorageServiceConfig::target_places, or null (none given).
    const sched::TargetPlace* place = nullptr;
  };

  std::uint16_t staging_numa_of(TargetId target) const;
  // The NIC of this node that moves a chunk of `target` whose client named
  // `named`: of the target's equally near NICs (sched::TargetPlace), the one
  // with the fewest bytes in flight (then the lowest index), counted in
  // nic_in_flight_bytes_ until release_nic. Without a place: `named`, else
  // the server's default NIC, not counted.
  std::uint32_t take_nic(TargetId target, std::uint32_t named, std::uint64_t bytes);
  void release_nic(TargetId target, std::uint32_t named, std::uint32_t nic, std::uint64_t bytes);
  // The NIC take_nic would pick, not counted: for a mirrored write's pull,
  // whose end the primary does not see.
  std::uint32_t least_busy_nic(TargetId target, std::uint32_t named) const;
  // The target's equally near NICs for `named`; null: no place, or no cabled NIC.
  const std::vector<std::uint32_t>* nic_candidates(TargetId target, std::uint32_t named) const;
  // Counts a chunk's bytes per target and per server NIC
  // ("storage.<op>_bytes.target.<id>", "storage.<op>_bytes.nic.<node>.<nic>"):
  // how evenly the placement loaded the drives and NICs a bound counts.
  void count_placed(std::string_view op, TargetId target, std::uint32_t nic, std::uint64_t bytes);
  // Bytes of the transfers in flight per NIC of this node (take_nic).
  std::vector<std::uint64_t> nic_in_flight_bytes_;
  void handle(Endpoint from, proto::Message& message);
  // For ReadChunk, WriteChunk and MirrorWrite: true if it is a retry of a
  // request being executed or answered, and was answered here (see "Duplicates").
  bool answer_duplicate(Endpoint from, RequestId rid);
  void admit(Endpoint from, proto::Message& message, TargetId target);
  void pump(TargetId target);
  // A request of `length` bytes (a write, or a mirrored one: `write`) starts
  // (or ends) holding a slot of `ts`: StorageServiceConfig::slot_piece_bytes.
  void count_pieces(TargetState& ts, std::uint64_t length, bool starts, bool write = false);
  void run_read(TargetId target, Endpoint from, const proto::ReadChunk& m, MemHandle staging);
  void run_write(TargetId target, Endpoint from, const proto::WriteChunk& m, MemHandle staging);
  // mirror_staging: the staging came from StorageMirrorConfig::staging_budget_bytes.
  void finish(TargetId target, Endpoint to, proto::ChunkReply reply, std::optional<MemHandle> staging,
              bool mirror_staging = false);
  void remove_chunks(Endpoint from, const proto::RemoveChunks& m);
  // AllocateChunk: applied here (and forwarded where this target is a
  // mirrored primary), answered once, a retry from the reply cache.
  void allocate_chunk(Endpoint from, const proto::AllocateChunk& m);
  // The storage ops of an allocation mode on one object range (zero: a
  // punch, then a reservation); done(the first failure, or ok).
  void local_allocate(TargetId target, FileId file_id, std::uint64_t object_offset, std::uint64_t length,
                      proto::AllocMode mode, std::function<void(Status)> done);
  // FlushStorage: StorageOp::flush on every target, one Ack at the end.
  void flush_storage(Endpoint from, RequestId rid);
  void heartbeat();
  bool owns(TargetId target) const;
  // Forgets the in-memory state of a previous incarnation (see start()).
  void restart();

  // ---- buddy mirroring (storage_mirror.cpp) ----
  struct MirrorRole {
    GroupId group = k_no_id;
    bool primary = false;
    TargetId buddy = k_no_id;
  };
  // The mirroring state of one of this server's primary targets towards its secondary.
  struct Buddy {
    TargetId target = k_no_id;  // the secondary
    GroupId group = k_no_id;
    bool forwarding = true;  // the secondary is good: writes are forwarded
    bool confirmed = false;  // mgmt has the secondary as not good and this target as primary
    bool confirm_in_flight = false;
    std::vector<std::function<void(Status)>> confirm_waiters;
    ResyncLog log;
    std::uint32_t unforwarded_inflight = 0;  // writes going on alone that are not yet recorded
    bool resyncing = false;
    bool resync_idle = false;  // resync waits for unforwarded writes to finish
    bool full_copy = false;    // the running resync copies every object
    std::vector<ResyncChange> full_queue;
    std::uint32_t resync_failures = 0;
    bool reported_bad = false;
    bool good_report_in_flight = false;
  };
  void mirror_tick();
  void refresh_mirror_maps();
  void apply_maps(proto::MapsReply& maps);
  // apply_maps: the buddy state of targets no longer primaries goes; their waiters learn it.
  void drop_former_primaries();
  const MirrorRole* mirror_role(TargetId target) const;
  Endpoint target_endpoint(TargetId target) const;
  // For a client ReadChunk/WriteChunk: false if it was answered here (not
  // the primary, maps not loaded yet).
  bool admit_mirrored(Endpoint from, RequestId rid, TargetId target);
  void store_write(TargetId target, Endpoint from, const proto::WriteChunk& m, MemHandle staging);
  // crc32c: what the buffer's bytes must have (checked by this server), stored with them by the world.
  void local_write(TargetId target, FileId file_id, std::uint64_t object_offset, MemHandle buffer, bool sync,
                   std::uint32_t crc32c, std::function<void(Completion&)> done);
  void mirrored_write(TargetId target, Endpoint from, const proto::WriteChunk& m, MemHandle staging);
  // The MirrorWrite of [object_offset, +length) of file_id from `src` (a
  // buffer of this server) to `secondary` of `group` at `secondary_ep`, which
  // is granted `src` (Env::remote_access) to pull it.
  proto::MirrorWrite mirror_write_to(Endpoint secondary_ep, GroupId group, TargetId primary, TargetId secondary,
                                     FileId file_id, std::uint64_t object_offset, std::uint64_t length, MemHandle src,
                                     std::uint32_t crc32c);
  void run_mirror_write(TargetId target, Endpoint from, const proto::MirrorWrite& m, MemHandle staging);
  // The Ack of a server-to-server request (MirrorRemove, MirrorAllocate) to `from`.
  std::function<void(const Status&)> ack_to(Endpoint from, RequestId rid);
  // Whether `target` takes a forward from `primary`: ok, not_found (not
  // here) or invalid_argument (it is a primary itself; the maps are refreshed).
  Status check_secondary(TargetId target, TargetId primary);
  void mirror_remove(Endpoint from, const proto::MirrorRemove& m);
  void mirror_allocate(Endpoint from, const proto::MirrorAllocate& m);
  // An allocation on a mirrored primary: applied here, then forwarded to the
  // secondary before the reply (so that a later write cannot overtake it
  // there), or, where the secondary is away, recorded for its resync as a
  // write of the range (a punch or zero changes its bytes).
  void mirrored_allocate(TargetId target, const proto::AllocateChunk& m, std::function<void(Status)> reply);
  // After a local removal on a primary: forwards it to the secondary, or records it for the resync.
  void forward_removal(TargetId target, FileId file_id);
  // A change the primary made without forwarding it: `changed` (a range whose
  // bytes changed, recorded for the resync; none for a reservation or a
  // failed change), one fewer change in flight unforwarded where `counted`,
  // and a resync that waited for those woken.
  struct ChangedRange {
    FileId file_id = 0;
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
  };
  void applied_alone(TargetId target, TargetId secondary, std::optional<ChangedRange> changed, bool counted);
  // A forward of a change (`what`: "write", "allocation") to the secondary
  // failed. A refusal (it does not see this target as its primary: a stale
  // primary, perhaps) refreshes the maps and is the status to answer the
  // client with (unavailable: ask mgmt, go to the current primary); any other
  // failure demotes the buddy, and nullopt says go on alone.
  std::optional<Status> forward_failed(TargetId target, TargetId secondary, std::string_view what,
                                       const Status& failed);
  // Has mgmt confirm this target may go on without its buddy; done(ok) or unavailable.
  void await_alone(TargetId target, std::function<void(Status)> done);
  void demote_buddy(TargetId target, const std::string& why);
  void report_buddy(TargetId target, proto::Consistency consistency);
  void maybe_start_resync(TargetId target);
  void resync_next(TargetId target);
  void resync_copy(TargetId target, ResyncChange change, std::uint64_t offset, std::uint64_t end);
  void resync_failed(TargetId target, const ResyncChange& change, const Status& why);
  void finish_resync(TargetId target);
  Buddy* buddy_of(TargetId target);

  Env& env_;
  StorageServiceConfig config_;
  OpTable ops_;
  RpcClient rpc_;
  std::map<TargetId, TargetState> targets_;
  std::map<TargetId, std::uint64_t> used_bytes_;  // sum of object sizes per target
  std::map<std::pair<TargetId, FileId>, std::uint64_t> object_bytes_;
  std::uint64_t staging_in_use_bytes_ = 0;
  std::optional<sched::TokenBucket> egress_;
  Status egress_error_;
  TimeNs egress_reserved_ns_ =
      0;  // start of the last reserved egress slot  // why the configured egress limit could not be applied
  std::size_t registered_targets_ = 0;
  std::uint64_t requests_served_ = 0;
  std::uint64_t again_replies_ = 0;
  std::uint64_t heartbeat_sequence_ = 0;
  ReplyCache chunk_replies_;  // chunk requests in progress and answered, by (client, request id)
  std::set<std::pair<Endpoint, RequestId>> flushing_;  // FlushStorage requests in progress
  // Buddy mirroring. Replies are routed by sender: mgmt's to rpc_, other
  // servers' to mirror_rpc_ (each has its own request-id space).
  RpcClient mirror_rpc_;
  bool maps_loaded_ = false;
  bool maps_fetching_ = false;
  std::uint64_t maps_version_ = 0;
  TimeNs started_ns_ = 0;
  std::map<TargetId, proto::TargetInfoDesc> map_targets_;
  std::map<TargetId, MirrorRole> roles_;  // this server's targets that are in a group
  std::map<TargetId, Buddy> buddies_;     // this server's primary targets
  std::uint64_t mirror_staging_in_use_bytes_ = 0;
  std::uint64_t resyncs_completed_ = 0;
  bool started_ = false;
  // Set by a restart until the first maps arrive: a primary whose buddy is
  // not good then has lost its resync log and must copy everything.
  bool resync_log_lost_ = false;
};

}  // namespace sluice
