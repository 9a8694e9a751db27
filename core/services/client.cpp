#include "core/services/client.hpp"

#include <algorithm>
#include <memory>
#include <tuple>
#include <utility>

#include "core/common/assert.hpp"
#include "core/namespace/fs_path.hpp"
#include "core/services/invariants.hpp"
#include "core/namespace/name_hash.hpp"
#include "core/services/wire_convert.hpp"

namespace sluice {

struct Client::IoRequest {
  FileId file_id = 0;
  bool write = false;
  bool sync = false;
  std::size_t remaining = 0;
  std::uint64_t bytes = 0;
  Status first_error;
  BytesFn done;
};

struct ListingState {
  std::string path;
  bool with_attrs = false;
  std::size_t shards_left = 0;
  bool merge_by_hash = false;  // entries from several shards: ordered by name hash at the end
  Status first_error;
  std::vector<proto::DirEntryDesc> entries;
  Client::EntriesFn done;
};

Client::Client(Env& env, OpTable& ops, ClientConfig config)
    : env_(env),
      ops_(ops),
      config_(std::move(config)),
      rpc_(env_, ops_, config_.rpc),
      planner_(config_.planner),
      open_id_base_(static_cast<std::uint64_t>(std::max<std::int64_t>(env_.wall_ns(), 0))) {}

bool Client::handle(Event& event) {
  if (auto* c = std::get_if<Completion>(&event)) return ops_.dispatch(*c);
  return rpc_.on_delivery(std::get<Delivery>(event));
}

void Client::start(StatusFn ready) {
  proto::RegisterClient reg;
  reg.node = env_.self().node;
  reg.endpoint = env_.self();
  rpc_.call(config_.mgmt, std::move(reg), [this, ready](Result<proto::Message> r) {
    if (!r.ok()) return ready(error(r.status().code(), "registering with mgmt: " + r.status().message()));
    fetch_maps(ready);
  });
}

void Client::fetch_maps(StatusFn done) {
  maps_waiters_.push_back(std::move(done));
  if (maps_fetching_) return;
  maps_fetching_ = true;
  proto::GetMaps get;
  get.known_version = maps_version_;
  rpc_.call(config_.mgmt, std::move(get), [this](Result<proto::Message> r) {
    maps_fetching_ = false;
    if (r.ok()) {
      auto& maps = std::get<proto::MapsReply>(r.value());
      maps_version_ = maps.version;
      targets_.clear();
      for (const auto& t : maps.targets) targets_[t.target] = t;
      shards_.clear();
      for (const auto& s : maps.shards) shards_[s.shard] = s.endpoint;
      groups_.clear();
      for (const auto& g : maps.groups) groups_[g.group] = g;
      mirrored_shards_.clear();
      for (const auto& g : maps.meta_groups) mirrored_shards_.insert(g.shard);
    }
    auto waiters = std::move(maps_waiters_);
    maps_waiters_.clear();
    for (auto& w : waiters) w(r.status());
  });
}

void Client::refresh_maps_until(std::function<bool()> ready, std::string what, StatusFn done, std::uint32_t attempt) {
  fetch_maps([this, ready, what, done, attempt](Status s) {
    if (ready()) return done(ok_status());
    if (attempt + 1 >= config_.max_maps_refreshes) {
      return done(error(StatusCode::unavailable, what + " is not registered with mgmt after " +
                                                     std::to_string(attempt + 1) + " map refreshes" +
                                                     (s.ok() ? std::string() : " (" + s.to_string() + ")")));
    }
    ops_.expect(
        env_.timer(config_.maps_refresh_backoff_ns << std::min<std::uint32_t>(attempt, 16)),
        [this, ready, what, done, attempt](Completion&) { refresh_maps_until(ready, what, done, attempt + 1); });
  });
}

Endpoint Client::shard_endpoint(ShardId shard) const {
  auto it = shards_.find(shard);
  return it == shards_.end() ? Endpoint{} : it->second;
}

Endpoint Client::target_endpoint(TargetId target) const {
  auto it = targets_.find(target);
  return it == targets_.end() ? Endpoint{} : it->second.endpoint;
}

TargetId Client::primary_of(GroupId group) const {
  auto it = groups_.find(group);
  return it == groups_.end() ? k_no_id : it->second.primary;
}

// ---- namespace ----------------------------------------------------------------

void Client::placement_of_dir(const std::string& dir_path, PlacementFn done) {
  if (dir_path == "/" || config_.ns.policy == MetaPolicy::path_hash) {
    Result<DirPlacement> root = root_placement(config_.ns);
    return answer_later(done, root);
  }
  if (auto it = dir_cache_.find(dir_path); it != dir_cache_.end()) {
    DirPlacement p = it->second;
    return answer_later(std::move(done), p);
  }
  auto [waiting, first] = dir_lookups_.try_emplace(dir_path);
  waiting->second.push_back(std::move(done));
  if (!first) {
    env_.metrics().count("client.dir_lookups_joined", 1);
    return;
  }
  proto::Stat st;
  st.path = dir_path;
  meta_call(dir_path, std::move(st), [this, dir_path](Result<proto::Message> r) {
    const auto placement_from = [&]() -> Result<DirPlacement> {
      if (!r.ok()) return r.status();
      const auto& inode = std::get<proto::InodeReply>(r.value()).inode;
      if (inode.type != proto::InodeType::dir) {
        return error(StatusCode::not_a_directory, dir_path + " is not a directory");
      }
      DirPlacement p = from_wire(inode.dir_layout, config_.ns.shard_count);
      if (dir_cache_.size() >= config_.dir_cache_entries) dir_cache_.clear();  // bounded: start afresh
      dir_cache_[dir_path] = p;
      return p;
    };
    const Result<DirPlacement> placement = placement_from();
    auto node = dir_lookups_.extract(dir_path);
    SLUICE_ASSERT(!node.empty());  // the first caller's entry stays until its Stat is answered
    for (PlacementFn& waiter : node.mapped()) waiter(placement);
  });
}

void Client::shard_for_path(const std::string& path, std::function<void(Result<ShardId>)> done) {
  if (Status s = validate_path(path); !s.ok()) {
    return answer_later(done, s);
  }
  if (config_.ns.policy == MetaPolicy::path_hash) {
    const ShardId shard = path_hash_shard(path, config_.ns.shard_count);
    return answer_later(done, shard);
  }
  if (path == "/") {
    placement_of_dir("/", [done](Result<DirPlacement> p) {
      if (!p.ok()) return done(p.status());
      done(p->owner_shard);
    });
    return;
  }
  Result<PathSplit> split = split_path(path);
  std::string parent(split->parent), name(split->name);
  placement_of_dir(parent, [done, parent, name](Result<DirPlacement> p) {
    if (!p.ok()) return done(p.status());
    done(shard_for_entry(*p, parent, name));
  });
}

void Client::meta_call(const std::string& path, proto::Message request,
                       std::function<void(Result<proto::Message>)> done, bool retried) {
  shard_for_path(path, [this, path, request = std::move(request), done, retried](Result<ShardId> shard) mutable {
    if (!shard.ok()) return done(shard.status());
    call_shard(*shard, request, [this, path, request, done, retried](Result<proto::Message> r) mutable {
      // A misrouted request means our cached placement of the parent is stale.
      if (!r.ok() && r.status().code() == StatusCode::invalid_argument && !retried &&
          r.status().message().find("belongs to shard") != std::string::npos) {
        if (Result<PathSplit> split = split_path(path); split.ok()) dir_cache_.erase(std::string(split->parent));
        return meta_call(path, std::move(request), done, true);
      }
      done(std::move(r));
    });
  });
}

void Client::call_shard(ShardId shard, proto::Message request, std::function<void(Result<proto::Message>)> done,
                        std::uint32_t failovers, RequestId resend_id, TimeNs first_sent_ns) {
  if (first_sent_ns < 0) first_sent_ns = env_.now();
  const Endpoint to = shard_endpoint(shard);
  if (!to.valid()) {
    refresh_maps_until(
        [this, shard] { return shard_endpoint(shard).valid(); }, "metadata shard " + std::to_string(shard),
        [this, shard, request = std::move(request), done, failovers, resend_id, first_sent_ns](Status s) mutable {
          if (!s.ok()) return done(s);
          call_shard(shard, std::move(request), done, failovers, resend_id, first_sent_ns);
        });
    return;
  }
  auto used_id = std::make_shared<RequestId>(resend_id);
  const RequestId id = rpc_.call(
      to, request,
      [this, shard, request, done, failovers, to, used_id, first_sent_ns](Result<proto::Message> r) mutable {
        const bool lost =
            !r.ok() && (r.status().code() == StatusCode::timed_out || r.status().code() == StatusCode::unavailable);
        if (!lost || failovers >= config_.mirror_failovers) return done(std::move(r));
        // Waits for mgmt to name another server; resends even if it does not
        // (the server may be back, or it refused only until it learnt its role).
        auto fail_over = [this, shard, to, failovers, used_id](proto::Message req, auto finish, const Status& why) {
          env_.metrics().count("client.meta_failovers", 1);
          env_.log(LogLevel::warn, std::string(proto::message_name(req)) + " to metadata shard " +
                                       std::to_string(shard) + " at " + to.to_string() + " failed (" + why.to_string() +
                                       "); refreshing maps to find its primary");
          refresh_maps_until([this, shard, to] { return shard_endpoint(shard).valid() && shard_endpoint(shard) != to; },
                             "a new primary of metadata shard " + std::to_string(shard),
                             [this, shard, req = std::move(req), finish, failovers, used_id](Status) mutable {
                               call_shard(shard, std::move(req), finish, failovers + 1, *used_id);
                             });
        };
        if (mirrored_shards_.count(shard) != 0) return fail_over(std::move(request), done, r.status());
        // Our maps may predate the shard's mirror group (mgmt forms it once
        // both of its servers registered): look once more before giving up.
        if (failovers > 0) return done(std::move(r));
        fetch_maps([this, shard, to, request = std::move(request), done, fail_over, r = std::move(r), used_id,
                    first_sent_ns](Status) mutable {
          if (mirrored_shards_.count(shard) != 0) return fail_over(std::move(request), done, r.status());
          if (!RpcClient::unanswered(r.status(), to)) return done(std::move(r));  // the server's answer
          resend_to_shard(shard, std::move(request), std::move(done), *used_id, first_sent_ns, std::move(r));
        });
      },
      resend_id, mirrored_shards_.count(shard) != 0 ? shard_still_served_by(shard, to) : RpcClient::StillThereFn{});
  if (id != 0) *used_id = id;
}

void Client::resend_to_shard(ShardId shard, proto::Message request, std::function<void(Result<proto::Message>)> done,
                             RequestId id, TimeNs first_sent_ns, Result<proto::Message> r) {
  const TimeNs waited_ns = env_.now() - first_sent_ns;
  if (id == 0 || waited_ns + config_.meta_retry_wait_ns > config_.meta_retry_ns) {
    return done(std::move(r));
  }
  env_.metrics().count("client.meta_resends", 1);
  env_.log(LogLevel::warn, std::string(proto::message_name(request)) + " #" + std::to_string(id) +
                               " to metadata shard " + std::to_string(shard) + " unanswered for " +
                               std::to_string(waited_ns / k_ns_per_ms) + " ms (" + r.status().to_string() +
                               "); sending it again under the same request id (meta_retry_ns " +
                               std::to_string(config_.meta_retry_ns / k_ns_per_s) + " s)");
  ops_.expect(env_.timer(config_.meta_retry_wait_ns), [this, shard, request = std::move(request),
                                                       done = std::move(done), id, first_sent_ns](Completion&) mutable {
    call_shard(shard, std::move(request), std::move(done), 0, id, first_sent_ns);
  });
}

void Client::check_still_there(std::function<bool()> serves, std::function<void(bool)> resume) {
  auto answered = std::make_shared<bool>(false);
  ops_.expect(env_.timer(config_.mirror_check_wait_ns), [answered, resume](Completion&) {
    if (std::exchange(*answered, true)) return;
    resume(true);  // no maps in time: ask the same server again
  });
  fetch_maps([answered, serves = std::move(serves), resume](Status) {
    if (std::exchange(*answered, true)) return;
    resume(serves());
  });
}

RpcClient::StillThereFn Client::shard_still_served_by(ShardId shard, Endpoint server) {
  return [this, shard, server](std::function<void(bool)> resume) {
    check_still_there(
        [this, shard, server] {
          const Endpoint now = shard_endpoint(shard);
          return !now.valid() || now == server;
        },
        std::move(resume));
  };
}

Status Client::chunk_failed(const ChunkJob& job, const Status& why) {
  return error(why.code(), std::string(job.request->write ? "writing file " : "reading file ") +
                               std::to_string(job.request->file_id) + " at " + std::to_string(job.file_offset) +
                               (job.request->write ? " to target " : " from target ") + std::to_string(job.target) +
                               ": " + why.message());
}

RpcClient::StillThereFn Client::chunk_still_there(const ChunkJob& job) {
  return primary_still_there(job.group, job.target);
}

RpcClient::StillThereFn Client::primary_still_there(GroupId group, TargetId target) {
  if (group == k_no_id) return {};
  return [this, group, target](std::function<void(bool)> resume) {
    check_still_there(
        [this, group, target] {
          const TargetId now = primary_of(group);
          return now == k_no_id || now == target || !target_endpoint(now).valid();
        },
        std::move(resume));
  };
}

namespace {

Result<proto::InodeDesc> inode_of(Result<proto::Message> r) {
  if (!r.ok()) return r.status();
  return std::get<proto::InodeReply>(r.value()).inode;
}

}  // namespace

void Client::mkdir(const std::string& path, std::uint32_t mode, InodeFn done) {
  CreateOptions options;
  options.mode = mode;
  mkdir(path, options, std::move(done));
}

void Client::mkdir(const std::string& path, const CreateOptions& options, InodeFn done) {
  proto::Mkdir m;
  m.path = path;
  m.mode = options.mode;
  m.uid = options.uid;
  m.gid = options.gid;
  meta_call(path, std::move(m), [done](Result<proto::Message> r) { done(inode_of(std::move(r))); });
}

void Client::create(const std::string& path, const CreateOptions& options, InodeFn done) {
  proto::Create m;
  m.path = path;
  m.mode = options.mode;
  m.chunk_bytes = options.chunk_bytes;
  m.stripe_count = options.stripe_count;
  m.chooser = options.chooser;
  m.uid = options.uid;
  m.gid = options.gid;
  m.open_id = options.open_id;
  meta_call(path, std::move(m), noting_open(options.open_id, std::move(done)));
}

void Client::stat(const std::string& path, InodeFn done) { open(path, 0, std::move(done)); }

void Client::open(const std::string& path, std::uint64_t open_id, InodeFn done) {
  proto::Stat m;
  m.path = path;
  m.open_id = open_id;
  meta_call(path, std::move(m), noting_open(open_id, std::move(done)));
}

std::function<void(Result<proto::Message>)> Client::noting_open(std::uint64_t open_id, InodeFn done) {
  return [this, open_id, done = std::move(done)](Result<proto::Message> r) {
    Result<proto::InodeDesc> inode = inode_of(std::move(r));
    if (inode.ok() && open_id != 0 && inode->type == proto::InodeType::file) {
      held_opens_[open_id] = HeldOpen{inode->owner_shard, inode->file_id};
      arm_renewal();
    }
    done(std::move(inode));
  };
}

void Client::arm_renewal() {
  if (renewal_armed_ || config_.open_renew_ns <= 0) return;
  renewal_armed_ = true;
  ops_.expect(env_.timer(config_.open_renew_ns), [this](Completion&) {
    renewal_armed_ = false;
    if (held_opens_.empty()) return;
    renew_opens();
    arm_renewal();
  });
}

void Client::renew_opens() {
  std::map<ShardId, std::vector<proto::RenewOpens>> by_shard;
  for (const auto& [open_id, open] : held_opens_) {
    std::vector<proto::RenewOpens>& pages = by_shard[open.shard];
    if (pages.empty() || pages.back().opens.size() == proto::k_max_renewed_opens) pages.emplace_back();
    pages.back().opens.push_back(proto::HeldOpenDesc{open_id, open.file});
  }
  for (auto& [shard, pages] : by_shard) {
    const Endpoint server = shard_endpoint(shard);  // a switched-over shard's new primary holds them again
    if (!server.valid()) continue;
    // A lost one is sent again with the next, long before the lease ends.
    for (proto::RenewOpens& page : pages) env_.send(server, std::move(page)).ignore();
  }
}

void Client::unlink(const std::string& path, StatusFn done) { unlink(path, false, std::move(done)); }

void Client::unlink(const std::string& path, bool keep_open, StatusFn done) {
  proto::Unlink m;
  m.path = path;
  m.keep_open = keep_open;
  meta_call(path, std::move(m), [done](Result<proto::Message> r) { done(r.status()); });
}

void Client::release_orphan(const proto::InodeDesc& inode, StatusFn done) { release_orphan(inode, 0, std::move(done)); }

void Client::release_orphan(const proto::InodeDesc& inode, std::uint64_t open_id, StatusFn done) {
  proto::ReleaseOrphan m;
  m.file_id = inode.file_id;
  m.open_id = open_id;
  if (open_id != 0) let_go(open_id);
  call_shard(inode.owner_shard, std::move(m), [done](Result<proto::Message> r) { done(r.status()); });
}

void Client::rmdir(const std::string& path, StatusFn done) {
  proto::Rmdir m;
  m.path = path;
  meta_call(path, std::move(m), [this, path, done](Result<proto::Message> r) {
    if (r.ok()) dir_cache_.erase(path);
    done(r.status());
  });
}

void Client::rename(const std::string& from, const std::string& to, StatusFn done) {
  rename(from, to, false, std::move(done));
}

void Client::rename(const std::string& from, const std::string& to, bool keep_open, StatusFn done) {
  proto::Rename m;
  m.from = from;
  m.to = to;
  m.keep_open = keep_open;
  meta_call(from, std::move(m), [done](Result<proto::Message> r) { done(r.status()); });
}

void Client::symlink(const std::string& target, const std::string& path, const CreateOptions& options, InodeFn done) {
  proto::Symlink m;
  m.path = path;
  m.target = target;
  m.uid = options.uid;
  m.gid = options.gid;
  meta_call(path, std::move(m), [done](Result<proto::Message> r) { done(inode_of(std::move(r))); });
}

void Client::readlink(const std::string& path, std::function<void(Result<std::string>)> done) {
  stat(path, [path, done](Result<proto::InodeDesc> r) {
    if (!r.ok()) return done(r.status());
    if (r->type != proto::InodeType::symlink) {
      return done(error(StatusCode::invalid_argument, "readlink: " + path + " is not a symbolic link"));
    }
    done(std::move(r->symlink_target));
  });
}

void Client::mknod(const std::string& path, proto::InodeType type, std::uint32_t mode, std::uint64_t rdev,
                   const CreateOptions& options, InodeFn done) {
  proto::Mknod m;
  m.path = path;
  m.type = type;
  m.mode = mode;
  m.rdev = rdev;
  m.uid = options.uid;
  m.gid = options.gid;
  meta_call(path, std::move(m), [done](Result<proto::Message> r) { done(inode_of(std::move(r))); });
}

void Client::xattr(const std::string& path, proto::XattrOp op, const std::string& name, const std::string& value,
                   std::uint32_t flags, XattrFn done) {
  proto::Xattr m;
  m.path = path;
  m.op = op;
  m.name = name;
  m.value = value;
  m.flags = flags;
  meta_call(path, std::move(m), [done](Result<proto::Message> r) {
    if (!r.ok()) return done(r.status());
    const auto* reply = std::get_if<proto::XattrReply>(&r.value());
    if (reply == nullptr) {
      return done(error(StatusCode::corrupt, "an Xattr answered by " + std::string(proto::message_name(*r))));
    }
    done(*reply);
  });
}

void Client::link(const std::string& existing, const std::string& new_path, InodeFn done) {
  proto::Link m;
  m.from = existing;
  m.to = new_path;
  meta_call(existing, std::move(m), [done](Result<proto::Message> r) { done(inode_of(std::move(r))); });
}

void Client::close(const std::string& path, std::uint64_t size_bytes, StatusFn done) {
  AttrChange change;
  change.size_bytes = size_bytes;
  change.mtime_ns = env_.wall_ns();
  change.written = true;
  set_attr(path, change, [done](const Result<proto::InodeDesc>& r) { done(r.status()); });
}

void Client::close_unchanged(const std::string& path, StatusFn done) {
  AttrChange change;
  change.accessed = true;
  set_attr(path, change, [done](const Result<proto::InodeDesc>& r) { done(r.status()); });
}

void Client::set_attr(const std::string& path, const AttrChange& change, InodeFn done) {
  proto::SetAttr m;
  m.path = path;
  if (change.size_bytes) {
    m.mask |= proto::k_set_attr_size;
    m.size_bytes = *change.size_bytes;
  }
  if (change.mtime_ns) {
    m.mask |= proto::k_set_attr_mtime;
    m.mtime_ns = *change.mtime_ns;
  }
  if (change.atime_ns) {
    m.mask |= proto::k_set_attr_atime;
    m.atime_ns = *change.atime_ns;
  }
  if (change.written) m.mask |= proto::k_set_attr_written;
  if (change.mode) {
    m.mask |= proto::k_set_attr_mode;
    m.mode = *change.mode;
  }
  if (change.uid) {
    m.mask |= proto::k_set_attr_uid;
    m.uid = *change.uid;
  }
  if (change.gid) {
    m.mask |= proto::k_set_attr_gid;
    m.gid = *change.gid;
  }
  if (change.accessed) {
    m.mask |= proto::k_set_attr_accessed;
    m.atime_ns = env_.wall_ns();
  }
  if (change.close_open_id != 0) {
    m.mask |= proto::k_set_attr_close;
    m.open_id = change.close_open_id;
  }
  if (change.close_open_id != 0) let_go(change.close_open_id);
  meta_call(path, std::move(m), [done](Result<proto::Message> r) { done(inode_of(std::move(r))); });
}

void Client::readdir(const std::string& path, bool with_attrs, EntriesFn done) {
  placement_of_dir(path, [this, path, with_attrs, done](Result<DirPlacement> p) {
    if (!p.ok()) return done(p.status());
    std::vector<ShardId> shards = shards_for_listing(*p);
    auto state = std::make_shared<ListingState>();
    state->path = path;
    state->with_attrs = with_attrs;
    state->shards_left = shards.size();
    state->merge_by_hash = shards.size() > 1;
    state->done = done;
    for (ShardId shard : shards) readdir_shard(state, shard, 0);
  });
}

void Client::readdir_shard(std::shared_ptr<ListingState> state, ShardId shard, std::uint64_t cookie) {
  auto finish_shard = [state](const Status& s) {
    if (!s.ok() && state->first_error.ok()) state->first_error = s;
    if (--state->shards_left > 0) return;
    if (!state->first_error.ok()) return state->done(state->first_error);
    if (state->merge_by_hash) {
      // Lustre's lmv merges the stripes' pages in hash order, so entries of
      // all stripes interleave (a `ls -l` then stats every MDT at once, not
      // one after the other).
      std::stable_sort(state->entries.begin(), state->entries.end(),
                       [](const proto::DirEntryDesc& a, const proto::DirEntryDesc& b) {
                         const std::uint64_t ha = fnv_1a_64(a.name), hb = fnv_1a_64(b.name);
                         return ha != hb ? ha < hb : a.name < b.name;
                       });
    }
    state->done(std::move(state->entries));
  };
  proto::Readdir m;
  m.path = state->path;
  m.cookie = cookie;
  m.max_entries = config_.readdir_page_entries;
  m.with_attrs = state->with_attrs;
  call_shard(shard, std::move(m), [this, state, shard, finish_shard](Result<proto::Message> r) {
    if (!r.ok()) return finish_shard(r.status());
    auto& page = std::get<proto::ReaddirReply>(r.value());
    if (!page.attrs.empty() && page.attrs.size() != page.entries.size()) {
      return finish_shard(error(StatusCode::corrupt, "ReaddirReply of " + state->path + " from metadata shard " +
                                                         std::to_string(shard) + ": " +
                                                         std::to_string(page.attrs.size()) + " attributes for " +
                                                         std::to_string(page.entries.size()) + " entries"));
    }
    for (std::size_t i = 0; i < page.attrs.size(); ++i) page.entries[i].attrs = page.attrs[i];
    if (state->entries.size() + page.entries.size() > config_.readdir_max_entries) {
      return finish_shard(error(StatusCode::invalid_argument, "directory " + state->path + " has more than " +
                                                                  std::to_string(config_.readdir_max_entries) +
                                                                  " entries (readdir_max_entries)"));
    }
    for (auto& e : page.entries) state->entries.push_back(std::move(e));
    if (page.eof) return finish_shard(ok_status());
    readdir_shard(state, shard, page.next_cookie);
  });
}

// ---- data --------------------------------------------------------------------

void Client::read(const proto::InodeDesc& inode, std::uint64_t offset, const MemHandle& dst, BytesFn done) {
  submit(inode, offset, dst, false, false, std::move(done));
}

void Client::write(const proto::InodeDesc& inode, std::uint64_t offset, const MemHandle& src, bool sync, BytesFn done) {
  submit(inode, offset, src, true, sync, std::move(done));
}

void Client::allocate(const proto::InodeDesc& inode, std::uint64_t offset, std::uint64_t length, proto::AllocMode mode,
                      StatusFn done) {
  if (inode.type != proto::InodeType::file) {
    return answer_later(
        done, error(StatusCode::is_a_directory, "file id " + std::to_string(inode.file_id) + " is not a file"));
  }
  if (offset > k_max_file_bytes || length > k_max_file_bytes - offset) {
    return answer_later(
        done, error(StatusCode::invalid_argument, "allocation of " + std::to_string(length) + " bytes at " +
                                                      std::to_string(offset) + " ends past the largest file"));
  }
  Result<StripePattern> pattern = from_wire(inode.stripe, config_.stripe_flavor);
  if (!pattern.ok()) return answer_later(done, pattern.status());
  struct Join {
    std::size_t left = 0;
    Status first_error;
    StatusFn done;
  };
  auto join = std::make_shared<Join>();
  join->done = std::move(done);
  std::vector<std::pair<std::uint32_t, proto::AllocateChunk>> pieces;  // (stripe entry, request)
  for (std::uint32_t p = 0; p < pattern->stripe_count(); ++p) {
    const std::uint64_t begin = pattern->object_size(offset, p);
    const std::uint64_t end = pattern->object_size(offset + length, p);
    if (begin == end) continue;
    proto::AllocateChunk m;
    m.file_id = inode.file_id;
    m.object_offset = begin;
    m.length = end - begin;
    m.mode = mode;
    pieces.emplace_back(pattern->targets()[p], m);
  }
  if (pieces.empty()) return answer_later(done, ok_status());
  join->left = pieces.size();
  env_.metrics().count("client.allocations", 1);
  for (auto& [entry, m] : pieces) {
    const GroupId group = pattern->buddy_mirrored() ? entry : k_no_id;
    allocate_on(group, pattern->buddy_mirrored() ? k_no_id : entry, std::move(m), 0, [join](Status s) {
      if (!s.ok() && join->first_error.ok()) join->first_error = s;
      if (--join->left == 0) join->done(join->first_error);
    });
  }
}

void Client::allocate_on(GroupId group, TargetId target, proto::AllocateChunk m, std::uint32_t failovers,
                         StatusFn done) {
  const TargetId to = group != k_no_id ? primary_of(group) : target;
  const Endpoint server = target_endpoint(to);
  const std::string what =
      group != k_no_id ? "buddy group " + std::to_string(group) : "storage target " + std::to_string(target);
  if (!server.valid()) {
    if (failovers > config_.mirror_failovers) {
      return done(error(StatusCode::not_found,
                        "allocating in file " + std::to_string(m.file_id) + ": " + what + " is not in the maps"));
    }
    return refresh_maps_until(
        [this, group, target] { return target_endpoint(group != k_no_id ? primary_of(group) : target).valid(); },
        what + " of file " + std::to_string(m.file_id),
        [this, group, target, m, failovers, done](Status s) {
          if (!s.ok()) return done(error(StatusCode::not_found, s.message()));
          allocate_on(group, target, m, failovers + 1, done);
        });
  }
  m.target = to;
  rpc_.call(
      server, m,
      [this, group, target, m, failovers, to, done](Result<proto::Message> r) {
        const StatusCode code = r.ok() ? StatusCode::ok : r.status().code();
        if (group != k_no_id && failovers < config_.mirror_failovers &&
            (code == StatusCode::timed_out || code == StatusCode::unavailable)) {
          // As a chunk job: wait for mgmt to name another primary, then again.
          env_.metrics().count("client.mirror_failovers", 1);
          return await_new_primary(group, to, [this, group, target, m, failovers, done](Status) {
            allocate_on(group, target, m, failovers + 1, done);
          });
        }
        if (!r.ok()) {
          return done(error(code, "allocating " + std::string(proto::to_string(m.mode)) + " in file " +
                                      std::to_string(m.file_id) + " on target " + std::to_string(to) + ": " +
                                      r.status().message()));
        }
        done(ok_status());
      },
      0, primary_still_there(group, to));
}

void Client::submit(const proto::InodeDesc& inode, std::uint64_t offset, const MemHandle& buffer, bool write, bool sync,
                    BytesFn done) {
  if (inode.type != proto::InodeType::file) {
    return answer_later(
        done, error(StatusCode::is_a_directory, "file id " + std::to_string(inode.file_id) + " is not a file"));
  }
  Result<StripePattern> pattern = from_wire(inode.stripe, config_.stripe_flavor);
  if (!pattern.ok()) return answer_later(done, pattern.status());
  std::uint64_t length = buffer.length;
  if (!write) length = offset >= inode.size_bytes ? 0 : std::min(length, inode.size_bytes - offset);
  if (length == 0) {
    return answer_later(done, std::uint64_t{0});
  }
  Result<std::vector<StripePiece>> pieces = pattern->map_range(offset, length);
  if (!pieces.ok()) return answer_later(done, pieces.status());
  auto request = std::make_shared<IoRequest>();
  request->file_id = inode.file_id;
  request->write = write;
  request->sync = sync;
  request->done = std::move(done);
  std::vector<ChunkJob> jobs;
  jobs.reserve(pieces->size());
  // Coalescing (ClientConfig::coalesce): the last job of this request on each
  // target, which a following piece may extend.
  std::map<TargetId, std::size_t> open_job;
  const ChunkCoalescing& co = config_.coalesce;
  for (const StripePiece& piece : *pieces) {
    if (co.max_bytes > 0) {
      auto it = open_job.find(piece.target);
      if (it != open_job.end()) {
        ChunkJob& last = jobs[it->second];
        const std::uint64_t merged = last.user.length + piece.length;
        const bool object_adjacent = last.object_offset + last.user.length == piece.object_offset;
        const bool buffer_adjacent =
            last.user.offset + last.user.length == buffer.offset + (piece.file_offset - offset);
        if (object_adjacent && merged <= co.max_bytes && (buffer_adjacent || co.strided)) {
          // Contiguous: the union of the two slices. Strided: a range of the
          // merged length inside the caller's buffer, starting at the first
          // piece's slice where it fits (same memory, hence same route).
          const std::uint64_t first_rel = last.user.offset - buffer.offset;
          last.user = buffer.slice(std::min(first_rel, buffer.length - merged), merged);
          env_.metrics().count("client.chunks_coalesced", 1);
          continue;
        }
      }
      open_job[piece.target] = jobs.size();
    }
    ChunkJob job;
    job.request = request;
    job.target = piece.target;
    if (pattern->buddy_mirrored()) {
      job.group = piece.target;  // resolved to the group's primary when sent (pump)
      job.target = k_no_id;
    }
    job.object_offset = piece.object_offset;
    job.user = buffer.slice(piece.file_offset - offset, piece.length);
    job.file_offset = piece.file_offset;
    jobs.push_back(std::move(job));
  }
  request->remaining = jobs.size();
  for (ChunkJob& job : jobs) queued_jobs_.push_back(std::move(job));
  pump();
}

void Client::pump() {
  // Rail connections are counted per server (ChunkPlanner::plan): a job whose
  // server has no free connection on a usable rail waits, and the jobs behind
  // it for other servers go, as each BeeGFS thread waits only for a
  // connection to its own server. At most k_pump_scan_jobs queued jobs are
  // looked at per call; a finishing chunk pumps again.
  using Blocked = std::tuple<NodeId, std::uint8_t, std::uint32_t>;  // server, memory kind, device
  std::set<Blocked> blocked;
  std::size_t at = 0;
  for (std::size_t looked = 0;
       inflight_chunks_ < config_.max_inflight_chunks && at < queued_jobs_.size() && looked < k_pump_scan_jobs;
       ++looked) {
    ChunkJob& front = queued_jobs_[at];
    const TargetId to_target = front.group != k_no_id ? primary_of(front.group) : front.target;
    const Endpoint to_server = target_endpoint(to_target);
    const NodeId server_node = to_server.valid() ? to_server.node : k_no_id;  // k_no_id: the target is unknown yet
    const sched::MemoryPlace place = sched::MemoryPlace::of(front.user);
    const Blocked key{server_node, static_cast<std::uint8_t>(place.kind), place.device};
    if (blocked.count(key) != 0) {
      ++at;
      continue;
    }
    const bool reachable = env_.transport_reaches(front.user);
    std::optional<ChunkPlan> plan = planner_.plan(front.user, server_node, reachable);
    if (!plan) {
      blocked.insert(key);
      ++at;
      continue;
    }
    ChunkJob job = std::move(front);
    queued_jobs_.erase(queued_jobs_.begin() + static_cast<std::ptrdiff_t>(at));
    invariants::inflight_chunks(inflight_chunks_, +1, config_.max_inflight_chunks);
    ++inflight_chunks_;
    env_.metrics().count(plan->path == proto::ChunkPath::direct ? "client.chunks_direct" : "client.chunks_bounce", 1);
    if (!reachable) env_.metrics().count("client.chunks_bounce_unregistered_gpu", 1);
    if (job.group != k_no_id) job.target = primary_of(job.group);
    Endpoint server = target_endpoint(job.target);
    if (server.valid()) {
      if (job.request->write) {
        write_chunk(std::move(job), *plan, server);
      } else {
        read_chunk(std::move(job), *plan, server);
      }
      continue;
    }
    // The target is not in our maps: refresh (bounded), then go or fail naming it.
    const TargetId target = job.target;
    const GroupId group = job.group;
    refresh_maps_until(
        [this, target, group] { return target_endpoint(group != k_no_id ? primary_of(group) : target).valid(); },
        (group != k_no_id ? "buddy group " + std::to_string(group) : "storage target " + std::to_string(target)) +
            " of file " + std::to_string(job.request->file_id),
        [this, job, plan = *plan](Status s) mutable {
          if (!s.ok()) return job_done(job, plan, error(StatusCode::not_found, s.message()), 0, std::nullopt);
          if (job.group != k_no_id) job.target = primary_of(job.group);
          const Endpoint to = target_endpoint(job.target);
          if (job.request->write) {
            write_chunk(std::move(job), plan, to);
          } else {
            read_chunk(std::move(job), plan, to);
          }
        });
  }
}

void Client::read_chunk(ChunkJob job, const ChunkPlan& plan, Endpoint server) {
  // Where the server puts the bytes: this request's pinned bounce buffer, or
  // a window on the caller's range (see the header: the fence against a late
  // execution).
  std::optional<MemHandle> bounce;
  MemHandle landing;
  if (plan.path == proto::ChunkPath::bounce) {
    Result<MemHandle> b = env_.alloc(MemKind::pinned, plan.bounce_numa, job.user.length);
    if (!b.ok()) return job_done(job, plan, b.status(), 0, std::nullopt);
    bounce = *b;
    landing = *b;
  } else {
    Result<MemHandle> w = env_.open_window(job.user);
    if (!w.ok()) return job_done(job, plan, w.status(), 0, std::nullopt);
    landing = *w;
  }
  const TimeNs started = env_.now();
  rpc_.call(
      server, read_request(job, plan, server, landing),
      [this, job, plan, bounce, landing, started](Result<proto::Message> r) {
        if (!bounce) env_.close_window(landing);  // the fence: nothing lands in the caller's range from here on
        if (!r.ok()) {
          return job_done(job, plan, chunk_failed(job, r.status()), 0, bounce);
        }
        const auto reply = std::get<proto::ChunkReply>(r.value());
        const std::uint64_t n = std::min(reply.bytes, job.user.length);
        env_.metrics().sample("client.chunk_read_latency_ns", static_cast<double>(env_.now() - started));
        // The server's CRC32C, checked over the bytes the caller gets: in the
        // caller's range, after the copy out of a bounce buffer, except for GPU
        // memory, where it is checked over the bounce buffer right before the
        // GPU's copy engine moves it (checking GPU bytes would copy them back out
        // over PCIe; the copy itself is protected by PCIe's link CRC).
        const bool check_bounce = bounce && job.user.kind == MemKind::gpu;
        auto check = [this, job, plan, bounce, n, crc = reply.crc32c](MemHandle checked, std::function<void()> then) {
          if (!config_.verify_reads || n == 0) return then();
          ops_.expect(env_.checksum(checked.slice(0, n)), [this, job, plan, bounce, n, crc, then](Completion& c) {
            if (!c.status.ok()) return job_done(job, plan, c.status, 0, bounce);
            if (c.crc_valid && c.crc32c != crc) {
              env_.metrics().count("client.crc_mismatches", 1);
              return job_done(
                  job, plan,
                  error(StatusCode::corrupt, "CRC32C mismatch reading file " + std::to_string(job.request->file_id) +
                                                 " at " + std::to_string(job.file_offset) + " (" + std::to_string(n) +
                                                 " bytes) from target " + std::to_string(job.target)),
                  0, bounce);
            }
            then();
          });
        };
        const auto done = [this, job, plan, bounce, n] { job_done(job, plan, ok_status(), n, bounce); };
        if (!bounce || n == 0) return check(job.user, done);
        const auto copy_out = [this, job, plan, bounce, n, check, check_bounce, done] {
          TransferSpec copy;
          copy.src = bounce->slice(0, n);
          copy.dst = job.user.slice(0, n);
          copy.mode = TransferMode::local_copy;
          ops_.expect(env_.transfer(copy), [this, job, plan, bounce, check, check_bounce, done](Completion& c) {
            if (!c.status.ok()) return job_done(job, plan, c.status, 0, bounce);
            if (check_bounce) return done();
            check(job.user, done);
          });
        };
        if (check_bounce) return check(*bounce, copy_out);
        copy_out();
      },
      0, chunk_still_there(job));
}

proto::ReadChunk Client::read_request(const ChunkJob& job, const ChunkPlan& plan, Endpoint server,
                                      const MemHandle& landing) {
  proto::ReadChunk m;
  m.file_id = job.request->file_id;
  m.target = job.target;
  m.object_offset = job.object_offset;
  m.length = job.user.length;
  m.dst = landing;
  m.rail = proto::RailDesc{plan.client_nic, planner_.server_nic(plan.client_nic, server.node)};
  m.path = plan.path;
  // The server writes into `landing`: grant it the region, with the key a
  // one-sided transport needs (a stream one checks the grant on arrival).
  m.dst_keys = rdma_keys_for(env_, landing, plan.client_nic, server.node);
  return m;
}

void Client::write_chunk(ChunkJob job, const ChunkPlan& plan, Endpoint server) {
  // Copies the caller's bytes into this request's pinned bounce buffer, then then(bounce).
  auto to_bounce = [this, job, plan](std::function<void(MemHandle)> then) {
    Result<MemHandle> b = env_.alloc(MemKind::pinned, plan.bounce_numa, job.user.length);
    if (!b.ok()) return job_done(job, plan, b.status(), 0, std::nullopt);
    TransferSpec copy;
    copy.src = job.user;
    copy.dst = *b;
    copy.mode = TransferMode::local_copy;
    ops_.expect(env_.transfer(copy), [this, job, plan, bounce = *b, then](Completion& c) {
      if (!c.status.ok()) return job_done(job, plan, c.status, 0, bounce);
      then(bounce);
    });
  };
  const bool bounce_path = plan.path == proto::ChunkPath::bounce;
  if (bounce_path && job.user.kind == MemKind::gpu) {
    // GPU memory: the CRC32C over the bounce buffer the GPU's copy engine
    // filled (PCIe's link CRC protects that copy; reading the GPU bytes
    // again to checksum them would double the PCIe traffic).
    return to_bounce([this, job, plan, server](MemHandle bounce) {
      ops_.expect(env_.checksum(bounce), [this, job, plan, server, bounce](Completion& sum) {
        if (!sum.status.ok()) return job_done(job, plan, sum.status, 0, bounce);
        send_write(job, plan, server, bounce, bounce, sum.crc32c);
      });
    });
  }
  // The CRC32C of the caller's bytes, before any copy; the server checks it
  // over what it received.
  ops_.expect(env_.checksum(job.user), [this, job, plan, server, bounce_path, to_bounce](Completion& sum) {
    if (!sum.status.ok()) return job_done(job, plan, sum.status, 0, std::nullopt);
    const std::uint32_t crc = sum.crc32c;
    if (bounce_path) {
      return to_bounce(
          [this, job, plan, server, crc](MemHandle bounce) { send_write(job, plan, server, bounce, bounce, crc); });
    }
    Result<MemHandle> w = env_.open_window(job.user);
    if (!w.ok()) return job_done(job, plan, w.status(), 0, std::nullopt);
    send_write(job, plan, server, *w, std::nullopt, crc);
  });
}

void Client::send_write(ChunkJob job, const ChunkPlan& plan, Endpoint server, MemHandle source,
                        std::optional<MemHandle> bounce, std::uint32_t crc32c) {
  proto::WriteChunk m;
  m.file_id = job.request->file_id;
  m.target = job.target;
  m.object_offset = job.object_offset;
  m.length = source.length;
  m.src = source;
  m.rail = proto::RailDesc{plan.client_nic, planner_.server_nic(plan.client_nic, server.node)};
  m.crc32c = crc32c;
  m.sync = job.request->sync;
  // The server pulls every write with one RDMA READ (direct or from the
  // bounce buffer): carry the key so that it need not ask.
  m.src_keys = rdma_keys_for(env_, source, plan.client_nic, server.node);
  const TimeNs started = env_.now();
  rpc_.call(
      server, std::move(m),
      [this, job, plan, source, bounce, started](Result<proto::Message> r) {
        if (!bounce) env_.close_window(source);  // a late pull can no longer read the caller's range
        env_.metrics().sample("client.chunk_write_latency_ns", static_cast<double>(env_.now() - started));
        if (!r.ok()) {
          return job_done(job, plan, chunk_failed(job, r.status()), 0, bounce);
        }
        job_done(job, plan, ok_status(), job.user.length, bounce);
      },
      0, chunk_still_there(job));
}

void Client::job_done(const ChunkJob& job, const ChunkPlan& plan, const Status& status, std::uint64_t bytes,
                      std::optional<MemHandle> bounce) {
  if (bounce) env_.free(*bounce);
  planner_.release(plan);
  invariants::inflight_chunks(inflight_chunks_, -1, config_.max_inflight_chunks);
  --inflight_chunks_;
  if (!status.ok() && job.group != k_no_id &&
      (status.code() == StatusCode::timed_out || status.code() == StatusCode::unavailable)) {
    if (job.failovers < config_.mirror_failovers) return fail_over(job, status);
  }
  IoRequest& request = *job.request;
  if (!status.ok() && request.first_error.ok()) {
    request.first_error = status;
    if (job.failovers > 0) {
      request.first_error = error(status.code(), status.message() + " (after " + std::to_string(job.failovers) +
                                                     " failovers in buddy group " + std::to_string(job.group) + ")");
    }
  }
  request.bytes += bytes;
  env_.metrics().count(request.write ? "client.write_bytes" : "client.read_bytes", static_cast<double>(bytes));
  if (bytes > 0 && plan.client_nic != k_no_id) {
    // The bytes each of this node's NICs carried (the placed bound's client side: scenarios/runner/point_bound.hpp).
    env_.metrics().count(std::string(request.write ? "client.write_bytes.nic." : "client.read_bytes.nic.") +
                             std::to_string(env_.self().node) + "." + std::to_string(plan.client_nic),
                         static_cast<double>(bytes));
  }
  if (--request.remaining == 0) {
    if (request.first_error.ok()) {
      request.done(request.bytes);
    } else {
      request.done(request.first_error);
    }
  }
  pump();
}

void Client::fail_over(ChunkJob job, const Status& why) {
  env_.metrics().count("client.mirror_failovers", 1);
  env_.log(LogLevel::warn, "buddy group " + std::to_string(job.group) + ": chunk of file " +
                               std::to_string(job.request->file_id) + " at " + std::to_string(job.file_offset) +
                               " failed on target " + std::to_string(job.target) + " (" + why.to_string() +
                               "); refreshing maps to find its primary");
  const TargetId failed = job.target;
  const GroupId group = job.group;
  ++job.failovers;
  // Retries even if mgmt names no other primary (the primary may be back,
  // or the target's own maps were the stale ones).
  await_new_primary(group, failed, [this, job = std::move(job)](Status) mutable {
    queued_jobs_.push_front(std::move(job));
    pump();
  });
}

void Client::await_new_primary(GroupId group, TargetId failed, StatusFn then) {
  refresh_maps_until(
      [this, group, failed] { return primary_of(group) != failed && target_endpoint(primary_of(group)).valid(); },
      "a new primary of buddy group " + std::to_string(group), std::move(then));
}

}  // namespace sluice
