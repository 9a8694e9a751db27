// The chunk files of one storage target: naming, the O_DIRECT probe and
// decision, and a bounded cache of open descriptors. Shared by the posix and
// uring backends so that both lay out a target identically (a target written
// by one can be read by the other).
#pragma once

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hw_backends/storage_backend.hpp"

namespace sluice::hw {

// ---- CRC32C at rest ------------------------------------------------------------
// With StorageTargetConfig::checksum (the default) every object has a
// sidecar "<object>.crc" that holds, per k_crc_block_bytes block of the
// object, the CRC32C of the block's bytes as written and how many bytes it
// covers (a short last block): k_crc_entry_bytes per block, little-endian
// {crc, covered}; covered 0 is a block never written (a hole), which is not
// checked. A write records the CRCs of the blocks it touched once its bytes
// are in the object (a block it covers partly is read back whole); a read
// checks every block it returns before it completes, and fails with
// `corrupt` naming the object and block if one differs: bytes that changed
// at rest (a drive that lies, a flipped bit) are reported, never served.
// A write may also carry the CRC32C its bytes must have (StorageRequest::
// expected_crc32c, what the storage server verified): a buffer that no
// longer matches is refused with `corrupt` before anything is written.
// Updates are serialized per target; a block a write is changing right now
// is not checked by a read that overlaps it (its bytes are in flux), and is
// counted (ChunkFiles::blocks_skipped_racing_write).
//
// Crashes. Before a write's bytes go to the object, begin_write marks its
// blocks' records "unknown" (covered = k_crc_unknown_covered); the CRCs
// replace the marks once the bytes are in (a block another write still
// changes keeps its mark until the last of them ends). A process killed
// between the two, or a write that failed half-way, leaves marks, never a
// stale CRC: the next read of a marked block that no write is changing takes
// the block as it finds it (the unfinished write was never acknowledged, so
// its bytes may be old, new or mixed), records its CRC and counts it
// (blocks_recovered), logging the first k_max_recovery_logs. The bytes of
// acknowledged writes sharing such a block are untouched by the recovery, and
// every other block stays checked. Across a crash of the process this needs
// no flush (the kernel keeps both files' pages); across power loss the mark
// is not flushed before the bytes, so a block an unacknowledged sync write was
// changing may read as corrupt (tests/durability kill -9 shows the first,
// nothing here can cut power).
inline constexpr std::uint64_t k_crc_block_bytes = 4096;  // the O_DIRECT unit: aligned I/O reads no block back
inline constexpr std::uint64_t k_crc_entry_bytes = 8;
inline constexpr std::uint32_t k_crc_unknown_covered = 0xFFFF'FFFF;  // never a real count (at most 4096)
inline constexpr std::uint64_t k_max_recovery_logs = 16;             // per target; the count goes on
// A punch's reads of its range (the CRCs) and, where the file system cannot
// punch holes, its writes of zeros go in pieces of this size.
inline constexpr std::uint64_t k_punch_zero_piece_bytes = 1ULL << 20;

// An open object file; closed when the last user lets go (the cache may drop
// it while an operation still uses it).
class ObjectFile {
 public:
  explicit ObjectFile(int fd) : fd_(fd) {}
  ~ObjectFile();
  ObjectFile(const ObjectFile&) = delete;
  ObjectFile& operator=(const ObjectFile&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

struct OpenedObject {
  std::shared_ptr<ObjectFile> file;
  bool created = false;  // this call created the object (its directory entry is new)
};

class ChunkFiles {
 public:
  // Checks the config, creates the directory when missing and probes
  // O_DIRECT there. `backend` names the backend in messages ("posix").
  static Result<std::unique_ptr<ChunkFiles>> open(const StorageTargetConfig& config, std::string_view backend);

  const StorageTargetConfig& config() const { return config_; }
  // <directory>/<16 hex digits>
  std::string object_path(FileId id) const;
  // Whether aligned requests go O_DIRECT on this target.
  bool direct_enabled() const { return direct_enabled_; }
  const std::string& io_path() const { return io_path_; }

  // The path for one read/write: true = O_DIRECT. invalid_argument when
  // direct_io=on and the request is unaligned (the message names the rule).
  Result<bool> choose_direct(std::span<const std::byte> buffer, std::uint64_t offset) const;
  // The checks every backend makes before queueing: buffer size within
  // k_max_storage_request_bytes and object_offset + size not overflowing.
  Status check_request(const StorageRequest& request) const;
  // Whether a range meets k_direct_io_alignment_bytes.
  static bool aligned(std::span<const std::byte> buffer, std::uint64_t offset);

  // An open descriptor (read-write). not_found when the object is missing
  // and create is false.
  Result<OpenedObject> open_object(FileId id, bool direct, bool create);
  // Deletes the object and its CRC sidecar (ok when missing) and forgets its descriptors.
  Status remove(FileId id);

  // CRC32C at rest (see the top). No-ops without config().checksum.
  // A write of [offset, +length) is about to start: its blocks are marked
  // unknown in the sidecar (an error when the mark cannot be written: the
  // write must not start). end_write: it has ended without recording (a
  // failure; the marks stay). record_block_crcs ends it too.
  Status begin_write(FileId id, std::uint64_t offset, std::uint64_t length);
  void end_write(FileId id, std::uint64_t offset, std::uint64_t length);
  // After a successful write of `written` at `offset`: records the CRC of
  // every block it touched, then ends the write. sync: the sidecar is made
  // durable too.
  // whole_crc (may be null): set to the CRC32C of all of `written`, derived
  // from the block CRCs (proto::Crc32cShift) so the bytes are read once.
  Status record_block_crcs(FileId id, std::uint64_t offset, std::span<const std::byte> written, bool sync,
                           std::optional<std::uint32_t>* whole_crc = nullptr);
  // After a read of `read` at `offset`: corrupt if a block differs from its
  // record. whole_crc as above, for `read`, when ok.
  Status check_block_crcs(FileId id, std::uint64_t offset, std::span<const std::byte> read,
                          std::optional<std::uint32_t>* whole_crc = nullptr);
  // corrupt when a write's buffer does not have the CRC32C it must have.
  Status check_expected_crc(const StorageRequest& request) const;
  std::uint64_t blocks_skipped_racing_write() const;
  // Blocks whose CRC a read recomputed because a write to them never finished (see the top).
  std::uint64_t blocks_recovered() const;
  std::string crc_path(FileId id) const;
  // The object's size; 0 when missing.
  Result<std::uint64_t> size(FileId id);
  // The ops that move no buffer (remove, stat, flush, allocate, punch: see
  // storage_backend.hpp), on the caller's thread; their result into c.
  void run_metadata_op(const StorageRequest& request, StorageCompletion& c);
  // What allocate and punch fell back on (StorageStats).
  std::uint64_t allocate_unsupported() const { return allocate_unsupported_; }
  std::uint64_t punch_by_writing_zeros() const { return punch_by_writing_zeros_; }
  // fsync of the target directory, after a sync write created an object.
  Status sync_directory();
  // StorageOp::flush (elbencho's --sync --dropcache between phases): syncfs
  // of the target's file system, then posix_fadvise(POSIX_FADV_DONTNEED) on
  // every file of the directory, which drops their clean cached pages (only
  // this target's: the rest of the host's page cache stays, unlike
  // drop_caches, which needs root).
  Status flush_and_drop();
  // "posix target /dir: <what> object 00000000000000ff: <errno text>" as a Status,
  // no_space for ENOSPC/EDQUOT, io_error otherwise.
  Status errno_status(std::string_view what, FileId id, int err) const;

 private:
  ChunkFiles(StorageTargetConfig config, std::string backend)
      : config_(std::move(config)), backend_(std::move(backend)) {}
  Status probe_direct();

  struct Cached {
    std::shared_ptr<ObjectFile> direct;
    std::shared_ptr<ObjectFile> buffered;
    std::list<FileId>::iterator lru;
  };

  StorageTargetConfig config_;
  std::string backend_;
  bool direct_enabled_ = false;
  std::string io_path_;
  std::mutex mu_;
  std::unordered_map<FileId, Cached> cache_;
  std::list<FileId> lru_;  // front = most recently used
  // CRC32C at rest: one update or check at a time per target; the writes in
  // flight per object (ranges), whose blocks a read does not check.
  mutable std::mutex crc_mu_;
  std::unordered_map<FileId, std::vector<std::pair<std::uint64_t, std::uint64_t>>> writing_;
  std::uint64_t skipped_racing_ = 0;
  std::uint64_t recovered_ = 0;
  std::atomic<std::uint64_t> allocate_unsupported_{0};
  std::atomic<std::uint64_t> punch_by_writing_zeros_{0};
  Status allocate(FileId id, std::uint64_t offset, std::uint64_t length);
  Status punch(FileId id, std::uint64_t offset, std::uint64_t length);
  // After [begin, end) of the object changed outside a write (a punch): the
  // CRCs of its blocks from what the object holds now.
  Status record_range_crcs(FileId id, std::uint64_t begin, std::uint64_t end);
  // Reads the bytes of block `block` of the object (buffered) into `out`; their count.
  Result<std::size_t> read_block(FileId id, std::uint64_t block, std::span<std::byte> out);
  bool racing_write(FileId id, std::uint64_t begin, std::uint64_t end) const;  // crc_mu_ held
  void forget_write(FileId id, std::uint64_t offset, std::uint64_t length);    // crc_mu_ held
  // Writes `entries` (k_crc_entry_bytes each) to the sidecar from block `first` on (crc_mu_ held).
  Status write_crc_entries(FileId id, std::uint64_t first, std::span<const std::byte> entries, bool sync);
  // A marked block no write is changing: its CRC taken from the bytes found, recorded (crc_mu_ held).
  Status recover_block(FileId id, std::uint64_t b, std::vector<std::byte>& block);
  // The steps of check_block_crcs (crc_mu_ held). Reads the sidecar's records from block `first` on into
  // `entries`, cut to the bytes recorded; false when the object has no sidecar.
  Result<bool> read_crc_entries(FileId id, std::uint64_t first, std::vector<std::byte>& entries);
  // The CRC32C of the first `covered` bytes of block b as the object holds them; corrupt when it holds fewer.
  Result<std::uint32_t> reread_block_crc(FileId id, std::uint64_t b, std::uint32_t covered,
                                         std::vector<std::byte>& block);
  // The corrupt error of block b, whose `covered` bytes have CRC `crc` instead of `stored`.
  Status block_changed(FileId id, std::uint64_t b, std::uint32_t covered, std::uint32_t crc,
                       std::uint32_t stored) const;
};

}  // namespace sluice::hw
