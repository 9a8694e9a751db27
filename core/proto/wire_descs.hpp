// Sub-structures shared by several messages: descriptions of stripes,
// directory layouts, inodes, targets, shards, buddy groups, directory entries
// and rails, as they travel. Services convert them to and from their own
// richer types (core/layout, core/namespace); these carry only what crosses
// the wire.
#pragma once

#include <cstdint>
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

struct DirEntryDesc {
  std::string name;
  InodeType type = InodeType::none;
  FileId file_id = 0;
  std::uint64_t size_bytes = 0;  // valid when the Readdir asked with_attrs

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

}  // namespace sluice::proto
