#include "core/workloads/md_bench.hpp"

#include <algorithm>
#include <utility>

#include "core/workloads/workload_limits.hpp"

namespace sluice {

std::string_view to_string(MdPhase phase) {
  switch (phase) {
    case MdPhase::create: return "create";
    case MdPhase::stat: return "stat";
    case MdPhase::readdir: return "readdir";
    case MdPhase::ls_storm: return "ls_storm";
    case MdPhase::remove: return "remove";
    case MdPhase::link: return "link";
    case MdPhase::rename: return "rename";
  }
  return "unknown";
}

Status MdBench::validate(const MdBenchConfig& c) {
  const std::string where = "md_bench config";
  if (Status s = check_run_tag(where, c.run_tag); !s.ok()) return s;
  if (Status s = check_limit(where, "threads", c.threads, 1, k_workload_max_inflight); !s.ok()) return s;
  if (Status s = check_limit(where, "files_per_rank", c.files_per_rank, 0, k_workload_max_items_per_rank); !s.ok()) {
    return s;
  }
  if (c.root_dir.empty() || c.root_dir.front() != '/' || c.root_dir == "/") {
    return error(StatusCode::invalid_argument,
                 where + ": root_dir '" + c.root_dir + "' must be an absolute path below /");
  }
  if (!c.storm_dir.empty() && c.storm_dir.front() != '/') {
    return error(StatusCode::invalid_argument, where + ": storm_dir '" + c.storm_dir + "' must be absolute");
  }
  return ok_status();
}

std::string MdBench::dir_of(std::uint32_t rank) const {
  return config_.shared_dir ? config_.root_dir + "/shared" : config_.root_dir + "/r" + std::to_string(rank);
}

std::string MdBench::item_path(std::uint32_t rank, std::uint64_t index) const {
  return dir_of(rank) + "/f" + std::to_string(rank) + "." + std::to_string(index);
}

std::string MdBench::link_path(std::uint32_t rank, std::uint64_t index) const {
  return dir_of(rank) + "/l" + std::to_string(rank) + "." + std::to_string(index);
}

std::string MdBench::renamed_path(std::uint32_t rank, std::uint64_t index) const {
  return dir_of(rank) + "/m" + std::to_string(rank) + "." + std::to_string(index);
}

std::string MdBench::storm_dir() const { return config_.storm_dir.empty() ? dir_of(0) : config_.storm_dir; }

bool MdBench::has_phase(MdPhase phase) const {
  return std::find(config_.phases.begin(), config_.phases.end(), phase) != config_.phases.end();
}

std::string MdBench::barrier_name(std::string_view what) const {
  return "md_bench" + config_.run_tag + "." + std::string(what);
}

// Entries of the rank's own listing directory when this run created them; 0 = unknown.
std::uint64_t MdBench::expected_entries() const {
  if (!has_phase(MdPhase::create)) return 0;
  const std::uint64_t items = config_.shared_dir ? config_.files_per_rank * ctx_->ranks : config_.files_per_rank;
  return linked_ ? 2 * items : items;
}

void MdBench::start(WorkloadContext& context, std::function<void(Status)> done) {
  ctx_ = &context;
  if (Status s = validate(config_); !s.ok()) return defer_status(context, std::move(done), s);
  std::vector<Step> steps;
  steps.push_back([this](StatusFn next) { setup(std::move(next)); });
  for (MdPhase phase : config_.phases) {
    steps.push_back([this, phase](StatusFn next) { run_phase(phase, std::move(next)); });
  }
  steps.push_back([this](StatusFn next) { teardown(std::move(next)); });
  run_steps(std::move(steps), std::move(done));
}

void MdBench::setup(StatusFn done) {
  std::vector<Step> steps;
  if (ctx_->rank == 0) {
    steps.push_back([this](StatusFn next) {
      ctx_->client.mkdir(config_.root_dir, 0755, [this, next](Result<proto::InodeDesc> r) {
        next(annotate(ok_if_exists(r.status()), "md_bench mkdir " + config_.root_dir));
      });
    });
    if (config_.shared_dir) {
      steps.push_back([this](StatusFn next) {
        const std::string dir = dir_of(0);
        ctx_->client.mkdir(dir, 0755, [dir, next](Result<proto::InodeDesc> r) {
          next(annotate(ok_if_exists(r.status()), "md_bench mkdir " + dir));
        });
      });
    }
  }
  steps.push_back([this](StatusFn next) { barrier(*ctx_, barrier_name("root"), config_.barrier_max_wait_ns, next); });
  if (!config_.shared_dir) {
    steps.push_back([this](StatusFn next) {
      const std::string dir = dir_of(ctx_->rank);
      ctx_->client.mkdir(dir, 0755, [dir, next](Result<proto::InodeDesc> r) {
        next(annotate(ok_if_exists(r.status()), "md_bench mkdir " + dir));
      });
    });
  }
  run_steps(std::move(steps), std::move(done));
}

void MdBench::teardown(StatusFn done) {
  const bool remove = has_phase(MdPhase::remove) && config_.remove_dirs;
  std::vector<Step> steps;
  steps.push_back([this](StatusFn next) { barrier(*ctx_, barrier_name("end"), config_.barrier_max_wait_ns, next); });
  if (remove) {
    if (!config_.shared_dir) {
      steps.push_back([this](StatusFn next) {
        const std::string dir = dir_of(ctx_->rank);
        ctx_->client.rmdir(dir, [dir, next](Status s) { next(annotate(s, "md_bench rmdir " + dir)); });
      });
      steps.push_back(
          [this](StatusFn next) { barrier(*ctx_, barrier_name("cleanup"), config_.barrier_max_wait_ns, next); });
    }
    if (ctx_->rank == 0) {
      if (config_.shared_dir) {
        steps.push_back([this](StatusFn next) {
          const std::string dir = dir_of(0);
          ctx_->client.rmdir(dir, [dir, next](Status s) { next(annotate(s, "md_bench rmdir " + dir)); });
        });
      }
      steps.push_back([this](StatusFn next) {
        ctx_->client.rmdir(config_.root_dir,
                           [this, next](Status s) { next(annotate(s, "md_bench rmdir " + config_.root_dir)); });
      });
    }
  }
  run_steps(std::move(steps), std::move(done));
}

void MdBench::run_phase(MdPhase phase, StatusFn done) {
  barrier(*ctx_, barrier_name(to_string(phase)), config_.barrier_max_wait_ns, [this, phase, done](Status s) {
    if (!s.ok()) return done(s);
    recorder_ = std::make_unique<PhaseRecorder>(ctx_->env, name(), std::string(to_string(phase)), ctx_->rank);
    recorder_->start();
    phase_body(phase, [this, phase, done](Status body) {
      results_.push_back(recorder_->finish());
      // Every item of this rank has its new names now (the next phase's barrier orders the ranks).
      if (body.ok() && phase == MdPhase::link) linked_ = true;
      if (body.ok() && phase == MdPhase::rename) renamed_ = !renamed_;
      if (body.ok() && phase == MdPhase::remove) linked_ = false;
      done(std::move(body));
    });
  });
}

void MdBench::phase_body(MdPhase phase, StatusFn done) {
  switch (phase) {
    case MdPhase::create:
    case MdPhase::stat:
    case MdPhase::remove:
    case MdPhase::link:
    case MdPhase::rename:
      return for_each_bounded(
          config_.files_per_rank, config_.threads,
          [this, phase](std::uint64_t i, StatusFn d) { item_op(phase, i, std::move(d)); }, std::move(done));
    case MdPhase::readdir: {
      const std::string dir = dir_of(ctx_->rank);
      const TimeNs issued = ctx_->env.now();
      const std::uint64_t expected = expected_entries();
      ctx_->client.readdir(dir, false, [this, dir, issued, expected, done](Result<std::vector<proto::DirEntryDesc>> r) {
        if (!r.ok()) return done(annotate(r.status(), "md_bench readdir " + dir));
        recorder_->op(0, issued);
        recorder_->count("entries", static_cast<double>(r->size()));
        if (expected != 0 && r->size() != expected) {
          return done(error(StatusCode::internal, "md_bench readdir " + dir + ": " + std::to_string(r->size()) +
                                                      " entries, created " + std::to_string(expected)));
        }
        done(ok_status());
      });
      return;
    }
    case MdPhase::ls_storm: return ls_storm(std::move(done));
  }
}

void MdBench::item_op(MdPhase phase, std::uint64_t index, StatusFn done) {
  const std::uint32_t rank = ctx_->rank;
  const std::string path = renamed_ ? renamed_path(rank, index) : item_path(rank, index);
  const TimeNs issued = ctx_->env.now();
  auto finish = [this, issued, done, path, phase](const Status& s) {
    if (!s.ok()) return done(annotate(s, "md_bench " + std::string(to_string(phase)) + " " + path));
    recorder_->op(0, issued);
    done(ok_status());
  };
  switch (phase) {
    case MdPhase::create:
      ctx_->client.create(path, config_.create, [finish](Result<proto::InodeDesc> r) { finish(r.status()); });
      return;
    case MdPhase::stat:
      ctx_->client.stat(path, [finish](Result<proto::InodeDesc> r) {
        if (r.ok() && r->type != proto::InodeType::file) return finish(error(StatusCode::is_a_directory, "not a file"));
        finish(r.status());
      });
      return;
    case MdPhase::remove:
      if (!linked_) return ctx_->client.unlink(path, finish);
      ctx_->client.unlink(path, [this, rank, index, finish](const Status& s) {
        if (!s.ok()) return finish(s);
        ctx_->client.unlink(link_path(rank, index), finish);
      });
      return;
    case MdPhase::link:
      ctx_->client.link(path, link_path(rank, index), [finish](Result<proto::InodeDesc> r) { finish(r.status()); });
      return;
    case MdPhase::rename:
      ctx_->client.rename(path, renamed_ ? item_path(rank, index) : renamed_path(rank, index), finish);
      return;
    case MdPhase::readdir:
    case MdPhase::ls_storm: break;
  }
  done(error(StatusCode::internal, "md_bench: item_op for a directory phase"));
}

void MdBench::ls_storm(StatusFn done) {
  const std::string dir = storm_dir();
  // The default storm directory is dir_of(0): the shared one, or rank 0's.
  const std::uint64_t expected_storm = config_.storm_dir.empty() ? expected_entries() : 0;
  const TimeNs issued = ctx_->env.now();
  ctx_->client.readdir(
      dir, true, [this, dir, issued, expected_storm, done](Result<std::vector<proto::DirEntryDesc>> r) {
        if (!r.ok()) return done(annotate(r.status(), "md_bench ls_storm readdir " + dir));
        recorder_->op(0, issued);
        storm_entries_ = r->size();
        recorder_->count("entries", static_cast<double>(r->size()));
        if (expected_storm != 0 && r->size() != expected_storm) {
          return done(error(StatusCode::internal, "md_bench ls_storm " + dir + ": " + std::to_string(r->size()) +
                                                      " entries, created " + std::to_string(expected_storm)));
        }
        auto paths = std::make_shared<std::vector<std::string>>();
        paths->reserve(r->size());
        for (const auto& entry : *r) paths->push_back(dir + "/" + entry.name);
        for_each_bounded(
            paths->size(), config_.threads,
            [this, paths](std::uint64_t i, StatusFn d) {
              const TimeNs stat_issued = ctx_->env.now();
              const std::string& path = (*paths)[i];
              ctx_->client.stat(path, [this, stat_issued, path, d](Result<proto::InodeDesc> s) {
                if (!s.ok()) return d(annotate(s.status(), "md_bench ls_storm stat " + path));
                recorder_->op(0, stat_issued);
                d(ok_status());
              });
            },
            done);
      });
}

}  // namespace sluice
