// NamespaceConfig: the file-system-wide settings of metadata sharding, given
// to every metadata server and client by the management service. Which
// policy (see dir_placement.hpp), how many shards, and for Lustre-style
// striped directories how mkdir stripes a new directory and how DNE3
// auto-split grows one. Plain data; validate_config says what is wrong.
#pragma once

#include <cstdint>
#include <string>

#include "core/common/ids.hpp"
#include "core/common/status.hpp"
#include "core/namespace/dir_placement.hpp"
#include "core/common/field_info.hpp"

namespace sluice {

// Which shard holds the master (stripe 0) of a new striped directory.
// Wire values: never renumber.
enum class MkdirShardRule : std::uint8_t {
  // The shard that holds the new directory's entry in its parent
  // (shard_for_entry). Lustre's plain mkdir: a subdirectory of a striped
  // directory is created on the MDT of the stripe its name hashes to, and a
  // subdirectory of a plain directory on the parent's MDT. Uses no Rng.
  with_entry = 0,
  // Uniformly random over all shards, one Rng draw. Lustre "lfs mkdir -i -1"
  // (space-balanced MDT choice, lod_mdt_alloc_qos; with equally full MDTs it
  // is a uniform choice).
  random = 1,
  // random for directories at depth <= mkdir_spread_depth_max ("/a" is depth
  // 1), with_entry below. Lustre spreads the top of the tree this way
  // through a default directory layout on the root ("lfs setdirstripe -D
  // -i -1 --max-inherit-rr N"), so that big subtrees start on different MDTs
  // while deep directories stay with their parent.
  random_near_root = 2,
};

// Which shards receive the stripes a split adds. Wire values: never renumber.
enum class SplitShardRule : std::uint8_t {
  // The next shards after the last stripe's shard in ring order (0..n-1,
  // wrapping), skipping shards that already hold a stripe. Lustre's
  // round-robin MDT allocator (lod_mdt_alloc_rr) when MDT usage is balanced.
  // Uses no Rng.
  round_robin = 0,
  // Uniformly random shards without a stripe, one Rng draw per new stripe.
  // Lustre picks split targets by space and inode usage (lod_mdt_alloc_qos);
  // with equal usage that is a uniform choice.
  random = 1,
};

std::string_view to_string(MkdirShardRule rule);
std::string_view to_string(SplitShardRule rule);

// Lustre DNE3 directory auto-split (Lustre 2.14, mdt_restripe.c
// mdt_auto_split; Lustre Operations Manual "Directory Auto-Split"): a stripe
// holding more than dir_split_count entries (default DIR_SPLIT_COUNT_DEFAULT,
// 50,000) triggers a split that adds dir_split_delta stripes (default
// DIR_SPLIT_DELTA_DEFAULT, 4), capped by the MDT count; a plain directory
// counts as 0 stripes, so its first split makes 4 (then 8, 12, ...).
inline constexpr std::uint64_t k_dir_split_count_default = 50000;
inline constexpr std::uint32_t k_dir_split_delta_default = 4;
// Our default for MkdirShardRule::random_near_root (Lustre leaves the depth to
// the administrator's default layout).
inline constexpr std::uint32_t k_mkdir_spread_depth_max_default = 3;

struct NamespaceConfig {
  MetaPolicy policy = MetaPolicy::dir_owner;
  // Metadata shards (BeeGFS metadata nodes, Lustre MDTs, GekkoFS daemons),
  // numbered 0..shard_count-1. 1..k_shard_count_max.
  std::uint32_t shard_count = 1;
  // dir_owner and striped_dir: the shard of the root directory (Lustre:
  // MDT0000; BeeGFS: the root metadata node the management service names).
  // path_hash ignores it: the root lives where its path hashes.
  ShardId root_shard = 0;

  // ---- striped_dir only ----
  // Stripes of a new directory: 1 (plain, Lustre's default) .. min(shard_count,
  // dir_stripes_max). Stripes go on consecutive shards (ring order) starting
  // at the shard mkdir_rule picks, as Lustre lays out "lfs mkdir -c N -i I".
  std::uint32_t dir_stripe_count = 1;
  // Hash of new directories (kept for the directory's lifetime). crush by
  // default: Lustre's minimal-movement hash, so a split moves ~delta/new
  // stripes of the names; rendezvous balances better, fnv_1a_64 moves most
  // names on every split.
  DirHashKind dir_hash = DirHashKind::crush;
  MkdirShardRule mkdir_rule = MkdirShardRule::with_entry;
  std::uint32_t mkdir_spread_depth_max = k_mkdir_spread_depth_max_default;
  // Auto-split (DNE3): on/off, threshold, growth, cap, and where new stripes go.
  bool dir_auto_split = true;
  std::uint64_t dir_split_count = k_dir_split_count_default;  // entries on one stripe, >= 1
  std::uint32_t dir_split_delta = k_dir_split_delta_default;  // stripes added, >= 1
  std::uint32_t dir_stripes_max = k_dir_stripes_max;          // 1..k_dir_stripes_max
  SplitShardRule split_rule = SplitShardRule::round_robin;

  bool operator==(const NamespaceConfig&) const = default;
};

// mkdir_spread_depth_max's upper bound: directory levels.
inline constexpr std::uint32_t k_mkdir_spread_depth_limit = 1000;

// Its fields, one description each (core/common/field_info.hpp).
template <class V>
void fields(V& v, NamespaceConfig& c) {
  constexpr bool s = k_script_field;
  v("policy", c.policy,
    plain("metadata sharding: directory owner (BeeGFS), striped directories (Lustre DNE), path hashing (GekkoFS)", s));
  v("shard_count", c.shard_count, count_of("shards", 1, k_shard_count_max, "metadata shards"));
  v("root_shard", c.root_shard, count_of("shard", 0, k_shard_count_max - 1, "shard of the root directory"));
  v("dir_stripe_count", c.dir_stripe_count,
    count_of("shards", 1, k_dir_stripes_max, "striped_dir: shards a new directory is striped over", s));
  v("dir_hash", c.dir_hash, plain("striped_dir: name -> stripe hash (path_hash always fnv_1a_64, dir_owner none)", s));
  v("mkdir_rule", c.mkdir_rule, plain("shard of a new directory", s));
  v("mkdir_spread_depth_max", c.mkdir_spread_depth_max,
    count_of("levels", 0, k_mkdir_spread_depth_limit, "random_near_root: deepest level spread at random", s));
  v("dir_auto_split", c.dir_auto_split, plain("striped_dir: split a directory stripe that grows too big", s));
  v("dir_split_count", c.dir_split_count,
    count_of("entries", 1, 4294967295.0, "entries on one stripe that trigger a split", s));
  v("dir_split_delta", c.dir_split_delta, count_of("stripes", 1, k_dir_stripes_max, "stripes added by one split", s));
  v("dir_stripes_max", c.dir_stripes_max,
    count_of("stripes", 1, k_dir_stripes_max, "most stripes of one directory", s));
  v("split_rule", c.split_rule, plain("shards of the stripes a split adds", s));
}

// Ok if the config is usable: shard_count 1..k_shard_count_max, root_shard
// below shard_count, known enum values, and for striped_dir a hash of
// fnv_1a_64, crush or rendezvous, dir_stripe_count 1..min(shard_count, dir_stripes_max),
// dir_stripes_max 1..k_dir_stripes_max, dir_split_count >= 1 and
// dir_split_delta >= 1. The message names the field and the problem.
Status validate_config(const NamespaceConfig& config);

}  // namespace sluice
