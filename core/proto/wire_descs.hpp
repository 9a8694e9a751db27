// Sub-structures shared by several messages: descriptions of stripes,
// directory layouts, inodes, targets, shards, buddy groups, directory entries
// and rails, as they travel. Services convert them to and from their own
// richer types (core/layout, core/namespace); these carry only what crosses
// the wire.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/common/ids.hpp"
#include "core/proto/wire_enums.hpp"
#include "core/proto/wire_limits.hpp"

namespace sluice::proto {

// A file's stripe pattern: chunk size and the ordered targets (buddy groups
// for buddy_mirror).
struct StripeDesc {
  StripePattern pattern = StripePattern::raid0;
  std::uint64_t chunk_bytes = 0;
  std::vector<std::uint32_t> targets;

  template <class Io>
  void io(Io& f) {
    f("pattern", pattern);
    f("chunk_bytes", chunk_bytes);
    f("targets", targets, k_max_stripe_targets);
  }
  bool operator==(const StripeDesc&) const = default;
};

// How a directory's entries are spread over metadata shards.
struct DirLayoutDesc {
  DirPolicy policy = DirPolicy::owner;
  ShardId owner = k_no_id;             // the shard holding the directory inode (and all entries for `owner`)
  std::vector<std::uint32_t> stripes;  // shards of a hashed_striped directory, in stripe order
  HashKind hash_kind = HashKind::none;
  std::uint32_t split_generation = 0;  // bumped at every auto-split (Lustre DNE3 layout_version)

  template <class Io>
  void io(Io& f) {
    f("policy", policy);
    f("owner", owner);
    f("stripes", stripes, k_max_dir_stripes);
    f("hash_kind", hash_kind);
    f("split_generation", split_generation);
  }
  bool operator==(const DirLayoutDesc&) const = default;
};

// An extended attribute of an inode (getxattr(2)): a name with its
// namespace prefix ("user.", "trusted.", "security.", "system.") and a value
// of opaque bytes.
struct XattrDesc {
  std::string name;
  std::string value;

  template <class Io>
  void io(Io& f) {
    f("name", name, k_max_xattr_name_bytes);
    f("value", value, k_max_xattr_value_bytes);
  }
  bool operator==(const XattrDesc&) const = default;
};

struct InodeDesc {
  FileId file_id = 0;
  InodeType type = InodeType::none;
  std::uint32_t mode = 0;  // POSIX permission bits
  std::uint64_t size_bytes = 0;
  std::int64_t mtime_ns = 0;
  ShardId owner_shard = k_no_id;
  StripeDesc stripe;          // files
  DirLayoutDesc dir_layout;   // directories
  std::uint64_t entries = 0;  // directories: number of entries
  std::uint32_t uid = 0;      // owner (the creating client's user; chown)
  std::uint32_t gid = 0;      // group
  // Names of the inode (POSIX st_nlink): a file's hard links; 0 in records
  // written before link counts were kept, read as 1 (a directory's as 2).
  std::uint32_t nlink = 0;
  std::string symlink_target;  // symbolic links: the target, opaque text (k_max_symlink_target_bytes)
  std::uint64_t rdev = 0;      // character and block devices: the device number (st_rdev)
  // POSIX times besides mtime_ns, in ns since the Unix epoch (Env::wall_ns):
  // the last access (relatime, MetaService::note_access) and the last change
  // of the inode (every change of its attributes, names or bytes). 0 in
  // records written before they were kept, read as mtime_ns.
  std::int64_t atime_ns = 0;
  std::int64_t ctime_ns = 0;
  // Extended attributes, in name order (k_max_inode_xattr_bytes in all). Kept
  // with the inode; replies other than XattrReply carry none (the metadata
  // server strips them: a stat does not ship them).
  std::vector<XattrDesc> xattrs;

  template <class Io>
  void io(Io& f) {
    f("file_id", file_id);
    f("type", type);
    f("mode", mode);
    f("size_bytes", size_bytes);
    f("mtime_ns", mtime_ns);
    f("owner_shard", owner_shard);
    f("stripe", stripe);
    f("dir_layout", dir_layout);
    f("entries", entries);
    f("uid", uid);
    f("gid", gid);
    // The last fields, so that a stored record of wire version 5 or 6 is
    // this one's prefix (hw_backends/rocksdb reads those).
    f("nlink", nlink);
    f("symlink_target", symlink_target, k_max_path_bytes);
    f("rdev", rdev);
    f("atime_ns", atime_ns);
    f("ctime_ns", ctime_ns);
    f("xattrs", xattrs, k_max_inode_xattrs);
  }
  bool operator==(const InodeDesc&) const = default;
};

struct TargetInfoDesc {
  TargetId target = k_no_id;
  NodeId node = k_no_id;
  Endpoint endpoint;  // the storage service serving the target
  Reachability reachability = Reachability::online;
  Consistency consistency = Consistency::good;
  CapacityPool pool = CapacityPool::normal;
  std::uint64_t capacity_bytes = 0;
  std::uint64_t free_bytes = 0;

  template <class Io>
  void io(Io& f) {
    f("target", target);
    f("node", node);
    f("endpoint", endpoint);
    f("reachability", reachability);
    f("consistency", consistency);
    f("pool", pool);
    f("capacity_bytes", capacity_bytes);
    f("free_bytes", free_bytes);
  }
  bool operator==(const TargetInfoDesc&) const = default;
};

struct ShardInfoDesc {
  ShardId shard = k_no_id;
  Endpoint endpoint;
  Reachability reachability = Reachability::online;

  template <class Io>
  void io(Io& f) {
    f("shard", shard);
    f("endpoint", endpoint);
    f("reachability", reachability);
  }
  bool operator==(const ShardInfoDesc&) const = default;
};

struct BuddyGroupDesc {
  GroupId group = k_no_id;
  TargetId primary = k_no_id;
  TargetId secondary = k_no_id;

  template <class Io>
  void io(Io& f) {
    f("group", group);
    f("primary", primary);
    f("secondary", secondary);
  }
  bool operator==(const BuddyGroupDesc&) const = default;
};

// What a stat shows of a listed entry beyond DirEntryDesc's type, id and
// size (a hard link's from its record): the attributes a Readdir with_attrs
// returns, so that a listing with attributes (FUSE readdirplus, `ls -l`) needs
// no lookup per entry. A directory's are its entry's own (its mtime, ctime and
// link count are merged from its records only by a stat).
struct EntryAttrs {
  std::uint32_t mode = 0;
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::uint32_t nlink = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t atime_ns = 0;
  std::int64_t ctime_ns = 0;
  std::uint64_t rdev = 0;
  std::uint64_t chunk_bytes = 0;  // a file's stripe chunk (st_blksize is derived from it)

  template <class Io>
  void io(Io& f) {
    f("mode", mode);
    f("uid", uid);
    f("gid", gid);
    f("nlink", nlink);
    f("mtime_ns", mtime_ns);
    f("atime_ns", atime_ns);
    f("ctime_ns", ctime_ns);
    f("rdev", rdev);
    f("chunk_bytes", chunk_bytes);
  }
  bool operator==(const EntryAttrs&) const = default;
};

// One open a client holds at a metadata server (RenewOpens): the open_id
// it opened with (Stat, Create) and the file it opened.
struct HeldOpenDesc {
  std::uint64_t open_id = 0;
  FileId file_id = 0;

  template <class Io>
  void io(Io& f) {
    f("open_id", open_id);
    f("file_id", file_id);
  }
  bool operator==(const HeldOpenDesc&) const = default;
};

struct DirEntryDesc {
  std::string name;
  InodeType type = InodeType::none;
  FileId file_id = 0;
  std::uint64_t size_bytes = 0;  // valid when the Readdir asked with_attrs
  // Not on the wire in the entry: a ReaddirReply carries them beside its
  // entries (ReaddirReply::attrs) and the client puts them here.
  std::optional<EntryAttrs> attrs;

  template <class Io>
  void io(Io& f) {
    f("name", name, k_max_name_bytes);
    f("type", type);
    f("file_id", file_id);
    f("size_bytes", size_bytes);
  }
  bool operator==(const DirEntryDesc&) const = default;
};

// The NIC pair a chunk transfer uses: index of the NIC on the client node and
// on the server node (core/sched chooses them).
struct RailDesc {
  std::uint32_t client_nic = 0;
  std::uint32_t server_nic = 0;

  template <class Io>
  void io(Io& f) {
    f("client_nic", client_nic);
    f("server_nic", server_nic);
  }
  bool operator==(const RailDesc&) const = default;
};

// How a peer reaches one registered memory region of the sender with
// one-sided RDMA, without asking first: the region's remote address and the
// rkey of its memory region (MR) on one NIC. An MR belongs to one device's
// protection domain, so a region registered on several NICs has one rkey per
// NIC and a multirail sender carries one RdmaRegionDesc per NIC (at most
// k_max_rdma_keys, at most one per nic; a receiver uses the first whose nic
// matches the rail it transfers on).
//
// It describes the whole region that the message's MemHandle names
// (handle.region on handle.node), not the handle's range: the receiver adds
// handle.offset to `address`, exactly as a region_query answer is used
// (a verbs transport's), so one key serves every range of a buffer. As
// BeeGFS's RDMA path carries the client buffer's rkey and address in its
// read/write requests (and GPUDirect Storage the GPU buffer's), so that the
// storage server writes straight into the client's (GPU) memory.
//
// The owner stays the authority: a key is a capability it grants to one
// node, and it revokes it when it frees the region (the transport's
// region_revoke), so a stale key never reaches reused memory.
struct RdmaRegionDesc {
  std::uint32_t nic = 0;      // the owner's NIC index, as RailDesc::client_nic names it (k_no_id: the only/default NIC)
  std::uint32_t rkey = 0;     // the region's rkey on that NIC's device (verbs: ibv_mr::rkey)
  std::uint64_t address = 0;  // remote virtual address of the region's first byte
  std::uint64_t length = 0;   // bytes of the region

  template <class Io>
  void io(Io& f) {
    f("nic", nic);
    f("rkey", rkey);
    f("address", address);
    f("length", length);
  }
  bool operator==(const RdmaRegionDesc&) const = default;
};

// The key of `keys` for `nic`, or nullptr when none is carried for it.
inline const RdmaRegionDesc* find_rdma_key(const std::vector<RdmaRegionDesc>& keys, std::uint32_t nic) {
  for (const RdmaRegionDesc& k : keys) {
    if (k.nic == nic) return &k;
  }
  return nullptr;
}

}  // namespace sluice::proto
