#include "core/services/meta_service.hpp"

#include <algorithm>
#include <set>
#include <span>

#include "core/namespace/fs_path.hpp"
#include "core/proto/codec.hpp"
#include "core/proto/xattr_names.hpp"
#include "core/services/invariants.hpp"
#include "core/services/wire_convert.hpp"

namespace sluice {
namespace {

proto::InodeReply inode_reply(RequestId rid, const Status& s) {
  proto::InodeReply r;
  r.request_id = rid;
  r.status = s.code();
  r.error = proto::clip_error_text(s.message());
  return r;
}

// The reply to a request that stored `inode`: it, or the store's error.
// (Extended attributes stay at the server: XattrReply carries them.)
proto::InodeReply stored_reply(RequestId rid, const Status& s, const proto::InodeDesc& inode) {
  proto::InodeReply r = inode_reply(rid, s);
  if (s.ok()) {
    r.inode = inode;
    r.inode.xattrs.clear();
  }
  return r;
}

// An entry that refers to the linked-inode table (see the top of meta_service.hpp).
bool is_linked(const proto::InodeDesc& entry) { return entry.type != proto::InodeType::dir && entry.nlink >= 2; }

// A record written before atime and ctime were kept reads them as its mtime.
void fill_times(proto::InodeDesc& inode) {
  if (inode.atime_ns == 0) inode.atime_ns = inode.mtime_ns;
  if (inode.ctime_ns == 0) inode.ctime_ns = inode.mtime_ns;
}

// A directory's inode as a stat shows it: the latest mtime and ctime of its
// records, and its link count 2 + the subdirectories its records count (a
// record keeps 2 + those of its shard; Lustre sums a striped directory's
// stripes alike). Without records (path_hash) the entry's own.
proto::InodeDesc merged_dir(proto::InodeDesc dir, const std::vector<proto::InodeDesc>& records) {
  std::uint64_t links = 2;
  for (const proto::InodeDesc& r : records) {
    dir.mtime_ns = std::max(dir.mtime_ns, r.mtime_ns);
    dir.ctime_ns = std::max(dir.ctime_ns, r.ctime_ns);
    links += std::max<std::uint32_t>(r.nlink, 2) - 2;
  }
  if (!records.empty()) dir.nlink = static_cast<std::uint32_t>(std::min<std::uint64_t>(links, UINT32_MAX));
  return dir;
}

// A SetAttr's own errors: unknown mask bits, a mode beyond 07777, the size
// of a symbolic link (its target's length).
Status check_set_attr(const proto::SetAttr& m, const proto::InodeDesc& inode) {
  if ((m.mask & ~proto::k_set_attr_known_mask) != 0) {
    return error(StatusCode::invalid_argument, "SetAttr of " + m.path + ": unknown mask bits " +
                                                   std::to_string(m.mask & ~proto::k_set_attr_known_mask));
  }
  if ((m.mask & proto::k_set_attr_mode) != 0 && (m.mode & ~07777u) != 0) {
    return error(StatusCode::invalid_argument,
                 "SetAttr of " + m.path + ": mode " + std::to_string(m.mode) + " has bits beyond 07777");
  }
  if ((m.mask & proto::k_set_attr_size) != 0 && inode.type == proto::InodeType::symlink) {
    return error(StatusCode::invalid_argument,
                 "SetAttr of " + m.path + ": a symbolic link's size is its target's length");
  }
  return ok_status();
}

// Linux relatime: a read at `at` moves the access time when it is not after
// the last modification or change, or is a day old (k_relatime_interval_ns).
bool note_access(proto::InodeDesc& inode, TimeNs at) {
  const bool stale = inode.atime_ns <= inode.mtime_ns || inode.atime_ns <= inode.ctime_ns ||
                     at - inode.atime_ns >= k_relatime_interval_ns;
  if (!stale || at <= inode.atime_ns) return false;
  inode.atime_ns = at;
  return true;
}
std::string linked_name(FileId id) { return std::to_string(id); }

proto::Ack ack(RequestId rid, const Status& s) {
  return proto::Ack{rid, s.code(), proto::clip_error_text(s.message())};
}

// Requests that may change the store (their replies are replicated to a mirror secondary).
bool is_mutating(const proto::Message& m) {
  if (const auto* d = std::get_if<proto::DetachDir>(&m)) return !d->check_only;
  if (const auto* t = std::get_if<proto::DirTimes>(&m)) return t->set_mtime;
  if (const auto* x = std::get_if<proto::Xattr>(&m))
    return x->op == proto::XattrOp::set || x->op == proto::XattrOp::remove;
  // A close after reads may move the atime (relatime), which a resend repeats harmlessly.
  if (const auto* a = std::get_if<proto::SetAttr>(&m)) return (a->mask & ~proto::k_set_attr_accessed) != 0;
  return std::holds_alternative<proto::Mkdir>(m) || std::holds_alternative<proto::Create>(m) ||
         std::holds_alternative<proto::Unlink>(m) || std::holds_alternative<proto::Rmdir>(m) ||
         std::holds_alternative<proto::Rename>(m) || std::holds_alternative<proto::AttachDir>(m) ||
         std::holds_alternative<proto::Symlink>(m) || std::holds_alternative<proto::Link>(m) ||
         std::holds_alternative<proto::Mknod>(m) || std::holds_alternative<proto::ReleaseOrphan>(m);
}

// Shared countdown for fan-out requests: calls done(first error) after n results.
struct FanIn {
  std::size_t remaining = 0;
  Status first_error;
  std::function<void(Status)> done;
  void arrive(const Status& s) {
    if (!s.ok() && first_error.ok()) first_error = s;
    if (--remaining == 0) done(first_error);
  }
};

}  // namespace

MetaService::MetaService(Env& env, MetaServiceConfig config, std::unique_ptr<MetaStore> store)
    : env_(env),
      config_(std::move(config)),
      units_(config_.op_units.value_or(meta_op_units_for(config_.stripe_flavor))),
      store_(std::move(store)),
      rpc_(env_, ops_, config_.rpc),
      mirror_rpc_(env_, ops_, config_.mirror.forward_rpc),
      replies_(config_.reply_cache_entries) {
  if (!store_ && config_.open_store) {
    Result<std::unique_ptr<MetaStore>> opened = config_.open_store();
    if (opened.ok()) {
      store_ = std::move(opened).value();
    } else {
      store_failure_ = opened.status();
    }
  }
  if (!store_) store_ = std::make_unique<InMemoryMetaStore>();
  if (config_.mirror.enabled) {
    auto recorder = std::make_unique<RecordingMetaStore>(std::move(store_));
    recorder_ = recorder.get();
    store_ = std::move(recorder);
    role_ = MirrorRole::unknown;
  }
}

void MetaService::crashed() {
  recorder_ = nullptr;
  store_.reset();
  store_failure_ = error(StatusCode::unavailable, name() + " crashed");  // nothing may use the store now
}

void MetaService::start() {
  if (!store_failure_.ok()) {
    env_.log(LogLevel::error,
             name() + ": cannot open the metadata store: " + store_failure_.to_string() + "; the shard stays offline");
    return;
  }
  load_kept_replies();
  if (Status s = validate(units_); !s.ok()) {
    env_.log(LogLevel::error, name() + ": " + s.message() + "; using the defaults of the stripe flavor");
    units_ = meta_op_units_for(config_.stripe_flavor);
  }
  // The root directory's record lives on the shards root_placement names.
  if (Result<DirPlacement> root = root_placement(config_.ns); root.ok()) {
    const auto shards = shards_for_listing(*root);
    const bool hosts_root = config_.ns.policy == MetaPolicy::path_hash ||
                            std::find(shards.begin(), shards.end(), config_.shard) != shards.end();
    if (hosts_root && !store_->get_dir("/").ok()) {
      proto::InodeDesc inode;
      inode.file_id = 1;  // the root's id is fixed; allocated ids start above it
      inode.type = proto::InodeType::dir;
      inode.mode = 0755;
      inode.owner_shard = root->owner_shard;
      inode.dir_layout = to_wire(*root);
      inode.mtime_ns = inode.atime_ns = inode.ctime_ns = env_.wall_ns();
      store_->put_dir("/", inode).ignore();  // the in-memory store cannot fail; RocksDB errors surface on use
    }
  } else {
    env_.log(LogLevel::error, "bad namespace configuration: " + root.status().to_string());
  }
  proto::RegisterMetaShard reg;
  reg.shard = config_.shard;
  reg.endpoint = env_.self();
  reg.incarnation = env_.rng().next_u64();
  reg.second = config_.mirror.enabled && config_.mirror.second;
  rpc_.call(config_.mgmt, std::move(reg), [this](Result<proto::Message> r) {
    if (!r.ok()) {
      env_.log(LogLevel::error, "registering shard failed: " + r.status().to_string());
      return;
    }
    registered_ = true;
    if (config_.mirror.enabled) mirror_fetch_maps();  // learn the role at once
  });
  if (config_.mirror.enabled) mirror_start();
  // Orphans outlive the server's run that kept them only as long as a
  // client holds them open: its renewals hold its opens again within the
  // recovery window, one lease (Lustre's recovery window, in which clients
  // replay their opens), and the orphans no client claimed go then. A
  // mirrored shard keeps its own: its secondary must not remove what the
  // primary's clients hold.
  if (config_.mirror.enabled || store_->list(k_orphans_dir, 0, 1).entries.empty()) return;
  if (config_.open_lease_ns <= 0) return remove_orphans();
  ops_.expect(env_.timer(config_.open_lease_ns), [this](Completion&) { remove_orphans(); });
}

void MetaService::remove_orphans() {
  std::uint64_t removed = 0, cookie = 0;
  for (bool eof = false; !eof;) {
    MetaListPage page = store_->list(k_orphans_dir, cookie, config_.readdir_page_max_entries);
    for (const auto& [key, inode] : page.entries) {
      if (open_files_.is_open(inode.file_id)) continue;  // a client renewed its open: its close removes it
      if (Status s = store_->remove_entry(k_orphans_dir, key); !s.ok()) {
        env_.log(LogLevel::warn, name() + ": orphan " + key + ": " + s.to_string());
        continue;
      }
      remove_chunks(inode);
      ++removed;
    }
    eof = page.eof;
    cookie = page.next_cookie;
  }
  if (removed == 0) return;
  env_.metrics().count("meta.orphans_removed_at_start", static_cast<double>(removed));
  env_.log(LogLevel::info, name() + ": removed " + std::to_string(removed) +
                               " orphans (files unlinked while open) its previous run kept and no client held again");
}

void MetaService::on_event(Event& event) {
  if (auto* c = std::get_if<Completion>(&event)) {
    ops_.dispatch(*c);
    return;
  }
  auto& d = std::get<Delivery>(event);
  if (mirror_rpc_.expects(d)) {
    mirror_rpc_.on_delivery(d);
    return;
  }
  if (rpc_.on_delivery(d)) return;
  handle(d.from, d.message);
}

void MetaService::handle(Endpoint from, proto::Message& message) {
  open_files_.heard(from, env_.now());  // a client holding opens renews its lease with every message
  if (const auto* renewal = std::get_if<proto::RenewOpens>(&message)) return renew_opens(from, *renewal);
  RequestId* rid = request_id_of(message);
  if (rid == nullptr) return;  // not a request (a heartbeat, say): nothing to answer
  const RequestId id = *rid;
  if (!store_failure_.ok()) {
    env_.send(from,
              proto::Ack{id, StatusCode::unavailable, name() + ": no metadata store: " + store_failure_.message()})
        .ignore();
    return;
  }
  if (role_ != MirrorRole::off && mirror_refuses(from, message)) return;
  const bool mutating = is_mutating(message);
  if (!mutating && role_ == MirrorRole::off && !std::holds_alternative<proto::MetaMirror>(message)) {
    // An idempotent request (stat, lookup, readdir) is executed again when
    // it is retried, as NFS's duplicate request cache keeps only
    // non-idempotent replies: keeping every stat's reply (and copying every
    // readdir page) was a sixth of a stat's cost (make bench-meta, perf).
    dispatch(from, message, [this, from](proto::Message reply) { env_.send(from, std::move(reply)).ignore(); });
    return;
  }
  const proto::Message* cached = nullptr;
  switch (replies_.check(from, id, &cached)) {
    case ReplyCache::Seen::in_progress:  // a resend of a request being executed: its reply will come
      // Said so, as the storage server does, so that the client waits with a
      // fresh timeout instead of counting the resend as unanswered.
      env_.metrics().count("meta.duplicate_in_progress", 1);
      env_.send(from,
                proto::Ack{id, StatusCode::in_progress, name() + " is still executing request " + std::to_string(id)})
          .ignore();
      return;
    case ReplyCache::Seen::answered: env_.send(from, *cached).ignore(); return;
    case ReplyCache::Seen::new_request: break;
  }
  replies_.begin(from, id);
  if (auto* m = std::get_if<proto::MetaMirror>(&message)) {
    return mirror_on_batch(from, *m,
                           [this, from, id](proto::Message reply) { send_reply(from, id, std::move(reply), false); });
  }
  dispatch(from, message, [this, from, id, mutating](proto::Message reply) {
    if (role_ == MirrorRole::off) return send_reply(from, id, std::move(reply), mutating);
    mirror_reply(from, id, std::move(reply), mutating);
  });
}

void MetaService::send_reply(Endpoint to, RequestId id, proto::Message reply, bool keep) {
  remember_reply(to, id, reply, keep);
  env_.send(to, std::move(reply)).ignore();  // a lost reply is recovered by the retry + reply cache
}

void MetaService::remember_reply(Endpoint to, RequestId id, const proto::Message& reply, bool keep) {
  replies_.answer(to, id, reply);
  if (!keep) return;
  const std::vector<std::byte> frame = proto::encode(reply);
  const KeptReply kept{next_kept_seq_, to, id, std::string(reinterpret_cast<const char*>(frame.data()), frame.size())};
  if (Status s = store_->keep_reply(kept); !s.ok()) {
    // The mutation's own write went to the same store; a retry after a restart may be executed again.
    env_.metrics().count("meta.replies_not_kept", 1);
    env_.log(LogLevel::warn, name() + ": cannot keep the reply to " + to.to_string() + " #" + std::to_string(id) +
                                 ": " + s.to_string());
    return;
  }
  ++next_kept_seq_;
  const std::size_t batch = std::max<std::size_t>(config_.kept_reply_prune_batch, 1);
  if (next_kept_seq_ - oldest_kept_seq_ >= config_.reply_cache_entries + batch) {
    oldest_kept_seq_ += batch;
    store_->drop_replies_before(oldest_kept_seq_).ignore();  // a failure shows on the store's next write
  }
  invariants::kept_replies(oldest_kept_seq_, next_kept_seq_, config_.reply_cache_entries + batch - 1);
}

void MetaService::load_kept_replies() {
  if (kept_loaded_) return;
  kept_loaded_ = true;
  const std::vector<KeptReply> kept = store_->kept_replies();
  std::size_t damaged = 0;
  for (const KeptReply& r : kept) {
    const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(r.frame.data()), r.frame.size());
    Result<proto::Message> reply = proto::decode(bytes);
    if (reply.ok()) {
      replies_.answer(r.client, r.request, *reply);
    } else {
      ++damaged;  // that request, if resent, is executed again
    }
  }
  if (!kept.empty()) {
    oldest_kept_seq_ = kept.front().seq;
    next_kept_seq_ = kept.back().seq + 1;
    env_.log(LogLevel::info, name() + ": " + std::to_string(kept.size() - damaged) +
                                 " replies kept from before the start answer resent requests" +
                                 (damaged > 0 ? " (" + std::to_string(damaged) + " damaged, ignored)" : ""));
  }
  if (damaged > 0) env_.metrics().count("meta.kept_replies_damaged", static_cast<double>(damaged));
}

void MetaService::dispatch(Endpoint from, proto::Message& message, Reply reply) {
  env_.metrics().count("meta.requests", 1);
  if (auto* m = std::get_if<proto::Mkdir>(&message)) return do_mkdir(*m, std::move(reply));
  if (auto* m = std::get_if<proto::Create>(&message)) return do_create(*m, from, std::move(reply));
  if (auto* m = std::get_if<proto::Lookup>(&message)) {
    return do_lookup(m->path, m->request_id, CostKind::meta_lookup, units_.lookup, std::move(reply));
  }
  if (auto* m = std::get_if<proto::Stat>(&message)) {
    return do_lookup(m->path, m->request_id, CostKind::meta_stat, units_.stat, std::move(reply), from, m->open_id);
  }
  if (auto* m = std::get_if<proto::Readdir>(&message)) return do_readdir(*m, std::move(reply));
  if (auto* m = std::get_if<proto::Unlink>(&message)) return do_unlink(*m, std::move(reply));
  if (auto* m = std::get_if<proto::Rmdir>(&message)) return do_rmdir(*m, std::move(reply));
  if (auto* m = std::get_if<proto::Rename>(&message)) return do_rename(*m, std::move(reply));
  if (auto* m = std::get_if<proto::SetAttr>(&message)) return do_setattr(*m, from, std::move(reply));
  if (auto* m = std::get_if<proto::Symlink>(&message)) return do_symlink(*m, std::move(reply));
  if (auto* m = std::get_if<proto::Link>(&message)) return do_link(*m, std::move(reply));
  if (auto* m = std::get_if<proto::Mknod>(&message)) return do_mknod(*m, std::move(reply));
  if (auto* m = std::get_if<proto::Xattr>(&message)) return do_xattr(*m, std::move(reply));
  if (auto* m = std::get_if<proto::ReleaseOrphan>(&message)) return do_release_orphan(*m, from, std::move(reply));
  if (auto* m = std::get_if<proto::AttachDir>(&message)) {
    reply(ack(m->request_id, store_->put_dir(m->path, m->inode)));
    return;
  }
  if (auto* m = std::get_if<proto::DirTimes>(&message)) {
    ops_.after_compute(env_, CostKind::meta_stat, units_.stat, [this, m = *m, reply](Completion&) {
      Result<proto::InodeDesc> record = dir_times_here(m);
      reply(stored_reply(m.request_id, record.status(), record.ok() ? *record : proto::InodeDesc{}));
    });
    return;
  }
  if (auto* m = std::get_if<proto::DetachDir>(&message)) {
    Status s = store_->get_dir(m->path).status();
    if (s.ok() && store_->entry_count(m->path) > 0) {
      s = error(StatusCode::not_empty,
                "directory " + m->path + " is not empty on shard " + std::to_string(config_.shard));
    }
    if (s.code() == StatusCode::not_found) s = ok_status();  // nothing to detach here
    if (s.ok() && !m->check_only) s = store_->remove_dir(m->path);
    if (s.code() == StatusCode::not_found) s = ok_status();
    reply(ack(m->request_id, s));
    return;
  }
  reply(ack(*request_id_of(message), error(StatusCode::invalid_argument,
                                           name() + " does not handle " + std::string(proto::message_name(message)))));
}

Status MetaService::check_owner(std::string_view parent, std::string_view name, DirPlacement* parent_placement) const {
  if (config_.ns.policy == MetaPolicy::path_hash) {
    const ShardId owner = path_hash_shard(join_path(parent, name), config_.ns.shard_count);
    if (owner != config_.shard) {
      return error(StatusCode::invalid_argument, "entry " + join_path(parent, name) + " belongs to shard " +
                                                     std::to_string(owner) + ", not " + std::to_string(config_.shard));
    }
    if (parent_placement != nullptr) {
      *parent_placement = root_placement(config_.ns).value();
    }
    return ok_status();
  }
  Result<proto::InodeDesc> dir = store_->get_dir(parent);
  if (!dir.ok()) {
    return error(StatusCode::not_found,
                 "directory " + std::string(parent) + " does not exist (shard " + std::to_string(config_.shard) + ")");
  }
  const DirPlacement placement = from_wire(dir->dir_layout, config_.ns.shard_count);
  const ShardId owner = shard_for_entry(placement, parent, name);
  if (owner != config_.shard) {
    return error(StatusCode::invalid_argument, "entry " + join_path(parent, name) + " belongs to shard " +
                                                   std::to_string(owner) + ", not " + std::to_string(config_.shard));
  }
  if (parent_placement != nullptr) *parent_placement = placement;
  return ok_status();
}

Result<FileId> MetaService::allocate_file_id() {
  // Ids are unique across shards: the shard in the top 16 bits, a durable
  // counter below (ids 0 and 1 are reserved: none and the root). The store
  // holds the end of the reserved range, written before any id of the range
  // is handed out, so ids after a restart start above every id handed out.
  if (!counter_loaded_) {
    counter_next_ = store_->load_counter();
    counter_reserved_ = counter_next_;
    counter_loaded_ = true;
  }
  if (counter_next_ >= counter_reserved_) {
    const std::uint64_t end = counter_next_ + std::max<std::uint64_t>(config_.file_id_range, 1);
    if (Status s = store_->store_counter(end); !s.ok()) {
      return error(s.code(), "reserving file ids on shard " + std::to_string(config_.shard) + ": " + s.message());
    }
    counter_reserved_ = end;
  }
  const std::uint64_t next = ++counter_next_;
  return (static_cast<FileId>(config_.shard + 1) << 48) | (next + 1);
}

Endpoint MetaService::shard_endpoint(ShardId shard) const {
  auto it = shards_.find(shard);
  return it == shards_.end() ? Endpoint{} : it->second;
}

void MetaService::fetch_maps(std::function<void(Status)> done) {
  maps_waiters_.push_back(std::move(done));
  if (maps_fetching_) return;
  maps_fetching_ = true;
  rpc_.call(config_.mgmt, proto::GetMaps{}, [this](Result<proto::Message> r) {
    maps_fetching_ = false;
    Status s = r.status();
    if (r.ok()) {
      auto& maps = std::get<proto::MapsReply>(r.value());
      targets_ = maps.targets;
      groups_ = maps.groups;
      shards_.clear();
      for (const auto& sh : maps.shards) shards_[sh.shard] = sh.endpoint;
      maps_fetched_ns_ = env_.now();
      if (role_ != MirrorRole::off) mirror_apply_maps(maps);
    }
    auto waiters = std::move(maps_waiters_);
    maps_waiters_.clear();
    for (auto& w : waiters) w(s);
  });
}

proto::InodeDesc MetaService::new_inode(FileId id, proto::InodeType type, std::uint32_t mode, std::uint32_t uid,
                                        std::uint32_t gid) {
  proto::InodeDesc inode;
  inode.file_id = id;
  inode.type = type;
  inode.mode = mode;
  inode.uid = uid;
  inode.gid = gid;
  inode.mtime_ns = inode.atime_ns = inode.ctime_ns = env_.wall_ns();
  inode.nlink = type == proto::InodeType::dir ? 2 : 1;
  return inode;
}

void MetaService::do_mkdir(const proto::Mkdir& m, Reply reply) {
  Result<PathSplit> split = split_path(m.path);
  if (!split.ok()) return reply(inode_reply(m.request_id, split.status()));
  const std::string parent(split->parent), name_(split->name);
  DirPlacement parent_placement;
  if (Status s = check_owner(parent, name_, &parent_placement); !s.ok()) return reply(inode_reply(m.request_id, s));
  if (store_->get_entry(parent, name_).ok()) {
    return reply(inode_reply(m.request_id, error(StatusCode::already_exists, m.path + " exists")));
  }
  ops_.after_compute(
      env_, CostKind::meta_mkdir, units_.mkdir, [this, m, parent, name_, parent_placement, reply](Completion&) {
        Result<DirPlacement> placement = place_new_directory(parent_placement, m.path, config_.ns, env_.rng());
        if (!placement.ok()) return reply(inode_reply(m.request_id, placement.status()));
        Result<FileId> id = allocate_file_id();
        if (!id.ok()) return reply(inode_reply(m.request_id, id.status()));
        proto::InodeDesc inode = new_inode(*id, proto::InodeType::dir, m.mode, m.uid, m.gid);
        inode.owner_shard = placement->owner_shard;
        inode.dir_layout = to_wire(*placement);
        auto link = [this, m, parent, name_, inode, reply](Status s) {
          if (s.ok()) s = store_->put_entry(parent, name_, inode);
          if (s.ok()) s = touch_dir(parent, +1);
          proto::InodeReply r = inode_reply(m.request_id, s);
          if (s.ok()) {
            r.inode = inode;
            env_.metrics().count("meta.mkdir_ops", 1);
          }
          reply(std::move(r));
        };
        if (config_.ns.policy == MetaPolicy::path_hash) return link(ok_status());
        // Directory records on every shard that will host the new directory's entries.
        std::vector<ShardId> hosts = shards_for_listing(*placement);
        auto fan = std::make_shared<FanIn>();
        fan->remaining = hosts.size();
        fan->done = link;
        auto attach_remote = [this, fan, path = m.path, inode](ShardId shard) {
          proto::AttachDir a;
          a.path = path;
          a.inode = inode;
          rpc_.call(shard_endpoint(shard), std::move(a), [fan](Result<proto::Message> r) { fan->arrive(r.status()); });
        };
        for (ShardId shard : hosts) {
          if (shard == config_.shard) {
            fan->arrive(store_->put_dir(m.path, inode));
          } else if (shard_endpoint(shard).valid()) {
            attach_remote(shard);
          } else {
            fetch_maps([this, fan, shard, attach_remote](Status s) {
              if (!s.ok()) return fan->arrive(s);
              if (!shard_endpoint(shard).valid()) {
                return fan->arrive(error(StatusCode::unavailable,
                                         "metadata shard " + std::to_string(shard) + " is not registered with mgmt"));
              }
              attach_remote(shard);
            });
          }
        }
      });
}

void MetaService::do_create(const proto::Create& m, Endpoint from, Reply reply) {
  // Maps without a target (or, for mirrored file data, without a buddy
  // group) are stale too: a mirrored server fetches maps as it registers (to
  // learn its role), which may be before the storage targets registered or
  // mgmt formed their groups; creating from those would answer no_space.
  const auto known = [this](TargetId t) {
    return std::any_of(targets_.begin(), targets_.end(), [t](const auto& d) { return d.target == t; });
  };
  const bool nothing_to_choose =
      config_.mirror_file_data ? std::none_of(groups_.begin(), groups_.end(),
                                              [&](const auto& g) { return known(g.primary) && known(g.secondary); })
                               : targets_.empty();
  const bool stale =
      maps_fetched_ns_ < 0 || env_.now() - maps_fetched_ns_ > config_.maps_max_age_ns || nothing_to_choose;
  if (!stale) return do_create_with_maps(m, from, std::move(reply));
  if (maps_waiters_.size() >= config_.max_waiting_for_maps) {
    return reply(inode_reply(m.request_id, error(StatusCode::again, "metadata server busy fetching maps")));
  }
  fetch_maps([this, m, from, reply](Status s) {
    if (!s.ok() && targets_.empty()) {
      return reply(inode_reply(m.request_id, error(s.code(), "no target maps from mgmt: " + s.message())));
    }
    do_create_with_maps(m, from, reply);
  });
}

std::vector<TargetInfo> MetaService::create_candidates() const {
  std::vector<TargetInfo> candidates;
  candidates.reserve(targets_.size());
  if (config_.mirror_file_data) {
    // One candidate per buddy group, as BeeGFS pools a group by its worse
    // member (target_info.hpp); a group whose primary is unknown is skipped.
    for (const auto& g : groups_) {
      auto primary =
          std::find_if(targets_.begin(), targets_.end(), [&](const auto& d) { return d.target == g.primary; });
      auto secondary =
          std::find_if(targets_.begin(), targets_.end(), [&](const auto& d) { return d.target == g.secondary; });
      if (primary == targets_.end() || secondary == targets_.end()) continue;
      TargetInfo group = from_wire(*primary);
      const TargetInfo other = from_wire(*secondary);
      group.id = g.group;
      group.capacity_bytes = std::min(group.capacity_bytes, other.capacity_bytes);
      group.free_bytes = std::min({group.free_bytes, other.free_bytes, group.capacity_bytes});
      candidates.push_back(group);
    }
  } else {
    for (const auto& t : targets_) candidates.push_back(from_wire(t));
  }
  return candidates;
}

void MetaService::do_create_with_maps(const proto::Create& m, Endpoint from, Reply reply) {
  Result<PathSplit> split = split_path(m.path);
  if (!split.ok()) return reply(inode_reply(m.request_id, split.status()));
  const std::string parent(split->parent), name_(split->name);
  if (Status s = check_owner(parent, name_, nullptr); !s.ok()) return reply(inode_reply(m.request_id, s));
  if (store_->get_entry(parent, name_).ok()) {
    return reply(inode_reply(m.request_id, error(StatusCode::already_exists, m.path + " exists")));
  }
  ops_.after_compute(env_, CostKind::meta_create, units_.create, [this, m, from, parent, name_, reply](Completion&) {
    // A concurrent create of the same name may have won while we computed.
    if (store_->get_entry(parent, name_).ok()) {
      return reply(inode_reply(m.request_id, error(StatusCode::already_exists, m.path + " exists")));
    }
    if (m.open_id != 0) {  // refused before the file is made: a create is all or nothing
      if (Status room = open_files_.room_for(from, m.open_id); !room.ok())
        return reply(inode_reply(m.request_id, room));
    }
    const std::vector<TargetInfo> candidates = create_candidates();
    const std::uint32_t count = m.stripe_count != 0 ? m.stripe_count : config_.default_stripe_count;
    const std::uint64_t chunk = m.chunk_bytes != 0 ? m.chunk_bytes : config_.default_chunk_bytes;
    const proto::ChooserKind kind =
        m.chooser != proto::ChooserKind::server_default ? m.chooser : config_.default_chooser;
    const ChooserKind chooser_kind = from_wire(kind);
    auto chooser = choosers_.find(chooser_kind);
    if (chooser == choosers_.end()) {
      TargetChooserConfig cc;
      cc.kind = chooser_kind;
      Result<TargetChooser> made = TargetChooser::make(cc);
      if (!made.ok()) return reply(inode_reply(m.request_id, made.status()));
      chooser = choosers_.emplace(chooser_kind, std::move(made).value()).first;
    }
    ChooseRequest request;
    request.stripe_count = count;
    request.buddy_groups = config_.mirror_file_data;
    Result<std::vector<TargetId>> chosen = chooser->second.choose(candidates, request, env_.rng());
    if (!chosen.ok()) {
      return reply(inode_reply(m.request_id, error(chosen.status().code(), "choosing targets for " + m.path + ": " +
                                                                               chosen.status().message())));
    }
    Result<StripePattern> pattern = config_.mirror_file_data
                                        ? StripePattern::buddy_mirror(chunk, std::move(chosen).value())
                                        : StripePattern::raid0(config_.stripe_flavor, chunk, std::move(chosen).value());
    if (!pattern.ok()) return reply(inode_reply(m.request_id, pattern.status()));
    Result<FileId> id = allocate_file_id();
    if (!id.ok()) return reply(inode_reply(m.request_id, id.status()));
    proto::InodeDesc inode = new_inode(*id, proto::InodeType::file, m.mode, m.uid, m.gid);
    inode.owner_shard = config_.shard;
    inode.stripe = to_wire(*pattern);
    Status s = store_->put_entry(parent, name_, inode);
    if (s.ok()) s = touch_dir(parent);
    if (s.ok()) env_.metrics().count("meta.create_ops", 1);
    if (s.ok()) s = hold_open(from, m.open_id, inode);  // room_for above: it holds
    reply(stored_reply(m.request_id, s, inode));
  });
}

void MetaService::do_lookup(std::string_view path_in, RequestId rid, CostKind cost, std::uint32_t units, Reply reply,
                            Endpoint from, std::uint64_t open_id) {
  const std::string path(path_in);
  if (Status s = validate_path(path); !s.ok()) return reply(inode_reply(rid, s));
  ops_.after_compute(env_, cost, units, [this, path, rid, reply, from, open_id](Completion&) {
    if (path == "/") {
      Result<proto::InodeDesc> root = store_->get_dir("/");
      if (!root.ok()) return reply(inode_reply(rid, root.status()));
      proto::InodeDesc inode = resolve(*root).value();  // a directory is its own record
      inode.entries = store_->entry_count("/");
      return reply_stat(path, rid, std::move(inode), reply);
    }
    Result<PathSplit> split = split_path(path);
    const std::string parent(split->parent), name_(split->name);
    if (Status s = check_owner(parent, name_, nullptr); !s.ok()) return reply(inode_reply(rid, s));
    Result<proto::InodeDesc> entry = store_->get_entry(parent, name_);
    if (!entry.ok()) return reply(inode_reply(rid, error(StatusCode::not_found, "no such file or directory: " + path)));
    Result<proto::InodeDesc> inode = resolve(*entry);
    if (!inode.ok()) return reply(inode_reply(rid, inode.status()));
    if (Status s = hold_open(from, open_id, *inode); !s.ok()) return reply(inode_reply(rid, s));
    reply_stat(path, rid, std::move(inode).value(), reply);
  });
}

Status MetaService::hold_open(Endpoint from, std::uint64_t open_id, const proto::InodeDesc& inode) {
  if (open_id == 0 || inode.type != proto::InodeType::file) return ok_status();
  const Status s = open_files_.open(from, open_id, inode.file_id, env_.now());
  if (!s.ok()) return s;
  env_.metrics().count("meta.opens_held", 1);
  arm_lease_check();
  return s;
}

void MetaService::renew_opens(Endpoint from, const proto::RenewOpens& m) {
  if (!store_failure_.ok() || role_ == MirrorRole::secondary || role_ == MirrorRole::none) return;
  std::uint64_t again = 0;
  for (const proto::HeldOpenDesc& open : m.opens) {
    if (open.open_id == 0 || open_files_.held(from, open.open_id) == open.file_id) continue;
    if (open_files_.open(from, open.open_id, open.file_id, env_.now()).ok()) ++again;
  }
  if (again > 0) {
    // Opens this server had lost: a restart, a switchover, or a lease that
    // ended while the client was cut off.
    env_.metrics().count("meta.opens_held_again", static_cast<double>(again));
    arm_lease_check();
  }
}

void MetaService::arm_lease_check() {
  if (lease_check_armed_ || config_.open_lease_ns <= 0) return;
  lease_check_armed_ = true;
  const TimeNs every = std::max<TimeNs>(1, config_.open_lease_ns / k_open_lease_checks);
  ops_.expect(env_.timer(every), [this](Completion&) {
    lease_check_armed_ = false;
    expire_opens();
  });
}

void MetaService::expire_opens() {
  const OpenFiles::Expired gone = open_files_.expire(env_.now() - config_.open_lease_ns);
  std::uint64_t released = 0;
  for (FileId file : gone.unheld) {
    if (remove_orphan(file).ok()) ++released;  // not_found: the file was not an orphan
  }
  for (const Endpoint& client : gone.clients) {
    env_.log(LogLevel::warn, name() + ": client " + client.to_string() + " not heard for " +
                                 std::to_string(config_.open_lease_ns / k_ns_per_ms) + " ms: its opens are let go");
  }
  if (gone.opens > 0) {
    env_.metrics().count("meta.opens_expired", static_cast<double>(gone.opens));
    env_.metrics().count("meta.orphans_released_by_lease", static_cast<double>(released));
  }
  if (open_files_.size() > 0) arm_lease_check();
}

void MetaService::reply_stat(const std::string& path, RequestId rid, proto::InodeDesc inode, const Reply& reply) {
  env_.metrics().count("meta.stat_ops", 1);
  if (inode.type != proto::InodeType::dir) return reply(stored_reply(rid, ok_status(), inode));
  merge_dir_times(path, std::move(inode),
                  [rid, reply](proto::InodeDesc merged) { reply(stored_reply(rid, ok_status(), merged)); });
}

void MetaService::do_readdir(const proto::Readdir& m, Reply reply) {
  auto fail = [&](const Status& s) {
    proto::ReaddirReply r;
    r.request_id = m.request_id;
    r.status = s.code();
    r.error = proto::clip_error_text(s.message());
    reply(std::move(r));
  };
  if (Status s = validate_path(m.path); !s.ok()) return fail(s);
  if (config_.ns.policy != MetaPolicy::path_hash && !store_->get_dir(m.path).ok()) {
    return fail(error(StatusCode::not_found,
                      "directory " + m.path + " has no record on shard " + std::to_string(config_.shard)));
  }
  const std::uint32_t max = std::clamp<std::uint32_t>(m.max_entries, 1, config_.readdir_page_max_entries);
  MetaListPage page = store_->list(m.path, m.cookie, max);
  const std::uint64_t listed = std::max<std::size_t>(page.entries.size(), 1);
  ops_.after_compute(env_, CostKind::meta_readdir_entry, units_.readdir_entry * listed,
                     [this, m, page = std::move(page), reply](Completion&) {
                       proto::ReaddirReply r;
                       r.request_id = m.request_id;
                       r.eof = page.eof;
                       r.next_cookie = page.next_cookie;
                       r.entries.reserve(page.entries.size());
                       for (const auto& [entry_name, inode] : page.entries) {
                         proto::DirEntryDesc e;
                         e.name = entry_name;
                         e.type = inode.type;
                         e.file_id = inode.file_id;
                         if (m.with_attrs) {
                           const Result<proto::InodeDesc> named = resolve(inode);  // a hard link's are its record's
                           const proto::InodeDesc& a = named.ok() ? *named : inode;
                           e.size_bytes = a.size_bytes;
                           r.attrs.push_back(proto::EntryAttrs{a.mode, a.uid, a.gid, a.nlink, a.mtime_ns, a.atime_ns,
                                                               a.ctime_ns, a.rdev, a.stripe.chunk_bytes});
                         }
                         r.entries.push_back(std::move(e));
                       }
                       env_.metrics().count("meta.readdir_entries", static_cast<double>(r.entries.size()));
                       reply(std::move(r));
                     });
}

void MetaService::do_unlink(const proto::Unlink& m, Reply reply) {
  Result<PathSplit> split = split_path(m.path);
  if (!split.ok()) return reply(ack(m.request_id, split.status()));
  const std::string parent(split->parent), name_(split->name);
  if (Status s = check_owner(parent, name_, nullptr); !s.ok()) return reply(ack(m.request_id, s));
  ops_.after_compute(env_, CostKind::meta_unlink, units_.unlink, [this, m, parent, name_, reply](Completion&) {
    Result<proto::InodeDesc> entry = store_->get_entry(parent, name_);
    if (!entry.ok()) return reply(ack(m.request_id, error(StatusCode::not_found, "no such file: " + m.path)));
    if (entry->type == proto::InodeType::dir) {
      return reply(ack(m.request_id, error(StatusCode::is_a_directory, m.path + " is a directory (use rmdir)")));
    }
    Status s = store_->remove_entry(parent, name_);
    if (s.ok()) s = touch_dir(parent);
    if (s.ok()) {
      env_.metrics().count("meta.unlink_ops", 1);
      s = drop_name(*entry, m.keep_open);
    }
    reply(ack(m.request_id, s));
  });
}

void MetaService::remove_chunks(const proto::InodeDesc& inode) {
  auto ask = [this, inode]() {
    std::map<Endpoint, std::vector<std::uint32_t>> by_server;
    for (std::uint32_t id : inode.stripe.targets) {
      // A buddy-mirrored file's stripe lists groups: the primary removes and forwards.
      std::uint32_t t = id;
      if (inode.stripe.pattern == proto::StripePattern::buddy_mirror) {
        auto g = std::find_if(groups_.begin(), groups_.end(), [id](const auto& d) { return d.group == id; });
        t = g == groups_.end() ? k_no_id : g->primary;
      }
      auto it = std::find_if(targets_.begin(), targets_.end(), [t](const auto& d) { return d.target == t; });
      if (it == targets_.end()) {
        env_.metrics().count("meta.orphaned_unlinks", 1);
        continue;
      }
      by_server[it->endpoint].push_back(t);
    }
    for (auto& [ep, list] : by_server) {
      proto::RemoveChunks rc;
      rc.file_id = inode.file_id;
      rc.targets = std::move(list);
      rpc_.call(ep, std::move(rc), [this, file = inode.file_id](Result<proto::Message> r) {
        if (!r.ok()) {
          env_.metrics().count("meta.orphaned_unlinks", 1);
          env_.log(LogLevel::warn, "removing chunks of file " + std::to_string(file) + ": " + r.status().to_string());
        }
      });
    }
  };
  // A buddy-mirrored file's removal goes to each group's current primary: with
  // maps older than maps_max_age_ns a switchover may have moved it.
  const bool stale = inode.stripe.pattern == proto::StripePattern::buddy_mirror &&
                     (maps_fetched_ns_ < 0 || env_.now() - maps_fetched_ns_ > config_.maps_max_age_ns);
  if (targets_.empty() || stale) {
    fetch_maps([ask](Status) { ask(); });
  } else {
    ask();
  }
}

void MetaService::do_rmdir(const proto::Rmdir& m, Reply reply) {
  Result<PathSplit> split = split_path(m.path);
  if (!split.ok()) return reply(ack(m.request_id, split.status()));
  const std::string parent(split->parent), name_(split->name);
  if (Status s = check_owner(parent, name_, nullptr); !s.ok()) return reply(ack(m.request_id, s));
  Result<proto::InodeDesc> entry = store_->get_entry(parent, name_);
  if (!entry.ok()) return reply(ack(m.request_id, error(StatusCode::not_found, "no such directory: " + m.path)));
  if (entry->type != proto::InodeType::dir) {
    return reply(ack(m.request_id, error(StatusCode::not_a_directory, m.path + " is not a directory")));
  }
  std::vector<ShardId> hosts;
  if (config_.ns.policy == MetaPolicy::path_hash) {
    for (ShardId s = 0; s < config_.ns.shard_count; ++s) hosts.push_back(s);
  } else {
    hosts = shards_for_listing(from_wire(entry->dir_layout, config_.ns.shard_count));
  }
  // Phase 1 checks emptiness everywhere; phase 2 detaches the records, then the entry goes.
  auto run_phase = [this, hosts, path = m.path](bool check_only, std::function<void(Status)> done) {
    auto fan = std::make_shared<FanIn>();
    fan->remaining = hosts.size();
    fan->done = std::move(done);
    for (ShardId shard : hosts) {
      proto::DetachDir d;
      d.path = path;
      d.check_only = check_only;
      if (shard == config_.shard) {
        proto::Message msg = d;
        dispatch(env_.self(), msg, [fan](proto::Message r) { fan->arrive(reply_status(r)); });
      } else if (!shard_endpoint(shard).valid()) {
        fan->arrive(error(StatusCode::unavailable, "metadata shard " + std::to_string(shard) + " unknown"));
      } else {
        rpc_.call(shard_endpoint(shard), std::move(d), [fan](Result<proto::Message> r) { fan->arrive(r.status()); });
      }
    }
  };
  auto go = [this, m, parent, name_, reply, run_phase](Status maps) {
    if (!maps.ok()) return reply(ack(m.request_id, maps));
    run_phase(true, [this, m, parent, name_, reply, run_phase](Status empty) {
      if (!empty.ok()) return reply(ack(m.request_id, empty));
      run_phase(false, [this, m, parent, name_, reply](Status detached) {
        if (detached.ok()) detached = store_->remove_entry(parent, name_);
        if (detached.ok()) detached = touch_dir(parent, -1);
        reply(ack(m.request_id, detached));
      });
    });
  };
  const bool need_maps = std::any_of(hosts.begin(), hosts.end(),
                                     [this](ShardId s) { return s != config_.shard && !shard_endpoint(s).valid(); });
  ops_.after_compute(env_, CostKind::meta_unlink, units_.unlink, [this, need_maps, go](Completion&) {
    if (need_maps) {
      fetch_maps(go);
    } else {
      go(ok_status());
    }
  });
}

Result<MetaService::TwoNames> MetaService::two_names(const std::string& from, const std::string& to,
                                                     const std::string& across_shards) const {
  Result<PathSplit> a = split_path(from);
  if (!a.ok()) return a.status();
  Result<PathSplit> b = split_path(to);
  if (!b.ok()) return b.status();
  TwoNames names{std::string(a->parent), std::string(a->name), std::string(b->parent), std::string(b->name)};
  if (Status s = check_owner(names.from_parent, names.from_name, nullptr); !s.ok()) return s;
  if (Status s = check_owner(names.to_parent, names.to_name, nullptr); !s.ok()) {
    return error(StatusCode::invalid_argument, across_shards + ": " + s.message());
  }
  return names;
}

void MetaService::do_rename(const proto::Rename& m, Reply reply) {
  Result<TwoNames> names = two_names(m.from, m.to, "rename across metadata shards is not supported");
  if (!names.ok()) return reply(ack(m.request_id, names.status()));
  ops_.after_compute(env_, CostKind::meta_rename, units_.rename,
                     [this, m, n = std::move(names).value(), reply](Completion&) {
                       Result<proto::InodeDesc> entry = store_->get_entry(n.from_parent, n.from_name);
                       if (!entry.ok())
                         return reply(ack(m.request_id, error(StatusCode::not_found, "no such file: " + m.from)));
                       if (entry->type == proto::InodeType::dir) return rename_dir(m, n, reply);
                       Result<proto::InodeDesc> existing = store_->get_entry(n.to_parent, n.to_name);
                       if (existing.ok()) {
                         if (existing->type == proto::InodeType::dir) {
                           return reply(ack(m.request_id, error(StatusCode::is_a_directory, m.to + " is a directory")));
                         }
                         // POSIX: two names of one inode stay as they are.
                         if (existing->file_id == entry->file_id) return reply(ack(m.request_id, ok_status()));
                       }
                       // The moved inode's ctime changes (as Linux file systems set it); a linked one's in its record.
                       proto::InodeDesc moved = *entry;
                       Status s = ok_status();
                       if (is_linked(*entry)) {
                         Result<proto::InodeDesc> record = resolve(*entry);
                         s = record.status();
                         if (s.ok()) {
                           changed(*record);
                           s = put_inode(n.from_parent, n.from_name, *entry, *record);
                         }
                       } else {
                         changed(moved);
                       }
                       if (s.ok()) s = store_->put_entry(n.to_parent, n.to_name, moved);
                       if (s.ok()) s = store_->remove_entry(n.from_parent, n.from_name);
                       if (s.ok() && existing.ok())
                         s = drop_name(*existing, m.keep_open);  // POSIX rename replaces the target
                       if (s.ok()) s = touch_dir(n.from_parent);
                       if (s.ok() && n.to_parent != n.from_parent) s = touch_dir(n.to_parent);
                       if (s.ok()) env_.metrics().count("meta.rename_ops", 1);
                       reply(ack(m.request_id, s));
                     });
}

void MetaService::do_setattr(const proto::SetAttr& m, Endpoint from, Reply reply) {
  const bool closes = (m.mask & proto::k_set_attr_close) != 0;
  if (closes) {  // the open goes with the reply, after the change the close records
    reply = [this, from, open_id = m.open_id, reply = std::move(reply)](proto::Message r) {
      open_files_.close(from, open_id);
      reply(std::move(r));
    };
  }
  Result<PathSplit> split = split_path(m.path);
  if (!split.ok()) return reply(inode_reply(m.request_id, split.status()));
  const std::string parent(split->parent), name_(split->name);
  if (Status s = check_owner(parent, name_, nullptr); !s.ok()) return reply(inode_reply(m.request_id, s));
  ops_.after_compute(
      env_, CostKind::meta_setattr, units_.setattr, [this, m, from, closes, parent, name_, reply](Completion&) {
        Result<proto::InodeDesc> entry = store_->get_entry(parent, name_);
        Result<proto::InodeDesc> resolved = entry.ok() ? resolve(*entry) : entry;
        if (closes) {
          const std::optional<FileId> held = open_files_.held(from, m.open_id);
          if (held && (!resolved.ok() || resolved->file_id != *held)) return close_unnamed(m, from, *held, reply);
        }
        if (!entry.ok())
          return reply(inode_reply(m.request_id, error(StatusCode::not_found, "no such file: " + m.path)));
        if (!resolved.ok()) return reply(inode_reply(m.request_id, resolved.status()));
        if ((m.mask & ~proto::k_set_attr_close) == 0) {  // a close that notes nothing: no store write
          env_.metrics().count("meta.close_ops", 1);
          proto::InodeReply r = inode_reply(m.request_id, ok_status());
          r.inode = *resolved;
          return reply(std::move(r));
        }
        if (Status s = check_set_attr(m, *resolved); !s.ok()) return reply(inode_reply(m.request_id, s));
        proto::InodeDesc inode = *resolved;
        if ((m.mask & ~(proto::k_set_attr_accessed | proto::k_set_attr_close)) == 0) {  // a close after reads
          return close_after_reads(m, parent, name_, *entry, inode, reply);
        }
        if ((m.mask & proto::k_set_attr_mode) != 0) inode.mode = m.mode;
        if ((m.mask & proto::k_set_attr_uid) != 0) inode.uid = m.uid;
        if ((m.mask & proto::k_set_attr_gid) != 0) inode.gid = m.gid;
        if ((m.mask & proto::k_set_attr_size) != 0) inode.size_bytes = m.size_bytes;
        if ((m.mask & proto::k_set_attr_mtime) != 0) inode.mtime_ns = m.mtime_ns;
        if ((m.mask & proto::k_set_attr_atime) != 0) inode.atime_ns = m.atime_ns;
        if ((m.mask & proto::k_set_attr_accessed) != 0) note_access(inode, m.atime_ns);
        if ((m.mask & proto::k_set_attr_written) == 0) {
          changed(inode);
        } else if ((m.mask & proto::k_set_attr_mtime) != 0) {
          inode.ctime_ns = std::max(inode.ctime_ns, m.mtime_ns);  // the writes' time, not the record's
        }
        const Status s = put_inode(parent, name_, *entry, inode);
        if (!s.ok() || inode.type != proto::InodeType::dir) return reply(stored_reply(m.request_id, s, inode));
        // A directory answers with its records' times merged; a new mtime goes to its records too.
        proto::DirTimes ask;
        ask.path = m.path;
        ask.set_mtime = (m.mask & proto::k_set_attr_mtime) != 0;
        ask.mtime_ns = m.mtime_ns;
        visit_dir_records(inode, ask,
                          [rid = m.request_id, inode, reply](std::vector<proto::InodeDesc> records, Status st) {
                            reply(stored_reply(rid, st, merged_dir(inode, records)));
                          });
      });
}

void MetaService::close_after_reads(const proto::SetAttr& m, const std::string& parent, const std::string& name_,
                                    const proto::InodeDesc& entry, proto::InodeDesc inode, const Reply& reply) {
  env_.metrics().count("meta.close_ops", 1);
  if (inode.type != proto::InodeType::dir) {
    const Status s = note_access(inode, m.atime_ns) ? put_inode(parent, name_, entry, inode) : ok_status();
    return reply(stored_reply(m.request_id, s, inode));
  }
  // A listed directory: relatime weighs its entries' changes, which its
  // records hold (on other shards too), so against its merged times.
  merge_dir_times(m.path, inode, [this, m, parent, name_, reply](proto::InodeDesc merged) {
    if (!note_access(merged, m.atime_ns)) return reply(stored_reply(m.request_id, ok_status(), merged));
    Result<proto::InodeDesc> now = store_->get_entry(parent, name_);
    if (!now.ok() || now->type != proto::InodeType::dir) {
      return reply(inode_reply(m.request_id, error(StatusCode::not_found, "no such directory: " + m.path)));
    }
    proto::InodeDesc named = *now;
    named.atime_ns = std::max(named.atime_ns, merged.atime_ns);
    reply(stored_reply(m.request_id, put_inode(parent, name_, *now, named), merged));
  });
}

void MetaService::close_unnamed(const proto::SetAttr& m, Endpoint from, FileId file, const Reply& reply) {
  open_files_.close(from, m.open_id);
  env_.metrics().count("meta.close_ops", 1);
  Result<proto::InodeDesc> orphan = store_->get_entry(k_orphans_dir, std::to_string(file));
  if (!orphan.ok()) {
    return reply(inode_reply(
        m.request_id, error(StatusCode::not_found, "the file open as " + m.path + " is no longer there (renamed)")));
  }
  const Status s = open_files_.is_open(file) ? ok_status() : remove_orphan(file);
  reply(stored_reply(m.request_id, s, *orphan));
}

void MetaService::do_symlink(const proto::Symlink& m, Reply reply) {
  Result<PathSplit> split = split_path(m.path);
  if (!split.ok()) return reply(inode_reply(m.request_id, split.status()));
  if (m.target.empty() || m.target.size() > proto::k_max_symlink_target_bytes ||
      m.target.find('\0') != std::string::npos) {
    return reply(inode_reply(
        m.request_id, error(StatusCode::invalid_argument, "symlink " + m.path + ": a target is 1 to " +
                                                              std::to_string(proto::k_max_symlink_target_bytes) +
                                                              " bytes without NUL (k_max_symlink_target_bytes), got " +
                                                              std::to_string(m.target.size()) + " bytes")));
  }
  put_new_inode(
      m.request_id, m.path, std::string(split->parent), std::string(split->name), "meta.symlink_ops",
      [&m](proto::InodeDesc& inode) {
        inode.type = proto::InodeType::symlink;
        inode.mode = 0777;
        inode.uid = m.uid;
        inode.gid = m.gid;
        inode.size_bytes = m.target.size();  // POSIX lstat: a link's size is its target's length
        inode.symlink_target = m.target;
      },
      std::move(reply));
}

void MetaService::do_mknod(const proto::Mknod& m, Reply reply) {
  Result<PathSplit> split = split_path(m.path);
  if (!split.ok()) return reply(inode_reply(m.request_id, split.status()));
  if (!proto::is_special_file(m.type)) {
    return reply(inode_reply(
        m.request_id,
        error(StatusCode::invalid_argument, "mknod " + m.path + ": type " + std::string(proto::to_string(m.type)) +
                                                " is not a special file (fifo, char_device, block_device, "
                                                "socket; files, directories and links have requests of their own)")));
  }
  put_new_inode(
      m.request_id, m.path, std::string(split->parent), std::string(split->name), "meta.mknod_ops",
      [&m](proto::InodeDesc& inode) {
        inode.type = m.type;
        inode.mode = m.mode & 07777u;
        inode.uid = m.uid;
        inode.gid = m.gid;
        if (m.type == proto::InodeType::char_device || m.type == proto::InodeType::block_device) inode.rdev = m.rdev;
      },
      std::move(reply));
}

void MetaService::put_new_inode(RequestId rid, const std::string& path, std::string parent, std::string name_,
                                const char* metric, const std::function<void(proto::InodeDesc&)>& fill, Reply reply) {
  if (Status s = check_owner(parent, name_, nullptr); !s.ok()) return reply(inode_reply(rid, s));
  // Filled now (the request's fields), stored after the create's cost.
  proto::InodeDesc made;
  fill(made);
  ops_.after_compute(env_, CostKind::meta_create, units_.create,
                     [this, rid, path, parent, name_, metric, made, reply](Completion&) {
                       if (store_->get_entry(parent, name_).ok()) {
                         return reply(inode_reply(rid, error(StatusCode::already_exists, path + " exists")));
                       }
                       Result<FileId> id = allocate_file_id();
                       if (!id.ok()) return reply(inode_reply(rid, id.status()));
                       proto::InodeDesc inode = new_inode(*id, made.type, made.mode, made.uid, made.gid);
                       inode.size_bytes = made.size_bytes;
                       inode.symlink_target = made.symlink_target;
                       inode.rdev = made.rdev;
                       inode.owner_shard = config_.shard;
                       Status s = store_->put_entry(parent, name_, inode);
                       if (s.ok()) s = touch_dir(parent);
                       if (s.ok()) env_.metrics().count(metric, 1);
                       reply(stored_reply(rid, s, inode));
                     });
}

void MetaService::do_link(const proto::Link& m, Reply reply) {
  Result<TwoNames> names = two_names(m.from, m.to,
                                     "hard link " + m.to + " of " + m.from + ": both names must be on metadata shard " +
                                         std::to_string(config_.shard) + " (links across shards are not supported)");
  if (!names.ok()) return reply(inode_reply(m.request_id, names.status()));
  ops_.after_compute(
      env_, CostKind::meta_create, units_.create, [this, m, n = std::move(names).value(), reply](Completion&) {
        Result<proto::InodeDesc> entry = store_->get_entry(n.from_parent, n.from_name);
        if (!entry.ok())
          return reply(inode_reply(m.request_id, error(StatusCode::not_found, "no such file: " + m.from)));
        if (entry->type == proto::InodeType::dir) {
          return reply(inode_reply(m.request_id, error(StatusCode::is_a_directory,
                                                       "hard link of directory " + m.from + " is not permitted")));
        }
        if (store_->get_entry(n.to_parent, n.to_name).ok()) {
          return reply(inode_reply(m.request_id, error(StatusCode::already_exists, m.to + " exists")));
        }
        Result<proto::InodeDesc> inode = resolve(*entry);
        if (!inode.ok()) return reply(inode_reply(m.request_id, inode.status()));
        if (inode->nlink >= config_.max_links) {
          return reply(inode_reply(
              m.request_id, error(StatusCode::invalid_argument, m.from + " has " + std::to_string(inode->nlink) +
                                                                    " names, the most a file may have (max_links)")));
        }
        ++inode->nlink;
        changed(*inode);
        // The record first: a crash before the names change leaves an unused record, never a reference without one.
        Status s = store_->put_entry(k_linked_inodes_dir, linked_name(inode->file_id), *inode);
        if (s.ok() && !is_linked(*entry)) s = store_->put_entry(n.from_parent, n.from_name, *inode);
        if (s.ok()) s = store_->put_entry(n.to_parent, n.to_name, *inode);
        if (s.ok()) s = touch_dir(n.to_parent);
        if (s.ok()) env_.metrics().count("meta.link_ops", 1);
        reply(stored_reply(m.request_id, s, *inode));
      });
}

Result<proto::InodeDesc> MetaService::resolve(const proto::InodeDesc& entry) const {
  if (!is_linked(entry)) {
    proto::InodeDesc inode = entry;
    if (inode.nlink == 0) inode.nlink = inode.type == proto::InodeType::dir ? 2 : 1;
    fill_times(inode);
    return inode;
  }
  Result<proto::InodeDesc> record = store_->get_entry(k_linked_inodes_dir, linked_name(entry.file_id));
  if (record.ok()) fill_times(*record);
  if (!record.ok()) {
    return error(StatusCode::corrupt, "inode " + std::to_string(entry.file_id) +
                                          " has hard links but no record in the linked-inode table of shard " +
                                          std::to_string(config_.shard) + ": " + record.status().message());
  }
  return record;
}

Status MetaService::put_inode(std::string_view parent, std::string_view name, const proto::InodeDesc& entry,
                              const proto::InodeDesc& inode) {
  if (is_linked(entry)) return store_->put_entry(k_linked_inodes_dir, linked_name(entry.file_id), inode);
  return store_->put_entry(parent, name, inode);
}

Status MetaService::drop_name(const proto::InodeDesc& entry, bool keep_open) {
  if (!is_linked(entry)) return drop_inode(entry, keep_open);
  Result<proto::InodeDesc> inode = resolve(entry);
  if (!inode.ok()) return inode.status();
  const std::string key = linked_name(entry.file_id);
  if (inode->nlink > 1) {
    --inode->nlink;
    changed(*inode);
    return store_->put_entry(k_linked_inodes_dir, key, *inode);
  }
  Status s = store_->remove_entry(k_linked_inodes_dir, key);
  if (s.ok()) s = drop_inode(*inode, keep_open);
  return s;
}

Status MetaService::drop_inode(const proto::InodeDesc& inode, bool keep_open) {
  if (inode.type != proto::InodeType::file) return ok_status();  // a link or a special file has no chunks
  const bool held = open_files_.is_open(inode.file_id);
  if (held && !keep_open) env_.metrics().count("meta.orphans_kept_for_other_opens", 1);
  if (!keep_open && !held) {
    remove_chunks(inode);
    return ok_status();
  }
  proto::InodeDesc orphan = inode;
  orphan.nlink = 0;
  changed(orphan);
  const Status s = store_->put_entry(k_orphans_dir, std::to_string(inode.file_id), orphan);
  if (s.ok()) env_.metrics().count("meta.orphans_kept", 1);
  return s;
}

void MetaService::do_release_orphan(const proto::ReleaseOrphan& m, Endpoint from, Reply reply) {
  ops_.after_compute(env_, CostKind::meta_unlink, units_.unlink, [this, m, from, reply](Completion&) {
    if (m.open_id != 0) open_files_.close(from, m.open_id);
    if (!store_->get_entry(k_orphans_dir, std::to_string(m.file_id)).ok()) {
      return reply(
          ack(m.request_id, error(StatusCode::not_found, "no orphan " + std::to_string(m.file_id) +
                                                             " on metadata shard " + std::to_string(config_.shard))));
    }
    // Another client still has it open: it stays until that close.
    reply(ack(m.request_id, open_files_.is_open(m.file_id) ? ok_status() : remove_orphan(m.file_id)));
  });
}

Status MetaService::remove_orphan(FileId file) {
  const std::string key = std::to_string(file);
  Result<proto::InodeDesc> orphan = store_->get_entry(k_orphans_dir, key);
  if (!orphan.ok()) return orphan.status();
  const Status s = store_->remove_entry(k_orphans_dir, key);
  if (s.ok()) {
    remove_chunks(*orphan);
    env_.metrics().count("meta.orphans_released", 1);
  }
  return s;
}

Status MetaService::touch_dir(std::string_view dir, int subdirs) {
  Result<proto::InodeDesc> record = store_->get_dir(dir);
  if (record.status().code() == StatusCode::not_found) return ok_status();  // path_hash keeps no records
  if (!record.ok()) return record.status();
  fill_times(*record);
  record->mtime_ns = record->ctime_ns = env_.wall_ns();
  const std::int64_t links = std::int64_t{std::max<std::uint32_t>(record->nlink, 2)} + subdirs;
  record->nlink = static_cast<std::uint32_t>(std::clamp<std::int64_t>(links, 2, UINT32_MAX));
  return store_->put_dir(dir, *record);
}

Result<proto::InodeDesc> MetaService::dir_times_here(const proto::DirTimes& ask) {
  if (Status s = validate_path(ask.path); !s.ok()) return s;
  Result<proto::InodeDesc> record = store_->get_dir(ask.path);
  if (!record.ok()) return record.status();
  fill_times(*record);
  if (ask.set_mtime) {
    record->mtime_ns = ask.mtime_ns;
    if (Status s = store_->put_dir(ask.path, *record); !s.ok()) return s;
  }
  return record;
}

void MetaService::visit_dir_records(const proto::InodeDesc& dir, const proto::DirTimes& ask,
                                    std::function<void(std::vector<proto::InodeDesc>, Status)> done) {
  std::vector<ShardId> hosts;
  if (config_.ns.policy != MetaPolicy::path_hash) {
    hosts = shards_for_listing(from_wire(dir.dir_layout, config_.ns.shard_count));
  }
  if (hosts.empty()) return done({}, ok_status());
  struct Gather {
    std::size_t remaining = 0;
    std::vector<proto::InodeDesc> records;
    Status first_error;
    std::function<void(std::vector<proto::InodeDesc>, Status)> done;
  };
  auto gather = std::make_shared<Gather>();
  gather->remaining = hosts.size();
  gather->done = std::move(done);
  auto arrive = [gather](Result<proto::InodeDesc> r) {
    if (r.ok()) {
      gather->records.push_back(std::move(r).value());
    } else if (gather->first_error.ok()) {
      gather->first_error = r.status();
    }
    if (--gather->remaining == 0) gather->done(std::move(gather->records), gather->first_error);
  };
  auto ask_all = [this, hosts, ask, arrive](Status) {
    for (ShardId shard : hosts) {
      if (shard == config_.shard) {
        arrive(dir_times_here(ask));
      } else if (!shard_endpoint(shard).valid()) {
        arrive(error(StatusCode::unavailable, "metadata shard " + std::to_string(shard) + " is not in the maps"));
      } else {
        rpc_.call(shard_endpoint(shard), proto::DirTimes(ask), [arrive](Result<proto::Message> r) {
          if (!r.ok()) return arrive(r.status());
          const auto* reply = std::get_if<proto::InodeReply>(&*r);
          if (reply == nullptr) return arrive(error(StatusCode::corrupt, "a DirTimes reply that is not an InodeReply"));
          arrive(reply->inode);
        });
      }
    }
  };
  const bool need_maps = std::any_of(hosts.begin(), hosts.end(),
                                     [this](ShardId s) { return s != config_.shard && !shard_endpoint(s).valid(); });
  if (need_maps) return fetch_maps(ask_all);
  ask_all(ok_status());
}

void MetaService::merge_dir_times(const std::string& path, proto::InodeDesc dir,
                                  std::function<void(proto::InodeDesc)> done) {
  proto::DirTimes ask;
  ask.path = path;
  visit_dir_records(dir, ask, [this, dir, done](std::vector<proto::InodeDesc> records, Status s) {
    if (!s.ok()) env_.metrics().count("meta.dir_times_missing", 1);
    done(merged_dir(dir, records));
  });
}

namespace {

std::size_t xattr_bytes(const std::vector<proto::XattrDesc>& xattrs) {
  std::size_t n = 0;
  for (const auto& x : xattrs) n += x.name.size() + x.value.size();
  return n;
}

}  // namespace

Status MetaService::check_xattr(const proto::Xattr& m) const {
  if ((m.flags & ~proto::k_xattr_known_flags) != 0 || (m.flags == proto::k_xattr_known_flags)) {
    return error(StatusCode::invalid_argument, "xattr of " + m.path + ": flags " + std::to_string(m.flags) +
                                                   " are not one of create, replace or none");
  }
  if (m.op == proto::XattrOp::list) return ok_status();
  if (!proto::is_kept_xattr_name(m.name)) {
    return error(StatusCode::invalid_argument, "xattr of " + m.path + ": the name '" + m.name +
                                                   "' is not in the user., trusted. or security. namespace");
  }
  return ok_status();
}

// Applies an Xattr to `inode`: whether it changed (get and list never do);
// fills the reply's found, value and names.
Result<bool> MetaService::apply_xattr(const proto::Xattr& m, proto::InodeDesc& inode, proto::XattrReply& r) const {
  auto& xs = inode.xattrs;
  auto it = std::lower_bound(xs.begin(), xs.end(), m.name,
                             [](const proto::XattrDesc& x, const std::string& n) { return x.name < n; });
  const bool present = it != xs.end() && it->name == m.name;
  r.found = present;
  switch (m.op) {
    case proto::XattrOp::get:
      if (present) r.value = it->value;
      return false;
    case proto::XattrOp::list:
      for (const auto& x : xs) r.names.push_back(proto::XattrDesc{x.name, {}});
      return false;
    case proto::XattrOp::remove:
      if (present) xs.erase(it);
      return present;
    case proto::XattrOp::set: break;
  }
  // Linux: user.* attributes only on regular files and directories (xattr(7)).
  if (m.name.starts_with("user.") && inode.type != proto::InodeType::file && inode.type != proto::InodeType::dir) {
    return error(StatusCode::permission_denied,
                 "xattr of " + m.path + ": user.* attributes are kept on files and directories only");
  }
  if (present && (m.flags & proto::k_xattr_create) != 0) {
    return error(StatusCode::already_exists, "xattr " + m.name + " of " + m.path + " exists (create)");
  }
  if (!present && (m.flags & proto::k_xattr_replace) != 0) return false;  // found false: ENODATA
  const std::size_t total =
      xattr_bytes(xs) - (present ? it->name.size() + it->value.size() : 0) + m.name.size() + m.value.size();
  if (total > proto::k_max_inode_xattr_bytes) {
    return error(StatusCode::no_space, "xattr " + m.name + " of " + m.path + ": the inode's attributes would be " +
                                           std::to_string(total) + " bytes, more than k_max_inode_xattr_bytes (" +
                                           std::to_string(proto::k_max_inode_xattr_bytes) + ")");
  }
  if (present) {
    it->value = m.value;
  } else {
    xs.insert(it, proto::XattrDesc{m.name, m.value});
  }
  return true;
}

void MetaService::do_xattr(const proto::Xattr& m, Reply reply) {
  auto answer = [rid = m.request_id, reply](const Status& s, proto::XattrReply r) {
    r.request_id = rid;
    r.status = s.code();
    r.error = proto::clip_error_text(s.message());
    if (!s.ok()) r = proto::XattrReply{rid, s.code(), r.error, false, {}, {}};
    reply(std::move(r));
  };
  if (Status s = validate_path(m.path); !s.ok()) return answer(s, {});
  if (Status s = check_xattr(m); !s.ok()) return answer(s, {});
  const bool reads = m.op == proto::XattrOp::get || m.op == proto::XattrOp::list;
  std::string parent = "/", name_;
  if (m.path != "/") {
    Result<PathSplit> split = split_path(m.path);
    if (!split.ok()) return answer(split.status(), {});
    parent = std::string(split->parent);
    name_ = std::string(split->name);
    if (Status s = check_owner(parent, name_, nullptr); !s.ok()) return answer(s, {});
  }
  ops_.after_compute(env_, reads ? CostKind::meta_stat : CostKind::meta_setattr, reads ? units_.stat : units_.setattr,
                     [this, m, parent, name_, answer](Completion&) {
                       // The root directory's attributes are in its record; any other inode's where resolve finds it.
                       const bool root = m.path == "/";
                       Result<proto::InodeDesc> entry = root ? store_->get_dir("/") : store_->get_entry(parent, name_);
                       if (!entry.ok()) return answer(error(StatusCode::not_found, "no such file: " + m.path), {});
                       Result<proto::InodeDesc> inode = resolve(*entry);
                       if (!inode.ok()) return answer(inode.status(), {});
                       proto::XattrReply r;
                       Result<bool> applied = apply_xattr(m, *inode, r);
                       if (!applied.ok() || !*applied) return answer(applied.status(), std::move(r));
                       changed(*inode);
                       const Status s = root ? store_->put_dir("/", *inode) : put_inode(parent, name_, *entry, *inode);
                       if (s.ok()) env_.metrics().count("meta.xattr_changes", 1);
                       answer(s, std::move(r));
                     });
}

Result<std::vector<std::string>> MetaService::subtree_here(const std::string& top, std::uint64_t& entries) const {
  std::vector<std::string> dirs{top};
  entries = 0;
  for (std::size_t i = 0; i < dirs.size(); ++i) {
    Result<proto::InodeDesc> record = store_->get_dir(dirs[i]);
    std::vector<ShardId> hosts;
    if (record.ok()) hosts = shards_for_listing(from_wire(record->dir_layout, config_.ns.shard_count));
    if (hosts.size() != 1 || hosts[0] != config_.shard) {
      return error(StatusCode::invalid_argument, "rename of directory " + top + ": " + dirs[i] +
                                                     " keeps entries on other metadata shards (rename across "
                                                     "shards is not supported)");
    }
    for (std::uint64_t cookie = 0;;) {
      const MetaListPage page = store_->list(dirs[i], cookie, config_.readdir_page_max_entries);
      for (const auto& [name, inode] : page.entries) {
        if (++entries > k_max_dir_rename_entries) {
          return error(StatusCode::invalid_argument,
                       "rename of directory " + top + ": more than " + std::to_string(k_max_dir_rename_entries) +
                           " entries under it (k_max_dir_rename_entries: one request's work)");
        }
        if (inode.type == proto::InodeType::dir) dirs.push_back(join_path(dirs[i], name));
      }
      if (page.eof) break;
      cookie = page.next_cookie;
    }
  }
  return dirs;
}

Status MetaService::move_dir_here(const std::string& from, const std::string& to) {
  for (;;) {
    const MetaListPage page = store_->list(from, 0, config_.readdir_page_max_entries);
    if (page.entries.empty()) break;
    for (const auto& [name, inode] : page.entries) {
      if (Status s = store_->put_entry(to, name, inode); !s.ok()) return s;
      if (Status s = store_->remove_entry(from, name); !s.ok()) return s;
    }
  }
  Result<proto::InodeDesc> record = store_->get_dir(from);
  if (!record.ok()) return record.status();
  if (Status s = store_->put_dir(to, *record); !s.ok()) return s;
  return store_->remove_dir(from);
}

Status MetaService::check_dir_rename(const proto::Rename& m, std::uint64_t entries, std::size_t dirs) const {
  if (config_.ns.policy == MetaPolicy::path_hash) {
    return error(StatusCode::invalid_argument, "rename of directory " + m.from +
                                                   ": entries are placed by their full path (path_hash), so a "
                                                   "directory rename would move them across shards (not supported)");
  }
  // A mirrored shard's secondary applies a request's records in one batch
  // only when they fit one (meta_mirror.cpp): more would split the rename.
  const std::uint64_t records = 2 * entries + 2 * dirs + 8;
  if (config_.mirror.enabled && records > config_.mirror.max_batch_records) {
    return error(StatusCode::invalid_argument, "rename of directory " + m.from + ": its " + std::to_string(records) +
                                                   " store changes exceed one mirror batch (mirror.max_batch_records " +
                                                   std::to_string(config_.mirror.max_batch_records) +
                                                   "), so the secondary could see half of it");
  }
  return ok_status();
}

void MetaService::rename_dir(const proto::Rename& m, const TwoNames& n, Reply reply) {
  const RequestId rid = m.request_id;
  if (m.to == m.from) return reply(ack(rid, ok_status()));
  if (m.to.size() > m.from.size() && m.to.compare(0, m.from.size(), m.from) == 0 && m.to[m.from.size()] == '/') {
    return reply(ack(rid, error(StatusCode::invalid_argument,
                                "rename of directory " + m.from + " into its own subtree (" + m.to + ")")));
  }
  std::uint64_t entries = 0;
  Result<std::vector<std::string>> dirs = subtree_here(m.from, entries);
  if (!dirs.ok()) return reply(ack(rid, dirs.status()));
  if (Status s = check_dir_rename(m, entries, dirs->size()); !s.ok()) return reply(ack(rid, s));
  // Metadata is keyed by path here: every entry under the directory moves
  // (BeeGFS and Lustre key by id and move one dentry), one rename's units each.
  ops_.after_compute(env_, CostKind::meta_rename, std::uint64_t{units_.rename} * entries,
                     [this, m, n, reply](Completion&) { reply(ack(m.request_id, move_dir(m, n))); });
}

Status MetaService::move_dir(const proto::Rename& m, const TwoNames& n) {
  // Read again: the tree may have changed while the cost ran.
  Result<proto::InodeDesc> entry = store_->get_entry(n.from_parent, n.from_name);
  if (!entry.ok() || entry->type != proto::InodeType::dir) {
    return error(StatusCode::not_found, "no such directory: " + m.from);
  }
  Result<proto::InodeDesc> existing = store_->get_entry(n.to_parent, n.to_name);
  if (existing.ok()) {
    if (existing->type != proto::InodeType::dir)
      return error(StatusCode::not_a_directory, m.to + " is not a directory");
    std::uint64_t inside = 0;
    Result<std::vector<std::string>> replaced = subtree_here(m.to, inside);
    if (!replaced.ok()) return replaced.status();
    if (inside > 0) return error(StatusCode::not_empty, m.to + " is a directory that is not empty");
  }
  std::uint64_t entries = 0;
  Result<std::vector<std::string>> dirs = subtree_here(m.from, entries);
  Status s = dirs.status();
  if (s.ok()) s = check_dir_rename(m, entries, dirs->size());
  if (s.ok() && existing.ok()) s = store_->remove_dir(m.to);
  for (std::size_t i = 0; s.ok() && i < dirs->size(); ++i) {
    s = move_dir_here((*dirs)[i], m.to + (*dirs)[i].substr(m.from.size()));
  }
  proto::InodeDesc moved = *entry;
  changed(moved);
  if (s.ok()) s = store_->put_entry(n.to_parent, n.to_name, moved);
  if (s.ok()) s = store_->remove_entry(n.from_parent, n.from_name);
  if (s.ok()) s = touch_dir(n.from_parent, -1);
  if (s.ok()) s = touch_dir(n.to_parent, existing.ok() ? 0 : +1);
  if (s.ok()) {
    env_.metrics().count("meta.rename_ops", 1);
    env_.metrics().count("meta.rename_dir_entries", static_cast<double>(entries));
  }
  return s;
}

}  // namespace sluice
