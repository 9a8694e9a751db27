// hw::StorageBackendWrapper: every call of the StorageBackend contract
// reaches the wrapped backend with its arguments and its answer comes back
// unchanged; a subclass overrides only what it changes.
#include "hw_backends/storage_backend_wrapper.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace sluice::hw {
namespace {

// Answers each call with something recognisable and records its name.
class ScriptedBackend final : public StorageBackend {
 public:
  explicit ScriptedBackend(bool* destroyed = nullptr) : destroyed_(destroyed) { caps_.max_queue_depth = 5; }
  ~ScriptedBackend() override {
    if (destroyed_ != nullptr) *destroyed_ = true;
  }
  std::vector<std::string>& calls() { return calls_; }

  std::string_view name() const override { return "scripted"; }
  const StorageCapabilities& capabilities() const override { return caps_; }
  std::string io_path() const override { return "buffered (scripted)"; }
  StorageStats stats() const override {
    StorageStats s;
    s.sync_writes = 4;
    return s;
  }
  Status register_buffers(std::span<const std::span<std::byte>> buffers) override {
    calls_.push_back("register_buffers " + std::to_string(buffers.size()));
    return ok_status();
  }
  Status submit(const StorageRequest& request) override {
    calls_.push_back("submit " + std::to_string(request.cookie));
    return error(StatusCode::again, "queue full");
  }
  std::size_t poll(std::vector<StorageCompletion>& out, std::size_t max_completions) override {
    calls_.push_back("poll " + std::to_string(max_completions));
    StorageCompletion c;
    c.cookie = 9;
    out.push_back(c);
    return 1;
  }
  int completion_fd() const override { return 321; }

 private:
  bool* destroyed_;
  StorageCapabilities caps_;
  std::vector<std::string> calls_;
};

TEST(StorageBackendWrapper, ForwardsEveryCallAndItsAnswer) {
  auto inner = std::make_unique<ScriptedBackend>();
  ScriptedBackend& seen = *inner;
  StorageBackendWrapper w(std::move(inner));
  EXPECT_EQ(w.name(), "scripted");
  EXPECT_EQ(&w.capabilities(), &seen.capabilities());
  EXPECT_EQ(w.io_path(), "buffered (scripted)");
  EXPECT_EQ(w.stats().sync_writes, 4u);
  EXPECT_EQ(w.completion_fd(), 321);
  std::vector<std::byte> bytes(8);
  const std::vector<std::span<std::byte>> buffers{bytes, bytes};
  EXPECT_TRUE(w.register_buffers(buffers).ok());
  StorageRequest request;
  request.cookie = 7;
  EXPECT_EQ(w.submit(request).code(), StatusCode::again);
  std::vector<StorageCompletion> out;
  EXPECT_EQ(w.poll(out, 3), 1u);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].cookie, 9u);
  EXPECT_EQ(seen.calls(), (std::vector<std::string>{"register_buffers 2", "submit 7", "poll 3"}));
}

// Overrides one call and drops the inner backend before its own members go,
// as FaultyStorageBackend does; the other calls still reach the inner backend.
class Renamed final : public StorageBackendWrapper {
 public:
  Renamed(std::unique_ptr<StorageBackend> inner, const bool* inner_destroyed, bool* gone_before_members)
      : StorageBackendWrapper(std::move(inner)),
        inner_destroyed_(inner_destroyed),
        gone_before_members_(gone_before_members) {}
  ~Renamed() override {
    destroy_inner();
    *gone_before_members_ = *inner_destroyed_;
  }
  std::string_view name() const override { return "renamed"; }

 private:
  const bool* inner_destroyed_;
  bool* gone_before_members_;
};

TEST(StorageBackendWrapper, ASubclassChangesOnlyWhatItOverrides) {
  bool inner_destroyed = false;
  bool gone_before_members = false;
  auto inner = std::make_unique<ScriptedBackend>(&inner_destroyed);
  ScriptedBackend& seen = *inner;
  {
    Renamed w(std::move(inner), &inner_destroyed, &gone_before_members);
    EXPECT_EQ(w.name(), "renamed");
    EXPECT_EQ(w.io_path(), "buffered (scripted)");
    StorageRequest request;
    request.cookie = 1;
    EXPECT_EQ(w.submit(request).code(), StatusCode::again);
    EXPECT_EQ(seen.calls(), std::vector<std::string>{"submit 1"});
    EXPECT_FALSE(inner_destroyed);
  }
  EXPECT_TRUE(gone_before_members) << "destroy_inner() did not destroy the inner backend";
}

}  // namespace
}  // namespace sluice::hw
