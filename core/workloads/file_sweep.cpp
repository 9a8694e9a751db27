#include "core/workloads/file_sweep.hpp"

#include <algorithm>
#include <memory>
#include <utility>

#include "core/common/assert.hpp"
#include "core/workloads/workload_limits.hpp"

namespace sluice {

std::string_view to_string(SweepPhase phase) {
  switch (phase) {
    case SweepPhase::mkdir: return "mkdir";
    case SweepPhase::write: return "write";
    case SweepPhase::read: return "read";
    case SweepPhase::stat: return "stat";
    case SweepPhase::delete_files: return "delete";
    case SweepPhase::rmdir: return "rmdir";
  }
  return "unknown";
}

// One file being written or read block by block by one of the rank's "threads".
namespace {

// One block of a file in flight: its place in the file, its part of the
// file's buffer, and finish, which gives that part back and ends the block.
struct BlockIo {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  MemHandle slice;
  StatusFn finish;
};

// A block I/O's result: ok when it moved all `length` bytes, else the error
// naming where (`verb`: "wrote" or "got").
Status whole_block(const Result<std::uint64_t>& n, std::uint64_t length, const std::string& where, const char* verb) {
  if (!n.ok()) return annotate(n.status(), where);
  if (*n == length) return ok_status();
  return error(StatusCode::io_error,
               where + ": " + verb + " " + std::to_string(*n) + " of " + std::to_string(length) + " bytes");
}

}  // namespace

// The job's buffer holds iodepth slots of slot_bytes, one per block in flight.
struct FileSweep::FileJob : std::enable_shared_from_this<FileSweep::FileJob> {
  std::string path;
  std::uint64_t seed = 0;
  proto::InodeDesc inode;
  MemHandle buffer;
  std::uint64_t slot_bytes = 0;
  std::vector<std::uint32_t> free_slots;  // taken from the back: slot 0 first
  StatusFn done;

  // Block `block` (of block_bytes, the last one cut at file_bytes) in a free slot; its finish calls done.
  BlockIo begin(std::uint64_t block, std::uint64_t block_bytes, std::uint64_t file_bytes, StatusFn block_done) {
    SLUICE_ASSERT_MSG(!free_slots.empty(), "file_sweep: more blocks in flight on a file than its iodepth");
    BlockIo io;
    io.offset = block * block_bytes;
    io.length = std::min(block_bytes, file_bytes - io.offset);
    const std::uint32_t slot = free_slots.back();
    free_slots.pop_back();
    io.slice = buffer.slice(slot * slot_bytes, io.length);
    io.finish = [job = shared_from_this(), slot, block_done = std::move(block_done)](Status s) {
      job->free_slots.push_back(slot);
      block_done(std::move(s));
    };
    return io;
  }
};

Status FileSweep::validate(const FileSweepConfig& c) {
  const std::string where = "file_sweep config";
  if (Status s = check_run_tag(where, c.run_tag); !s.ok()) return s;
  if (Status s = check_limit(where, "threads", c.threads, 1, k_workload_max_inflight); !s.ok()) return s;
  if (Status s = check_limit(where, "iodepth", c.iodepth, 1, k_workload_max_inflight); !s.ok()) return s;
  if (Status s =
          check_limit(where, "threads x iodepth", std::uint64_t{c.threads} * c.iodepth, 1, k_workload_max_inflight);
      !s.ok()) {
    return s;
  }
  if (Status s = check_limit(where, "dirs_per_rank", c.dirs_per_rank, 1, k_workload_max_items_per_rank); !s.ok()) {
    return s;
  }
  if (Status s = check_limit(where, "files_per_rank", c.files_per_rank, 0, k_workload_max_items_per_rank); !s.ok()) {
    return s;
  }
  if (Status s = check_limit(where, "file_bytes", c.file_bytes, 0, k_workload_max_bytes_per_rank); !s.ok()) return s;
  if (Status s = check_limit(where, "block_bytes", c.block_bytes, 1, k_workload_max_block_bytes); !s.ok()) return s;
  if (c.root_dir.empty() || c.root_dir.front() != '/' || c.root_dir == "/") {
    return error(StatusCode::invalid_argument,
                 where + ": root_dir '" + c.root_dir + "' must be an absolute path below /");
  }
  return ok_status();
}

std::string FileSweep::rank_dir(std::uint32_t rank) const { return config_.root_dir + "/r" + std::to_string(rank); }

std::string FileSweep::sub_dir(std::uint32_t rank, std::uint32_t dir) const {
  return rank_dir(rank) + "/d" + std::to_string(dir);
}

std::string FileSweep::file_path(std::uint32_t rank, std::uint64_t index) const {
  return sub_dir(rank, static_cast<std::uint32_t>(index % config_.dirs_per_rank)) + "/f" + std::to_string(index);
}

std::uint64_t FileSweep::file_seed(std::uint32_t rank, std::uint64_t index) const {
  return derive_seed(config_.pattern_seed, rank, index);
}

bool FileSweep::has_phase(SweepPhase phase) const {
  return std::find(config_.phases.begin(), config_.phases.end(), phase) != config_.phases.end();
}

std::string FileSweep::barrier_name(std::string_view what) const {
  return "file_sweep" + config_.run_tag + "." + std::string(what);
}

void FileSweep::start(WorkloadContext& context, std::function<void(Status)> done) {
  ctx_ = &context;
  if (Status s = validate(config_); !s.ok()) return defer_status(context, std::move(done), s);
  std::vector<Step> steps;
  steps.push_back([this](StatusFn next) { setup(std::move(next)); });
  for (SweepPhase phase : config_.phases) {
    steps.push_back([this, phase](StatusFn next) { run_phase(phase, std::move(next)); });
  }
  steps.push_back([this](StatusFn next) { teardown(std::move(next)); });
  run_steps(std::move(steps), [this, done = std::move(done)](Status s) {
    if (buffers_) buffers_->release();
    done(std::move(s));
  });
}

void FileSweep::setup(StatusFn done) {
  if (has_phase(SweepPhase::write) || has_phase(SweepPhase::read)) {
    buffers_ = std::make_unique<BufferPool>(ctx_->env);
    // One buffer per file in flight, of one slot per block in flight.
    const std::uint64_t buffer_bytes = slot_bytes() * config_.iodepth;
    if (Status s = buffers_->allocate(*ctx_, config_.buffer_kind, config_.threads, buffer_bytes); !s.ok()) {
      return defer_status(*ctx_, std::move(done), annotate(s, "file_sweep rank " + std::to_string(ctx_->rank)));
    }
  }
  auto wait = [this, done](Status s) {
    if (!s.ok()) return done(s);
    barrier(*ctx_, barrier_name("setup"), config_.barrier_max_wait_ns, done);
  };
  if (ctx_->rank != 0 || !has_phase(SweepPhase::mkdir)) return wait(ok_status());
  ctx_->client.mkdir(config_.root_dir, 0755, [this, wait](Result<proto::InodeDesc> r) {
    wait(annotate(ok_if_exists(r.status()), "file_sweep mkdir " + config_.root_dir));
  });
}

void FileSweep::teardown(StatusFn done) {
  barrier(*ctx_, barrier_name("end"), config_.barrier_max_wait_ns, [this, done](Status s) {
    if (!s.ok()) return done(s);
    if (ctx_->rank != 0 || !has_phase(SweepPhase::rmdir) || !config_.remove_root) return done(ok_status());
    ctx_->client.rmdir(config_.root_dir,
                       [this, done](Status r) { done(annotate(r, "file_sweep rmdir " + config_.root_dir)); });
  });
}

void FileSweep::run_phase(SweepPhase phase, StatusFn done) {
  auto start = [this, phase, done](Status flushed) {
    if (!flushed.ok()) return done(flushed);
    barrier(*ctx_, barrier_name(to_string(phase)), config_.barrier_max_wait_ns, [this, phase, done](Status s) {
      if (!s.ok()) return done(s);
      recorder_ = std::make_unique<PhaseRecorder>(ctx_->env, name(), std::string(to_string(phase)), ctx_->rank);
      recorder_->start();
      phase_body(phase, [this, done](Status body) {
        results_.push_back(recorder_->finish());
        done(std::move(body));
      });
    });
  };
  if (config_.between_phases == BetweenPhases::sync_dropcache) {
    return sync_dropcache(*ctx_, name(), barrier_name(std::string(to_string(phase)) + ".sync"),
                          config_.barrier_max_wait_ns, std::move(start));
  }
  start(ok_status());
}

void FileSweep::phase_body(SweepPhase phase, StatusFn done) {
  const std::uint32_t threads = config_.threads;
  switch (phase) {
    case SweepPhase::write:
      return for_each_bounded(
          config_.files_per_rank, threads, [this](std::uint64_t i, StatusFn d) { write_file(i, std::move(d)); },
          std::move(done));
    case SweepPhase::read:
      return for_each_bounded(
          config_.files_per_rank, threads, [this](std::uint64_t i, StatusFn d) { read_file(i, std::move(d)); },
          std::move(done));
    case SweepPhase::stat:
    case SweepPhase::delete_files:
      return for_each_bounded(
          config_.files_per_rank, threads,
          [this, phase](std::uint64_t i, StatusFn d) { entry_op(phase, i, std::move(d)); }, std::move(done));
    case SweepPhase::mkdir: {
      const std::string dir = rank_dir(ctx_->rank);
      const TimeNs issued = ctx_->env.now();
      ctx_->client.mkdir(dir, 0755, [this, dir, issued, threads, done](Result<proto::InodeDesc> r) {
        if (!r.ok()) return done(annotate(r.status(), "file_sweep mkdir " + dir));
        recorder_->op(0, issued);
        for_each_bounded(
            config_.dirs_per_rank, threads,
            [this](std::uint64_t j, StatusFn d) { entry_op(SweepPhase::mkdir, j, std::move(d)); }, done);
      });
      return;
    }
    case SweepPhase::rmdir:
      for_each_bounded(
          config_.dirs_per_rank, threads,
          [this](std::uint64_t j, StatusFn d) { entry_op(SweepPhase::rmdir, j, std::move(d)); },
          [this, done](Status s) {
            if (!s.ok()) return done(s);
            const std::string dir = rank_dir(ctx_->rank);
            const TimeNs issued = ctx_->env.now();
            ctx_->client.rmdir(dir, [this, dir, issued, done](Status r) {
              if (!r.ok()) return done(annotate(r, "file_sweep rmdir " + dir));
              recorder_->op(0, issued);
              done(ok_status());
            });
          });
      return;
  }
}

// mkdir/rmdir of subdirectory `index`; stat/unlink of file `index`.
void FileSweep::entry_op(SweepPhase phase, std::uint64_t index, StatusFn done) {
  const TimeNs issued = ctx_->env.now();
  const auto rank = ctx_->rank;
  auto finish = [this, issued, done](const Status& s, const std::string& what) {
    if (!s.ok()) return done(annotate(s, "file_sweep " + what));
    recorder_->op(0, issued);
    done(ok_status());
  };
  switch (phase) {
    case SweepPhase::mkdir: {
      const std::string dir = sub_dir(rank, static_cast<std::uint32_t>(index));
      ctx_->client.mkdir(dir, 0755, [finish, dir](Result<proto::InodeDesc> r) { finish(r.status(), "mkdir " + dir); });
      return;
    }
    case SweepPhase::rmdir: {
      const std::string dir = sub_dir(rank, static_cast<std::uint32_t>(index));
      ctx_->client.rmdir(dir, [finish, dir](Status r) { finish(r, "rmdir " + dir); });
      return;
    }
    case SweepPhase::stat: {
      const std::string path = file_path(rank, index);
      const bool check_size = has_phase(SweepPhase::write);
      ctx_->client.stat(path, [this, finish, path, check_size](Result<proto::InodeDesc> r) {
        if (!r.ok()) return finish(r.status(), "stat " + path);
        if (r->type != proto::InodeType::file) {
          return finish(error(StatusCode::is_a_directory, "not a file"), "stat " + path);
        }
        if (check_size && r->size_bytes != config_.file_bytes) {
          return finish(error(StatusCode::io_error, "size " + std::to_string(r->size_bytes) + " bytes, wrote " +
                                                        std::to_string(config_.file_bytes)),
                        "stat " + path);
        }
        finish(ok_status(), "stat " + path);
      });
      return;
    }
    case SweepPhase::delete_files: {
      const std::string path = file_path(rank, index);
      ctx_->client.unlink(path, [finish, path](Status r) { finish(r, "unlink " + path); });
      return;
    }
    case SweepPhase::write:
    case SweepPhase::read: break;
  }
  done(error(StatusCode::internal, "file_sweep: entry_op for a data phase"));
}

std::shared_ptr<FileSweep::FileJob> FileSweep::make_job(std::uint64_t index, MemHandle buffer, StatusFn done) {
  auto job = std::make_shared<FileJob>();
  job->path = file_path(ctx_->rank, index);
  job->seed = file_seed(ctx_->rank, index);
  job->buffer = buffer;
  job->slot_bytes = slot_bytes();
  for (std::uint32_t slot = config_.iodepth; slot > 0; --slot) job->free_slots.push_back(slot - 1);
  job->done = [this, buffer, done = std::move(done)](Status s) {
    buffers_->give(buffer);
    if (s.ok()) recorder_->count("files", 1);
    done(std::move(s));
  };
  return job;
}

std::uint64_t FileSweep::slot_bytes() const {
  return std::max<std::uint64_t>(1, std::min(config_.block_bytes, config_.file_bytes));
}

void FileSweep::write_file(std::uint64_t index, StatusFn done) {
  Result<MemHandle> buffer = buffers_->take();
  if (!buffer.ok()) return done(buffer.status());
  auto job = make_job(index, *buffer, std::move(done));
  ctx_->client.create(job->path, config_.create, [this, job](Result<proto::InodeDesc> r) {
    if (!r.ok()) return job->done(annotate(r.status(), "file_sweep create " + job->path));
    job->inode = *r;
    each_block(job, SweepPhase::write);
  });
}

void FileSweep::read_file(std::uint64_t index, StatusFn done) {
  Result<MemHandle> buffer = buffers_->take();
  if (!buffer.ok()) return done(buffer.status());
  auto job = make_job(index, *buffer, std::move(done));
  ctx_->client.stat(job->path, [this, job](Result<proto::InodeDesc> r) {
    if (!r.ok()) return job->done(annotate(r.status(), "file_sweep open " + job->path));
    job->inode = *r;
    each_block(job, SweepPhase::read);
  });
}

void FileSweep::each_block(const std::shared_ptr<FileJob>& job, SweepPhase phase) {
  const std::uint64_t blocks = (config_.file_bytes + config_.block_bytes - 1) / config_.block_bytes;
  auto block = [this, job, phase](std::uint64_t k, StatusFn d) {
    if (phase == SweepPhase::write) return write_block(job, k, std::move(d));
    read_block(job, k, std::move(d));
  };
  for_each_bounded(blocks, config_.iodepth, block, [this, job, phase](Status s) {
    if (!s.ok()) return job->done(std::move(s));
    auto closed = [job](Status c) { job->done(annotate(c, "file_sweep close " + job->path)); };
    if (phase == SweepPhase::write) return ctx_->client.close(job->path, config_.file_bytes, closed);
    ctx_->client.close_unchanged(job->path, closed);
  });
}

void FileSweep::write_block(const std::shared_ptr<FileJob>& job, std::uint64_t block, StatusFn done) {
  const BlockIo io = job->begin(block, config_.block_bytes, config_.file_bytes, std::move(done));
  auto issue = [this, job, io]() {
    const TimeNs issued = ctx_->env.now();
    ctx_->client.write(job->inode, io.offset, io.slice, config_.sync_writes,
                       [this, job, io, issued](Result<std::uint64_t> n) {
                         const std::string where = "file_sweep write " + job->path + " at " + std::to_string(io.offset);
                         if (Status s = whole_block(n, io.length, where, "wrote"); !s.ok()) return io.finish(s);
                         recorder_->op(io.length, issued);
                         io.finish(ok_status());
                       });
  };
  if (!config_.pattern_data) return issue();
  ctx_->ops.expect(ctx_->env.fill(io.slice, PatternSpec{job->seed, io.offset}), [job, io, issue](Completion& c) {
    if (!c.status.ok()) return io.finish(annotate(c.status, "file_sweep fill for " + job->path));
    issue();
  });
}

void FileSweep::read_block(const std::shared_ptr<FileJob>& job, std::uint64_t block, StatusFn done) {
  const BlockIo io = job->begin(block, config_.block_bytes, config_.file_bytes, std::move(done));
  const TimeNs issued = ctx_->env.now();
  ctx_->client.read(job->inode, io.offset, io.slice, [this, job, io, issued](Result<std::uint64_t> n) {
    const std::string where = "file_sweep read " + job->path + " at " + std::to_string(io.offset);
    if (Status s = whole_block(n, io.length, where, "got"); !s.ok()) return io.finish(s);
    recorder_->op(io.length, issued);
    if (!config_.pattern_data) return io.finish(ok_status());
    ctx_->ops.expect(ctx_->env.verify(io.slice, PatternSpec{job->seed, io.offset}), [this, where, io](Completion& c) {
      if (!c.status.ok()) return io.finish(annotate(c.status, where));
      if (c.bytes == io.length) recorder_->count("verified_bytes", static_cast<double>(io.length));
      io.finish(ok_status());
    });
  });
}

}  // namespace sluice
