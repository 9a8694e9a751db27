#include "core/workloads/gpu_stream.hpp"

#include <utility>

#include "core/workloads/workload_limits.hpp"

namespace sluice {

std::string_view to_string(StreamDirection direction) {
  return direction == StreamDirection::record ? "record" : "playback";
}

Status GpuStream::validate(const StreamConfig& c) {
  const std::string where = "stream config";
  if (Status s = check_run_tag(where, c.run_tag); !s.ok()) return s;
  if (Status s = check_limit(where, "buffer_bytes", c.buffer_bytes, 1, k_workload_max_block_bytes); !s.ok()) return s;
  if (Status s = check_limit(where, "buffers", c.buffers, 1, k_workload_max_items_per_rank); !s.ok()) return s;
  if (Status s = check_limit(where, "buffers_in_flight", c.buffers_in_flight, 1, k_workload_max_inflight); !s.ok()) {
    return s;
  }
  if (c.buffers > k_workload_max_bytes_per_rank / c.buffer_bytes) {
    return error(StatusCode::invalid_argument, where + ": buffers * buffer_bytes exceeds " +
                                                   std::to_string(k_workload_max_bytes_per_rank) + " bytes per rank");
  }
  if (c.compute_ns_per_buffer < 0) {
    return error(StatusCode::invalid_argument, where + ": compute_ns_per_buffer is negative");
  }
  if (c.dir.empty() || c.dir.front() != '/' || c.dir == "/") {
    return error(StatusCode::invalid_argument, where + ": dir '" + c.dir + "' must be an absolute path below /");
  }
  return ok_status();
}

void GpuStream::start(WorkloadContext& context, std::function<void(Status)> done) {
  ctx_ = &context;
  if (Status s = validate(config_); !s.ok()) return defer_status(context, std::move(done), s);
  buffers_ = std::make_unique<BufferPool>(context.env);
  if (Status s = buffers_->allocate(context, MemKind::gpu, config_.buffers_in_flight, config_.buffer_bytes); !s.ok()) {
    return defer_status(context, std::move(done), annotate(s, "stream rank " + std::to_string(context.rank)));
  }
  const std::string tag = "stream" + config_.run_tag + ".";
  std::vector<Step> steps;
  if (context.rank == 0) {
    steps.push_back([this](StatusFn next) {
      ctx_->client.mkdir(config_.dir, 0755, [this, next](Result<proto::InodeDesc> r) {
        next(annotate(ok_if_exists(r.status()), "stream mkdir " + config_.dir));
      });
    });
  }
  steps.push_back([this, tag](StatusFn next) { barrier(*ctx_, tag + "setup", config_.barrier_max_wait_ns, next); });
  steps.push_back([this](StatusFn next) { prepare(std::move(next)); });
  steps.push_back([this, tag](StatusFn next) {
    barrier(*ctx_, tag + std::string(to_string(config_.direction)), config_.barrier_max_wait_ns, next);
  });
  steps.push_back([this](StatusFn next) { stream(std::move(next)); });
  steps.push_back([this, tag](StatusFn next) { barrier(*ctx_, tag + "end", config_.barrier_max_wait_ns, next); });
  if (config_.remove_file) {
    steps.push_back([this](StatusFn next) {
      const std::string path = file_path(ctx_->rank);
      ctx_->client.unlink(path, [path, next](Status s) { next(annotate(s, "stream unlink " + path)); });
    });
  }
  run_steps(std::move(steps), [this, done = std::move(done)](Status s) {
    buffers_->release();
    done(std::move(s));
  });
}

void GpuStream::prepare(StatusFn done) {
  const std::string path = file_path(ctx_->rank);
  const bool write_first = config_.direction == StreamDirection::playback && config_.prepare_playback_file;
  if (config_.direction == StreamDirection::playback && !write_first) {
    ctx_->client.stat(path, [this, path, done](Result<proto::InodeDesc> r) {
      if (!r.ok()) return done(annotate(r.status(), "stream open " + path));
      inode_ = *r;
      done(ok_status());
    });
    return;
  }
  ctx_->client.create(path, config_.create, [this, path, write_first, done](Result<proto::InodeDesc> r) {
    if (!r.ok()) return done(annotate(r.status(), "stream create " + path));
    inode_ = *r;
    if (!write_first) return done(ok_status());
    const std::uint64_t total = config_.buffers * config_.buffer_bytes;
    for_each_bounded(
        config_.buffers, config_.buffers_in_flight,
        [this](std::uint64_t i, StatusFn d) {
          Result<MemHandle> buffer = buffers_->take();
          if (!buffer.ok()) return d(buffer.status());
          const std::uint64_t offset = i * config_.buffer_bytes;
          auto finish = [this, b = *buffer, d](const Status& s) {
            buffers_->give(b);
            d(annotate(s, "stream prepare"));
          };
          auto write = [this, b = *buffer, offset, finish]() {
            ctx_->client.write(inode_, offset, b, false, [finish, length = b.length](Result<std::uint64_t> n) {
              if (n.ok() && *n != length) return finish(error(StatusCode::io_error, "short write"));
              finish(n.status());
            });
          };
          if (!config_.pattern_data) return write();
          ctx_->ops.expect(ctx_->env.fill(*buffer, PatternSpec{file_seed(ctx_->rank), offset}),
                           [write, finish](Completion& c) {
                             if (!c.status.ok()) return finish(c.status);
                             write();
                           });
        },
        [this, path, total, done](Status s) {
          if (!s.ok()) return done(s);
          ctx_->client.close(path, total, [this, path, total, done](Status c) {
            if (!c.ok()) return done(annotate(c, "stream close " + path));
            inode_.size_bytes = total;  // what the close just recorded
            done(ok_status());
          });
        });
  });
}

void GpuStream::stream(StatusFn done) {
  const bool record = config_.direction == StreamDirection::record;
  recorder_ = std::make_unique<PhaseRecorder>(ctx_->env, name(), std::string(to_string(config_.direction)), ctx_->rank);
  recorder_->start();
  auto finish = [this, done](Status s) {
    RankPhaseResult result = recorder_->finish();
    if (s.ok() && result.elapsed_ns > 0) {
      recorder_->sample("mb_per_s", static_cast<double>(result.bytes) * 1e3 / static_cast<double>(result.elapsed_ns));
    }
    results_.push_back(std::move(result));
    done(std::move(s));
  };
  for_each_bounded(
      config_.buffers, config_.buffers_in_flight,
      [this, record](std::uint64_t i, StatusFn d) {
        if (record) return record_buffer(i, std::move(d));
        playback_buffer(i, std::move(d));
      },
      [this, record, finish](Status s) {
        if (!s.ok() || !record) return finish(std::move(s));
        const std::string path = file_path(ctx_->rank);
        ctx_->client.close(path, config_.buffers * config_.buffer_bytes, [this, path, finish](Status c) {
          if (c.ok()) recorder_->touch();
          finish(annotate(c, "stream close " + path));
        });
      });
}

void GpuStream::record_buffer(std::uint64_t index, StatusFn done) {
  Result<MemHandle> buffer = buffers_->take();
  if (!buffer.ok()) return done(buffer.status());
  const MemHandle b = *buffer;
  const std::uint64_t offset = index * config_.buffer_bytes;
  auto finish = [this, b, done](const Status& s) {
    buffers_->give(b);
    done(s);
  };
  auto write = [this, b, offset, finish]() {
    const TimeNs issued = ctx_->env.now();
    ctx_->client.write(inode_, offset, b, config_.sync_writes,
                       [this, b, offset, issued, finish](Result<std::uint64_t> n) {
                         const std::string where = "stream record write at " + std::to_string(offset);
                         if (!n.ok()) return finish(annotate(n.status(), where));
                         if (*n != b.length) return finish(error(StatusCode::io_error, where + ": short write"));
                         recorder_->op(b.length, issued);
                         finish(ok_status());
                       });
  };
  gpu_compute([this, b, offset, write, finish](Status s) {
    if (!s.ok()) return finish(s);
    if (!config_.pattern_data) return write();
    ctx_->ops.expect(ctx_->env.fill(b, PatternSpec{file_seed(ctx_->rank), offset}), [write, finish](Completion& c) {
      if (!c.status.ok()) return finish(annotate(c.status, "stream record fill"));
      write();
    });
  });
}

void GpuStream::playback_buffer(std::uint64_t index, StatusFn done) {
  Result<MemHandle> buffer = buffers_->take();
  if (!buffer.ok()) return done(buffer.status());
  const MemHandle b = *buffer;
  const std::uint64_t offset = index * config_.buffer_bytes;
  auto finish = [this, b, done](const Status& s) {
    buffers_->give(b);
    done(s);
  };
  const TimeNs issued = ctx_->env.now();
  ctx_->client.read(inode_, offset, b, [this, b, offset, issued, finish](Result<std::uint64_t> n) {
    const std::string where = "stream playback read at " + std::to_string(offset);
    if (!n.ok()) return finish(annotate(n.status(), where));
    if (*n != b.length) return finish(error(StatusCode::io_error, where + ": short read"));
    recorder_->op(b.length, issued);
    auto compute = [this, finish]() { gpu_compute(finish); };
    if (!config_.pattern_data) return compute();
    ctx_->ops.expect(ctx_->env.verify(b, PatternSpec{file_seed(ctx_->rank), offset}),
                     [where, compute, finish](Completion& c) {
                       if (!c.status.ok()) return finish(annotate(c.status, where));
                       compute();
                     });
  });
}

void GpuStream::gpu_compute(std::function<void(Status)> done) {
  if (config_.compute_ns_per_buffer == 0) return done(ok_status());
  gpu_queue_.push_back(std::move(done));
  pump_gpu();
}

void GpuStream::pump_gpu() {
  if (gpu_busy_ || gpu_queue_.empty()) return;
  gpu_busy_ = true;
  std::function<void(Status)> done = std::move(gpu_queue_.front());
  gpu_queue_.pop_front();
  const auto units = static_cast<std::uint64_t>(config_.compute_ns_per_buffer);
  ctx_->ops.expect(ctx_->env.compute(CostKind::workload_step, units), [this, done](Completion& c) {
    gpu_busy_ = false;
    recorder_->count("compute_ns", static_cast<double>(config_.compute_ns_per_buffer));
    recorder_->touch();
    pump_gpu();
    done(c.status);
  });
}

}  // namespace sluice
