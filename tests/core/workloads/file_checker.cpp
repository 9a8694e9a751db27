#include "tests/core/workloads/file_checker.hpp"

#include "core/workloads/workload_steps.hpp"

namespace sluice::testing {

void FileChecker::start(WorkloadContext& context, std::function<void(Status)> done) {
  ctx_ = &context;
  done_ = std::move(done);
  inodes_.resize(files_.size());
  defer(context, [this] { check(0); });
}

void FileChecker::check(std::size_t index) {
  if (index == files_.size()) return done_(ok_status());
  const CheckedFile& f = files_[index];
  ctx_->client.stat(f.path, [this, index](Result<proto::InodeDesc> inode) {
    const CheckedFile& file = files_[index];
    if (!inode.ok()) return done_(annotate(inode.status(), "stat " + file.path));
    inodes_[index] = *inode;
    if (inode->size_bytes != file.expected_bytes) {
      return done_(error(StatusCode::io_error, file.path + ": size " + std::to_string(inode->size_bytes) +
                                                   ", expected " + std::to_string(file.expected_bytes)));
    }
    if (!file.verify || file.expected_bytes == 0) return check(index + 1);
    Result<MemHandle> buffer = ctx_->env.alloc(MemKind::host, 0, file.expected_bytes);
    if (!buffer.ok()) return done_(buffer.status());
    const MemHandle b = *buffer;
    ctx_->client.read(*inode, 0, b, [this, index, b](Result<std::uint64_t> n) {
      const CheckedFile& checked = files_[index];
      if (!n.ok() || *n != checked.expected_bytes) {
        ctx_->env.free(b);
        return done_(n.ok() ? error(StatusCode::io_error, checked.path + ": short read") : n.status());
      }
      ctx_->ops.expect(ctx_->env.verify(b, PatternSpec{checked.seed, 0}), [this, index, b](Completion& c) {
        ctx_->env.free(b);
        if (!c.status.ok()) return done_(annotate(c.status, files_[index].path));
        check(index + 1);
      });
    });
  });
}

}  // namespace sluice::testing
