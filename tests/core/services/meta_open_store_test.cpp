// MetaServiceConfig::open_store (issue 24 item 7): the service opens its
// store through it, a restart opens it again and finds the namespace, and a
// store that cannot be opened keeps the shard offline with the reason logged
// (never an empty in-memory namespace in its place).
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/services/meta_service.hpp"
#include "tests/support/test_world.hpp"

namespace sluice::testing {
namespace {

// A store that forwards to an InMemoryMetaStore outliving the service (the "disk").
class DiskStore final : public MetaStore {
 public:
  explicit DiskStore(InMemoryMetaStore& disk) : disk_(disk) {}
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
  Status store_counter(std::uint64_t value) override { return disk_.store_counter(value); }
  std::vector<std::string> list_dirs(std::string_view a, std::uint32_t m) const override {
    return disk_.list_dirs(a, m);
  }
  Status clear() override { return disk_.clear(); }

 private:
  InMemoryMetaStore& disk_;
};

// Sends one Mkdir on start and keeps the reply.
class OneMkdir final : public Service {
 public:
  OneMkdir(Env& env, Endpoint meta, std::string path) : env_(env), meta_(meta), path_(std::move(path)) {}
  void start() override {
    proto::Mkdir m;
    m.request_id = 1;
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
};

// One server life: the service opens its store with `open`, one mkdir of `path`.
std::optional<proto::InodeReply> life(const std::function<Result<std::unique_ptr<MetaStore>>()>& open,
                                      const std::string& path, std::vector<std::string>* logs = nullptr) {
  TestWorld world;
  MetaServiceConfig config;
  config.ns.shard_count = 1;
  config.open_store = open;
  MetaService& meta = world.add_service<MetaService>(1, config);
  OneMkdir& probe = world.add_service<OneMkdir>(2, world.endpoint_of(meta), path);
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
    return std::unique_ptr<MetaStore>(std::make_unique<DiskStore>(disk));
  };
  const auto first = life(open, "/kept");
  ASSERT_TRUE(first.has_value());
  ASSERT_EQ(first->status, StatusCode::ok) << first->error;
  EXPECT_TRUE(disk.get_entry("/", "kept").ok()) << "the directory went to the opened store";
  const auto second = life(open, "/kept");  // a restarted server, same store
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->status, StatusCode::already_exists) << "the restarted server found the namespace";
  EXPECT_EQ(opened, 2);
}

TEST(MetaOpenStore, AStoreThatCannotBeOpenedKeepsTheShardOfflineSayingWhy) {
  auto open = []() -> Result<std::unique_ptr<MetaStore>> {
    return error(StatusCode::unavailable, "the store's directory is locked by another process");
  };
  std::vector<std::string> logs;
  const auto reply = life(open, "/never", &logs);
  EXPECT_FALSE(reply.has_value() && reply->status == StatusCode::ok) << "an unopened store serves nothing";
  bool said = false;
  for (const std::string& l : logs) {
    said = said || (l.find("cannot open the metadata store") != std::string::npos &&
                    l.find("locked by another process") != std::string::npos);
  }
  EXPECT_TRUE(said) << "the reason is logged";
}

}  // namespace
}  // namespace sluice::testing
