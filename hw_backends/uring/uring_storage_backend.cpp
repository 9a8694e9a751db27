#include "hw_backends/uring/uring_storage_backend.hpp"

#ifdef SLUICE_HAVE_URING

#include <fcntl.h>
#include <liburing.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

#include "base/eventfd_queue.hpp"
#include "core/proto/crc32c.hpp"
#include "hw_backends/chunk_files.hpp"

namespace sluice::hw {
namespace {

std::string errno_text(int err) {
  const char* name = strerrorname_np(err);
  return std::string(std::strerror(err)) + " (" + (name != nullptr ? name : std::to_string(err)) + ")";
}

StorageCapabilities uring_capabilities() {
  StorageCapabilities c;
  c.direct_io = true;
  c.registered_buffers = true;
  c.max_queue_depth = k_max_queue_depth;
  return c;
}

// user_data of the directory fsync that accompanies a sync write creating
// its object; the low bits are the slot index.
constexpr std::uint64_t k_directory_fsync_tag = 1ULL << 63;

// One request in the ring.
struct Slot {
  bool busy = false;
  StorageRequest request;
  std::shared_ptr<ObjectFile> file;
  bool direct = false;
  int buffer_index = -1;        // registered buffer holding the request's buffer, or -1
  std::size_t done = 0;         // bytes moved so far (short transfers are resubmitted)
  std::uint32_t cqes_left = 0;  // CQEs still expected (a sync write that created the object also fsyncs the directory)
  Status status;
};

class UringStorageBackend final : public StorageBackend {
 public:
  UringStorageBackend(std::unique_ptr<ChunkFiles> files, int directory_fd)
      : files_(std::move(files)), caps_(uring_capabilities()), directory_fd_(directory_fd) {}

  ~UringStorageBackend() override {
    if (ring_ready_) io_uring_queue_exit(&ring_);
    if (directory_fd_ >= 0) ::close(directory_fd_);
  }

  Status open() {
    const std::uint32_t depth = files_->config().queue_depth;
    if (!completions_.valid()) {
      return error(StatusCode::io_error, where() + ": eventfd: " + errno_text(completions_.open_errno()));
    }
    io_uring_params params{};
    // A completion ring twice the depth: a sync write that creates its
    // object posts two completions.
    params.flags = IORING_SETUP_CQSIZE;
    params.cq_entries = 2 * depth;
    const int rc = io_uring_queue_init_params(2 * depth, &ring_, &params);
    if (rc < 0) return error(StatusCode::unavailable, where() + ": io_uring_setup: " + errno_text(-rc));
    ring_ready_ = true;
    const int ev = io_uring_register_eventfd(&ring_, completions_.fd());
    if (ev < 0) return error(StatusCode::io_error, where() + ": io_uring_register_eventfd: " + errno_text(-ev));
    slots_.resize(depth);
    return ok_status();
  }

  std::string_view name() const override { return "uring"; }
  const StorageCapabilities& capabilities() const override { return caps_; }
  std::string io_path() const override { return "io_uring, " + files_->io_path(); }
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
      return error(StatusCode::invalid_argument, where() + ": " + std::to_string(buffers.size()) +
                                                     " buffers over k_max_registered_buffers " +
                                                     std::to_string(k_max_registered_buffers));
    }
    std::vector<iovec> iovs;
    for (const auto& b : buffers) {
      if (b.empty()) return error(StatusCode::invalid_argument, where() + ": empty buffer to register");
      iovs.push_back(iovec{b.data(), b.size()});
    }
    std::lock_guard lock(mu_);
    if (in_flight_ > 0) {
      return error(StatusCode::again, where() + ": register_buffers with requests in flight");
    }
    if (!registered_.empty()) {
      io_uring_unregister_buffers(&ring_);
      registered_.clear();
    }
    if (iovs.empty()) return ok_status();
    const int rc = io_uring_register_buffers(&ring_, iovs.data(), static_cast<unsigned>(iovs.size()));
    if (rc < 0) {
      return error(rc == -ENOMEM ? StatusCode::no_space : StatusCode::io_error,
                   where() + ": io_uring_register_buffers: " + errno_text(-rc) +
                       (rc == -ENOMEM ? " (RLIMIT_MEMLOCK too low?)" : ""));
    }
    for (std::size_t i = 0; i < buffers.size(); ++i) registered_.push_back(Registered{buffers[i], static_cast<int>(i)});
    std::sort(registered_.begin(), registered_.end(),
              [](const Registered& a, const Registered& b) { return a.bytes.data() < b.bytes.data(); });
    return ok_status();
  }

  Status submit(const StorageRequest& request) override {
    Status checked = files_->check_request(request);
    if (!checked.ok()) return checked;
    const bool moves_bytes = request.op == StorageOp::read || request.op == StorageOp::write;
    bool direct = false;
    if (moves_bytes) {
      Result<bool> chosen = files_->choose_direct(request.buffer, request.object_offset);
      if (!chosen.ok()) return chosen.status();
      direct = *chosen;
    }
    std::lock_guard lock(mu_);
    if (accepted_ >= slots_.size()) {
      return error(StatusCode::again, where() + ": queue_depth " + std::to_string(slots_.size()) +
                                          " requests accepted and not yet polled");
    }
    ++accepted_;
    StorageCompletion inline_done;
    inline_done.cookie = request.cookie;
    if (!moves_bytes) {
      // remove, stat, allocate and punch are a metadata syscall or a few
      // (a punch's CRCs read its range back), flush a syncfs and a walk of
      // the directory: done here.
      files_->run_metadata_op(request, inline_done);
      finish_inline(std::move(inline_done));
      return ok_status();
    }
    if (request.op == StorageOp::read && request.buffer.empty()) {
      finish_inline(std::move(inline_done));
      return ok_status();
    }
    if (Status refused = files_->check_expected_crc(request); !refused.ok()) {
      inline_done.status = refused;  // nothing is written (chunk_files.hpp, "CRC32C at rest")
      finish_inline(std::move(inline_done));
      return ok_status();
    }
    Result<OpenedObject> opened = files_->open_object(request.file_id, direct, request.op == StorageOp::write);
    if (!opened.ok()) {
      if (opened.status().code() == StatusCode::not_found) {
        set_crc(request.buffer.first(0), inline_done);  // a missing object reads as empty
      } else {
        inline_done.status = opened.status();
      }
      finish_inline(std::move(inline_done));
      return ok_status();
    }
    if (request.op == StorageOp::write) {
      // Its blocks' checksums are marked unknown before any byte moves (chunk_files.hpp, "Crashes").
      if (Status marked = files_->begin_write(request.file_id, request.object_offset, request.buffer.size());
          !marked.ok()) {
        inline_done.status = marked;
        finish_inline(std::move(inline_done));
        return ok_status();
      }
    }
    std::size_t index = 0;
    while (slots_[index].busy) ++index;  // in_flight_ < size: a free slot exists
    Slot& slot = slots_[index];
    slot = Slot{};
    slot.busy = true;
    slot.request = request;
    slot.file = opened->file;
    slot.direct = direct;
    slot.buffer_index = registered_index(request.buffer);
    slot.cqes_left = 1;
    ++in_flight_;
    if (direct) {
      ++direct_ops_;
    } else {
      ++buffered_ops_;
      if (files_->direct_enabled()) ++unaligned_ops_;
    }
    if (request.op == StorageOp::write && request.sync) {
      ++sync_writes_;
      if (opened->created) {
        // The new directory entry must be durable too: fsync the directory
        // alongside the RWF_DSYNC write; the request completes after both.
        io_uring_sqe* sqe = next_sqe();
        if (sqe == nullptr) return fail_unqueued(index);
        io_uring_prep_fsync(sqe, directory_fd_, 0);
        io_uring_sqe_set_data64(sqe, index | k_directory_fsync_tag);
        slot.cqes_left = 2;
      }
    }
    if (!prepare_transfer(index)) return fail_unqueued(index);
    push_to_kernel();
    return ok_status();
  }

  std::size_t poll(std::vector<StorageCompletion>& out, std::size_t max_completions) override {
    std::lock_guard lock(mu_);
    std::size_t n = completions_.pop(out, max_completions);
    io_uring_cqe* cqe = nullptr;
    while (n < max_completions && io_uring_peek_cqe(&ring_, &cqe) == 0) {
      const std::uint64_t data = io_uring_cqe_get_data64(cqe);
      const auto index = static_cast<std::size_t>(data & ~k_directory_fsync_tag);
      const int res = cqe->res;
      io_uring_cqe_seen(&ring_, cqe);
      on_cqe(index, res, (data & k_directory_fsync_tag) != 0);
      if (slots_[index].busy && slots_[index].cqes_left == 0) {
        out.push_back(finish_slot(index));
        ++n;
      }
    }
    push_to_kernel();  // continuations of short transfers, and entries a failed submit left
    if (io_uring_cq_ready(&ring_) > 0) completions_.signal();
    accepted_ -= n;
    return n;
  }

  int completion_fd() const override { return completions_.fd(); }

 private:
  struct Registered {
    std::span<std::byte> bytes;
    int index = 0;
  };

  std::string where() const { return "uring target " + files_->config().directory; }

  int registered_index(std::span<std::byte> buffer) const {
    if (registered_.empty() || buffer.empty()) return -1;
    auto it = std::upper_bound(registered_.begin(), registered_.end(), buffer.data(),
                               [](const std::byte* p, const Registered& r) { return p < r.bytes.data(); });
    if (it == registered_.begin()) return -1;
    --it;
    const std::byte* end = it->bytes.data() + it->bytes.size();
    return buffer.data() + buffer.size() <= end ? it->index : -1;
  }

  // The next free submission entry. The ring has two per slot, and every
  // call path submits before taking more, so it is never full; a null is
  // still handled rather than dereferenced.
  io_uring_sqe* next_sqe() {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr && io_uring_submit(&ring_) >= 0) sqe = io_uring_get_sqe(&ring_);
    return sqe;
  }

  // A request none of whose entries reached the ring completes here, as an
  // error (the contract: every accepted request completes once).
  Status fail_unqueued(std::size_t index) {
    Slot& slot = slots_[index];
    slot.status = files_->errno_status("queue", slot.request.file_id, EBUSY);
    if (slot.cqes_left == 2) {
      // The directory fsync is queued already: wait for its CQE, fail the transfer half.
      slot.cqes_left = 1;
      push_to_kernel();
      return ok_status();
    }
    slot.cqes_left = 0;
    completions_.push(finish_slot(index));
    return ok_status();
  }

  // Hands queued entries to the kernel. A failed io_uring_enter leaves them
  // in the ring; the completion fd is set so that the consumer's next poll()
  // tries again.
  void push_to_kernel() {
    if (io_uring_sq_ready(&ring_) == 0) return;
    const int rc = io_uring_submit(&ring_);
    if (rc < 0) {
      if (files_->config().log) files_->config().log(where() + ": io_uring_submit: " + errno_text(-rc) + "; retrying");
      completions_.signal();
    }
  }

  // Queues (the rest of) the slot's read or write; false when no entry was free.
  bool prepare_transfer(std::size_t index) {
    Slot& s = slots_[index];
    io_uring_sqe* sqe = next_sqe();
    if (sqe == nullptr) return false;
    std::byte* at = s.request.buffer.data() + s.done;
    const auto len = static_cast<unsigned>(s.request.buffer.size() - s.done);
    const std::uint64_t offset = s.request.object_offset + s.done;
    const int fd = s.file->fd();
    if (s.request.op == StorageOp::read) {
      if (s.buffer_index >= 0)
        io_uring_prep_read_fixed(sqe, fd, at, len, offset, s.buffer_index);
      else
        io_uring_prep_read(sqe, fd, at, len, offset);
    } else {
      if (s.buffer_index >= 0)
        io_uring_prep_write_fixed(sqe, fd, at, len, offset, s.buffer_index);
      else
        io_uring_prep_write(sqe, fd, at, len, offset);
      if (s.request.sync) sqe->rw_flags = RWF_DSYNC;
    }
    io_uring_sqe_set_data64(sqe, index);
    return true;
  }

  // Accounts one CQE; a short transfer queues its continuation.
  void on_cqe(std::size_t index, int res, bool directory_fsync) {
    Slot& s = slots_[index];
    if (!s.busy || s.cqes_left == 0) return;  // cannot happen: one CQE per SQE
    if (res < 0 || directory_fsync) {
      --s.cqes_left;
      if (res < 0 && s.status.ok()) {
        const char* what =
            directory_fsync ? "fsync directory for" : (s.request.op == StorageOp::read ? "read" : "write");
        s.status = files_->errno_status(what, s.request.file_id, -res);
      }
      return;
    }
    s.done += static_cast<std::size_t>(res);
    const bool short_transfer = s.done < s.request.buffer.size();
    const bool eof = s.request.op == StorageOp::read && (res == 0 || s.direct);
    if (short_transfer && !eof && res > 0) {
      if (prepare_transfer(index)) return;  // the same CQE count: the continuation replaces this one
      s.status = files_->errno_status("queue", s.request.file_id, EBUSY);
    }
    --s.cqes_left;
  }

  StorageCompletion finish_slot(std::size_t index) {
    Slot& s = slots_[index];
    StorageCompletion c;
    c.cookie = s.request.cookie;
    c.status = s.status;
    c.direct = s.direct;
    if (c.status.ok() && s.request.op == StorageOp::write && s.done < s.request.buffer.size()) {
      c.status = error(StatusCode::io_error, where() + ": short write of " + std::to_string(s.done) + " of " +
                                                 std::to_string(s.request.buffer.size()) + " bytes to object " +
                                                 files_->object_path(s.request.file_id));
    }
    // CRC32C at rest (chunk_files.hpp): a write records its blocks', a read
    // checks them; either gives the completion's CRC32C without a second pass.
    std::optional<std::uint32_t> whole;
    if (s.request.op == StorageOp::write) {
      if (c.status.ok()) {
        c.status = files_->record_block_crcs(s.request.file_id, s.request.object_offset, s.request.buffer,
                                             s.request.sync, &whole);
      } else {
        files_->end_write(s.request.file_id, s.request.object_offset, s.request.buffer.size());
      }
    } else if (c.status.ok()) {
      c.status =
          files_->check_block_crcs(s.request.file_id, s.request.object_offset, s.request.buffer.first(s.done), &whole);
    }
    if (c.status.ok()) {
      c.bytes = s.done;
      set_crc(s.request.buffer.first(s.done), c, whole);
    } else {
      ++errors_;
    }
    s = Slot{};
    --in_flight_;
    return c;
  }

  void finish_inline(StorageCompletion c) {
    if (!c.status.ok()) ++errors_;
    completions_.push(std::move(c));
  }

  // known: the CRC32C of `bytes` when the CRCs at rest gave it already.
  void set_crc(std::span<const std::byte> bytes, StorageCompletion& c,
               std::optional<std::uint32_t> known = std::nullopt) const {
    if (!files_->config().checksum) return;
    c.crc32c = known ? *known : proto::crc32c(bytes);
    c.crc_valid = true;
  }

  std::unique_ptr<ChunkFiles> files_;
  StorageCapabilities caps_;
  int directory_fd_ = -1;
  base::EventfdQueue<StorageCompletion> completions_;  // its eventfd also gets the ring's CQE notifications
  std::mutex mu_;
  io_uring ring_{};
  bool ring_ready_ = false;
  std::vector<Slot> slots_;
  std::size_t in_flight_ = 0;           // slots in the ring
  std::size_t accepted_ = 0;            // submitted and not yet returned by poll(); <= slots_.size()
  std::vector<Registered> registered_;  // sorted by address
  std::atomic<std::uint64_t> direct_ops_{0}, buffered_ops_{0}, unaligned_ops_{0}, sync_writes_{0}, errors_{0};
};

}  // namespace

Status uring_probe() {
  io_uring ring{};
  const int rc = io_uring_queue_init(1, &ring, 0);
  if (rc < 0) {
    return error(StatusCode::unavailable, "io_uring_setup refused: " + errno_text(-rc) +
                                              " (kernel too old, io_uring_disabled sysctl, or a seccomp policy)");
  }
  io_uring_queue_exit(&ring);
  return ok_status();
}

Result<std::unique_ptr<StorageBackend>> make_uring_storage_backend(const StorageTargetConfig& config) {
  Result<std::unique_ptr<ChunkFiles>> files = ChunkFiles::open(config, "uring");
  if (!files.ok()) return files.status();
  const int dir_fd = ::open(config.directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) {
    return error(StatusCode::unavailable, "uring target " + config.directory + ": open: " + errno_text(errno));
  }
  auto backend = std::make_unique<UringStorageBackend>(std::move(files).value(), dir_fd);
  Status st = backend->open();
  if (!st.ok()) return st;
  return std::unique_ptr<StorageBackend>(std::move(backend));
}

namespace {
[[maybe_unused]] const bool k_registered = register_storage_backend(
    StorageBackendEntry{"uring", [] { return uring_probe(); }, [] { return uring_capabilities(); },
                        [](const StorageTargetConfig& config) { return make_uring_storage_backend(config); }});
}  // namespace

}  // namespace sluice::hw

#else  // !SLUICE_HAVE_URING: the stub that says why

namespace sluice::hw {
namespace {
constexpr const char* k_why =
    "built without liburing (liburing-dev not found at configure time, or SLUICE_WITH_URING=OFF)";
}  // namespace

Status uring_probe() { return error(StatusCode::unavailable, k_why); }

Result<std::unique_ptr<StorageBackend>> make_uring_storage_backend(const StorageTargetConfig& /*config*/) {
  return error(StatusCode::unavailable, std::string("uring: ") + k_why);
}

namespace {
[[maybe_unused]] const bool k_registered = register_storage_backend(
    StorageBackendEntry{"uring", [] { return uring_probe(); }, [] { return StorageCapabilities{}; },
                        [](const StorageTargetConfig& config) { return make_uring_storage_backend(config); }});
}  // namespace

}  // namespace sluice::hw

#endif
