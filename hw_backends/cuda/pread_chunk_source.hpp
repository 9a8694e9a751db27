// PreadChunkSource: a file read with pread(2), through the page cache or
// with O_DIRECT (open(2): buffer address, offset and length aligned to the
// logical block size; k_direct_io_alignment_bytes = 4 KiB covers every
// device in use). With O_DIRECT an unaligned tail is read rounded up into the
// staging buffer, which is large enough by the ChunkSource contract.
#pragma once

#include <memory>
#include <string>

#include "hw_backends/cuda/bounce_pipeline.hpp"

namespace sluice::hw::cuda {

class PreadChunkSource final : public ChunkSource {
 public:
  // not_found / io_error naming the path; with direct, invalid_argument when
  // the file system refuses O_DIRECT (EINVAL).
  static Result<std::unique_ptr<PreadChunkSource>> open(const std::string& path, bool direct);
  ~PreadChunkSource() override;
  PreadChunkSource(const PreadChunkSource&) = delete;
  PreadChunkSource& operator=(const PreadChunkSource&) = delete;

  // invalid_argument with O_DIRECT when buffer or offset is unaligned.
  Result<std::uint64_t> read(std::uint64_t offset, std::span<std::byte> buffer, std::uint64_t length) override;

  int fd() const { return fd_; }
  bool direct() const { return direct_; }
  const std::string& path() const { return path_; }
  Result<std::uint64_t> size() const;

 private:
  PreadChunkSource(std::string path, int fd, bool direct) : path_(std::move(path)), fd_(fd), direct_(direct) {}
  std::string path_;
  int fd_ = -1;
  bool direct_ = false;
};

}  // namespace sluice::hw::cuda
