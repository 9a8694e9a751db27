// Client: the file-system library a workload uses (BeeGFS client module,
// Lustre llite + lov), sans-I/O like every service.
//
// It is not a Service itself: a workload driver (core/workloads) is the
// service and owns a Client, forwarding it every event (handle()). All calls
// take a completion callback that is invoked exactly once, always from a later
// event (never inside the call).
//
// Namespace: paths are resolved through the shard core/namespace names for
// each entry; directory placements are cached (bounded, named limit) and a
// misrouted reply invalidates the cache entry and retries once.
// Data: a range is split by core/layout into chunk pieces; each piece is
// planned by core/sched (direct into the destination, or bounce through a
// pinned buffer near a GPU, and which NIC), sent as ReadChunk/WriteChunk to
// the target's storage server, and the bytes are checked end to end: a write
// carries the CRC32C of the caller's bytes, computed before any copy, which
// the server checks over what it received; a read's CRC32C from the server is
// checked over the bytes in the caller's range, after the copy out of a
// bounce buffer (verify_reads). GPU memory on the bounce path is checked on
// the pinned bounce buffer next to the GPU copy (in both directions), not by
// copying the GPU bytes back out.
// The server reaches the caller's memory only through a window per request
// (Env::open_window), closed as soon as the reply or the call's failure
// arrives and before the bytes are checked: a server that executes a request
// late (its reply outlived the RPC timeout, the client gave up or failed
// over) cannot write into memory the caller has been given back (issue 26).
// At most max_inflight_chunks chunk requests are in flight per client, and
// each rail's window from core/sched bounds the requests on one NIC.
//
// Buddy-mirrored files (their stripe lists buddy groups, BeeGFS
// BuddyMirrorPattern): each chunk request goes to the group's current primary
// as the maps name it; the primary mirrors writes to the secondary (see
// StorageService). When a request to the primary times out or is refused
// with `unavailable` (a switchover: the target is a secondary now), the client
// refreshes its maps, waiting (bounded by max_maps_refreshes) for mgmt to
// name another primary, and sends the request again, at most
// mirror_failovers times per chunk. Each unanswered attempt of a request to a
// mirrored primary refreshes the maps before the next is sent: when mgmt has
// switched the group over since, the request goes to the new primary at once
// rather than after every attempt's wait (RpcClient::call's still_there), as
// a BeeGFS client resolves a buddy group's primary on each retry. A retried
// write is the same bytes at the same place, so it is safe to repeat.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/common/field_info.hpp"
#include "core/env.hpp"
#include "core/layout/stripe_pattern.hpp"
#include "core/namespace/meta_sharding.hpp"
#include "core/services/chunk_planner.hpp"
#include "core/services/rpc.hpp"

namespace sluice {

// Chunk coalescing (issue 4, "flow coalescing"): the pieces of ONE read or
// write request that lie on the same storage target and are contiguous in
// that target's chunk object go to the server as one larger ReadChunk /
// WriteChunk (one disk request, one transfer on the same route, one reply)
// of at most max_bytes, instead of one request per chunk piece. This is what
// the Lustre client does when it packs contiguous pages of one object into
// one bulk RPC (osc_cache.c, bounded by osc max_pages_per_rpc).
// - contiguous merging (strided = false) merges only pieces that are also
//   adjacent in the caller's buffer (e.g. stripe_count 1, or a range inside
//   one chunk row): exact in every world, since the request is the same bytes
//   to the same memory.
// - strided = true also merges the pieces of a striped range that sit on one
//   target but are stripe_width apart in the caller's buffer (a scatter list
//   in the real protocol, which ReadChunk does not carry). The merged request
//   names one range of the merged length inside the caller's buffer (same
//   memory, same route and rail), so sizes and routes are right but the bytes
//   would land in the wrong places: for worlds that move no bytes (SimEnv)
//   only. Simulated time changes only by the per-request costs saved and by
//   pieces that would have been pipelined separately (docs/sim.md measures it).
struct ChunkCoalescing {
  std::uint64_t max_bytes = 0;  // largest merged request; 0 = off (one request per chunk piece)
  bool strided = false;         // also merge pieces not adjacent in the buffer (SimEnv only, see above)
};

// Queued chunk jobs Client::pump looks at per call for one whose server has a
// free rail connection (the others wait for a finishing chunk to pump again).
inline constexpr std::size_t k_pump_scan_jobs = 4096;

struct ClientConfig {
  Endpoint mgmt;
  NamespaceConfig ns;
  StripeFlavor stripe_flavor = StripeFlavor::beegfs;
  std::uint32_t max_inflight_chunks = 64;              // chunk requests in flight per client
  std::size_t dir_cache_entries = 100'000;             // cached directory placements
  std::uint32_t readdir_page_entries = 1024;           // entries asked per Readdir
  std::uint64_t readdir_max_entries = 50'000'000;      // a listing larger than this fails
  bool verify_reads = true;                            // CRC32C of every chunk read
  std::uint32_t max_maps_refreshes = 5;                // per request that finds a shard or target unknown
  TimeNs maps_refresh_backoff_ns = 100 * k_ns_per_ms;  // first wait between refreshes; doubles
  std::uint32_t mirror_failovers = 4;  // re-sends of a buddy-mirrored chunk or metadata request to a new primary
  // How long a retry to a mirrored primary waits for the maps it asked mgmt
  // for (still_there) before it goes to the same server anyway: mgmt cut off
  // must not hold every retry for the maps call's own 14 s.
  TimeNs mirror_check_wait_ns = 500 * k_ns_per_ms;
  // How long a request to an unmirrored metadata server that does not answer
  // (a restarting process, a host under load) is sent again under its own
  // request id before it fails, one send per meta_retry_wait_ns: BeeGFS's
  // beegfs-client.conf connCommRetrySecs = 600 (the client retries
  // communication for that long before it returns an error). A resend after
  // the server's restart gets the first answer from its kept replies.
  TimeNs meta_retry_ns = 600 * k_ns_per_s;
  TimeNs meta_retry_wait_ns = 1 * k_ns_per_s;
  // While it holds opens (open(), CreateOptions::open_id), the client sends
  // each metadata server holding some the list of them this often
  // (proto::RenewOpens): an idle client keeps its opens, which a server lets
  // go when a client is not heard for MetaServiceConfig::open_lease_ns
  // (150 s), and a server that lost them (a restart, a switchover) holds
  // them again. 25 s: Lustre's ping interval (obd_timeout / 4 at its default
  // obd_timeout of 100 s). 0: no renewals (the opens then last while
  // requests are sent, and go with a restart).
  TimeNs open_renew_ns = 25 * k_ns_per_s;
  RpcLimits rpc;
  // Planning of chunk transfers (path, rail, window); see core/sched.
  ChunkPlannerConfig planner;
  // Merging of one request's chunk pieces on one target (off by default).
  ChunkCoalescing coalesce;
};

// max_inflight_chunks' upper bound: chunk requests.
inline constexpr std::uint64_t k_max_inflight_chunks_limit = 4096;

// Its fields, one description each (core/common/field_info.hpp). Not listed:
// mgmt (set by a deployment); ns and stripe_flavor come from the file
// system's settings (sl.fs.* policy and flavor); scripts set the planner's
// connections per NIC as rail_connections (scenarios/lua/spec_builders.cpp).
template <class V>
void fields(V& v, ClientConfig& c) {
  constexpr bool s = k_script_field;
  v("max_inflight_chunks", c.max_inflight_chunks,
    count_of("chunks", 1, k_max_inflight_chunks_limit, "chunk requests in flight per client", s));
  v("dir_cache_entries", c.dir_cache_entries, count_of("directories", 0, 1e12, "cached directory placements"));
  v("readdir_page_entries", c.readdir_page_entries, count_of("entries", 1, 1e9, "entries asked per Readdir"));
  v("readdir_max_entries", c.readdir_max_entries, count_of("entries", 1, 1e15, "a listing larger than this fails"));
  v("verify_reads", c.verify_reads, plain("clients check the CRC32C of every chunk read", s));
  v("max_maps_refreshes", c.max_maps_refreshes,
    count_of("refreshes", 0, 1e6, "maps refreshes per request that finds a shard or target unknown"));
  v("maps_refresh_backoff_ns", c.maps_refresh_backoff_ns,
    duration_in(0, k_field_max_unbounded, "first wait between maps refreshes; doubles"));
  v("mirror_failovers", c.mirror_failovers,
    count_of("re-sends", 0, 1e6, "re-sends of a mirrored request to a new primary"));
  v("mirror_check_wait_ns", c.mirror_check_wait_ns,
    duration_in(0, k_field_max_unbounded, "how long a retry to a mirrored primary waits for new maps"));
  v("meta_retry_ns", c.meta_retry_ns,
    duration_in(0, k_field_max_unbounded, "how long an unanswered request to an unmirrored metadata server is resent"));
  v("meta_retry_wait_ns", c.meta_retry_wait_ns, duration_in(0, k_field_max_unbounded, "wait before each such resend"));
  v("open_renew_ns", c.open_renew_ns,
    duration_in(0, k_field_max_unbounded, "while it holds opens, how often it renews them at their metadata servers"));
  v("rpc", c.rpc, plain("RPC limits of its calls"));
  v("planner", c.planner, plain("planning of chunk transfers: path, rail, window (core/sched)"));
  v("coalesce", c.coalesce, plain("merging of one request's chunk pieces on one target"));
}

struct CreateOptions {
  std::uint32_t mode = 0644;
  std::uint32_t uid = 0;  // the owner recorded in the inode (a mount passes its caller's)
  std::uint32_t gid = 0;
  std::uint64_t chunk_bytes = 0;   // 0: the metadata server's default
  std::uint32_t stripe_count = 0;  // 0: the metadata server's default
  proto::ChooserKind chooser = proto::ChooserKind::server_default;
  // Non-zero: the create opens the file too (Client::open), under this id.
  std::uint64_t open_id = 0;
};

// What Client::set_attr changes; fields left empty stay as they are.
struct AttrChange {
  std::optional<std::uint64_t> size_bytes;
  std::optional<std::int64_t> mtime_ns;  // ns since the Unix epoch (Env::wall_ns)
  std::optional<std::int64_t> atime_ns;
  // The record of writes (proto::k_set_attr_written): size_bytes and
  // mtime_ns are what they reached and when; ctime moves to that time only.
  bool written = false;
  std::optional<std::uint32_t> mode;  // permission bits, at most 07777
  std::optional<std::uint32_t> uid;
  std::optional<std::uint32_t> gid;
  // A close after reads: the server notes the access now (relatime).
  bool accessed = false;
  // Non-zero: this is also the close of that open (Client::open): the server
  // lets it go once the change is made.
  std::uint64_t close_open_id = 0;
};

class Client {
 public:
  using StatusFn = std::function<void(Status)>;
  using InodeFn = std::function<void(Result<proto::InodeDesc>)>;
  using EntriesFn = std::function<void(Result<std::vector<proto::DirEntryDesc>>)>;
  using BytesFn = std::function<void(Result<std::uint64_t>)>;
  using XattrFn = std::function<void(Result<proto::XattrReply>)>;

  Client(Env& env, OpTable& ops, ClientConfig config);

  // Registers with mgmt and fetches the maps; ready(ok) when usable.
  void start(StatusFn ready);
  // Feeds an event; false if it was not for the client.
  bool handle(Event& event);

  void mkdir(const std::string& path, std::uint32_t mode, InodeFn done);
  // mkdir with the owner recorded in the inode (options.mode is the mode; chunk and stripe are unused).
  void mkdir(const std::string& path, const CreateOptions& options, InodeFn done);
  void create(const std::string& path, const CreateOptions& options, InodeFn done);
  void stat(const std::string& path, InodeFn done);
  // A stat that opens the file (one request): the metadata server holds the
  // open until a set_attr with close_open_id = open_id or a release_orphan
  // names it, and while any client holds a file open its data outlives its
  // last name (an orphan, POSIX). open_id from new_open_id(). Directories,
  // links and special files are stat'ed only.
  void open(const std::string& path, std::uint64_t open_id, InodeFn done);
  // A number for open() and CreateOptions::open_id this client never used:
  // counted from the wall clock's nanoseconds at the client's start, so a
  // restarted client's do not collide with its former ones' (it would have
  // to have opened a file per nanosecond). No draw from the run's Rng: the
  // seeded stream of every other choice stays as it was.
  std::uint64_t new_open_id() { return open_id_base_ + ++opens_made_; }
  // Lists every shard of the directory; entries of a directory on several
  // shards come ordered by fnv_1a_64 of their names (Lustre lmv merges
  // stripes in hash order), so consecutive entries are on different shards.
  // with_attrs: each entry's size and attrs (what a stat of it shows; a
  // directory's as its entry holds them), for readdirplus and `ls -l`.
  void readdir(const std::string& path, bool with_attrs, EntriesFn done);
  void unlink(const std::string& path, StatusFn done);
  void rmdir(const std::string& path, StatusFn done);
  void rename(const std::string& from, const std::string& to, StatusFn done);
  // unlink, and a rename over a name, of a file this client has open
  // (keep_open): when it was the file's last name, the metadata server keeps
  // the inode and its chunks (an orphan) until release_orphan, so the open
  // handles read and write on (POSIX). Opens made with open() keep it as
  // well, whichever client made them, until each is closed.
  void unlink(const std::string& path, bool keep_open, StatusFn done);
  void rename(const std::string& from, const std::string& to, bool keep_open, StatusFn done);
  // The last close of a file that became an orphan (the inode as opened);
  // open_id: the open() it ends (0: none). The server removes the orphan
  // once no client holds it open.
  void release_orphan(const proto::InodeDesc& inode, StatusFn done);
  void release_orphan(const proto::InodeDesc& inode, std::uint64_t open_id, StatusFn done);
  // Makes the symbolic link `path` whose target is `target` (options: the
  // owner; mode and layout are unused). Lookups and stat do not follow links.
  void symlink(const std::string& target, const std::string& path, const CreateOptions& options, InodeFn done);
  // The target of the symbolic link at path (one Stat); invalid_argument if it is not a link.
  void readlink(const std::string& path, std::function<void(Result<std::string>)> done);
  // Makes the special file `path` (mknod(2)): a FIFO, a character or block
  // device numbered `rdev`, or a socket, with permission bits `mode`
  // (options: the owner). invalid_argument for any other type.
  void mknod(const std::string& path, proto::InodeType type, std::uint32_t mode, std::uint64_t rdev,
             const CreateOptions& options, InodeFn done);
  // Adds the name new_path to the file at `existing` (a hard link; both on
  // one metadata shard); done(the inode, with its new link count).
  void link(const std::string& existing, const std::string& new_path, InodeFn done);
  // An extended attribute of the inode at path, no link followed (op: get,
  // set `name` to `value` with flags k_xattr_create/k_xattr_replace, list,
  // remove); done(the reply: whether the name was there, the value, the
  // names). Namespaces user., trusted. and security.
  void xattr(const std::string& path, proto::XattrOp op, const std::string& name, const std::string& value,
             std::uint32_t flags, XattrFn done);
  // Sets the size (and mtime) recorded in the inode: the close of a written file.
  void close(const std::string& path, std::uint64_t size_bytes, StatusFn done);
  // The close of a file opened for reading: one request to the metadata
  // server (a SetAttr that notes the access: relatime may move the atime), as
  // every close of a file is one (BeeGFS CloseFileMsg ends the open-file
  // session; Lustre MDS_CLOSE carries the atime too).
  void close_unchanged(const std::string& path, StatusFn done);
  // Changes what `change` names of the inode at path (chmod, utimens, the
  // size a truncate records); done(the inode as stored after the change).
  void set_attr(const std::string& path, const AttrChange& change, InodeFn done);

  // Reads [offset, offset + dst.length) of the file into dst (clamped to the
  // inode's size); done(bytes read). dst may be host, pinned or GPU memory.
  void read(const proto::InodeDesc& inode, std::uint64_t offset, const MemHandle& dst, BytesFn done);
  // fallocate(2) on [offset, offset + length) of the file: one AllocateChunk
  // per storage target holding part of the range (each holds one contiguous
  // range of its object: [object_size(offset), object_size(offset + length))
  // of the stripe pattern), to the primary of a mirrored group, which
  // forwards it. Objects keep their sizes: a mode that grows the file is the
  // caller's set_attr. done(ok, or the first failure).
  void allocate(const proto::InodeDesc& inode, std::uint64_t offset, std::uint64_t length, proto::AllocMode mode,
                StatusFn done);
  // Writes src at offset; done(bytes written). sync: durable on completion.
  void write(const proto::InodeDesc& inode, std::uint64_t offset, const MemHandle& src, bool sync, BytesFn done);

  // The client's request channel, shared with the workload for its own
  // coordination calls (one request-id space per service).
  RpcClient& rpc() { return rpc_; }
  std::uint64_t maps_version() const { return maps_version_; }
  // The storage targets of the maps last fetched from mgmt.
  const std::map<TargetId, proto::TargetInfoDesc>& targets() const { return targets_; }
  // The buddy groups of the maps last fetched, by group id.
  const std::map<GroupId, proto::BuddyGroupDesc>& groups() const { return groups_; }
  std::size_t inflight_chunks() const { return inflight_chunks_; }
  const ChunkPlanner& planner() const { return planner_; }

 private:
  // Calls done(value) on a later turn of the loop, never inside its caller
  // (what a callback starts must not run inside the call that started it).
  template <class Fn, class Value>
  void answer_later(Fn done, Value value) {
    ops_.expect(env_.timer(0), [done = std::move(done), value = std::move(value)](Completion&) { done(value); });
  }
  struct IoRequest;
  struct ChunkJob {
    std::shared_ptr<IoRequest> request;
    TargetId target = k_no_id;
    std::uint64_t object_offset = 0;
    MemHandle user;  // the caller's slice for this piece
    std::uint64_t file_offset = 0;
    std::uint32_t refreshes = 0;
    GroupId group = k_no_id;      // buddy-mirrored: the group; `target` is its primary when sent
    std::uint32_t failovers = 0;  // re-sends after the primary failed (ClientConfig::mirror_failovers)
  };
  using PlacementFn = std::function<void(Result<DirPlacement>)>;

  void fetch_maps(StatusFn done);
  // Refreshes the maps until ready() holds (a server registers late, as on
  // real hardware at start-up), at most max_maps_refreshes times with an
  // exponential back-off; done(ok) or done(the last error / unavailable).
  void refresh_maps_until(std::function<bool()> ready, std::string what, StatusFn done, std::uint32_t attempt = 0);
  void meta_call(const std::string& path, proto::Message request, std::function<void(Result<proto::Message>)> done,
                 bool retried = false);
  // Sends a request to a metadata shard's server. When the shard is mirrored
  // and the server does not answer or refuses (a secondary, a fenced former
  // primary), refreshes the maps until they name another server (bounded) and
  // resends under the same request id, at most mirror_failovers times, so the
  // new primary answers a request the old one executed from its replicated
  // reply cache instead of executing it again. When the shard is not
  // mirrored, resends under the same id to the same shard until
  // meta_retry_ns has passed since first_sent_ns (the first send: < 0).
  void call_shard(ShardId shard, proto::Message request, std::function<void(Result<proto::Message>)> done,
                  std::uint32_t failovers = 0, RequestId resend_id = 0, TimeNs first_sent_ns = -1);
  // call_shard's resend to an unmirrored server that did not answer, or done(r) when its time is up.
  void resend_to_shard(ShardId shard, proto::Message request, std::function<void(Result<proto::Message>)> done,
                       RequestId id, TimeNs first_sent_ns, Result<proto::Message> r);
  // RpcClient::call's still_there for a request to `server`, the shard's
  // primary when sent: after an unanswered attempt, refresh the maps and say
  // whether it still is (mgmt may have switched the shard over since).
  RpcClient::StillThereFn shard_still_served_by(ShardId shard, Endpoint server);
  // The same for a chunk job of a buddy group sent to its primary (job.target); empty when not mirrored.
  RpcClient::StillThereFn chunk_still_there(const ChunkJob& job);
  // For a request to `target` as the primary of `group` (k_no_id: not
  // mirrored): whether that is still so, asked of fresh maps.
  RpcClient::StillThereFn primary_still_there(GroupId group, TargetId target);
  // One AllocateChunk of an allocate() to `group`'s primary (or `target`),
  // failing over to a new primary as chunk jobs do; done(its status).
  void allocate_on(GroupId group, TargetId target, proto::AllocateChunk m, std::uint32_t failovers, StatusFn done);
  // A chunk request's failure, naming the file, offset and target.
  static Status chunk_failed(const ChunkJob& job, const Status& why);
  // Refreshes the maps and answers still_there(): resume(serves()) when they
  // come, or resume(true) after mirror_check_wait_ns, whichever is first.
  void check_still_there(std::function<bool()> serves, std::function<void(bool)> resume);
  void placement_of_dir(const std::string& dir_path, PlacementFn done);
  void shard_for_path(const std::string& path, std::function<void(Result<ShardId>)> done);
  Endpoint shard_endpoint(ShardId shard) const;
  void readdir_shard(std::shared_ptr<struct ListingState> state, ShardId shard, std::uint64_t cookie);

  void submit(const proto::InodeDesc& inode, std::uint64_t offset, const MemHandle& buffer, bool write, bool sync,
              BytesFn done);
  void pump();
  void start_job(ChunkJob job);
  proto::ReadChunk read_request(const ChunkJob& job, const ChunkPlan& plan, Endpoint server, const MemHandle& landing);
  void read_chunk(ChunkJob job, const ChunkPlan& plan, Endpoint server);
  void write_chunk(ChunkJob job, const ChunkPlan& plan, Endpoint server);
  // Sends the WriteChunk of `source` (a window on the caller's range, or the
  // request's bounce buffer) with the CRC32C of the caller's bytes.
  void send_write(ChunkJob job, const ChunkPlan& plan, Endpoint server, MemHandle source,
                  std::optional<MemHandle> bounce, std::uint32_t crc32c);
  void job_done(const ChunkJob& job, const ChunkPlan& plan, const Status& status, std::uint64_t bytes,
                std::optional<MemHandle> bounce);
  Endpoint target_endpoint(TargetId target) const;
  // The current primary of a buddy group in our maps (k_no_id if unknown).
  TargetId primary_of(GroupId group) const;
  // A mirrored chunk's primary failed: refresh the maps (bounded) and send it again.
  void fail_over(ChunkJob job, const Status& why);
  // Refreshes the maps until mgmt names a primary of `group` other than
  // `failed` (bounded); then(ok, or why it gave up).
  void await_new_primary(GroupId group, TargetId failed, StatusFn then);
  // The answer of a Stat or Create that opened `open_id` (0: none): the
  // server of the inode (its owner_shard) now holds it, and the first open
  // held starts the renewals; then done(inode).
  std::function<void(Result<proto::Message>)> noting_open(std::uint64_t open_id, InodeFn done);
  // The open is being closed: no renewal names it from now on (one sent
  // later could hold it again after the close).
  void let_go(std::uint64_t open_id) { held_opens_.erase(open_id); }
  // The renewals (RenewOpens to each shard holding opens) after
  // open_renew_ns, while opens are held.
  void arm_renewal();
  void renew_opens();

  Env& env_;
  OpTable& ops_;
  ClientConfig config_;
  RpcClient rpc_;
  ChunkPlanner planner_;
  std::uint64_t maps_version_ = 0;
  std::uint64_t open_id_base_ = 0;  // new_open_id()
  std::uint64_t opens_made_ = 0;
  struct HeldOpen {
    ShardId shard = 0;
    FileId file = 0;
  };
  std::map<std::uint64_t, HeldOpen> held_opens_;  // by open_id: opens a metadata server holds for this client
  bool renewal_armed_ = false;
  std::map<TargetId, proto::TargetInfoDesc> targets_;
  std::map<ShardId, Endpoint> shards_;
  std::map<GroupId, proto::BuddyGroupDesc> groups_;
  std::set<ShardId> mirrored_shards_;
  bool maps_fetching_ = false;
  std::vector<StatusFn> maps_waiters_;
  std::map<std::string, DirPlacement, std::less<>> dir_cache_;
  // Callers waiting for a directory's placement that one Stat already asks
  // for: concurrent lookups of one directory go to the server once, as the
  // Linux VFS lets one lookup of a name be in flight (d_alloc_parallel) and
  // the other threads wait for its dentry. Bounded by the requests in flight.
  std::map<std::string, std::vector<PlacementFn>, std::less<>> dir_lookups_;
  std::deque<ChunkJob> queued_jobs_;
  std::uint32_t inflight_chunks_ = 0;
};

}  // namespace sluice
