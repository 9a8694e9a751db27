// The u16 type tag of every message in a frame header. Grouped by service in
// the high byte (0x00 generic, 0x01 management, 0x02 metadata, 0x03 storage).
// These numbers are the wire format: never reuse or renumber one.
#pragma once

#include <cstdint>

namespace sluice::proto {

enum class MessageType : std::uint16_t {
  // generic
  ack = 0x0001,
  // management
  register_target = 0x0101,
  register_meta_shard = 0x0102,
  register_client = 0x0103,
  heartbeat = 0x0104,
  get_maps = 0x0105,
  maps_reply = 0x0106,
  barrier = 0x0107,
  set_target_consistency = 0x0108,
  // metadata
  mkdir = 0x0201,
  create = 0x0202,
  lookup = 0x0203,
  stat = 0x0204,
  readdir = 0x0205,
  unlink = 0x0206,
  rmdir = 0x0207,
  rename = 0x0208,
  set_attr = 0x0209,
  inode_reply = 0x020A,
  readdir_reply = 0x020B,
  link_entry = 0x020C,
  unlink_entry = 0x020D,
  attach_dir = 0x020E,
  detach_dir = 0x020F,
  symlink = 0x0210,
  link = 0x0211,
  mknod = 0x0212,
  dir_times = 0x0213,
  xattr = 0x0214,
  xattr_reply = 0x0215,
  release_orphan = 0x0216,
  renew_opens = 0x0217,
  // metadata buddy mirroring (server to server)
  meta_mirror = 0x0220,
  set_meta_consistency = 0x0221,
  // storage
  read_chunk = 0x0301,
  write_chunk = 0x0302,
  chunk_reply = 0x0303,
  remove_chunks = 0x0304,
  chunk_size = 0x0305,
  chunk_size_reply = 0x0306,
  flush_storage = 0x0307,
  allocate_chunk = 0x0308,
  // buddy mirroring (server to server), numbered apart from the client-facing storage messages
  mirror_write = 0x0320,
  mirror_remove = 0x0321,
  mirror_allocate = 0x0322,
};

}  // namespace sluice::proto
