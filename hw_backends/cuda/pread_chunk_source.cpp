#include "hw_backends/cuda/pread_chunk_source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "hw_backends/storage_backend.hpp"

namespace sluice::hw::cuda {
namespace {

std::string errno_text(int err) {
  const char* name = strerrorname_np(err);
  return std::string(std::strerror(err)) + " (" + (name != nullptr ? name : std::to_string(err)) + ")";
}

}  // namespace

Result<std::unique_ptr<PreadChunkSource>> PreadChunkSource::open(const std::string& path, bool direct) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (direct ? O_DIRECT : 0));
  if (fd < 0) {
    const int err = errno;
    const StatusCode code = err == ENOENT   ? StatusCode::not_found
                            : err == EINVAL ? StatusCode::invalid_argument
                                            : StatusCode::io_error;
    return error(code, std::string("open ") + (direct ? "O_DIRECT " : "") + path + ": " + errno_text(err));
  }
  return std::unique_ptr<PreadChunkSource>(new PreadChunkSource(path, fd, direct));
}

PreadChunkSource::~PreadChunkSource() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::uint64_t> PreadChunkSource::size() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return error(StatusCode::io_error, "fstat " + path_ + ": " + errno_text(errno));
  return static_cast<std::uint64_t>(st.st_size);
}

Result<std::uint64_t> PreadChunkSource::read(std::uint64_t offset, std::span<std::byte> buffer, std::uint64_t length) {
  if (length > buffer.size()) {
    return error(StatusCode::invalid_argument, "pread " + path_ + ": " + std::to_string(length) +
                                                   " bytes into a buffer of " + std::to_string(buffer.size()));
  }
  std::uint64_t want = length;
  if (direct_) {
    const auto address = reinterpret_cast<std::uintptr_t>(buffer.data());
    if (address % k_direct_io_alignment_bytes != 0 || offset % k_direct_io_alignment_bytes != 0) {
      return error(StatusCode::invalid_argument, "O_DIRECT pread " + path_ + " at " + std::to_string(offset) +
                                                     ": buffer or offset not aligned to " +
                                                     std::to_string(k_direct_io_alignment_bytes));
    }
    const std::uint64_t rounded =
        (length + k_direct_io_alignment_bytes - 1) / k_direct_io_alignment_bytes * k_direct_io_alignment_bytes;
    want = std::min<std::uint64_t>(rounded, buffer.size() / k_direct_io_alignment_bytes * k_direct_io_alignment_bytes);
    if (want < length) {
      return error(StatusCode::invalid_argument, "O_DIRECT pread " + path_ + ": buffer of " +
                                                     std::to_string(buffer.size()) + " bytes cannot hold " +
                                                     std::to_string(length) + " rounded up to the block size");
    }
  }
  std::uint64_t done = 0;
  while (done < want) {
    const ssize_t n = ::pread(fd_, buffer.data() + done, want - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return error(StatusCode::io_error, std::string(direct_ ? "O_DIRECT " : "") + "pread " + path_ + " at " +
                                             std::to_string(offset + done) + ": " + errno_text(errno));
    }
    if (n == 0) break;  // end of file
    done += static_cast<std::uint64_t>(n);
  }
  return std::min(done, length);
}

}  // namespace sluice::hw::cuda
