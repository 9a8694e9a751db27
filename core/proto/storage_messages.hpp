// Messages of the storage service. Bulk data never travels in a message: a
// ReadChunk names the destination memory (MemHandle) and the rail, and the
// storage server moves the bytes with Env::transfer (RDMA WRITE, a TCP stream
// placed by the receiver, or a SimGrid communication); a WriteChunk names the
// source the server pulls from. The message only says what, where and how.
//
// Replies: ReadChunk, WriteChunk -> ChunkReply; RemoveChunks -> Ack;
//          ChunkSize -> ChunkSizeReply.
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
  }
  bool operator==(const ReadChunk&) const = default;
};

// Write `length` bytes from `src` at object_offset of file_id's object on
// `target`. crc32c is the CRC32C of those bytes as the client has them; the
// server verifies it after the transfer. sync: reply only once durable.
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

}  // namespace sluice::proto
