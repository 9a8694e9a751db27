// MetaService: metadata buddy mirroring (see "Metadata buddy mirroring" in
// meta_service.hpp).
//
// Who may do what, in one place:
// - role_ comes from the last maps: primary / secondary of this shard's
//   group, or none (a third server, refused by mgmt anyway); unknown until the
//   first maps arrive. Only a primary serves requests.
// - mode_ (primary only) says where the secondary stands:
//   alone       the secondary is not good (mgmt says so): nothing is forwarded,
//               replies go out at once;
//   resyncing   a stream (epoch_) that began with `reset` is being sent: the
//               store walk plus live records; replies go out at once (the
//               secondary is not good yet, so nothing can fail over to it);
//   forwarding  the secondary is in sync: every record is forwarded and a
//               reply waits until the records made before it are acknowledged;
//   degrading   a forward failed: waiting for mgmt to take needs_resync before
//               the held replies go out (or fail, if mgmt refuses: fenced).
// - When the secondary drops out (a failed forward, mgmt marking it
//   needs_resync) the stream is suspended, not ended: log_ keeps what the
//   secondary has not acknowledged and gathers what changes while it is away
//   (up to max_log_records). When it is back, the primary first tries to
//   catch it up on exactly those records, in the same epoch from the next
//   sequence: a secondary that kept its state since (a partition, a slow
//   link) applies them; one that lost it (a restart) or broke its stream
//   refuses, and gets a full resync. (The storage side resyncs the objects
//   changed while the buddy was away; this is the metadata counterpart.)
// - Records are dropped (log_ cleared) whenever a stream ends; the next stream
//   starts with a reset, so the secondary never applies half of a stream on
//   top of another.
#include <algorithm>
#include <string>
#include <utility>

#include "core/common/assert.hpp"
#include "core/proto/codec.hpp"
#include "core/services/invariants.hpp"
#include "core/services/meta_service.hpp"

namespace sluice {

namespace {

proto::Ack ack_of(RequestId rid, const Status& s) {
  return proto::Ack{rid, s.code(), proto::clip_error_text(s.message())};
}

// Bytes a record adds to a MetaMirror, closely enough to keep a batch under
// max_batch_bytes (the encoder still checks the real limits).
std::uint64_t estimated_bytes(const proto::MetaRecordDesc& r) {
  constexpr std::uint64_t k_fixed_bytes = 160;
  return k_fixed_bytes + r.path.size() + r.name.size() + r.frame.size() +
         4 * (r.inode.stripe.targets.size() + r.inode.dir_layout.stripes.size());
}

std::string shard_name(ShardId shard) { return "shard " + std::to_string(shard); }

}  // namespace

void MetaService::mirror_start() {
  recorder_->set_sink([this](proto::MetaRecordDesc r) { mirror_record(std::move(r)); });
  mirror_heartbeat();
  ops_.expect(env_.timer(config_.mirror.maps_refresh_interval_ns), [this](Completion&) { mirror_tick(); });
}

void MetaService::mirror_heartbeat() {
  proto::Heartbeat hb;
  hb.from = env_.self();
  hb.sequence = ++heartbeat_sequence_;
  env_.send(config_.mgmt, std::move(hb)).ignore();  // a lost heartbeat is what the timeouts are for
  ops_.expect(env_.timer(config_.mirror.heartbeat_interval_ns), [this](Completion&) { mirror_heartbeat(); });
}

void MetaService::mirror_tick() {
  mirror_fetch_maps();
  ops_.expect(env_.timer(config_.mirror.maps_refresh_interval_ns), [this](Completion&) { mirror_tick(); });
}

void MetaService::mirror_fetch_maps() {
  if (maps_fetching_) return;  // the fetch in flight applies its maps too
  fetch_maps([this](Status s) {
    if (!s.ok()) env_.log(LogLevel::warn, name() + ": fetching maps for buddy mirroring: " + s.to_string());
  });
}

void MetaService::mirror_apply_maps(const proto::MapsReply& maps) {
  if (maps.version < mirror_maps_version_) return;  // an older answer overtaken by a newer one
  invariants::maps_version(mirror_maps_version_, maps.version);
  mirror_maps_version_ = maps.version;
  const Endpoint self = env_.self();
  auto g = std::find_if(maps.meta_groups.begin(), maps.meta_groups.end(),
                        [this](const auto& d) { return d.shard == config_.shard; });
  MirrorRole role = MirrorRole::none;
  if (g != maps.meta_groups.end()) {
    group_ = *g;
    if (g->primary == self) role = MirrorRole::primary;
    if (g->secondary == self) role = MirrorRole::secondary;
  } else {
    // mgmt mirrors no metadata: the server the shard map names serves alone.
    group_ = proto::MetaGroupDesc{};
    group_.shard = config_.shard;
    group_.primary = shard_endpoint(config_.shard);
    if (group_.primary == self) role = MirrorRole::primary;
  }
  const MirrorRole before = role_;
  role_ = role;
  if (before != role) {
    env_.log(LogLevel::info, name() + ": mirror role " +
                                 std::string(role == MirrorRole::primary     ? "primary"
                                             : role == MirrorRole::secondary ? "secondary"
                                                                             : "none") +
                                 " (maps version " + std::to_string(maps.version) + ")");
    counter_loaded_ = false;  // a new primary reads the counter its stream brought
  }
  if (before == MirrorRole::primary && role != MirrorRole::primary) {
    mirror_fail_held(error(StatusCode::unavailable, name() + " is no longer the primary of " +
                                                        shard_name(config_.shard) + "; retry at " +
                                                        group_.primary.to_string()));
    mode_ = MirrorMode::alone;
    mirror_end_stream();
  }
  if (role != MirrorRole::primary) return;
  if (before != MirrorRole::primary) mode_ = MirrorMode::alone;
  if (!group_.secondary.valid()) {
    if (mode_ != MirrorMode::alone) mirror_go_alone("the group has no secondary");
    return;
  }
  switch (mode_) {
    case MirrorMode::alone:
      if (reporting_) return;
      if (group_.secondary_state == proto::Consistency::good) {
        // Good, but not brought in sync by this incarnation (a restart, or a
        // role just taken): make mgmt stop trusting it before resyncing it.
        mirror_report(proto::Consistency::needs_resync, [this](Status s) {
          if (!s.ok())
            env_.log(LogLevel::warn, name() + ": marking the mirror secondary needs_resync: " + s.to_string());
        });
        return;
      }
      if (group_.secondary_state == proto::Consistency::needs_resync &&
          group_.secondary_reachability == proto::Reachability::online) {
        mirror_start_resync();
      }
      return;
    case MirrorMode::degrading:
      if (!reporting_) mirror_forward_failed(error(StatusCode::unavailable, "retrying the needs_resync report"));
      return;
    case MirrorMode::forwarding:
      if (report_good_pending_ && !reporting_) {
        mirror_report(proto::Consistency::good, [this](Status s) {
          if (s.ok()) report_good_pending_ = false;
        });
      } else if (!report_good_pending_ && group_.secondary_state != proto::Consistency::good) {
        // mgmt took the secondary out (it went offline or re-registered): its
        // data cannot be trusted any more, so no reply may wait for it.
        mirror_go_alone("mgmt reports the secondary " + std::string(proto::to_string(group_.secondary_state)));
      }
      return;
    case MirrorMode::resyncing: return;
  }
}

bool MetaService::mirror_refuses(Endpoint from, proto::Message& message) {
  if (std::holds_alternative<proto::MetaMirror>(message) || role_ == MirrorRole::primary) return false;
  std::string why = name() + ": ";
  switch (role_) {
    case MirrorRole::secondary:
      why += "the secondary of " + shard_name(config_.shard) + " serves no requests; its primary is " +
             group_.primary.to_string();
      break;
    case MirrorRole::unknown: why += "has not learnt its mirror role from mgmt yet"; break;
    default: why += "is not in the buddy group of " + shard_name(config_.shard); break;
  }
  env_.metrics().count("meta.mirror_refused_requests", 1);
  // Not cached: the same request may be served here once this server is primary.
  env_.send(from, ack_of(*request_id_of(message), error(StatusCode::unavailable, why))).ignore();
  return true;
}

void MetaService::mirror_reply(Endpoint to, RequestId id, proto::Message reply, bool mutating) {
  if (role_ != MirrorRole::primary) {
    // The maps changed while the request ran (a switchover): what it did here
    // is not on the new primary and will be overwritten by its resync, so it
    // must not be acknowledged. The client resends to the new primary.
    env_.metrics().count("meta.mirror_failed_replies", 1);
    return send_reply(to, id,
                      ack_of(id, error(StatusCode::unavailable,
                                       name() + " stopped being the primary of " + shard_name(config_.shard) +
                                           " while it handled the request; retry at " + group_.primary.to_string())),
                      false);
  }
  const bool streaming =
      role_ == MirrorRole::primary && (mode_ == MirrorMode::forwarding || mode_ == MirrorMode::resyncing || catch_up_);
  if (streaming && mutating) {
    const std::vector<std::byte> frame = proto::encode(reply);
    if (frame.size() <= proto::k_max_mirror_reply_bytes) {
      proto::MetaRecordDesc r;
      r.kind = proto::MetaRecordKind::reply;
      r.client = to;
      r.value = id;
      r.frame.assign(reinterpret_cast<const char*>(frame.data()), frame.size());
      mirror_record(std::move(r));
    } else {
      env_.metrics().count("meta.mirror_replies_not_replicated", 1);
    }
  }
  const std::uint64_t need = next_sequence_ - 1;
  const bool must_wait = role_ == MirrorRole::primary &&
                         (mode_ == MirrorMode::forwarding || mode_ == MirrorMode::degrading) && need > acked_sequence_;
  if (!must_wait) return send_reply(to, id, std::move(reply), mutating);
  held_.push_back(HeldReply{need, to, id, std::move(reply), mutating});
  if (held_.size() > config_.mirror.max_held_replies) {
    mirror_forward_failed(error(StatusCode::unavailable,
                                std::to_string(held_.size()) + " replies wait for the secondary (max_held_replies)"));
  }
}

void MetaService::mirror_record(proto::MetaRecordDesc record) {
  if (role_ != MirrorRole::primary) return;
  const bool streaming = mode_ == MirrorMode::forwarding || mode_ == MirrorMode::resyncing;
  if (!streaming && !catch_up_) return;
  if (log_.size() >= config_.mirror.max_log_records) {
    if (streaming) {
      mirror_forward_failed(error(StatusCode::unavailable,
                                  std::to_string(log_.size()) + " records not yet acknowledged (max_log_records)"));
    }
    // This record is in no log: no catch-up can be complete any more.
    if (catch_up_) {
      env_.log(LogLevel::info, name() +
                                   ": more than max_log_records changes while the secondary is away; it will "
                                   "get a full resync");
    }
    mirror_end_stream();
    return;
  }
  log_.push_back(std::move(record));
  ++next_sequence_;
  invariants::mirror_log(epoch_, acked_sequence_, log_.size(), next_sequence_);
  mirror_pump_soon();
}

// A request's records (its store changes, then its reply) are appended in one
// step of the service. Pumped at each record, the first would leave alone;
// a primary killed before the next batch left its secondary with the change
// and without the reply, and the client's resend to it (the new primary)
// found the file and no reply: "exists" (a create of `sluice run
// storage_failover.lua --backend emulate`, meta:0 killed, in
// cli.readme_examples). So the pump runs once the step is over (a zero-delay
// timer): the records of one step leave in one batch.
void MetaService::mirror_pump_soon() {
  if (pump_scheduled_) return;
  pump_scheduled_ = true;
  ops_.expect(env_.timer(0), [this](Completion&) {
    pump_scheduled_ = false;
    mirror_pump();
  });
}

void MetaService::mirror_pump() {
  if (batch_in_flight_ || role_ != MirrorRole::primary) return;
  if (mode_ != MirrorMode::forwarding && mode_ != MirrorMode::resyncing) return;
  if (mode_ == MirrorMode::resyncing && !resync_walk_done_ && log_.size() < config_.mirror.resync_page_entries) {
    mirror_resync_step();
  }
  if (log_.empty()) {
    if (mode_ == MirrorMode::resyncing && resync_walk_done_) {
      env_.log(LogLevel::info, name() + ": resync of " + shard_name(config_.shard) + " to " +
                                   group_.secondary.to_string() + " complete (" + std::to_string(acked_sequence_) +
                                   " records); forwarding");
      env_.metrics().count("meta.mirror_resyncs", 1);
      mode_ = MirrorMode::forwarding;
      report_good_pending_ = true;
      if (!reporting_) {
        mirror_report(proto::Consistency::good, [this](Status s) {
          if (s.ok()) report_good_pending_ = false;
        });
      }
    }
    return;
  }
  SLUICE_ASSERT_MSG(epoch_ != 0, "a mirror batch is sent only inside a stream");
  proto::MetaMirror batch;
  batch.shard = config_.shard;
  batch.epoch = epoch_;
  batch.first_sequence = acked_sequence_ + 1;
  const std::size_t max_records =
      std::min<std::size_t>(std::max<std::uint32_t>(config_.mirror.max_batch_records, 1), proto::k_max_mirror_records);
  std::uint64_t bytes = 0;
  for (const auto& r : log_) {
    if (batch.records.size() >= max_records) break;
    const std::uint64_t b = estimated_bytes(r);
    if (!batch.records.empty() && bytes + b > config_.mirror.max_batch_bytes) break;
    bytes += b;
    batch.records.push_back(r);
  }
  const std::uint64_t end = batch.first_sequence + batch.records.size() - 1;
  batch_in_flight_ = true;
  env_.metrics().count("meta.mirror_batches", 1);
  env_.metrics().count("meta.mirror_records", static_cast<double>(batch.records.size()));
  mirror_rpc_.call(group_.secondary, std::move(batch),
                   [this, end, generation = stream_generation_](Result<proto::Message> r) {
                     if (generation != stream_generation_) return;  // a stream suspended or ended meanwhile
                     batch_in_flight_ = false;
                     if (!r.ok()) return mirror_forward_failed(r.status());
                     mirror_acked(end);
                   });
}

void MetaService::mirror_acked(std::uint64_t end_sequence) {
  invariants::mirror_ack(end_sequence, next_sequence_);
  while (acked_sequence_ < end_sequence && !log_.empty()) {
    log_.pop_front();
    ++acked_sequence_;
  }
  invariants::mirror_log(epoch_, acked_sequence_, log_.size(), next_sequence_);
  while (!held_.empty() && held_.front().sequence <= acked_sequence_) {
    HeldReply h = std::move(held_.front());
    held_.pop_front();
    send_reply(h.to, h.id, std::move(h.reply), h.keep);
  }
  mirror_pump();
}

void MetaService::mirror_forward_failed(const Status& why) {
  env_.metrics().count("meta.mirror_forward_failures", 1);
  if (mode_ == MirrorMode::resyncing) {
    // The secondary is not good: nobody waits for it. The next maps refresh
    // restarts the resync, a full one (a refused catch-up ends here too).
    env_.log(LogLevel::warn, name() + ": resync to " + group_.secondary.to_string() + " failed: " + why.to_string());
    mode_ = MirrorMode::alone;
    mirror_end_stream();
    return;
  }
  if (mode_ != MirrorMode::forwarding && mode_ != MirrorMode::degrading) return;
  if (mode_ == MirrorMode::forwarding) {
    env_.log(LogLevel::warn, name() + ": forwarding to the mirror secondary " + group_.secondary.to_string() +
                                 " failed (" + why.to_string() + "); asking mgmt to mark it needs_resync");
  }
  mode_ = MirrorMode::degrading;
  mirror_suspend_stream();  // kept for the secondary's catch-up
  if (reporting_) return;
  mirror_report(proto::Consistency::needs_resync, [this](Status s) {
    if (mode_ != MirrorMode::degrading) return;
    if (s.ok()) return mirror_go_alone("mgmt marked the secondary needs_resync");
    if (s.code() == StatusCode::invalid_argument) {
      // mgmt no longer takes this server as the primary: it was switched away
      // from. Nothing held may be acknowledged by it.
      mirror_fail_held(error(StatusCode::unavailable, name() + " was switched away from as primary of " +
                                                          shard_name(config_.shard) + ": " + s.message()));
      mode_ = MirrorMode::alone;
      mirror_fetch_maps();
      return;
    }
    env_.log(LogLevel::warn, name() + ": mgmt did not take needs_resync (" + s.to_string() +
                                 "); replies stay held, retried at the next maps refresh");
  });
}

void MetaService::mirror_report(proto::Consistency consistency, std::function<void(Status)> done) {
  reporting_ = true;
  proto::SetMetaConsistency m;
  m.shard = config_.shard;
  m.reporter = env_.self();
  m.consistency = consistency;
  rpc_.call(config_.mgmt, std::move(m), [this, done = std::move(done)](Result<proto::Message> r) {
    reporting_ = false;
    done(r.status());
  });
}

void MetaService::mirror_go_alone(const std::string& why) {
  env_.log(LogLevel::warn,
           name() + ": going on without the mirror secondary " + group_.secondary.to_string() + ": " + why);
  env_.metrics().count("meta.mirror_alone", 1);
  mode_ = MirrorMode::alone;
  mirror_suspend_stream();
  report_good_pending_ = false;
  mirror_release_held();
}

void MetaService::mirror_end_stream() {
  // Records of the stream are dropped; a batch still in flight answers into
  // nothing (its callback sees another epoch), and the next stream starts
  // with a reset.
  log_.clear();
  epoch_ = 0;
  batch_in_flight_ = false;
  catch_up_ = false;
  ++stream_generation_;
}

void MetaService::mirror_suspend_stream() {
  // Nothing more is sent; an answer to a batch in flight is ignored (its
  // records stay in log_ and are sent again, and a secondary that applied
  // them skips them by sequence).
  batch_in_flight_ = false;
  ++stream_generation_;
  catch_up_ = epoch_ != 0;
}

void MetaService::mirror_release_held() {
  auto held = std::move(held_);
  held_.clear();
  for (auto& h : held) send_reply(h.to, h.id, std::move(h.reply), h.keep);
}

void MetaService::mirror_fail_held(const Status& why) {
  auto held = std::move(held_);
  held_.clear();
  if (!held.empty()) env_.metrics().count("meta.mirror_failed_replies", static_cast<double>(held.size()));
  for (auto& h : held) send_reply(h.to, h.id, ack_of(h.id, why), false);
}

void MetaService::mirror_start_resync() {
  if (catch_up_ && epoch_ != 0) {
    // First try the records since its last acknowledgement only.
    catch_up_ = false;
    ++stream_generation_;
    mode_ = MirrorMode::resyncing;
    resync_walk_done_ = true;
    env_.log(LogLevel::info, name() + ": catching " + group_.secondary.to_string() + " up on " +
                                 shard_name(config_.shard) + ": " + std::to_string(log_.size()) +
                                 " records from sequence " + std::to_string(acked_sequence_ + 1));
    env_.metrics().count("meta.mirror_catch_ups", 1);
    env_.metrics().count("meta.mirror_catch_up_records", static_cast<double>(log_.size()));
    mirror_pump();
    return;
  }
  mirror_end_stream();
  epoch_ = env_.rng().next_u64() | 1;  // never 0, which means "no stream"
  next_sequence_ = 1;
  acked_sequence_ = 0;
  mode_ = MirrorMode::resyncing;
  resync_walk_done_ = false;
  resync_dir_.clear();
  resync_dir_started_ = false;
  resync_cookie_ = 0;
  env_.log(LogLevel::info, name() + ": resyncing " + shard_name(config_.shard) + " to " + group_.secondary.to_string());
  env_.metrics().count("meta.mirror_resync_starts", 1);
  proto::MetaRecordDesc reset;
  reset.kind = proto::MetaRecordKind::reset;
  log_.push_back(std::move(reset));
  ++next_sequence_;
  invariants::mirror_log(epoch_, acked_sequence_, log_.size(), next_sequence_);
  mirror_pump();
}

void MetaService::mirror_resync_step() {
  MetaStore& store = recorder_->inner();  // read directly: reads are not recorded anyway
  auto push = [this](proto::MetaRecordDesc r) {
    log_.push_back(std::move(r));
    ++next_sequence_;
  };
  std::size_t budget = std::max<std::uint32_t>(config_.mirror.resync_page_entries, 1);
  while (budget > 0 && !resync_walk_done_) {
    if (!resync_dir_started_) {
      std::vector<std::string> next = store.list_dirs(resync_dir_, 1);
      if (next.empty()) {
        // Last, the counter: ids the secondary hands out once promoted start above it.
        proto::MetaRecordDesc c;
        c.kind = proto::MetaRecordKind::counter;
        c.value = store.load_counter();
        push(std::move(c));
        resync_walk_done_ = true;
        break;
      }
      resync_dir_ = std::move(next.front());
      resync_dir_started_ = true;
      resync_cookie_ = 0;
      if (Result<proto::InodeDesc> record = store.get_dir(resync_dir_); record.ok()) {
        proto::MetaRecordDesc d;
        d.kind = proto::MetaRecordKind::put_dir;
        d.path = resync_dir_;
        d.inode = std::move(record).value();
        push(std::move(d));
        --budget;
      }
      if (budget == 0) break;
    }
    MetaListPage page = store.list(resync_dir_, resync_cookie_, static_cast<std::uint32_t>(budget));
    for (auto& [entry_name, inode] : page.entries) {
      proto::MetaRecordDesc e;
      e.kind = proto::MetaRecordKind::put_entry;
      e.path = resync_dir_;
      e.name = entry_name;
      e.inode = inode;
      push(std::move(e));
    }
    budget -= std::min(budget, page.entries.size());
    if (page.eof) {
      resync_dir_started_ = false;
    } else {
      resync_cookie_ = page.next_cookie;
    }
  }
}

void MetaService::mirror_on_batch(Endpoint from, const proto::MetaMirror& m, Reply reply) {
  std::size_t mutations = 0;
  for (const auto& r : m.records) mutations += r.kind != proto::MetaRecordKind::reply ? 1 : 0;
  // Applying costs the secondary what a store update costs (BeeGFS: a
  // mirrored request is executed on both servers).
  const std::uint32_t units = units_.setattr * static_cast<std::uint32_t>(std::max<std::size_t>(mutations, 1));
  ops_.expect(env_.compute(CostKind::meta_setattr, units), [this, from, m, reply](Completion&) {
    auto refuse = [&](StatusCode code, const std::string& why) {
      env_.metrics().count("meta.mirror_batches_refused", 1);
      env_.log(LogLevel::warn, name() + ": refusing a mirror batch from " + from.to_string() + ": " + why);
      reply(ack_of(m.request_id, error(code, name() + ": " + why)));
    };
    if (m.shard != config_.shard) {
      return refuse(StatusCode::invalid_argument,
                    "it is for " + shard_name(m.shard) + ", this server serves " + shard_name(config_.shard));
    }
    if (role_ != MirrorRole::secondary || from != group_.primary) {
      mirror_fetch_maps();  // our maps may be the stale ones
      return refuse(StatusCode::unavailable, "the maps do not name it the primary of this server's buddy group");
    }
    if (m.records.empty()) return reply(ack_of(m.request_id, ok_status()));
    const bool starts_stream = m.first_sequence == 1 && m.records.front().kind == proto::MetaRecordKind::reset;
    if (m.epoch != applied_epoch_ && !starts_stream) {
      return refuse(StatusCode::invalid_argument,
                    "stream " + std::to_string(m.epoch) + " was not started here (a resync must start it with reset)");
    }
    if (m.epoch != applied_epoch_) {
      applied_epoch_ = m.epoch;
      applied_sequence_ = 0;
    }
    if (m.first_sequence > applied_sequence_ + 1) {
      return refuse(StatusCode::invalid_argument, "records " + std::to_string(applied_sequence_ + 1) + " to " +
                                                      std::to_string(m.first_sequence - 1) + " are missing");
    }
    for (std::size_t i = 0; i < m.records.size(); ++i) {
      const std::uint64_t sequence = m.first_sequence + i;
      if (sequence <= applied_sequence_) continue;  // a resent batch
      invariants::mirror_apply(applied_sequence_, sequence);
      if (Status s = mirror_apply(m.records[i]); !s.ok()) {
        applied_epoch_ = 0;  // the stream is broken here: only a new resync may continue
        return refuse(s.code(), "applying record " + std::to_string(sequence) + ": " + s.message());
      }
      applied_sequence_ = sequence;
    }
    env_.metrics().count("meta.mirror_records_applied", static_cast<double>(m.records.size()));
    reply(ack_of(m.request_id, ok_status()));
  });
}

Status MetaService::mirror_apply(const proto::MetaRecordDesc& r) {
  MetaStore& store = *store_;
  auto tolerate_missing = [](Status s) { return s.code() == StatusCode::not_found ? ok_status() : s; };
  switch (r.kind) {
    case proto::MetaRecordKind::reset: return store.clear();
    case proto::MetaRecordKind::put_dir: return store.put_dir(r.path, r.inode);
    case proto::MetaRecordKind::remove_dir: {
      // The primary removed it empty; entries a fuzzy resync page brought go with it.
      for (MetaListPage page = store.list(r.path, 0, config_.readdir_page_max_entries); !page.entries.empty();
           page = store.list(r.path, 0, config_.readdir_page_max_entries)) {
        for (const auto& e : page.entries) {
          if (Status s = store.remove_entry(r.path, e.first); !s.ok()) return s;
        }
      }
      return tolerate_missing(store.remove_dir(r.path));
    }
    case proto::MetaRecordKind::put_entry: return store.put_entry(r.path, r.name, r.inode);
    case proto::MetaRecordKind::remove_entry: return tolerate_missing(store.remove_entry(r.path, r.name));
    case proto::MetaRecordKind::counter: return store.store_counter(r.value);
    case proto::MetaRecordKind::reply: {
      const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(r.frame.data()), r.frame.size());
      Result<proto::Message> reply = proto::decode(bytes);
      if (!reply.ok()) return error(StatusCode::invalid_argument, "replicated reply: " + reply.status().message());
      // Kept here too: this server may be the primary that restarts next.
      remember_reply(r.client, static_cast<RequestId>(r.value), *reply, true);
      return ok_status();
    }
  }
  return error(StatusCode::invalid_argument, "unknown record kind");
}

}  // namespace sluice
