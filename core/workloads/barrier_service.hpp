// BarrierService: the coordinator that keeps the phases of a workload's ranks
// apart, in the role of elbencho's master (its service hosts start a phase
// only when the master tells every one of them to) or an MPI_Barrier between
// mdtest/IOR phases.
//
// Protocol: a rank sends proto::Barrier{request_id, name, participants}; the
// service answers proto::Ack{request_id} to every participant once
// `participants` distinct endpoints have arrived at the barrier `name`.
// - Names are single-use: one name is one barrier, passed once by each rank
//   (workloads name barriers after their phase and a run tag). A name is
//   remembered after its release (the last released_history of them), so
//   an arrival there from one of its participants is answered at once, and
//   one from any other endpoint is refused.
// - Retries are safe: an arrival is keyed by (endpoint, name), so a resend
//   (RpcClient retry, a duplicated message, barrier()'s re-ask after a
//   timeout) is the same arrival; the Ack goes to the latest request id seen
//   from that endpoint.
// - Errors, answered in the Ack: participants == 0 or above
//   max_participants, or different from what the first arrival said
//   (invalid_argument); more than max_open_barriers open (no_space).
// A barrier whose participants never all arrive stays open: the waiting ranks
// give up after their own limit (barrier(), below), never hang.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "core/common/units.hpp"
#include "core/env.hpp"
#include "core/workloads/workload.hpp"

namespace sluice {

struct BarrierServiceConfig {
  std::size_t max_open_barriers = 4096;        // barriers waiting for arrivals at once
  std::uint32_t max_participants = 1'000'000;  // ranks in one barrier
  std::size_t released_history = 4096;         // released barriers remembered for late retries
};

class BarrierService final : public Service {
 public:
  explicit BarrierService(Env& env, BarrierServiceConfig config = {});

  void start() override {}
  void on_event(Event& event) override;
  std::string name() const override { return "barrier"; }

  std::size_t open_barriers() const { return open_.size(); }
  std::uint64_t releases() const { return releases_; }

 private:
  struct Open {
    std::uint32_t participants = 0;
    TimeNs first_arrival_ns = 0;
    std::map<Endpoint, RequestId> arrived;  // endpoint -> latest request id
  };

  void arrive(Endpoint from, const proto::Barrier& m);
  void release(const std::string& name, Open& open);
  void answer(Endpoint to, RequestId id, const Status& status);

  Env& env_;
  BarrierServiceConfig config_;
  std::map<std::string, Open, std::less<>> open_;
  std::map<std::string, std::set<Endpoint>, std::less<>> released_;
  std::deque<std::string> released_order_;
  std::uint64_t releases_ = 0;
};

// The longest a rank waits at one barrier before barrier() fails with
// timed_out: one hour of the world's time, far above any phase of a test and
// a bound on a lost rank in a simulation.
inline constexpr TimeNs k_barrier_max_wait_ns = 3600 * k_ns_per_s;

// Waits until all ctx.ranks ranks arrived at barrier `name` of ctx.barrier,
// then calls done(ok) (from a later event). `name` must be new to the
// barrier service (see above): a run's barriers carry the workload's run_tag,
// so two runs on one cluster need different tags. The request is re-sent when the
// RpcClient gives up on it (timed_out), until max_wait_ns has passed since the
// call; then done(timed_out). Any other error is passed on. When ctx.barrier
// is invalid (a run without coordination) it completes via a zero timer.
void barrier(WorkloadContext& ctx, std::string name, TimeNs max_wait_ns, std::function<void(Status)> done);
void barrier(WorkloadContext& ctx, std::string name, std::function<void(Status)> done);

}  // namespace sluice
