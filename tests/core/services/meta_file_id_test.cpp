// MetaService and its store. File ids are allocated in ranges: one durable
// counter write per range, ids unique and above every earlier id after a
// restart on the same store, and an allocation refused (not handed out) when
// the range cannot be persisted. MetaServiceConfig::open_store opens the
// store, again at each restart.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/services/meta_service.hpp"
#include "det/test_world.hpp"

namespace sluice::testing {
namespace {

// Forwards to a store that outlives the service (the "disk"), counting
// counter writes; store_counter fails while fail_counter is set.
class SharedStore final : public MetaStore {
 public:
  explicit SharedStore(InMemoryMetaStore& disk) : disk_(disk) {}
  Result<proto::InodeDesc> get_dir(std::string_view d) const override { return disk_.get_dir(d); }
  Status put_dir(std::string_view d, const proto::InodeDesc& i) override { return disk_.put_dir(d, i); }
  Status remove_dir(std::string_view d) override { return disk_.remove_dir(d); }
  Result<proto::InodeDesc> get_entry(std::string_view d, std::string_view n) const override {
    return disk_.get_entry(d, n);
  }
  Status put_entry(std::string_view d, std::string_view n, const proto::InodeDesc& i) override {
    return disk_.put_entry(d, n, i);
  }
  Status remove_entry(std::string_view d, std::string_view n) override { return disk_.remove_entry(d, n); }
  std::uint64_t entry_count(std::string_view d) const override { return disk_.entry_count(d); }
  MetaListPage list(std::string_view d, std::uint64_t c, std::uint32_t m) const override { return disk_.list(d, c, m); }
  std::uint64_t load_counter() const override { return disk_.load_counter(); }
  std::vector<std::string> list_dirs(std::string_view a, std::uint32_t m) const override {
    return disk_.list_dirs(a, m);
  }
  Status keep_reply(const KeptReply& r) override { return disk_.keep_reply(r); }
  Status drop_replies_before(std::uint64_t seq) override { return disk_.drop_replies_before(seq); }
  std::vector<KeptReply> kept_replies() const override { return disk_.kept_replies(); }
  Status clear() override { return disk_.clear(); }
  Status store_counter(std::uint64_t value) override {
    if (fail_counter) return error(StatusCode::io_error, "test store: counter write refused");
    ++counter_writes;
    return disk_.store_counter(value);
  }

  bool fail_counter = false;
  int counter_writes = 0;

 private:
  InMemoryMetaStore& disk_;
};

// Sends one Mkdir per path on start, request ids from first_rid (a later
// life uses others: a request id the server kept a reply for is a resend,
// answered with that reply), and keeps the replies.
class MkdirProbe final : public Service {
 public:
  MkdirProbe(Env& env, Endpoint meta, std::vector<std::string> paths, RequestId first_rid)
      : env_(env), meta_(meta), paths_(std::move(paths)), first_rid_(first_rid) {}
  void start() override {
    RequestId rid = first_rid_;
    for (const std::string& path : paths_) {
      proto::Mkdir m;
      m.request_id = rid++;
      m.path = path;
      m.mode = 0755;
      ASSERT_TRUE(env_.send(meta_, m).ok());
    }
  }
  void on_event(Event& event) override {
    if (auto* d = std::get_if<Delivery>(&event)) {
      if (auto* r = std::get_if<proto::InodeReply>(&d->message)) replies.push_back(*r);
    }
  }
  std::string name() const override { return "mkdir-probe"; }

  std::vector<proto::InodeReply> replies;

 private:
  Env& env_;
  Endpoint meta_;
  std::vector<std::string> paths_;
  RequestId first_rid_;
};

struct LifeResult {
  std::vector<proto::InodeReply> replies;
  int counter_writes = 0;
};

// One metadata server life on `disk`: mkdirs of `paths`, then the world ends (a crash).
LifeResult run_life(InMemoryMetaStore& disk, const std::vector<std::string>& paths, std::uint64_t range,
                    RequestId first_rid, bool fail_counter = false) {
  TestWorld world;
  MetaServiceConfig config;
  config.ns.shard_count = 1;
  config.file_id_range = range;
  auto store = std::make_unique<SharedStore>(disk);
  store->fail_counter = fail_counter;
  SharedStore* seen = store.get();
  MetaService& meta = world.add_service<MetaService>(1, config, std::move(store));
  MkdirProbe& probe = world.add_service<MkdirProbe>(2, world.endpoint_of(meta), paths, first_rid);
  world.start();
  world.run_until([&] { return probe.replies.size() == paths.size(); });
  return LifeResult{probe.replies, seen->counter_writes};
}

std::vector<std::string> dirs(const std::string& prefix, int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

TEST(MetaFileIds, OneCounterWritePerRangeAndIdsNeverRepeatAcrossARestart) {
  InMemoryMetaStore disk;
  const LifeResult first = run_life(disk, dirs("/a", 10), 4, 1);
  ASSERT_EQ(first.replies.size(), 10u);
  std::set<FileId> ids;
  FileId max_first = 0;
  for (const auto& r : first.replies) {
    ASSERT_EQ(r.status, StatusCode::ok) << r.error;
    ids.insert(r.inode.file_id);
    max_first = std::max(max_first, r.inode.file_id);
  }
  EXPECT_EQ(ids.size(), 10u);
  EXPECT_EQ(first.counter_writes, 3) << "10 ids in ranges of 4";
  EXPECT_EQ(disk.load_counter(), 12u) << "the persisted end of the last range";

  // A restart on the same store: the rest of the last range is skipped, nothing repeats.
  const LifeResult second = run_life(disk, dirs("/b", 3), 4, 101);
  ASSERT_EQ(second.replies.size(), 3u);
  for (const auto& r : second.replies) {
    ASSERT_EQ(r.status, StatusCode::ok) << r.error;
    EXPECT_GT(r.inode.file_id, max_first);
    EXPECT_TRUE(ids.insert(r.inode.file_id).second);
  }
  EXPECT_EQ(second.counter_writes, 1);
  EXPECT_EQ(disk.load_counter(), 16u);
}

TEST(MetaFileIds, ARangeThatCannotBePersistedRefusesTheCreate) {
  InMemoryMetaStore disk;
  const LifeResult run = run_life(disk, {"/x"}, 4, 1, /*fail_counter=*/true);
  ASSERT_EQ(run.replies.size(), 1u);
  EXPECT_EQ(run.replies[0].status, StatusCode::io_error);
  EXPECT_NE(run.replies[0].error.find("reserving file ids"), std::string::npos) << run.replies[0].error;
  EXPECT_FALSE(disk.get_entry("/", "x").ok()) << "no entry with an unpersisted id";
  EXPECT_EQ(disk.load_counter(), 0u);
}

// The store keeps the replies of the newest reply_cache_entries mutating
// requests (MetaStore::keep_reply), dropping the oldest kept_reply_prune_batch
// at once, numbered on across a restart.
TEST(MetaKeptReplies, TheStoreKeepsTheNewestMutatingRepliesUpToTheCacheSize) {
  InMemoryMetaStore disk;
  for (RequestId first_rid : {RequestId{1}, RequestId{101}}) {
    TestWorld world;
    MetaServiceConfig config;
    config.ns.shard_count = 1;
    config.reply_cache_entries = 4;
    config.kept_reply_prune_batch = 3;
    MetaService& meta = world.add_service<MetaService>(1, config, std::make_unique<SharedStore>(disk));
    MkdirProbe& probe =
        world.add_service<MkdirProbe>(2, world.endpoint_of(meta), dirs("/k" + std::to_string(first_rid), 6), first_rid);
    world.start();
    world.run_until([&] { return probe.replies.size() == 6; });
    ASSERT_EQ(probe.replies.size(), 6u);
  }
  // 12 replies kept in all, seqs 1..12: at 7 kept the oldest 3 went (1..3), at
  // 10 the next 3 (4..6); 7..12 stay, the newest 4 among them.
  const std::vector<KeptReply> kept = disk.kept_replies();
  ASSERT_EQ(kept.size(), 6u);
  for (std::size_t i = 0; i < kept.size(); ++i) {
    EXPECT_EQ(kept[i].seq, 7 + i);
    EXPECT_EQ(kept[i].request, 101 + i) << "seqs 7..12 are the second life's requests";
  }
}

// MetaServiceConfig::open_store (issue 24 item 7): the service opens its
// store through it, a restart opens it again and finds the namespace, and a
// store that cannot be opened keeps the shard offline with the reason logged
// (never an empty in-memory namespace in its place).

// Sends one Mkdir on start and keeps the reply.
class OneMkdir final : public Service {
 public:
  OneMkdir(Env& env, Endpoint meta, std::string path, RequestId rid)
      : env_(env), meta_(meta), path_(std::move(path)), rid_(rid) {}
  void start() override {
    proto::Mkdir m;
    m.request_id = rid_;
    m.path = path_;
    m.mode = 0755;
    ASSERT_TRUE(env_.send(meta_, m).ok());
  }
  void on_event(Event& event) override {
    if (auto* d = std::get_if<Delivery>(&event)) {
      if (auto* r = std::get_if<proto::InodeReply>(&d->message)) reply = *r;
    }
  }
  std::string name() const override { return "one-mkdir"; }
  std::optional<proto::InodeReply> reply;

 private:
  Env& env_;
  Endpoint meta_;
  std::string path_;
  RequestId rid_;
};

// One server life: the service opens its store with `open`, one mkdir of `path`.
std::optional<proto::InodeReply> life(const std::function<Result<std::unique_ptr<MetaStore>>()>& open,
                                      const std::string& path, RequestId rid,
                                      std::vector<std::string>* logs = nullptr) {
  TestWorld world;
  MetaServiceConfig config;
  config.ns.shard_count = 1;
  config.open_store = open;
  MetaService& meta = world.add_service<MetaService>(1, config);
  OneMkdir& probe = world.add_service<OneMkdir>(2, world.endpoint_of(meta), path, rid);
  world.start();
  world.run_until([&] { return probe.reply.has_value(); }, 200'000);
  if (logs != nullptr) *logs = world.logs();
  return probe.reply;
}

TEST(MetaOpenStore, TheServiceKeepsItsNamespaceInTheOpenedStoreAndARestartFindsIt) {
  InMemoryMetaStore disk;
  int opened = 0;
  auto open = [&]() -> Result<std::unique_ptr<MetaStore>> {
    ++opened;
    return std::unique_ptr<MetaStore>(std::make_unique<SharedStore>(disk));
  };
  const auto first = life(open, "/kept", 1);
  ASSERT_TRUE(first.has_value());
  ASSERT_EQ(first->status, StatusCode::ok) << first->error;
  EXPECT_TRUE(disk.get_entry("/", "kept").ok()) << "the directory went to the opened store";
  const auto second = life(open, "/kept", 2);  // a restarted server, same store; a new request
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->status, StatusCode::already_exists) << "the restarted server found the namespace";
  EXPECT_EQ(opened, 2);
  // The first request resent (its reply lost to the crash, say): answered with
  // the reply the store kept, not executed again.
  const auto resent = life(open, "/kept", 1);
  ASSERT_TRUE(resent.has_value());
  EXPECT_EQ(resent->status, StatusCode::ok) << resent->error;
  EXPECT_EQ(resent->inode.file_id, first->inode.file_id);
  EXPECT_EQ(disk.kept_replies().size(), 2u) << "the mkdirs' replies; the resend's is not kept again";
}

TEST(MetaOpenStore, AStoreThatCannotBeOpenedKeepsTheShardOfflineSayingWhy) {
  auto open = []() -> Result<std::unique_ptr<MetaStore>> {
    return error(StatusCode::unavailable, "the store's directory is locked by another process");
  };
  std::vector<std::string> logs;
  const auto reply = life(open, "/never", 1, &logs);
  EXPECT_FALSE(reply.has_value() && reply->status == StatusCode::ok) << "an unopened store serves nothing";
  bool said = false;
  for (const std::string& l : logs) {
    said = said || (l.find("cannot open the metadata store") != std::string::npos &&
                    l.find("locked by another process") != std::string::npos);
  }
  EXPECT_TRUE(said) << "the reason is logged";
}

// Orphans (files unlinked while a client had them open) outlive the
// server's run that kept them only while a client holds them open again: one
// lease after the next start (the recovery window, in which clients' renewals
// hold their opens again: OpenLeases.*), those no client holds go, chunks
// and all. Before the window ends they stay, and the server serves meanwhile.
TEST(MetaOrphans, AStartRemovesTheOrphansThePreviousRunKeptOneLeaseLater) {
  InMemoryMetaStore disk;
  proto::InodeDesc orphan;
  orphan.file_id = 77;
  orphan.type = proto::InodeType::file;
  ASSERT_TRUE(disk.put_entry(k_orphans_dir, "77", orphan).ok());
  ASSERT_TRUE(disk.put_entry(k_orphans_dir, "78", orphan).ok());
  TestWorld world;
  MetaServiceConfig config;
  config.ns.shard_count = 1;
  MetaService& meta = world.add_service<MetaService>(1, config, std::make_unique<SharedStore>(disk));
  MkdirProbe& probe = world.add_service<MkdirProbe>(2, world.endpoint_of(meta), std::vector<std::string>{"/after"}, 1);
  world.start();
  ASSERT_TRUE(world.run_until([&] { return probe.replies.size() == 1; }));
  EXPECT_EQ(probe.replies[0].status, StatusCode::ok) << probe.replies[0].error;
  EXPECT_EQ(disk.entry_count(k_orphans_dir), 2u) << "kept through the recovery window";
  ASSERT_TRUE(world.run_until([&] { return disk.entry_count(k_orphans_dir) == 0; }));
  EXPECT_GE(world.now(), config.open_lease_ns);
  EXPECT_EQ(world.counter("meta.orphans_removed_at_start"), 2.0);
}

}  // namespace
}  // namespace sluice::testing
