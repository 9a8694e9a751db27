#include "core/workloads/workload_steps.hpp"

#include <memory>
#include <set>
#include <utility>

#include "core/common/rng.hpp"
#include "core/workloads/barrier_service.hpp"

namespace sluice {
namespace {

struct Sequence {
  std::vector<Step> steps;
  std::size_t next = 0;
  StatusFn done;
};

void run_next(const std::shared_ptr<Sequence>& seq) {
  if (seq->next == seq->steps.size()) {
    StatusFn done = std::move(seq->done);
    return done(ok_status());
  }
  Step& step = seq->steps[seq->next++];
  step([seq](Status s) {
    if (!s.ok()) {
      StatusFn done = std::move(seq->done);
      return done(std::move(s));
    }
    run_next(seq);
  });
}

struct BoundedLoop {
  std::uint64_t count = 0;
  std::uint32_t max_inflight = 1;
  IndexTask task;
  StatusFn done;
  std::uint64_t next = 0;
  std::uint32_t inflight = 0;
  Status first_error;
  bool pumping = false;
  bool finished = false;
};

void pump(const std::shared_ptr<BoundedLoop>& loop) {
  // Tasks that complete synchronously re-enter here; the outer call keeps
  // looping instead, so the stack depth stays constant.
  if (loop->pumping) return;
  loop->pumping = true;
  while (loop->first_error.ok() && loop->inflight < loop->max_inflight && loop->next < loop->count) {
    const std::uint64_t index = loop->next++;
    ++loop->inflight;
    loop->task(index, [loop](Status s) {
      --loop->inflight;
      if (!s.ok() && loop->first_error.ok()) loop->first_error = std::move(s);
      pump(loop);
    });
  }
  loop->pumping = false;
  const bool no_more = !loop->first_error.ok() || loop->next == loop->count;
  if (no_more && loop->inflight == 0 && !loop->finished) {
    loop->finished = true;
    StatusFn done = std::move(loop->done);
    done(loop->first_error);
  }
}

}  // namespace

void run_steps(std::vector<Step> steps, StatusFn done) {
  auto seq = std::make_shared<Sequence>();
  seq->steps = std::move(steps);
  seq->done = std::move(done);
  run_next(seq);
}

void for_each_bounded(std::uint64_t count, std::uint32_t max_inflight, IndexTask task, StatusFn done) {
  auto loop = std::make_shared<BoundedLoop>();
  loop->count = count;
  loop->max_inflight = max_inflight == 0 ? 1 : max_inflight;
  loop->task = std::move(task);
  loop->done = std::move(done);
  pump(loop);
}

void defer(WorkloadContext& ctx, std::function<void()> fn) {
  ctx.ops.expect(ctx.env.timer(0), [fn = std::move(fn)](Completion&) { fn(); });
}

void defer_status(WorkloadContext& ctx, StatusFn done, Status status) {
  defer(ctx, [done = std::move(done), status = std::move(status)]() { done(status); });
}

std::uint64_t derive_seed(std::uint64_t base, std::uint64_t a, std::uint64_t b) {
  std::uint64_t state = base;
  std::uint64_t h = splitmix64(state);
  state = h ^ (a + 0x9E3779B97F4A7C15ULL);
  h = splitmix64(state);
  state = h ^ (b + 0xC2B2AE3D27D4EB4FULL);
  return splitmix64(state);
}

Status ok_if_exists(const Status& status) {
  if (status.code() == StatusCode::already_exists) return ok_status();
  return status;
}

Status annotate(const Status& status, const std::string& where) {
  if (status.ok()) return status;
  return error(status.code(), where + ": " + status.message());
}

std::string_view to_string(BetweenPhases between) {
  switch (between) {
    case BetweenPhases::nothing: return "nothing";
    case BetweenPhases::sync_dropcache: return "sync_dropcache";
  }
  return "unknown";
}

namespace {

void flush_storage(WorkloadContext& ctx, const std::string& workload, StatusFn done) {
  std::set<Endpoint> servers;
  for (const auto& [target, info] : ctx.client.targets()) servers.insert(info.endpoint);
  const TimeNs started = ctx.env.now();
  auto remaining = std::make_shared<std::size_t>(servers.size());
  auto failure = std::make_shared<Status>();
  auto finish = [&ctx, workload, started, failure, done] {
    ctx.env.metrics().count(workload + ".flush_between_phases_ns", static_cast<double>(ctx.env.now() - started));
    ctx.env.metrics().count(workload + ".flushes_between_phases", 1);
    done(*failure);
  };
  if (servers.empty()) {
    auto nothing_to_flush = [finish](Status) { finish(); };
    return defer_status(ctx, nothing_to_flush, ok_status());
  }
  for (const Endpoint& server : servers) {
    ctx.rpc.call(
        server, proto::FlushStorage{}, [remaining, failure, finish, server, workload](Result<proto::Message> r) {
          if (!r.ok() && failure->ok()) {
            *failure = annotate(r.status(), workload + " sync_dropcache of storage server " + server.to_string());
          }
          if (--*remaining == 0) finish();
        });
  }
}

}  // namespace

void sync_dropcache(WorkloadContext& ctx, const std::string& workload, std::string barrier_name, TimeNs max_wait_ns,
                    StatusFn done) {
  barrier(ctx, std::move(barrier_name), max_wait_ns, [&ctx, workload, done](Status s) {
    if (!s.ok() || ctx.rank != 0) return done(s);
    flush_storage(ctx, workload, done);
  });
}

}  // namespace sluice
