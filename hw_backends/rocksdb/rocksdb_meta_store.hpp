// MetaStore on RocksDB: a metadata server's shard of the namespace kept in an
// embedded LSM store, as GekkoFS keeps its metadata (GekkoFS src/daemon/backend/
// metadata/rocksdb_backend.cpp). Implements core/services/meta_store.hpp
// exactly, with the same results as InMemoryMetaStore (a differential test
// checks it).
//
// Keys (one column family; byte strings compare lexicographically):
//   'D' dir_path                                      -> the directory's own inode
//   'E' u32be(|dir_path|) dir_path u64be(hash) name   -> an entry's inode
//   'N' dir_path                                      -> u64le number of entries
//   'C'                                               -> u64le file-id counter
//   'R' u64be(seq)                                    -> a kept reply (keep_reply): u32be client
//                                                        node, u32be service, u64be request id, frame
// The big-endian listing hash (listing_hash()) makes RocksDB's key order the
// listing order, so a readdir cookie is a Seek() target. Values are proto
// frames of InodeReply (core/proto/codec.hpp), so every stored inode carries a
// CRC32C and is decoded with the wire format's bounds checks. Values written
// at wire version 5 (before symbolic and hard links) are read too, as inodes
// without a link count or target; kept replies of an older version are not
// (a request resent across the upgrade is executed again).
//
// Durability: every mutation is one atomic WriteBatch (entry and count move
// together), written with WriteOptions::sync = sync_writes: on, a completed
// call survives power loss (the WAL is fsynced); off, it survives a crash of
// the process (the WAL is in the OS). Reopening replays the WAL either way.
// With group_commit the same holds of a mutation once commit() has returned
// after it; before, a crash of the process loses it (it was not acknowledged).
//
// Caches (this process is the only writer: RocksDB's LOCK file keeps others
// out, so the caches are write-through and never stale): the decoded records
// of directories (get_dir is on every create and stat path) and the entry
// counts (one read per create and unlink saved); each holds at most
// k_max_cached_dirs directories and is emptied when full. The keys of entries
// get_entry found missing (at most k_max_missing_keys, emptied when full) are
// kept until that key is written, so a create's re-check after its compute
// and the existence read inside put_entry cost no RocksDB read. The decoded
// entries themselves (at most k_max_cached_entries; past it one is dropped
// per insert) are kept as they are written and read, so a stat, the
// existence read of an unlink and of an overwriting put_entry cost none.
// The caches are filled after the RocksDB call succeeded, so an error or a
// damaged value is never cached.
//
// Options: a whole-key bloom filter on the memtable and on table files
// (10 bits/key, RocksDB's recommended default, see RocksDB wiki "RocksDB
// Bloom Filter") answers the negative lookups of creates without a skiplist
// walk or a block read.
//
// Errors: calls that return Status/Result report RocksDB failures as io_error
// (corrupt for a value that fails decoding) naming the store and key. The
// interface's entry_count(), list() and load_counter() cannot return an error;
// a failure there is logged, the call answers empty, and the store turns
// failed: every later mutation returns that error (it never writes on top of
// a store it could not read).
//
// Not thread-safe beyond what MetaStore promises: one metadata service owns it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/services/meta_store.hpp"

namespace rocksdb {
class DB;
struct WriteOptions;
}  // namespace rocksdb

namespace sluice::hw {

struct RocksDbMetaStoreConfig {
  std::string path;         // the database directory (created when missing)
  bool sync_writes = true;  // see "Durability" above
  // Group commit: a mutation is acknowledged by commit(), not by its own
  // call: its WAL record waits in RocksDB's buffer, and commit() writes the
  // buffer (and fsyncs it with sync_writes) for every mutation since the
  // last. Whoever turns it on must call commit() before anything
  // acknowledges those mutations: HwWorld::before_messages_leave with
  // MetaService::commit_store does, once per loop turn, before the turn's
  // replies leave (one fsync for a turn's creates instead of one each).
  bool group_commit = false;
  // Where read failures of the calls that cannot return one are reported.
  std::function<void(std::string_view)> log;
};

// For MetaServiceConfig::open_store: opens (creating when missing) the store
// at config.path each time it is called, as a MetaStore.
std::function<Result<std::unique_ptr<MetaStore>>()> rocksdb_store_opener(RocksDbMetaStoreConfig config);

class RocksDbMetaStore final : public MetaStore {
 public:
  // unavailable: the directory cannot be created or is locked by another
  // open store; corrupt: RocksDB found the files damaged.
  static Result<std::unique_ptr<RocksDbMetaStore>> open(const RocksDbMetaStoreConfig& config);
  ~RocksDbMetaStore() override;
  RocksDbMetaStore(const RocksDbMetaStore&) = delete;
  RocksDbMetaStore& operator=(const RocksDbMetaStore&) = delete;

  Result<proto::InodeDesc> get_dir(std::string_view dir_path) const override;
  Status put_dir(std::string_view dir_path, const proto::InodeDesc& inode) override;
  Status remove_dir(std::string_view dir_path) override;
  Result<proto::InodeDesc> get_entry(std::string_view dir_path, std::string_view name) const override;
  Status put_entry(std::string_view dir_path, std::string_view name, const proto::InodeDesc& inode) override;
  Status remove_entry(std::string_view dir_path, std::string_view name) override;
  std::uint64_t entry_count(std::string_view dir_path) const override;
  MetaListPage list(std::string_view dir_path, std::uint64_t cookie, std::uint32_t max_entries) const override;
  std::uint64_t load_counter() const override;
  Status store_counter(std::uint64_t value) override;
  std::vector<std::string> list_dirs(std::string_view after, std::uint32_t max_dirs) const override;
  Status keep_reply(const KeptReply& reply) override;
  Status drop_replies_before(std::uint64_t seq) override;
  std::vector<KeptReply> kept_replies() const override;
  Status clear() override;
  Status commit() override;

  // The error that turned the store failed, ok while it is healthy.
  const Status& failure() const { return failure_; }

  static constexpr std::size_t k_max_cached_dirs = 65'536;  // per cache (records, counts)
  static constexpr std::size_t k_max_missing_keys = 4'096;  // creates in flight on one server, with room
  // Entries kept decoded in memory, written through (a metadata server's
  // dentry/inode cache, as BeeGFS's and Lustre's): a RocksDB point lookup
  // was ~4.5 us of a stat on the 16-core host (98 k stats/s against 177 k
  // with the in-memory store, make bench-meta 2026-11-29). About 250 bytes
  // each (key, InodeDesc, node): 64 MiB at most; past it one is dropped per
  // insert.
  static constexpr std::size_t k_max_cached_entries = 262'144;

 private:
  RocksDbMetaStore(RocksDbMetaStoreConfig config, rocksdb::DB* db);
  Result<std::uint64_t> read_count(std::string_view dir_path) const;
  void fail(const Status& status) const;
  void cache_count(std::string_view dir_path, std::uint64_t count) const;
  rocksdb::WriteOptions write_options() const;
  void cache_entry(const std::string& key, const proto::InodeDesc& inode) const;

  RocksDbMetaStoreConfig config_;
  std::unique_ptr<rocksdb::DB> db_;
  mutable Status failure_;
  mutable std::map<std::string, proto::InodeDesc, std::less<>> dir_cache_;
  mutable std::map<std::string, std::uint64_t, std::less<>> count_cache_;
  mutable std::unordered_set<std::string> missing_entry_keys_;
  mutable std::unordered_map<std::string, proto::InodeDesc> entry_cache_;  // by entry_key
};

}  // namespace sluice::hw
