// The enums that travel as u8 in messages. Values are explicit and dense from
// 0 because they are the wire encoding: append new values at the end, never
// renumber, and update WireEnumMax (the decoder refuses anything above it).
#pragma once

#include <cstdint>
#include <string_view>

#include "core/proto/wire_traits.hpp"

namespace sluice::proto {

// How a file's chunks map onto its targets.
enum class StripePattern : std::uint8_t {
  raid0 = 0,         // chunk i on targets[i % count] (BeeGFS Raid0Pattern, Lustre RAID0 layout)
  buddy_mirror = 1,  // targets are buddy groups; each chunk on both members (BeeGFS BuddyMirrorPattern)
};

enum class InodeType : std::uint8_t {
  none = 0,  // no inode (e.g. the inode of an error reply)
  file = 1,
  dir = 2,
  symlink = 3,  // a symbolic link: InodeDesc::symlink_target is its target, stored at the metadata server
  // Special files (mknod(2)): inodes and names only; the kernel gives them
  // their behaviour (a pipe, a device driver found by InodeDesc::rdev, a
  // socket), the file system stores no data for them.
  fifo = 4,
  char_device = 5,
  block_device = 6,
  socket = 7,
};

// A FIFO, a device or a socket: an inode the file system holds no data for.
constexpr bool is_special_file(InodeType type) {
  return type == InodeType::fifo || type == InodeType::char_device || type == InodeType::block_device ||
         type == InodeType::socket;
}

// What an Xattr request does (getxattr(2), setxattr, listxattr, removexattr).
enum class XattrOp : std::uint8_t {
  get = 0,
  set = 1,
  list = 2,
  remove = 3,
};

// What an AllocateChunk does to its object range (fallocate(2)'s modes a
// chunk object can take: every one keeps the object's size).
enum class AllocMode : std::uint8_t {
  reserve = 0,  // space reserved, bytes unchanged (FALLOC_FL_KEEP_SIZE)
  punch = 1,    // space freed, the bytes read as zeros (FALLOC_FL_PUNCH_HOLE)
  zero = 2,     // the bytes read as zeros and their space is reserved (FALLOC_FL_ZERO_RANGE)
};

// Target/server reachability as BeeGFS's management tracks it
// (TargetStateInfo: ONLINE, PROBABLY-OFFLINE after a missed heartbeat, OFFLINE after the timeout).
enum class Reachability : std::uint8_t {
  online = 0,
  probably_offline = 1,
  offline = 2,
};

// Buddy-mirror consistency of a target (BeeGFS TargetConsistencyState GOOD /
// NEEDS_RESYNC / BAD): needs_resync = it missed writes its primary recorded and
// will copy to it; bad = a resync failed for good (BeeGFS: needs an operator),
// so it is neither written nor promoted.
enum class Consistency : std::uint8_t {
  good = 0,
  needs_resync = 1,
  bad = 2,
};

// Capacity pool of a target by free space (BeeGFS capacity pools; thresholds are mgmt configuration).
enum class CapacityPool : std::uint8_t {
  normal = 0,
  low = 1,
  emergency = 2,
};

// Metadata sharding policy of a directory (see core/namespace).
enum class DirPolicy : std::uint8_t {
  owner = 0,           // the whole directory lives on one shard chosen at mkdir (BeeGFS)
  hashed_striped = 1,  // entries hashed over `stripes` shards (Lustre DNE2/DNE3 striped directories)
  full_path_hash = 2,  // every path hashed to a shard on its own (GekkoFS)
};

// Name hash of a striped directory; values follow Lustre's enum lmv_hash_type (lustre_user.h).
enum class HashKind : std::uint8_t {
  none = 0,
  all_chars = 1,
  fnv_1a_64 = 2,
  crush = 3,
  rendezvous = 4,  // sluice's own: rendezvous hashing of names (core/namespace), not a Lustre type
};

// Target chooser a Create asks for (core/layout implements them).
enum class ChooserKind : std::uint8_t {
  server_default = 0,      // whatever the metadata server is configured with
  randomized = 1,          // BeeGFS TargetChooserType RANDOMIZED
  round_robin = 2,         // BeeGFS ROUNDROBIN
  random_robin = 3,        // BeeGFS RANDOMROBIN
  random_inter_node = 4,   // BeeGFS RANDOMINTERNODE
  space_weighted_qos = 5,  // Lustre lod_qos.c weighted allocator
};

// How a storage server delivers a chunk to the client's memory (core/sched decides).
enum class ChunkPath : std::uint8_t {
  direct = 0,  // straight into the destination region (GPU-direct when it is GPU memory)
  bounce = 1,  // into a pinned host buffer near the destination, then a local copy
};

// What one record of the mirror stream does to the secondary's store (or
// reply cache). Records are absolute states (put X = v, remove X), so
// replaying a stream over a store that already has some of them ends in the
// same state: a resync sends a fuzzy snapshot with the live changes in order.
enum class MetaRecordKind : std::uint8_t {
  reset = 0,         // start of a new stream (epoch): the secondary empties its store
  put_dir = 1,       // directory record `path` := inode
  remove_dir = 2,    // directory record `path` removed (with its remaining entries)
  put_entry = 3,     // entry `name` in `path` := inode
  remove_entry = 4,  // entry `name` in `path` removed
  counter = 5,       // the file-id counter := value
  reply = 6,         // the reply `frame` to request `value` of `client` (replicated reply cache)
};

template <>
struct WireEnumMax<StripePattern> {
  static constexpr StripePattern value = StripePattern::buddy_mirror;
};
template <>
struct WireEnumMax<InodeType> {
  static constexpr InodeType value = InodeType::socket;
};
template <>
struct WireEnumMax<XattrOp> {
  static constexpr XattrOp value = XattrOp::remove;
};
template <>
struct WireEnumMax<AllocMode> {
  static constexpr AllocMode value = AllocMode::zero;
};
template <>
struct WireEnumMax<Reachability> {
  static constexpr Reachability value = Reachability::offline;
};
template <>
struct WireEnumMax<Consistency> {
  static constexpr Consistency value = Consistency::bad;
};
template <>
struct WireEnumMax<CapacityPool> {
  static constexpr CapacityPool value = CapacityPool::emergency;
};
template <>
struct WireEnumMax<DirPolicy> {
  static constexpr DirPolicy value = DirPolicy::full_path_hash;
};
template <>
struct WireEnumMax<HashKind> {
  static constexpr HashKind value = HashKind::rendezvous;
};
template <>
struct WireEnumMax<ChooserKind> {
  static constexpr ChooserKind value = ChooserKind::space_weighted_qos;
};
template <>
struct WireEnumMax<ChunkPath> {
  static constexpr ChunkPath value = ChunkPath::bounce;
};
template <>
struct WireEnumMax<MetaRecordKind> {
  static constexpr MetaRecordKind value = MetaRecordKind::reply;
};

// Names for logs ("raid0", "probably_offline", ...); "unknown" for values out of range.
std::string_view to_string(StripePattern value);
std::string_view to_string(InodeType value);
std::string_view to_string(XattrOp value);
std::string_view to_string(AllocMode value);
std::string_view to_string(Reachability value);
std::string_view to_string(Consistency value);
std::string_view to_string(CapacityPool value);
std::string_view to_string(DirPolicy value);
std::string_view to_string(HashKind value);
std::string_view to_string(ChooserKind value);
std::string_view to_string(ChunkPath value);
std::string_view to_string(MetaRecordKind value);

}  // namespace sluice::proto
