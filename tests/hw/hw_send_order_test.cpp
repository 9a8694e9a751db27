// HwEnv's outbox (issue 20, P7: a loop's messages leave together at the end
// of its turn) keeps the order of everything one service sends. Found by
// mount.stress (stress-ng hdd read stale bytes) when only messages to other
// nodes waited: A sends X to C on another node, then Y to B on its own node;
// B, woken by Y at once, sends Z to C, and Z overtook X. Here A's handler
// keeps its turn going for 50 ms after sending (B has long handled Y by then
// when Y is not held back), and C must see every X before Z.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "hw/hw_env.hpp"
#include "hw/hw_world.hpp"

namespace sluice::hw {
namespace {

constexpr std::uint64_t k_xs = 20;
constexpr std::uint64_t k_z = 1'000;  // the heartbeat sequence number B's message carries
constexpr auto k_wait = std::chrono::seconds(10);

// C: records the sequence numbers of the heartbeats it receives, in order.
class Recorder final : public Service {
 public:
  explicit Recorder(Env& env) : env_(env) {}
  void start() override {}
  void on_event(Event& event) override {
    auto* d = std::get_if<Delivery>(&event);
    if (d == nullptr) return;
    if (const auto* h = std::get_if<proto::Heartbeat>(&d->message)) {
      std::lock_guard lock(mu_);
      seen_.push_back(h->sequence);
    }
  }
  std::string name() const override { return "recorder"; }
  std::vector<std::uint64_t> seen() const {
    std::lock_guard lock(mu_);
    return seen_;
  }

 private:
  Env& env_;
  mutable std::mutex mu_;
  std::vector<std::uint64_t> seen_;
};

// B: on any heartbeat, sends heartbeat k_z to C.
class Relay final : public Service {
 public:
  Relay(Env& env, Endpoint to) : env_(env), to_(to) {}
  void start() override {}
  void on_event(Event& event) override {
    if (!std::holds_alternative<Delivery>(event)) return;
    proto::Heartbeat z;
    z.sequence = k_z;
    env_.send(to_, std::move(z)).ignore();
  }
  std::string name() const override { return "relay"; }

 private:
  Env& env_;
  Endpoint to_;
};

// A: on start, k_xs heartbeats to C, then one to B, then 50 ms more of its turn.
class Sender final : public Service {
 public:
  Sender(Env& env, Endpoint c, Endpoint b) : env_(env), c_(c), b_(b) {}
  void start() override {
    for (std::uint64_t i = 0; i < k_xs; ++i) {
      proto::Heartbeat x;
      x.sequence = i;
      env_.send(c_, std::move(x)).ignore();
    }
    env_.send(b_, proto::Heartbeat{}).ignore();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  void on_event(Event&) override {}
  std::string name() const override { return "sender"; }

 private:
  Env& env_;
  Endpoint c_;
  Endpoint b_;
};

// A two-node world's config with its storage under the test's temp dir
// (removed when the test's Scratch goes).
struct Scratch {
  explicit Scratch(const std::string& name) : root(::testing::TempDir() + name) {
    config.storage_root = root;
    config.node_memory_limit_bytes = 64ULL << 20;
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(root, ec);
  }
  std::string root;
  HwWorldConfig config;
};

// Waits (bounded by k_wait) until done() holds.
template <typename F>
void wait_until(F done) {
  const auto deadline = std::chrono::steady_clock::now() + k_wait;
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

TEST(HwSendOrder, AMessageToThisNodeDoesNotLetItsConsequencesOvertakeEarlierOnes) {
  Scratch scratch("sluice-send-order");
  HwWorld world(scratch.config);
  Recorder& c = world.add_service<Recorder>(1);
  Relay& b = world.add_service<Relay>(0, world.endpoint_of(c));
  Sender& a = world.add_service<Sender>(0, world.endpoint_of(c), world.endpoint_of(b));
  world.defer_start(a);
  ASSERT_TRUE(world.start().ok());
  world.start_service(a);
  wait_until([&] { return c.seen().size() >= k_xs + 1; });
  const std::vector<std::uint64_t> seen = c.seen();
  world.stop();
  ASSERT_EQ(seen.size(), k_xs + 1);
  for (std::uint64_t i = 0; i < k_xs; ++i) EXPECT_EQ(seen[i], i) << "at " << i;
  EXPECT_EQ(seen.back(), k_z) << "B's message, sent because of A's last one, overtook A's earlier ones";
}

// The before-send hook (HwWorld::before_messages_leave: a metadata
// server's group commit) runs before the turn's messages leave: the
// receiver sees the hook's mark when the message arrives.
std::atomic<int> g_commits{0};

class MarkChecker final : public Service {
 public:
  explicit MarkChecker(Env& env) : env_(env) {}
  void start() override {}
  void on_event(Event& event) override {
    if (!std::holds_alternative<Delivery>(event)) return;
    marks_seen.push_back(g_commits.load());
  }
  std::string name() const override { return "checker"; }
  std::vector<int> marks_seen;  // read through HwWorld::call

 private:
  Env& env_;
};

class TwoSends final : public Service {
 public:
  TwoSends(Env& env, Endpoint local, Endpoint remote) : env_(env), local_(local), remote_(remote) {}
  void start() override {
    env_.send(local_, proto::Heartbeat{}).ignore();
    env_.send(remote_, proto::Heartbeat{}).ignore();
  }
  void on_event(Event&) override {}
  std::string name() const override { return "two_sends"; }

 private:
  Env& env_;
  Endpoint local_;
  Endpoint remote_;
};

TEST(HwSendOrder, TheBeforeSendHookRunsBeforeTheTurnsMessagesLeave) {
  Scratch scratch("sluice-before-send");
  HwWorld world(scratch.config);
  MarkChecker& here = world.add_service<MarkChecker>(0);
  MarkChecker& there = world.add_service<MarkChecker>(1);
  TwoSends& sender = world.add_service<TwoSends>(0, world.endpoint_of(here), world.endpoint_of(there));
  world.before_messages_leave(sender, [](Service& now) {
    EXPECT_EQ(now.name(), "two_sends");
    ++g_commits;
  });
  ASSERT_TRUE(world.start().ok());
  const auto seen = [&](MarkChecker& c) { return world.call(c, [&c] { return c.marks_seen; }); };
  wait_until([&] { return !seen(here).empty() && !seen(there).empty(); });
  EXPECT_EQ(seen(here), std::vector<int>{1}) << "the message to this node left before the hook ran";
  EXPECT_EQ(seen(there), std::vector<int>{1}) << "the message to the other node left before the hook ran";
  EXPECT_EQ(g_commits.load(), 1) << "one turn, one call";
  world.stop();
}

}  // namespace
}  // namespace sluice::hw
