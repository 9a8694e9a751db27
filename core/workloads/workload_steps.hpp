// Small combinators for writing workload drivers as callback chains on one
// service's event loop: run steps in order, run N tasks with a bounded number
// in flight (elbencho's "threads", fio's iodepth), defer a call to a later
// event, and derive per-file pattern seeds.
//
// Everything here is single-threaded and sans-I/O. A StatusFn given to any of
// these is called exactly once. Tasks may finish synchronously (inside the
// call that started them) or later; the combinators neither recurse without
// bound nor lose a completion in either case.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.hpp"
#include "core/workloads/workload.hpp"

namespace sluice {

using StatusFn = std::function<void(Status)>;
// One step of a sequence: does its work and calls done(status) once.
using Step = std::function<void(StatusFn done)>;
// Task number `index` of a bounded loop.
using IndexTask = std::function<void(std::uint64_t index, StatusFn done)>;

// Runs the steps one after the other; the first error ends the sequence and is
// passed to done (later steps are not started). An empty list is ok at once.
void run_steps(std::vector<Step> steps, StatusFn done);

// Runs task(0) .. task(count - 1), at most max_inflight (>= 1) at any moment,
// started in index order. After the first error no new task starts; done gets
// that first error once every started task has finished (so no callback of a
// task can arrive after done). count == 0 calls done(ok) at once.
void for_each_bounded(std::uint64_t count, std::uint32_t max_inflight, IndexTask task, StatusFn done);

// Calls fn from a later event of this service (a zero timer), so that a
// result that is known at once still arrives the way every result arrives.
void defer(WorkloadContext& ctx, std::function<void()> fn);

// Calls done(status) from a later event.
void defer_status(WorkloadContext& ctx, StatusFn done, Status status);

// A seed for the data pattern of one item (a file, an object) of a run:
// splitmix64 of (base, a, b), so different files carry different bytes and a
// reader can regenerate any file's pattern from its coordinates alone.
std::uint64_t derive_seed(std::uint64_t base, std::uint64_t a, std::uint64_t b = 0);

// Treats already_exists as success: for setup mkdirs that several ranks or
// runs may issue.
Status ok_if_exists(const Status& status);

// Prefixes the message of a non-ok status with where it happened.
Status annotate(const Status& status, const std::string& where);

// What happens between two phases of a workload, besides the barrier.
enum class BetweenPhases : std::uint8_t { nothing, sync_dropcache };
// "nothing", "sync_dropcache".
std::string_view to_string(BetweenPhases between);

// between_phases = sync_dropcache (elbencho --sync --dropcache): once every
// rank has ended the phase before (a barrier named `barrier_name`), rank 0
// asks every storage server of its maps to write back its dirty pages and
// drop its cached ones (proto::FlushStorage, Env StorageOp::flush) and waits
// for all of them; then done, on every rank after the flush has ended only at
// rank 0 (the caller's phase barrier follows). So a phase never shares the
// drives with the write-back of the one before, and the flush's time is in no
// phase: rank 0 counts it in <workload>.flush_between_phases_ns and
// .flushes_between_phases.
void sync_dropcache(WorkloadContext& ctx, const std::string& workload, std::string barrier_name, TimeNs max_wait_ns,
                    StatusFn done);

}  // namespace sluice
