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
// Not supported (refused with a clear error): rename across shards and rename
// of directories (metadata is keyed by path here); DNE3 auto-split migration
// (core/namespace decides splits; moving entries between live shards is not
// implemented yet).
//
// Every operation reports its cost class to the Env (compute) with the units
// of this server's implementation (meta_op_units.hpp: a BeeGFS request costs
// several Lustre-MDT requests), so SimEnv can model a saturated metadata
// server (SEEDS.md section 2: one BeeOND metadata server limits small-file
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
#include "core/services/rpc.hpp"

namespace sluice {

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
  TimeNs maps_max_age_ns = 1 * k_ns_per_s;         // re-fetch target maps older than this before a create
  std::uint32_t readdir_page_max_entries = 1024;   // server-side cap on one Readdir reply
  std::size_t reply_cache_entries = ReplyCache::k_default_entries;
  std::size_t max_waiting_for_maps = 65'536;       // creates queued while maps are fetched
  // File ids are reserved from the store's durable counter this many at a
  // time (one counter write per range, not per create, as Lustre's FID
  // sequences hand a client a range: lustre/fid/fid_request.c). After a crash
  // the unused rest of a range is skipped; an id is never handed out twice.
  std::uint64_t file_id_range = 1024;
  // Service-time units per request kind; unset: meta_op_units_for(stripe_flavor)
  // (stripe_flavor names the file system modelled). Checked by start():
  // invalid units are logged and replaced by that default.
  std::optional<MetaOpUnits> op_units;
  RpcLimits rpc;
};

class MetaService final : public Service {
 public:
  MetaService(Env& env, MetaServiceConfig config, std::unique_ptr<MetaStore> store = nullptr);

  void start() override;
  void on_event(Event& event) override;
  std::string name() const override { return "meta:" + std::to_string(config_.shard); }

  bool registered() const { return registered_; }
  const MetaStore& store() const { return *store_; }
  // The units this server charges per request (see MetaServiceConfig::op_units).
  const MetaOpUnits& op_units() const { return units_; }

 private:
  using Reply = std::function<void(proto::Message)>;

  void handle(Endpoint from, proto::Message& message);
  void dispatch(Endpoint from, proto::Message& message, Reply reply);
  Status check_owner(std::string_view parent, std::string_view name, DirPlacement* parent_placement) const;

  void do_mkdir(const proto::Mkdir& m, Reply reply);
  void do_create(const proto::Create& m, Reply reply);
  void do_create_with_maps(const proto::Create& m, Reply reply);
  void do_lookup(std::string_view path, RequestId rid, CostKind cost, std::uint32_t units, Reply reply);
  void do_readdir(const proto::Readdir& m, Reply reply);
  void do_unlink(const proto::Unlink& m, Reply reply);
  void do_rmdir(const proto::Rmdir& m, Reply reply);
  void do_rename(const proto::Rename& m, Reply reply);
  void do_setattr(const proto::SetAttr& m, Reply reply);
  void fetch_maps(std::function<void(Status)> done);
  void remove_chunks(const proto::InodeDesc& inode);
  // unavailable-style errors of the store when a new range cannot be persisted.
  Result<FileId> allocate_file_id();
  std::uint64_t counter_next_ = 0;      // the counter value the last allocated id used
  std::uint64_t counter_reserved_ = 0;  // the value persisted in the store: ids up to it may be in use
  bool counter_loaded_ = false;
  Endpoint shard_endpoint(ShardId shard) const;

  Env& env_;
  MetaServiceConfig config_;
  MetaOpUnits units_;
  std::unique_ptr<MetaStore> store_;
  OpTable ops_;
  RpcClient rpc_;
  ReplyCache replies_;
  bool registered_ = false;
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
