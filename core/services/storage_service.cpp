#include "core/services/storage_service.hpp"

#include <algorithm>
#include <string>

#include "core/common/assert.hpp"
#include "core/layout/stripe_pattern.hpp"

namespace sluice {

StorageService::StorageService(Env& env, StorageServiceConfig config)
    : env_(env),
      config_(std::move(config)),
      rpc_(env_, ops_, config_.rpc),
      mirror_rpc_(env_, ops_, config_.mirror.forward_rpc) {
  SLUICE_ASSERT_MSG(config_.target_places.empty() || config_.target_places.size() == config_.targets.size(),
                    "StorageServiceConfig::target_places must be empty or one per target");
  for (std::size_t i = 0; i < config_.targets.size(); ++i) {
    const TargetId t = config_.targets[i];
    targets_[t].place = config_.target_places.empty() ? nullptr : &config_.target_places[i];
    used_bytes_[t] = 0;
  }
  if (config_.egress_limit_bytes_per_s > 0) {
    Result<sched::TokenBucket> bucket = sched::TokenBucket::create(
        static_cast<std::uint64_t>(config_.egress_limit_bytes_per_s), config_.egress_burst_bytes);
    if (bucket.ok()) {
      egress_.emplace(std::move(bucket).value());
    } else {
      egress_error_ = bucket.status();
    }
  }
}

std::string StorageService::name() const { return "storage:" + env_.self().to_string(); }

bool StorageService::owns(TargetId target) const { return targets_.count(target) != 0; }

void StorageService::start() {
  if (started_) restart();
  started_ = true;
  if (!egress_error_.ok()) env_.log(LogLevel::error, "egress limit disabled: " + egress_error_.to_string());
  for (TargetId t : config_.targets) {
    proto::RegisterTarget reg;
    reg.target = t;
    reg.node = env_.self().node;
    reg.endpoint = env_.self();
    reg.capacity_bytes = config_.target_capacity_bytes;
    reg.free_bytes = config_.target_capacity_bytes;
    rpc_.call(config_.mgmt, std::move(reg), [this, t](Result<proto::Message> r) {
      if (!r.ok()) {
        env_.log(LogLevel::error, "registering target " + std::to_string(t) + " failed: " + r.status().to_string());
        return;
      }
      ++registered_targets_;
    });
  }
  if (config_.heartbeat_interval_ns > 0) {
    ops_.expect(env_.timer(config_.heartbeat_interval_ns), [this](Completion&) { heartbeat(); });
  }
  if (config_.mirror.enabled) {
    started_ns_ = env_.now();
    if (Status s = ResyncLog::validate(config_.mirror.resync_log_max_files); !s.ok()) {
      env_.log(LogLevel::error,
               name() + ": " + s.message() + "; using " + std::to_string(ResyncLog::k_default_max_files));
      config_.mirror.resync_log_max_files = ResyncLog::k_default_max_files;
    }
    if (config_.mirror.resync_piece_bytes == 0) {
      env_.log(LogLevel::error, name() + ": mirror.resync_piece_bytes is 0; using 4 MiB");
      config_.mirror.resync_piece_bytes = 4 * k_mib;
    }
    mirror_tick();
  }
}

void StorageService::heartbeat() {
  proto::Heartbeat hb;
  hb.from = env_.self();
  hb.sequence = ++heartbeat_sequence_;
  for (TargetId t : config_.targets) {
    proto::TargetInfoDesc d;
    d.target = t;
    d.node = env_.self().node;
    d.endpoint = env_.self();
    d.capacity_bytes = config_.target_capacity_bytes;
    d.free_bytes = config_.target_capacity_bytes - std::min(config_.target_capacity_bytes, used_bytes_[t]);
    hb.targets.push_back(d);
  }
  env_.send(config_.mgmt, std::move(hb)).ignore();  // a lost heartbeat is covered by the next one
  ops_.expect(env_.timer(config_.heartbeat_interval_ns), [this](Completion&) { heartbeat(); });
}

void StorageService::on_event(Event& event) {
  if (auto* c = std::get_if<Completion>(&event)) {
    ops_.dispatch(*c);
    return;
  }
  auto& d = std::get<Delivery>(event);
  if (d.from == config_.mgmt ? rpc_.on_delivery(d) : mirror_rpc_.on_delivery(d)) return;
  handle(d.from, d.message);
}

bool StorageService::answer_duplicate(Endpoint from, RequestId rid) {
  const proto::Message* cached = nullptr;
  switch (chunk_replies_.check(from, rid, &cached)) {
    case ReplyCache::Seen::new_request: return false;
    case ReplyCache::Seen::in_progress:
      env_.metrics().count("storage.duplicate_in_progress", 1);
      env_.send(from, proto::ChunkReply{rid, StatusCode::in_progress,
                                        name() + " is still executing request " + std::to_string(rid), 0, 0})
          .ignore();
      return true;
    case ReplyCache::Seen::answered:
      env_.metrics().count("storage.duplicate_answered", 1);
      env_.send(from, *cached).ignore();
      return true;
  }
  return false;
}

void StorageService::handle(Endpoint from, proto::Message& message) {
  if (auto* r = std::get_if<proto::ReadChunk>(&message)) {
    if (answer_duplicate(from, r->request_id)) return;
    if (admit_mirrored(from, r->request_id, r->target)) admit(from, message, r->target);
  } else if (auto* w = std::get_if<proto::WriteChunk>(&message)) {
    if (answer_duplicate(from, w->request_id)) return;
    if (admit_mirrored(from, w->request_id, w->target)) admit(from, message, w->target);
  } else if (auto* mw = std::get_if<proto::MirrorWrite>(&message)) {
    if (answer_duplicate(from, mw->request_id)) return;
    admit(from, message, mw->target);
  } else if (auto* mr = std::get_if<proto::MirrorRemove>(&message)) {
    mirror_remove(from, *mr);
  } else if (auto* ma = std::get_if<proto::MirrorAllocate>(&message)) {
    mirror_allocate(from, *ma);
  } else if (auto* al = std::get_if<proto::AllocateChunk>(&message)) {
    allocate_chunk(from, *al);
  } else if (auto* rm = std::get_if<proto::RemoveChunks>(&message)) {
    remove_chunks(from, *rm);
  } else if (auto* fl = std::get_if<proto::FlushStorage>(&message)) {
    flush_storage(from, fl->request_id);
  } else if (auto* cs = std::get_if<proto::ChunkSize>(&message)) {
    if (!owns(cs->target)) {
      env_.send(from, proto::ChunkSizeReply{cs->request_id, StatusCode::not_found,
                                            "target " + std::to_string(cs->target) + " is not on " + name(), 0})
          .ignore();
      return;
    }
    StorageIoSpec spec;
    spec.op = StorageOp::stat;
    spec.target = cs->target;
    spec.file_id = cs->file_id;
    const RequestId rid = cs->request_id;
    ops_.expect(env_.storage_io(spec), [this, from, rid](Completion& c) {
      env_.send(from, proto::ChunkSizeReply{rid, c.status.code(), c.status.message(), c.bytes}).ignore();
    });
  } else if (RequestId* rid = request_id_of(message); rid != nullptr && !is_reply(message)) {
    env_.send(from, proto::Ack{*rid, StatusCode::invalid_argument,
                               name() + " does not handle " + std::string(proto::message_name(message))})
        .ignore();
  }
}

void StorageService::admit(Endpoint from, proto::Message& message, TargetId target) {
  const RequestId rid = *request_id_of(message);
  if (!owns(target)) {
    finish(k_no_id, from,
           proto::ChunkReply{rid, StatusCode::not_found, "target " + std::to_string(target) + " is not on " + name(), 0,
                             0},
           std::nullopt);
    return;
  }
  const bool lengths_match = std::visit(
      [](const auto& m) {
        if constexpr (requires { m.dst; }) {
          return m.dst.length == m.length;
        } else if constexpr (requires { m.src; }) {
          return m.src.length == m.length;
        } else {
          return true;
        }
      },
      message);
  if (!lengths_match) {
    finish(k_no_id, from,
           proto::ChunkReply{rid, StatusCode::invalid_argument,
                             "chunk request whose memory handle length differs from its length", 0, 0},
           std::nullopt);
    return;
  }
  TargetState& ts = targets_[target];
  if (ts.queued.size() >= config_.max_queued_per_target) {
    ++again_replies_;
    env_.metrics().count("storage.again_replies", 1);
    env_.send(from, proto::ChunkReply{rid, StatusCode::again,
                                      "target " + std::to_string(target) + " queue full (" +
                                          std::to_string(config_.max_queued_per_target) + ")",
                                      0, 0})
        .ignore();
    return;
  }
  chunk_replies_.begin(from, rid);  // from here on it is answered exactly once, by finish()
  ts.queued.push_back(Request{from, std::move(message)});
  pump(target);
}

// The target's place, set in the constructor (null: none given, or a target this server does not own).
std::uint16_t StorageService::staging_numa_of(TargetId target) const {
  auto it = targets_.find(target);
  const sched::TargetPlace* place = it == targets_.end() ? nullptr : it->second.place;
  return place != nullptr ? place->staging_numa : config_.staging_numa;
}

void StorageService::count_placed(std::string_view op, TargetId target, std::uint32_t nic, std::uint64_t bytes) {
  const std::string prefix = "storage." + std::string(op) + "_bytes.";
  env_.metrics().count(prefix + "target." + std::to_string(target), static_cast<double>(bytes));
  if (nic != k_no_id) {
    env_.metrics().count(prefix + "nic." + std::to_string(env_.self().node) + "." + std::to_string(nic),
                         static_cast<double>(bytes));
  }
}

const std::vector<std::uint32_t>* StorageService::nic_candidates(TargetId target, std::uint32_t named) const {
  auto it = targets_.find(target);
  const sched::TargetPlace* place = it == targets_.end() ? nullptr : it->second.place;
  const std::vector<std::uint32_t>* nics = place != nullptr ? place->nics(named) : nullptr;
  SLUICE_ASSERT_MSG(nics == nullptr || !nics->empty(), "a target's place lists at least one NIC per named NIC");
  return nics;
}

std::uint32_t StorageService::least_busy_nic(TargetId target, std::uint32_t named) const {
  const std::vector<std::uint32_t>* nics = nic_candidates(target, named);
  if (nics == nullptr) return named != k_no_id ? named : config_.server_nic;
  auto in_flight = [this](std::uint32_t nic) {
    return nic < nic_in_flight_bytes_.size() ? nic_in_flight_bytes_[nic] : std::uint64_t{0};
  };
  return *std::min_element(nics->begin(), nics->end(),
                           [&](std::uint32_t a, std::uint32_t b) { return in_flight(a) < in_flight(b); });
}

std::uint32_t StorageService::take_nic(TargetId target, std::uint32_t named, std::uint64_t bytes) {
  const std::uint32_t nic = least_busy_nic(target, named);
  if (nic_candidates(target, named) == nullptr) return nic;  // the default: not counted
  if (nic_in_flight_bytes_.size() <= nic) nic_in_flight_bytes_.resize(nic + 1, 0);
  nic_in_flight_bytes_[nic] += bytes;
  return nic;
}

void StorageService::release_nic(TargetId target, std::uint32_t named, std::uint32_t nic, std::uint64_t bytes) {
  if (nic_candidates(target, named) == nullptr) return;  // the default NIC: not counted
  if (nic >= nic_in_flight_bytes_.size()) return;        // taken before a restart cleared the counts
  SLUICE_ASSERT_MSG(nic_in_flight_bytes_[nic] >= bytes, "a NIC releases no more bytes than it took");
  nic_in_flight_bytes_[nic] -= bytes;
}

void StorageService::pump(TargetId target) {
  TargetState& ts = targets_[target];
  while (ts.active < config_.max_active_per_target && !ts.queued.empty()) {
    Request& next = ts.queued.front();
    const std::uint64_t length = std::visit(
        [](const auto& m) -> std::uint64_t {
          if constexpr (requires { m.length; }) {
            return m.length;
          } else {
            return 0;
          }
        },
        next.message);
    if (length == 0 || length > config_.staging_budget_bytes) {
      const RequestId rid = *request_id_of(next.message);
      const Endpoint from = next.from;
      ts.queued.pop_front();
      finish(k_no_id, from,
             proto::ChunkReply{rid, StatusCode::invalid_argument,
                               "chunk length " + std::to_string(length) + " outside (0, " +
                                   std::to_string(config_.staging_budget_bytes) + "]",
                               0, 0},
             std::nullopt);
      continue;
    }
    // Writes received as a secondary have their own budget (see the header).
    const bool mirror_staging = std::holds_alternative<proto::MirrorWrite>(next.message);
    std::uint64_t& in_use = mirror_staging ? mirror_staging_in_use_bytes_ : staging_in_use_bytes_;
    const std::uint64_t budget = mirror_staging ? config_.mirror.staging_budget_bytes : config_.staging_budget_bytes;
    if (in_use + length > budget) return;  // wait for staging memory
    Result<MemHandle> staging = env_.alloc(MemKind::pinned, staging_numa_of(target), length);
    if (!staging.ok()) return;  // the world is out of memory for now; a finishing request pumps again
    in_use += length;
    Request req = std::move(next);
    ts.queued.pop_front();
    ++ts.active;
    count_pieces(ts, length, true, !std::holds_alternative<proto::ReadChunk>(req.message));
    env_.metrics().count("storage.requests", 1);
    ops_.expect(env_.compute(CostKind::storage_request, 1), [this, target, req, staging = *staging](Completion&) {
      if (const auto* r = std::get_if<proto::ReadChunk>(&req.message)) {
        run_read(target, req.from, *r, staging);
      } else if (const auto* mw = std::get_if<proto::MirrorWrite>(&req.message)) {
        run_mirror_write(target, req.from, *mw, staging);
      } else {
        run_write(target, req.from, std::get<proto::WriteChunk>(req.message), staging);
      }
    });
  }
}

void StorageService::run_read(TargetId target, Endpoint from, const proto::ReadChunk& m, MemHandle staging) {
  StorageIoSpec io;
  io.op = StorageOp::read;
  io.target = target;
  io.file_id = m.file_id;
  io.object_offset = m.object_offset;
  io.buffer = staging;
  io.buffered = config_.buffered_reads;
  ops_.expect(env_.storage_io(io), [this, target, from, m, staging](Completion& read) {
    proto::ChunkReply reply{m.request_id, StatusCode::ok, {}, 0, 0};
    if (!read.status.ok()) {
      reply.status = read.status.code();
      reply.error = "read of file " + std::to_string(m.file_id) + " on target " + std::to_string(target) + ": " +
                    read.status.message();
      finish(target, from, std::move(reply), staging);
      return;
    }
    const std::uint64_t n = read.bytes;
    const std::uint32_t crc = read.crc32c;
    auto send_data = [this, target, from, m, staging, n, crc]() {
      if (n == 0) {
        finish(target, from, proto::ChunkReply{m.request_id, StatusCode::ok, {}, 0, crc}, staging);
        return;
      }
      TransferSpec t;
      t.src = staging.slice(0, n);
      t.dst = m.dst.slice(0, n);  // admit() checked dst.length == length >= n
      t.src_nic = take_nic(target, m.rail.server_nic, n);
      t.dst_nic = m.rail.client_nic;
      t.mode = m.path == proto::ChunkPath::direct ? TransferMode::rdma_write : TransferMode::stream;
      // The client's key for the NIC the bytes land on, if it carried one.
      if (t.mode == TransferMode::rdma_write) {
        if (const proto::RdmaRegionDesc* key = proto::find_rdma_key(m.dst_keys, t.dst_nic)) t.remote_region = *key;
      }
      ops_.expect(env_.transfer(t), [this, target, from, m, staging, n, crc, nic = t.src_nic](Completion& moved) {
        release_nic(target, m.rail.server_nic, nic, n);
        proto::ChunkReply sent{m.request_id, moved.status.code(), moved.status.message(), 0, crc};
        if (moved.status.ok()) {
          sent.bytes = n;
          env_.metrics().count("storage.read_bytes", static_cast<double>(n));
          count_placed("read", target, nic, n);
        }
        finish(target, from, std::move(sent), staging);
      });
    };
    if (egress_) {
      // Reservations are made in order: a chunk's slot starts no earlier than the
      // previous reservation (the bucket's clock must not go backwards).
      const TimeNs base = std::max(env_.now(), egress_reserved_ns_);
      Result<TimeNs> earliest = egress_->earliest_start(base, n);
      TimeNs start = env_.now();
      if (earliest.ok() && egress_->consume(*earliest, n).ok()) {
        start = *earliest;
        egress_reserved_ns_ = start;
      } else {
        // A chunk larger than the burst cannot be paced by the bucket; it goes at once, counted.
        env_.metrics().count("storage.egress_unpaced_chunks", 1);
      }
      if (start > env_.now()) {
        env_.metrics().count("storage.egress_throttled_ns", static_cast<double>(start - env_.now()));
        ops_.expect(env_.timer(start - env_.now()), [send_data](Completion&) { send_data(); });
        return;
      }
    }
    send_data();
  });
}

void StorageService::run_write(TargetId target, Endpoint from, const proto::WriteChunk& m, MemHandle staging) {
  TransferSpec t;
  t.src = m.src;
  t.dst = staging;
  t.src_nic = m.rail.client_nic;
  t.dst_nic = take_nic(target, m.rail.server_nic, m.length);
  t.mode = TransferMode::rdma_read;
  // The client's key for the NIC the bytes leave from, if it carried one.
  if (const proto::RdmaRegionDesc* key = proto::find_rdma_key(m.src_keys, t.src_nic)) t.remote_region = *key;
  ops_.expect(env_.transfer(t), [this, target, from, m, staging, nic = t.dst_nic](Completion& moved) {
    release_nic(target, m.rail.server_nic, nic, m.length);
    if (!moved.status.ok()) {
      finish(target, from, proto::ChunkReply{m.request_id, moved.status.code(), moved.status.message(), 0, 0}, staging);
      return;
    }
    count_placed("write", target, nic, m.length);
    ops_.expect(env_.checksum(staging), [this, target, from, m, staging](Completion& sum) {
      if (sum.crc_valid && sum.crc32c != m.crc32c) {
        env_.metrics().count("storage.crc_mismatches", 1);
        finish(target, from,
               proto::ChunkReply{m.request_id, StatusCode::corrupt,
                                 "CRC32C mismatch on write of file " + std::to_string(m.file_id) + " target " +
                                     std::to_string(target) + " offset " + std::to_string(m.object_offset),
                                 0, 0},
               staging);
        return;
      }
      store_write(target, from, m, staging);
    });
  });
}

void StorageService::store_write(TargetId target, Endpoint from, const proto::WriteChunk& m, MemHandle staging) {
  if (const MirrorRole* role = mirror_role(target); role != nullptr && role->primary) {
    return mirrored_write(target, from, m, staging);
  }
  local_write(target, m.file_id, m.object_offset, staging, m.sync, m.crc32c,
              [this, target, from, m, staging](Completion& written) {
                proto::ChunkReply done{m.request_id, written.status.code(), written.status.message(), 0, m.crc32c};
                if (written.status.ok()) done.bytes = m.length;
                finish(target, from, std::move(done), staging);
              });
}

void StorageService::local_write(TargetId target, FileId file_id, std::uint64_t object_offset, MemHandle buffer,
                                 bool sync, std::uint32_t crc32c, std::function<void(Completion&)> done) {
  StorageIoSpec io;
  io.op = StorageOp::write;
  io.target = target;
  io.file_id = file_id;
  io.object_offset = object_offset;
  io.buffer = buffer;
  io.sync = sync;
  io.buffered = config_.buffered_writes && !sync;
  io.crc32c = crc32c;
  ops_.expect(env_.storage_io(io), [this, target, file_id, object_offset, length = buffer.length,
                                    done = std::move(done)](Completion& written) {
    if (written.status.ok()) {
      auto& size = object_bytes_[{target, file_id}];
      const std::uint64_t end = object_offset + length;
      if (end > size) {
        used_bytes_[target] += end - size;
        size = end;
      }
      env_.metrics().count("storage.write_bytes", static_cast<double>(length));
    }
    done(written);
  });
}

void StorageService::finish(TargetId target, Endpoint to, proto::ChunkReply reply, std::optional<MemHandle> staging,
                            bool mirror_staging) {
  if (staging) {
    (mirror_staging ? mirror_staging_in_use_bytes_ : staging_in_use_bytes_) -= staging->length;
    env_.free(*staging);
  }
  if (reply.status == StatusCode::ok) ++requests_served_;
  chunk_replies_.answer(to, reply.request_id, reply);  // a retry gets this reply, not a second execution
  env_.send(to, std::move(reply)).ignore();            // a lost reply is recovered by the client's retry
  if (target != k_no_id) {
    TargetState& ts = targets_[target];
    SLUICE_ASSERT(ts.active > 0);
    SLUICE_ASSERT(staging.has_value());  // every request that took a slot holds staging
    --ts.active;
    count_pieces(ts, staging->length, false);
    pump(target);
  }
  // Staging memory was returned: other targets may be waiting for it.
  for (auto& [t, ts] : targets_) {
    if (t != target && !ts.queued.empty()) pump(t);
  }
}

void StorageService::count_pieces(TargetState& ts, std::uint64_t length, bool starts, bool write) {
  if (config_.slot_piece_bytes == 0) return;
  const TimeNs now = env_.now();
  if (now > ts.pieces_since && ts.active_pieces > 0) {
    const auto held_ns = static_cast<double>(now - ts.pieces_since);
    env_.metrics().count("storage.slot_piece_ns", held_ns * static_cast<double>(ts.active_pieces));
    if (ts.active_pieces > config_.max_active_per_target) {
      env_.metrics().count("storage.slot_excess_piece_ns",
                           held_ns * static_cast<double>(ts.active_pieces - config_.max_active_per_target));
    }
  }
  ts.pieces_since = now;
  const std::uint64_t pieces = (length + config_.slot_piece_bytes - 1) / config_.slot_piece_bytes;
  if (starts) {
    env_.metrics().count("storage.slot_pieces", static_cast<double>(pieces));
    if (write && pieces > 1) env_.metrics().count("storage.slot_merged_write_pieces", static_cast<double>(pieces));
    ts.active_pieces += pieces;
  } else {
    SLUICE_ASSERT(ts.active_pieces >= pieces);
    ts.active_pieces -= pieces;
  }
  SLUICE_ASSERT((ts.active == 0) == (ts.active_pieces == 0));
}

void StorageService::remove_chunks(Endpoint from, const proto::RemoveChunks& m) {
  auto remaining = std::make_shared<std::size_t>(0);
  auto failure = std::make_shared<Status>();
  std::vector<TargetId> mine;
  for (TargetId t : m.targets) {
    if (owns(t)) mine.push_back(t);
  }
  if (mine.empty()) {
    env_.send(from, proto::Ack{m.request_id, StatusCode::ok, {}}).ignore();
    return;
  }
  *remaining = mine.size();
  for (TargetId t : mine) {
    StorageIoSpec io;
    io.op = StorageOp::remove;
    io.target = t;
    io.file_id = m.file_id;
    ops_.expect(env_.storage_io(io), [this, from, m, t, remaining, failure](Completion& c) {
      if (!c.status.ok() && failure->ok()) *failure = c.status;
      auto it = object_bytes_.find({t, m.file_id});
      if (it != object_bytes_.end()) {
        used_bytes_[t] -= std::min(used_bytes_[t], it->second);
        object_bytes_.erase(it);
      }
      if (c.status.ok()) forward_removal(t, m.file_id);
      if (--*remaining == 0) {
        env_.send(from, proto::Ack{m.request_id, failure->code(), failure->message()}).ignore();
      }
    });
  }
}

void StorageService::allocate_chunk(Endpoint from, const proto::AllocateChunk& m) {
  if (answer_duplicate(from, m.request_id)) return;
  if (!admit_mirrored(from, m.request_id, m.target)) return;
  auto reply = [this, from, rid = m.request_id](const Status& s) {
    const proto::Message answer = proto::Ack{rid, s.code(), proto::clip_error_text(s.message())};
    chunk_replies_.answer(from, rid, answer);  // a retry gets this answer: a late zero must not undo later writes
    env_.send(from, answer).ignore();
  };
  chunk_replies_.begin(from, m.request_id);
  if (!owns(m.target)) {
    return reply(error(StatusCode::not_found, "target " + std::to_string(m.target) + " is not on " + name()));
  }
  if (m.length > k_max_file_bytes || m.object_offset > k_max_file_bytes - m.length) {
    return reply(error(StatusCode::invalid_argument,
                       "allocation of " + std::to_string(m.length) + " bytes at " + std::to_string(m.object_offset) +
                           " of file " + std::to_string(m.file_id) + " runs past the largest file offset"));
  }
  env_.metrics().count("storage.allocations", 1);
  if (const MirrorRole* role = mirror_role(m.target); role != nullptr && role->primary) {
    return mirrored_allocate(m.target, m, reply);
  }
  local_allocate(m.target, m.file_id, m.object_offset, m.length, m.mode, reply);
}

void StorageService::local_allocate(TargetId target, FileId file_id, std::uint64_t object_offset, std::uint64_t length,
                                    proto::AllocMode mode, std::function<void(Status)> done) {
  StorageIoSpec io;
  io.op = mode == proto::AllocMode::reserve ? StorageOp::allocate : StorageOp::punch;
  io.target = target;
  io.file_id = file_id;
  io.object_offset = object_offset;
  io.length = length;
  ops_.expect(env_.storage_io(io), [this, io, mode, done = std::move(done)](Completion& c) mutable {
    if (!c.status.ok() || mode != proto::AllocMode::zero) return done(c.status);
    io.op = StorageOp::allocate;  // zero: the punched range reserved again
    ops_.expect(env_.storage_io(io), [done = std::move(done)](Completion& reserved) { done(reserved.status); });
  });
}

void StorageService::flush_storage(Endpoint from, RequestId rid) {
  if (!flushing_.emplace(from, rid).second) {
    env_.send(from, proto::Ack{rid, StatusCode::in_progress, name() + " is still flushing"}).ignore();
    return;
  }
  env_.metrics().count("storage.flushes", 1);
  auto remaining = std::make_shared<std::size_t>(targets_.size());
  auto failure = std::make_shared<Status>();
  auto answer = [this, from, rid, failure] {
    flushing_.erase({from, rid});
    env_.send(from, proto::Ack{rid, failure->code(), failure->message()}).ignore();
  };
  if (targets_.empty()) return answer();
  for (const auto& [target, state] : targets_) {
    StorageIoSpec io;
    io.op = StorageOp::flush;
    io.target = target;
    ops_.expect(env_.storage_io(io), [remaining, failure, answer](Completion& c) {
      if (!c.status.ok() && failure->ok()) *failure = c.status;
      if (--*remaining == 0) answer();
    });
  }
}

}  // namespace sluice
