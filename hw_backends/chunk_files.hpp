// The chunk files of one storage target: naming, the O_DIRECT probe and
// decision, and a bounded cache of open descriptors. Shared by the posix and
// uring backends so that both lay out a target identically (a target written
// by one can be read by the other).
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>

#include "hw_backends/storage_backend.hpp"

namespace sluice::hw {

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
  // Deletes the object (ok when missing) and forgets its descriptors.
  Status remove(FileId id);
  // The object's size; 0 when missing.
  Result<std::uint64_t> size(FileId id);
  // fsync of the target directory, after a sync write created an object.
  Status sync_directory();
  // "posix target /dir: <what> object 00000000000000ff: <errno text>" as a Status,
  // no_space for ENOSPC/EDQUOT, io_error otherwise.
  Status errno_status(std::string_view what, FileId id, int err) const;

 private:
  ChunkFiles(StorageTargetConfig config, std::string backend) : config_(std::move(config)), backend_(std::move(backend)) {}
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
};

}  // namespace sluice::hw
