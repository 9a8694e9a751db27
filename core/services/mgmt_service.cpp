#include "core/services/mgmt_service.hpp"

#include <algorithm>
#include <vector>

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
    // A target that registers again (its server restarted) keeps the
    // consistency mgmt knows: a former primary that missed writes must not
    // come back as good.
    const auto known = targets_.find(m->target);
    const proto::Consistency consistency =
        known != targets_.end() ? known->second.consistency : proto::Consistency::good;
    proto::TargetInfoDesc t;
    t.target = m->target;
    t.node = m->node;
    t.endpoint = m->endpoint;
    t.reachability = proto::Reachability::online;
    t.consistency = consistency;
    t.capacity_bytes = m->capacity_bytes;
    t.free_bytes = m->free_bytes;
    t.pool = pool_for(t.capacity_bytes, t.free_bytes);
    targets_[m->target] = t;
    last_heard_ns_[m->target] = env_.now();
    ++version_;
    reply(from, proto::Ack{m->request_id, StatusCode::ok, {}});
  } else if (auto* s = std::get_if<proto::RegisterMetaShard>(&message)) {
    if (config_.meta_mirror) return register_meta_member(from, *s);
    shards_[s->shard] = proto::ShardInfoDesc{s->shard, s->endpoint, proto::Reachability::online};
    ++version_;
    reply(from, proto::Ack{s->request_id, StatusCode::ok, {}});
  } else if (auto* c = std::get_if<proto::RegisterClient>(&message)) {
    clients_[c->endpoint] = c->node;
    reply(from, proto::Ack{c->request_id, StatusCode::ok, {}});
  } else if (auto* h = std::get_if<proto::Heartbeat>(&message)) {
    if (auto known = meta_heard_ns_.find(h->from); known != meta_heard_ns_.end()) known->second = env_.now();
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
  } else if (auto* sc = std::get_if<proto::SetTargetConsistency>(&message)) {
    set_target_consistency(from, *sc);
  } else if (auto* mc = std::get_if<proto::SetMetaConsistency>(&message)) {
    set_meta_consistency(from, *mc);
  } else if (auto* g = std::get_if<proto::GetMaps>(&message)) {
    proto::MapsReply r;
    r.request_id = g->request_id;
    r.status = StatusCode::ok;
    r.version = version_;
    for (const auto& [id, t] : targets_) r.targets.push_back(t);
    for (const auto& [id, shard] : shards_) r.shards.push_back(shard);
    for (const auto& [id, group] : groups_) r.groups.push_back(group);
    for (const auto& [id, group] : meta_groups_) r.meta_groups.push_back(group.desc);
    reply(from, std::move(r));
  } else if (RequestId* rid = request_id_of(message); rid != nullptr && !is_reply(message)) {
    reply(from, proto::Ack{*rid, StatusCode::invalid_argument,
                           "mgmt does not handle " + std::string(proto::message_name(message))});
  }
}

void MgmtService::check_reachability() {
  const TimeNs now = env_.now();
  std::vector<TargetId> went_offline;
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
                                   (next == proto::Reachability::online    ? "online"
                                    : next == proto::Reachability::offline ? "offline"
                                                                           : "probably offline"));
      if (next == proto::Reachability::offline) went_offline.push_back(id);
    }
  }
  // An offline group member misses the writes its buddy takes from now on: a
  // buddy that is online (after this check). One that is not heard either
  // takes nothing alone (a primary acknowledges a write its secondary lacks
  // only once mgmt took needs_resync from it: SetTargetConsistency), so the
  // member stays good and can take over once heard again, as check_meta_groups
  // does for metadata groups.
  for (TargetId id : went_offline) {
    const proto::BuddyGroupDesc* group = group_of(id);
    if (group == nullptr) continue;
    auto buddy = targets_.find(group->primary == id ? group->secondary : group->primary);
    if (buddy != targets_.end() && buddy->second.reachability == proto::Reachability::online) {
      set_consistency(id, proto::Consistency::needs_resync, "it went offline");
    }
  }
  check_switchovers();
  check_meta_groups(now);
  ops_.expect(env_.timer(config_.check_interval_ns), [this](Completion&) { check_reachability(); });
}

proto::BuddyGroupDesc* MgmtService::group_of(TargetId target) {
  for (auto& [id, group] : groups_) {
    if (group.primary == target || group.secondary == target) return &group;
  }
  return nullptr;
}

void MgmtService::set_consistency(TargetId target, proto::Consistency consistency, const std::string& why) {
  auto it = targets_.find(target);
  if (it == targets_.end() || it->second.consistency == consistency) return;
  // bad is only left by an operator (BeeGFS): an automatic needs_resync must not hide it.
  if (it->second.consistency == proto::Consistency::bad && consistency == proto::Consistency::needs_resync) return;
  it->second.consistency = consistency;
  ++version_;
  env_.metrics().count("mgmt.consistency_changes", 1);
  env_.log(LogLevel::warn,
           "target " + std::to_string(target) + " is now " + std::string(proto::to_string(consistency)) + ": " + why);
}

void MgmtService::check_switchovers() {
  if (!config_.buddy_switchover) return;
  for (auto& [id, group] : groups_) {
    auto primary = targets_.find(group.primary);
    auto secondary = targets_.find(group.secondary);
    if (primary == targets_.end() || secondary == targets_.end()) continue;  // not registered yet
    if (primary->second.reachability != proto::Reachability::offline) continue;
    if (secondary->second.reachability != proto::Reachability::online ||
        secondary->second.consistency != proto::Consistency::good) {
      continue;  // no member with current data is reachable: the group waits for its primary
    }
    const TargetId former = group.primary;
    std::swap(group.primary, group.secondary);
    ++switchovers_;
    ++version_;
    env_.metrics().count("mgmt.switchovers", 1);
    env_.log(LogLevel::warn, "buddy group " + std::to_string(id) + ": switchover, target " +
                                 std::to_string(group.primary) + " is now primary (target " + std::to_string(former) +
                                 " offline)");
    set_consistency(former, proto::Consistency::needs_resync, "it was switched away from while offline");
  }
}

void MgmtService::set_target_consistency(Endpoint from, const proto::SetTargetConsistency& m) {
  const proto::BuddyGroupDesc* group = group_of(m.target);
  if (group == nullptr || group->secondary != m.target || group->primary != m.reporter ||
      targets_.count(m.target) == 0) {
    reply(from, proto::Ack{m.request_id, StatusCode::invalid_argument,
                           "target " + std::to_string(m.reporter) + " may not set the state of target " +
                               std::to_string(m.target) + ": only the primary of its buddy group may (" +
                               (group == nullptr ? std::string("it is in no group")
                                                 : "group " + std::to_string(group->group) + " primary " +
                                                       std::to_string(group->primary) + " secondary " +
                                                       std::to_string(group->secondary)) +
                               ", maps version " + std::to_string(version_) + ")"});
    return;
  }
  set_consistency(m.target, m.consistency, "reported by its primary, target " + std::to_string(m.reporter));
  reply(from, proto::Ack{m.request_id, StatusCode::ok, {}});
}

// ---- metadata buddy groups --------------------------------------------------

std::map<ShardId, proto::MetaGroupDesc> MgmtService::meta_groups() const {
  std::map<ShardId, proto::MetaGroupDesc> out;
  for (const auto& [shard, g] : meta_groups_) out[shard] = g.desc;
  return out;
}

bool MgmtService::meta_mirrors_in_sync(std::size_t shards) const {
  if (!config_.meta_mirror) return true;
  if (meta_groups_.size() != shards) return false;
  return std::all_of(meta_groups_.begin(), meta_groups_.end(), [](const auto& entry) {
    const proto::MetaGroupDesc& g = entry.second.desc;
    return g.primary.valid() && g.secondary.valid() && g.secondary_state == proto::Consistency::good;
  });
}

proto::Reachability MgmtService::reachability_of(Endpoint server, TimeNs now) const {
  auto it = meta_heard_ns_.find(server);
  if (it == meta_heard_ns_.end()) return proto::Reachability::offline;
  const TimeNs silent = now - it->second;
  if (config_.check_interval_ns == 0 || silent < config_.probably_offline_after_ns) return proto::Reachability::online;
  return silent >= config_.offline_after_ns ? proto::Reachability::offline : proto::Reachability::probably_offline;
}

void MgmtService::publish_meta_shard(const MetaGroup& group) {
  shards_[group.desc.shard] = proto::ShardInfoDesc{group.desc.shard, group.desc.primary, group.primary_reachability};
}

void MgmtService::register_meta_member(Endpoint from, const proto::RegisterMetaShard& m) {
  MetaGroup& g = meta_groups_[m.shard];
  // The first server takes the primary's place, a `second` one the
  // secondary's, and a server that is in the group keeps its place.
  proto::MetaGroupDesc& d = g.desc;
  d.shard = m.shard;
  const std::string shard = "metadata shard " + std::to_string(m.shard);
  const bool was_primary = d.primary == m.endpoint;
  const bool was_secondary = d.secondary.valid() && d.secondary == m.endpoint;
  const bool takes_primary =
      was_primary || (!was_secondary && !d.primary.valid() && (!m.second || d.secondary.valid()));
  if (takes_primary) {
    const bool restarted = d.primary.valid() && g.primary_incarnation != m.incarnation;
    d.primary = m.endpoint;
    g.primary_incarnation = m.incarnation;
    g.primary_reachability = proto::Reachability::online;
    if (restarted) {
      env_.log(LogLevel::warn, shard + ": its primary " + m.endpoint.to_string() + " restarted");
      if (config_.buddy_switchover && d.secondary.valid() && d.secondary_state == proto::Consistency::good &&
          d.secondary_reachability == proto::Reachability::online) {
        meta_switchover(g, "its primary restarted and may have lost what it held");
      }
    }
  } else if (was_secondary || !d.secondary.valid()) {
    if (d.secondary.valid() && g.secondary_incarnation != m.incarnation) {
      env_.log(LogLevel::warn, shard + ": its secondary " + m.endpoint.to_string() + " restarted");
    }
    // A secondary holds nothing its primary can count on until the primary resynced it.
    if (!d.secondary.valid() || g.secondary_incarnation != m.incarnation) {
      if (d.secondary_state != proto::Consistency::bad) d.secondary_state = proto::Consistency::needs_resync;
    }
    d.secondary = m.endpoint;
    g.secondary_incarnation = m.incarnation;
    d.secondary_reachability = proto::Reachability::online;
  } else {
    reply(from, proto::Ack{m.request_id, StatusCode::invalid_argument,
                           shard + " is mirrored by " + d.primary.to_string() + " and " + d.secondary.to_string() +
                               " already; " + m.endpoint.to_string() + " may not join"});
    return;
  }
  meta_heard_ns_[m.endpoint] = env_.now();
  publish_meta_shard(g);
  ++version_;
  reply(from, proto::Ack{m.request_id, StatusCode::ok, {}});
}

void MgmtService::meta_switchover(MetaGroup& g, const std::string& why) {
  proto::MetaGroupDesc& d = g.desc;
  const Endpoint former = d.primary;
  std::swap(d.primary, d.secondary);
  std::swap(g.primary_incarnation, g.secondary_incarnation);
  g.primary_reachability = d.secondary_reachability;
  d.secondary_reachability = proto::Reachability::offline;
  d.secondary_state = proto::Consistency::needs_resync;
  ++switchovers_;
  ++version_;
  publish_meta_shard(g);
  env_.metrics().count("mgmt.meta_switchovers", 1);
  env_.log(LogLevel::warn, "metadata shard " + std::to_string(d.shard) + ": switchover, " + d.primary.to_string() +
                               " is now primary (" + former.to_string() + ": " + why + ")");
}

void MgmtService::log_meta_reachability(ShardId shard, const char* role, Endpoint server, proto::Reachability was,
                                        proto::Reachability now) {
  if (was == now) return;
  env_.log(LogLevel::warn, "metadata shard " + std::to_string(shard) + ": " + role + " " + server.to_string() +
                               " is now " + std::string(proto::to_string(now)));
}

void MgmtService::check_meta_groups(TimeNs now) {
  for (auto& [shard, g] : meta_groups_) {
    proto::MetaGroupDesc& d = g.desc;
    const proto::Reachability primary = reachability_of(d.primary, now);
    const proto::Reachability secondary =
        d.secondary.valid() ? reachability_of(d.secondary, now) : proto::Reachability::offline;
    if (primary != g.primary_reachability || secondary != d.secondary_reachability) {
      log_meta_reachability(shard, "primary", d.primary, g.primary_reachability, primary);
      if (d.secondary.valid())
        log_meta_reachability(shard, "secondary", d.secondary, d.secondary_reachability, secondary);
      g.primary_reachability = primary;
      d.secondary_reachability = secondary;
      ++version_;
      publish_meta_shard(g);
    }
    // An offline secondary misses what a live primary takes from now on. One
    // whose primary is not heard either is left good: the primary acknowledges
    // nothing its secondary has not applied unless mgmt took needs_resync from
    // it first (SetMetaConsistency), so the silent secondary missed nothing
    // acknowledged, and it takes over once heard again. Marking it too left the
    // shard with no server when the secondary's heartbeats were late while its
    // primary died (cli.readme_examples, storage_failover.lua on emulate,
    // 1 in 3 fresh-clone CI runs).
    if (d.secondary.valid() && secondary == proto::Reachability::offline && primary == proto::Reachability::online &&
        d.secondary_state == proto::Consistency::good) {
      d.secondary_state = proto::Consistency::needs_resync;
      ++version_;
      env_.log(LogLevel::warn, "metadata shard " + std::to_string(shard) + ": secondary " + d.secondary.to_string() +
                                   " is offline: needs_resync");
    }
    if (config_.buddy_switchover && primary == proto::Reachability::offline && d.secondary.valid() &&
        secondary == proto::Reachability::online && d.secondary_state == proto::Consistency::good) {
      meta_switchover(g, "offline");
    }
  }
}

void MgmtService::set_meta_consistency(Endpoint from, const proto::SetMetaConsistency& m) {
  auto it = meta_groups_.find(m.shard);
  if (it == meta_groups_.end() || it->second.desc.primary != m.reporter || !it->second.desc.secondary.valid()) {
    reply(from, proto::Ack{m.request_id, StatusCode::invalid_argument,
                           m.reporter.to_string() + " may not set the mirror state of metadata shard " +
                               std::to_string(m.shard) + ": only its primary may (" +
                               (it == meta_groups_.end() ? std::string("the shard is not mirrored")
                                                         : "primary " + it->second.desc.primary.to_string()) +
                               ", maps version " + std::to_string(version_) + ")"});
    return;
  }
  proto::MetaGroupDesc& d = it->second.desc;
  const bool keep_bad =
      d.secondary_state == proto::Consistency::bad && m.consistency == proto::Consistency::needs_resync;
  if (d.secondary_state != m.consistency && !keep_bad) {
    d.secondary_state = m.consistency;
    ++version_;
    env_.metrics().count("mgmt.consistency_changes", 1);
    env_.log(LogLevel::info, "metadata shard " + std::to_string(m.shard) + ": secondary " + d.secondary.to_string() +
                                 " is now " + std::string(proto::to_string(m.consistency)) +
                                 " (reported by its primary)");
  }
  reply(from, proto::Ack{m.request_id, StatusCode::ok, {}});
}

}  // namespace sluice
