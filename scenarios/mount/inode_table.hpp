// InodeTable: the names the kernel holds for a FUSE mount of sluice. The
// kernel speaks in inode numbers (fuse_ino_t) and sluice's Client in paths,
// so the mount keeps, for every inode the kernel has looked up and not yet
// forgotten, its path and its lookup count (the FUSE protocol: each
// successful lookup/create/mkdir adds one, FORGET takes n away, the number is
// free again at zero). Inode 1 is the root and is never forgotten. A file
// with hard links made through this mount is one inode with several names
// (the kernel then sees one inode, its link count and attributes shared);
// any of its names reaches it at the metadata server.
//
// It also keeps what this mount knows of open files before the metadata
// server does: the size their writes reached (recorded at flush/release as a
// close of the file), so that getattr and read through this mount see a
// file's own writes at once (close-to-open toward other clients).
//
// Thread-safe: FUSE worker threads and the client's event loop share it.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/common/status.hpp"
#include "core/proto/wire_descs.hpp"

namespace sluice::mount {

using Ino = std::uint64_t;
inline constexpr Ino k_root_ino = 1;  // FUSE_ROOT_ID
// Inodes the kernel may hold at once before lookups fail with ENFILE
// (the kernel forgets under memory pressure; this bounds the table).
inline constexpr std::uint64_t k_max_mount_inodes = 4'000'000;

// "/" + name, or parent + "/" + name.
std::string child_path(const std::string& parent, const std::string& name);

struct OpenFile {
  proto::InodeDesc inode;          // as the metadata server last said, with stripe
  std::uint64_t size = 0;          // the size this mount knows (its writes included)
  std::uint32_t opens = 0;         // open handles
  bool dirty = false;              // written since the last close reached the server
  bool read = false;               // read through a handle (its last release notes the access)
  bool orphaned = false;           // its last name went while open: the metadata server keeps it until released
  std::int64_t last_write_ns = 0;  // wall clock of the last write through this mount
  bool mtime_set = false;          // a utimens since the last write: the close leaves mtime as set
  // The open the metadata server holds for this mount (Client::open; one per
  // inode, made by its first handle and closed by its last), 0: none.
  std::uint64_t open_id = 0;
};

class InodeTable {
 public:
  InodeTable();

  // The inode of path, with its lookup count raised by one (a new number
  // when the path has none); unavailable past k_max_mount_inodes.
  Result<Ino> remember(const std::string& path);
  // One of the inode's names (the oldest still bound).
  std::optional<std::string> path_of(Ino ino) const;
  // A hard link: the inode `ino` has the name `path` too, its lookup count
  // raised by one (the kernel gets an entry); not_found when ino is unknown.
  Result<Ino> link(Ino ino, const std::string& path);
  // FORGET: the lookup count drops by n; at zero the number is released.
  void forget(Ino ino, std::uint64_t n);
  // The name at path is gone (unlink, rmdir): its inode keeps its number
  // until forgotten but no longer answers for the path (its other names do).
  void unbind(const std::string& path);
  // rename(from, to): the inode at from (and every inode under it) now
  // answers for the new path; one that was at `to` is unbound.
  void rename(const std::string& from, const std::string& to);
  std::size_t size() const;

  // Open-file state, keyed by inode. open_id: the open the server holds for
  // this handle (0: none was asked). False when the inode was open already
  // under an open of its own: that stays, and the caller lets open_id go.
  bool opened(Ino ino, const proto::InodeDesc& inode, std::uint64_t open_id);
  // The release of the inode's last handle is under way: its open, which
  // that release closes at the server, is taken (0 when other handles
  // remain), so a handle opened meanwhile asks the server for a new one.
  std::uint64_t take_open_if_last(Ino ino);
  // The state after a write of [offset, offset + bytes) at wall-clock `now_ns`.
  void wrote(Ino ino, std::uint64_t offset, std::uint64_t bytes, std::int64_t now_ns);
  // A utimens of the file's mtime (after its writes: the close keeps it).
  void mtime_set(Ino ino);
  // A read through one of its handles.
  void was_read(Ino ino);
  // A truncate to size through this mount.
  void resized(Ino ino, std::uint64_t size);
  // The file was made anew at its path (a truncate to zero): open handles
  // now read and write the new inode, which the server holds under open_id;
  // the open of the old one is returned (the caller lets it go; 0: none).
  std::uint64_t replaced(Ino ino, const proto::InodeDesc& inode, std::uint64_t open_id);
  std::optional<OpenFile> open_file(Ino ino) const;
  // The close reached the server: dirty is cleared unless written since
  // (`size` is the size that was recorded).
  void recorded(Ino ino, std::uint64_t size);
  // One handle closed; the state goes with the last (returned then).
  std::optional<OpenFile> released(Ino ino);
  // The inode of the open file the name `path` is bound to, if one is open.
  std::optional<proto::InodeDesc> open_inode_at(const std::string& path) const;
  // The open file at `path` lost its last name (Client::unlink keep_open):
  // its last release releases the orphan. False when it is no longer open.
  bool orphan_at(const std::string& path);

 private:
  struct Node {
    std::vector<std::string> paths;  // its names, oldest first; none: unbound (unlinked, or replaced by a rename)
    std::uint64_t lookups = 0;
  };
  // Removes the name `path` from whichever inode has it (mu_ held).
  void unbind_locked(const std::string& path);
  mutable std::mutex mu_;
  Ino next_ino_ = k_root_ino + 1;
  std::map<Ino, Node> nodes_;
  std::map<std::string, Ino, std::less<>> by_path_;
  std::map<Ino, OpenFile> open_;
};

}  // namespace sluice::mount
