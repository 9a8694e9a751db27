// Messages of the metadata service. Paths are absolute, '/'-separated, at
// most k_max_path_bytes; names at most k_max_name_bytes (the server checks
// their syntax, the codec only their length).
//
// Replies: Mkdir, Create, Lookup, Stat, SetAttr, Symlink, Link, Mknod -> InodeReply;
//          Readdir -> ReaddirReply;
//          Unlink, Rmdir, Rename, LinkEntry, UnlinkEntry, AttachDir, DetachDir -> Ack.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/ids.hpp"
#include "core/common/status.hpp"
#include "core/proto/message_type.hpp"
#include "core/proto/wire_descs.hpp"
#include "core/proto/wire_limits.hpp"

namespace sluice::proto {

struct Mkdir {
  static constexpr MessageType k_type = MessageType::mkdir;
  static constexpr std::string_view k_name = "Mkdir";
  RequestId request_id = 0;
  std::string path;
  std::uint32_t mode = 0;
  std::uint32_t uid = 0;  // the new directory's owner
  std::uint32_t gid = 0;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("path", path, k_max_path_bytes);
    f("mode", mode);
    f("uid", uid);
    f("gid", gid);
  }
  bool operator==(const Mkdir&) const = default;
};

// chunk_bytes == 0 and stripe_count == 0 ask for the parent directory's (or
// the server's) default; chooser picks the target chooser.
struct Create {
  static constexpr MessageType k_type = MessageType::create;
  static constexpr std::string_view k_name = "Create";
  RequestId request_id = 0;
  std::string path;
  std::uint32_t mode = 0;
  std::uint64_t chunk_bytes = 0;
  std::uint32_t stripe_count = 0;
  ChooserKind chooser = ChooserKind::server_default;
  std::uint32_t uid = 0;  // the new file's owner
  std::uint32_t gid = 0;
  std::uint64_t open_id = 0;  // non-zero: the sender opens the new file too (see Stat)

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("path", path, k_max_path_bytes);
    f("mode", mode);
    f("chunk_bytes", chunk_bytes);
    f("stripe_count", stripe_count);
    f("chooser", chooser);
    f("uid", uid);
    f("gid", gid);
    f("open_id", open_id);
  }
  bool operator==(const Create&) const = default;
};

struct Lookup {
  static constexpr MessageType k_type = MessageType::lookup;
  static constexpr std::string_view k_name = "Lookup";
  RequestId request_id = 0;
  std::string path;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("path", path, k_max_path_bytes);
  }
  bool operator==(const Lookup&) const = default;
};

// open_id non-zero: the sender opens the file (BeeGFS's LookupIntent with
// its open flag, one request): the server holds the open, named by the
// sender's endpoint and open_id (a number the client never reuses), until a
// SetAttr with k_set_attr_close or a ReleaseOrphan names it. While any client
// holds a file open, the unlink or rename that takes its last name keeps it
// as an orphan (Unlink). A directory, link or special file is not held.
struct Stat {
  static constexpr MessageType k_type = MessageType::stat;
  static constexpr std::string_view k_name = "Stat";
  RequestId request_id = 0;
  std::string path;
  std::uint64_t open_id = 0;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("path", path, k_max_path_bytes);
    f("open_id", open_id);
  }
  bool operator==(const Stat&) const = default;
};

// Lists up to max_entries (<= k_max_readdir_entries) entries starting at
// `cookie` (0: from the start; else a ReaddirReply's next_cookie).
struct Readdir {
  static constexpr MessageType k_type = MessageType::readdir;
  static constexpr std::string_view k_name = "Readdir";
  RequestId request_id = 0;
  std::string path;
  std::uint64_t cookie = 0;
  std::uint32_t max_entries = 0;
  bool with_attrs = false;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("path", path, k_max_path_bytes);
    f("cookie", cookie);
    f("max_entries", max_entries);
    f("with_attrs", with_attrs);
  }
  bool operator==(const Readdir&) const = default;
};

// When this is the file's last name and a client holds it open (Stat
// open_id), or keep_open says the sender has it open, the inode and its
// chunks stay, as an orphan, until the last of those opens is closed (POSIX:
// an unlinked file's data lives until its last close).
struct Unlink {
  static constexpr MessageType k_type = MessageType::unlink;
  static constexpr std::string_view k_name = "Unlink";
  RequestId request_id = 0;
  std::string path;
  bool keep_open = false;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("path", path, k_max_path_bytes);
    f("keep_open", keep_open);
  }
  bool operator==(const Unlink&) const = default;
};

struct Rmdir {
  static constexpr MessageType k_type = MessageType::rmdir;
  static constexpr std::string_view k_name = "Rmdir";
  RequestId request_id = 0;
  std::string path;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("path", path, k_max_path_bytes);
  }
  bool operator==(const Rmdir&) const = default;
};

// keep_open: the client has the file at `to` open (see Unlink), which the
// rename replaces.
struct Rename {
  static constexpr MessageType k_type = MessageType::rename;
  static constexpr std::string_view k_name = "Rename";
  RequestId request_id = 0;
  std::string from;
  std::string to;
  bool keep_open = false;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("from", from, k_max_path_bytes);
    f("to", to, k_max_path_bytes);
    f("keep_open", keep_open);
  }
  bool operator==(const Rename&) const = default;
};

// Creates the symbolic link `path` whose target is `target` (opaque text, at
// most k_max_symlink_target_bytes: the server refuses longer or empty ones
// with invalid_argument). Lookups do not follow links: a client resolves them
// (the kernel does, for a FUSE mount). Reply: InodeReply (type symlink).
struct Symlink {
  static constexpr MessageType k_type = MessageType::symlink;
  static constexpr std::string_view k_name = "Symlink";
  RequestId request_id = 0;
  std::string path;
  std::string target;
  std::uint32_t uid = 0;  // the link's owner
  std::uint32_t gid = 0;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("path", path, k_max_path_bytes);
    f("target", target, k_max_path_bytes);
    f("uid", uid);
    f("gid", gid);
  }
  bool operator==(const Symlink&) const = default;
};

// Adds the name `to` for the existing file (or symbolic link) `from`: a hard
// link. Sent to the shard of `from`; both names must be on that shard (a
// named design limit, as a link across Lustre MDTs needs a remote entry):
// otherwise invalid_argument, which a mount answers as EXDEV. A directory is
// refused with is_a_directory (EPERM). Reply: InodeReply (the inode, with its
// new nlink).
struct Link {
  static constexpr MessageType k_type = MessageType::link;
  static constexpr std::string_view k_name = "Link";
  RequestId request_id = 0;
  std::string from;
  std::string to;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("from", from, k_max_path_bytes);
    f("to", to, k_max_path_bytes);
  }
  bool operator==(const Link&) const = default;
};

// Creates the special file `path` (mknod(2)): a FIFO, a character or block
// device (its number `rdev`) or a socket, with permission bits `mode`. The
// metadata server stores the inode and its name only, never data (the kernel
// opens such a file without asking the file system). Any other type is
// refused with invalid_argument. Reply: InodeReply.
struct Mknod {
  static constexpr MessageType k_type = MessageType::mknod;
  static constexpr std::string_view k_name = "Mknod";
  RequestId request_id = 0;
  std::string path;
  InodeType type = InodeType::fifo;
  std::uint32_t mode = 0;
  std::uint64_t rdev = 0;
  std::uint32_t uid = 0;  // the file's owner
  std::uint32_t gid = 0;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("path", path, k_max_path_bytes);
    f("type", type);
    f("mode", mode);
    f("rdev", rdev);
    f("uid", uid);
    f("gid", gid);
  }
  bool operator==(const Mknod&) const = default;
};

// The sender's last close of a file whose last name went while it was open
// (an orphan): the metadata server of its shard ends the sender's open
// open_id (Stat) and, when no client holds the file open any more, removes
// the inode and its chunks. Reply: Ack (not_found when there is no such
// orphan).
struct ReleaseOrphan {
  static constexpr MessageType k_type = MessageType::release_orphan;
  static constexpr std::string_view k_name = "ReleaseOrphan";
  RequestId request_id = 0;
  FileId file_id = 0;
  std::uint64_t open_id = 0;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("file_id", file_id);
    f("open_id", open_id);
  }
  bool operator==(const ReleaseOrphan&) const = default;
};

// The opens the sender holds at this metadata server, sent every
// ClientConfig::open_renew_ns while it holds any (at most
// k_max_renewed_opens a message, more in several): the server hears the
// client, which renews its lease (MetaServiceConfig::open_lease_ns), and
// holds each open again, so a client's opens outlive a restart of the
// server, or a mirrored shard's switchover, that lost them (Lustre's open
// replay). One-way: no reply.
struct RenewOpens {
  static constexpr MessageType k_type = MessageType::renew_opens;
  static constexpr std::string_view k_name = "RenewOpens";
  std::vector<HeldOpenDesc> opens;

  template <class Io>
  void io(Io& f) {
    f("opens", opens, k_max_renewed_opens);
  }
  bool operator==(const RenewOpens&) const = default;
};

// Xattr.flags of a set (setxattr(2)'s XATTR_CREATE and XATTR_REPLACE).
inline constexpr std::uint32_t k_xattr_create = 1u << 0;   // already_exists if the name is set
inline constexpr std::uint32_t k_xattr_replace = 1u << 1;  // nothing set (found false) if it is not
inline constexpr std::uint32_t k_xattr_known_flags = k_xattr_create | k_xattr_replace;

// An extended attribute of the inode at `path` (no link followed): get or
// remove `name`, set it to `value` (flags), or list the names. Reply:
// XattrReply.
struct Xattr {
  static constexpr MessageType k_type = MessageType::xattr;
  static constexpr std::string_view k_name = "Xattr";
  RequestId request_id = 0;
  std::string path;
  XattrOp op = XattrOp::get;
  std::string name;
  std::string value;
  std::uint32_t flags = 0;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("path", path, k_max_path_bytes);
    f("op", op);
    f("name", name, k_max_xattr_name_bytes);
    f("value", value, k_max_xattr_value_bytes);
    f("flags", flags);
  }
  bool operator==(const Xattr&) const = default;
};

// found: whether the name was there (get, remove; a set with
// k_xattr_replace); ENODATA where it was not. value: a get's; names: a list's,
// in name order (their values left empty).
struct XattrReply {
  static constexpr MessageType k_type = MessageType::xattr_reply;
  static constexpr std::string_view k_name = "XattrReply";
  RequestId request_id = 0;
  StatusCode status = StatusCode::ok;
  std::string error;
  bool found = false;
  std::string value;
  std::vector<XattrDesc> names;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("status", status);
    f("error", error, k_max_error_bytes);
    f("found", found);
    f("value", value, k_max_xattr_value_bytes);
    f("names", names, k_max_inode_xattrs);
  }
  bool operator==(const XattrReply&) const = default;
};

// SetAttr.mask bits: which of the fields to apply. Other bits are reserved
// (the metadata server refuses them).
inline constexpr std::uint32_t k_set_attr_size = 1u << 0;   // truncate/extend to size_bytes
inline constexpr std::uint32_t k_set_attr_mtime = 1u << 1;  // set mtime_ns
inline constexpr std::uint32_t k_set_attr_mode = 1u << 2;   // set the permission bits (chmod)
inline constexpr std::uint32_t k_set_attr_uid = 1u << 3;    // set the owner (chown)
inline constexpr std::uint32_t k_set_attr_gid = 1u << 4;    // set the group (chown, chgrp)
inline constexpr std::uint32_t k_set_attr_atime = 1u << 5;  // set atime_ns (utimensat)
// The file was read at atime_ns (a close after reads): the server records it
// as the access time where relatime would (MetaService::note_access).
inline constexpr std::uint32_t k_set_attr_accessed = 1u << 6;
// The record of writes (a close): the size they reached and, with
// k_set_attr_mtime, the time of the last one, which becomes mtime and, where
// it is later, ctime (not the record's arrival: an attribute change made
// after the writes stays the latest change).
inline constexpr std::uint32_t k_set_attr_written = 1u << 7;
// The close of the sender's open SetAttr.open_id (Stat): the server lets the
// open go. When the file the open named is no longer at `path` (another
// client unlinked or renamed it), nothing else changes: an orphan with no
// open left is removed, and the reply is the orphan's inode (not_found when
// it is not an orphan).
inline constexpr std::uint32_t k_set_attr_close = 1u << 8;
inline constexpr std::uint32_t k_set_attr_known_mask = k_set_attr_size | k_set_attr_mtime | k_set_attr_mode |
                                                       k_set_attr_uid | k_set_attr_gid | k_set_attr_atime |
                                                       k_set_attr_accessed | k_set_attr_written | k_set_attr_close;

struct SetAttr {
  static constexpr MessageType k_type = MessageType::set_attr;
  static constexpr std::string_view k_name = "SetAttr";
  RequestId request_id = 0;
  std::string path;
  std::uint32_t mask = 0;
  std::uint64_t size_bytes = 0;
  std::int64_t mtime_ns = 0;
  std::uint32_t mode = 0;  // POSIX permission bits (07777)
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::int64_t atime_ns = 0;  // k_set_attr_atime, k_set_attr_accessed
  std::uint64_t open_id = 0;  // k_set_attr_close

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("path", path, k_max_path_bytes);
    f("mask", mask);
    f("size_bytes", size_bytes);
    f("mtime_ns", mtime_ns);
    f("mode", mode);
    f("uid", uid);
    f("gid", gid);
    f("atime_ns", atime_ns);
    f("open_id", open_id);
  }
  bool operator==(const SetAttr&) const = default;
};

struct InodeReply {
  static constexpr MessageType k_type = MessageType::inode_reply;
  static constexpr std::string_view k_name = "InodeReply";
  RequestId request_id = 0;
  StatusCode status = StatusCode::ok;
  std::string error;
  InodeDesc inode;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("status", status);
    f("error", error, k_max_error_bytes);
    f("inode", inode);
  }
  bool operator==(const InodeReply&) const = default;
};

struct ReaddirReply {
  static constexpr MessageType k_type = MessageType::readdir_reply;
  static constexpr std::string_view k_name = "ReaddirReply";
  RequestId request_id = 0;
  StatusCode status = StatusCode::ok;
  std::string error;
  std::vector<DirEntryDesc> entries;
  std::uint64_t next_cookie = 0;  // pass to the next Readdir
  bool eof = false;               // no entries after these
  // with_attrs: each entry's attributes, in the entries' order; else empty.
  std::vector<EntryAttrs> attrs;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("status", status);
    f("error", error, k_max_error_bytes);
    f("entries", entries, k_max_readdir_entries);
    f("next_cookie", next_cookie);
    f("eof", eof);
    f("attrs", attrs, k_max_readdir_entries);
  }
  bool operator==(const ReaddirReply&) const = default;
};

// Metadata server to metadata server: add the entry `name` -> `inode` to the
// directory `parent_path`, whose listing lives on the receiving shard while
// the inode was created on the sender's (BeeGFS and Lustre DNE keep an entry
// and its inode on different servers the same way). Reply: Ack.
struct LinkEntry {
  static constexpr MessageType k_type = MessageType::link_entry;
  static constexpr std::string_view k_name = "LinkEntry";
  RequestId request_id = 0;
  std::string parent_path;
  std::string name;
  InodeDesc inode;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("parent_path", parent_path, k_max_path_bytes);
    f("name", name, k_max_name_bytes);
    f("inode", inode);
  }
  bool operator==(const LinkEntry&) const = default;
};

// Metadata server to metadata server: remove the entry `name` from
// `parent_path` on the receiving shard. Reply: Ack.
struct UnlinkEntry {
  static constexpr MessageType k_type = MessageType::unlink_entry;
  static constexpr std::string_view k_name = "UnlinkEntry";
  RequestId request_id = 0;
  std::string parent_path;
  std::string name;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("parent_path", parent_path, k_max_path_bytes);
    f("name", name, k_max_name_bytes);
  }
  bool operator==(const UnlinkEntry&) const = default;
};

// Metadata server to metadata server: create the record of directory `path`
// (its inode) on the receiving shard, which will host part of its entries
// (a Lustre DNE striped directory has a stripe object on every MDT it spans).
// Reply: Ack.
struct AttachDir {
  static constexpr MessageType k_type = MessageType::attach_dir;
  static constexpr std::string_view k_name = "AttachDir";
  RequestId request_id = 0;
  std::string path;
  InodeDesc inode;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("path", path, k_max_path_bytes);
    f("inode", inode);
  }
  bool operator==(const AttachDir&) const = default;
};

// Metadata server to metadata server: remove the record of directory `path`
// from the receiving shard, refused with not_empty while it has entries there;
// check_only: only check, remove nothing (phase one of a two-phase rmdir).
// Reply: Ack.
struct DetachDir {
  static constexpr MessageType k_type = MessageType::detach_dir;
  static constexpr std::string_view k_name = "DetachDir";
  RequestId request_id = 0;
  std::string path;
  bool check_only = false;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("path", path, k_max_path_bytes);
    f("check_only", check_only);
  }
  bool operator==(const DetachDir&) const = default;
};

// Metadata server to metadata server: the times of directory `path`'s record
// on the receiving shard, which its entries' changes there move (a stat of a
// directory whose entries live on other shards gathers them, as Lustre's
// lmv_merge_attr merges a striped directory's stripes); with set_mtime, first
// sets the record's mtime to mtime_ns (a utimens of the directory, so that an
// older time is not outrun by the records). Reply: InodeReply (the record).
struct DirTimes {
  static constexpr MessageType k_type = MessageType::dir_times;
  static constexpr std::string_view k_name = "DirTimes";
  RequestId request_id = 0;
  std::string path;
  bool set_mtime = false;
  std::int64_t mtime_ns = 0;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("path", path, k_max_path_bytes);
    f("set_mtime", set_mtime);
    f("mtime_ns", mtime_ns);
  }
  bool operator==(const DirTimes&) const = default;
};

}  // namespace sluice::proto
