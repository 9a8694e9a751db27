// Every limit of the wire format, with its value and where it comes from.
// The decoder rejects a frame that exceeds any of them before allocating for
// it; the encoder (validate/encode) refuses to produce such a frame, so a
// message that SimEnv accepts is one that HwEnv can send.
#pragma once

#include <string>

#include <cstddef>
#include <cstdint>

#include "core/common/units.hpp"

namespace sluice::proto {

// The bytes 'S' 'L' 'U' 'I' at the start of every frame (as a little-endian u32).
inline constexpr std::uint32_t k_frame_magic = 0x49554C53u;

// The wire version this build speaks. Frames of any other version are refused
// (invalid_argument): a version bump means the peers must be upgraded together.
// Magic and version are the first 6 bytes of the header in every version.
// History: 1 = the first format; 2 = ReadChunk/WriteChunk carry RDMA keys
// (dst_keys/src_keys, RdmaRegionDesc); 3 = metadata buddy mirroring (MapsReply
// carries meta_groups; MetaMirror, SetMetaConsistency); 4 = StatusCode
// in_progress (a storage server's answer to a retry of a request it is still
// executing); 5 = StatusCode permission_denied (a bulk access to a region
// its owner did not grant, TransportConfig::require_grants); 6 = symbolic and
// hard links (InodeType symlink, InodeDesc nlink and symlink_target, Symlink,
// Link); 7 = special files (InodeType fifo, char_device, block_device and
// socket, InodeDesc rdev, Mknod); 8 = POSIX times (InodeDesc atime_ns and
// ctime_ns, SetAttr atime_ns with mask bits atime and accessed, DirTimes)
// extended attributes (InodeDesc xattrs, Xattr, XattrReply) and orphans
// (Unlink and Rename keep_open, ReleaseOrphan); 9 = a listing's attributes
// (ReaddirReply attrs, EntryAttrs: readdirplus); 10 = opens held by the
// metadata server (Stat and Create open_id, SetAttr open_id with mask bit
// close, ReleaseOrphan open_id); 11 = renewed opens (RenewOpens); 12 =
// fallocate (AllocateChunk, MirrorAllocate).
inline constexpr std::uint16_t k_wire_version = 12;

// Payload bytes of one frame. A MapsReply of k_max_map_targets targets, shards
// and groups is ~4 MiB, well under this; bulk data never travels in messages.
inline constexpr std::uint32_t k_max_message_bytes = static_cast<std::uint32_t>(16 * k_mib);

// Strings.
inline constexpr std::uint32_t k_max_path_bytes = 4096;   // Linux PATH_MAX (limits.h)
inline constexpr std::uint32_t k_max_name_bytes = 255;    // Linux NAME_MAX (limits.h)
inline constexpr std::uint32_t k_max_error_bytes = 1024;  // error text in replies; enough for a path and a reason
// A symbolic link's target: Linux PATH_MAX counts the terminating NUL, so
// symlink(2) refuses a target of 4096 bytes or more (ENAMETOOLONG). The wire
// carries up to k_max_path_bytes, so the metadata server names this limit.
inline constexpr std::uint32_t k_max_symlink_target_bytes = k_max_path_bytes - 1;

// Extended attributes (Linux include/uapi/linux/limits.h): a name of at most
// XATTR_NAME_MAX bytes, a value of at most XATTR_SIZE_MAX; an inode's names
// and values together at most XATTR_LIST_MAX (64 KiB, what listxattr(2) can
// return), so an inode with its xattrs always fits a message.
inline constexpr std::uint32_t k_max_xattr_name_bytes = 255;
inline constexpr std::uint32_t k_max_xattr_value_bytes = 65536;
inline constexpr std::uint32_t k_max_inode_xattr_bytes = 65536;
// A name is at least 2 bytes ("u." is refused, but the wire need not know).
inline constexpr std::uint32_t k_max_inode_xattrs = k_max_inode_xattr_bytes / 2;

// Vectors.
// Targets of one file's stripe: Lustre LOV_MAX_STRIPE_COUNT (lustre_user.h) is 2000.
inline constexpr std::uint32_t k_max_stripe_targets = 2000;
// Metadata shards of one striped directory: Lustre LMV_MAX_STRIPE_COUNT (lustre_user.h) is 2000.
inline constexpr std::uint32_t k_max_dir_stripes = 2000;
// Entries in one ReaddirReply (BeeGFS and Lustre page readdir in batches of a few hundred to a few thousand).
inline constexpr std::uint32_t k_max_readdir_entries = 4096;
// Opens one RenewOpens carries (a client holding more sends several).
inline constexpr std::uint32_t k_max_renewed_opens = 4096;
// Storage targets, metadata shards and buddy groups in one map: 10,000 nodes x 6 targets fit.
inline constexpr std::uint32_t k_max_map_targets = 65536;
inline constexpr std::uint32_t k_max_map_shards = 65536;
inline constexpr std::uint32_t k_max_map_groups = 65536;
// Targets one storage node reports in a Heartbeat.
inline constexpr std::uint32_t k_max_targets_per_node = 1024;
// RDMA keys one ReadChunk/WriteChunk carries: one per NIC of the client node,
// so the most rails a node has (transports/transport.hpp k_max_rails, 16;
// static_assert there keeps the two equal).
inline constexpr std::uint32_t k_max_rdma_keys = 16;

// Records in one MetaMirror batch (a primary sends what piled up while the
// previous batch was in flight, at most this many at a time).
inline constexpr std::uint32_t k_max_mirror_records = 4096;
// An encoded reply carried in a MetaMirror reply record: an InodeReply with a
// stripe of k_max_stripe_targets targets and a full error text fits.
inline constexpr std::uint32_t k_max_mirror_reply_bytes = 16 * 1024;
// Metadata buddy groups in one map (one per mirrored shard).
inline constexpr std::uint32_t k_max_map_meta_groups = k_max_map_shards;

// Nesting depth of structs and vectors that error messages can name (the
// deepest message, InodeReply.inode.stripe.targets[i], needs 4).
inline constexpr std::size_t k_max_field_depth = 8;

// The error text of a reply, cut to k_max_error_bytes (its end replaced by
// "..."): a reason naming a path near PATH_MAX must not make the reply
// unencodable (the caller would see a timeout instead of the error).
inline std::string clip_error_text(std::string text) {
  if (text.size() > k_max_error_bytes) {
    text.resize(k_max_error_bytes - 3);
    text += "...";
  }
  return text;
}

}  // namespace sluice::proto
