#include "hw_backends/rocksdb/rocksdb_meta_store.hpp"

#include <algorithm>
#include <filesystem>

#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <utility>
#include <array>
#include <variant>

#include "core/proto/codec.hpp"
#include "core/proto/crc32c.hpp"

namespace sluice::hw {
namespace {

constexpr char k_dir_tag = 'D';
constexpr char k_entry_tag = 'E';
constexpr char k_count_tag = 'N';
constexpr char k_counter_key[] = "C";
constexpr char k_reply_tag = 'R';
// A kept reply's value: u32be client node, u32be client service, u64be request id, then the frame.
constexpr std::size_t k_reply_header_bytes = 16;

void append_be(std::string& out, std::uint64_t value, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

std::uint64_t read_be(std::string_view in, std::size_t at, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<unsigned char>(in[at + static_cast<std::size_t>(i)]);
  return v;
}

std::string u64_le(std::uint64_t value) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>((value >> (8 * i)) & 0xFF);
  return out;
}

Result<std::uint64_t> parse_u64_le(std::string_view value, std::string_view what) {
  if (value.size() != 8) {
    return error(StatusCode::corrupt, std::string(what) + ": " + std::to_string(value.size()) + " bytes, expected 8");
  }
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(value[static_cast<std::size_t>(i)]);
  return v;
}

std::string dir_key(std::string_view dir) { return std::string(1, k_dir_tag) + std::string(dir); }
std::string count_key(std::string_view dir) { return std::string(1, k_count_tag) + std::string(dir); }

// 'E' u32be(len) dir: every entry of one directory, and nothing else, starts with it.
std::string entry_prefix(std::string_view dir) {
  std::string key(1, k_entry_tag);
  append_be(key, dir.size(), 4);
  key.append(dir);
  return key;
}

std::string entry_key(std::string_view dir, std::string_view name) {
  std::string key = entry_prefix(dir);
  append_be(key, listing_hash(name), 8);
  key.append(name);
  return key;
}

std::string reply_key(std::uint64_t seq) {
  std::string key(1, k_reply_tag);
  append_be(key, seq, 8);
  return key;
}

std::string encode_kept_reply(const KeptReply& reply) {
  std::string value;
  value.reserve(k_reply_header_bytes + reply.frame.size());
  append_be(value, reply.client.node, 4);
  append_be(value, reply.client.service, 4);
  append_be(value, reply.request, 8);
  value.append(reply.frame);
  return value;
}

std::string encode_inode(const proto::InodeDesc& inode) {
  proto::InodeReply wrapper;
  wrapper.inode = inode;
  const std::vector<std::byte> frame = proto::encode(wrapper);
  return std::string(reinterpret_cast<const char*>(frame.data()), frame.size());
}

std::uint32_t load_le32(std::span<const std::byte> in, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | std::to_integer<std::uint32_t>(in[at + static_cast<std::size_t>(i)]);
  return v;
}

void store_le32(std::span<std::byte> out, std::size_t at, std::uint32_t value) {
  for (std::size_t i = 0; i < 4; ++i) out[at + i] = static_cast<std::byte>((value >> (8 * i)) & 0xFF);
}

// Older wire versions wrote InodeDesc without its last fields: version 5
// without nlink and symlink_target (they came with symbolic and hard links,
// version 6), versions 5 and 6 without rdev (special files, version 7),
// versions 5 to 7 without atime_ns, ctime_ns and xattrs (POSIX times and
// extended attributes, version 8); versions 8 to 11 wrote today's InodeDesc
// (version 9 changed only a listing's reply, 10 only requests, 11 and 12
// added messages).
// InodeDesc is the last field of InodeReply, so such a value becomes today's
// frame by appending the missing fields' empty encodings (zeros: nlink 0,
// read as one link; an empty target; rdev 0; times 0, read as mtime; no
// xattrs) and
// renumbering the header. Both
// CRCs of the old frame must hold first, so that damage is reported, not
// healed.
struct OlderInodeVersion {
  std::uint16_t version;
  std::size_t missing_bytes;  // encoded size of the fields it lacks, all zero
};
constexpr std::array<OlderInodeVersion, 7> k_older_inode_versions{{
    // nlink (u32), symlink_target (u32 length), rdev (u64), atime_ns and ctime_ns (i64), xattrs (u32 count)
    {5, 4 + 4 + 8 + 16 + 4},
    {6, 8 + 16 + 4},  // rdev, atime_ns, ctime_ns, xattrs
    {7, 16 + 4},      // atime_ns, ctime_ns, xattrs
    {8, 0},           // the header's version only
    {9, 0},
    {10, 0},
    {11, 0},
}};
static_assert(proto::k_wire_version == 12, "a newer version: add the upgrade from each older one above");

Result<proto::Message> decode_stored_frame(std::span<const std::byte> bytes) {
  Result<proto::Message> decoded = proto::decode(bytes);
  constexpr std::size_t k_header = proto::k_frame_header_bytes;
  if (decoded.ok() || bytes.size() < k_header) return decoded;
  const auto version = static_cast<std::uint16_t>(std::to_integer<std::uint16_t>(bytes[4]) |
                                                  std::to_integer<std::uint16_t>(bytes[5]) << 8);
  const auto older = std::find_if(k_older_inode_versions.begin(), k_older_inode_versions.end(),
                                  [version](const OlderInodeVersion& o) { return o.version == version; });
  if (older == k_older_inode_versions.end()) return decoded;
  if (load_le32(bytes, 16) != proto::crc32c(bytes.first(16)) || load_le32(bytes, 8) != bytes.size() - k_header ||
      load_le32(bytes, 12) != proto::crc32c(bytes.subspan(k_header))) {
    return error(StatusCode::corrupt,
                 "a value of wire version " + std::to_string(version) + " fails its CRC32C or length check");
  }
  std::vector<std::byte> frame(bytes.begin(), bytes.end());
  frame.resize(frame.size() + older->missing_bytes);  // zeros
  const std::span<std::byte> out(frame);
  out[4] = static_cast<std::byte>(proto::k_wire_version & 0xFF);
  out[5] = static_cast<std::byte>(proto::k_wire_version >> 8);
  store_le32(out, 8, static_cast<std::uint32_t>(frame.size() - k_header));
  store_le32(out, 12, proto::crc32c(std::span<const std::byte>(out.subspan(k_header))));
  store_le32(out, 16, proto::crc32c(std::span<const std::byte>(out.first(16))));
  return proto::decode(frame);
}

// `what` names the value in an error; called only on one (no string building per read).
template <typename What>
Result<proto::InodeDesc> decode_inode(std::string_view value, What what) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(value.data()), value.size());
  Result<proto::Message> decoded = decode_stored_frame(bytes);
  if (!decoded.ok()) {
    return error(StatusCode::corrupt, what() + ": stored value does not decode: " + decoded.status().message());
  }
  auto* reply = std::get_if<proto::InodeReply>(&decoded.value());
  if (reply == nullptr) {
    return error(StatusCode::corrupt,
                 what() + ": stored value is a " + std::string(proto::message_name(*decoded)) + ", not an InodeReply");
  }
  return std::move(reply->inode);
}

constexpr int k_bloom_bits_per_key = 10;             // RocksDB wiki "RocksDB Bloom Filter": ~1% false positives
constexpr double k_memtable_bloom_size_ratio = 0.1;  // of the memtable, as RocksDB's own tests use

}  // namespace

std::function<Result<std::unique_ptr<MetaStore>>()> rocksdb_store_opener(RocksDbMetaStoreConfig config) {
  return [config = std::move(config)]() -> Result<std::unique_ptr<MetaStore>> {
    // RocksDB makes the store's own directory, not the ones above it.
    std::error_code ec;
    const std::filesystem::path parent = std::filesystem::path(config.path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (ec) {
      return error(StatusCode::unavailable,
                   "rocksdb meta store " + config.path + ": cannot make " + parent.string() + ": " + ec.message());
    }
    Result<std::unique_ptr<RocksDbMetaStore>> opened = RocksDbMetaStore::open(config);
    if (!opened.ok()) return opened.status();
    return std::unique_ptr<MetaStore>(std::move(opened).value());
  };
}

Result<std::unique_ptr<RocksDbMetaStore>> RocksDbMetaStore::open(const RocksDbMetaStoreConfig& config) {
  if (config.path.empty()) return error(StatusCode::invalid_argument, "rocksdb meta store: empty path");
  rocksdb::Options options;
  options.create_if_missing = true;
  // Metadata values are small and read back by point lookups and short
  // scans; RocksDB's defaults (LZ-less L0, 64 MiB memtable) suit them, plus
  // whole-key bloom filters for the negative lookups of creates.
  options.memtable_whole_key_filtering = true;
  // Group commit: the WAL waits in RocksDB's buffer until commit() (RocksDB's
  // manual_wal_flush; FlushWAL writes it, and fsyncs it with sync_writes).
  options.manual_wal_flush = config.group_commit;
  options.memtable_prefix_bloom_size_ratio = k_memtable_bloom_size_ratio;
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(k_bloom_bits_per_key));
  table.whole_key_filtering = true;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  rocksdb::DB* db = nullptr;
  const rocksdb::Status st = rocksdb::DB::Open(options, config.path, &db);
  if (!st.ok()) {
    const StatusCode code = st.IsCorruption() ? StatusCode::corrupt : StatusCode::unavailable;
    return error(code, "rocksdb meta store " + config.path + ": open: " + st.ToString());
  }
  return std::unique_ptr<RocksDbMetaStore>(new RocksDbMetaStore(config, db));
}

RocksDbMetaStore::RocksDbMetaStore(RocksDbMetaStoreConfig config, rocksdb::DB* db)
    : config_(std::move(config)), db_(db) {}

RocksDbMetaStore::~RocksDbMetaStore() {
  if (db_ && config_.group_commit) commit().ignore();  // what no reply acknowledged yet is kept all the same
  if (db_) {
    const rocksdb::Status st = db_->Close();
    if (!st.ok() && config_.log) config_.log("rocksdb meta store " + config_.path + ": close: " + st.ToString());
  }
}

void RocksDbMetaStore::cache_count(std::string_view dir_path, std::uint64_t count) const {
  auto it = count_cache_.find(dir_path);
  if (it != count_cache_.end()) {
    it->second = count;
    return;
  }
  if (count_cache_.size() >= k_max_cached_dirs) count_cache_.clear();
  count_cache_.emplace(std::string(dir_path), count);
}

void RocksDbMetaStore::cache_entry(const std::string& key, const proto::InodeDesc& inode) const {
  if (auto it = entry_cache_.find(key); it != entry_cache_.end()) {
    it->second = inode;
    return;
  }
  if (entry_cache_.size() >= k_max_cached_entries) entry_cache_.erase(entry_cache_.begin());
  entry_cache_.emplace(key, inode);
}

rocksdb::WriteOptions RocksDbMetaStore::write_options() const {
  rocksdb::WriteOptions options;
  options.sync = config_.sync_writes && !config_.group_commit;  // group commit: synced at commit()
  return options;
}

Status RocksDbMetaStore::commit() {
  if (!config_.group_commit) return ok_status();
  const rocksdb::Status st = db_->FlushWAL(config_.sync_writes);
  if (st.ok()) return ok_status();
  const Status failed = error(st.IsCorruption() ? StatusCode::corrupt : StatusCode::io_error,
                              "rocksdb meta store " + config_.path + ": commit (write the WAL" +
                                  (config_.sync_writes ? " and fsync it" : "") + "): " + st.ToString());
  fail(failed);
  return failed;
}

void RocksDbMetaStore::fail(const Status& status) const {
  if (config_.log) config_.log(status.message());
  if (failure_.ok()) failure_ = status;
}

namespace {

Status io(const rocksdb::Status& st, const std::string& path, std::string_view what) {
  return error(st.IsCorruption() ? StatusCode::corrupt : StatusCode::io_error,
               "rocksdb meta store " + path + ": " + std::string(what) + ": " + st.ToString());
}

}  // namespace

Result<proto::InodeDesc> RocksDbMetaStore::get_dir(std::string_view dir_path) const {
  if (auto cached = dir_cache_.find(dir_path); cached != dir_cache_.end()) return cached->second;
  std::string value;
  const rocksdb::Status st = db_->Get(rocksdb::ReadOptions(), dir_key(dir_path), &value);
  if (st.IsNotFound()) return error(StatusCode::not_found, "no directory " + std::string(dir_path));
  if (!st.ok()) return io(st, config_.path, "get directory " + std::string(dir_path));
  Result<proto::InodeDesc> inode = decode_inode(
      value, [&] { return "rocksdb meta store " + config_.path + ": directory " + std::string(dir_path); });
  if (inode.ok()) {
    if (dir_cache_.size() >= k_max_cached_dirs) dir_cache_.clear();
    dir_cache_.emplace(std::string(dir_path), *inode);
  }
  return inode;
}

Status RocksDbMetaStore::put_dir(std::string_view dir_path, const proto::InodeDesc& inode) {
  if (!failure_.ok()) return failure_;
  dir_cache_.erase(std::string(dir_path));
  const rocksdb::WriteOptions options = write_options();
  const rocksdb::Status st = db_->Put(options, dir_key(dir_path), encode_inode(inode));
  if (!st.ok()) return io(st, config_.path, "put directory " + std::string(dir_path));
  if (dir_cache_.size() >= k_max_cached_dirs) dir_cache_.clear();
  dir_cache_.emplace(std::string(dir_path), inode);
  return ok_status();
}

Result<std::uint64_t> RocksDbMetaStore::read_count(std::string_view dir_path) const {
  if (auto cached = count_cache_.find(dir_path); cached != count_cache_.end()) return cached->second;
  std::string value;
  const rocksdb::Status st = db_->Get(rocksdb::ReadOptions(), count_key(dir_path), &value);
  if (st.IsNotFound()) {
    cache_count(dir_path, 0);
    return std::uint64_t{0};
  }
  if (!st.ok()) return io(st, config_.path, "get entry count of " + std::string(dir_path));
  Result<std::uint64_t> count =
      parse_u64_le(value, "rocksdb meta store " + config_.path + ": entry count of " + std::string(dir_path));
  if (count.ok()) cache_count(dir_path, *count);
  return count;
}

Status RocksDbMetaStore::remove_dir(std::string_view dir_path) {
  if (!failure_.ok()) return failure_;
  Result<proto::InodeDesc> existing = get_dir(dir_path);
  if (!existing.ok()) return existing.status();
  Result<std::uint64_t> count = read_count(dir_path);
  if (!count.ok()) return count.status();
  if (*count > 0) {
    return error(StatusCode::not_empty,
                 "directory " + std::string(dir_path) + " has " + std::to_string(*count) + " entries");
  }
  dir_cache_.erase(std::string(dir_path));
  count_cache_.erase(std::string(dir_path));
  rocksdb::WriteBatch batch;
  batch.Delete(dir_key(dir_path));
  batch.Delete(count_key(dir_path));
  const rocksdb::WriteOptions options = write_options();
  const rocksdb::Status st = db_->Write(options, &batch);
  if (!st.ok()) return io(st, config_.path, "remove directory " + std::string(dir_path));
  return ok_status();
}

Result<proto::InodeDesc> RocksDbMetaStore::get_entry(std::string_view dir_path, std::string_view name) const {
  std::string key = entry_key(dir_path, name);
  const auto not_found = [&] {
    return error(StatusCode::not_found, "no entry " + std::string(name) + " in " + std::string(dir_path));
  };
  if (missing_entry_keys_.contains(key)) return not_found();
  if (auto cached = entry_cache_.find(key); cached != entry_cache_.end()) return cached->second;
  std::string value;
  const rocksdb::Status st = db_->Get(rocksdb::ReadOptions(), key, &value);
  if (st.IsNotFound()) {
    if (missing_entry_keys_.size() >= k_max_missing_keys) missing_entry_keys_.clear();
    missing_entry_keys_.insert(std::move(key));
    return not_found();
  }
  if (!st.ok()) return io(st, config_.path, "get entry " + std::string(name) + " in " + std::string(dir_path));
  Result<proto::InodeDesc> inode = decode_inode(value, [&] {
    return "rocksdb meta store " + config_.path + ": entry " + std::string(name) + " in " + std::string(dir_path);
  });
  if (inode.ok()) cache_entry(key, *inode);
  return inode;
}

Status RocksDbMetaStore::put_entry(std::string_view dir_path, std::string_view name, const proto::InodeDesc& inode) {
  if (!failure_.ok()) return failure_;
  const std::string key = entry_key(dir_path, name);
  // A miss of get_entry on this key with no write of it since stands for the read.
  bool is_new = missing_entry_keys_.erase(key) > 0;
  if (!is_new && !entry_cache_.contains(key)) {
    std::string existing;
    const rocksdb::Status found = db_->Get(rocksdb::ReadOptions(), key, &existing);
    if (!found.ok() && !found.IsNotFound()) {
      return io(found, config_.path, "get entry " + std::string(name) + " in " + std::string(dir_path));
    }
    is_new = found.IsNotFound();
  }
  rocksdb::WriteBatch batch;
  batch.Put(key, encode_inode(inode));
  std::uint64_t new_count = 0;
  if (is_new) {
    Result<std::uint64_t> count = read_count(dir_path);
    if (!count.ok()) return count.status();
    new_count = *count + 1;
    batch.Put(count_key(dir_path), u64_le(new_count));
  }
  const rocksdb::WriteOptions options = write_options();
  const rocksdb::Status st = db_->Write(options, &batch);
  if (!st.ok()) return io(st, config_.path, "put entry " + std::string(name) + " in " + std::string(dir_path));
  if (is_new) cache_count(dir_path, new_count);
  cache_entry(key, inode);
  return ok_status();
}

Status RocksDbMetaStore::remove_entry(std::string_view dir_path, std::string_view name) {
  if (!failure_.ok()) return failure_;
  const std::string key = entry_key(dir_path, name);
  if (!entry_cache_.contains(key)) {
    std::string existing;
    const rocksdb::Status found = db_->Get(rocksdb::ReadOptions(), key, &existing);
    if (found.IsNotFound()) {
      return error(StatusCode::not_found, "no entry " + std::string(name) + " in " + std::string(dir_path));
    }
    if (!found.ok()) return io(found, config_.path, "get entry " + std::string(name) + " in " + std::string(dir_path));
  }
  Result<std::uint64_t> count = read_count(dir_path);
  if (!count.ok()) return count.status();
  rocksdb::WriteBatch batch;
  batch.Delete(key);
  if (*count <= 1) {
    batch.Delete(count_key(dir_path));
  } else {
    batch.Put(count_key(dir_path), u64_le(*count - 1));
  }
  const rocksdb::WriteOptions options = write_options();
  const rocksdb::Status st = db_->Write(options, &batch);
  if (!st.ok()) return io(st, config_.path, "remove entry " + std::string(name) + " in " + std::string(dir_path));
  entry_cache_.erase(key);
  cache_count(dir_path, *count <= 1 ? 0 : *count - 1);
  return ok_status();
}

std::uint64_t RocksDbMetaStore::entry_count(std::string_view dir_path) const {
  Result<std::uint64_t> count = read_count(dir_path);
  if (!count.ok()) {
    fail(count.status());
    return 0;
  }
  return *count;
}

MetaListPage RocksDbMetaStore::list(std::string_view dir_path, std::uint64_t cookie, std::uint32_t max_entries) const {
  MetaListPage page;
  const std::string prefix = entry_prefix(dir_path);
  std::string start = prefix;
  append_be(start, cookie, 8);
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  std::uint64_t last_hash = 0;
  const std::size_t hash_at = prefix.size();
  for (it->Seek(start); it->Valid(); it->Next()) {
    const rocksdb::Slice key = it->key();
    if (!key.starts_with(prefix)) break;
    const std::string_view k(key.data(), key.size());
    if (k.size() < hash_at + 8) {
      fail(error(StatusCode::corrupt,
                 "rocksdb meta store " + config_.path + ": short entry key in " + std::string(dir_path)));
      return MetaListPage{};
    }
    const std::uint64_t hash = read_be(k, hash_at, 8);
    // Stop only between different hashes, so the cookie (next hash) is exact.
    if (page.entries.size() >= max_entries && hash != last_hash) {
      page.eof = false;
      page.next_cookie = hash;
      return page;
    }
    const std::string name(k.substr(hash_at + 8));
    Result<proto::InodeDesc> inode = decode_inode(std::string_view(it->value().data(), it->value().size()), [&] {
      return "rocksdb meta store " + config_.path + ": entry " + name + " in " + std::string(dir_path);
    });
    if (!inode.ok()) {
      fail(inode.status());
      return MetaListPage{};
    }
    page.entries.emplace_back(name, std::move(inode).value());
    last_hash = hash;
  }
  if (!it->status().ok()) {
    fail(io(it->status(), config_.path, "list " + std::string(dir_path)));
    return MetaListPage{};
  }
  page.eof = true;
  page.next_cookie = 0;
  return page;
}

std::uint64_t RocksDbMetaStore::load_counter() const {
  std::string value;
  const rocksdb::Status st = db_->Get(rocksdb::ReadOptions(), k_counter_key, &value);
  if (st.IsNotFound()) return 0;
  if (!st.ok()) {
    fail(io(st, config_.path, "get counter"));
    return 0;
  }
  Result<std::uint64_t> v = parse_u64_le(value, "rocksdb meta store " + config_.path + ": counter");
  if (!v.ok()) {
    fail(v.status());
    return 0;
  }
  return *v;
}

Status RocksDbMetaStore::store_counter(std::uint64_t value) {
  if (!failure_.ok()) return failure_;
  const rocksdb::WriteOptions options = write_options();
  const rocksdb::Status st = db_->Put(options, k_counter_key, u64_le(value));
  if (!st.ok()) return io(st, config_.path, "put counter");
  return ok_status();
}

Status RocksDbMetaStore::keep_reply(const KeptReply& reply) {
  if (!failure_.ok()) return failure_;
  const rocksdb::Status st = db_->Put(write_options(), reply_key(reply.seq), encode_kept_reply(reply));
  if (!st.ok()) return io(st, config_.path, "keep reply " + std::to_string(reply.seq));
  return ok_status();
}

Status RocksDbMetaStore::drop_replies_before(std::uint64_t seq) {
  if (!failure_.ok()) return failure_;
  const rocksdb::Status st =
      db_->DeleteRange(write_options(), db_->DefaultColumnFamily(), reply_key(0), reply_key(seq));
  if (!st.ok()) return io(st, config_.path, "drop replies before " + std::to_string(seq));
  return ok_status();
}

std::vector<KeptReply> RocksDbMetaStore::kept_replies() const {
  std::vector<KeptReply> out;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  for (it->Seek(std::string(1, k_reply_tag)); it->Valid(); it->Next()) {
    const std::string_view key(it->key().data(), it->key().size());
    if (key.empty() || key[0] != k_reply_tag) break;
    const std::string_view value(it->value().data(), it->value().size());
    if (key.size() != 9 || value.size() < k_reply_header_bytes) {
      fail(error(StatusCode::corrupt, "rocksdb meta store " + config_.path + ": a kept reply's key or value is " +
                                          "too short (" + std::to_string(key.size()) + " and " +
                                          std::to_string(value.size()) + " bytes)"));
      return {};
    }
    KeptReply r;
    r.seq = read_be(key, 1, 8);
    r.client.node = static_cast<NodeId>(read_be(value, 0, 4));
    r.client.service = static_cast<ServiceIndex>(read_be(value, 4, 4));
    r.request = read_be(value, 8, 8);
    r.frame.assign(value.substr(k_reply_header_bytes));
    out.push_back(std::move(r));
  }
  if (!it->status().ok()) {
    fail(io(it->status(), config_.path, "list kept replies"));
    return {};
  }
  return out;
}

std::vector<std::string> RocksDbMetaStore::list_dirs(std::string_view after, std::uint32_t max_dirs) const {
  // A directory holds a record ('D' path) or entries (its 'N' path count):
  // the two key ranges, each in path order, merged.
  std::vector<std::string> out;
  for (const char tag : {k_dir_tag, k_count_tag}) {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
    const std::string start = std::string(1, tag) + std::string(after);
    std::size_t taken = 0;
    for (it->Seek(start); it->Valid() && taken < max_dirs; it->Next()) {
      const rocksdb::Slice key = it->key();
      if (key.size() == 0 || key[0] != tag) break;
      std::string path(key.data() + 1, key.size() - 1);
      if (path == after) continue;
      out.push_back(std::move(path));
      ++taken;
    }
    if (!it->status().ok()) {
      fail(io(it->status(), config_.path, "list directories"));
      return {};
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (out.size() > max_dirs) out.resize(max_dirs);
  return out;
}

Status RocksDbMetaStore::clear() {
  if (!failure_.ok()) return failure_;
  // Every key starts with one of the tags, all upper-case letters.
  const rocksdb::WriteOptions options = write_options();
  const rocksdb::Status st = db_->DeleteRange(options, db_->DefaultColumnFamily(), "A", "[");
  dir_cache_.clear();
  count_cache_.clear();
  missing_entry_keys_.clear();
  entry_cache_.clear();
  if (!st.ok()) return io(st, config_.path, "clear");
  return ok_status();
}

}  // namespace sluice::hw
