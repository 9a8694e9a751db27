#include "core/workloads/train_epoch.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <utility>

#include "core/common/rng.hpp"
#include "core/workloads/workload_limits.hpp"

namespace sluice {

Status TrainEpoch::validate(const TrainEpochConfig& c) {
  const std::string where = "train_epoch config";
  if (Status s = check_run_tag(where, c.run_tag); !s.ok()) return s;
  if (Status s = check_limit(where, "samples", c.samples, 1, k_workload_max_items_per_rank); !s.ok()) return s;
  if (Status s = check_limit(where, "sample_bytes", c.sample_bytes, 1, k_workload_max_block_bytes); !s.ok()) return s;
  if (Status s = check_limit(where, "samples_per_file", c.samples_per_file, 1, k_workload_max_items_per_rank);
      !s.ok()) {
    return s;
  }
  if (Status s = check_limit(where, "batch_samples", c.batch_samples, 1, k_workload_max_items_per_rank); !s.ok()) {
    return s;
  }
  if (Status s = check_limit(where, "prefetch_depth", c.prefetch_depth, 0, k_workload_max_inflight); !s.ok()) return s;
  if (Status s = check_limit(where, "read_threads", c.read_threads, 1, k_workload_max_inflight); !s.ok()) return s;
  if (Status s = check_limit(where, "epochs", c.epochs, 1, k_train_max_epochs); !s.ok()) return s;
  if (Status s = check_limit(where, "setup_block_bytes", c.setup_block_bytes, 1, k_workload_max_block_bytes); !s.ok()) {
    return s;
  }
  if (c.compute_ns_per_step < 0) {
    return error(StatusCode::invalid_argument, where + ": compute_ns_per_step is negative");
  }
  if (c.compute_time_stdev < 0) return error(StatusCode::invalid_argument, where + ": compute_time_stdev is negative");
  if (Status s = check_limit(where, "sample_bytes_stdev", c.sample_bytes_stdev, 0, k_workload_max_block_bytes);
      !s.ok()) {
    return s;
  }
  if (c.sample_bytes_stdev > 0) {
    if (Status s = check_limit(where, "samples (with sample_bytes_stdev > 0)", c.samples, 1, k_train_max_drawn_samples);
        !s.ok()) {
      return s;
    }
  }
  if (c.inode_cache_entries == 0) return error(StatusCode::invalid_argument, where + ": inode_cache_entries is 0");
  if (c.dataset_dir.empty() || c.dataset_dir.front() != '/' || c.dataset_dir == "/") {
    return error(StatusCode::invalid_argument,
                 where + ": dataset_dir '" + c.dataset_dir + "' must be an absolute path below /");
  }
  const std::uint64_t slot_bytes = max_sample_bytes(c);
  const std::uint64_t batch_bytes = std::uint64_t{c.batch_samples} * slot_bytes;
  if (c.batch_samples > 0 && batch_bytes / c.batch_samples != slot_bytes) {
    return error(StatusCode::invalid_argument, where + ": batch_samples * max_sample_bytes overflows");
  }
  return check_limit(where, "batch_samples * max_sample_bytes", batch_bytes, 1, k_workload_max_bytes_per_rank);
}

namespace {

// A standard normal draw (Box & Muller, 1958) from two uniforms of `rng`.
double standard_normal(Rng& rng) {
  const double u1 = 1.0 - rng.uniform01();  // in (0, 1]: log(u1) is finite
  const double u2 = rng.uniform01();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

}  // namespace

TrainEpoch::TrainEpoch(TrainEpochConfig config) : config_(std::move(config)) {
  if (config_.sample_bytes_stdev == 0 || config_.samples > k_train_max_drawn_samples || config_.samples_per_file == 0) {
    return;  // one size, or a config validate() refuses at start
  }
  dataset_offset_.resize(config_.samples + 1);
  dataset_offset_[0] = 0;
  for (std::uint64_t j = 0; j < config_.samples; ++j) {
    dataset_offset_[j + 1] = dataset_offset_[j] + drawn_sample_bytes(config_, j);
  }
}

std::uint64_t TrainEpoch::max_sample_bytes(const TrainEpochConfig& c) {
  if (c.sample_bytes_stdev == 0) return c.sample_bytes;
  const std::uint64_t spread = std::min(c.sample_bytes_stdev, k_workload_max_block_bytes);
  return std::min(c.sample_bytes + k_train_sample_clip_sigmas * spread, k_workload_max_block_bytes);
}

std::uint64_t TrainEpoch::drawn_sample_bytes(const TrainEpochConfig& c, std::uint64_t sample) {
  if (c.sample_bytes_stdev == 0) return c.sample_bytes;
  Rng rng(derive_seed(c.sample_bytes_seed, sample));
  const double drawn =
      static_cast<double>(c.sample_bytes) + static_cast<double>(c.sample_bytes_stdev) * standard_normal(rng);
  const double lo = static_cast<double>(k_train_min_sample_bytes);
  const double hi = static_cast<double>(max_sample_bytes(c));
  return static_cast<std::uint64_t>(std::llround(std::clamp(drawn, lo, std::max(lo, hi))));
}

std::uint64_t TrainEpoch::sample_bytes(std::uint64_t sample) const {
  if (dataset_offset_.empty()) return config_.sample_bytes;
  return dataset_offset_[sample + 1] - dataset_offset_[sample];
}

std::uint64_t TrainEpoch::sample_offset(std::uint64_t sample) const {
  const std::uint64_t in_file = sample % config_.samples_per_file;
  if (dataset_offset_.empty()) return in_file * config_.sample_bytes;
  return dataset_offset_[sample] - dataset_offset_[sample - in_file];
}

TimeNs TrainEpoch::draw_compute_ns() {
  if (config_.compute_time_stdev == 0) return config_.compute_ns_per_step;
  const double drawn = static_cast<double>(config_.compute_ns_per_step) +
                       static_cast<double>(config_.compute_time_stdev) * standard_normal(compute_rng_);
  return static_cast<TimeNs>(std::llround(std::max(drawn, 0.0)));
}

std::uint64_t TrainEpoch::file_count() const {
  return (config_.samples + config_.samples_per_file - 1) / config_.samples_per_file;
}

std::uint64_t TrainEpoch::file_bytes(std::uint64_t file) const {
  const std::uint64_t first = file * config_.samples_per_file;
  if (first >= config_.samples) return 0;
  const std::uint64_t count = std::min<std::uint64_t>(config_.samples_per_file, config_.samples - first);
  if (dataset_offset_.empty()) return count * config_.sample_bytes;
  return dataset_offset_[first + count] - dataset_offset_[first];
}

std::string TrainEpoch::file_path(std::uint64_t file) const {
  return config_.dataset_dir + "/f" + std::to_string(file);
}

std::uint64_t TrainEpoch::steps_per_epoch(std::uint32_t ranks) const {
  return config_.samples / (std::uint64_t{config_.batch_samples} * std::max<std::uint32_t>(ranks, 1));
}

std::uint64_t TrainEpoch::shuffled_sample(std::uint64_t position, std::uint64_t samples, std::uint64_t seed) {
  if (samples <= 1) return 0;
  unsigned bits = 1;
  while (bits < 64 && (std::uint64_t{1} << bits) < samples) ++bits;
  if (bits % 2 != 0) ++bits;
  const unsigned half = bits / 2;
  const std::uint64_t mask = (std::uint64_t{1} << half) - 1;
  auto encrypt = [&](std::uint64_t x) {
    std::uint64_t left = x >> half;
    std::uint64_t right = x & mask;
    for (std::uint64_t round = 0; round < 4; ++round) {
      std::uint64_t state = seed ^ (round * 0x9E3779B97F4A7C15ULL) ^ (right << 8);
      const std::uint64_t f = splitmix64(state) & mask;
      const std::uint64_t next_right = left ^ f;
      left = right;
      right = next_right;
    }
    return (left << half) | right;
  };
  // Cycle walking: the permutation of [0, 2^bits) restricted to [0, samples)
  // by following each cycle until it re-enters the domain.
  std::uint64_t y = encrypt(position);
  while (y >= samples) y = encrypt(y);
  return y;
}

std::uint64_t TrainEpoch::sample_at(std::uint64_t position) const {
  if (!config_.shuffle) return position;
  return shuffled_sample(position, config_.samples, derive_seed(config_.shuffle_seed, epoch_));
}

void TrainEpoch::start(WorkloadContext& context, std::function<void(Status)> done) {
  ctx_ = &context;
  if (Status s = validate(config_); !s.ok()) return defer_status(context, std::move(done), s);
  if (steps_per_epoch(context.ranks) == 0) {
    return defer_status(
        context, std::move(done),
        error(StatusCode::invalid_argument, "train_epoch: " + std::to_string(config_.samples) +
                                                " samples make no full global batch of batch_samples x ranks = " +
                                                std::to_string(std::uint64_t{config_.batch_samples} * context.ranks)));
  }
  compute_rng_ = context.env.rng().fork(k_train_compute_stream);
  batch_buffers_ = std::make_unique<BufferPool>(context.env);
  const std::uint64_t steps = steps_per_epoch(context.ranks);
  const auto slots = static_cast<std::uint32_t>(std::min<std::uint64_t>(config_.prefetch_depth + 1ULL, steps));
  if (Status s = batch_buffers_->allocate(context, config_.buffer_kind, slots,
                                          std::uint64_t{config_.batch_samples} * max_sample_bytes());
      !s.ok()) {
    return defer_status(context, std::move(done), annotate(s, "train_epoch rank " + std::to_string(context.rank)));
  }
  std::vector<Step> steps_list;
  if (config_.setup_dataset) steps_list.push_back([this](StatusFn next) { setup(std::move(next)); });
  for (std::uint32_t e = 0; e < config_.epochs; ++e) {
    steps_list.push_back([this, e](StatusFn next) { run_epoch(e, std::move(next)); });
  }
  steps_list.push_back([this](StatusFn next) {
    barrier(*ctx_, "train_epoch" + config_.run_tag + ".end", config_.barrier_max_wait_ns, std::move(next));
  });
  run_steps(std::move(steps_list), [this, done = std::move(done)](Status s) {
    batch_buffers_->release();
    if (setup_buffers_) setup_buffers_->release();
    done(std::move(s));
  });
}

// ---- setup ---------------------------------------------------------------------

void TrainEpoch::setup(StatusFn done) {
  setup_buffers_ = std::make_unique<BufferPool>(ctx_->env);
  std::uint64_t largest_file = file_bytes(0);  // with one sample size, file 0 is a largest
  if (!dataset_offset_.empty()) {
    for (std::uint64_t f = 1; f < file_count(); ++f) largest_file = std::max(largest_file, file_bytes(f));
  }
  const std::uint64_t buffer_bytes = std::min(config_.setup_block_bytes, largest_file);
  if (Status s = setup_buffers_->allocate(*ctx_, MemKind::host, config_.read_threads, buffer_bytes); !s.ok()) {
    return defer_status(*ctx_, std::move(done), annotate(s, "train_epoch setup"));
  }
  std::vector<Step> steps;
  if (ctx_->rank == 0) {
    steps.push_back([this](StatusFn next) {
      ctx_->client.mkdir(config_.dataset_dir, 0755, [this, next](Result<proto::InodeDesc> r) {
        next(annotate(ok_if_exists(r.status()), "train_epoch mkdir " + config_.dataset_dir));
      });
    });
  }
  steps.push_back([this](StatusFn next) {
    barrier(*ctx_, "train_epoch" + config_.run_tag + ".setup", config_.barrier_max_wait_ns, std::move(next));
  });
  steps.push_back([this](StatusFn next) {
    recorder_ = std::make_unique<PhaseRecorder>(ctx_->env, name(), "setup", ctx_->rank);
    recorder_->start();
    const std::uint64_t files = file_count();
    const std::uint64_t mine = files / ctx_->ranks + (ctx_->rank < files % ctx_->ranks ? 1 : 0);
    for_each_bounded(
        mine, config_.read_threads,
        [this](std::uint64_t i, StatusFn d) { write_dataset_file(i * ctx_->ranks + ctx_->rank, std::move(d)); },
        [this, next](Status s) {
          results_.push_back(recorder_->finish());
          setup_buffers_->release();
          next(std::move(s));
        });
  });
  if (config_.after_setup == BetweenPhases::sync_dropcache) {
    steps.push_back([this](StatusFn next) {
      sync_dropcache(*ctx_, name(), "train_epoch" + config_.run_tag + ".setup.sync", config_.barrier_max_wait_ns,
                     std::move(next));
    });
  }
  run_steps(std::move(steps), std::move(done));
}

struct TrainEpoch::SetupJob {
  std::string path;
  std::uint64_t seed = 0;
  std::uint64_t size = 0;
  std::uint64_t offset = 0;
  proto::InodeDesc inode;
  MemHandle buffer;
  StatusFn done;
};

void TrainEpoch::write_dataset_file(std::uint64_t file, StatusFn done) {
  Result<MemHandle> buffer = setup_buffers_->take();
  if (!buffer.ok()) return done(buffer.status());
  auto job = std::make_shared<SetupJob>();
  job->path = file_path(file);
  job->seed = derive_seed(config_.pattern_seed, file);
  job->size = file_bytes(file);
  job->buffer = *buffer;
  job->done = [this, b = *buffer, done](Status s) {
    setup_buffers_->give(b);
    done(std::move(s));
  };
  ctx_->client.create(job->path, config_.create, [this, job](Result<proto::InodeDesc> r) {
    if (!r.ok()) return job->done(annotate(r.status(), "train_epoch setup create " + job->path));
    job->inode = *r;
    setup_block(job);
  });
}

void TrainEpoch::setup_block(const std::shared_ptr<SetupJob>& job) {
  if (job->offset >= job->size) {
    ctx_->client.close(job->path, job->size,
                       [job](Status s) { job->done(annotate(s, "train_epoch setup close " + job->path)); });
    return;
  }
  const std::uint64_t length = std::min(job->buffer.length, job->size - job->offset);
  const MemHandle slice = job->buffer.slice(0, length);
  auto issue = [this, job, slice, length]() {
    const TimeNs issued = ctx_->env.now();
    ctx_->client.write(job->inode, job->offset, slice, false, [this, job, length, issued](Result<std::uint64_t> n) {
      const std::string where = "train_epoch setup write " + job->path + " at " + std::to_string(job->offset);
      if (!n.ok()) return job->done(annotate(n.status(), where));
      if (*n != length) return job->done(error(StatusCode::io_error, where + ": short write"));
      recorder_->op(length, issued);
      job->offset += length;
      setup_block(job);
    });
  };
  if (!config_.pattern_data) return issue();
  ctx_->ops.expect(ctx_->env.fill(slice, PatternSpec{job->seed, job->offset}), [job, issue](Completion& c) {
    if (!c.status.ok()) return job->done(annotate(c.status, "train_epoch setup fill for " + job->path));
    issue();
  });
}

// ---- epochs --------------------------------------------------------------------

void TrainEpoch::run_epoch(std::uint32_t epoch, StatusFn done) {
  barrier(*ctx_, "train_epoch" + config_.run_tag + ".epoch" + std::to_string(epoch), config_.barrier_max_wait_ns,
          [this, epoch, done](Status s) {
            if (!s.ok()) return done(s);
            epoch_ = epoch;
            steps_ = steps_per_epoch(ctx_->ranks);
            next_load_ = 0;
            next_compute_ = 0;
            computing_ = false;
            batches_.clear();
            read_queue_.clear();
            reads_inflight_ = 0;
            epoch_error_ = ok_status();
            epoch_finished_ = false;
            epoch_done_ = done;
            EpochResult result;
            result.epoch = epoch;
            result.steps = steps_;
            epochs_.push_back(result);
            recorder_ = std::make_unique<PhaseRecorder>(ctx_->env, name(), "epoch", ctx_->rank);
            recorder_->start();
            epoch_start_ns_ = ctx_->env.now();
            last_compute_end_ns_ = epoch_start_ns_;
            while (next_load_ < steps_ && batch_buffers_->free_buffers() > 0) load_batch(next_load_++);
            pump_reads();
          });
}

void TrainEpoch::load_batch(std::uint64_t step) {
  Result<MemHandle> buffer = batch_buffers_->take();
  if (!buffer.ok()) return fail(buffer.status());
  Batch& batch = batches_[step];
  batch.buffer = *buffer;
  batch.remaining = config_.batch_samples;
  const std::uint64_t first = (step * ctx_->ranks + ctx_->rank) * config_.batch_samples;
  for (std::uint32_t k = 0; k < config_.batch_samples; ++k) {
    read_queue_.push_back(SampleRead{step, k, sample_at(first + k)});
  }
}

void TrainEpoch::pump_reads() {
  while (epoch_error_.ok() && reads_inflight_ < config_.read_threads && !read_queue_.empty()) {
    SampleRead read = read_queue_.front();
    read_queue_.pop_front();
    ++reads_inflight_;
    read_sample(read);
  }
}

void TrainEpoch::inode_of(std::uint64_t file, InodeFn done) {
  if (auto it = inodes_.find(file); it != inodes_.end()) {
    proto::InodeDesc inode = it->second;
    return defer(*ctx_, [done, inode]() { done(inode); });
  }
  auto& waiters = inode_waiters_[file];
  waiters.push_back(std::move(done));
  if (waiters.size() > 1) return;  // a stat of this file is on its way
  const std::string path = file_path(file);
  ctx_->client.stat(path, [this, file, path](Result<proto::InodeDesc> r) {
    if (r.ok()) {
      if (inodes_.size() >= config_.inode_cache_entries) inodes_.clear();  // bounded: start afresh
      inodes_[file] = *r;
    }
    auto waiting = std::move(inode_waiters_[file]);
    inode_waiters_.erase(file);
    for (auto& w : waiting) w(r.ok() ? Result<proto::InodeDesc>(*r) : annotate(r.status(), "train_epoch open " + path));
  });
}

void TrainEpoch::read_sample(const SampleRead& read) {
  const std::uint64_t file = read.sample / config_.samples_per_file;
  const std::uint64_t offset = sample_offset(read.sample);
  const std::uint64_t length = sample_bytes(read.sample);
  inode_of(file, [this, read, file, offset, length](Result<proto::InodeDesc> inode) {
    if (!inode.ok()) return sample_done(read, inode.status());
    const MemHandle dst = batches_[read.step].buffer.slice(std::uint64_t{read.slot_index} * max_sample_bytes(), length);
    const TimeNs issued = ctx_->env.now();
    ctx_->client.read(*inode, offset, dst, [this, read, file, offset, length, dst, issued](Result<std::uint64_t> n) {
      const std::string where = "train_epoch read sample " + std::to_string(read.sample) + " (" + file_path(file) +
                                " at " + std::to_string(offset) + ")";
      if (!n.ok()) return sample_done(read, annotate(n.status(), where));
      if (*n != length) {
        return sample_done(read, error(StatusCode::io_error, where + ": got " + std::to_string(*n) + " of " +
                                                                 std::to_string(length) + " bytes"));
      }
      recorder_->op(*n, issued);
      epochs_.back().samples_read += 1;
      epochs_.back().bytes_read += *n;
      if (!config_.pattern_data) return sample_done(read, ok_status());
      const PatternSpec pattern{derive_seed(config_.pattern_seed, file), offset};
      ctx_->ops.expect(ctx_->env.verify(dst, pattern),
                       [this, read, where](Completion& c) { sample_done(read, annotate(c.status, where)); });
    });
  });
}

void TrainEpoch::sample_done(const SampleRead& read, const Status& status) {
  --reads_inflight_;
  if (!status.ok()) return fail(status);
  if (!epoch_error_.ok()) return maybe_finish_epoch();  // draining after a failure
  Batch& batch = batches_[read.step];
  --batch.remaining;
  if (batch.remaining == 0) maybe_compute();
  pump_reads();
}

void TrainEpoch::maybe_compute() {
  if (computing_ || !epoch_error_.ok() || next_compute_ >= steps_) return;
  auto it = batches_.find(next_compute_);
  if (it == batches_.end() || it->second.remaining > 0) return;
  computing_ = true;
  const TimeNs compute_start = ctx_->env.now();
  recorder_->sample("data_wait_ns", static_cast<double>(compute_start - last_compute_end_ns_));
  const TimeNs compute_ns = draw_compute_ns();
  const auto units = static_cast<std::uint64_t>(compute_ns);
  ctx_->ops.expect(ctx_->env.compute(CostKind::workload_step, units), [this, compute_ns](Completion& c) {
    computing_ = false;
    if (!epoch_error_.ok()) return maybe_finish_epoch();  // a read failed meanwhile
    if (!c.status.ok()) return fail(annotate(c.status, "train_epoch compute step " + std::to_string(next_compute_)));
    const TimeNs now = ctx_->env.now();
    const TimeNs step_ns = now - last_compute_end_ns_;
    EpochResult& result = epochs_.back();
    result.compute_ns += compute_ns;
    // Step 1 (index 0) fills the pipeline: it counts only when it is the only step.
    if (next_compute_ >= 1) {
      result.counted_compute_ns += compute_ns;
      result.counted_step_ns += step_ns;
    }
    recorder_->sample("step_ns", static_cast<double>(step_ns));
    recorder_->count("compute_ns", static_cast<double>(compute_ns));
    recorder_->count("steps", 1);
    recorder_->touch();
    if (steps_ == 1) {
      result.counted_compute_ns = compute_ns;
      result.counted_step_ns = step_ns;
    }
    last_compute_end_ns_ = now;
    batch_buffers_->give(batches_[next_compute_].buffer);
    batches_.erase(next_compute_);
    ++next_compute_;
    if (next_load_ < steps_) {
      load_batch(next_load_++);
      pump_reads();
    }
    if (next_compute_ == steps_) return maybe_finish_epoch();
    maybe_compute();
  });
}

void TrainEpoch::fail(const Status& status) {
  if (epoch_error_.ok()) epoch_error_ = status;
  read_queue_.clear();
  maybe_finish_epoch();
}

void TrainEpoch::maybe_finish_epoch() {
  if (epoch_finished_) return;
  const bool failed = !epoch_error_.ok();
  if (!failed && next_compute_ < steps_) return;
  if (reads_inflight_ > 0 || computing_) return;  // wait for what is in flight
  epoch_finished_ = true;
  for (auto& [step, batch] : batches_) batch_buffers_->give(batch.buffer);
  batches_.clear();
  EpochResult& result = epochs_.back();
  result.elapsed_ns = last_compute_end_ns_ - epoch_start_ns_;
  if (!failed) {
    result.au = result.counted_step_ns > 0
                    ? static_cast<double>(result.counted_compute_ns) / static_cast<double>(result.counted_step_ns)
                    : 0.0;
    recorder_->sample("au_ratio", result.au);
  }
  results_.push_back(recorder_->finish());
  StatusFn done = std::move(epoch_done_);
  done(epoch_error_);
}

}  // namespace sluice
