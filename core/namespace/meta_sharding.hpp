// Metadata sharding: which metadata shard owns a name, a directory listing,
// a new directory; when a striped directory splits and which names move.
//
// One set of functions serves the three policies of dir_placement.hpp; the
// policy is a tag in the DirPlacement (a value stored in each directory's
// inode and sent on the wire), and each function dispatches on it. The
// metadata server and the client call the same functions, so they always
// agree on where a name lives.
//
// Contract for every function here:
// - Pure and deterministic: the same arguments (and the same Rng state) give
//   the same result on every platform. No clock, no I/O, no allocation
//   beyond the returned values (and error messages). Safe to call from
//   several threads except through a shared Rng&.
// - Randomness only from the Rng passed in, and only where a rule is random;
//   each function says how many draws it takes.
// - A DirPlacement argument must be valid (validate_placement); placements
//   from the wire are validated once on arrival, so the hot lookups
//   (shard_for_entry, shards_for_listing) assert instead of returning Status.
//   Functions that take a NamespaceConfig check it (validate_config) and
//   return the error.
// - Paths are canonical (fs_path.hpp: "/" or "/a/b"); names are valid
//   components (validate_name). Lookups assume this; functions returning
//   Result check it.
//
// How a client uses it (the lead's services are the users):
//   resolve "/a/b/f", dir_owner or striped_dir (resolution_walks_path true):
//     placement = root placement (from the management service)
//     for step in PathComponents("/a/b"):   // the directories, root first
//       shard = shard_for_entry(placement, step.parent, step.name)
//       Lookup(step.name in step.parent) on shard -> the child's DirPlacement
//       placement = that
//     shard_for_entry(placement, "/a/b", "f") holds f's dentry and inode.
//   resolve any path, path_hash (resolution_walks_path false):
//     path_hash_shard("/a/b/f", shard_count) holds it; no walk (GekkoFS
//     checks no permissions on ancestors).
//   mkdir "/a/b/d": on the shard holding d's entry in "/a/b", call
//     place_new_directory(placement of "/a/b", "/a/b/d", config, rng); create
//     the directory inode (with that placement) on its owner_shard and the
//     dentry on shard_for_entry(parent, "/a/b", "d").
//   readdir "/a/b": ask every shard of shards_for_listing(placement) for the
//     entries it holds of that directory and merge.
//   auto-split (striped_dir): after an insert, the shard holding a stripe
//     checks needs_split(placement, entries on its stripe, config); the owner
//     (stripe 0) calls split() once, stores the new placement, and each old
//     stripe moves the names for which entry_move_on_split() says so.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/common/ids.hpp"
#include "core/common/rng.hpp"
#include "core/common/status.hpp"
#include "core/namespace/dir_placement.hpp"
#include "core/namespace/namespace_config.hpp"

namespace sluice {

// ---- placing directories ----------------------------------------------------

// The placement of "/" for a config (checked with validate_config).
// dir_owner: owner root_shard. striped_dir: config.dir_stripe_count stripes on
// consecutive shards from root_shard, hash config.dir_hash. path_hash: owner
// path_hash_shard("/", shard_count). No Rng: every server and client derives
// the same root placement from the config alone.
Result<DirPlacement> root_placement(const NamespaceConfig& config);

// Per-mkdir overrides, as Lustre's "lfs mkdir -c <count> -i <mdt>". Only
// striped_dir honours them; other policies refuse non-default values.
struct MkdirOptions {
  std::uint32_t stripe_count = 0;  // 0: config.dir_stripe_count
  ShardId start_shard = k_no_id;   // k_no_id: config.mkdir_rule picks
};

// The placement of a new directory at canonical `path` (not "/") whose parent
// directory has placement `parent`. Errors (invalid_argument): bad config,
// bad path, parent policy differing from config.policy, path_hash parent with
// a shard_count other than config.shard_count (GekkoFS cannot reshard), bad
// options.
//   dir_owner:   owner uniformly random over config.shard_count shards (as
//                BeeGFS MkDirMsgEx picks the new directory's metadata node);
//                exactly one Rng draw.
//   striped_dir: stripe count from options or config; stripe 0 on the shard
//                from options or config.mkdir_rule, the rest on the following
//                shards in ring order; hash config.dir_hash; generation 0.
//                One Rng draw when the rule chosen is random, none otherwise.
//   path_hash:   owner path_hash_shard(path, shard_count); no Rng draw.
Result<DirPlacement> place_new_directory(const DirPlacement& parent, std::string_view path,
                                         const NamespaceConfig& config, Rng& rng, const MkdirOptions& options = {});

// ---- lookups -----------------------------------------------------------------

// The shard that holds entry `name` of the directory at `parent_path` whose
// placement is `parent`: its dentry, and for a file also its inode (a
// directory's inode is on its own owner_shard).
//   dir_owner:   parent.owner_shard.
//   striped_dir: parent.stripe_shards[stripe_index_for_name(hash, name, stripes)].
//   path_hash:   path_hash_shard(join_path(parent_path, name), shard_count),
//                computed without building the joined string.
// parent_path is only read by path_hash. O(1), or O(stripes) for crush and
// rendezvous.
ShardId shard_for_entry(const DirPlacement& parent, std::string_view parent_path, std::string_view name);

// The shards a listing of the directory must ask, in stripe order.
//   dir_owner: {owner}. striped_dir: stripe_shards. path_hash: every shard
//   0..shard_count-1 (GekkoFS locate_directory_metadata: all hosts).
std::vector<ShardId> shards_for_listing(const DirPlacement& dir);

// GekkoFS placement of any canonical path: fnv_1a_64(path) mod shard_count
// (GekkoFS uses std::hash; see name_hash.hpp for why we do not).
// shard_count must be > 0.
ShardId path_hash_shard(std::string_view path, std::uint32_t shard_count);

// True when a client must resolve a path one directory at a time (dir_owner,
// striped_dir); false when any path's shard follows from the path alone (path_hash).
bool resolution_walks_path(MetaPolicy policy);

// The stripe (0..stripe_count-1) of a name under a hash kind: fnv_1a_64 ->
// stripe_index_fnv_1a_64, crush -> stripe_index_crush, rendezvous ->
// stripe_index_rendezvous, none -> 0.
// stripe_count must be > 0.
std::uint32_t stripe_index_for_name(DirHashKind kind, std::string_view name, std::uint32_t stripe_count);

// ---- auto-split (striped_dir, Lustre DNE3) -------------------------------------

// The stripe count a split of `dir` would produce: a plain directory (one
// stripe) counts as 0 stripes as in Lustre, so it becomes dir_split_delta
// stripes; otherwise stripes + dir_split_delta. Capped by min(shard_count,
// dir_stripes_max) and never below the current count. For other policies,
// and when nothing can grow, the current stripe count (path_hash: 0).
std::uint32_t stripe_count_after_split(const DirPlacement& dir, const NamespaceConfig& config);

// True when the shard holding one stripe of `dir` with `stripe_entries`
// entries on that stripe should ask for a split: striped_dir, auto-split on,
// stripe_entries > config.dir_split_count (Lustre counts per stripe: each MDT
// knows only its own stripe's size), and stripe_count_after_split grows.
// False for any invalid config.
bool needs_split(const DirPlacement& dir, std::uint64_t stripe_entries, const NamespaceConfig& config);

// The placement after one split: the old stripes unchanged and in order, new
// stripes appended up to stripe_count_after_split on shards without a stripe
// chosen by config.split_rule (round_robin: no Rng draw; random: one draw per
// new stripe), split_generation + 1, shard_count = config.shard_count, hash
// unchanged. Errors (invalid_argument): bad config, dir not striped_dir, a
// stripe on a shard not below config.shard_count, nothing to grow.
Result<DirPlacement> split(const DirPlacement& dir, const NamespaceConfig& config, Rng& rng);

// Where an entry goes when a directory's placement changes from `before` to
// `after` (both valid, the same directory): nothing when its shard is
// unchanged, else {from, to}. Under crush and rendezvous every move goes to
// a new stripe's shard; under fnv_1a_64 entries also move between old stripes.
struct EntryMove {
  ShardId from = k_no_id;
  ShardId to = k_no_id;
  bool operator==(const EntryMove&) const = default;
};
std::optional<EntryMove> entry_move_on_split(const DirPlacement& before, const DirPlacement& after,
                                             std::string_view parent_path, std::string_view name);

}  // namespace sluice
