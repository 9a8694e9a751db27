#include "core/workloads/stage_in.hpp"

#include <algorithm>
#include <utility>

#include "core/workloads/workload_limits.hpp"

namespace sluice {

struct StageIn::Job {
  std::uint64_t object = 0;
  std::string path;
  proto::InodeDesc inode;
  MemHandle buffer;
  std::uint64_t offset = 0;
  StatusFn done;
};

Status StageIn::validate(const StageInConfig& c) {
  const std::string where = "stage_in config";
  if (Status s = check_run_tag(where, c.run_tag); !s.ok()) return s;
  if (Status s = check_limit(where, "objects", c.objects, 0, k_workload_max_items_per_rank); !s.ok()) return s;
  if (Status s = check_limit(where, "object_bytes", c.object_bytes, 0, k_workload_max_bytes_per_rank); !s.ok()) {
    return s;
  }
  if (Status s = check_limit(where, "block_bytes", c.block_bytes, 1, k_workload_max_block_bytes); !s.ok()) return s;
  if (Status s = check_limit(where, "threads", c.threads, 1, k_workload_max_inflight); !s.ok()) return s;
  if (c.source_bytes_per_s_per_rank != 0) {
    const std::uint64_t burst = c.source_burst_bytes == 0 ? c.block_bytes : c.source_burst_bytes;
    if (Status s = check_limit(where, "source_bytes_per_s_per_rank", c.source_bytes_per_s_per_rank, 1,
                               sched::k_max_token_rate_bytes_per_s);
        !s.ok()) {
      return s;
    }
    if (Status s = check_limit(where, "source_burst_bytes", burst, c.block_bytes, sched::k_max_burst_bytes); !s.ok()) {
      return s;
    }
  }
  if (c.source_request_latency_ns < 0) {
    return error(StatusCode::invalid_argument, where + ": source_request_latency_ns is negative");
  }
  if (c.dir.empty() || c.dir.front() != '/' || c.dir == "/") {
    return error(StatusCode::invalid_argument, where + ": dir '" + c.dir + "' must be an absolute path below /");
  }
  return ok_status();
}

std::uint64_t StageIn::objects_of(std::uint32_t rank, std::uint32_t ranks) const {
  return config_.objects / ranks + (rank < config_.objects % ranks ? 1 : 0);
}

void StageIn::start(WorkloadContext& context, std::function<void(Status)> done) {
  ctx_ = &context;
  if (Status s = validate(config_); !s.ok()) return defer_status(context, std::move(done), s);
  if (config_.source_bytes_per_s_per_rank != 0) {
    const std::uint64_t burst = config_.source_burst_bytes == 0 ? config_.block_bytes : config_.source_burst_bytes;
    Result<sched::TokenBucket> bucket =
        sched::TokenBucket::create(config_.source_bytes_per_s_per_rank, burst, context.env.now());
    if (!bucket.ok()) return defer_status(context, std::move(done), annotate(bucket.status(), "stage_in source"));
    source_ = *bucket;
  }
  buffers_ = std::make_unique<BufferPool>(context.env);
  const std::uint64_t buffer_bytes = std::max<std::uint64_t>(1, std::min(config_.block_bytes, config_.object_bytes));
  if (Status s = buffers_->allocate(context, config_.buffer_kind, config_.threads, buffer_bytes); !s.ok()) {
    return defer_status(context, std::move(done), annotate(s, "stage_in rank " + std::to_string(context.rank)));
  }
  std::vector<Step> steps;
  if (context.rank == 0) {
    steps.push_back([this](StatusFn next) {
      ctx_->client.mkdir(config_.dir, 0755, [this, next](Result<proto::InodeDesc> r) {
        next(annotate(ok_if_exists(r.status()), "stage_in mkdir " + config_.dir));
      });
    });
  }
  steps.push_back([this](StatusFn next) {
    barrier(*ctx_, "stage_in" + config_.run_tag + ".ingress", config_.barrier_max_wait_ns, std::move(next));
  });
  steps.push_back([this](StatusFn next) {
    recorder_ = std::make_unique<PhaseRecorder>(ctx_->env, name(), "ingress", ctx_->rank);
    recorder_->start();
    for_each_bounded(
        objects_of(ctx_->rank, ctx_->ranks), config_.threads,
        [this](std::uint64_t i, StatusFn d) { stage_object(i * ctx_->ranks + ctx_->rank, std::move(d)); },
        [this, next](Status s) {
          RankPhaseResult result = recorder_->finish();
          if (s.ok() && result.elapsed_ns > 0) {
            recorder_->sample("bytes_per_s",
                              static_cast<double>(result.bytes) * 1e9 / static_cast<double>(result.elapsed_ns));
          }
          results_.push_back(std::move(result));
          next(std::move(s));
        });
  });
  steps.push_back([this](StatusFn next) {
    barrier(*ctx_, "stage_in" + config_.run_tag + ".end", config_.barrier_max_wait_ns, std::move(next));
  });
  run_steps(std::move(steps), [this, done = std::move(done)](Status s) {
    buffers_->release();
    done(std::move(s));
  });
}

void StageIn::stage_object(std::uint64_t object, StatusFn done) {
  Result<MemHandle> buffer = buffers_->take();
  if (!buffer.ok()) return done(buffer.status());
  auto job = std::make_shared<Job>();
  job->object = object;
  job->path = object_path(object);
  job->buffer = *buffer;
  job->done = [this, b = *buffer, done](Status s) {
    buffers_->give(b);
    done(std::move(s));
  };
  ctx_->client.create(job->path, config_.create, [this, job](Result<proto::InodeDesc> r) {
    if (!r.ok()) return job->done(annotate(r.status(), "stage_in create " + job->path));
    job->inode = *r;
    next_block(job);
  });
}

void StageIn::next_block(const std::shared_ptr<Job>& job) {
  if (job->offset >= config_.object_bytes) {
    ctx_->client.close(job->path, config_.object_bytes, [this, job](Status s) {
      if (s.ok()) recorder_->touch();
      job->done(annotate(s, "stage_in close " + job->path));
    });
    return;
  }
  const std::uint64_t length = std::min(config_.block_bytes, config_.object_bytes - job->offset);
  const MemHandle slice = job->buffer.slice(0, length);
  const TimeNs issued = ctx_->env.now();
  // 1. the source budget, 2. the GET's first-byte latency, 3. the bytes
  // arrive (fill), 4. the write into the file system.
  auto write = [this, job, slice, length, issued]() {
    ctx_->client.write(job->inode, job->offset, slice, false, [this, job, length, issued](Result<std::uint64_t> n) {
      const std::string where = "stage_in write " + job->path + " at " + std::to_string(job->offset);
      if (!n.ok()) return job->done(annotate(n.status(), where));
      if (*n != length) return job->done(error(StatusCode::io_error, where + ": short write"));
      recorder_->op(length, issued);
      job->offset += length;
      next_block(job);
    });
  };
  auto arrive = [this, job, slice, write]() {
    if (!config_.pattern_data) return write();
    ctx_->ops.expect(ctx_->env.fill(slice, PatternSpec{object_seed(job->object), job->offset}),
                     [job, write](Completion& c) {
                       if (!c.status.ok()) return job->done(annotate(c.status, "stage_in GET " + job->path));
                       write();
                     });
  };
  acquire_source(length, [this, issued, arrive]() {
    recorder_->sample("source_wait_ns", static_cast<double>(ctx_->env.now() - issued));
    if (config_.source_request_latency_ns == 0) return arrive();
    ctx_->ops.expect(ctx_->env.timer(config_.source_request_latency_ns), [arrive](Completion&) { arrive(); });
  });
}

void StageIn::acquire_source(std::uint64_t bytes, std::function<void()> go) {
  if (!source_) return go();
  source_queue_.push_back(SourceRequest{bytes, std::move(go)});
  serve_source();
}

void StageIn::serve_source() {
  while (!source_waiting_ && !source_queue_.empty()) {
    const TimeNs now = ctx_->env.now();
    SourceRequest& head = source_queue_.front();
    Result<TimeNs> earliest = source_->earliest_start(now, head.bytes);
    // validate() keeps every request within the burst, so this cannot fail;
    // if it did, pacing would stop, so let the request go and say so.
    const TimeNs at = earliest.ok() ? *earliest : now;
    if (!earliest.ok()) ctx_->env.log(LogLevel::error, "stage_in source pacing: " + earliest.status().to_string());
    if (at > now) {
      source_waiting_ = true;
      ctx_->ops.expect(ctx_->env.timer(at - now), [this](Completion&) {
        source_waiting_ = false;
        serve_source();
      });
      return;
    }
    source_->consume(now, head.bytes).ignore();  // earliest_start said the tokens are there
    std::function<void()> go = std::move(head.go);
    source_queue_.pop_front();
    go();
  }
}

}  // namespace sluice
