// RocksDbMetaStore: the same answers as InMemoryMetaStore (a seeded
// differential run), durability across reopening, paging with cookies, and
// errors for damaged values. Databases live in temp dirs under /tmp, removed
// after each test.
#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <stdlib.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "core/common/rng.hpp"
#include "core/proto/codec.hpp"
#include "core/proto/crc32c.hpp"
#include "hw_backends/rocksdb/rocksdb_meta_store.hpp"

namespace sluice::hw {
namespace {

class TempDir {
 public:
  TempDir() {
    char templ[] = "/tmp/sluice-rocksdb-test-XXXXXX";
    path_ = ::mkdtemp(templ);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string db() const { return path_ + "/meta"; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

proto::InodeDesc file_inode(FileId id, std::uint64_t size) {
  proto::InodeDesc inode;
  inode.file_id = id;
  inode.type = proto::InodeType::file;
  inode.mode = 0644;
  inode.size_bytes = size;
  inode.mtime_ns = static_cast<std::int64_t>(id * 1000);
  inode.owner_shard = 1;
  inode.stripe.chunk_bytes = 512 * 1024;
  inode.stripe.targets = {static_cast<std::uint32_t>(id % 7), static_cast<std::uint32_t>(id % 5 + 7)};
  return inode;
}

proto::InodeDesc dir_inode(FileId id) {
  proto::InodeDesc inode;
  inode.file_id = id;
  inode.type = proto::InodeType::dir;
  inode.mode = 0755;
  inode.dir_layout.owner = 2;
  return inode;
}

std::unique_ptr<RocksDbMetaStore> open_store(const std::string& path, bool sync = true) {
  RocksDbMetaStoreConfig config;
  config.path = path;
  config.sync_writes = sync;
  Result<std::unique_ptr<RocksDbMetaStore>> store = RocksDbMetaStore::open(config);
  EXPECT_TRUE(store.ok()) << store.status().to_string();
  return store.ok() ? std::move(store).value() : nullptr;
}

// Every entry of a directory, by paging through list().
std::vector<std::pair<std::string, proto::InodeDesc>> list_all(const MetaStore& store, const std::string& dir,
                                                               std::uint32_t page_size) {
  std::vector<std::pair<std::string, proto::InodeDesc>> all;
  std::uint64_t cookie = 0;
  for (int pages = 0; pages < 100000; ++pages) {
    MetaListPage page = store.list(dir, cookie, page_size);
    all.insert(all.end(), page.entries.begin(), page.entries.end());
    if (page.eof) break;
    EXPECT_GT(page.next_cookie, cookie);
    cookie = page.next_cookie;
  }
  return all;
}

TEST(RocksDbMetaStore, AnswersLikeTheInMemoryStoreOnASeededRun) {
  TempDir tmp;
  auto db = open_store(tmp.db(), /*sync=*/false);  // the same logic; fsync adds nothing to this check
  ASSERT_TRUE(db);
  InMemoryMetaStore mem;
  Rng rng(20240611);
  const std::vector<std::string> dirs{"/", "/a", "/a/b", "/data"};
  std::vector<std::string> names;
  for (int i = 0; i < 40; ++i) names.push_back("f" + std::to_string(i));
  constexpr int k_steps = 3000;
  for (int step = 0; step < k_steps; ++step) {
    const std::string& dir = dirs[rng.uniform(dirs.size())];
    const std::string& name = names[rng.uniform(names.size())];
    const auto id = static_cast<FileId>(rng.uniform(1000) + 1);
    SCOPED_TRACE("step " + std::to_string(step) + " dir " + dir + " name " + name);
    switch (rng.uniform(9)) {
      case 0: ASSERT_EQ(db->put_dir(dir, dir_inode(id)).code(), mem.put_dir(dir, dir_inode(id)).code()); break;
      case 1: {
        const Status a = db->remove_dir(dir);
        const Status b = mem.remove_dir(dir);
        ASSERT_EQ(a.code(), b.code()) << a.to_string() << " vs " << b.to_string();
        ASSERT_EQ(a.message(), b.message());
        break;
      }
      case 2:
      case 3: {
        const auto inode = file_inode(id, rng.uniform(1 << 30));
        ASSERT_EQ(db->put_entry(dir, name, inode).code(), mem.put_entry(dir, name, inode).code());
        break;
      }
      case 4: {
        const Status a = db->remove_entry(dir, name);
        const Status b = mem.remove_entry(dir, name);
        ASSERT_EQ(a.code(), b.code());
        ASSERT_EQ(a.message(), b.message());
        break;
      }
      case 5: {
        Result<proto::InodeDesc> a = db->get_entry(dir, name);
        Result<proto::InodeDesc> b = mem.get_entry(dir, name);
        ASSERT_EQ(a.ok(), b.ok());
        if (a.ok()) {
          ASSERT_EQ(*a, *b);
        } else {
          ASSERT_EQ(a.status().message(), b.status().message());
        }
        break;
      }
      case 6: {
        Result<proto::InodeDesc> a = db->get_dir(dir);
        Result<proto::InodeDesc> b = mem.get_dir(dir);
        ASSERT_EQ(a.ok(), b.ok());
        if (a.ok()) {
          ASSERT_EQ(*a, *b);
        }
        break;
      }
      case 7: ASSERT_EQ(db->entry_count(dir), mem.entry_count(dir)); break;
      case 8: {
        const auto page_size = static_cast<std::uint32_t>(rng.uniform(7) + 1);
        const std::uint64_t cookie = rng.uniform(2) == 0 ? 0 : listing_hash(name);
        MetaListPage a = db->list(dir, cookie, page_size);
        MetaListPage b = mem.list(dir, cookie, page_size);
        ASSERT_EQ(a.entries, b.entries);
        ASSERT_EQ(a.eof, b.eof);
        ASSERT_EQ(a.next_cookie, b.next_cookie);
        break;
      }
    }
  }
  ASSERT_TRUE(db->store_counter(1234).ok());
  EXPECT_EQ(db->load_counter(), 1234u);
  EXPECT_TRUE(db->failure().ok());
}

TEST(RocksDbMetaStore, FindsEverythingAfterReopening) {
  TempDir tmp;
  constexpr int k_files = 500;
  {
    auto store = open_store(tmp.db());
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->put_dir("/data", dir_inode(2)).ok());
    for (int i = 0; i < k_files; ++i) {
      ASSERT_TRUE(store->put_entry("/data", "file" + std::to_string(i), file_inode(100 + i, i)).ok());
    }
    ASSERT_TRUE(store->remove_entry("/data", "file7").ok());
    ASSERT_TRUE(store->put_entry("/data", "file8", file_inode(9999, 1)).ok()) << "replace";
    ASSERT_TRUE(store->store_counter(100 + k_files).ok());
  }  // closed
  auto store = open_store(tmp.db());
  ASSERT_TRUE(store);
  Result<proto::InodeDesc> dir = store->get_dir("/data");
  ASSERT_TRUE(dir.ok());
  EXPECT_EQ(*dir, dir_inode(2));
  EXPECT_EQ(store->entry_count("/data"), static_cast<std::uint64_t>(k_files - 1));
  EXPECT_EQ(store->load_counter(), static_cast<std::uint64_t>(100 + k_files));
  EXPECT_EQ(store->get_entry("/data", "file7").status().code(), StatusCode::not_found);
  EXPECT_EQ(store->get_entry("/data", "file8")->file_id, 9999u);
  EXPECT_EQ(*store->get_entry("/data", "file42"), file_inode(142, 42));
  const auto all = list_all(*store, "/data", 64);
  EXPECT_EQ(all.size(), static_cast<std::size_t>(k_files - 1));
  std::set<std::string> unique;
  for (const auto& [name, inode] : all) unique.insert(name);
  EXPECT_EQ(unique.size(), all.size()) << "paging returns each entry once";
}

// Kept replies (MetaStore::keep_reply) come back after reopening, in seq
// order, as the in-memory store gives them; ranges dropped and clear()ed ones
// do not; one too short to be a reply turns the store failed.
TEST(RocksDbMetaStore, KeepsRepliesAcrossReopeningAsTheInMemoryStoreDoes) {
  TempDir tmp;
  InMemoryMetaStore memory;
  std::vector<KeptReply> kept;
  for (std::uint64_t seq = 1; seq <= 300; ++seq) {  // seqs past 255: big-endian keys keep the order
    kept.push_back(KeptReply{seq, Endpoint{static_cast<NodeId>(seq % 3), static_cast<ServiceIndex>(seq % 5)},
                             0xF000'0000'0000'0000ULL + seq, std::string(seq % 40, static_cast<char>(seq))});
  }
  {
    auto store = open_store(tmp.db(), /*sync=*/false);
    ASSERT_TRUE(store);
    for (const KeptReply& r : kept) {
      ASSERT_TRUE(store->keep_reply(r).ok());
      ASSERT_TRUE(memory.keep_reply(r).ok());
    }
    ASSERT_TRUE(store->drop_replies_before(51).ok());
    ASSERT_TRUE(memory.drop_replies_before(51).ok());
    ASSERT_TRUE(store->drop_replies_before(101).ok());  // a second range, next to the first
    ASSERT_TRUE(memory.drop_replies_before(101).ok());
  }
  auto store = open_store(tmp.db());
  ASSERT_TRUE(store);
  const std::vector<KeptReply> back = store->kept_replies();
  ASSERT_EQ(back.size(), 200u);
  EXPECT_EQ(back, memory.kept_replies());
  EXPECT_EQ(back.front(), kept[100]);
  EXPECT_EQ(back.back(), kept.back());
  ASSERT_TRUE(store->clear().ok());
  EXPECT_TRUE(store->kept_replies().empty());
  store.reset();
  {
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), tmp.db(), &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), std::string("R\0\0\0\0\0\0\0\1", 9), "short").ok());
    ASSERT_TRUE(db->Close().ok());
  }
  store = open_store(tmp.db());
  ASSERT_TRUE(store);
  EXPECT_TRUE(store->kept_replies().empty());
  EXPECT_EQ(store->failure().code(), StatusCode::corrupt);
  EXPECT_NE(store->failure().message().find("kept reply"), std::string::npos) << store->failure().message();
}

TEST(RocksDbMetaStore, PagingSurvivesInsertsBetweenPages) {
  TempDir tmp;
  auto store = open_store(tmp.db(), false);
  ASSERT_TRUE(store);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(store->put_entry("/d", "n" + std::to_string(i), file_inode(i, 0)).ok());
  MetaListPage first = store->list("/d", 0, 30);
  ASSERT_FALSE(first.eof);
  ASSERT_GE(first.entries.size(), 30u);
  // Inserts and removals between pages must not make a listed entry reappear.
  for (int i = 100; i < 150; ++i) ASSERT_TRUE(store->put_entry("/d", "n" + std::to_string(i), file_inode(i, 0)).ok());
  ASSERT_TRUE(store->remove_entry("/d", first.entries[0].first).ok());
  std::set<std::string> seen;
  for (const auto& [name, inode] : first.entries) seen.insert(name);
  std::uint64_t cookie = first.next_cookie;
  while (true) {
    MetaListPage page = store->list("/d", cookie, 30);
    for (const auto& [name, inode] : page.entries) {
      EXPECT_TRUE(seen.insert(name).second) << name << " twice";
    }
    if (page.eof) break;
    cookie = page.next_cookie;
  }
  // Every one of the original 100 that was not removed was seen.
  for (int i = 1; i < 100; ++i) {
    const std::string name = "n" + std::to_string(i);
    if (name != first.entries[0].first) {
      EXPECT_TRUE(seen.contains(name)) << name;
    }
  }
}

TEST(RocksDbMetaStore, RemoveDirRefusesWhileEntriesRemain) {
  TempDir tmp;
  auto store = open_store(tmp.db());
  ASSERT_TRUE(store);
  EXPECT_EQ(store->remove_dir("/x").code(), StatusCode::not_found);
  ASSERT_TRUE(store->put_dir("/x", dir_inode(5)).ok());
  ASSERT_TRUE(store->put_entry("/x", "a", file_inode(6, 1)).ok());
  const Status busy = store->remove_dir("/x");
  EXPECT_EQ(busy.code(), StatusCode::not_empty);
  EXPECT_EQ(busy.message(), "directory /x has 1 entries");
  ASSERT_TRUE(store->remove_entry("/x", "a").ok());
  EXPECT_EQ(store->entry_count("/x"), 0u);
  EXPECT_TRUE(store->remove_dir("/x").ok());
  EXPECT_EQ(store->get_dir("/x").status().code(), StatusCode::not_found);
}

// The write-through caches (directory records, entry counts, the last missed
// entry key) answer exactly what the database holds, checked against a
// reopened store whose caches start empty.
TEST(RocksDbMetaStore, CachesAnswerLikeTheDatabaseAcrossMutations) {
  TempDir tmp;
  {
    auto store = open_store(tmp.db(), false);
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->put_dir("/c", dir_inode(5)).ok());
    EXPECT_EQ(store->get_dir("/c")->file_id, 5u);
    ASSERT_TRUE(store->put_dir("/c", dir_inode(6)).ok());
    EXPECT_EQ(store->get_dir("/c")->file_id, 6u) << "a replaced record is not served stale";
    // A miss, then a put of another name: the miss does not stand for it.
    EXPECT_FALSE(store->get_entry("/c", "a").ok());
    ASSERT_TRUE(store->put_entry("/c", "b", file_inode(7, 0)).ok());
    EXPECT_EQ(store->entry_count("/c"), 1u);
    // A miss, then the create it precedes: counted once.
    EXPECT_FALSE(store->get_entry("/c", "a").ok());
    ASSERT_TRUE(store->put_entry("/c", "a", file_inode(8, 0)).ok());
    EXPECT_EQ(store->entry_count("/c"), 2u);
    // The same put again (the miss is used up) replaces, does not count.
    ASSERT_TRUE(store->put_entry("/c", "a", file_inode(9, 4)).ok());
    EXPECT_EQ(store->entry_count("/c"), 2u);
    EXPECT_EQ(store->get_entry("/c", "a")->size_bytes, 4u) << "a replaced entry is not served stale";
    // A miss, then a removal of another entry, then the put: still exact.
    EXPECT_FALSE(store->get_entry("/c", "z").ok());
    EXPECT_EQ(store->get_entry("/c", "b")->file_id, 7u);
    ASSERT_TRUE(store->remove_entry("/c", "b").ok());
    EXPECT_FALSE(store->get_entry("/c", "b").ok()) << "a removed entry is not served from the cache";
    EXPECT_EQ(store->remove_entry("/c", "b").code(), StatusCode::not_found);
    EXPECT_EQ(store->entry_count("/c"), 1u);
    ASSERT_TRUE(store->put_entry("/c", "z", file_inode(10, 0)).ok());
    EXPECT_EQ(store->entry_count("/c"), 2u);
    // Two creates in flight: both misses stay known until each name is written.
    EXPECT_FALSE(store->get_entry("/c", "m1").ok());
    EXPECT_FALSE(store->get_entry("/c", "m2").ok());
    EXPECT_FALSE(store->get_entry("/c", "m1").ok());
    ASSERT_TRUE(store->put_entry("/c", "m1", file_inode(20, 0)).ok());
    EXPECT_EQ(store->get_entry("/c", "m1")->file_id, 20u) << "a written key is no longer known missing";
    EXPECT_FALSE(store->get_entry("/c", "m2").ok());
    ASSERT_TRUE(store->put_entry("/c", "m2", file_inode(21, 0)).ok());
    EXPECT_EQ(store->get_entry("/c", "m2")->file_id, 21u);
    EXPECT_EQ(store->entry_count("/c"), 4u);
    ASSERT_TRUE(store->remove_entry("/c", "m1").ok());
    ASSERT_TRUE(store->remove_entry("/c", "m2").ok());
    EXPECT_FALSE(store->get_entry("/c", "m2").ok());
    ASSERT_TRUE(store->put_entry("/c", "m2", file_inode(22, 0)).ok());
    ASSERT_TRUE(store->remove_entry("/c", "m2").ok());
    EXPECT_EQ(store->entry_count("/c"), 2u);
    // A miss made stale by a removal of the same name's directory and entries.
    EXPECT_FALSE(store->get_entry("/d", "q").ok());
    ASSERT_TRUE(store->put_dir("/d", dir_inode(11)).ok());
    ASSERT_TRUE(store->put_entry("/d", "q", file_inode(12, 0)).ok());
    ASSERT_TRUE(store->remove_entry("/d", "q").ok());
    EXPECT_EQ(store->entry_count("/d"), 0u);
    ASSERT_TRUE(store->remove_dir("/d").ok());
    EXPECT_EQ(store->get_dir("/d").status().code(), StatusCode::not_found);
    ASSERT_TRUE(store->put_dir("/d", dir_inode(13)).ok());
    EXPECT_EQ(store->get_dir("/d")->file_id, 13u);
    EXPECT_EQ(store->entry_count("/d"), 0u);
  }
  auto reopened = open_store(tmp.db());
  ASSERT_TRUE(reopened);
  EXPECT_EQ(reopened->get_dir("/c")->file_id, 6u);
  EXPECT_EQ(reopened->entry_count("/c"), 2u);
  EXPECT_EQ(reopened->get_entry("/c", "a")->size_bytes, 4u);
  EXPECT_EQ(reopened->get_entry("/c", "z")->file_id, 10u);
  EXPECT_FALSE(reopened->get_entry("/c", "b").ok());
  EXPECT_EQ(reopened->get_dir("/d")->file_id, 13u);
  EXPECT_EQ(reopened->entry_count("/d"), 0u);
  EXPECT_EQ(list_all(*reopened, "/c", 10).size(), 2u);
}

TEST(RocksDbMetaStore, DamagedValuesAreCorruptNamingTheKey) {
  TempDir tmp;
  {
    auto store = open_store(tmp.db());
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->put_dir("/broken", dir_inode(1)).ok());
    ASSERT_TRUE(store->put_entry("/broken", "f", file_inode(2, 3)).ok());
  }
  {
    // Damage the stored values behind the store's back.
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), tmp.db(), &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), "D/broken", "not a frame").ok());
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), "Nbroken-count", "xyz").ok());
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
    it->Seek("E");
    ASSERT_TRUE(it->Valid());
    std::string value = it->value().ToString();
    value[value.size() - 1] = static_cast<char>(value.back() ^ 0x1);  // one flipped bit in the payload
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), it->key(), value).ok());
    it.reset();
    ASSERT_TRUE(db->Close().ok());
  }
  std::vector<std::string> logs;
  RocksDbMetaStoreConfig config;
  config.path = tmp.db();
  config.log = [&](std::string_view line) { logs.emplace_back(line); };
  Result<std::unique_ptr<RocksDbMetaStore>> opened = RocksDbMetaStore::open(config);
  ASSERT_TRUE(opened.ok());
  RocksDbMetaStore& store = **opened;
  const Status dir = store.get_dir("/broken").status();
  EXPECT_EQ(dir.code(), StatusCode::corrupt);
  EXPECT_NE(dir.message().find("directory /broken"), std::string::npos) << dir.message();
  const Status entry = store.get_entry("/broken", "f").status();
  EXPECT_EQ(entry.code(), StatusCode::corrupt);
  EXPECT_NE(entry.message().find("CRC32C"), std::string::npos) << entry.message();
  // A read failure where the interface has no Status turns the store failed.
  EXPECT_TRUE(store.failure().ok());
  EXPECT_TRUE(store.list("/broken", 0, 10).entries.empty());
  EXPECT_EQ(store.failure().code(), StatusCode::corrupt);
  ASSERT_FALSE(logs.empty());
  EXPECT_EQ(store.put_entry("/other", "g", file_inode(3, 1)).code(), StatusCode::corrupt) << "no writes after";
  EXPECT_EQ(store.entry_count("broken-count"), 0u);
}

// A stored value as an older wire version wrote it: InodeDesc without its
// last fields (version 5: nlink, symlink_target, rdev, atime_ns, ctime_ns
// and xattrs, 36 bytes when empty; version 6: rdev, the times and xattrs, 28
// bytes; version 7: the times and xattrs, 20 bytes; versions 8 to 10:
// today's InodeDesc), the header renumbered.
std::string as_version(std::string frame, int version) {
  frame.resize(frame.size() - (version == 5 ? 36 : version == 6 ? 28 : version == 7 ? 20 : 0));
  const auto put_le32 = [&frame](std::size_t at, std::uint32_t v) {
    for (std::size_t i = 0; i < 4; ++i) frame[at + i] = static_cast<char>((v >> (8 * i)) & 0xFF);
  };
  const auto crc_of = [&frame](std::size_t from, std::size_t n) {
    return proto::crc32c(std::span<const std::byte>(reinterpret_cast<const std::byte*>(frame.data()) + from, n));
  };
  frame[4] = static_cast<char>(version);
  frame[5] = 0;
  put_le32(8, static_cast<std::uint32_t>(frame.size() - proto::k_frame_header_bytes));
  put_le32(12, crc_of(proto::k_frame_header_bytes, frame.size() - proto::k_frame_header_bytes));
  put_le32(16, crc_of(0, 16));
  return frame;
}
std::string as_version5(std::string frame) { return as_version(std::move(frame), 5); }

TEST(RocksDbMetaStore, ReadsInodesWrittenBeforeLinksAndStillRefusesDamagedOnes) {
  TempDir tmp;
  {
    auto store = open_store(tmp.db());
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->put_dir("/old", dir_inode(1)).ok());
    ASSERT_TRUE(store->put_entry("/old", "f", file_inode(2, 3)).ok());
    ASSERT_TRUE(store->put_entry("/old", "g", file_inode(3, 4)).ok());
  }
  {
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), tmp.db(), &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    std::string value;
    ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), "D/old", &value).ok());
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), "D/old", as_version5(value)).ok());
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
    std::vector<std::pair<std::string, std::string>> entries;
    for (it->Seek("E"); it->Valid() && it->key().starts_with("E"); it->Next()) {
      entries.emplace_back(it->key().ToString(), as_version5(it->value().ToString()));
    }
    it.reset();
    ASSERT_EQ(entries.size(), 2u);
    entries[1].second[entries[1].second.size() - 1] ^= 0x1;  // one flipped bit in an old value's payload
    for (const auto& [key, old] : entries) ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), key, old).ok());
    ASSERT_TRUE(db->Close().ok());
  }
  auto store = open_store(tmp.db());
  ASSERT_TRUE(store);
  const Result<proto::InodeDesc> dir = store->get_dir("/old");
  ASSERT_TRUE(dir.ok()) << dir.status().to_string();
  EXPECT_EQ(*dir, dir_inode(1));
  const Result<proto::InodeDesc> f = store->get_entry("/old", "f");
  const Result<proto::InodeDesc> g = store->get_entry("/old", "g");
  const Result<proto::InodeDesc>& intact = f.ok() ? f : g;  // the listing hash orders them
  const Result<proto::InodeDesc>& damaged = f.ok() ? g : f;
  ASSERT_TRUE(intact.ok()) << intact.status().to_string();
  EXPECT_TRUE(*intact == file_inode(2, 3) || *intact == file_inode(3, 4));
  EXPECT_EQ(intact->nlink, 0u);  // before link counts: the metadata server reads it as one
  EXPECT_EQ(damaged.status().code(), StatusCode::corrupt);
  EXPECT_NE(damaged.status().message().find("CRC32C"), std::string::npos) << damaged.status().message();
}

TEST(RocksDbMetaStore, ReadsInodesWrittenBeforeSpecialFilesAndTimesWithTheirLinkCounts) {
  for (const int version : {6, 7, 8, 9, 10}) {
    TempDir tmp;
    proto::InodeDesc linked = file_inode(2, 3);
    linked.nlink = 2;
    if (version >= 7) linked.rdev = 0x0801;
    if (version == 8) {
      linked.atime_ns = 5;
      linked.ctime_ns = 6;
    }
    {
      auto store = open_store(tmp.db());
      ASSERT_TRUE(store);
      ASSERT_TRUE(store->put_dir("/old", dir_inode(1)).ok());
      ASSERT_TRUE(store->put_entry("/old", "f", linked).ok());
    }
    {
      rocksdb::DB* raw = nullptr;
      ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), tmp.db(), &raw).ok());
      std::unique_ptr<rocksdb::DB> db(raw);
      std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
      std::vector<std::pair<std::string, std::string>> entries;
      for (it->Seek("E"); it->Valid() && it->key().starts_with("E"); it->Next()) {
        entries.emplace_back(it->key().ToString(), as_version(it->value().ToString(), version));
      }
      it.reset();
      ASSERT_EQ(entries.size(), 1u);
      for (const auto& [key, old] : entries) ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), key, old).ok());
      ASSERT_TRUE(db->Close().ok());
    }
    auto store = open_store(tmp.db());
    ASSERT_TRUE(store);
    const Result<proto::InodeDesc> f = store->get_entry("/old", "f");
    ASSERT_TRUE(f.ok()) << f.status().to_string();
    EXPECT_EQ(*f, linked) << "version " << version;  // nlink kept (rdev from 7, times from 8; else 0: read as mtime)
  }
}

TEST(RocksDbMetaStore, RefusesAPathItCannotOpenAndASecondOpener) {
  TempDir tmp;
  EXPECT_EQ(RocksDbMetaStore::open(RocksDbMetaStoreConfig{}).status().code(), StatusCode::invalid_argument);
  RocksDbMetaStoreConfig under_file;
  under_file.path = tmp.path() + "/file/db";
  std::filesystem::create_directories(tmp.path());
  {
    std::FILE* f = std::fopen((tmp.path() + "/file").c_str(), "w");
    std::fclose(f);
  }
  EXPECT_EQ(RocksDbMetaStore::open(under_file).status().code(), StatusCode::unavailable);
  auto first = open_store(tmp.db());
  ASSERT_TRUE(first);
  RocksDbMetaStoreConfig same;
  same.path = tmp.db();
  Result<std::unique_ptr<RocksDbMetaStore>> second = RocksDbMetaStore::open(same);
  ASSERT_FALSE(second.ok()) << "RocksDB's LOCK file keeps a second store out";
  EXPECT_EQ(second.status().code(), StatusCode::unavailable);
  EXPECT_NE(second.status().message().find(tmp.db()), std::string::npos);
}

}  // namespace
}  // namespace sluice::hw
