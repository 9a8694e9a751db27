// Messages of the storage service. Bulk data never travels in a message: a
// ReadChunk names the destination memory (MemHandle) and the rail, and the
// storage server moves the bytes with Env::transfer (RDMA WRITE, a TCP stream
// placed by the receiver, or a SimGrid communication); a WriteChunk names the
// source the server pulls from. The message only says what, where and how.
//
// Replies: ReadChunk, WriteChunk -> ChunkReply; RemoveChunks -> Ack;
//          ChunkSize -> ChunkSizeReply; FlushStorage -> Ack; AllocateChunk -> Ack;
//          MirrorWrite -> ChunkReply; MirrorRemove -> Ack; MirrorAllocate -> Ack.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/ids.hpp"
#include "core/common/mem_handle.hpp"
#include "core/common/status.hpp"
#include "core/proto/message_type.hpp"
#include "core/proto/wire_descs.hpp"
#include "core/proto/wire_limits.hpp"

namespace sluice::proto {

// Read [object_offset, object_offset + length) of file_id's chunk object on
// `target` into `dst` (dst.length >= length), over `rail`, by `path`.
// dst_keys: how the server reaches dst's region by RDMA WRITE without asking
// (one per client NIC, wire_descs.hpp RdmaRegionDesc); empty when the client's
// world has no RDMA or the transfer is not one-sided, and then a transport
// that needs a key resolves it with the client itself (region_query).
struct ReadChunk {
  static constexpr MessageType k_type = MessageType::read_chunk;
  static constexpr std::string_view k_name = "ReadChunk";
  RequestId request_id = 0;
  FileId file_id = 0;
  TargetId target = k_no_id;
  std::uint64_t object_offset = 0;
  std::uint64_t length = 0;
  MemHandle dst;
  RailDesc rail;
  ChunkPath path = ChunkPath::direct;
  std::vector<RdmaRegionDesc> dst_keys{};

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("file_id", file_id);
    f("target", target);
    f("object_offset", object_offset);
    f("length", length);
    f("dst", dst);
    f("rail", rail);
    f("path", path);
    f("dst_keys", dst_keys, k_max_rdma_keys);
  }
  bool operator==(const ReadChunk&) const = default;
};

// Write `length` bytes from `src` at object_offset of file_id's object on
// `target`. crc32c is the CRC32C of those bytes as the client has them; the
// server verifies it after the transfer. sync: reply only once durable.
// src_keys: how the server reaches src's region by RDMA READ without asking
// (as ReadChunk::dst_keys).
struct WriteChunk {
  static constexpr MessageType k_type = MessageType::write_chunk;
  static constexpr std::string_view k_name = "WriteChunk";
  RequestId request_id = 0;
  FileId file_id = 0;
  TargetId target = k_no_id;
  std::uint64_t object_offset = 0;
  std::uint64_t length = 0;
  MemHandle src;
  RailDesc rail;
  std::uint32_t crc32c = 0;
  bool sync = false;
  std::vector<RdmaRegionDesc> src_keys{};

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("file_id", file_id);
    f("target", target);
    f("object_offset", object_offset);
    f("length", length);
    f("src", src);
    f("rail", rail);
    f("crc32c", crc32c);
    f("sync", sync);
    f("src_keys", src_keys, k_max_rdma_keys);
  }
  bool operator==(const WriteChunk&) const = default;
};

// bytes: how many were read (short at end of object) or written; crc32c of them.
struct ChunkReply {
  static constexpr MessageType k_type = MessageType::chunk_reply;
  static constexpr std::string_view k_name = "ChunkReply";
  RequestId request_id = 0;
  StatusCode status = StatusCode::ok;
  std::string error;
  std::uint64_t bytes = 0;
  std::uint32_t crc32c = 0;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("status", status);
    f("error", error, k_max_error_bytes);
    f("bytes", bytes);
    f("crc32c", crc32c);
  }
  bool operator==(const ChunkReply&) const = default;
};

// Delete file_id's chunk objects on those of `targets` the receiving server holds. Reply: Ack.
struct RemoveChunks {
  static constexpr MessageType k_type = MessageType::remove_chunks;
  static constexpr std::string_view k_name = "RemoveChunks";
  RequestId request_id = 0;
  FileId file_id = 0;
  std::vector<std::uint32_t> targets;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("file_id", file_id);
    f("targets", targets, k_max_stripe_targets);
  }
  bool operator==(const RemoveChunks&) const = default;
};

// Asks the size of file_id's chunk object on `target` (for stat of a file's
// size, as BeeGFS asks storage servers for chunk sizes). Reply: ChunkSizeReply.
struct ChunkSize {
  static constexpr MessageType k_type = MessageType::chunk_size;
  static constexpr std::string_view k_name = "ChunkSize";
  RequestId request_id = 0;
  FileId file_id = 0;
  TargetId target = k_no_id;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("file_id", file_id);
    f("target", target);
  }
  bool operator==(const ChunkSize&) const = default;
};

struct ChunkSizeReply {
  static constexpr MessageType k_type = MessageType::chunk_size_reply;
  static constexpr std::string_view k_name = "ChunkSizeReply";
  RequestId request_id = 0;
  StatusCode status = StatusCode::ok;
  std::string error;
  std::uint64_t object_bytes = 0;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("status", status);
    f("error", error, k_max_error_bytes);
    f("object_bytes", object_bytes);
  }
  bool operator==(const ChunkSizeReply&) const = default;
};

// The receiving server writes back the dirty bytes of all its targets and
// drops their cached pages (Env StorageOp::flush): elbencho's --sync
// --dropcache between two phases. Reply: Ack once every target's flush has
// ended (a retry while it runs is answered in_progress).
struct FlushStorage {
  static constexpr MessageType k_type = MessageType::flush_storage;
  static constexpr std::string_view k_name = "FlushStorage";
  RequestId request_id = 0;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
  }
  bool operator==(const FlushStorage&) const = default;
};

// fallocate(2) on [object_offset, object_offset + length) of file_id's chunk
// object on `target` (a file's range maps to one such object range per
// target: StripePattern::object_range). The object's size never changes: a
// file's size is its inode's. A mirrored group's primary forwards it to the
// secondary (MirrorAllocate). Reply: Ack.
struct AllocateChunk {
  static constexpr MessageType k_type = MessageType::allocate_chunk;
  static constexpr std::string_view k_name = "AllocateChunk";
  RequestId request_id = 0;
  TargetId target = k_no_id;
  FileId file_id = 0;
  std::uint64_t object_offset = 0;
  std::uint64_t length = 0;
  AllocMode mode = AllocMode::reserve;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("target", target);
    f("file_id", file_id);
    f("object_offset", object_offset);
    f("length", length);
    f("mode", mode);
  }
  bool operator==(const AllocateChunk&) const = default;
};

// Buddy mirroring (BeeGFS storage buddy groups): the primary target of
// `group` forwards a chunk write it received, or a resync copy, to the
// group's secondary `target`. Like WriteChunk, the bytes do not travel in the
// message: the secondary pulls `length` bytes from `src` (the primary's
// staging memory, kept until the reply) over `rail` (client_nic = the
// primary's NIC, server_nic = the secondary's), checks them against crc32c and
// writes them at object_offset. `primary` names the sending target: a
// secondary refuses a MirrorWrite from a target its maps do not show as the
// group's primary (a stale primary after a switchover). resync: a copy made
// by a resync, not a forwarded client write (for metrics and logs).
// Reply: ChunkReply.
struct MirrorWrite {
  static constexpr MessageType k_type = MessageType::mirror_write;
  static constexpr std::string_view k_name = "MirrorWrite";
  RequestId request_id = 0;
  GroupId group = k_no_id;
  TargetId primary = k_no_id;
  TargetId target = k_no_id;
  FileId file_id = 0;
  std::uint64_t object_offset = 0;
  std::uint64_t length = 0;
  MemHandle src;
  RailDesc rail;
  std::uint32_t crc32c = 0;
  bool sync = false;
  bool resync = false;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("group", group);
    f("primary", primary);
    f("target", target);
    f("file_id", file_id);
    f("object_offset", object_offset);
    f("length", length);
    f("src", src);
    f("rail", rail);
    f("crc32c", crc32c);
    f("sync", sync);
    f("resync", resync);
  }
  bool operator==(const MirrorWrite&) const = default;
};

// The primary of `group` forwards the removal of file_id's chunk object to
// the secondary `target` (an unlink, or a resync of a file removed while the
// secondary was away). Same role check as MirrorWrite. Reply: Ack.
struct MirrorRemove {
  static constexpr MessageType k_type = MessageType::mirror_remove;
  static constexpr std::string_view k_name = "MirrorRemove";
  RequestId request_id = 0;
  GroupId group = k_no_id;
  TargetId primary = k_no_id;
  TargetId target = k_no_id;
  FileId file_id = 0;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("group", group);
    f("primary", primary);
    f("target", target);
    f("file_id", file_id);
  }
  bool operator==(const MirrorRemove&) const = default;
};

// The primary of `group` forwards an AllocateChunk it applied to the
// secondary `target`. Same role check as MirrorWrite. Reply: Ack.
struct MirrorAllocate {
  static constexpr MessageType k_type = MessageType::mirror_allocate;
  static constexpr std::string_view k_name = "MirrorAllocate";
  RequestId request_id = 0;
  GroupId group = k_no_id;
  TargetId primary = k_no_id;
  TargetId target = k_no_id;
  FileId file_id = 0;
  std::uint64_t object_offset = 0;
  std::uint64_t length = 0;
  AllocMode mode = AllocMode::reserve;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("group", group);
    f("primary", primary);
    f("target", target);
    f("file_id", file_id);
    f("object_offset", object_offset);
    f("length", length);
    f("mode", mode);
  }
  bool operator==(const MirrorAllocate&) const = default;
};

}  // namespace sluice::proto
