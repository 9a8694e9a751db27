#include "core/workloads/workload_steps.hpp"

#include <memory>
#include <utility>

#include "core/common/rng.hpp"

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

}  // namespace sluice
