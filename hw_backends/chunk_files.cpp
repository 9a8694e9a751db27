#include "hw_backends/chunk_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

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
    return error(StatusCode::invalid_argument, where + ": max_open_objects " +
                                                   std::to_string(config.max_open_objects) +
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
  const bool moves_bytes = request.op == StorageOp::read || request.op == StorageOp::write;
  if (!moves_bytes) return ok_status();
  if (request.buffer.size() > k_max_storage_request_bytes) {
    return error(StatusCode::invalid_argument, backend_ + " target " + config_.directory + ": " +
                                                   std::string(to_string(request.op)) + " of " +
                                                   std::to_string(request.buffer.size()) +
                                                   " bytes over k_max_storage_request_bytes " +
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
  if (::unlink(object_path(id).c_str()) != 0 && errno != ENOENT) return errno_status("remove", id, errno);
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

}  // namespace sluice::hw
