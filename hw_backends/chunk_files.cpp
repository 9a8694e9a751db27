#include "hw_backends/chunk_files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/common/assert.hpp"
#include "core/proto/crc32c.hpp"

namespace sluice::hw {
namespace {

std::string errno_text(int err) {
  const char* name = strerrorname_np(err);
  return std::string(std::strerror(err)) + " (" + (name != nullptr ? name : std::to_string(err)) + ")";
}

constexpr char k_probe_name[] = ".sluice_direct_io_probe";

}  // namespace

ObjectFile::~ObjectFile() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::unique_ptr<ChunkFiles>> ChunkFiles::open(const StorageTargetConfig& config, std::string_view backend) {
  const std::string where = std::string(backend) + " target " + config.directory;
  if (config.directory.empty()) {
    return error(StatusCode::invalid_argument, std::string(backend) + " target: empty directory");
  }
  if (config.queue_depth == 0 || config.queue_depth > k_max_queue_depth) {
    return error(StatusCode::invalid_argument, where + ": queue_depth " + std::to_string(config.queue_depth) +
                                                   " outside 1..k_max_queue_depth " +
                                                   std::to_string(k_max_queue_depth));
  }
  if (config.max_open_objects == 0 || config.max_open_objects > k_max_open_objects) {
    return error(StatusCode::invalid_argument, where + ": max_open_objects " + std::to_string(config.max_open_objects) +
                                                   " outside 1..k_max_open_objects " +
                                                   std::to_string(k_max_open_objects));
  }
  if (::mkdir(config.directory.c_str(), 0755) != 0 && errno != EEXIST) {
    return error(StatusCode::unavailable, where + ": mkdir: " + errno_text(errno));
  }
  struct stat st {};
  if (::stat(config.directory.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return error(StatusCode::unavailable, where + ": not a directory");
  }
  std::unique_ptr<ChunkFiles> files(new ChunkFiles(config, std::string(backend)));
  Status probed = files->probe_direct();
  if (!probed.ok()) return probed;
  return files;
}

Status ChunkFiles::probe_direct() {
  const std::string where = backend_ + " target " + config_.directory;
  if (config_.direct_io == DirectIoMode::off) {
    io_path_ = "buffered (direct_io=off)";
    return ok_status();
  }
  int refused = 0;
  if (config_.inject_direct_io_refusal) {
    refused = EINVAL;
  } else {
    const std::string probe = config_.directory + "/" + k_probe_name;
    const int fd = ::open(probe.c_str(), O_CREAT | O_RDWR | O_DIRECT | O_CLOEXEC, 0644);
    if (fd < 0) {
      refused = errno;
    } else {
      ::close(fd);
      ::unlink(probe.c_str());
    }
  }
  if (refused == 0) {
    direct_enabled_ = true;
    io_path_ = "O_DIRECT (" + std::string(to_string(config_.direct_io)) + "; unaligned requests buffered)";
    if (config_.direct_io == DirectIoMode::on) io_path_ = "O_DIRECT (on; unaligned requests refused)";
    return ok_status();
  }
  const std::string why = "O_DIRECT refused by the file system at " + config_.directory + ": " + errno_text(refused) +
                          (config_.inject_direct_io_refusal ? " [injected]" : "");
  if (config_.direct_io == DirectIoMode::on) return error(StatusCode::unavailable, where + ": " + why);
  io_path_ = "buffered (" + why + ")";
  if (config_.log) config_.log(where + ": falling back to buffered I/O: " + why);
  return ok_status();
}

std::string ChunkFiles::object_path(FileId id) const {
  char name[17];
  std::snprintf(name, sizeof name, "%016llx", static_cast<unsigned long long>(id));
  return config_.directory + "/" + name;
}

bool ChunkFiles::aligned(std::span<const std::byte> buffer, std::uint64_t offset) {
  const auto address = reinterpret_cast<std::uintptr_t>(buffer.data());
  return address % k_direct_io_alignment_bytes == 0 && offset % k_direct_io_alignment_bytes == 0 &&
         buffer.size() % k_direct_io_alignment_bytes == 0;
}

Result<bool> ChunkFiles::choose_direct(std::span<const std::byte> buffer, std::uint64_t offset) const {
  if (!direct_enabled_) return false;
  if (aligned(buffer, offset)) return true;
  if (config_.direct_io == DirectIoMode::on) {
    return error(StatusCode::invalid_argument,
                 backend_ + " target " + config_.directory + ": direct_io=on needs buffer address, offset (" +
                     std::to_string(offset) + ") and length (" + std::to_string(buffer.size()) +
                     ") aligned to k_direct_io_alignment_bytes " + std::to_string(k_direct_io_alignment_bytes));
  }
  return false;
}

Status ChunkFiles::check_request(const StorageRequest& request) const {
  if (request.op == StorageOp::allocate || request.op == StorageOp::punch) {
    if (request.object_offset > static_cast<std::uint64_t>(INT64_MAX) ||
        request.length > static_cast<std::uint64_t>(INT64_MAX) - request.object_offset) {
      return error(StatusCode::invalid_argument,
                   backend_ + " target " + config_.directory + ": " + std::string(to_string(request.op)) + " of " +
                       std::to_string(request.length) + " bytes at " + std::to_string(request.object_offset) +
                       " runs past the largest file offset");
    }
    return ok_status();
  }
  const bool moves_bytes = request.op == StorageOp::read || request.op == StorageOp::write;
  if (!moves_bytes) return ok_status();
  if (request.buffer.size() > k_max_storage_request_bytes) {
    return error(StatusCode::invalid_argument,
                 backend_ + " target " + config_.directory + ": " + std::string(to_string(request.op)) + " of " +
                     std::to_string(request.buffer.size()) + " bytes over k_max_storage_request_bytes " +
                     std::to_string(k_max_storage_request_bytes));
  }
  if (request.object_offset > ~std::uint64_t{0} - request.buffer.size() ||
      request.object_offset + request.buffer.size() > static_cast<std::uint64_t>(INT64_MAX)) {
    return error(StatusCode::invalid_argument, backend_ + " target " + config_.directory + ": offset " +
                                                   std::to_string(request.object_offset) +
                                                   " + length runs past the largest file offset");
  }
  return ok_status();
}

Status ChunkFiles::errno_status(std::string_view what, FileId id, int err) const {
  const StatusCode code = err == ENOSPC || err == EDQUOT ? StatusCode::no_space : StatusCode::io_error;
  return error(code, backend_ + " target " + config_.directory + ": " + std::string(what) + " object " +
                         object_path(id).substr(config_.directory.size() + 1) + ": " + errno_text(err));
}

Result<OpenedObject> ChunkFiles::open_object(FileId id, bool direct, bool create) {
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(id);
    if (it != cache_.end()) {
      auto& slot = direct ? it->second.direct : it->second.buffered;
      if (slot) {
        lru_.splice(lru_.begin(), lru_, it->second.lru);
        return OpenedObject{slot, false};
      }
    }
  }
  // Open outside the lock: open() may wait on the file system.
  const std::string path = object_path(id);
  const int flags = O_RDWR | O_CLOEXEC | (direct ? O_DIRECT : 0);
  bool created = false;
  int fd = ::open(path.c_str(), flags);
  if (fd < 0 && errno == ENOENT && create) {
    fd = ::open(path.c_str(), flags | O_CREAT | O_EXCL, 0644);
    created = fd >= 0;
    if (fd < 0 && errno == EEXIST) fd = ::open(path.c_str(), flags);
  }
  if (fd < 0) {
    if (errno == ENOENT) return error(StatusCode::not_found, "no object " + path);
    return errno_status("open", id, errno);
  }
  auto file = std::make_shared<ObjectFile>(fd);
  std::lock_guard lock(mu_);
  auto [it, inserted] = cache_.try_emplace(id);
  if (inserted) {
    lru_.push_front(id);
    it->second.lru = lru_.begin();
  } else {
    lru_.splice(lru_.begin(), lru_, it->second.lru);
  }
  auto& slot = direct ? it->second.direct : it->second.buffered;
  if (slot) return OpenedObject{slot, created};  // another thread opened it meanwhile
  slot = file;
  while (cache_.size() > config_.max_open_objects) {
    cache_.erase(lru_.back());
    lru_.pop_back();
  }
  return OpenedObject{file, created};
}

Status ChunkFiles::remove(FileId id) {
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(id);
    if (it != cache_.end()) {
      lru_.erase(it->second.lru);
      cache_.erase(it);
    }
  }
  // The sidecar first: a crash between the two leaves an object read unchecked, never
  // checksums a later object of this id would be checked against.
  if (::unlink(crc_path(id).c_str()) != 0 && errno != ENOENT)
    return errno_status("remove the CRC sidecar of", id, errno);
  if (::unlink(object_path(id).c_str()) != 0 && errno != ENOENT) return errno_status("remove", id, errno);
  return ok_status();
}

// ---- CRC32C at rest ---------------------------------------------------------------

namespace {

void put_u32(std::byte* at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) at[i] = static_cast<std::byte>((v >> (8 * i)) & 0xFF);
}
std::uint32_t get_u32(const std::byte* at) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= std::uint32_t{std::to_integer<std::uint8_t>(at[i])} << (8 * i);
  return v;
}

// pread/pwrite of a whole range (short transfers continued); bytes done, or -errno.
ssize_t full_io(bool write, int fd, std::byte* data, std::size_t size, std::uint64_t offset) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = write ? ::pwrite(fd, data + done, size - done, static_cast<off_t>(offset + done))
                            : ::pread(fd, data + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  return static_cast<ssize_t>(done);
}

}  // namespace

std::string ChunkFiles::crc_path(FileId id) const { return object_path(id) + ".crc"; }

namespace {

// The CRC32C of a buffer built block by block: a block whose CRC is known
// over exactly its part of the buffer is folded in, any other part is read.
class WholeCrc {
 public:
  // The CRC of one whole block (k_crc_block_bytes) that follows what was added.
  void add_block(std::uint32_t crc) {
    static const proto::Crc32cShift k_block_shift(k_crc_block_bytes);
    crc_ = k_block_shift.apply(crc_) ^ crc;
  }
  void add_bytes(std::span<const std::byte> bytes) { crc_ = proto::crc32c(bytes, crc_); }
  std::uint32_t value() const { return crc_; }

 private:
  std::uint32_t crc_ = 0;
};

}  // namespace

Status ChunkFiles::begin_write(FileId id, std::uint64_t offset, std::uint64_t length) {
  if (!config_.checksum || length == 0) return ok_status();
  const std::uint64_t first = offset / k_crc_block_bytes;
  const std::uint64_t last = (offset + length - 1) / k_crc_block_bytes;
  std::vector<std::byte> marks((last - first + 1) * k_crc_entry_bytes);
  for (std::size_t at = 0; at < marks.size(); at += k_crc_entry_bytes)
    put_u32(marks.data() + at + 4, k_crc_unknown_covered);
  std::lock_guard lock(crc_mu_);
  Status st = write_crc_entries(id, first, marks, false);
  if (st.ok()) writing_[id].emplace_back(offset, offset + length);
  return st;
}

void ChunkFiles::end_write(FileId id, std::uint64_t offset, std::uint64_t length) {
  if (!config_.checksum || length == 0) return;
  std::lock_guard lock(crc_mu_);
  forget_write(id, offset, length);
}

void ChunkFiles::forget_write(FileId id, std::uint64_t offset, std::uint64_t length) {
  auto it = writing_.find(id);
  if (it == writing_.end()) return;
  auto& ranges = it->second;
  auto r = std::find(ranges.begin(), ranges.end(), std::pair{offset, offset + length});
  if (r != ranges.end()) ranges.erase(r);
  if (ranges.empty()) writing_.erase(it);
}

Status ChunkFiles::write_crc_entries(FileId id, std::uint64_t first, std::span<const std::byte> entries, bool sync) {
  const int fd = ::open(crc_path(id).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return errno_status("open the CRC sidecar of", id, errno);
  Status st;
  const ssize_t n =
      full_io(true, fd, const_cast<std::byte*>(entries.data()), entries.size(), first * k_crc_entry_bytes);
  if (n < 0) st = errno_status("write the CRC sidecar of", id, static_cast<int>(-n));
  if (st.ok() && sync && ::fdatasync(fd) != 0) st = errno_status("fdatasync the CRC sidecar of", id, errno);
  ::close(fd);
  return st;
}

bool ChunkFiles::racing_write(FileId id, std::uint64_t begin, std::uint64_t end) const {
  auto it = writing_.find(id);
  if (it == writing_.end()) return false;
  for (const auto& [b, e] : it->second) {
    if (b < end && begin < e) return true;
  }
  return false;
}

std::uint64_t ChunkFiles::blocks_skipped_racing_write() const {
  std::lock_guard lock(crc_mu_);
  return skipped_racing_;
}

std::uint64_t ChunkFiles::blocks_recovered() const {
  std::lock_guard lock(crc_mu_);
  return recovered_;
}

Status ChunkFiles::recover_block(FileId id, std::uint64_t b, std::vector<std::byte>& block) {
  block.resize(k_crc_block_bytes);
  Result<std::size_t> n = read_block(id, b, block);
  if (!n.ok()) return n.status();
  std::byte entry[k_crc_entry_bytes];
  put_u32(entry, *n == 0 ? 0 : proto::crc32c(std::span<const std::byte>(block).first(*n)));
  put_u32(entry + 4, static_cast<std::uint32_t>(*n));
  Status st = write_crc_entries(id, b, entry, false);
  if (!st.ok()) return st;
  if (recovered_++ < k_max_recovery_logs && config_.log) {
    config_.log(backend_ + " target " + config_.directory + ": object " +
                object_path(id).substr(config_.directory.size() + 1) + " block " + std::to_string(b) +
                ": checksum taken anew from the " + std::to_string(*n) +
                " bytes found (a write to it never finished: its process ended or it failed)");
  }
  return ok_status();
}

Result<std::size_t> ChunkFiles::read_block(FileId id, std::uint64_t block, std::span<std::byte> out) {
  Result<OpenedObject> obj = open_object(id, false, false);
  if (!obj.ok()) return obj.status();
  const ssize_t n = full_io(false, obj->file->fd(), out.data(), out.size(), block * k_crc_block_bytes);
  if (n < 0) return errno_status("read back a block of", id, static_cast<int>(-n));
  return static_cast<std::size_t>(n);
}

Status ChunkFiles::check_expected_crc(const StorageRequest& request) const {
  if (request.op != StorageOp::write || !request.expected_crc32c) return ok_status();
  const std::uint32_t got = proto::crc32c(request.buffer);
  if (got == *request.expected_crc32c) return ok_status();
  char text[96];
  std::snprintf(text, sizeof text, "CRC32C 0x%08x, expected 0x%08x", got, *request.expected_crc32c);
  return error(StatusCode::corrupt, backend_ + " target " + config_.directory + ": refused a write of " +
                                        std::to_string(request.buffer.size()) + " bytes to object " +
                                        object_path(request.file_id).substr(config_.directory.size() + 1) + " at " +
                                        std::to_string(request.object_offset) +
                                        ": its bytes changed after the storage server checked them (" + text + ")");
}

Status ChunkFiles::record_block_crcs(FileId id, std::uint64_t offset, std::span<const std::byte> written, bool sync,
                                     std::optional<std::uint32_t>* whole_crc) {
  if (!config_.checksum || written.empty()) return ok_status();
  WholeCrc whole;
  const std::uint64_t end = offset + written.size();
  const std::uint64_t first = offset / k_crc_block_bytes;
  const std::uint64_t last = (end - 1) / k_crc_block_bytes;
  std::vector<std::byte> entries((last - first + 1) * k_crc_entry_bytes);
  std::vector<std::byte> block(k_crc_block_bytes);
  Status st;
  {
    std::lock_guard lock(crc_mu_);
    forget_write(id, offset, written.size());
    for (std::uint64_t b = first; b <= last && st.ok(); ++b) {
      const std::uint64_t bs = b * k_crc_block_bytes;
      const std::uint64_t be = bs + k_crc_block_bytes;
      std::uint32_t crc = 0;
      std::uint32_t covered = 0;
      if (racing_write(id, bs, be)) {
        // Another write still changes this block: its mark stays until the last one records.
        covered = k_crc_unknown_covered;
        whole.add_bytes(written.subspan(std::max(bs, offset) - offset, std::min(be, end) - std::max(bs, offset)));
      } else if (bs >= offset && be <= end) {
        crc = proto::crc32c(written.subspan(bs - offset, k_crc_block_bytes));
        covered = static_cast<std::uint32_t>(k_crc_block_bytes);
        whole.add_block(crc);
      } else {
        const std::uint64_t from = std::max(bs, offset);
        whole.add_bytes(written.subspan(from - offset, std::min(be, end) - from));
        // Partly written: the block as it is in the object now (after this write).
        Result<std::size_t> n = read_block(id, b, block);
        if (!n.ok()) {
          st = n.status();
          break;
        }
        crc = proto::crc32c(std::span<const std::byte>(block).first(*n));
        covered = static_cast<std::uint32_t>(*n);
      }
      put_u32(entries.data() + (b - first) * k_crc_entry_bytes, crc);
      put_u32(entries.data() + (b - first) * k_crc_entry_bytes + 4, covered);
    }
    if (st.ok()) st = write_crc_entries(id, first, entries, sync);
  }
  if (st.ok() && whole_crc != nullptr) *whole_crc = whole.value();
  return st;
}

Result<bool> ChunkFiles::read_crc_entries(FileId id, std::uint64_t first, std::vector<std::byte>& entries) {
  const int fd = ::open(crc_path(id).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT) return errno_status("open the CRC sidecar of", id, errno);
    return false;  // nothing recorded (an object written before sidecars): the caller computes the CRC
  }
  const ssize_t got = full_io(false, fd, entries.data(), entries.size(), first * k_crc_entry_bytes);
  ::close(fd);
  if (got < 0) return errno_status("read the CRC sidecar of", id, static_cast<int>(-got));
  entries.resize(static_cast<std::size_t>(got));
  return true;
}

Result<std::uint32_t> ChunkFiles::reread_block_crc(FileId id, std::uint64_t b, std::uint32_t covered,
                                                   std::vector<std::byte>& block) {
  block.resize(k_crc_block_bytes);
  Result<std::size_t> n = read_block(id, b, block);
  if (!n.ok()) return n.status();
  if (*n < covered) {
    return error(StatusCode::corrupt, backend_ + " target " + config_.directory + ": object " +
                                          object_path(id).substr(config_.directory.size() + 1) + " block " +
                                          std::to_string(b) + " holds " + std::to_string(*n) + " bytes, " +
                                          std::to_string(covered) + " were written (truncated at rest)");
  }
  return proto::crc32c(std::span<const std::byte>(block).first(covered));
}

Status ChunkFiles::block_changed(FileId id, std::uint64_t b, std::uint32_t covered, std::uint32_t crc,
                                 std::uint32_t stored) const {
  const std::uint64_t bs = b * k_crc_block_bytes;
  char text[80];
  std::snprintf(text, sizeof text, "CRC32C 0x%08x, recorded 0x%08x", crc, stored);
  return error(StatusCode::corrupt, backend_ + " target " + config_.directory + ": object " +
                                        object_path(id).substr(config_.directory.size() + 1) + " block " +
                                        std::to_string(b) + " (bytes " + std::to_string(bs) + "..+" +
                                        std::to_string(covered) + ") changed at rest: " + text);
}

Status ChunkFiles::check_block_crcs(FileId id, std::uint64_t offset, std::span<const std::byte> read,
                                    std::optional<std::uint32_t>* whole_crc) {
  if (!config_.checksum || read.empty()) return ok_status();
  const std::uint64_t end = offset + read.size();
  WholeCrc whole;
  // The buffer's part of block b, for the whole CRC where its block CRC is not over exactly that part.
  const auto part = [&](std::uint64_t b) {
    const std::uint64_t from = std::max(b * k_crc_block_bytes, offset);
    return read.subspan(from - offset, std::min((b + 1) * k_crc_block_bytes, end) - from);
  };
  const std::uint64_t first = offset / k_crc_block_bytes;
  const std::uint64_t last = (end - 1) / k_crc_block_bytes;
  std::lock_guard lock(crc_mu_);
  std::vector<std::byte> entries((last - first + 1) * k_crc_entry_bytes);
  Result<bool> recorded_any = read_crc_entries(id, first, entries);
  if (!recorded_any.ok()) return recorded_any.status();
  if (!*recorded_any) return ok_status();
  std::vector<std::byte> block;
  for (std::uint64_t b = first; b <= last; ++b) {
    const std::size_t at = (b - first) * k_crc_entry_bytes;
    const bool recorded = at + k_crc_entry_bytes <= entries.size();  // else past the last record
    const std::uint32_t stored = recorded ? get_u32(entries.data() + at) : 0;
    const std::uint32_t covered = recorded ? get_u32(entries.data() + at + 4) : 0;
    const std::uint64_t bs = b * k_crc_block_bytes;
    if (covered == 0) {  // never written
      whole.add_bytes(part(b));
      continue;
    }
    if (racing_write(id, bs, bs + k_crc_block_bytes)) {
      ++skipped_racing_;
      whole.add_bytes(part(b));
      continue;
    }
    if (covered == k_crc_unknown_covered) {  // a write that never finished (see the top)
      if (Status st = recover_block(id, b, block); !st.ok()) return st;
      whole.add_bytes(part(b));
      continue;
    }
    std::uint32_t crc = 0;
    if (bs >= offset && bs + covered <= end) {
      crc = proto::crc32c(read.subspan(bs - offset, covered));
      if (covered == k_crc_block_bytes && part(b).size() == covered) {
        whole.add_block(crc);
      } else {
        whole.add_bytes(part(b));
      }
    } else {
      whole.add_bytes(part(b));
      Result<std::uint32_t> reread = reread_block_crc(id, b, covered, block);
      if (!reread.ok()) return reread.status();
      crc = *reread;
    }
    if (crc != stored) return block_changed(id, b, covered, crc, stored);
  }
  if (whole_crc != nullptr) *whole_crc = whole.value();
  return ok_status();
}

Result<std::uint64_t> ChunkFiles::size(FileId id) {
  struct stat st {};
  if (::stat(object_path(id).c_str(), &st) != 0) {
    if (errno == ENOENT) return std::uint64_t{0};
    return errno_status("stat", id, errno);
  }
  return static_cast<std::uint64_t>(st.st_size);
}

void ChunkFiles::run_metadata_op(const StorageRequest& request, StorageCompletion& c) {
  switch (request.op) {
    case StorageOp::remove: c.status = remove(request.file_id); break;
    case StorageOp::flush: c.status = flush_and_drop(); break;
    case StorageOp::allocate: c.status = allocate(request.file_id, request.object_offset, request.length); break;
    case StorageOp::punch: c.status = punch(request.file_id, request.object_offset, request.length); break;
    case StorageOp::stat: {
      Result<std::uint64_t> bytes = size(request.file_id);
      if (bytes.ok()) {
        c.bytes = *bytes;
      } else {
        c.status = bytes.status();
      }
      break;
    }
    case StorageOp::read:
    case StorageOp::write: SLUICE_ASSERT_MSG(false, "a read or write moves a buffer: not a metadata op"); break;
  }
}

Status ChunkFiles::allocate(FileId id, std::uint64_t offset, std::uint64_t length) {
  Result<OpenedObject> obj = open_object(id, false, true);
  if (!obj.ok()) return obj.status();
  if (length == 0) return ok_status();
  if (::fallocate(obj->file->fd(), FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset), static_cast<off_t>(length)) == 0) {
    return ok_status();
  }
  const int err = errno;
  if (err != EOPNOTSUPP && err != ENOSYS) return errno_status("reserve space in", id, err);
  // A file system without fallocate (some FUSE and network ones): nothing
  // is reserved, and later writes there may still fail for space.
  if (allocate_unsupported_++ == 0 && config_.log) {
    config_.log(backend_ + " target " + config_.directory + ": fallocate refused (" + errno_text(err) +
                "): allocations complete without reserving space");
  }
  return ok_status();
}

Status ChunkFiles::punch(FileId id, std::uint64_t offset, std::uint64_t length) {
  Result<std::uint64_t> object_bytes = size(id);
  if (!object_bytes.ok()) return object_bytes.status();
  // Only what the object holds: its size stays, a missing object stays missing.
  const std::uint64_t begin = std::min(offset, *object_bytes);
  const std::uint64_t end = length > *object_bytes - begin ? *object_bytes : begin + length;
  if (begin == end) return ok_status();
  Result<OpenedObject> obj = open_object(id, false, false);
  if (!obj.ok()) return obj.status();
  const int fd = obj->file->fd();
  if (Status marked = begin_write(id, begin, end - begin); !marked.ok()) return marked;
  Status st;
  if (::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(begin),
                  static_cast<off_t>(end - begin)) != 0) {
    const int err = errno;
    if (err != EOPNOTSUPP && err != ENOSYS) {
      st = errno_status("punch a hole in", id, err);
    } else {
      // No hole punching there: the same bytes by writing zeros.
      if (punch_by_writing_zeros_++ == 0 && config_.log) {
        config_.log(backend_ + " target " + config_.directory + ": hole punching refused (" + errno_text(err) +
                    "): punches write zeros instead");
      }
      std::vector<std::byte> zeros(std::min<std::uint64_t>(end - begin, k_punch_zero_piece_bytes));
      for (std::uint64_t at = begin; at < end && st.ok(); at += zeros.size()) {
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(zeros.size(), end - at));
        const ssize_t wrote = full_io(true, fd, zeros.data(), n, at);
        if (wrote < 0) st = errno_status("write zeros into", id, static_cast<int>(-wrote));
      }
    }
  }
  end_write(id, begin, end - begin);  // the marks stay until the CRCs below replace them
  if (!st.ok()) return st;
  return record_range_crcs(id, begin, end);
}

Status ChunkFiles::record_range_crcs(FileId id, std::uint64_t begin, std::uint64_t end) {
  if (!config_.checksum) return ok_status();
  Result<OpenedObject> obj = open_object(id, false, false);
  if (!obj.ok()) return obj.status();
  std::vector<std::byte> piece(std::min<std::uint64_t>(end - begin, k_punch_zero_piece_bytes));
  for (std::uint64_t at = begin; at < end;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(piece.size(), end - at));
    const ssize_t got = full_io(false, obj->file->fd(), piece.data(), n, at);
    if (got < 0) return errno_status("read back a punched range of", id, static_cast<int>(-got));
    if (got == 0) break;  // cut short meanwhile (a truncate): nothing more to record
    if (Status st =
            record_block_crcs(id, at, std::span<const std::byte>(piece).first(static_cast<std::size_t>(got)), false);
        !st.ok()) {
      return st;
    }
    at += static_cast<std::uint64_t>(got);
  }
  return ok_status();
}

Status ChunkFiles::sync_directory() {
  const int fd = ::open(config_.directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    return error(StatusCode::io_error,
                 backend_ + " target " + config_.directory + ": fsync of the directory: " + errno_text(err));
  }
  ::close(fd);
  return ok_status();
}

Status ChunkFiles::flush_and_drop() {
  const int dir_fd = ::open(config_.directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0 || ::syncfs(dir_fd) != 0) {
    const int err = errno;
    if (dir_fd >= 0) ::close(dir_fd);
    return error(StatusCode::io_error, backend_ + " target " + config_.directory + ": syncfs: " + errno_text(err));
  }
  DIR* dir = ::fdopendir(dir_fd);  // owns dir_fd from here
  if (dir == nullptr) {
    const int err = errno;
    ::close(dir_fd);
    return error(StatusCode::io_error, backend_ + " target " + config_.directory + ": opendir: " + errno_text(err));
  }
  Status result = ok_status();
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;  // ".", "..", the O_DIRECT probe
    const int fd = ::openat(dir_fd, entry->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) continue;  // removed meanwhile, or not a file we may open: nothing of ours to drop
    const int rc = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
    if (rc != 0 && result.ok()) {
      result = error(StatusCode::io_error, backend_ + " target " + config_.directory + ": posix_fadvise(DONTNEED) of " +
                                               entry->d_name + ": " + errno_text(rc));
    }
  }
  ::closedir(dir);
  return result;
}

}  // namespace sluice::hw
