// StorageService: buddy mirroring (see "Buddy mirroring" in storage_service.hpp).
//
// Who may do what, in one place:
// - roles_ come from the last maps fetched from mgmt; a target with no role
//   is not mirrored and is served as before.
// - buddies_ holds, per primary target, the state towards its secondary:
//   `forwarding` (writes go to both), else writes go on alone, each recorded
//   in the ResyncLog once written, and acknowledged only once mgmt has
//   confirmed the secondary as not good with this target as primary
//   (`confirmed`). forwarding turns true only when a resync drained the log
//   with no unrecorded write in flight, so no write is ever neither
//   forwarded nor recorded.
#include <algorithm>
#include <memory>
#include <string>

#include "core/services/invariants.hpp"
#include "core/services/storage_service.hpp"

namespace sluice {

namespace {

std::string target_name(TargetId t) { return "target " + std::to_string(t); }

}  // namespace

bool StorageService::mirror_forwarding(TargetId target) const {
  auto it = buddies_.find(target);
  return it != buddies_.end() && it->second.forwarding;
}

bool StorageService::mirror_resync_pending(TargetId target) const {
  auto it = buddies_.find(target);
  return it != buddies_.end() && !it->second.forwarding && !it->second.reported_bad;
}

const StorageService::MirrorRole* StorageService::mirror_role(TargetId target) const {
  if (!config_.mirror.enabled) return nullptr;
  auto it = roles_.find(target);
  return it == roles_.end() ? nullptr : &it->second;
}

StorageService::Buddy* StorageService::buddy_of(TargetId target) {
  auto it = buddies_.find(target);
  return it == buddies_.end() ? nullptr : &it->second;
}

Endpoint StorageService::target_endpoint(TargetId target) const {
  auto it = map_targets_.find(target);
  return it == map_targets_.end() ? Endpoint{} : it->second.endpoint;
}

void StorageService::restart() {
  env_.log(LogLevel::warn, name() + ": restarted; requests in flight, maps and resync logs are lost");
  env_.metrics().count("storage.restarts", 1);
  // The previous incarnation's operations will never complete: their slots,
  // staging and waiters go with them.
  for (auto& [t, ts] : targets_) {
    ts.active = 0;
    ts.active_pieces = 0;
    ts.queued.clear();
  }
  staging_in_use_bytes_ = 0;
  mirror_staging_in_use_bytes_ = 0;
  nic_in_flight_bytes_.clear();
  registered_targets_ = 0;
  maps_loaded_ = false;
  maps_fetching_ = false;
  roles_.clear();
  map_targets_.clear();
  buddies_.clear();
  resync_log_lost_ = true;
  chunk_replies_ = ReplyCache{};  // a restarted server has no memory of what it executed
  flushing_.clear();
}

// ---- maps --------------------------------------------------------------------

void StorageService::mirror_tick() {
  refresh_mirror_maps();
  ops_.expect(env_.timer(config_.mirror.maps_refresh_interval_ns), [this](Completion&) { mirror_tick(); });
}

void StorageService::refresh_mirror_maps() {
  if (maps_fetching_) return;
  maps_fetching_ = true;
  proto::GetMaps get;
  get.known_version = maps_version_;
  rpc_.call(config_.mgmt, std::move(get), [this](Result<proto::Message> r) {
    maps_fetching_ = false;
    if (!r.ok()) {
      env_.log(LogLevel::warn, name() + ": fetching maps for buddy mirroring: " + r.status().to_string());
      return;
    }
    apply_maps(std::get<proto::MapsReply>(r.value()));
  });
}

// Targets that stopped being primaries: their buddy state goes (the new
// primary records changes from its promotion on); waiters learn it.
void StorageService::drop_former_primaries() {
  for (auto it = buddies_.begin(); it != buddies_.end();) {
    const MirrorRole* role = mirror_role(it->first);
    if (role != nullptr && role->primary && role->buddy == it->second.target) {
      ++it;
      continue;
    }
    env_.log(LogLevel::warn, name() + ": " + target_name(it->first) + " is no longer primary of buddy group " +
                                 std::to_string(it->second.group));
    auto waiters = std::move(it->second.confirm_waiters);
    const TargetId former = it->first;
    it = buddies_.erase(it);
    for (auto& w : waiters) {
      w(error(StatusCode::unavailable, target_name(former) + " is no longer the primary of its buddy group"));
    }
  }
}

void StorageService::apply_maps(proto::MapsReply& maps) {
  if (maps_loaded_ && maps.version < maps_version_) return;  // an older answer overtaken by a newer one
  if (maps_loaded_) invariants::maps_version(maps_version_, maps.version);
  maps_loaded_ = true;
  maps_version_ = maps.version;
  map_targets_.clear();
  for (const auto& t : maps.targets) map_targets_[t.target] = t;
  roles_.clear();
  for (const auto& g : maps.groups) {
    if (owns(g.primary)) roles_[g.primary] = MirrorRole{g.group, true, g.secondary};
    if (owns(g.secondary)) roles_[g.secondary] = MirrorRole{g.group, false, g.primary};
  }
  drop_former_primaries();
  for (const auto& [target, role] : roles_) {
    if (!role.primary) continue;
    auto b = buddies_.find(target);
    const auto buddy_info = map_targets_.find(role.buddy);
    const proto::Consistency buddy_state =
        buddy_info == map_targets_.end() ? proto::Consistency::good : buddy_info->second.consistency;
    if (b == buddies_.end()) {
      // A new primary (start, or a promotion): forward exactly when mgmt has the buddy good.
      Buddy fresh;
      fresh.target = role.buddy;
      fresh.group = role.group;
      fresh.log = ResyncLog(config_.mirror.resync_log_max_files);
      fresh.forwarding = buddy_state == proto::Consistency::good;
      // A promoted primary records from its promotion on, which is exactly
      // what its buddy (the former primary, dead since) misses. After a
      // restart, what was recorded before is gone: copy everything.
      if (resync_log_lost_ && !fresh.forwarding) fresh.log.require_full();
      b = buddies_.emplace(target, std::move(fresh)).first;
    }
    Buddy& buddy = b->second;
    if (buddy_state != proto::Consistency::good) {
      // mgmt has the buddy not good and us primary: going on alone is confirmed.
      buddy.confirmed = true;
      if (buddy.forwarding && !buddy.good_report_in_flight) {
        // mgmt saw the buddy offline although our forwards did not fail yet:
        // stop forwarding and let a (quick, empty-log) resync confirm it.
        buddy.forwarding = false;
        env_.log(LogLevel::warn, name() + ": mgmt has " + target_name(role.buddy) + " as " +
                                     std::string(proto::to_string(buddy_state)) + "; " + target_name(target) +
                                     " stops forwarding to it");
      }
      if (buddy_state == proto::Consistency::bad) buddy.reported_bad = true;
    } else {
      // good in mgmt's maps while we do not forward: our needs_resync report
      // is not (yet) in these maps; going on alone needs a confirmation again.
      if (!buddy.forwarding) buddy.confirmed = false;
      buddy.reported_bad = false;
    }
    maybe_start_resync(target);
  }
  resync_log_lost_ = false;
}

// ---- admission ----------------------------------------------------------------

bool StorageService::admit_mirrored(Endpoint from, RequestId rid, TargetId target) {
  if (!config_.mirror.enabled || !owns(target)) return true;
  if (!maps_loaded_) {
    refresh_mirror_maps();
    ++again_replies_;
    env_.send(from,
              proto::ChunkReply{rid, StatusCode::again, name() + " has not loaded the buddy group maps yet", 0, 0})
        .ignore();
    return false;
  }
  const MirrorRole* role = mirror_role(target);
  if (role == nullptr) return true;
  if (!role->primary) {
    // The client's maps are newer or older than ours; either way it must ask mgmt.
    refresh_mirror_maps();
    env_.metrics().count("storage.mirror_not_primary_replies", 1);
    env_.send(from,
              proto::ChunkReply{rid, StatusCode::unavailable,
                                target_name(target) + " is the secondary of buddy group " +
                                    std::to_string(role->group) + " (maps version " + std::to_string(maps_version_) +
                                    "): use its primary, " + target_name(role->buddy),
                                0, 0})
        .ignore();
    return false;
  }
  const Buddy* buddy = buddy_of(target);
  if (buddy != nullptr && buddy->forwarding && !target_endpoint(role->buddy).valid() &&
      env_.now() - started_ns_ < config_.mirror.buddy_register_wait_ns) {
    // The buddy has not registered with mgmt yet (cluster start): wait for it
    // rather than mark it needs_resync at once.
    refresh_mirror_maps();
    ++again_replies_;
    env_.send(from, proto::ChunkReply{rid, StatusCode::again,
                                      "the buddy of " + target_name(target) + ", " + target_name(role->buddy) +
                                          ", is not registered with mgmt yet",
                                      0, 0})
        .ignore();
    return false;
  }
  return true;
}

// ---- the primary's write path -------------------------------------------------

void StorageService::mirrored_write(TargetId target, Endpoint from, const proto::WriteChunk& m, MemHandle staging) {
  Buddy* buddy = buddy_of(target);
  const MirrorRole* role = mirror_role(target);
  if (buddy == nullptr || role == nullptr) {
    // Roles changed between admission and now: not ours to write any more.
    finish(target, from,
           proto::ChunkReply{m.request_id, StatusCode::unavailable,
                             target_name(target) + " is no longer the primary of its buddy group", 0, 0},
           staging);
    return;
  }
  const Endpoint buddy_ep = target_endpoint(buddy->target);
  const bool forward = buddy->forwarding && buddy_ep.valid();
  if (buddy->forwarding && !forward) demote_buddy(target, target_name(buddy->target) + " is not in the maps");
  struct Join {
    int pending = 0;
    Status local;
    Status forwarded;
  };
  auto join = std::make_shared<Join>();
  join->pending = forward ? 2 : 1;
  if (!forward) ++buddy->unforwarded_inflight;
  const TargetId secondary = buddy->target;
  const GroupId group = buddy->group;

  auto reply = [this, target, from, m, staging](const Status& s) {
    proto::ChunkReply done{m.request_id, s.code(), proto::clip_error_text(s.message()), 0, m.crc32c};
    if (s.ok()) done.bytes = m.length;
    finish(target, from, std::move(done), staging);
  };
  auto arrive = [this, target, m, join, forward, secondary, reply]() {
    if (--join->pending > 0) return;
    if (!join->local.ok()) {
      // Not written here: the client gets the error and retries. (If the
      // forward went through, the secondary is ahead, which the retry repairs.)
      return reply(join->local);
    }
    if (forward && join->forwarded.ok()) {
      env_.metrics().count("storage.mirror_forwarded_bytes", static_cast<double>(m.length));
      return reply(ok_status());
    }
    Buddy* b = buddy_of(target);
    if (b != nullptr && b->target == secondary) b->log.record_write(m.file_id, m.object_offset, m.length);
    if (forward) {
      if (std::optional<Status> refused = forward_failed(target, secondary, "write", join->forwarded)) {
        return reply(*refused);
      }
    }
    await_alone(target, [this, reply](Status s) {
      if (s.ok()) env_.metrics().count("storage.mirror_writes_alone", 1);
      reply(s);
    });
  };

  local_write(target, m.file_id, m.object_offset, staging, m.sync, m.crc32c,
              [this, target, forward, secondary, join, arrive, m](Completion& written) {
                join->local = written.status;
                if (!forward) {
                  // Recorded once written, so a resync that reads the object
                  // after this point sees these bytes (see the top of the file).
                  std::optional<ChangedRange> changed;
                  if (written.status.ok()) changed = ChangedRange{m.file_id, m.object_offset, m.length};
                  applied_alone(target, secondary, changed, true);
                }
                arrive();
              });
  if (!forward) return;
  proto::MirrorWrite mw =
      mirror_write_to(buddy_ep, group, target, secondary, m.file_id, m.object_offset, m.length, staging, m.crc32c);
  mw.sync = m.sync;
  env_.metrics().count("storage.mirror_forwards", 1);
  mirror_rpc_.call(buddy_ep, std::move(mw), [join, arrive](Result<proto::Message> r) {
    join->forwarded = r.status();
    arrive();
  });
}

proto::MirrorWrite StorageService::mirror_write_to(Endpoint secondary_ep, GroupId group, TargetId primary,
                                                   TargetId secondary, FileId file_id, std::uint64_t object_offset,
                                                   std::uint64_t length, MemHandle src, std::uint32_t crc32c) {
  proto::MirrorWrite mw;
  mw.group = group;
  mw.primary = primary;
  mw.target = secondary;
  mw.file_id = file_id;
  mw.object_offset = object_offset;
  mw.length = length;
  mw.src = src;
  // The primary's bytes leave through a NIC nearest the primary target's drive.
  const std::uint32_t nic = least_busy_nic(primary, k_no_id);
  mw.rail = proto::RailDesc{nic, k_no_id};
  mw.crc32c = crc32c;
  // The secondary pulls from `src`: grant it the region (MirrorWrite carries
  // no key; a one-sided transport's secondary asks for it).
  (void)rdma_keys_for(env_, src, nic, secondary_ep.node);
  return mw;
}

void StorageService::applied_alone(TargetId target, TargetId secondary, std::optional<ChangedRange> changed,
                                   bool counted) {
  Buddy* b = buddy_of(target);
  if (b == nullptr || b->target != secondary) return;  // roles changed meanwhile: not this buddy's any more
  if (changed) b->log.record_write(changed->file_id, changed->offset, changed->length);
  // Not below zero: a buddy made again for the same secondary (a role that
  // went and came back) while a change counted by the one before was in flight.
  if (counted && b->unforwarded_inflight > 0) --b->unforwarded_inflight;
  if (b->resyncing && b->resync_idle) {
    b->resync_idle = false;
    resync_next(target);
  }
}

std::optional<Status> StorageService::forward_failed(TargetId target, TargetId secondary, std::string_view what,
                                                     const Status& failed) {
  if (failed.code() == StatusCode::invalid_argument) {
    refresh_mirror_maps();
    return error(StatusCode::unavailable, target_name(target) +
                                              " may no longer be the primary: " + target_name(secondary) +
                                              " refused the mirrored " + std::string(what) + ": " + failed.message());
  }
  env_.metrics().count("storage.mirror_forward_failures", 1);
  demote_buddy(target, "forwarding a mirrored " + std::string(what) + " to it failed: " + failed.to_string());
  return std::nullopt;
}

void StorageService::forward_removal(TargetId target, FileId file_id) {
  const MirrorRole* role = mirror_role(target);
  Buddy* buddy = buddy_of(target);
  if (role == nullptr || !role->primary || buddy == nullptr) return;
  const Endpoint ep = target_endpoint(buddy->target);
  if (!buddy->forwarding || !ep.valid()) {
    buddy->log.record_remove(file_id);
    return;
  }
  proto::MirrorRemove mr;
  mr.group = buddy->group;
  mr.primary = target;
  mr.target = buddy->target;
  mr.file_id = file_id;
  const TargetId secondary = buddy->target;
  // The unlink is acknowledged without waiting: a lost forward is recorded
  // for the resync, and the file is gone from the namespace either way.
  mirror_rpc_.call(ep, std::move(mr), [this, target, secondary, file_id](Result<proto::Message> r) {
    if (r.ok()) return;
    Buddy* b = buddy_of(target);
    if (b == nullptr || b->target != secondary) return;
    b->log.record_remove(file_id);
    if (r.status().code() != StatusCode::invalid_argument) {
      demote_buddy(target, "forwarding a removal to it failed: " + r.status().to_string());
    }
  });
}

void StorageService::demote_buddy(TargetId target, const std::string& why) {
  Buddy* b = buddy_of(target);
  if (b == nullptr || !b->forwarding) return;
  b->forwarding = false;
  b->confirmed = false;
  env_.log(LogLevel::warn,
           name() + ": " + target_name(target) + " goes on without its buddy " + target_name(b->target) + ": " + why);
}

void StorageService::await_alone(TargetId target, std::function<void(Status)> done) {
  Buddy* b = buddy_of(target);
  if (b == nullptr) {
    return done(error(StatusCode::unavailable, target_name(target) + " is no longer the primary of its buddy group"));
  }
  if (b->confirmed) return done(ok_status());
  b->confirm_waiters.push_back(std::move(done));
  if (b->confirm_in_flight) return;
  b->confirm_in_flight = true;
  proto::SetTargetConsistency sc;
  sc.reporter = target;
  sc.target = b->target;
  sc.consistency = proto::Consistency::needs_resync;
  const TargetId secondary = b->target;
  rpc_.call(config_.mgmt, std::move(sc), [this, target, secondary](Result<proto::Message> r) {
    Buddy* buddy = buddy_of(target);
    if (buddy == nullptr || buddy->target != secondary) return;  // waiters were answered when roles changed
    buddy->confirm_in_flight = false;
    Status s = ok_status();
    if (r.ok()) {
      buddy->confirmed = true;
    } else {
      refresh_mirror_maps();
      s = error(StatusCode::unavailable, target_name(target) + " could not have mgmt record its buddy " +
                                             target_name(secondary) +
                                             " as needs_resync, so it may not write alone: " + r.status().to_string());
      env_.log(LogLevel::warn, name() + ": " + s.message());
    }
    auto waiters = std::move(buddy->confirm_waiters);
    buddy->confirm_waiters.clear();
    for (auto& w : waiters) w(s);
  });
}

void StorageService::report_buddy(TargetId target, proto::Consistency consistency) {
  Buddy* b = buddy_of(target);
  if (b == nullptr) return;
  proto::SetTargetConsistency sc;
  sc.reporter = target;
  sc.target = b->target;
  sc.consistency = consistency;
  const bool good = consistency == proto::Consistency::good;
  if (good) b->good_report_in_flight = true;
  rpc_.call(config_.mgmt, std::move(sc), [this, target, consistency, good](Result<proto::Message> r) {
    if (Buddy* buddy = buddy_of(target); buddy != nullptr && good) buddy->good_report_in_flight = false;
    if (!r.ok()) {
      // The next maps refresh shows mgmt's view; apply_maps acts on it.
      env_.log(LogLevel::warn, name() + ": reporting the buddy of " + target_name(target) + " as " +
                                   std::string(proto::to_string(consistency)) + ": " + r.status().to_string());
      refresh_mirror_maps();
    }
  });
}

// ---- the secondary -------------------------------------------------------------

void StorageService::run_mirror_write(TargetId target, Endpoint from, const proto::MirrorWrite& m, MemHandle staging) {
  auto fail = [this, target, from, rid = m.request_id, staging](StatusCode code, std::string why) {
    finish(target, from, proto::ChunkReply{rid, code, std::move(why), 0, 0}, staging, true);
  };
  if (const MirrorRole* role = mirror_role(target); role != nullptr && role->primary) {
    // We are the primary: the sender is a stale one (a switchover happened while it was away).
    refresh_mirror_maps();
    return fail(StatusCode::invalid_argument, target_name(target) + " is the primary of buddy group " +
                                                  std::to_string(role->group) + " (maps version " +
                                                  std::to_string(maps_version_) + "), not a secondary of " +
                                                  target_name(m.primary));
  }
  TransferSpec t;
  t.src = m.src;
  t.dst = staging;
  t.src_nic = m.rail.client_nic;
  t.dst_nic = least_busy_nic(target, m.rail.server_nic);
  t.mode = TransferMode::rdma_read;
  ops_.expect(env_.transfer(t), [this, target, from, m, staging, fail](Completion& moved) {
    if (!moved.status.ok()) return fail(moved.status.code(), "pulling a mirrored write: " + moved.status.message());
    ops_.expect(env_.checksum(staging), [this, target, from, m, staging, fail](Completion& sum) {
      if (sum.crc_valid && sum.crc32c != m.crc32c) {
        env_.metrics().count("storage.mirror_crc_mismatches", 1);
        return fail(StatusCode::corrupt, "CRC32C mismatch on mirrored write of file " + std::to_string(m.file_id) +
                                             " " + target_name(target) + " offset " + std::to_string(m.object_offset) +
                                             " from " + target_name(m.primary));
      }
      local_write(target, m.file_id, m.object_offset, staging, m.sync, m.crc32c,
                  [this, target, from, m, staging, fail](Completion& written) {
                    if (!written.status.ok()) return fail(written.status.code(), written.status.message());
                    env_.metrics().count(m.resync ? "storage.resync_received_bytes" : "storage.mirror_received_bytes",
                                         static_cast<double>(m.length));
                    finish(target, from, proto::ChunkReply{m.request_id, StatusCode::ok, {}, m.length, m.crc32c},
                           staging, true);
                  });
    });
  });
}

std::function<void(const Status&)> StorageService::ack_to(Endpoint from, RequestId rid) {
  return [this, from, rid](const Status& s) {
    env_.send(from, proto::Ack{rid, s.code(), proto::clip_error_text(s.message())}).ignore();
  };
}

Status StorageService::check_secondary(TargetId target, TargetId primary) {
  if (!owns(target)) return error(StatusCode::not_found, target_name(target) + " is not on " + name());
  if (const MirrorRole* role = mirror_role(target); role != nullptr && role->primary) {
    refresh_mirror_maps();
    return error(StatusCode::invalid_argument, target_name(target) + " is the primary of buddy group " +
                                                   std::to_string(role->group) + ", not a secondary of " +
                                                   target_name(primary));
  }
  return ok_status();
}

void StorageService::mirror_remove(Endpoint from, const proto::MirrorRemove& m) {
  auto answer = ack_to(from, m.request_id);
  if (Status refused = check_secondary(m.target, m.primary); !refused.ok()) return answer(refused);
  StorageIoSpec io;
  io.op = StorageOp::remove;
  io.target = m.target;
  io.file_id = m.file_id;
  ops_.expect(env_.storage_io(io), [this, m, answer](Completion& c) {
    auto it = object_bytes_.find({m.target, m.file_id});
    if (it != object_bytes_.end()) {
      used_bytes_[m.target] -= std::min(used_bytes_[m.target], it->second);
      object_bytes_.erase(it);
    }
    answer(c.status);
  });
}

void StorageService::mirror_allocate(Endpoint from, const proto::MirrorAllocate& m) {
  auto answer = ack_to(from, m.request_id);
  if (Status refused = check_secondary(m.target, m.primary); !refused.ok()) return answer(refused);
  local_allocate(m.target, m.file_id, m.object_offset, m.length, m.mode, answer);
}

void StorageService::mirrored_allocate(TargetId target, const proto::AllocateChunk& m,
                                       std::function<void(Status)> reply) {
  Buddy* buddy = buddy_of(target);
  if (buddy == nullptr) {
    return reply(error(StatusCode::unavailable, target_name(target) + " is no longer the primary of its buddy group"));
  }
  const Endpoint buddy_ep = target_endpoint(buddy->target);
  const bool forward = buddy->forwarding && buddy_ep.valid();
  if (buddy->forwarding && !forward) demote_buddy(target, target_name(buddy->target) + " is not in the maps");
  if (!forward) ++buddy->unforwarded_inflight;
  const TargetId secondary = buddy->target;
  const GroupId group = buddy->group;
  // Without the secondary: the range recorded (a punch or zero changed its
  // bytes; a reservation did not), then mgmt confirms this target may go on alone.
  std::optional<ChangedRange> changed;
  if (m.mode != proto::AllocMode::reserve) changed = ChangedRange{m.file_id, m.object_offset, m.length};
  auto alone = [this, target, secondary, changed, reply](bool counted) {
    applied_alone(target, secondary, changed, counted);
    await_alone(target, reply);
  };
  local_allocate(
      target, m.file_id, m.object_offset, m.length, m.mode,
      [this, target, m, forward, buddy_ep, group, secondary, alone, reply](Status local) {
        if (!local.ok()) {
          if (!forward) applied_alone(target, secondary, std::nullopt, true);
          return reply(local);
        }
        if (!forward) return alone(true);
        proto::MirrorAllocate ma{0, group, target, secondary, m.file_id, m.object_offset, m.length, m.mode};
        mirror_rpc_.call(buddy_ep, std::move(ma), [this, target, secondary, alone, reply](Result<proto::Message> r) {
          if (r.ok()) return reply(ok_status());
          if (std::optional<Status> refused = forward_failed(target, secondary, "allocation", r.status())) {
            return reply(*refused);
          }
          alone(false);
        });
      });
}

// ---- resync (on the primary) ----------------------------------------------------

void StorageService::maybe_start_resync(TargetId target) {
  Buddy* b = buddy_of(target);
  if (b == nullptr || b->forwarding || b->resyncing || b->reported_bad) return;
  auto info = map_targets_.find(b->target);
  if (info == map_targets_.end() || info->second.reachability != proto::Reachability::online) return;
  if (info->second.consistency == proto::Consistency::good) {
    // mgmt has not recorded it as needs_resync yet: confirm first (await_alone
    // reports it), the next maps refresh starts the resync.
    if (!b->confirmed) await_alone(target, [](Status) {});
    return;
  }
  if (info->second.consistency != proto::Consistency::needs_resync) return;
  b->resyncing = true;
  b->resync_idle = false;
  b->full_copy = b->log.take_full();
  b->full_queue.clear();
  if (b->full_copy) {
    for (const auto& [key, bytes] : object_bytes_) {
      if (key.first == target) b->full_queue.push_back(ResyncChange{key.second, false, 0, bytes});
    }
  }
  env_.log(LogLevel::info, name() + ": resyncing " + target_name(b->target) + " from " + target_name(target) + ": " +
                               (b->full_copy ? "full, " + std::to_string(b->full_queue.size()) + " objects"
                                             : std::to_string(b->log.size()) + " changed objects"));
  env_.metrics().count("storage.resyncs_started", 1);
  resync_next(target);
}

void StorageService::resync_next(TargetId target) {
  Buddy* b = buddy_of(target);
  if (b == nullptr || !b->resyncing) return;
  std::optional<ResyncChange> change;
  if (!b->full_queue.empty()) {
    change = b->full_queue.back();
    b->full_queue.pop_back();
  } else {
    change = b->log.take();
  }
  if (!change) return finish_resync(target);
  StorageIoSpec stat;
  stat.op = StorageOp::stat;
  stat.target = target;
  stat.file_id = change->file_id;
  ops_.expect(env_.storage_io(stat), [this, target, c = *change](Completion& st) {
    if (!st.status.ok()) return resync_failed(target, c, st.status);
    Buddy* now = buddy_of(target);
    if (now == nullptr || !now->resyncing) return;
    if (st.bytes > 0 && !c.removed) {
      return resync_copy(target, c, std::min(c.begin_offset, st.bytes), std::min(c.end_offset, st.bytes));
    }
    if (st.bytes > 0) {
      // Removed, then written again: copy what the object holds now.
      return resync_copy(target, ResyncChange{c.file_id, false, 0, st.bytes}, 0, st.bytes);
    }
    // The object does not exist on the primary (removed, or never written): remove it there too.
    proto::MirrorRemove mr;
    mr.group = now->group;
    mr.primary = target;
    mr.target = now->target;
    mr.file_id = c.file_id;
    const Endpoint ep = target_endpoint(now->target);
    if (!ep.valid()) return resync_failed(target, c, error(StatusCode::unavailable, "buddy not in the maps"));
    mirror_rpc_.call(ep, std::move(mr), [this, target, c](Result<proto::Message> r) {
      if (!r.ok()) return resync_failed(target, c, r.status());
      resync_next(target);
    });
  });
}

void StorageService::resync_copy(TargetId target, ResyncChange change, std::uint64_t offset, std::uint64_t end) {
  Buddy* b = buddy_of(target);
  if (b == nullptr || !b->resyncing) return;
  if (offset >= end) return resync_next(target);
  const std::uint64_t length = std::min(config_.mirror.resync_piece_bytes, end - offset);
  const Endpoint ep = target_endpoint(b->target);
  if (!ep.valid()) return resync_failed(target, change, error(StatusCode::unavailable, "buddy not in the maps"));
  if (mirror_staging_in_use_bytes_ + length > config_.mirror.staging_budget_bytes) {
    return resync_failed(
        target, change,
        error(StatusCode::again,
              "mirror staging budget (" + std::to_string(config_.mirror.staging_budget_bytes) + " bytes) is in use"));
  }
  Result<MemHandle> staging = env_.alloc(MemKind::pinned, config_.staging_numa, length);
  if (!staging.ok()) return resync_failed(target, change, staging.status());
  mirror_staging_in_use_bytes_ += length;
  const MemHandle buf = *staging;
  auto release = [this, buf]() {
    mirror_staging_in_use_bytes_ -= buf.length;
    env_.free(buf);
  };
  StorageIoSpec io;
  io.op = StorageOp::read;
  io.target = target;
  io.file_id = change.file_id;
  io.object_offset = offset;
  io.buffer = buf;
  ops_.expect(env_.storage_io(io), [this, target, change, offset, end, buf, ep, release](Completion& read) {
    if (!read.status.ok()) {
      release();
      return resync_failed(target, change, read.status);
    }
    const std::uint64_t n = std::min(read.bytes, buf.length);
    if (n == 0) {
      release();
      return resync_next(target);  // the object is shorter than recorded: nothing more to copy
    }
    auto send = [this, target, change, offset, end, buf, ep, release, n](std::uint32_t crc) {
      Buddy* now = buddy_of(target);
      if (now == nullptr || !now->resyncing) return release();
      proto::MirrorWrite mw =
          mirror_write_to(ep, now->group, target, now->target, change.file_id, offset, n, buf.slice(0, n), crc);
      mw.resync = true;
      mirror_rpc_.call(ep, std::move(mw), [this, target, change, offset, end, release, n](Result<proto::Message> r) {
        release();
        if (!r.ok()) return resync_failed(target, change, r.status());
        env_.metrics().count("storage.resync_bytes", static_cast<double>(n));
        resync_copy(target, change, offset + n, end);
      });
    };
    if (read.crc_valid) return send(read.crc32c);
    ops_.expect(env_.checksum(buf.slice(0, n)), [send](Completion& sum) { send(sum.crc32c); });
  });
}

void StorageService::resync_failed(TargetId target, const ResyncChange& change, const Status& why) {
  Buddy* b = buddy_of(target);
  if (b == nullptr) return;
  b->log.restore(change);
  if (b->full_copy) b->log.require_full();  // the rest of the full copy is redone from the start
  b->full_queue.clear();
  b->resyncing = false;
  b->resync_idle = false;
  // Only failures of the copy itself (corrupt, io_error, no_space, ...) count
  // towards bad. Transient ones are retried without counting: a buddy that
  // cannot be reached (until mgmt shows it offline), one that is busy, and one
  // that refuses because its maps still show it as the primary (invalid_argument:
  // it learns otherwise at its next maps refresh).
  const bool transient = why.code() == StatusCode::timed_out || why.code() == StatusCode::unavailable ||
                         why.code() == StatusCode::again || why.code() == StatusCode::invalid_argument;
  if (!transient) ++b->resync_failures;
  env_.metrics().count("storage.resync_failures", 1);
  env_.log(LogLevel::warn, name() + ": resync of " + target_name(b->target) + " from " + target_name(target) +
                               " failed (" + std::to_string(b->resync_failures) + " counted in a row) at file " +
                               std::to_string(change.file_id) + ": " + why.to_string());
  if (b->resync_failures >= config_.mirror.max_resync_failures && !b->reported_bad) {
    b->reported_bad = true;
    env_.log(LogLevel::error, name() + ": " + target_name(b->target) + " is bad after " +
                                  std::to_string(b->resync_failures) + " failed resyncs");
    report_buddy(target, proto::Consistency::bad);
  }
  // Retried from the next maps refresh (maybe_start_resync), while mgmt shows the buddy online.
}

void StorageService::finish_resync(TargetId target) {
  Buddy* b = buddy_of(target);
  if (b == nullptr) return;
  if (!b->log.empty()) return resync_next(target);  // written meanwhile
  if (b->unforwarded_inflight > 0) {
    b->resync_idle = true;  // the last of them resumes the resync once recorded
    return;
  }
  // Nothing left to copy and nothing in flight: from here on every write is forwarded.
  b->resyncing = false;
  b->full_copy = false;
  b->forwarding = true;
  b->confirmed = false;
  b->resync_failures = 0;
  ++resyncs_completed_;
  env_.metrics().count("storage.resyncs_completed", 1);
  env_.log(LogLevel::info, name() + ": " + target_name(b->target) + " is resynced from " + target_name(target));
  report_buddy(target, proto::Consistency::good);
}

}  // namespace sluice
