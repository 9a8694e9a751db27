#include "hw_backends/posix/posix_storage_backend.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "base/eventfd_queue.hpp"
#include "core/proto/crc32c.hpp"
#include "hw_backends/chunk_files.hpp"

namespace sluice::hw {
namespace {

StorageCapabilities posix_capabilities() {
  StorageCapabilities c;
  c.direct_io = true;
  c.registered_buffers = false;
  c.max_queue_depth = k_max_queue_depth;
  return c;
}

class PosixStorageBackend final : public StorageBackend {
 public:
  explicit PosixStorageBackend(std::unique_ptr<ChunkFiles> files)
      : files_(std::move(files)), caps_(posix_capabilities()) {
    const std::uint32_t workers = std::min(files_->config().queue_depth, k_posix_max_workers);
    for (std::uint32_t i = 0; i < workers; ++i) workers_.emplace_back([this] { work(); });
  }

  ~PosixStorageBackend() override {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }

  std::string_view name() const override { return "posix"; }
  const StorageCapabilities& capabilities() const override { return caps_; }
  std::string io_path() const override { return files_->io_path(); }
  StorageStats stats() const override {
    StorageStats s;
    s.direct_ops = direct_ops_;
    s.buffered_ops = buffered_ops_;
    s.unaligned_ops = unaligned_ops_;
    s.sync_writes = sync_writes_;
    s.errors = errors_;
    s.allocate_unsupported = files_->allocate_unsupported();
    s.punch_by_writing_zeros = files_->punch_by_writing_zeros();
    return s;
  }

  Status register_buffers(std::span<const std::span<std::byte>> buffers) override {
    if (buffers.size() > k_max_registered_buffers) {
      return error(StatusCode::invalid_argument,
                   "posix target: " + std::to_string(buffers.size()) + " buffers over k_max_registered_buffers");
    }
    for (const auto& b : buffers) {
      if (b.empty()) return error(StatusCode::invalid_argument, "posix target: empty buffer to register");
    }
    return ok_status();  // pread/pwrite have no registered path
  }

  Status submit(const StorageRequest& request) override {
    Status checked = files_->check_request(request);
    if (!checked.ok()) return checked;
    if (request.op == StorageOp::read || request.op == StorageOp::write) {
      Result<bool> direct = files_->choose_direct(request.buffer, request.object_offset);
      if (!direct.ok()) return direct.status();
    }
    {
      std::lock_guard lock(mu_);
      if (accepted_ >= files_->config().queue_depth) {
        return error(StatusCode::again, "posix target " + files_->config().directory + ": queue_depth " +
                                            std::to_string(files_->config().queue_depth) +
                                            " requests accepted and not yet polled");
      }
      ++accepted_;
      queue_.push_back(request);
    }
    wake_.notify_one();
    return ok_status();
  }

  std::size_t poll(std::vector<StorageCompletion>& out, std::size_t max_completions) override {
    const std::size_t n = completions_.pop(out, max_completions);
    std::lock_guard lock(mu_);
    accepted_ -= static_cast<std::uint32_t>(n);
    return n;
  }

  int completion_fd() const override { return completions_.fd(); }

 private:
  void work() {
    while (true) {
      StorageRequest request;
      {
        std::unique_lock lock(mu_);
        wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
        if (stop_) return;
        request = queue_.front();
        queue_.pop_front();
      }
      StorageCompletion done = execute(request);
      if (!done.status.ok()) ++errors_;
      completions_.push(std::move(done));
    }
  }

  StorageCompletion execute(const StorageRequest& r) {
    StorageCompletion c;
    c.cookie = r.cookie;
    if (r.op == StorageOp::read) {
      read(r, c);
    } else if (r.op == StorageOp::write) {
      write(r, c);
    } else {
      files_->run_metadata_op(r, c);
    }
    return c;
  }

  // Counts the path and returns the open object, or sets the error.
  std::optional<OpenedObject> open_for(const StorageRequest& r, bool create, StorageCompletion& c) {
    const bool direct = files_->choose_direct(r.buffer, r.object_offset).value();  // checked in submit
    Result<OpenedObject> opened = files_->open_object(r.file_id, direct, create);
    if (!opened.ok()) {
      c.status = opened.status();
      return std::nullopt;
    }
    c.direct = direct;
    if (direct) {
      ++direct_ops_;
    } else {
      ++buffered_ops_;
      if (files_->direct_enabled()) ++unaligned_ops_;
    }
    return std::move(opened).value();
  }

  void read(const StorageRequest& r, StorageCompletion& c) {
    if (r.buffer.empty()) return;
    // (The CRCs at rest are checked below, once the bytes are in the buffer.)
    std::optional<OpenedObject> obj = open_for(r, false, c);
    if (!obj) {
      if (c.status.code() == StatusCode::not_found) c.status = ok_status();  // a missing object reads as empty
      finish_crc(r.buffer.first(0), c);
      return;
    }
    std::size_t done = 0;
    while (done < r.buffer.size()) {
      const ssize_t n = ::pread(obj->file->fd(), r.buffer.data() + done, r.buffer.size() - done,
                                static_cast<off_t>(r.object_offset + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        c.status = files_->errno_status("read", r.file_id, errno);
        return;
      }
      if (n == 0) break;  // end of the object
      done += static_cast<std::size_t>(n);
      if (c.direct && done % k_direct_io_alignment_bytes != 0) break;  // a short direct read ends at EOF
    }
    std::optional<std::uint32_t> whole;
    c.status = files_->check_block_crcs(r.file_id, r.object_offset, r.buffer.first(done), &whole);
    if (!c.status.ok()) return;
    c.bytes = done;
    finish_crc(r.buffer.first(done), c, whole);
  }

  void write(const StorageRequest& r, StorageCompletion& c) {
    c.status = files_->check_expected_crc(r);
    if (!c.status.ok()) return;
    std::optional<OpenedObject> obj = open_for(r, true, c);
    if (!obj) return;
    c.status = files_->begin_write(r.file_id, r.object_offset, r.buffer.size());
    if (!c.status.ok()) return;
    std::size_t done = 0;
    while (done < r.buffer.size()) {
      const ssize_t n = ::pwrite(obj->file->fd(), r.buffer.data() + done, r.buffer.size() - done,
                                 static_cast<off_t>(r.object_offset + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        c.status = files_->errno_status("write", r.file_id, errno);
        files_->end_write(r.file_id, r.object_offset, r.buffer.size());
        return;
      }
      done += static_cast<std::size_t>(n);
    }
    if (r.sync) {
      ++sync_writes_;
      c.status = make_durable(*obj, r.file_id);
      if (!c.status.ok()) {
        files_->end_write(r.file_id, r.object_offset, r.buffer.size());
        return;
      }
    }
    // The CRCs at rest of the blocks written, once the bytes are in (with sync, durable after them).
    std::optional<std::uint32_t> whole;
    c.status = files_->record_block_crcs(r.file_id, r.object_offset, r.buffer, r.sync, &whole);
    if (!c.status.ok()) return;
    c.bytes = done;
    finish_crc(r.buffer, c, whole);
  }

  // fdatasync of a written object, and of the directory when the write created it.
  Status make_durable(const OpenedObject& obj, FileId id) {
    if (::fdatasync(obj.file->fd()) != 0) return files_->errno_status("fdatasync", id, errno);
    return obj.created ? files_->sync_directory() : ok_status();
  }

  // known: the CRC32C of `bytes` when the CRCs at rest gave it already.
  void finish_crc(std::span<const std::byte> bytes, StorageCompletion& c,
                  std::optional<std::uint32_t> known = std::nullopt) const {
    if (!files_->config().checksum) return;
    c.crc32c = known ? *known : proto::crc32c(bytes);
    c.crc_valid = true;
  }

  std::unique_ptr<ChunkFiles> files_;
  StorageCapabilities caps_;
  base::EventfdQueue<StorageCompletion> completions_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<StorageRequest> queue_;
  std::uint32_t accepted_ = 0;  // submitted and not yet returned by poll()
  bool stop_ = false;
  std::vector<std::thread> workers_;
  std::atomic<std::uint64_t> direct_ops_{0}, buffered_ops_{0}, unaligned_ops_{0}, sync_writes_{0}, errors_{0};
};

}  // namespace

Result<std::unique_ptr<StorageBackend>> make_posix_storage_backend(const StorageTargetConfig& config) {
  Result<std::unique_ptr<ChunkFiles>> files = ChunkFiles::open(config, "posix");
  if (!files.ok()) return files.status();
  return std::unique_ptr<StorageBackend>(std::make_unique<PosixStorageBackend>(std::move(files).value()));
}

namespace {
[[maybe_unused]] const bool k_registered = register_storage_backend(
    StorageBackendEntry{"posix", [] { return ok_status(); }, [] { return posix_capabilities(); },
                        [](const StorageTargetConfig& config) { return make_posix_storage_backend(config); }});
}  // namespace

}  // namespace sluice::hw
