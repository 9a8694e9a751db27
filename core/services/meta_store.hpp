// MetaStore: where a metadata server keeps its shard of the namespace.
//
// The store holds, per directory path this shard hosts entries for, the
// directory's own inode (when this shard is one of the directory's shards)
// and its entries (name -> inode). Files' inodes live inside their entries,
// as BeeGFS inlines file inodes into dentries. Listing order is by a 64-bit
// hash of the name, then the name, so a readdir cookie is a hash position that
// survives inserts and removals between pages (as Lustre's hash-ordered
// directories do).
//
// Implementations: InMemoryMetaStore (here) and a RocksDB one for hardware
// runs (hw_backends). Not thread-safe: one metadata service owns one store.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/common/status.hpp"
#include "core/proto/wire_message.hpp"

namespace sluice {

struct MetaListPage {
  std::vector<std::pair<std::string, proto::InodeDesc>> entries;
  std::uint64_t next_cookie = 0;
  bool eof = true;
};

// A reply to a mutating request, kept in the store with what it
// acknowledges (MetaStore::keep_reply).
struct KeptReply {
  std::uint64_t seq = 0;  // order of keeping, increasing
  Endpoint client;
  RequestId request = 0;
  std::string frame;  // the reply, proto::encode'd

  bool operator==(const KeptReply&) const = default;
};

class MetaStore {
 public:
  virtual ~MetaStore() = default;

  // The directory record (its own inode); not_found if this shard has none.
  virtual Result<proto::InodeDesc> get_dir(std::string_view dir_path) const = 0;
  virtual Status put_dir(std::string_view dir_path, const proto::InodeDesc& inode) = 0;
  // Removes the record; not_empty if entries remain under it on this shard.
  virtual Status remove_dir(std::string_view dir_path) = 0;

  virtual Result<proto::InodeDesc> get_entry(std::string_view dir_path, std::string_view name) const = 0;
  // Inserts or replaces.
  virtual Status put_entry(std::string_view dir_path, std::string_view name, const proto::InodeDesc& inode) = 0;
  virtual Status remove_entry(std::string_view dir_path, std::string_view name) = 0;
  virtual std::uint64_t entry_count(std::string_view dir_path) const = 0;
  // Entries from `cookie` (0 = first) in listing order, at most max_entries
  // (a page may run a few over to keep names of equal hash together).
  virtual MetaListPage list(std::string_view dir_path, std::uint64_t cookie, std::uint32_t max_entries) const = 0;

  // A durable counter for file-id allocation.
  virtual std::uint64_t load_counter() const = 0;
  virtual Status store_counter(std::uint64_t value) = 0;

  // Paths of the directories this store holds anything of (a record or
  // entries) that sort after `after` in byte order ("" = from the first), at
  // most max_dirs of them, in byte order. With get_dir and list it walks the
  // whole store in bounded steps (a metadata buddy resync, meta_mirror.hpp).
  virtual std::vector<std::string> list_dirs(std::string_view after, std::uint32_t max_dirs) const = 0;
  // Replies to mutating requests, kept with the namespace as Lustre keeps
  // them in its reply_data file and Ceph's MDS in its sessions' completed
  // requests: a client that resends a request after the server restarted
  // gets the reply of what was done, instead of a second execution (a
  // second create answers "exists", a second unlink "not found"). Durable as
  // the store's mutations are: a reply kept before commit() survives with
  // the mutation it acknowledges. The service numbers them and drops the
  // oldest in batches (MetaServiceConfig::reply_cache_entries,
  // kept_reply_prune_batch).
  virtual Status keep_reply(const KeptReply& reply) = 0;
  // Drops every kept reply numbered below `seq` (RocksDB: one range delete).
  virtual Status drop_replies_before(std::uint64_t seq) = 0;
  // Every kept reply, in seq order.
  virtual std::vector<KeptReply> kept_replies() const = 0;
  // Removes every directory, entry, kept reply and the counter (a mirror
  // secondary's store before a full resync replaces it).
  virtual Status clear() = 0;
  // Makes the mutations made so far as durable as the store promises (a
  // group commit: RocksDbMetaStoreConfig::group_commit writes its WAL here,
  // and fsyncs it when it syncs). A world that gathers a service's replies
  // (HwEnv's outbox) calls it, through MetaService::commit_store, before they
  // leave, so that no reply acknowledges a mutation the store could still
  // lose. A store durable at each call, or never, has nothing to do.
  virtual Status commit() { return ok_status(); }
};

// The store directory of the inodes of files with more than one name (hard
// links), each an entry named by its file id in decimal (MetaService: see
// meta_service.hpp). No path names it: paths start with '/'.
inline constexpr std::string_view k_linked_inodes_dir = "#linked-inodes";

// The store directory of orphans: inodes whose last name was removed while
// a client had them open (MetaService: OpenFiles, Unlink keep_open), each an
// entry named by its file id in decimal, kept with their chunks until the
// last open's close, or one lease after the metadata server's next start
// when no client held it open again (MetaService::remove_orphans).
inline constexpr std::string_view k_orphans_dir = "#orphans";

// The 64-bit listing hash of a name (fnv_1a_64, masked to 62 bits so that a
// cookie of hash+1 never wraps and 0 stays "from the start").
std::uint64_t listing_hash(std::string_view name);

class InMemoryMetaStore final : public MetaStore {
 public:
  Result<proto::InodeDesc> get_dir(std::string_view dir_path) const override;
  Status put_dir(std::string_view dir_path, const proto::InodeDesc& inode) override;
  Status remove_dir(std::string_view dir_path) override;
  Result<proto::InodeDesc> get_entry(std::string_view dir_path, std::string_view name) const override;
  Status put_entry(std::string_view dir_path, std::string_view name, const proto::InodeDesc& inode) override;
  Status remove_entry(std::string_view dir_path, std::string_view name) override;
  std::uint64_t entry_count(std::string_view dir_path) const override;
  MetaListPage list(std::string_view dir_path, std::uint64_t cookie, std::uint32_t max_entries) const override;
  std::uint64_t load_counter() const override { return counter_; }
  Status store_counter(std::uint64_t value) override {
    counter_ = value;
    return ok_status();
  }
  std::vector<std::string> list_dirs(std::string_view after, std::uint32_t max_dirs) const override;
  Status keep_reply(const KeptReply& reply) override {
    kept_[reply.seq] = reply;
    return ok_status();
  }
  Status drop_replies_before(std::uint64_t seq) override {
    kept_.erase(kept_.begin(), kept_.lower_bound(seq));
    return ok_status();
  }
  std::vector<KeptReply> kept_replies() const override;
  Status clear() override {
    dirs_.clear();
    kept_.clear();
    counter_ = 0;
    return ok_status();
  }

 private:
  struct Dir {
    bool has_record = false;
    proto::InodeDesc inode;
    std::map<std::pair<std::uint64_t, std::string>, proto::InodeDesc, std::less<>> entries;
  };
  std::map<std::string, Dir, std::less<>> dirs_;
  std::map<std::uint64_t, KeptReply> kept_;
  std::uint64_t counter_ = 0;
};

}  // namespace sluice
