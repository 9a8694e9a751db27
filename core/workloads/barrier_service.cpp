#include "core/workloads/barrier_service.hpp"

#include <algorithm>
#include <memory>
#include <set>
#include <utility>

#include "core/workloads/workload_steps.hpp"

namespace sluice {

BarrierService::BarrierService(Env& env, BarrierServiceConfig config) : env_(env), config_(config) {}

void BarrierService::on_event(Event& event) {
  auto* delivery = std::get_if<Delivery>(&event);
  if (delivery == nullptr) return;  // the service starts no operations
  if (auto* m = std::get_if<proto::Barrier>(&delivery->message)) return arrive(delivery->from, *m);
  env_.log(LogLevel::warn, "barrier service: dropped unexpected " +
                               std::string(proto::message_name(delivery->message)) + " from " +
                               delivery->from.to_string());
}

void BarrierService::answer(Endpoint to, RequestId id, const Status& status) {
  proto::Ack ack;
  ack.request_id = id;
  ack.status = status.code();
  ack.error = proto::clip_error_text(status.message());
  // A lost Ack is recovered by the rank's retry, answered from released_.
  env_.send(to, std::move(ack)).ignore();
}

void BarrierService::arrive(Endpoint from, const proto::Barrier& m) {
  if (auto r = released_.find(m.name); r != released_.end()) {
    // A participant's late retry (its Ack was lost, or its RpcClient gave up
    // and the rank asked again just as the barrier released) is answered.
    if (r->second.count(from) != 0) return answer(from, m.request_id, ok_status());
    return answer(from, m.request_id,
                  error(StatusCode::invalid_argument, "barrier '" + m.name + "' was already released without " +
                                                          from.to_string() + " (names are single-use)"));
  }
  if (m.participants == 0 || m.participants > config_.max_participants) {
    return answer(
        from, m.request_id,
        error(StatusCode::invalid_argument, "barrier '" + m.name + "': participants " + std::to_string(m.participants) +
                                                " not in 1.." + std::to_string(config_.max_participants)));
  }
  auto it = open_.find(m.name);
  if (it == open_.end()) {
    if (open_.size() >= config_.max_open_barriers) {
      return answer(
          from, m.request_id,
          error(StatusCode::no_space, "barrier '" + m.name + "': " + std::to_string(config_.max_open_barriers) +
                                          " barriers already open (max_open_barriers)"));
    }
    Open fresh;
    fresh.participants = m.participants;
    fresh.first_arrival_ns = env_.now();
    it = open_.emplace(m.name, std::move(fresh)).first;
  } else if (it->second.participants != m.participants) {
    return answer(from, m.request_id,
                  error(StatusCode::invalid_argument,
                        "barrier '" + m.name + "': " + std::to_string(m.participants) + " participants, but " +
                            std::to_string(it->second.participants) + " announced by the first arrival"));
  }
  // Answer the latest attempt: ids grow per sender (RpcClient), so a late
  // duplicate of an older attempt does not replace a newer one.
  RequestId& latest = it->second.arrived[from];
  latest = std::max(latest, m.request_id);
  if (it->second.arrived.size() < it->second.participants) return;
  release(it->first, it->second);
  open_.erase(it);
}

void BarrierService::release(const std::string& name, Open& open) {
  ++releases_;
  env_.metrics().count("barrier.releases", 1);
  env_.metrics().sample("barrier.wait_ns", static_cast<double>(env_.now() - open.first_arrival_ns));
  for (const auto& [endpoint, id] : open.arrived) answer(endpoint, id, ok_status());
  std::set<Endpoint>& participants = released_[name];
  for (const auto& [endpoint, id] : open.arrived) participants.insert(endpoint);
  released_order_.push_back(name);
  while (released_order_.size() > config_.released_history) {
    released_.erase(released_order_.front());
    released_order_.pop_front();
  }
}

namespace {

struct BarrierWait {
  WorkloadContext* ctx = nullptr;
  std::string name;
  TimeNs deadline_ns = 0;
  std::function<void(Status)> done;
};

void barrier_attempt(const std::shared_ptr<BarrierWait>& wait) {
  proto::Barrier m;
  m.name = wait->name;
  m.participants = wait->ctx->ranks;
  wait->ctx->rpc.call(wait->ctx->barrier, std::move(m), [wait](Result<proto::Message> r) {
    if (r.ok()) return wait->done(ok_status());
    const Status& s = r.status();
    if (s.code() == StatusCode::timed_out && wait->ctx->env.now() < wait->deadline_ns) return barrier_attempt(wait);
    wait->done(annotate(s, "barrier '" + wait->name + "' (rank " + std::to_string(wait->ctx->rank) + " of " +
                               std::to_string(wait->ctx->ranks) + ")"));
  });
}

}  // namespace

void barrier(WorkloadContext& ctx, std::string name, TimeNs max_wait_ns, std::function<void(Status)> done) {
  if (!ctx.barrier.valid()) return defer_status(ctx, std::move(done), ok_status());
  auto wait = std::make_shared<BarrierWait>();
  wait->ctx = &ctx;
  wait->name = std::move(name);
  wait->deadline_ns = ctx.env.now() + max_wait_ns;
  wait->done = std::move(done);
  barrier_attempt(wait);
}

void barrier(WorkloadContext& ctx, std::string name, std::function<void(Status)> done) {
  barrier(ctx, std::move(name), k_barrier_max_wait_ns, std::move(done));
}

}  // namespace sluice
