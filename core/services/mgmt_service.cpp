#include "core/services/mgmt_service.hpp"

namespace sluice {

MgmtService::MgmtService(Env& env, MgmtConfig config) : env_(env), config_(std::move(config)) {
  for (const auto& group : config_.buddy_groups) groups_[group.group] = group;
}

void MgmtService::start() {
  if (config_.check_interval_ns > 0) {
    ops_.expect(env_.timer(config_.check_interval_ns), [this](Completion&) { check_reachability(); });
  }
}

void MgmtService::on_event(Event& event) {
  if (auto* c = std::get_if<Completion>(&event)) {
    ops_.dispatch(*c);
    return;
  }
  auto& d = std::get<Delivery>(event);
  handle(d.from, d.message);
}

void MgmtService::reply(Endpoint to, proto::Message message) {
  // A lost reply is recovered by the caller's retry; nothing to do here.
  env_.send(to, std::move(message)).ignore();
}

proto::CapacityPool MgmtService::pool_for(std::uint64_t capacity_bytes, std::uint64_t free_bytes) const {
  TargetInfo info;
  info.capacity_bytes = capacity_bytes;
  info.free_bytes = free_bytes;
  switch (capacity_pool_of(info, config_.pools)) {
    case CapacityPool::normal: return proto::CapacityPool::normal;
    case CapacityPool::low: return proto::CapacityPool::low;
    case CapacityPool::emergency: return proto::CapacityPool::emergency;
  }
  return proto::CapacityPool::emergency;
}

void MgmtService::handle(Endpoint from, proto::Message& message) {
  if (auto* m = std::get_if<proto::RegisterTarget>(&message)) {
    proto::TargetInfoDesc t;
    t.target = m->target;
    t.node = m->node;
    t.endpoint = m->endpoint;
    t.reachability = proto::Reachability::online;
    t.consistency = proto::Consistency::good;
    t.capacity_bytes = m->capacity_bytes;
    t.free_bytes = m->free_bytes;
    t.pool = pool_for(t.capacity_bytes, t.free_bytes);
    targets_[m->target] = t;
    last_heard_ns_[m->target] = env_.now();
    ++version_;
    reply(from, proto::Ack{m->request_id, StatusCode::ok, {}});
  } else if (auto* s = std::get_if<proto::RegisterMetaShard>(&message)) {
    shards_[s->shard] = proto::ShardInfoDesc{s->shard, s->endpoint, proto::Reachability::online};
    ++version_;
    reply(from, proto::Ack{s->request_id, StatusCode::ok, {}});
  } else if (auto* c = std::get_if<proto::RegisterClient>(&message)) {
    clients_[c->endpoint] = c->node;
    reply(from, proto::Ack{c->request_id, StatusCode::ok, {}});
  } else if (auto* h = std::get_if<proto::Heartbeat>(&message)) {
    for (const auto& reported : h->targets) {
      auto it = targets_.find(reported.target);
      if (it == targets_.end()) continue;  // heartbeat before registration: the registration will come
      last_heard_ns_[reported.target] = env_.now();
      auto& t = it->second;
      const auto pool = pool_for(t.capacity_bytes, reported.free_bytes);
      if (t.reachability != proto::Reachability::online || t.free_bytes != reported.free_bytes || t.pool != pool) {
        t.reachability = proto::Reachability::online;
        t.free_bytes = reported.free_bytes;
        t.pool = pool;
        ++version_;
      }
    }
  } else if (auto* g = std::get_if<proto::GetMaps>(&message)) {
    proto::MapsReply r;
    r.request_id = g->request_id;
    r.status = StatusCode::ok;
    r.version = version_;
    for (const auto& [id, t] : targets_) r.targets.push_back(t);
    for (const auto& [id, shard] : shards_) r.shards.push_back(shard);
    for (const auto& [id, group] : groups_) r.groups.push_back(group);
    reply(from, std::move(r));
  } else if (RequestId* rid = request_id_of(message); rid != nullptr && !is_reply(message)) {
    reply(from, proto::Ack{*rid, StatusCode::invalid_argument,
                           "mgmt does not handle " + std::string(proto::message_name(message))});
  }
}

void MgmtService::check_reachability() {
  const TimeNs now = env_.now();
  for (auto& [id, t] : targets_) {
    const TimeNs silent = now - last_heard_ns_[id];
    auto next = proto::Reachability::online;
    if (silent >= config_.offline_after_ns) {
      next = proto::Reachability::offline;
    } else if (silent >= config_.probably_offline_after_ns) {
      next = proto::Reachability::probably_offline;
    }
    if (next != t.reachability) {
      t.reachability = next;
      ++version_;
      env_.log(LogLevel::warn, "target " + std::to_string(id) + " is now " +
                                   (next == proto::Reachability::online ? "online"
                                    : next == proto::Reachability::offline ? "offline"
                                                                            : "probably offline"));
    }
  }
  ops_.expect(env_.timer(config_.check_interval_ns), [this](Completion&) { check_reachability(); });
}

}  // namespace sluice
