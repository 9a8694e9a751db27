#include "core/workloads/checkpoint_burst.hpp"

#include <algorithm>
#include <utility>

#include "core/workloads/workload_limits.hpp"

namespace sluice {

Status CheckpointBurst::validate(const CheckpointConfig& c) {
  const std::string where = "checkpoint config";
  if (Status s = check_run_tag(where, c.run_tag); !s.ok()) return s;
  if (Status s = check_limit(where, "shard_bytes", c.shard_bytes, 1, k_workload_max_bytes_per_rank); !s.ok()) return s;
  if (Status s = check_limit(where, "files_per_rank", c.files_per_rank, 1, k_workload_max_inflight); !s.ok()) return s;
  if (Status s = check_limit(where, "block_bytes", c.block_bytes, 1, k_workload_max_block_bytes); !s.ok()) return s;
  if (Status s = check_limit(where, "inflight_blocks", c.inflight_blocks, 1, k_workload_max_inflight); !s.ok()) {
    return s;
  }
  if (Status s = check_limit(where, "checkpoints", c.checkpoints, 1, k_checkpoint_max_bursts); !s.ok()) return s;
  if (Status s = check_limit(where, "read_checkpoints", c.read_checkpoints, 1, k_checkpoint_max_bursts); !s.ok()) {
    return s;
  }
  if (c.read_back && c.read_checkpoints > c.checkpoints) {
    return error(StatusCode::invalid_argument, where + ": read_checkpoints " + std::to_string(c.read_checkpoints) +
                                                   " exceeds checkpoints " + std::to_string(c.checkpoints));
  }
  if (c.files_per_rank > c.shard_bytes) {
    return error(StatusCode::invalid_argument, where + ": files_per_rank " + std::to_string(c.files_per_rank) +
                                                   " exceeds shard_bytes " + std::to_string(c.shard_bytes));
  }
  if (c.dir.empty() || c.dir.front() != '/' || c.dir == "/") {
    return error(StatusCode::invalid_argument, where + ": dir '" + c.dir + "' must be an absolute path below /");
  }
  return ok_status();
}

std::string CheckpointBurst::file_path(std::uint32_t checkpoint, std::uint32_t rank, std::uint32_t file) const {
  return config_.dir + "/c" + std::to_string(checkpoint) + ".r" + std::to_string(rank) + "." + std::to_string(file);
}

std::uint64_t CheckpointBurst::file_bytes(std::uint32_t file) const {
  const std::uint64_t even = config_.shard_bytes / config_.files_per_rank;
  return file + 1 == config_.files_per_rank ? config_.shard_bytes - even * file : even;
}

std::uint64_t CheckpointBurst::file_offset_in_shard(std::uint32_t file) const {
  return config_.shard_bytes / config_.files_per_rank * file;
}

std::uint64_t CheckpointBurst::file_seed(std::uint32_t file) const {
  return derive_seed(config_.pattern_seed, ctx_->rank, file);
}

void CheckpointBurst::start(WorkloadContext& context, std::function<void(Status)> done) {
  ctx_ = &context;
  if (Status s = validate(config_); !s.ok()) return defer_status(context, std::move(done), s);
  for (std::uint32_t f = 0; f < config_.files_per_rank; ++f) {
    for (std::uint64_t off = 0; off < file_bytes(f); off += config_.block_bytes) {
      blocks_.push_back(Block{f, off, std::min(config_.block_bytes, file_bytes(f) - off)});
    }
  }
  std::vector<Step> steps;
  steps.push_back([this](StatusFn next) { setup(std::move(next)); });
  for (std::uint32_t c = 0; c < config_.checkpoints; ++c) {
    steps.push_back([this, c](StatusFn next) { burst(c, std::move(next)); });
  }
  if (config_.read_back) {
    steps.push_back([this](StatusFn next) { allocate_read_buffers(std::move(next)); });
    for (std::uint32_t c = config_.checkpoints - config_.read_checkpoints; c < config_.checkpoints; ++c) {
      steps.push_back([this, c](StatusFn next) { read_back(c, std::move(next)); });
    }
  }
  steps.push_back([this](StatusFn next) {
    barrier(*ctx_, "checkpoint" + config_.run_tag + ".end", config_.barrier_max_wait_ns, std::move(next));
  });
  run_steps(std::move(steps), [this, done = std::move(done)](Status s) {
    if (shard_allocated_) ctx_->env.free(shard_);
    shard_allocated_ = false;
    if (read_buffers_) read_buffers_->release();
    done(std::move(s));
  });
}

void CheckpointBurst::setup(StatusFn done) {
  Result<MemHandle> shard =
      ctx_->env.alloc(config_.source_kind, home_device(*ctx_, config_.source_kind), config_.shard_bytes);
  if (!shard.ok()) return defer_status(*ctx_, std::move(done), annotate(shard.status(), "checkpoint shard"));
  shard_ = *shard;
  shard_allocated_ = true;
  std::vector<Step> steps;
  if (config_.pattern_data) {
    steps.push_back([this](StatusFn next) {
      for_each_bounded(
          config_.files_per_rank, config_.files_per_rank,
          [this](std::uint64_t f, StatusFn d) {
            const auto file = static_cast<std::uint32_t>(f);
            const MemHandle slice = shard_.slice(file_offset_in_shard(file), file_bytes(file));
            ctx_->ops.expect(ctx_->env.fill(slice, PatternSpec{file_seed(file), 0}),
                             [d](Completion& c) { d(annotate(c.status, "checkpoint fill of the shard")); });
          },
          std::move(next));
    });
  }
  if (ctx_->rank == 0) {
    steps.push_back([this](StatusFn next) {
      ctx_->client.mkdir(config_.dir, 0755, [this, next](Result<proto::InodeDesc> r) {
        next(annotate(ok_if_exists(r.status()), "checkpoint mkdir " + config_.dir));
      });
    });
  }
  run_steps(std::move(steps), std::move(done));
}

void CheckpointBurst::wrote(std::uint64_t bytes, TimeNs issued) {
  recorder_->op(bytes, issued);
  if (config_.sync) recorder_->count("sync_bytes", static_cast<double>(bytes));
}

void CheckpointBurst::burst(std::uint32_t checkpoint, StatusFn done) {
  const std::string tag = "checkpoint" + config_.run_tag + ".burst" + std::to_string(checkpoint);
  barrier(*ctx_, tag, config_.barrier_max_wait_ns, [this, checkpoint, done](Status s) {
    if (!s.ok()) return done(s);
    recorder_ = std::make_unique<PhaseRecorder>(ctx_->env, name(), "write", ctx_->rank);
    recorder_->start();
    inodes_.assign(config_.files_per_rank, proto::InodeDesc{});
    std::vector<Step> steps;
    steps.push_back([this, checkpoint](StatusFn next) {
      for_each_bounded(
          config_.files_per_rank, config_.inflight_blocks,
          [this, checkpoint](std::uint64_t f, StatusFn d) {
            const std::string path = file_path(checkpoint, ctx_->rank, static_cast<std::uint32_t>(f));
            ctx_->client.create(path, config_.create, [this, f, path, d](Result<proto::InodeDesc> r) {
              if (!r.ok()) return d(annotate(r.status(), "checkpoint create " + path));
              inodes_[f] = *r;
              d(ok_status());
            });
          },
          std::move(next));
    });
    steps.push_back([this](StatusFn next) {
      for_each_bounded(
          blocks_.size(), config_.inflight_blocks,
          [this](std::uint64_t i, StatusFn d) {
            const Block& b = blocks_[i];
            const MemHandle src = shard_.slice(file_offset_in_shard(b.file) + b.offset, b.length);
            const TimeNs issued = ctx_->env.now();
            ctx_->client.write(
                inodes_[b.file], b.offset, src, config_.sync, [this, b, issued, d](Result<std::uint64_t> n) {
                  const std::string where =
                      "checkpoint write file " + std::to_string(b.file) + " at " + std::to_string(b.offset);
                  if (!n.ok()) return d(annotate(n.status(), where));
                  if (*n != b.length) return d(error(StatusCode::io_error, where + ": short write"));
                  wrote(b.length, issued);
                  d(ok_status());
                });
          },
          std::move(next));
    });
    steps.push_back([this, checkpoint](StatusFn next) {
      for_each_bounded(
          config_.files_per_rank, config_.inflight_blocks,
          [this, checkpoint](std::uint64_t f, StatusFn d) {
            const auto file = static_cast<std::uint32_t>(f);
            const std::string path = file_path(checkpoint, ctx_->rank, file);
            ctx_->client.close(path, file_bytes(file), [this, path, d](Status r) {
              if (r.ok()) recorder_->touch();
              d(annotate(r, "checkpoint close " + path));
            });
          },
          std::move(next));
    });
    steps.push_back([this](StatusFn next) {
      TargetBytes burst_bytes;
      for (std::uint32_t f = 0; f < config_.files_per_rank; ++f) {
        if (Status st = add_stripe_bytes(burst_bytes, inodes_[f].stripe, file_bytes(f), config_.stripe_flavor);
            !st.ok()) {
          return next(annotate(st, "checkpoint stripe of file " + std::to_string(f)));
        }
      }
      for (const auto& [target, bytes] : burst_bytes) {
        target_bytes_[target] += bytes;
        ctx_->env.metrics().count("checkpoint.target." + std::to_string(target) + ".bytes", static_cast<double>(bytes));
      }
      std::vector<std::uint32_t> all_targets = config_.known_targets;
      if (all_targets.empty()) {
        for (const auto& entry : ctx_->client.targets()) all_targets.push_back(entry.first);
      }
      const TargetBalance balance = target_balance(burst_bytes, all_targets);
      recorder_->sample("target_max_over_mean", balance.max_over_mean);
      recorder_->sample("target_cv", balance.cv);
      next(ok_status());
    });
    run_steps(std::move(steps), [this, done](Status r) {
      RankPhaseResult result = recorder_->finish();
      if (r.ok() && result.elapsed_ns > 0) {
        recorder_->sample("bytes_per_s",
                          static_cast<double>(result.bytes) * 1e9 / static_cast<double>(result.elapsed_ns));
      }
      results_.push_back(std::move(result));
      done(std::move(r));
    });
  });
}

void CheckpointBurst::allocate_read_buffers(StatusFn done) {
  read_buffers_ = std::make_unique<BufferPool>(ctx_->env);
  const std::uint64_t buffer_bytes = std::min(config_.block_bytes, config_.shard_bytes);
  Status s = read_buffers_->allocate(*ctx_, config_.source_kind, config_.inflight_blocks, buffer_bytes);
  defer_status(*ctx_, std::move(done), annotate(s, "checkpoint read-back"));
}

void CheckpointBurst::read_back(std::uint32_t checkpoint, StatusFn done) {
  // The first read keeps the barrier name of a single read-back.
  const bool first = checkpoint + config_.read_checkpoints == config_.checkpoints;
  barrier(*ctx_, "checkpoint" + config_.run_tag + ".read" + (first ? "" : std::to_string(checkpoint)),
          config_.barrier_max_wait_ns, [this, checkpoint, done](Status s) {
            if (!s.ok()) return done(s);
            recorder_ = std::make_unique<PhaseRecorder>(ctx_->env, name(), "read", ctx_->rank);
            recorder_->start();
            std::vector<Step> steps;
            steps.push_back([this, checkpoint](StatusFn next) {
              for_each_bounded(
                  config_.files_per_rank, config_.inflight_blocks,
                  [this, checkpoint](std::uint64_t f, StatusFn d) {
                    const std::string path = file_path(checkpoint, ctx_->rank, static_cast<std::uint32_t>(f));
                    ctx_->client.stat(path, [this, f, path, d](Result<proto::InodeDesc> r) {
                      if (!r.ok()) return d(annotate(r.status(), "checkpoint open " + path));
                      inodes_[f] = *r;
                      d(ok_status());
                    });
                  },
                  std::move(next));
            });
            steps.push_back([this](StatusFn next) {
              for_each_bounded(
                  blocks_.size(), config_.inflight_blocks,
                  [this](std::uint64_t i, StatusFn d) {
                    const Block b = blocks_[i];
                    Result<MemHandle> buffer = read_buffers_->take();
                    if (!buffer.ok()) return d(buffer.status());
                    const MemHandle dst = buffer->slice(0, b.length);
                    auto finish = [this, whole = *buffer, d](const Status& st) {
                      read_buffers_->give(whole);
                      d(st);
                    };
                    const TimeNs issued = ctx_->env.now();
                    ctx_->client.read(
                        inodes_[b.file], b.offset, dst, [this, b, dst, issued, finish](Result<std::uint64_t> n) {
                          const std::string where =
                              "checkpoint read file " + std::to_string(b.file) + " at " + std::to_string(b.offset);
                          if (!n.ok()) return finish(annotate(n.status(), where));
                          if (*n != b.length) return finish(error(StatusCode::io_error, where + ": short read"));
                          recorder_->op(b.length, issued);
                          if (!config_.pattern_data) return finish(ok_status());
                          ctx_->ops.expect(ctx_->env.verify(dst, PatternSpec{file_seed(b.file), b.offset}),
                                           [this, b, where, finish](Completion& c) {
                                             if (c.status.ok()) {
                                               recorder_->count("verified_bytes", static_cast<double>(b.length));
                                             }
                                             finish(annotate(c.status, where));
                                           });
                        });
                  },
                  std::move(next));
            });
            run_steps(std::move(steps), [this, done](Status r) {
              results_.push_back(recorder_->finish());
              done(std::move(r));
            });
          });
}

}  // namespace sluice
