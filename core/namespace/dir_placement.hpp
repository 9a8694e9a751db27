// DirPlacement: where a directory's own inode and its entries live among the
// metadata shards. Stored in every directory inode and sent on the wire, so
// it is plain data (small integers and one vector) with no pointers, and
// the functions of core/namespace/meta_sharding.hpp compute everything else
// from it. The three policies are the three ways parallel file systems
// shard metadata:
//
//   dir_owner   BeeGFS. A directory has one owner shard, chosen at mkdir
//               at random among the metadata nodes (meta MkDirMsgEx.cpp
//               mkDirPrimary -> NodeCapacityPools::chooseStorageTargets(1)
//               -> chooseStorageNodesNoPref: a uniformly random node of the
//               first non-empty capacity pool). All its dentries, and the
//               inodes of its files, live on the owner. A subdirectory's
//               dentry lives on the parent's owner, its inode on its own
//               owner. Paths resolve one directory at a time.
//   striped_dir Lustre DNE2/DNE3. A directory is striped over an ordered
//               list of MDTs; stripe 0 holds the master inode. A name's
//               stripe comes from hashing the name (fnv_1a_64, the
//               CRUSH-like straw, or per-name rendezvous; name_hash.hpp). A directory with one
//               stripe is a plain directory. DNE3 auto-split appends
//               stripes when a stripe grows past a threshold.
//   path_hash   GekkoFS. Every path, file or directory, lives on
//               fnv_1a_64(full path) mod shard_count; no directory owns
//               anything, and listing a directory asks every shard
//               (GekkoFS SimpleHashDistributor::locate_directory_metadata
//               returns all hosts).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/ids.hpp"
#include "core/common/status.hpp"

namespace sluice {

// Values are wire values: never renumber, only append.
enum class MetaPolicy : std::uint8_t {
  dir_owner = 0,
  striped_dir = 1,
  path_hash = 2,
};

// How a name maps to a stripe of a striped directory (Lustre LMV_HASH_TYPE_*,
// lustre_user.h). Wire values: never renumber.
enum class DirHashKind : std::uint8_t {
  none = 0,        // dir_owner: names are not hashed
  fnv_1a_64 = 1,   // LMV_HASH_TYPE_FNV_1A_64: fnv_1a_64(name) mod stripes; path_hash: of the full path
  crush = 2,       // LMV_HASH_TYPE_CRUSH: placement group straw, minimal movement on split
  rendezvous = 3,  // sluice's own: per-name straw, minimal movement and per-name balance
};

std::string_view to_string(MetaPolicy policy);
std::string_view to_string(DirHashKind kind);

// Shards in one file system; the same as the wire limit k_max_map_shards
// (core/proto/wire_limits.hpp).
inline constexpr std::uint32_t k_shard_count_max = 65536;
// Stripes of one directory: Lustre LMV_MAX_STRIPE_COUNT (lustre_user.h); the
// wire limit k_max_dir_stripes.
inline constexpr std::uint32_t k_dir_stripes_max = 2000;

struct DirPlacement {
  MetaPolicy policy = MetaPolicy::dir_owner;
  DirHashKind hash_kind = DirHashKind::none;
  // The shard holding the directory's own inode (its attributes and this
  // placement). dir_owner: the owner. striped_dir: stripe_shards[0], the
  // Lustre master MDT. path_hash: fnv_1a_64(directory path) mod shard_count.
  ShardId owner_shard = k_no_id;
  // Metadata shards in the file system when this placement was made or last
  // split. path_hash: the modulus of every placement (GekkoFS cannot change
  // it without moving everything). Others: an upper bound for stripe_shards.
  std::uint32_t shard_count = 0;
  // How many times the directory has been split (0 when made). Lets servers
  // and clients order two placements of one directory: the larger is newer.
  std::uint32_t split_generation = 0;
  // dir_owner: exactly {owner_shard}. striped_dir: the shard of stripe i at
  // index i, distinct shards, stripe_shards[0] == owner_shard; a split only
  // appends, so stripe i keeps its shard for the directory's lifetime.
  // path_hash: empty (every shard takes part; see shards_for_listing).
  std::vector<ShardId> stripe_shards;

  bool operator==(const DirPlacement&) const = default;
  // "striped_dir crush owner=3 shards=16 gen=1 stripes=[3,4,5,6]"
  std::string to_string() const;
};

// Ok if `placement` satisfies every invariant written above. Placements that
// arrive from the wire or from storage must pass this before any function of
// meta_sharding.hpp is given them (those assert validity instead of checking).
// The message names the broken invariant (zero shards, shard out of range,
// duplicate stripe shard, owner not stripe 0, too many stripes, wrong hash
// kind for the policy, unknown enum value).
Status validate_placement(const DirPlacement& placement);

}  // namespace sluice
