// MixedFiles: a workload rank that creates, writes, reads back (verifying
// the bytes where the world has them), lists and removes files of mixed
// sizes, some empty. Used by the shared services suite and the SimEnv
// determinism test.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/common/pattern.hpp"
#include "core/workloads/workload.hpp"

namespace sluice::testing::shared_suite {

// Runs body(i, done) for i in [0, n) with at most `concurrency` in flight, then all_done(first error).
class BoundedLoop : public std::enable_shared_from_this<BoundedLoop> {
 public:
  using Body = std::function<void(std::size_t, std::function<void(Status)>)>;
  BoundedLoop(std::size_t n, std::size_t concurrency, Body body, std::function<void(Status)> all_done)
      : n_(n), concurrency_(concurrency), body_(std::move(body)), all_done_(std::move(all_done)) {}
  void launch() {
    if (n_ == 0) return all_done_(ok_status());
    while (running_ < concurrency_ && next_ < n_) {
      const std::size_t i = next_++;
      ++running_;
      body_(i, [self = shared_from_this()](Status result) { self->arrive(std::move(result)); });
    }
  }

 private:
  void arrive(Status result) {
    if (!result.ok() && first_error_.ok()) first_error_ = std::move(result);
    --running_;
    if (++finished_ == n_) return all_done_(first_error_);
    launch();
  }
  std::size_t n_, concurrency_, next_ = 0, running_ = 0, finished_ = 0;
  Body body_;
  std::function<void(Status)> all_done_;
  Status first_error_;
};

inline void for_each_bounded(std::size_t n, std::size_t concurrency, BoundedLoop::Body body,
                             std::function<void(Status)> all_done) {
  std::make_shared<BoundedLoop>(n, concurrency, std::move(body), std::move(all_done))->launch();
}

struct MixedFilesSpec {
  std::size_t files = 300;
  std::size_t concurrency = 16;
  std::vector<std::uint64_t> sizes{1, 4 * k_kib, 100 * k_kib, 512 * k_kib, 1 * k_mib + 17, 3 * k_mib, 0};
};

// Per rank: mkdir /rN, create+write+close, stat, read back + verify, readdir, unlink, rmdir.
class MixedFiles final : public Workload {
 public:
  explicit MixedFiles(MixedFilesSpec spec) : spec_(std::move(spec)) {}
  std::string name() const override { return "mixed_files"; }

  std::uint64_t bytes_written = 0, bytes_read = 0;
  std::size_t listed = 0;

  void start(WorkloadContext& ctx, std::function<void(Status)> done) override {
    ctx_ = &ctx;
    done_ = std::move(done);
    dir_ = "/r" + std::to_string(ctx.rank);
    ctx.client.mkdir(dir_, 0755, [this](Result<proto::InodeDesc> r) {
      if (!r.ok()) return done_(r.status());
      write_all();
    });
  }

 private:
  std::string path(std::size_t i) const { return dir_ + "/f" + std::to_string(i); }
  std::uint64_t size(std::size_t i) const { return spec_.sizes[i % spec_.sizes.size()]; }
  std::uint64_t seed(std::size_t i) const { return (std::uint64_t{ctx_->rank} << 32) | i; }
  // A region of exactly `bytes` (an empty file gets an empty slice of a 1-byte region).
  Result<MemHandle> alloc_exact(std::uint64_t bytes) {
    Result<MemHandle> region = ctx_->env.alloc(MemKind::host, 0, std::max<std::uint64_t>(bytes, 1));
    if (!region.ok()) return region;
    return region->slice(0, bytes);
  }

  void write_all() {
    for_each_bounded(
        spec_.files, spec_.concurrency,
        [this](std::size_t i, std::function<void(Status)> next) {
          ctx_->client.create(path(i), CreateOptions{}, [this, i, next](Result<proto::InodeDesc> inode) {
            if (!inode.ok()) return next(inode.status());
            Result<MemHandle> buf = alloc_exact(size(i));
            if (!buf.ok()) return next(buf.status());
            ctx_->ops.expect(ctx_->env.fill(*buf, PatternSpec{seed(i), 0}),
                             [this, i, next, buf = *buf, inode = *inode](Completion&) {
                               ctx_->client.write(inode, 0, buf, false, [this, i, next, buf](Result<std::uint64_t> n) {
                                 ctx_->env.free(buf);
                                 if (!n.ok()) return next(n.status());
                                 bytes_written += *n;
                                 ctx_->client.close(path(i), size(i), next);
                               });
                             });
          });
        },
        [this](Status s) {
          if (!s.ok()) return done_(s);
          read_all();
        });
  }

  void read_all() {
    for_each_bounded(
        spec_.files, spec_.concurrency,
        [this](std::size_t i, std::function<void(Status)> next) {
          ctx_->client.stat(path(i), [this, i, next](Result<proto::InodeDesc> inode) {
            if (!inode.ok()) return next(inode.status());
            if (inode->size_bytes != size(i)) {
              return next(error(StatusCode::internal, path(i) + " has size " + std::to_string(inode->size_bytes)));
            }
            Result<MemHandle> buf = alloc_exact(size(i));
            if (!buf.ok()) return next(buf.status());
            ctx_->client.read(*inode, 0, *buf, [this, i, next, buf = *buf](Result<std::uint64_t> n) {
              if (!n.ok() || *n != size(i)) {
                ctx_->env.free(buf);
                return next(n.ok() ? error(StatusCode::internal, "short read of " + path(i)) : n.status());
              }
              bytes_read += *n;
              ctx_->ops.expect(ctx_->env.verify(buf, PatternSpec{seed(i), 0}), [this, next, buf](Completion& c) {
                ctx_->env.free(buf);
                next(c.status);
              });
            });
          });
        },
        [this](Status s) {
          if (!s.ok()) return done_(s);
          list_and_remove();
        });
  }

  void list_and_remove() {
    ctx_->client.readdir(dir_, true, [this](Result<std::vector<proto::DirEntryDesc>> entries) {
      if (!entries.ok()) return done_(entries.status());
      listed = entries->size();
      for_each_bounded(
          spec_.files, spec_.concurrency,
          [this](std::size_t i, std::function<void(Status)> next) { ctx_->client.unlink(path(i), next); },
          [this](Status s) {
            if (!s.ok()) return done_(s);
            ctx_->client.rmdir(dir_, done_);
          });
    });
  }

  MixedFilesSpec spec_;
  WorkloadContext* ctx_ = nullptr;
  std::function<void(Status)> done_;
  std::string dir_;
};

}  // namespace sluice::testing::shared_suite
