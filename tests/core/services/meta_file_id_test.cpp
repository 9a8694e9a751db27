// MetaService file-id allocation in ranges: one durable counter write per
// range, ids unique and above every earlier id after a restart on the same
// store, and an allocation refused (not handed out) when the range cannot be
// persisted.
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/services/meta_service.hpp"
#include "tests/support/test_world.hpp"

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

// Sends one Mkdir per path on start and keeps the replies.
class MkdirProbe final : public Service {
 public:
  MkdirProbe(Env& env, Endpoint meta, std::vector<std::string> paths)
      : env_(env), meta_(meta), paths_(std::move(paths)) {}
  void start() override {
    RequestId rid = 1;
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
};

struct LifeResult {
  std::vector<proto::InodeReply> replies;
  int counter_writes = 0;
};

// One metadata server life on `disk`: mkdirs of `paths`, then the world ends (a crash).
LifeResult run_life(InMemoryMetaStore& disk, const std::vector<std::string>& paths, std::uint64_t range,
                    bool fail_counter = false) {
  TestWorld world;
  MetaServiceConfig config;
  config.ns.shard_count = 1;
  config.file_id_range = range;
  auto store = std::make_unique<SharedStore>(disk);
  store->fail_counter = fail_counter;
  SharedStore* seen = store.get();
  MetaService& meta = world.add_service<MetaService>(1, config, std::move(store));
  MkdirProbe& probe = world.add_service<MkdirProbe>(2, world.endpoint_of(meta), paths);
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
  const LifeResult first = run_life(disk, dirs("/a", 10), 4);
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
  const LifeResult second = run_life(disk, dirs("/b", 3), 4);
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
  const LifeResult run = run_life(disk, {"/x"}, 4, /*fail_counter=*/true);
  ASSERT_EQ(run.replies.size(), 1u);
  EXPECT_EQ(run.replies[0].status, StatusCode::io_error);
  EXPECT_NE(run.replies[0].error.find("reserving file ids"), std::string::npos) << run.replies[0].error;
  EXPECT_FALSE(disk.get_entry("/", "x").ok()) << "no entry with an unpersisted id";
  EXPECT_EQ(disk.load_counter(), 0u);
}

}  // namespace
}  // namespace sluice::testing
