// The FUSE mount of sluice (`sluice mount`): the kernel's VFS requests, read
// from /dev/fuse by libfuse3's low-level multi-threaded session, served
// through sluice's Client on its event-loop thread.
//
// Threads: libfuse's workers take requests and hand each to the client's
// loop (ClientPort::post); the Client's completion replies to the kernel from
// the loop thread (fuse_reply_* may come from any thread), so a worker is
// never held while the cluster answers and many requests are in flight.
//
// Kernel cache policy (docs/mount.md):
// - entries and attributes are cached for entry_timeout_s / attr_timeout_s
//   (default 1 s): a name or size another client changes is seen within that;
// - page cache: every open drops the file's cached pages (keep_cache off), so
//   a file is close-to-open consistent with other clients, the metadata
//   server's promise (a size is recorded at close); direct_io bypasses it;
// - this mount's own writes are seen at once by its getattr and reads (the
//   size they reached is kept until their close is recorded).
//
// Not supported, with the errno the caller gets: hard links across metadata
// shards (EXDEV), extended attributes
// (EOPNOTSUPP), fallocate (EOPNOTSUPP), rename of directories and across
// metadata shards (EXDEV: mv copies instead), RENAME_EXCHANGE (EINVAL),
// access times (atime reads as mtime; setting it is accepted and not kept).
// Locks are the kernel's, local to this mount.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "core/env.hpp"
#include "core/services/client.hpp"

namespace sluice::mount {

// Largest read or write the kernel hands the mount in one request (the
// FUSE max_pages limit, 256 pages), and its read-ahead window.
inline constexpr std::uint32_t k_max_fuse_io_bytes = 1 << 20;
// Worker threads taking requests from /dev/fuse.
inline constexpr std::uint32_t k_default_fuse_threads = 16;
// How long an unmount waits for requests still in flight in the cluster.
inline constexpr std::uint32_t k_unmount_drain_ms = 60'000;

// How the FUSE threads reach the Client. Both functions are called on any
// thread except that resolve is called only inside a posted function.
struct ClientPort {
  // Runs fn on the client's event-loop thread, later (never inline).
  std::function<void(std::function<void(Client&, Env&)>)> post;
  // The bytes of host memory the client's Env gave out.
  std::function<Result<std::span<std::byte>>(const MemHandle&)> resolve;
};

struct MountOptions {
  std::string mount_point;
  double entry_timeout_s = 1.0;
  double attr_timeout_s = 1.0;
  bool direct_io = false;    // bypass the page cache (every read and write reaches the cluster)
  bool sync_writes = false;  // every write durable on the storage server before it returns
  std::uint32_t threads = k_default_fuse_threads;
  std::string fs_name = "sluice";
};

Status validate(const MountOptions& options);

// Mounts at options.mount_point and serves until the mount is unmounted
// (`sluice umount`, umount(8)) or SIGINT/SIGTERM/SIGHUP arrive; then
// unmounts, waits (bounded) for requests still in flight and returns.
// on_mounted runs once the mount is live. unavailable when the mount cannot
// be made (no /dev/fuse, not a directory, no permission), naming why.
Status serve_mount(const MountOptions& options, const ClientPort& port, const std::function<void()>& on_mounted);

// The errno a file-system call answers for a Status (EIO for failures of the
// cluster: timed out, unavailable, corrupt, I/O).
int errno_of(const Status& status);

}  // namespace sluice::mount
