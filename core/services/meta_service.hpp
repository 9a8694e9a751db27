// Metadata server (BeeGFS beegfs-meta, a Lustre MDT): owns one shard of the
// namespace under the policy of core/namespace.
//
// Requests name full paths. The shard that receives a request for an entry
// must be the one core/namespace assigns to it (shard_for_entry of the parent
// directory's placement); a misrouted request is refused with
// invalid_argument so a client with a stale cache notices.
//
// Each directory has a record (its inode) on every shard that hosts its
// entries (shards_for_listing of its placement); mkdir creates them
// (AttachDir to other shards) before linking the new entry in the parent, and
// rmdir checks every record is empty (DetachDir, check only) before removing
// any. Under full-path hashing (GekkoFS) there are no directory records: every
// shard accepts entries for any parent and a listing asks every shard, which
// is GekkoFS's relaxed semantics (parents are not checked on create).
//
// Files: create chooses targets with core/layout from the maps fetched from
// mgmt and stores the stripe pattern in the inode, which lives in the
// directory entry (BeeGFS inlines file inodes). Size is set on close
// (SetAttr), so a stat reports the size the last closer set.
// Unlink removes the entry and then asks the storage servers to remove the
// chunk objects; a failure there leaves orphans, counted in
// meta.orphaned_unlinks, never a dangling entry.
//
// Symbolic links (InodeType symlink) keep their target in the inode, inline
// in the entry like a file's; lookups do not follow them (clients resolve).
// Hard links (Link) add a name to a file on the same shard: the inode then
// moves out of its entry into the shard's table of linked inodes
// (k_linked_inodes_dir, keyed by file id), as BeeGFS moves the inode of a
// file that gets a second name out of its dentry into its own inode file;
// each name keeps a reference (a copy with nlink >= 2), the table's record
// holds the count, and the last unlink removes it and the chunks.
//
// Orphans: the server holds the opens its clients ask for (Stat and Create
// open_id; OpenFiles). An unlink (or a rename over a name) that takes the
// last name of a file some client holds open, or whose sender has it open
// (keep_open), moves the inode to the shard's orphan table (k_orphans_dir)
// instead of removing its chunks; the close of the last open of it
// (SetAttr close, ReleaseOrphan) removes both, and a start removes the
// orphans a previous run kept.
//
// Times (POSIX): every inode keeps mtime, atime and ctime from Env::wall_ns.
// Creation sets all three; any change of an inode's attributes, names or
// bytes sets its ctime; a write's close sets mtime (the client's clock, as a
// BeeGFS client sends its own); a close after reads sets atime where Linux
// relatime would (note_access: atime not after mtime or ctime, or older than
// k_relatime_interval_ns). Adding or removing an entry sets the directory's
// mtime and ctime (touch_dir; merge_dir_times shows them).
//
// Rename of a directory moves its subtree's records and entries, keyed by
// path here, in one step (BeeGFS and Lustre key metadata by id and move one
// dentry): a cost of units_.rename per entry moved, at most
// k_max_dir_rename_entries.
//
// Not supported (refused with a clear error): rename across shards (of a
// file, or of a directory any part of whose subtree another shard holds);
// DNE3 auto-split migration
// (core/namespace decides splits; moving entries between live shards is not
// implemented yet).
//
// Metadata buddy mirroring (MetaServiceConfig::mirror; BeeGFS metadata
// mirroring): two servers serve one shard, a primary and a secondary, as mgmt
// names them (MetaGroupDesc in the maps). Only the primary answers requests;
// the secondary refuses them with `unavailable` (clients refresh their maps
// and go to the primary) and applies what the primary sends.
// - Every change the primary makes to its store is recorded (a
//   RecordingMetaStore around it) as an absolute record and forwarded in
//   order, in batches, one batch in flight (MetaMirror). While the secondary
//   is good, a reply waits until the secondary has acknowledged every record
//   made before it, so nothing acknowledged exists on one server only; the
//   reply of a mutating request is itself replicated, so a client that resends
//   it to the new primary after a switchover gets the same answer, not
//   already_exists.
// - A forward that fails: the primary has mgmt record its secondary as
//   needs_resync (SetMetaConsistency) before it releases the waiting replies
//   and goes on alone; mgmt refuses that from a server that is no longer
//   primary, which then fails the waiting requests with `unavailable`.
// - Once mgmt shows its secondary online and not good, the primary resyncs it:
//   a new stream (epoch) that starts with `reset`, then a walk of the whole
//   store in bounded pages, with live changes recorded in between (records are
//   absolute, so the replay ends in the primary's state), then the file-id
//   counter. When the secondary has acknowledged all of it, replies wait for it
//   again and the primary reports it good.
// - Servers send heartbeats to mgmt; mgmt switches a group whose primary went
//   offline (or re-registered, i.e. restarted) to a good secondary.
//
// Every operation reports its cost class to the Env (compute) with the units
// of this server's implementation (meta_op_units.hpp: a BeeGFS request costs
// several Lustre-MDT requests), so SimEnv can model a saturated metadata
// server (docs/seeds.md#beeond-for-cosmoflow-on-azure: one BeeOND metadata server limits small-file
// throughput). A SetAttr with an empty mask is a close that changes nothing
// (a file opened for reading): it costs a setattr and writes nothing.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/env.hpp"
#include "core/layout/stripe_pattern.hpp"
#include "core/layout/target_chooser.hpp"
#include "core/namespace/meta_sharding.hpp"
#include "core/services/meta_op_units.hpp"
#include "core/services/meta_store.hpp"
#include "core/services/open_files.hpp"
#include "core/services/recording_meta_store.hpp"
#include "core/services/rpc.hpp"
#include "core/common/field_info.hpp"

namespace sluice {

// Metadata buddy mirroring at a metadata server (see the top of this file).
// Off by default; to mirror a shard, run two servers with the same shard and
// this on, and turn on MgmtConfig::meta_mirror and heartbeat checking.
struct MetaMirrorConfig {
  bool enabled = false;
  // This server is its shard's second server: it starts as the secondary
  // (the first server as the primary) whatever order they register in.
  bool second = false;
  TimeNs heartbeat_interval_ns = 500 * k_ns_per_ms;     // liveness reports to mgmt
  TimeNs maps_refresh_interval_ns = 500 * k_ns_per_ms;  // roles and the buddy's state; resyncs start on it
  // Forwarding to the secondary; timeout x attempts stays below the clients'
  // RPC timeout, so a client does not resend while the primary still waits.
  RpcLimits forward_rpc{.timeout_ns = 400 * k_ns_per_ms, .max_attempts = 2};
  // Records not yet acknowledged; beyond, the secondary is dropped. While
  // the secondary is away the same log keeps what changed, for an incremental
  // catch-up when it returns; beyond this bound it gets a full resync instead.
  std::size_t max_log_records = 65'536;
  std::uint32_t max_batch_records = 1024;     // per MetaMirror (<= proto::k_max_mirror_records)
  std::uint64_t max_batch_bytes = 4 * k_mib;  // per MetaMirror, estimated (<= proto::k_max_message_bytes)
  std::uint32_t resync_page_entries = 1024;   // store entries read per resync step
  std::size_t max_held_replies = 65'536;      // replies waiting for the secondary; beyond, `again`
};

// Its fields, one description each (core/common/field_info.hpp).
template <class V>
void fields(V& v, MetaMirrorConfig& c) {
  v("enabled", c.enabled, plain("metadata buddy mirroring of this server's shard"));
  v("second", c.second, plain("this server is its shard's second server (starts as the secondary)"));
  v("heartbeat_interval_ns", c.heartbeat_interval_ns,
    duration_in(0, k_field_max_unbounded, "liveness reports to mgmt"));
  v("maps_refresh_interval_ns", c.maps_refresh_interval_ns,
    duration_in(0, k_field_max_unbounded, "refresh of roles and the buddy's state; resyncs start on it"));
  v("forward_rpc", c.forward_rpc, plain("RPC limits of the forwarding to the secondary"));
  v("max_log_records", c.max_log_records,
    count_of("records", 1, 1e12, "records not yet acknowledged; beyond, the secondary is dropped"));
  v("max_batch_records", c.max_batch_records, count_of("records", 1, 1e9, "records per MetaMirror message"));
  v("max_batch_bytes", c.max_batch_bytes, bytes_in(1, k_field_max_unbounded, "bytes per MetaMirror message"));
  v("resync_page_entries", c.resync_page_entries, count_of("entries", 1, 1e9, "store entries read per resync step"));
  v("max_held_replies", c.max_held_replies,
    count_of("replies", 1, 1e12, "replies waiting for the secondary; beyond, `again`"));
}

// relatime's bound on a stale access time (Linux fs/inode.c
// relatime_need_update: an atime a day old is refreshed by the next read).
inline constexpr TimeNs k_relatime_interval_ns = 24LL * 3600 * 1'000'000'000;

// Entries one directory rename moves at most: metadata is keyed by path, so a
// rename rewrites its subtree in one step of the server (beyond, refused:
// the mount answers EXDEV and mv copies).
inline constexpr std::uint64_t k_max_dir_rename_entries = 1'000'000;

// Checks of the open leases per MetaServiceConfig::open_lease_ns: a client
// is let go between 1 and 1 + 1 / k_open_lease_checks leases after it was
// last heard.
inline constexpr std::int64_t k_open_lease_checks = 4;

struct MetaServiceConfig {
  ShardId shard = 0;
  Endpoint mgmt;
  NamespaceConfig ns;
  StripeFlavor stripe_flavor = StripeFlavor::beegfs;
  std::uint64_t default_chunk_bytes = 512 * k_kib;
  std::uint32_t default_stripe_count = 4;
  proto::ChooserKind default_chooser = proto::ChooserKind::randomized;
  // New files are buddy-mirrored (BeeGFS `beegfs-ctl --setpattern
  // --pattern=buddymirror`): the chooser picks buddy groups from mgmt's maps
  // (a group counts with its worse member's free space, on its primary's
  // node) and the stripe lists group ids. Needs MgmtConfig::buddy_groups and
  // StorageMirrorConfig::enabled on the storage servers. Unlinks of such files
  // go to each group's primary, which forwards them to its secondary.
  bool mirror_file_data = false;
  TimeNs maps_max_age_ns = 1 * k_ns_per_s;        // re-fetch target maps older than this before a create
  std::uint32_t readdir_page_max_entries = 1024;  // server-side cap on one Readdir reply
  std::size_t reply_cache_entries = ReplyCache::k_default_entries;
  // Mutating requests' replies are also kept in the store (MetaStore::
  // keep_reply), the newest reply_cache_entries of them; once this many more
  // are kept, the oldest this many go in one range delete. One delete per
  // reply cost a quarter of the creates on the 16-core host (make bench-meta:
  // 32.5 k/s against 42.1 k/s keeping none).
  std::size_t kept_reply_prune_batch = 4096;
  std::size_t max_waiting_for_maps = 65'536;  // creates queued while maps are fetched
  // File ids are reserved from the store's durable counter this many at a
  // time (one counter write per range, not per create, as Lustre's FID
  // sequences hand a client a range: lustre/fid/fid_request.c). After a crash
  // the unused rest of a range is skipped; an id is never handed out twice.
  std::uint64_t file_id_range = 1024;
  // Names one file may have (hard links), as ext4's EXT4_LINK_MAX; a Link
  // beyond it is refused with invalid_argument naming this limit.
  std::uint32_t max_links = 65'000;
  // A client's opens are a lease (OpenFiles): every open of a client not
  // heard for this long is let go, and the orphans only it held go with
  // them, checked every open_lease_ns / k_open_lease_checks while opens are
  // held. A live client is heard by its requests and, idle, by the renewals
  // it sends every ClientConfig::open_renew_ns (25 s) while it holds opens.
  // 150 s: Lustre's eviction of a client whose pings stopped (PING_EVICT_TIMEOUT,
  // 6 ping intervals of obd_timeout / 4 = 25 s at its default obd_timeout of
  // 100 s); BeeGFS's mgmtd waits tuneClientAutoRemoveMins = 30 min. 0: opens
  // never expire (a dead client's orphans stay until the server restarts).
  TimeNs open_lease_ns = 150 * k_ns_per_s;
  // Service-time units per request kind; unset: meta_op_units_for(stripe_flavor)
  // (stripe_flavor names the file system modelled). Checked by start():
  // invalid units are logged and replaced by that default.
  std::optional<MetaOpUnits> op_units;
  RpcLimits rpc;
  MetaMirrorConfig mirror;
  // Where the namespace lives: empty, in memory (lost with the process);
  // else called at construction, and again by each restart of the service,
  // to open its durable store (hardware deployments: RocksDB under the
  // node's storage root, reopened where it was, so a restarted server finds
  // its namespace). A store given to the constructor wins. When it fails the
  // service logs why and never registers with mgmt (its shard stays
  // offline), rather than serve an empty namespace.
  std::function<Result<std::unique_ptr<MetaStore>>()> open_store;
};

// Its fields, one description each (core/common/field_info.hpp). Not listed:
// what a deployment sets for each server itself (shard, mgmt, open_store).
template <class V>
void fields(V& v, MetaServiceConfig& c) {
  v("ns", c.ns, plain("the namespace: sharding policy and directory striping"));
  v("stripe_flavor", c.stripe_flavor,
    plain("chunk-size rules: BeeGFS (powers of two) or Lustre (multiples of 64 KiB)"));
  v("default_chunk_bytes", c.default_chunk_bytes, bytes_in(1, k_field_max_unbounded, "chunk size of new files"));
  v("default_stripe_count", c.default_stripe_count, count_of("targets", 0, 1e6, "targets of a new file (0: all)"));
  v("default_chooser", c.default_chooser, plain("chooser of a new file's targets"));
  v("mirror_file_data", c.mirror_file_data, plain("new files are buddy-mirrored"));
  v("maps_max_age_ns", c.maps_max_age_ns,
    duration_in(0, k_field_max_unbounded, "target maps older than this are fetched again before a create"));
  v("readdir_page_max_entries", c.readdir_page_max_entries,
    count_of("entries", 1, 1e9, "entries of one Readdir reply"));
  v("reply_cache_entries", c.reply_cache_entries, count_of("replies", 1, 1e12, "replies kept for retried requests"));
  v("kept_reply_prune_batch", c.kept_reply_prune_batch,
    count_of("replies", 1, 1e12, "kept replies removed from the store in one range delete"));
  v("max_waiting_for_maps", c.max_waiting_for_maps,
    count_of("creates", 1, 1e12, "creates queued while maps are fetched"));
  v("file_id_range", c.file_id_range, count_of("ids", 1, 1e12, "file ids reserved from the store at a time"));
  v("max_links", c.max_links, count_of("names", 1, 4294967295.0, "names one file may have (hard links)"));
  v("open_lease_ns", c.open_lease_ns,
    duration_in(0, k_field_max_unbounded, "opens of a client not heard for this long are let go (0: never)"));
  v("op_units", c.op_units, plain("service units per request kind (unset: the flavor's)"));
  v("rpc", c.rpc, plain("RPC limits of its calls to mgmt"));
  v("mirror", c.mirror, plain("metadata buddy mirroring"));
}

class MetaService final : public Service {
 public:
  MetaService(Env& env, MetaServiceConfig config, std::unique_ptr<MetaStore> store = nullptr);

  void start() override;
  void on_event(Event& event) override;
  std::string name() const override { return "meta:" + std::to_string(config_.shard); }
  // Closes the store (a durable one is reopened by the next instance's open_store).
  void crashed() override;

  bool registered() const { return registered_; }
  // Not ok when MetaServiceConfig::open_store failed (the shard stays offline).
  const Status& store_failure() const { return store_failure_; }
  const MetaStore& store() const { return *store_; }
  // MetaStore::commit of the store in use (ok when there is none): for the
  // world to call before the service's replies leave (HwWorld::before_messages_leave).
  Status commit_store() { return store_ ? store_->commit() : ok_status(); }

  // Mirroring state, for tests and logs.
  enum class MirrorRole { off, unknown, primary, secondary, none };
  enum class MirrorMode { alone, resyncing, forwarding, degrading };
  MirrorRole mirror_role() const { return role_; }
  MirrorMode mirror_mode() const { return mode_; }
  // The units this server charges per request (see MetaServiceConfig::op_units).
  const MetaOpUnits& op_units() const { return units_; }

 private:
  using Reply = std::function<void(proto::Message)>;

  void handle(Endpoint from, proto::Message& message);
  void dispatch(Endpoint from, proto::Message& message, Reply reply);
  Status check_owner(std::string_view parent, std::string_view name, DirPlacement* parent_placement) const;

  // A new file's or directory's inode: its id, type, mode, owner and times (now).
  proto::InodeDesc new_inode(FileId id, proto::InodeType type, std::uint32_t mode, std::uint32_t uid,
                             std::uint32_t gid);
  void do_mkdir(const proto::Mkdir& m, Reply reply);
  void do_create(const proto::Create& m, Endpoint from, Reply reply);
  void do_create_with_maps(const proto::Create& m, Endpoint from, Reply reply);
  // What a create chooses from: the targets of the maps, or (mirrored file
  // data) one candidate per buddy group whose members the maps know.
  std::vector<TargetInfo> create_candidates() const;
  // A lookup or stat; open_id non-zero: `from` opens the file (Stat).
  void do_lookup(std::string_view path, RequestId rid, CostKind cost, std::uint32_t units, Reply reply,
                 Endpoint from = {}, std::uint64_t open_id = 0);
  // Holds `from`'s open `open_id` of `inode` where the request asked (a file only).
  Status hold_open(Endpoint from, std::uint64_t open_id, const proto::InodeDesc& inode);
  // A client's RenewOpens: each open held (again, after a restart or a
  // switchover that lost it).
  void renew_opens(Endpoint from, const proto::RenewOpens& m);
  // A check of the open leases after open_lease_ns / k_open_lease_checks,
  // unless one is due or leases are off.
  void arm_lease_check();
  // Lets go the opens of clients not heard for open_lease_ns, and the
  // orphans no open holds any more; armed again while opens are held.
  void expire_opens();
  // A stat's reply: the inode, a directory's with its records' times merged (no xattrs: stored_reply).
  void reply_stat(const std::string& path, RequestId rid, proto::InodeDesc inode, const Reply& reply);
  void do_readdir(const proto::Readdir& m, Reply reply);
  void do_unlink(const proto::Unlink& m, Reply reply);
  void do_rmdir(const proto::Rmdir& m, Reply reply);
  void do_rename(const proto::Rename& m, Reply reply);
  // The two names of a rename or a link, split and checked to be this
  // shard's; invalid_argument starting with `across_shards` when `to` is another's.
  struct TwoNames {
    std::string from_parent, from_name, to_parent, to_name;
  };
  Result<TwoNames> two_names(const std::string& from, const std::string& to, const std::string& across_shards) const;
  // Rename of a directory whose whole subtree this shard holds (its records
  // and entries, keyed by path, move under the new name in one step;
  // invalid_argument when a part is on another shard, as across shards).
  void rename_dir(const proto::Rename& m, const TwoNames& n, Reply reply);
  // rename_dir's change, after its cost: checked again, then made.
  Status move_dir(const proto::Rename& m, const TwoNames& n);
  // The directories under `top` (itself first), all of whose records this
  // shard holds alone; `entries` counts the entries under it.
  Result<std::vector<std::string>> subtree_here(const std::string& top, std::uint64_t& entries) const;
  // Moves directory `from`'s entries and record to `to`.
  Status move_dir_here(const std::string& from, const std::string& to);
  // invalid_argument for a directory rename this server cannot make atomically.
  Status check_dir_rename(const proto::Rename& m, std::uint64_t entries, std::size_t dirs) const;
  void do_setattr(const proto::SetAttr& m, Endpoint from, Reply reply);
  // A close after reads (SetAttr accessed): relatime decides whether the
  // access time moves; a directory's against its records' merged times.
  void close_after_reads(const proto::SetAttr& m, const std::string& parent, const std::string& name_,
                         const proto::InodeDesc& entry, proto::InodeDesc inode, const Reply& reply);
  // A SetAttr close whose open holds a file no longer at m.path (another
  // client unlinked or renamed it): the open goes, an orphan with no open
  // left with it; the reply is the orphan's inode, else not_found.
  void close_unnamed(const proto::SetAttr& m, Endpoint from, FileId file, const Reply& reply);
  // Symbolic and hard links.
  void do_symlink(const proto::Symlink& m, Reply reply);
  void do_link(const proto::Link& m, Reply reply);
  // Special files: FIFOs, devices, sockets (an inode and a name, no data).
  void do_mknod(const proto::Mknod& m, Reply reply);
  // Extended attributes, kept in the inode (InodeDesc::xattrs) as BeeGFS
  // keeps them with the inode it stores: get, set, list, remove.
  void do_xattr(const proto::Xattr& m, Reply reply);
  // invalid_argument for flags or a namespace the request may not use.
  Status check_xattr(const proto::Xattr& m) const;
  Result<bool> apply_xattr(const proto::Xattr& m, proto::InodeDesc& inode, proto::XattrReply& r) const;
  // A new inode that holds no data (a symbolic link, a special file) named
  // parent/name: its fields as `fill` sets them (type, mode, owner, ...), a
  // fresh id, stored after the create's cost unless the name is taken
  // (already_exists); counts `metric`.
  void put_new_inode(RequestId rid, const std::string& path, std::string parent, std::string name_, const char* metric,
                     const std::function<void(proto::InodeDesc&)>& fill, Reply reply);
  // The inode an entry names: the entry itself, or the linked-inode table's
  // record for a reference; a link count missing from an old record is
  // filled in (1, a directory's 2). corrupt when a reference has no record.
  Result<proto::InodeDesc> resolve(const proto::InodeDesc& entry) const;
  // Stores `inode`, the new state of what entry parent/name names, where it lives.
  Status put_inode(std::string_view parent, std::string_view name, const proto::InodeDesc& entry,
                   const proto::InodeDesc& inode);
  // A name of `entry`'s inode was removed: the last name removes the inode
  // and its chunks, or keeps them as an orphan (keep_open: see Unlink).
  Status drop_name(const proto::InodeDesc& entry, bool keep_open = false);
  // The inode has no name left: its chunks go, or (keep_open, or a client
  // holds it open) it becomes an orphan.
  Status drop_inode(const proto::InodeDesc& inode, bool keep_open);
  // A close of an orphan: the sender's open goes; with no open of it left,
  // the inode and its chunks go.
  void do_release_orphan(const proto::ReleaseOrphan& m, Endpoint from, Reply reply);
  // The orphan `file` goes with its chunks (not_found when there is none).
  Status remove_orphan(FileId file);
  // One lease after start (the recovery window), the orphans a previous run
  // kept and no client holds again (RenewOpens) go, with their chunks; at
  // once when leases are off.
  void remove_orphans();

  // ---- POSIX times (wire version 8) ----
  // A directory's entry in its parent holds its times as its own changes
  // (SetAttr) leave them; each record of it (one per shard hosting its
  // entries) holds the mtime and ctime that its entries' changes there set.
  // A stat merges them (merge_dir_times). Under path_hash there are no
  // records, so a directory's times change only with its own SetAttr.
  // An entry of `dir` was added or removed on this shard: its record's mtime
  // and ctime become now; `subdirs` (+1 a mkdir, -1 an rmdir) moves the
  // record's link count, 2 + the subdirectories it holds.
  Status touch_dir(std::string_view dir, int subdirs = 0);
  // The inode's ctime becomes now (a change of its attributes, names or bytes).
  void changed(proto::InodeDesc& inode) const { inode.ctime_ns = env_.wall_ns(); }
  // `ask` (DirTimes) answered from this shard's record of ask.path.
  Result<proto::InodeDesc> dir_times_here(const proto::DirTimes& ask);
  // Sends `ask` to every shard holding a record of directory `dir` (this one
  // answered at once); done(the records that answered, the first error).
  void visit_dir_records(const proto::InodeDesc& dir, const proto::DirTimes& ask,
                         std::function<void(std::vector<proto::InodeDesc>, Status)> done);
  // A stat of directory `path` (its entry or root record `dir`): done(dir
  // with the latest mtime and ctime of its records and their link count). A
  // record that cannot be read is left out, counted in meta.dir_times_missing.
  void merge_dir_times(const std::string& path, proto::InodeDesc dir, std::function<void(proto::InodeDesc)> done);
  void fetch_maps(std::function<void(Status)> done);
  void remove_chunks(const proto::InodeDesc& inode);
  // unavailable-style errors of the store when a new range cannot be persisted.
  Result<FileId> allocate_file_id();
  std::uint64_t counter_next_ = 0;      // the counter value the last allocated id used
  std::uint64_t counter_reserved_ = 0;  // the value persisted in the store: ids up to it may be in use
  bool counter_loaded_ = false;
  Endpoint shard_endpoint(ShardId shard) const;

  // ---- buddy mirroring (meta_mirror.cpp) ----
  struct HeldReply {
    std::uint64_t sequence = 0;  // released once the secondary acknowledged records up to here
    Endpoint to;
    RequestId id = 0;
    proto::Message reply;
    bool keep = false;  // send_reply's
  };
  void mirror_start();
  void mirror_tick();
  void mirror_heartbeat();
  void mirror_fetch_maps();
  void mirror_apply_maps(const proto::MapsReply& maps);
  // Refuses what a secondary (or a server without a role yet) must not serve; true if refused.
  bool mirror_refuses(Endpoint from, proto::Message& message);
  // Sends `reply` now or holds it until the secondary has what it depends on.
  void mirror_reply(Endpoint to, RequestId id, proto::Message reply, bool mutating);
  // Sends a reply the cache answers retries with; keep (a mutating
  // request's): the store keeps it too (MetaStore::keep_reply), so that it
  // outlives a restart of this server.
  void send_reply(Endpoint to, RequestId id, proto::Message reply, bool keep);
  void remember_reply(Endpoint to, RequestId id, const proto::Message& reply, bool keep);
  // The store's kept replies into the cache, once, at start.
  void load_kept_replies();
  void mirror_record(proto::MetaRecordDesc record);
  void mirror_pump();
  void mirror_pump_soon();  // after this step of the service (meta_mirror.cpp)
  void mirror_acked(std::uint64_t end_sequence);
  void mirror_forward_failed(const Status& why);
  void mirror_report(proto::Consistency consistency, std::function<void(Status)> done);
  void mirror_go_alone(const std::string& why);
  void mirror_end_stream();
  void mirror_suspend_stream();
  void mirror_release_held();
  void mirror_fail_held(const Status& why);
  void mirror_start_resync();
  void mirror_resync_step();
  void mirror_on_batch(Endpoint from, const proto::MetaMirror& m, Reply reply);
  Status mirror_apply(const proto::MetaRecordDesc& record);

  Env& env_;
  MetaServiceConfig config_;
  MetaOpUnits units_;
  std::unique_ptr<MetaStore> store_;
  RecordingMetaStore* recorder_ = nullptr;  // store_ itself when mirroring is on
  OpTable ops_;
  RpcClient rpc_;
  RpcClient mirror_rpc_;
  ReplyCache replies_;
  OpenFiles open_files_;            // the opens clients asked this server to hold
  bool lease_check_armed_ = false;  // a check of the open leases is due (while opens are held)
  // The store's kept replies are seq oldest_kept_seq_ .. next_kept_seq_ - 1,
  // fewer than reply_cache_entries + kept_reply_prune_batch of them.
  std::uint64_t oldest_kept_seq_ = 1;
  std::uint64_t next_kept_seq_ = 1;
  bool kept_loaded_ = false;
  // Mirroring.
  MirrorRole role_ = MirrorRole::off;
  MirrorMode mode_ = MirrorMode::alone;
  proto::MetaGroupDesc group_;  // from the last maps
  std::uint64_t mirror_maps_version_ = 0;
  std::uint64_t heartbeat_sequence_ = 0;
  std::uint64_t epoch_ = 0;                // the stream this primary sends
  std::uint64_t next_sequence_ = 1;        // of the next record
  std::uint64_t acked_sequence_ = 0;       // the secondary has every record up to here
  std::deque<proto::MetaRecordDesc> log_;  // records acked_sequence_ + 1 ... next_sequence_ - 1
  bool batch_in_flight_ = false;
  bool pump_scheduled_ = false;  // mirror_pump_soon: a pump waits for the end of this step
  // The stream is suspended, not ended: log_ keeps every record since the
  // secondary's last acknowledgement, and records made while it is away are
  // added, so that it can catch up on exactly those (same epoch, next
  // sequence) if it returns with its state; it refuses otherwise (a restart,
  // a broken stream) and gets a full resync.
  bool catch_up_ = false;
  std::uint64_t stream_generation_ = 0;  // answers of batches sent before a suspend or end are ignored
  bool reporting_ = false;
  bool report_good_pending_ = false;  // a completed resync whose `good` mgmt has not taken yet
  std::deque<HeldReply> held_;
  // Resync walk: the directory being copied and where in its entries.
  bool resync_walk_done_ = true;
  std::string resync_dir_;
  bool resync_dir_started_ = false;
  std::uint64_t resync_cookie_ = 0;
  // As a secondary: the stream applied.
  std::uint64_t applied_epoch_ = 0;
  std::uint64_t applied_sequence_ = 0;
  bool registered_ = false;
  Status store_failure_;  // open_store failed: the service stays unregistered
  // Maps from mgmt.
  std::vector<proto::TargetInfoDesc> targets_;
  std::vector<proto::BuddyGroupDesc> groups_;
  std::map<ShardId, Endpoint> shards_;
  TimeNs maps_fetched_ns_ = -1;
  bool maps_fetching_ = false;
  std::vector<std::function<void(Status)>> maps_waiters_;
  std::map<ChooserKind, TargetChooser> choosers_;  // one per kind asked for, with its round-robin state
};

}  // namespace sluice
