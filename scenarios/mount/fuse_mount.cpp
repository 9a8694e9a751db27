// libfuse's 3.12 API: fuse_session_loop_mt takes the fuse_loop_config that
// fuse_loop_cfg_create makes. Under an older FUSE_USE_VERSION the same name
// is fuse_session_loop_mt_32, which reads its argument as the old two-field
// struct (clone_fd, max_idle_threads): the new struct's first fields read as
// clone_fd on and max_idle_threads 0, so libfuse made a thread (and cloned
// /dev/fuse) for every request and ended it after (issue 54, P16).
#define FUSE_USE_VERSION 312
#include "scenarios/mount/fuse_mount.hpp"

#include <fuse_lowlevel.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/proto/xattr_names.hpp"
#include "core/common/assert.hpp"
#include "scenarios/mount/inode_table.hpp"

namespace sluice::mount {

int errno_of(const Status& status) {
  switch (status.code()) {
    case StatusCode::ok: return 0;
    case StatusCode::again:
    case StatusCode::in_progress: return EAGAIN;
    case StatusCode::invalid_argument: return EINVAL;
    case StatusCode::not_found: return ENOENT;
    case StatusCode::already_exists: return EEXIST;
    case StatusCode::not_a_directory: return ENOTDIR;
    case StatusCode::is_a_directory: return EISDIR;
    case StatusCode::not_empty: return ENOTEMPTY;
    case StatusCode::no_space: return ENOSPC;
    case StatusCode::permission_denied: return EACCES;
    case StatusCode::timed_out:
    case StatusCode::unavailable:
    case StatusCode::corrupt:
    case StatusCode::io_error:
    case StatusCode::internal: return EIO;
  }
  return EIO;
}

Status validate(const MountOptions& options) {
  if (options.mount_point.empty() || options.mount_point.front() != '/') {
    return error(StatusCode::invalid_argument,
                 "mount: the mount point must be an absolute path, got \"" + options.mount_point + "\"");
  }
  if (options.entry_timeout_s < 0 || options.attr_timeout_s < 0 || options.entry_timeout_s > 3600 ||
      options.attr_timeout_s > 3600) {
    return error(StatusCode::invalid_argument, "mount: cache timeouts must be within [0, 3600] s");
  }
  if (options.threads == 0 || options.threads > 1024) {
    return error(StatusCode::invalid_argument, "mount: threads must be within [1, 1024]");
  }
  return ok_status();
}

namespace {

// A time of the metadata server's (ns since the Unix epoch) as stat(2) shows it.
timespec timespec_of(std::int64_t ns) {
  timespec t{};
  t.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
  t.tv_nsec = static_cast<long>(ns % 1'000'000'000);
  if (t.tv_nsec < 0) {  // before 1970: the nanoseconds stay in [0, 1e9)
    t.tv_nsec += 1'000'000'000;
    --t.tv_sec;
  }
  return t;
}

// The S_IF* bits of an inode type.
mode_t type_bits(proto::InodeType type) {
  switch (type) {
    case proto::InodeType::dir: return S_IFDIR;
    case proto::InodeType::symlink: return S_IFLNK;
    case proto::InodeType::fifo: return S_IFIFO;
    case proto::InodeType::char_device: return S_IFCHR;
    case proto::InodeType::block_device: return S_IFBLK;
    case proto::InodeType::socket: return S_IFSOCK;
    case proto::InodeType::file:
    case proto::InodeType::none: break;
  }
  return S_IFREG;
}

// The st_ino of an inode: its file id, above the mount's own numbers, so that
// it stays with the file through rename and link, every name of a hard link
// shows the same (as tar, rsync -H and cp -a expect), whatever kernel inode
// a name got here, and a listing's d_ino matches stat.
std::uint64_t file_id_ino(FileId id) { return (std::uint64_t{1} << 62) | id; }

// Directory listings between opendir and releasedir, with each entry's
// attributes (Readdir with_attrs) for readdirplus; `read` once a page went
// to the kernel (the releasedir then notes the access, as a file's release
// after reads does).
struct Listing {
  std::string path;
  std::vector<proto::DirEntryDesc> entries;
  bool read = false;
};

// The inode a stat would show of a listed entry that came with its
// attributes (not a directory's: its times and link count are merged from
// its records only by a stat).
std::optional<proto::InodeDesc> listed_inode(const proto::DirEntryDesc& e) {
  if (!e.attrs || e.type == proto::InodeType::dir) return std::nullopt;
  proto::InodeDesc inode;
  inode.file_id = e.file_id;
  inode.type = e.type;
  inode.size_bytes = e.size_bytes;
  inode.mode = e.attrs->mode;
  inode.uid = e.attrs->uid;
  inode.gid = e.attrs->gid;
  inode.nlink = e.attrs->nlink;
  inode.mtime_ns = e.attrs->mtime_ns;
  inode.atime_ns = e.attrs->atime_ns;
  inode.ctime_ns = e.attrs->ctime_ns;
  inode.rdev = e.attrs->rdev;
  inode.stripe.chunk_bytes = e.attrs->chunk_bytes;
  return inode;
}

class FuseFs {
 public:
  FuseFs(const MountOptions& options, const ClientPort& port) : options_(options), port_(port) {}

  static FuseFs& of(fuse_req_t req) { return *static_cast<FuseFs*>(fuse_req_userdata(req)); }

  // Hands fn to the client's loop, counted until it replies (done()).
  void post(std::function<void(Client&, Env&)> fn) {
    inflight_.fetch_add(1);
    port_.post(std::move(fn));
  }
  void done() {
    if (inflight_.fetch_sub(1) == 1) {
      std::lock_guard lock(drain_mu_);
      drain_cv_.notify_all();
    }
  }
  bool drain(std::chrono::milliseconds timeout) {
    std::unique_lock lock(drain_mu_);
    return drain_cv_.wait_for(lock, timeout, [this] { return inflight_.load() == 0; });
  }
  void reply_err(fuse_req_t req, int err) {
    fuse_reply_err(req, err);
    done();
  }
  void reply_status(fuse_req_t req, const Status& s) { reply_err(req, errno_of(s)); }

  struct stat attr_of(const proto::InodeDesc& inode, Ino ino) const {
    struct stat st {};
    std::uint64_t size = inode.size_bytes;
    if (auto open = table_.open_file(ino); open && inode.type == proto::InodeType::file) size = open->size;
    st.st_ino = inode.file_id != 0 ? file_id_ino(inode.file_id) : ino;
    st.st_mode = type_bits(inode.type) | (inode.mode & 07777);
    st.st_nlink = inode.nlink;  // the metadata server's count
    st.st_rdev = static_cast<dev_t>(inode.rdev);
    st.st_uid = inode.uid;
    st.st_gid = inode.gid;
    st.st_size = static_cast<off_t>(size);
    st.st_blksize = static_cast<blksize_t>(
        inode.stripe.chunk_bytes > 0 ? std::min<std::uint64_t>(inode.stripe.chunk_bytes, 1 << 20) : 4096);
    st.st_blocks = static_cast<blkcnt_t>((size + 511) / 512);
    st.st_mtim = timespec_of(inode.mtime_ns);
    st.st_atim = timespec_of(inode.atime_ns);
    st.st_ctim = timespec_of(inode.ctime_ns);
    return st;
  }

  // Each name of a file with hard links is its own kernel inode (inodes here
  // are per path), so the attributes of one do not see a change through
  // another: they are not cached.
  double attr_timeout_s(const proto::InodeDesc& inode) const {
    return inode.nlink > 1 && inode.type != proto::InodeType::dir ? 0 : options_.attr_timeout_s;
  }

  // Replies an entry for path's inode (remembered: one more lookup); a new
  // hard link's (link_of: the inode it names too) is that inode. A created
  // file is open, the server holding it as open_id.
  void reply_entry(fuse_req_t req, const std::string& path, const proto::InodeDesc& inode, fuse_file_info* created,
                   Ino link_of = 0, std::uint64_t open_id = 0) {
    Result<Ino> ino = link_of != 0 ? table_.link(link_of, path) : table_.remember(path);
    if (!ino.ok()) {
      let_open_go(path, open_id);
      return reply_err(req, ENFILE);
    }
    fuse_entry_param e{};
    e.ino = *ino;
    if (created && !table_.opened(*ino, inode, open_id)) let_open_go(path, open_id);
    e.attr = attr_of(inode, *ino);
    e.attr_timeout = attr_timeout_s(inode);
    e.entry_timeout = options_.entry_timeout_s;
    int rc = 0;
    if (created) {
      created->fh = *ino;
      created->direct_io = options_.direct_io ? 1 : 0;
      rc = fuse_reply_create(req, &e, created);
      if (rc != 0) {
        const std::optional<OpenFile> last = table_.released(*ino);
        if (last) let_open_go(path, last->open_id);
      }
    } else {
      rc = fuse_reply_entry(req, &e);
    }
    if (rc != 0) table_.forget(*ino, 1);  // the kernel never got it (an interrupted request)
    done();
  }

  // The metadata server lets go of this mount's open open_id of the file at
  // path (0: none), which no handle holds.
  void let_open_go(const std::string& path, std::uint64_t open_id) {
    if (open_id == 0) return;
    post([this, path, open_id](Client& c, Env&) {
      AttrChange close;
      close.close_open_id = open_id;
      c.set_attr(path, close, [this](const Result<proto::InodeDesc>&) { done(); });
    });
  }

  std::optional<std::string> path(Ino ino) const { return table_.path_of(ino); }
  std::optional<std::string> child(Ino parent, const char* name) const {
    std::optional<std::string> p = table_.path_of(parent);
    if (!p) return std::nullopt;
    return child_path(*p, name);
  }

  const MountOptions& options() const { return options_; }
  const ClientPort& port() const { return port_; }
  InodeTable& table() { return table_; }
  // Names the kernel looked up, and entries it got with their attributes from
  // a listing instead (readdirplus): said at the unmount.
  void count_lookup() { lookups_.fetch_add(1, std::memory_order_relaxed); }
  void count_listed() { listed_.fetch_add(1, std::memory_order_relaxed); }
  std::uint64_t lookups() const { return lookups_.load(); }
  std::uint64_t listed() const { return listed_.load(); }

 private:
  MountOptions options_;
  ClientPort port_;
  InodeTable table_;
  std::atomic<std::uint64_t> lookups_{0};
  std::atomic<std::uint64_t> listed_{0};
  std::atomic<std::int64_t> inflight_{0};
  std::mutex drain_mu_;
  std::condition_variable drain_cv_;
};

// Starts a request: the path of ino (or the child name of it), or the reply ENOENT/ENAMETOOLONG.
bool named(fuse_req_t req, FuseFs& fs, fuse_ino_t parent, const char* name, std::string& out) {
  if (std::strlen(name) > proto::k_max_name_bytes) {
    fuse_reply_err(req, ENAMETOOLONG);
    return false;
  }
  std::optional<std::string> p = fs.child(parent, name);
  if (!p) {
    fuse_reply_err(req, ENOENT);
    return false;
  }
  if (p->size() >= proto::k_max_path_bytes) {  // paths are counted from the mount's root
    fuse_reply_err(req, ENAMETOOLONG);
    return false;
  }
  out = std::move(*p);
  return true;
}

bool pathed(fuse_req_t req, FuseFs& fs, fuse_ino_t ino, std::string& out) {
  std::optional<std::string> p = fs.path(ino);
  if (!p) {
    fuse_reply_err(req, ENOENT);  // an unlinked inode still open: its name is gone
    return false;
  }
  out = std::move(*p);
  return true;
}

void op_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  FuseFs& fs = FuseFs::of(req);
  std::string path;
  if (!named(req, fs, parent, name, path)) return;
  fs.count_lookup();
  fs.post([&fs, req, path](Client& c, Env&) {
    c.stat(path, [&fs, req, path](Result<proto::InodeDesc> r) {
      if (r.ok()) return fs.reply_entry(req, path, *r, nullptr);
      if (r.status().code() != StatusCode::not_found) return fs.reply_status(req, r.status());
      fuse_entry_param e{};  // a negative entry, cached like a positive one
      e.entry_timeout = fs.options().entry_timeout_s;
      fuse_reply_entry(req, &e);
      fs.done();
    });
  });
}

void op_forget(fuse_req_t req, fuse_ino_t ino, std::uint64_t nlookup) {
  FuseFs::of(req).table().forget(ino, nlookup);
  fuse_reply_none(req);
}

void op_forget_multi(fuse_req_t req, std::size_t count, fuse_forget_data* forgets) {
  FuseFs& fs = FuseFs::of(req);
  for (std::size_t i = 0; i < count; ++i) fs.table().forget(forgets[i].ino, forgets[i].nlookup);
  fuse_reply_none(req);
}

void reply_attr(FuseFs& fs, fuse_req_t req, fuse_ino_t ino, const Result<proto::InodeDesc>& r) {
  if (!r.ok()) return fs.reply_status(req, r.status());
  struct stat st = fs.attr_of(*r, ino);
  fuse_reply_attr(req, &st, fs.attr_timeout_s(*r));
  fs.done();
}

void op_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info* /*fi*/) {
  FuseFs& fs = FuseFs::of(req);
  std::optional<std::string> named_path = fs.path(ino);
  if (!named_path) {
    // Unlinked while open (fstat of the descriptor): what this mount knows of it, with no links.
    std::optional<OpenFile> open = fs.table().open_file(ino);
    if (!open) return (void)fuse_reply_err(req, ENOENT);
    struct stat st = fs.attr_of(open->inode, ino);
    st.st_nlink = 0;
    fuse_reply_attr(req, &st, 0);
    return;
  }
  const std::string path = *named_path;
  fs.post([&fs, req, ino, path](Client& c, Env&) {
    c.stat(path, [&fs, req, ino](Result<proto::InodeDesc> r) { reply_attr(fs, req, ino, r); });
  });
}

// Host memory from the client's Env, with its bytes (loop thread). A region
// the Env has just given out always resolves (asserted).
struct HostBuffer {
  MemHandle handle;
  std::byte* data = nullptr;
};
Result<HostBuffer> host_buffer(Env& env, const ClientPort& port, std::uint64_t bytes) {
  Result<MemHandle> handle = env.alloc(MemKind::host, 0, bytes);
  if (!handle.ok()) return handle.status();
  Result<std::span<std::byte>> resolved = port.resolve(*handle);
  SLUICE_ASSERT(resolved.ok());
  return HostBuffer{*handle, resolved->data()};
}

// [from, to) of the file reads as zeros after (a hole punched on each storage target), then done.
void zero_range(Client& c, const proto::InodeDesc& inode, std::uint64_t from, std::uint64_t to,
                std::function<void(Status)> done) {
  if (from >= to) return done(ok_status());
  c.allocate(inode, from, to - from, proto::AllocMode::punch, std::move(done));
}

std::int64_t ns_of(const timespec& t) { return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec; }

// The AttrChange of a setattr (the kernel checked the caller may make it:
// default_permissions); `now` is the wall clock (Env::wall_ns) for UTIME_NOW.
int attr_change(const struct stat* attr, int to_set, std::int64_t now, AttrChange& change) {
  if ((to_set & FUSE_SET_ATTR_UID) != 0) change.uid = attr->st_uid;
  if ((to_set & FUSE_SET_ATTR_GID) != 0) change.gid = attr->st_gid;
  if ((to_set & FUSE_SET_ATTR_MODE) != 0) change.mode = attr->st_mode & 07777;
  if ((to_set & FUSE_SET_ATTR_MTIME_NOW) != 0) {
    change.mtime_ns = now;
  } else if ((to_set & FUSE_SET_ATTR_MTIME) != 0) {
    change.mtime_ns = ns_of(attr->st_mtim);
  }
  if ((to_set & FUSE_SET_ATTR_ATIME_NOW) != 0) {
    change.atime_ns = now;
  } else if ((to_set & FUSE_SET_ATTR_ATIME) != 0) {
    change.atime_ns = ns_of(attr->st_atim);
  }
  if ((to_set & FUSE_SET_ATTR_SIZE) != 0) change.size_bytes = static_cast<std::uint64_t>(attr->st_size);
  return 0;
}

using InodeDone = std::function<void(Result<proto::InodeDesc>)>;

// A truncate to zero makes the file anew at its path (unlink, which removes
// its chunk objects, then create with the same mode and layout): no bytes of
// the old file can reappear and nothing is rewritten. Other changes of the
// same setattr follow.
void recreate_empty(Client& c, FuseFs& fs, fuse_ino_t ino, const std::string& path, const proto::InodeDesc& old,
                    AttrChange wanted, InodeDone done) {
  c.unlink(path, [&c, &fs, ino, path, old, wanted, done](Status removed) {
    if (!removed.ok()) return done(removed);
    CreateOptions o;
    o.mode = wanted.mode.value_or(old.mode);
    o.uid = wanted.uid.value_or(old.uid);
    o.gid = wanted.gid.value_or(old.gid);
    o.chunk_bytes = old.stripe.chunk_bytes;
    o.stripe_count = static_cast<std::uint32_t>(old.stripe.targets.size());
    // Open here: the new inode is opened under a new open, and the old one's
    // open (it kept the old inode as an orphan) goes.
    if (fs.table().open_file(ino)) o.open_id = c.new_open_id();
    c.create(path, o, [&c, &fs, ino, path, old, wanted, open_id = o.open_id, done](Result<proto::InodeDesc> made) {
      if (!made.ok()) return done(made);
      if (open_id != 0) {
        const std::uint64_t before = fs.table().replaced(ino, *made, open_id);
        if (before == open_id) fs.let_open_go(path, open_id);
        if (before != open_id && before != 0) c.release_orphan(old, before, [](Status) {});
      }
      AttrChange time;
      time.mtime_ns = wanted.mtime_ns;  // truncate_file set it
      c.set_attr(path, time, done);
    });
  });
}

// truncate(2), ftruncate and open with O_TRUNC: to zero, the file is made
// anew; shrinking to a size > 0 punches out what is cut (so that a later
// extension reads zeros, as POSIX requires), then records the size.
void truncate_file(Client& c, Env& env, FuseFs& fs, fuse_ino_t ino, const std::string& path,
                   const proto::InodeDesc& inode, AttrChange wanted, InodeDone done) {
  std::uint64_t current = inode.size_bytes;
  if (auto open = fs.table().open_file(ino)) current = std::max(current, open->size);
  const std::uint64_t size = *wanted.size_bytes;
  if (!wanted.mtime_ns) wanted.mtime_ns = env.wall_ns();  // a truncate changes the mtime
  // A file with other names (hard links) keeps its inode: its bytes are punched out instead.
  if (size == 0 && current > 0 && inode.nlink <= 1) return recreate_empty(c, fs, ino, path, inode, wanted, done);
  zero_range(c, inode, size, current, [&c, &fs, ino, path, wanted, size, done](Status zeroed) {
    if (!zeroed.ok()) return done(zeroed);
    c.set_attr(path, wanted, [&fs, ino, size, done](Result<proto::InodeDesc> set) {
      if (set.ok()) {
        fs.table().resized(ino, size);
        fs.table().recorded(ino, size);
      }
      done(set);
    });
  });
}

void set_attr_with_size(Client& c, Env& env, FuseFs& fs, fuse_req_t req, fuse_ino_t ino, const std::string& path,
                        AttrChange change) {
  c.stat(path, [&c, &env, &fs, req, ino, path, change](Result<proto::InodeDesc> r) {
    if (!r.ok()) return fs.reply_status(req, r.status());
    if (r->type == proto::InodeType::dir) return fs.reply_err(req, EISDIR);
    truncate_file(c, env, fs, ino, path, *r, change,
                  [&fs, req, ino](Result<proto::InodeDesc> set) { reply_attr(fs, req, ino, set); });
  });
}

void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set, fuse_file_info* /*fi*/) {
  FuseFs& fs = FuseFs::of(req);
  std::string path;
  if (!pathed(req, fs, ino, path)) return;
  const struct stat wanted = *attr;
  fs.post([&fs, req, ino, path, wanted, to_set](Client& c, Env& env) {
    AttrChange change;
    if (const int err = attr_change(&wanted, to_set, env.wall_ns(), change); err != 0) return fs.reply_err(req, err);
    if (change.size_bytes) return set_attr_with_size(c, env, fs, req, ino, path, change);
    if (!change.mode && !change.mtime_ns && !change.atime_ns && !change.uid && !change.gid) {
      return c.stat(path, [&fs, req, ino](Result<proto::InodeDesc> r) { reply_attr(fs, req, ino, r); });
    }
    if (change.mtime_ns) fs.table().mtime_set(ino);  // the close of earlier writes leaves it
    c.set_attr(path, change, [&fs, req, ino](Result<proto::InodeDesc> r) { reply_attr(fs, req, ino, r); });
  });
}

// A new file or directory belongs to the calling process's user and group.
CreateOptions owned_by_caller(fuse_req_t req, mode_t mode) {
  CreateOptions o;
  o.mode = mode & 07777;
  if (const fuse_ctx* ctx = fuse_req_ctx(req)) {
    o.uid = ctx->uid;
    o.gid = ctx->gid;
  }
  return o;
}

// The reply to a request that makes the name `path`: its entry (opened: info), or the error.
InodeDone entry_reply(FuseFs& fs, fuse_req_t req, const std::string& path,
                      std::shared_ptr<fuse_file_info> info = nullptr, std::uint64_t open_id = 0) {
  return [&fs, req, path, info, open_id](Result<proto::InodeDesc> r) {
    if (!r.ok()) return fs.reply_status(req, r.status());
    fs.reply_entry(req, path, *r, info.get(), 0, open_id);
  };
}

void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode) {
  FuseFs& fs = FuseFs::of(req);
  std::string path;
  if (!named(req, fs, parent, name, path)) return;
  const CreateOptions o = owned_by_caller(req, mode);
  fs.post([&fs, req, path, o](Client& c, Env&) { c.mkdir(path, o, entry_reply(fs, req, path)); });
}

// create (opened: fi) and mknod of a regular file (fi null).
void create_file(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, const fuse_file_info* fi) {
  FuseFs& fs = FuseFs::of(req);
  std::string path;
  if (!named(req, fs, parent, name, path)) return;
  auto info = fi != nullptr ? std::make_shared<fuse_file_info>(*fi) : nullptr;
  const CreateOptions o = owned_by_caller(req, mode);
  fs.post([&fs, req, path, o, info](Client& c, Env&) {
    CreateOptions opened = o;
    if (info) opened.open_id = c.new_open_id();  // create and open, one request
    c.create(path, opened, entry_reply(fs, req, path, info, opened.open_id));
  });
}

void op_create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, fuse_file_info* fi) {
  create_file(req, parent, name, mode, fi);
}

// The inode type of a special file's S_IF* bits; none for any other.
proto::InodeType special_type(mode_t mode) {
  if (S_ISFIFO(mode)) return proto::InodeType::fifo;
  if (S_ISCHR(mode)) return proto::InodeType::char_device;
  if (S_ISBLK(mode)) return proto::InodeType::block_device;
  if (S_ISSOCK(mode)) return proto::InodeType::socket;
  return proto::InodeType::none;
}

// mknod of a regular file is a create; of a FIFO, a device or a socket an
// inode the metadata server keeps (the kernel gives it its behaviour:
// FUSE opens special files without asking the file system).
void op_mknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev) {
  if (S_ISREG(mode)) return create_file(req, parent, name, mode, nullptr);
  const proto::InodeType type = special_type(mode);
  if (type == proto::InodeType::none) return (void)fuse_reply_err(req, EINVAL);
  FuseFs& fs = FuseFs::of(req);
  std::string path;
  if (!named(req, fs, parent, name, path)) return;
  const CreateOptions o = owned_by_caller(req, mode);
  fs.post([&fs, req, path, o, type, rdev](Client& c, Env&) {
    c.mknod(path, type, o.mode & 07777, static_cast<std::uint64_t>(rdev), o, entry_reply(fs, req, path));
  });
}

// unlink and rmdir: the name goes from the table once the server removed it.
// The open file at `path` lost its name (the metadata server kept it): its
// last release releases the orphan, or at once when it was closed meanwhile.
void keep_orphan(FuseFs& fs, Client& c, const std::string& path, const proto::InodeDesc& inode) {
  if (fs.table().orphan_at(path)) return;
  c.release_orphan(inode, [](Status) {});  // not_found: the server already removed it (a restart)
}

void remove_name(fuse_req_t req, fuse_ino_t parent, const char* name, bool dir) {
  FuseFs& fs = FuseFs::of(req);
  std::string path;
  if (!named(req, fs, parent, name, path)) return;
  fs.post([&fs, req, path, dir](Client& c, Env&) {
    if (dir) {
      return c.rmdir(path, [&fs, req, path](Status s) {
        if (s.ok()) fs.table().unbind(path);
        fs.reply_status(req, s);
      });
    }
    // A file open here keeps its data until its last close (an orphan at the metadata server).
    const std::optional<proto::InodeDesc> open = fs.table().open_inode_at(path);
    c.unlink(path, open.has_value(), [&fs, &c, req, path, open](Status s) {
      if (s.ok() && open) keep_orphan(fs, c, path, *open);
      if (s.ok()) fs.table().unbind(path);
      fs.reply_status(req, s);
    });
  });
}

void op_unlink(fuse_req_t req, fuse_ino_t parent, const char* name) { remove_name(req, parent, name, false); }
void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char* name) { remove_name(req, parent, name, true); }

void op_rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent, const char* newname,
               unsigned int flags) {
  FuseFs& fs = FuseFs::of(req);
  if ((flags & ~static_cast<unsigned>(RENAME_NOREPLACE)) != 0) return (void)fuse_reply_err(req, EINVAL);
  std::string from, to;
  if (!named(req, fs, parent, name, from) || !named(req, fs, newparent, newname, to)) return;
  fs.post([&fs, req, from, to, flags](Client& c, Env&) {
    auto rename = [&c, &fs, req, from, to]() {
      const std::optional<proto::InodeDesc> open = fs.table().open_inode_at(to);  // the file the rename replaces
      c.rename(from, to, open.has_value(), [&fs, &c, req, from, to, open](Status s) {
        if (s.ok() && open) keep_orphan(fs, c, to, *open);
        if (s.ok()) fs.table().rename(from, to);
        // The metadata server refuses a rename across shards (or of a too large directory): EXDEV makes mv copy.
        fs.reply_err(req, s.code() == StatusCode::invalid_argument ? EXDEV : errno_of(s));
      });
    };
    if ((flags & RENAME_NOREPLACE) == 0) return rename();
    c.stat(to, [&fs, req, rename](Result<proto::InodeDesc> r) {
      if (r.ok()) return fs.reply_err(req, EEXIST);
      rename();
    });
  });
}

void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char* newname) {
  FuseFs& fs = FuseFs::of(req);
  std::string from, to;
  if (!pathed(req, fs, ino, from) || !named(req, fs, newparent, newname, to)) return;
  fs.post([&fs, req, ino, from, to](Client& c, Env&) {
    c.link(from, to, [&fs, req, ino, to](Result<proto::InodeDesc> r) {
      if (r.ok()) return fs.reply_entry(req, to, *r, nullptr, ino);
      // link(2) of a directory is EPERM; the metadata server refuses names on
      // two shards (a design limit): EXDEV makes cp and tar copy instead.
      const StatusCode code = r.status().code();
      if (code == StatusCode::is_a_directory) return fs.reply_err(req, EPERM);
      fs.reply_err(req, code == StatusCode::invalid_argument ? EXDEV : errno_of(r.status()));
    });
  });
}

void op_symlink(fuse_req_t req, const char* target, fuse_ino_t parent, const char* name) {
  FuseFs& fs = FuseFs::of(req);
  std::string path;
  if (!named(req, fs, parent, name, path)) return;
  const std::string to(target);
  if (to.size() > proto::k_max_symlink_target_bytes) return (void)fuse_reply_err(req, ENAMETOOLONG);
  const CreateOptions o = owned_by_caller(req, 0777);
  fs.post([&fs, req, path, to, o](Client& c, Env&) { c.symlink(to, path, o, entry_reply(fs, req, path)); });
}

// The kernel resolves symbolic links itself (following, O_NOFOLLOW, ELOOP): it asks for the target.
void op_readlink(fuse_req_t req, fuse_ino_t ino) {
  FuseFs& fs = FuseFs::of(req);
  std::string path;
  if (!pathed(req, fs, ino, path)) return;
  fs.post([&fs, req, path](Client& c, Env&) {
    c.readlink(path, [&fs, req](Result<std::string> r) {
      if (!r.ok()) return fs.reply_status(req, r.status());
      fuse_reply_readlink(req, r->c_str());
      fs.done();
    });
  });
}

void reply_open(FuseFs& fs, fuse_req_t req, fuse_ino_t ino, const std::shared_ptr<fuse_file_info>& info) {
  info->fh = ino;
  info->keep_cache = 0;  // close-to-open: pages cached before this open are dropped
  info->direct_io = fs.options().direct_io ? 1 : 0;
  if (fuse_reply_open(req, info.get()) != 0) fs.table().released(ino);
  fs.done();
}

// open: O_TRUNC arrives here (libfuse's atomic_o_trunc), not as a setattr.
void op_open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  FuseFs& fs = FuseFs::of(req);
  std::string path;
  if (!pathed(req, fs, ino, path)) return;
  auto info = std::make_shared<fuse_file_info>(*fi);
  fs.post([&fs, req, ino, path, info](Client& c, Env& env) {
    // The inode's first handle opens it at the metadata server (held there
    // until its last release: its data outlives an unlink by any client).
    const std::optional<OpenFile> already = fs.table().open_file(ino);
    const std::uint64_t open_id = already && already->open_id != 0 ? 0 : c.new_open_id();
    c.open(path, open_id, [&c, &env, &fs, req, ino, path, info, open_id](Result<proto::InodeDesc> r) {
      if (!r.ok()) return fs.reply_status(req, r.status());
      if (r->type == proto::InodeType::dir) return fs.reply_err(req, EISDIR);
      if (!fs.table().opened(ino, *r, open_id)) fs.let_open_go(path, open_id);
      if ((info->flags & O_TRUNC) == 0 || (info->flags & O_ACCMODE) == O_RDONLY) return reply_open(fs, req, ino, info);
      AttrChange empty;
      empty.size_bytes = 0;
      truncate_file(c, env, fs, ino, path, *r, empty, [&fs, req, ino, path, info](Result<proto::InodeDesc> t) {
        if (!t.ok()) {
          const std::optional<OpenFile> last = fs.table().released(ino);
          if (last) fs.let_open_go(path, last->open_id);
          return fs.reply_status(req, t.status());
        }
        reply_open(fs, req, ino, info);
      });
    });
  });
}

void op_read(fuse_req_t req, fuse_ino_t ino, std::size_t size, off_t off, fuse_file_info* /*fi*/) {
  FuseFs& fs = FuseFs::of(req);
  std::optional<OpenFile> open = fs.table().open_file(ino);
  if (!open) return (void)fuse_reply_err(req, EBADF);
  const auto offset = static_cast<std::uint64_t>(off);
  if (offset >= open->size || size == 0) return (void)fuse_reply_buf(req, nullptr, 0);
  const std::uint64_t n = std::min<std::uint64_t>(size, open->size - offset);
  proto::InodeDesc inode = open->inode;
  inode.size_bytes = open->size;
  fs.table().was_read(ino);
  fs.post([&fs, req, inode, offset, n](Client& c, Env& env) {
    Result<HostBuffer> buf = host_buffer(env, fs.port(), n);
    if (!buf.ok()) return fs.reply_err(req, ENOMEM);
    std::memset(buf->data, 0, n);  // holes (never written) read as zeros
    c.read(inode, offset, buf->handle,
           [&fs, &env, req, n, buf = buf->handle, data = buf->data](Result<std::uint64_t> r) {
             if (r.ok()) {
               fuse_reply_buf(req, reinterpret_cast<const char*>(data), n);
               fs.done();
             } else {
               fs.reply_status(req, r.status());
             }
             env.free(buf);
           });
  });
}

void op_write(fuse_req_t req, fuse_ino_t ino, const char* buf, std::size_t size, off_t off, fuse_file_info* /*fi*/) {
  FuseFs& fs = FuseFs::of(req);
  std::optional<OpenFile> open = fs.table().open_file(ino);
  if (!open) return (void)fuse_reply_err(req, EBADF);
  if (size == 0) return (void)fuse_reply_write(req, 0);
  // The request's buffer is libfuse's until this call returns: the bytes are copied now.
  auto data = std::make_shared<std::vector<char>>(buf, buf + size);
  const auto offset = static_cast<std::uint64_t>(off);
  fs.post([&fs, req, ino, inode = open->inode, offset, data](Client& c, Env& env) {
    Result<HostBuffer> mem = host_buffer(env, fs.port(), data->size());
    if (!mem.ok()) return fs.reply_err(req, ENOMEM);
    std::memcpy(mem->data, data->data(), data->size());
    c.write(inode, offset, mem->handle, fs.options().sync_writes,
            [&fs, &env, req, ino, offset, mem = mem->handle](Result<std::uint64_t> w) {
              env.free(mem);
              if (!w.ok()) return fs.reply_status(req, w.status());
              fs.table().wrote(ino, offset, *w, env.wall_ns());
              fuse_reply_write(req, *w);
              fs.done();
            });
  });
}

// A release's answer: a close of a file another client unlinked or renamed
// meanwhile (not_found: the server let the open go) is no error of close(2).
void reply_release(FuseFs& fs, fuse_req_t req, const Status& s) {
  fs.reply_status(req, s.code() == StatusCode::not_found ? ok_status() : s);
}

// The release of a handle of a file read and not written: the close notes
// the access (relatime at the metadata server); the last one also closes
// the server's open.
void note_read_close(fuse_req_t req, fuse_ino_t ino, const std::string& path) {
  FuseFs& fs = FuseFs::of(req);
  fs.post([&fs, req, ino, path](Client& c, Env&) {
    AttrChange change;
    change.accessed = true;
    change.close_open_id = fs.table().take_open_if_last(ino);
    c.set_attr(path, change, [&fs, req, ino](const Result<proto::InodeDesc>& r) {
      fs.table().released(ino);
      reply_release(fs, req, r.status());
    });
  });
}

// The release of a handle that neither wrote nor read: the last one closes
// the server's open (an orphan's: the server lets its data go once no client
// holds it open).
void plain_release(fuse_req_t req, fuse_ino_t ino, const std::optional<std::string>& path) {
  FuseFs& fs = FuseFs::of(req);
  const std::optional<OpenFile> last = fs.table().released(ino);
  if (!last || (!last->orphaned && (last->open_id == 0 || !path))) return (void)fuse_reply_err(req, 0);
  if (last->orphaned) {
    return fs.post([&fs, req, inode = last->inode, open_id = last->open_id](Client& c, Env&) {
      c.release_orphan(inode, open_id, [&fs, req](Status) { fs.reply_err(req, 0); });
    });
  }
  fs.post([&fs, req, path = *path, open_id = last->open_id](Client& c, Env&) {
    AttrChange close;
    close.close_open_id = open_id;
    c.set_attr(path, close, [&fs, req](const Result<proto::InodeDesc>& r) { reply_release(fs, req, r.status()); });
  });
}

// flush, fsync and release: a size this mount's writes reached goes to the
// metadata server (the last release's with the close of the server's open).
void record_size(fuse_req_t req, fuse_ino_t ino, bool release) {
  FuseFs& fs = FuseFs::of(req);
  std::optional<OpenFile> open = fs.table().open_file(ino);
  std::optional<std::string> path = fs.path(ino);
  if (release && open && !open->dirty && open->read && path) return note_read_close(req, ino, *path);
  if (!open || !open->dirty || !path) {
    if (release) return plain_release(req, ino, path);
    return (void)fuse_reply_err(req, 0);
  }
  fs.post([&fs, req, ino, path = *path, size = open->size, release, open = *open](Client& c, Env&) {
    // The record of the writes (as Client::close): their size and, unless a
    // utimens came after them, the last one's time as mtime.
    AttrChange change;
    change.size_bytes = size;
    change.written = true;
    if (!open.mtime_set) change.mtime_ns = open.last_write_ns;
    if (release) change.close_open_id = fs.table().take_open_if_last(ino);
    c.set_attr(path, change, [&fs, req, ino, size, release](Result<proto::InodeDesc> r) {
      if (r.ok()) fs.table().recorded(ino, size);
      if (!release) return fs.reply_status(req, r.status());
      fs.table().released(ino);
      reply_release(fs, req, r.status());
    });
  });
}

void op_flush(fuse_req_t req, fuse_ino_t ino, fuse_file_info* /*fi*/) { record_size(req, ino, false); }
void op_release(fuse_req_t req, fuse_ino_t ino, fuse_file_info* /*fi*/) { record_size(req, ino, true); }
void op_fsync(fuse_req_t req, fuse_ino_t ino, int /*datasync*/, fuse_file_info* /*fi*/) {
  record_size(req, ino, false);
}

void op_opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  FuseFs& fs = FuseFs::of(req);
  std::string path;
  if (!pathed(req, fs, ino, path)) return;
  auto info = std::make_shared<fuse_file_info>(*fi);
  fs.post([&fs, req, path, info](Client& c, Env&) {
    c.readdir(path, true, [&fs, req, path, info](Result<std::vector<proto::DirEntryDesc>> r) {
      if (!r.ok()) return fs.reply_status(req, r.status());
      auto* listing = new Listing{path, std::move(r).value()};
      info->fh = reinterpret_cast<std::uint64_t>(listing);
      if (fuse_reply_open(req, info.get()) != 0) delete listing;
      fs.done();
    });
  });
}

// One page of a listing from `off` (readdir and readdirplus). With `plus`,
// each file, link and special file goes with its attributes from the listing,
// so that a `ls -l` needs no lookup per name (the kernel counts one lookup per
// such entry, here remembered as a lookup would be); a directory, ".", ".."
// and an entry without attributes go as plain entries (node id 0: the kernel
// looks them up when it needs them).
void reply_listing(fuse_req_t req, fuse_ino_t ino, std::size_t size, off_t off, fuse_file_info* fi, bool plus) {
  FuseFs& fs = FuseFs::of(req);
  auto* listing = reinterpret_cast<Listing*>(fi->fh);
  listing->read = true;
  std::vector<char> buf(size);
  std::size_t used = 0;
  const std::size_t count = listing->entries.size() + 2;
  for (auto i = static_cast<std::size_t>(std::max<off_t>(off, 0)); i < count; ++i) {
    fuse_entry_param e{};
    std::string name;
    std::optional<proto::InodeDesc> inode;
    if (i < 2) {
      name = i == 0 ? "." : "..";
      e.attr.st_ino = ino;
      e.attr.st_mode = S_IFDIR;
    } else {
      const proto::DirEntryDesc& entry = listing->entries[i - 2];
      name = entry.name;
      e.attr.st_ino = file_id_ino(entry.file_id);
      e.attr.st_mode = type_bits(entry.type);
      if (plus) inode = listed_inode(entry);
    }
    if (inode) {
      Result<Ino> child = fs.table().remember(child_path(listing->path, name));
      if (child.ok()) {
        e.ino = *child;
        e.attr = fs.attr_of(*inode, *child);
        e.attr_timeout = fs.attr_timeout_s(*inode);
        e.entry_timeout = fs.options().entry_timeout_s;
      } else {
        inode.reset();  // the table is full: a plain entry
      }
    }
    const off_t next = static_cast<off_t>(i + 1);
    const std::size_t need = plus ? fuse_add_direntry_plus(req, buf.data() + used, size - used, name.c_str(), &e, next)
                                  : fuse_add_direntry(req, buf.data() + used, size - used, name.c_str(), &e.attr, next);
    if (need > size - used) {
      if (inode) fs.table().forget(e.ino, 1);  // not sent: the kernel does not count it
      break;
    }
    if (inode) fs.count_listed();
    used += need;
  }
  fuse_reply_buf(req, buf.data(), used);
}

void op_readdir(fuse_req_t req, fuse_ino_t ino, std::size_t size, off_t off, fuse_file_info* fi) {
  reply_listing(req, ino, size, off, fi, false);
}
void op_readdirplus(fuse_req_t req, fuse_ino_t ino, std::size_t size, off_t off, fuse_file_info* fi) {
  reply_listing(req, ino, size, off, fi, true);
}

// A directory listed and released: its access goes to the metadata server
// (Client::close_unchanged; relatime there, against the directory's merged
// times), as Linux moves a directory's atime on readdir.
void op_releasedir(fuse_req_t req, fuse_ino_t /*ino*/, fuse_file_info* fi) {
  std::unique_ptr<Listing> listing(reinterpret_cast<Listing*>(fi->fh));
  if (!listing->read) return (void)fuse_reply_err(req, 0);
  FuseFs& fs = FuseFs::of(req);
  // A note that fails (the directory removed meanwhile) is not the
  // release's error: the kernel only drops the handle.
  fs.post([&fs, req, path = listing->path](Client& c, Env&) {
    c.close_unchanged(path, [&fs, req](Status) { fs.reply_err(req, 0); });
  });
}

void op_statfs(fuse_req_t req, fuse_ino_t /*ino*/) {
  FuseFs& fs = FuseFs::of(req);
  fs.post([&fs, req](Client& c, Env&) {
    struct statvfs st {};
    std::uint64_t capacity = 0, free = 0;
    for (const auto& [id, t] : c.targets()) {
      capacity += t.capacity_bytes;
      free += t.free_bytes;
    }
    st.f_bsize = 4096;
    st.f_frsize = 4096;
    st.f_blocks = capacity / st.f_frsize;
    st.f_bfree = free / st.f_frsize;
    st.f_bavail = st.f_bfree;
    st.f_files = std::uint64_t{1} << 32;
    st.f_ffree = st.f_files;
    st.f_favail = st.f_files;
    st.f_namemax = proto::k_max_name_bytes;
    fuse_reply_statfs(req, &st);
    fs.done();
  });
}

// Extended attributes (Client::xattr); the kernel checked the caller's
// right to them (default_permissions, trusted.* for CAP_SYS_ADMIN). Names the
// file system does not keep (proto::is_kept_xattr_name) are EOPNOTSUPP here,
// before the metadata server, so tools fall back to the mode bits.
bool kept_xattr(const char* name) { return proto::is_kept_xattr_name(name); }

int xattr_errno(const Status& s) { return s.code() == StatusCode::permission_denied ? EPERM : errno_of(s); }

using XattrAnswer = std::function<void(FuseFs&, const proto::XattrReply&)>;

void xattr_call(fuse_req_t req, fuse_ino_t ino, proto::XattrOp op, std::string name, std::string value,
                std::uint32_t flags, XattrAnswer answer) {
  FuseFs& fs = FuseFs::of(req);
  std::string path;
  if (!pathed(req, fs, ino, path)) return;
  fs.post([&fs, req, path, op, name = std::move(name), value = std::move(value), flags, answer = std::move(answer)](
              Client& c, Env&) {
    c.xattr(path, op, name, value, flags, [&fs, req, answer](Result<proto::XattrReply> r) {
      if (!r.ok()) return fs.reply_err(req, xattr_errno(r.status()));
      answer(fs, *r);
    });
  });
}

// getxattr and listxattr: size 0 asks for the length; a smaller buffer is ERANGE.
void reply_xattr_bytes(FuseFs& fs, fuse_req_t req, std::size_t size, const std::string& bytes) {
  if (size == 0) {
    fuse_reply_xattr(req, bytes.size());
  } else if (size < bytes.size()) {
    return fs.reply_err(req, ERANGE);
  } else {
    fuse_reply_buf(req, bytes.data(), bytes.size());
  }
  fs.done();
}

void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char* value, std::size_t size, int flags) {
  if (!kept_xattr(name)) return (void)fuse_reply_err(req, EOPNOTSUPP);
  if ((flags & ~(XATTR_CREATE | XATTR_REPLACE)) != 0) return (void)fuse_reply_err(req, EINVAL);
  const std::uint32_t wire = ((flags & XATTR_CREATE) != 0 ? proto::k_xattr_create : 0) |
                             ((flags & XATTR_REPLACE) != 0 ? proto::k_xattr_replace : 0);
  xattr_call(req, ino, proto::XattrOp::set, name, std::string(value, size), wire,
             [req, wire](FuseFs& fs, const proto::XattrReply& r) {
               fs.reply_err(req, !r.found && (wire & proto::k_xattr_replace) != 0 ? ENODATA : 0);
             });
}

void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char* name, std::size_t size) {
  if (!kept_xattr(name)) return (void)fuse_reply_err(req, EOPNOTSUPP);
  xattr_call(req, ino, proto::XattrOp::get, name, {}, 0, [req, size](FuseFs& fs, const proto::XattrReply& r) {
    if (!r.found) return fs.reply_err(req, ENODATA);
    reply_xattr_bytes(fs, req, size, r.value);
  });
}

void op_listxattr(fuse_req_t req, fuse_ino_t ino, std::size_t size) {
  xattr_call(req, ino, proto::XattrOp::list, {}, {}, 0, [req, size](FuseFs& fs, const proto::XattrReply& r) {
    std::string names;
    for (const auto& x : r.names) names.append(x.name).push_back('\0');
    reply_xattr_bytes(fs, req, size, names);
  });
}

void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char* name) {
  if (!kept_xattr(name)) return (void)fuse_reply_err(req, EOPNOTSUPP);
  xattr_call(req, ino, proto::XattrOp::remove, name, {}, 0,
             [req](FuseFs& fs, const proto::XattrReply& r) { fs.reply_err(req, r.found ? 0 : ENODATA); });
}
// fallocate(2): mode 0 and FALLOC_FL_KEEP_SIZE reserve the range on its
// storage targets, FALLOC_FL_PUNCH_HOLE (with KEEP_SIZE, as Linux requires)
// frees it, FALLOC_FL_ZERO_RANGE zeros and reserves it; a mode without
// KEEP_SIZE grows the file to the range's end (recorded at the close, as a
// write's size is). COLLAPSE_RANGE and INSERT_RANGE shift every later byte
// of the file, which on a striped file moves data between all its targets:
// EOPNOTSUPP, as on file systems without them.
void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t length, fuse_file_info* /*fi*/) {
  FuseFs& fs = FuseFs::of(req);
  const bool keep_size = (mode & FALLOC_FL_KEEP_SIZE) != 0;
  const int kind = mode & ~FALLOC_FL_KEEP_SIZE;
  proto::AllocMode how = proto::AllocMode::reserve;
  if (kind == FALLOC_FL_PUNCH_HOLE && keep_size) {
    how = proto::AllocMode::punch;
  } else if (kind == FALLOC_FL_ZERO_RANGE) {
    how = proto::AllocMode::zero;
  } else if (kind != 0) {
    return (void)fuse_reply_err(req, EOPNOTSUPP);
  }
  if (off < 0 || length <= 0) return (void)fuse_reply_err(req, EINVAL);
  const auto offset = static_cast<std::uint64_t>(off);
  const auto bytes = static_cast<std::uint64_t>(length);
  if (bytes > k_max_file_bytes - offset) return (void)fuse_reply_err(req, EFBIG);
  std::optional<OpenFile> open = fs.table().open_file(ino);
  if (!open) return (void)fuse_reply_err(req, EBADF);
  fs.post([&fs, req, ino, inode = open->inode, offset, bytes, how, keep_size](Client& c, Env& env) {
    c.allocate(inode, offset, bytes, how, [&fs, &env, req, ino, offset, bytes, how, keep_size](Status s) {
      if (!s.ok()) return fs.reply_status(req, s);
      // A change of the bytes or the size is a write's: the close records the size and the mtime.
      if (!keep_size) {
        fs.table().wrote(ino, offset, bytes, env.wall_ns());
      } else if (how != proto::AllocMode::reserve) {
        fs.table().wrote(ino, 0, 0, env.wall_ns());  // the size as it is
      }
      fs.reply_err(req, 0);
    });
  });
}

void op_init(void* /*userdata*/, fuse_conn_info* conn) {
  conn->max_write = k_max_fuse_io_bytes;
  conn->max_readahead = k_max_fuse_io_bytes;
  conn->max_background = 64;
  conn->congestion_threshold = 48;
}

fuse_lowlevel_ops make_ops() {
  fuse_lowlevel_ops ops{};
  ops.init = op_init;
  ops.lookup = op_lookup;
  ops.forget = op_forget;
  ops.forget_multi = op_forget_multi;
  ops.getattr = op_getattr;
  ops.setattr = op_setattr;
  ops.mknod = op_mknod;
  ops.mkdir = op_mkdir;
  ops.unlink = op_unlink;
  ops.rmdir = op_rmdir;
  ops.rename = op_rename;
  ops.link = op_link;
  ops.symlink = op_symlink;
  ops.readlink = op_readlink;
  ops.open = op_open;
  ops.read = op_read;
  ops.write = op_write;
  ops.flush = op_flush;
  ops.release = op_release;
  ops.fsync = op_fsync;
  ops.opendir = op_opendir;
  ops.readdir = op_readdir;
  ops.readdirplus = op_readdirplus;
  ops.releasedir = op_releasedir;
  ops.statfs = op_statfs;
  ops.setxattr = op_setxattr;
  ops.getxattr = op_getxattr;
  ops.listxattr = op_listxattr;
  ops.removexattr = op_removexattr;
  ops.create = op_create;
  ops.fallocate = op_fallocate;
  return ops;
}

}  // namespace

Status serve_mount(const MountOptions& options, const ClientPort& port, const std::function<void()>& on_mounted) {
  if (Status st = validate(options); !st.ok()) return st;
  struct stat where {};
  if (::stat(options.mount_point.c_str(), &where) != 0 || !S_ISDIR(where.st_mode)) {
    return error(StatusCode::invalid_argument, "mount: " + options.mount_point + " is not a directory");
  }
  FuseFs fs(options, port);
  const fuse_lowlevel_ops ops = make_ops();
  const std::string fs_opt = "-ofsname=" + options.fs_name + ",subtype=sluice,default_permissions,allow_other";
  std::vector<std::string> arg_text = {"sluice-mount", fs_opt};
  std::vector<char*> argv;
  for (std::string& a : arg_text) argv.push_back(a.data());
  fuse_args args = FUSE_ARGS_INIT(static_cast<int>(argv.size()), argv.data());
  fuse_session* se = fuse_session_new(&args, &ops, sizeof ops, &fs);
  if (se == nullptr) return error(StatusCode::unavailable, "mount: libfuse could not make a session");
  if (fuse_set_signal_handlers(se) != 0) {
    fuse_session_destroy(se);
    return error(StatusCode::unavailable, "mount: cannot install signal handlers");
  }
  if (fuse_session_mount(se, options.mount_point.c_str()) != 0) {
    fuse_remove_signal_handlers(se);
    fuse_session_destroy(se);
    return error(StatusCode::unavailable, "mount: cannot mount at " + options.mount_point +
                                              " (needs /dev/fuse and root or fusermount3; see the log above)");
  }
  if (on_mounted) on_mounted();
  fuse_loop_config* loop = fuse_loop_cfg_create();
  fuse_loop_cfg_set_max_threads(loop, options.threads);
  fuse_loop_cfg_set_idle_threads(loop, options.threads);
  const int rc = fuse_session_loop_mt(se, loop);
  fuse_loop_cfg_destroy(loop);
  fuse_session_unmount(se);
  const bool drained = fs.drain(std::chrono::milliseconds(k_unmount_drain_ms));
  fuse_remove_signal_handlers(se);
  if (drained) fuse_session_destroy(se);  // else replies still to come would use it: left to the process exit
  if (!drained) {
    return error(StatusCode::timed_out,
                 "mount: requests still in flight " + std::to_string(k_unmount_drain_ms) + " ms after the unmount");
  }
  // Counted in the client's metrics (its loop runs until the workload ends;
  // the node's results report them, and `sluice mount` prints them).
  port.post([lookups = fs.lookups(), listed = fs.listed()](Client&, Env& env) {
    env.metrics().count("mount.lookups", static_cast<double>(lookups));
    env.metrics().count("mount.listed_with_attrs", static_cast<double>(listed));
  });
  if (rc < 0) return error(StatusCode::io_error, "mount: the FUSE session ended with error " + std::to_string(-rc));
  return ok_status();
}

}  // namespace sluice::mount
