// The storage backend contract: one storage target as a directory of chunk
// files, read and written asynchronously on real hardware.
//
// A target holds one object per file id (the chunks of that file that the
// stripe pattern placed on this target, as BeeGFS's chunk files or a Lustre
// OST object): <directory>/<file id as 16 lower-case hex digits>. What to read
// and where is decided in core/ (layout, services); a backend only executes,
// like fio's engines (engines/*.c: one engine per file, registered by name).
//
// ---- Calls ------------------------------------------------------------------
// submit() never blocks on the device: it queues the request and returns. The
// request's buffer is owned by the caller and must stay valid and untouched
// until the completion with its cookie has been taken by poll(). Every
// accepted request completes exactly once. poll() never blocks; wait for
// completion_fd() to become readable (epoll/poll) to sleep until something is
// done. All calls are thread-safe. Destroying a backend drops requests that
// have not completed, without completions (drain with poll() first).
//
// ---- Semantics per op (the same as TestEnv's in-memory targets) --------------
//   read   object bytes [object_offset, +buffer.size()) -> buffer; past the
//          end only the bytes that exist (bytes says how many; a missing
//          object reads as empty). Buffer bytes past `bytes` are unspecified.
//   write  buffer -> object at object_offset, creating/growing the object.
//          sync: durable when it completes (fdatasync, or RWF_DSYNC, which
//          write(2) documents as the per-write equivalent), and a newly
//          created object's directory entry is synced too.
//   remove deletes the object; ok when it does not exist.
//   stat   bytes = the object's size (0 when it does not exist).
//   allocate  reserves [object_offset, +length) on the file system, creating
//          the object; its bytes and size are unchanged (fallocate(2)
//          FALLOC_FL_KEEP_SIZE). A file system that cannot reserve
//          (EOPNOTSUPP) completes it ok without reserving, logged once and
//          counted (StorageStats::allocate_unsupported).
//   punch  [object_offset, +length) reads as zeros after, its space freed
//          where the file system can (FALLOC_FL_PUNCH_HOLE | KEEP_SIZE;
//          where it cannot, zeros are written over the range, logged once
//          and counted: StorageStats::punch_by_writing_zeros); the size is
//          unchanged and a missing object stays missing.
// With checksum on, read and write completions carry the CRC32C of the bytes
// moved (core/proto/crc32c.hpp), so callers can verify end to end.
//
// ---- Direct I/O ----------------------------------------------------------------
// DirectIoMode follows KvikIO's CompatMode (ON/OFF/AUTO): on = O_DIRECT or
// fail; off = buffered; auto = O_DIRECT where the file system allows it and
// the request is aligned (buffer address, offset and length multiples of
// k_direct_io_alignment_bytes), buffered otherwise. The path taken is visible:
// io_path() says what the target does and why, stats() counts requests per
// path, each completion says whether it went direct, and a fallback is logged
// once through the config's log sink.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/ids.hpp"
#include "core/common/status.hpp"
#include "core/env.hpp"

namespace sluice::hw {

// O_DIRECT alignment of buffer address, file offset and length. 4 KiB is the
// largest logical block size of NVMe namespaces and of the file systems in
// use, so it satisfies every device (open(2), "O_DIRECT": alignment to the
// logical block size; statx STATX_DIOALIGN reports it per file on Linux >= 6.1).
inline constexpr std::size_t k_direct_io_alignment_bytes = 4096;
// Operations in flight per target: NVMe allows 64 Ki per queue; sluice's
// scenarios use 1..256, fio's io_uring engine examples use 1..128.
inline constexpr std::uint32_t k_max_queue_depth = 4096;
// Buffers one target may register (io_uring_register_buffers takes at most UIO_MAXIOV = 1024).
inline constexpr std::size_t k_max_registered_buffers = 1024;
// Open object files kept per target (two descriptors each at most: direct and buffered).
inline constexpr std::uint32_t k_max_open_objects = 4096;
// One request's buffer (Linux caps one read/write at 0x7ffff000 bytes).
inline constexpr std::uint64_t k_max_storage_request_bytes = 1ULL << 30;

enum class DirectIoMode : std::uint8_t { off = 0, on = 1, auto_ = 2 };
std::string_view to_string(DirectIoMode mode);

struct StorageTargetConfig {
  std::string directory;           // created (one level) when missing
  std::uint32_t queue_depth = 16;  // requests accepted and not yet polled; 1..k_max_queue_depth
  DirectIoMode direct_io = DirectIoMode::auto_;
  bool checksum = true;                  // completions carry CRC32C of the bytes moved
  std::uint32_t max_open_objects = 256;  // 1..k_max_open_objects, least recently used closed first
  // Where the backend reports what it did on its own (the fallback taken).
  // Called from any thread inside a backend call; may be empty.
  std::function<void(std::string_view)> log;
  // Fault injection (RocksDB FaultInjectionTestFS style): behave as if the
  // file system refused O_DIRECT. For tests of the fallback path.
  bool inject_direct_io_refusal = false;
};

struct StorageRequest {
  StorageOp op = StorageOp::read;
  FileId file_id = 0;
  std::uint64_t object_offset = 0;
  std::span<std::byte> buffer;  // read: destination; write: source; unused by remove/stat
  bool sync = false;            // write: durable at completion
  std::uint64_t cookie = 0;     // returned unchanged
  // write: the CRC32C the buffer must have (what the storage server checked
  // against the client's); a buffer that differs is refused with corrupt
  // before anything is written (chunk_files.hpp, "CRC32C at rest").
  std::optional<std::uint32_t> expected_crc32c = std::nullopt;
  std::uint64_t length = 0;  // allocate, punch: the range's length (no buffer)
};

struct StorageCompletion {
  std::uint64_t cookie = 0;
  Status status;             // io_error / no_space naming the object path on failure
  std::uint64_t bytes = 0;   // see the op semantics above
  std::uint32_t crc32c = 0;  // of the bytes read or written, when crc_valid
  bool crc_valid = false;
  bool direct = false;  // served with O_DIRECT
};

struct StorageStats {
  std::uint64_t direct_ops = 0;     // reads/writes served with O_DIRECT
  std::uint64_t buffered_ops = 0;   // reads/writes served through the page cache
  std::uint64_t unaligned_ops = 0;  // of the buffered ones, those sent there because they were unaligned
  std::uint64_t sync_writes = 0;
  std::uint64_t errors = 0;
  std::uint64_t allocate_unsupported = 0;    // allocates completed without a reservation (EOPNOTSUPP)
  std::uint64_t punch_by_writing_zeros = 0;  // punches done by writing zeros (no hole punching there)
};

struct StorageCapabilities {
  bool direct_io = false;           // can use O_DIRECT (when the file system allows)
  bool registered_buffers = false;  // register_buffers() pins buffers for the device (io_uring fixed buffers)
  std::uint32_t max_queue_depth = 0;
};

class StorageBackend {
 public:
  virtual ~StorageBackend() = default;
  StorageBackend() = default;
  StorageBackend(const StorageBackend&) = delete;
  StorageBackend& operator=(const StorageBackend&) = delete;

  virtual std::string_view name() const = 0;
  virtual const StorageCapabilities& capabilities() const = 0;
  // What this target does and why: "O_DIRECT (auto)", "buffered (O_DIRECT
  // refused by the file system at /x: Invalid argument (EINVAL))", "buffered (direct_io=off)".
  virtual std::string io_path() const = 0;
  virtual StorageStats stats() const = 0;

  // Registers buffers the caller will use for I/O (it keeps them valid until
  // the backend is destroyed). Requests whose buffer lies inside one go
  // through the registered path where the backend has one; registering is a
  // no-op where it has none. invalid_argument: more than
  // k_max_registered_buffers, or an empty buffer.
  virtual Status register_buffers(std::span<const std::span<std::byte>> buffers) = 0;

  // Queues a request. Immediate errors: again (queue_depth requests
  // accepted whose completions poll() has not returned yet),
  // invalid_argument (buffer over k_max_storage_request_bytes, an offset
  // that overflows, or with direct_io=on an unaligned request).
  [[nodiscard]] virtual Status submit(const StorageRequest& request) = 0;

  // Appends up to max_completions completions to `out`; returns how many.
  virtual std::size_t poll(std::vector<StorageCompletion>& out, std::size_t max_completions) = 0;

  // Readable while completions may be waiting; poll() resets it. Spurious
  // wake-ups are possible, missed ones are not.
  virtual int completion_fd() const = 0;
};

// ---- Registry ----------------------------------------------------------------------
// Each backend registers itself from its own folder; programs link them
// through the sluice_storage_backends CMake target (whole-archive). The
// registry is base/registry.hpp's (shared with the transports): probes and
// every function of an entry run outside its lock.

struct StorageBackendEntry {
  std::string name;
  std::function<Status()> probe;  // ok, or unavailable with the reason
  std::function<StorageCapabilities()> capabilities;
  std::function<Result<std::unique_ptr<StorageBackend>>(const StorageTargetConfig&)> create;
};

// Adds an entry; returns true so that it can initialise a static. A second
// entry with the same name is a bug: the process aborts with the registry's
// message naming it (SLUICE_ASSERT, in every build type).
bool register_storage_backend(StorageBackendEntry entry);

struct StorageBackendListing {
  std::string name;
  bool available = false;
  std::string why_unavailable;
  StorageCapabilities capabilities;
};

// Every registered backend, sorted by name.
std::vector<StorageBackendListing> list_storage_backends();

// not_found: no such name (the message lists the names); unavailable: the
// probe failed (the message says why); else whatever the backend's open says.
Result<std::unique_ptr<StorageBackend>> create_storage_backend(std::string_view name,
                                                               const StorageTargetConfig& config);

}  // namespace sluice::hw
