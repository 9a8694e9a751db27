// Message: the closed set of everything sluice's services say to each other,
// as one std::variant, plus small helpers that services and logs need.
//
// Every alternative is a plain struct with `static constexpr MessageType k_type`,
// `static constexpr std::string_view k_name` and an io() field list (see
// wire_traits.hpp). Every request has `RequestId request_id`; every reply
// echoes it and carries `StatusCode status` and `std::string error` (the
// exception is Heartbeat, which is fire-and-forget and has no request_id).
#pragma once

#include <concepts>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <variant>

#include "core/common/status.hpp"
#include "core/proto/message_type.hpp"
#include "core/proto/meta_messages.hpp"
#include "core/proto/meta_mirror_messages.hpp"
#include "core/proto/mgmt_messages.hpp"
#include "core/proto/storage_messages.hpp"

namespace sluice::proto {

using Message = std::variant<
    // generic and management
    Ack, RegisterTarget, RegisterMetaShard, RegisterClient, Heartbeat, GetMaps, MapsReply, Barrier,
    // metadata
    Mkdir, Create, Lookup, Stat, Readdir, Unlink, Rmdir, Rename, SetAttr, InodeReply, ReaddirReply, LinkEntry,
    UnlinkEntry, AttachDir, DetachDir, Symlink, Link, Mknod, DirTimes, Xattr, XattrReply, ReleaseOrphan, RenewOpens,
    // storage
    ReadChunk, WriteChunk, ChunkReply, RemoveChunks, ChunkSize, ChunkSizeReply, FlushStorage, AllocateChunk,
    // buddy mirroring
    SetTargetConsistency, MirrorWrite, MirrorRemove, MirrorAllocate, MetaMirror, SetMetaConsistency>;

template <class T>
concept WireMessage = requires {
  { T::k_type } -> std::convertible_to<MessageType>;
  { T::k_name } -> std::convertible_to<std::string_view>;
};

template <class T>
concept WireReply = WireMessage<T> && requires(const T& m) {
  { m.status } -> std::convertible_to<StatusCode>;
  { m.error } -> std::convertible_to<std::string_view>;
};

// "Mkdir", "ChunkReply", ... for logs.
std::string_view message_name(const Message& message);
MessageType message_type(const Message& message);
// The name of a type tag; "unknown" for a tag no message has.
std::string_view message_type_name(MessageType type);
// Whether some alternative of Message has this tag.
bool is_known_message_type(std::uint16_t raw_type);

// (request_id_of, is_reply and reply_status over a whole Message live with
// the request/reply plumbing in core/services/rpc.hpp.)

// A reply's outcome as a Status (ok, or its code and error text).
template <WireReply R>
Status status_of(const R& reply) {
  if (reply.status == StatusCode::ok) return ok_status();
  return Status(reply.status, reply.error);
}

}  // namespace sluice::proto
