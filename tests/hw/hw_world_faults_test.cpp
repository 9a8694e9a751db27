// What HwWorld offers tests of faults and of whole clusters: the EventGate
// that lets a thread look at every service between events, the message hook
// (drop / delay / duplicate), kill, revive and restart of one service, services added
// after start(), run_until / run_until_idle with their bounds, and
// HwSuiteWorld's clean-up. Waits are bounded waits for the world's progress.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "hw/hw_world.hpp"
#include "tests/core/services/scripted_workload.hpp"
#include "tests/hw/hw_suite_world.hpp"

namespace sluice::hw {
namespace {

constexpr TimeNs k_max_wait_ns = 20 * k_ns_per_s;  // bound on one wait: a hang becomes a failure
constexpr std::uint64_t k_any_events = 1'000'000'000;

class ScratchDir {
 public:
  ScratchDir() {
    char templ[] = "/tmp/sluice-hwfaults-test-XXXXXX";
    path_ = ::mkdtemp(templ);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Records what it is told; on_start runs as its start().
class Recorder final : public Service {
 public:
  explicit Recorder(Env& env, std::function<void(Env&)> on_start = {}) : env_(env), on_start_(std::move(on_start)) {}
  void start() override {
    if (on_start_) on_start_(env_);
  }
  void on_event(Event& event) override {
    if (auto* c = std::get_if<Completion>(&event)) {
      completed.push_back(c->op);
    } else {
      auto& d = std::get<Delivery>(event);
      const auto* ack = std::get_if<proto::Ack>(&d.message);
      acks.push_back(ack != nullptr ? ack->request_id : 0);
      acked_at_ns.push_back(env_.now());
    }
  }
  std::string name() const override { return "recorder"; }
  Env& env() { return env_; }

  std::vector<OpId> completed;
  std::vector<std::uint64_t> acks;
  std::vector<TimeNs> acked_at_ns;

 private:
  Env& env_;
  std::function<void(Env&)> on_start_;
};

std::size_t thread_count() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

TEST(EventGate, NoHandlerIsInsideWhileTheExclusiveFunctionRuns) {
  EventGate gate;
  std::atomic<int> inside{0};
  std::atomic<bool> overlap{false};
  constexpr int k_handler_rounds = 20'000;
  std::vector<std::thread> handlers;
  for (int t = 0; t < 3; ++t) {
    handlers.emplace_back([&] {
      EventGate::Slot slot;
      gate.add(&slot);
      for (int i = 0; i < k_handler_rounds; ++i) {
        gate.enter(slot);
        inside.fetch_add(1);
        inside.fetch_sub(1);
        gate.leave(slot);
      }
      gate.remove(&slot);
    });
  }
  int looks = 0;
  for (int i = 0; i < 200; ++i) {
    gate.exclusive([&] {
      if (inside.load() != 0) overlap = true;
      ++looks;
    });
  }
  for (auto& h : handlers) h.join();
  EXPECT_FALSE(overlap.load());
  EXPECT_EQ(looks, 200);
}

TEST(ServiceLoopDeath, ADeadLoopDropsEventsAndStaleCompletionsStayDeadAfterRevive) {
  Progress progress;
  ServiceLoop loop(ServiceLoop::Clock::now(), &progress);
  HwWorld world(HwWorldConfig{});  // only to give the recorder an Env; its own loop is not used
  Recorder& recorder = world.add_service<Recorder>(1);
  loop.bind(&recorder);
  loop.start();
  auto sync = [&loop] {  // every item pushed before has been handled when this returns
    std::promise<void> p;
    loop.run([&p] { p.set_value(); });
    p.get_future().wait();
  };
  loop.kill(5);
  EXPECT_FALSE(loop.alive());
  Completion early;
  early.op = 3;
  loop.push(Event(early));
  loop.push(Event(Delivery{Endpoint{2, 0}, proto::Ack{1, StatusCode::ok, {}}}));
  loop.add_timer(0, 9);  // a timer of the dead service: never fires
  sync();
  EXPECT_EQ(loop.dropped_deliveries(), 1u);
  loop.revive();
  EXPECT_TRUE(loop.alive());
  loop.push(Event(early));  // started before the death: stays dropped
  Completion late;
  late.op = 7;
  loop.note_started(7);  // the Env handed it out (the loop's ledger checks every completion it delivers)
  loop.push(Event(late));
  loop.push(Event(Delivery{Endpoint{2, 0}, proto::Ack{2, StatusCode::ok, {}}}));
  sync();
  loop.stop();
  EXPECT_EQ(loop.dropped_deliveries(), 1u);  // alive again: the second message was delivered
  EXPECT_EQ(recorder.completed, std::vector<OpId>{7});
  EXPECT_EQ(recorder.acks, std::vector<std::uint64_t>{2});
}

// The Env contract at HwWorld's seam: a completion the service's Env never
// handed out (or one delivered twice) aborts with the reason, in every build.
TEST(ServiceLoopDeath, ACompletionOfNoOperationHandedOutAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        Progress progress;
        ServiceLoop loop(ServiceLoop::Clock::now(), &progress);
        HwWorld world(HwWorldConfig{});
        Recorder& recorder = world.add_service<Recorder>(1);
        loop.bind(&recorder);
        loop.start();
        Completion stray;
        stray.op = 42;
        loop.push(Event(stray));
        std::promise<void> p;
        loop.run([&p] { p.set_value(); });
        p.get_future().wait();
      },
      "a completion of op 42, which is not outstanding");
}

class HwWorldFaults : public ::testing::Test {
 protected:
  HwWorldConfig config(MessageHook hook = {}) {
    HwWorldConfig c;
    c.storage_root = dir_.path() + "/storage";
    c.node_memory_limit_bytes = 64ULL << 20;
    c.message_hook = std::move(hook);
    return c;
  }
  ScratchDir dir_;
};

TEST_F(HwWorldFaults, TheHookDropsDelaysAndDuplicatesMessages) {
  constexpr TimeNs k_delay_ns = 20 * k_ns_per_ms;
  HwWorld world(config([](const Endpoint&, const Endpoint&, const proto::Message& m) {
    MessageFate fate;
    const auto* ack = std::get_if<proto::Ack>(&m);
    if (ack == nullptr) return fate;
    if (ack->request_id == 1) fate.drop = true;
    if (ack->request_id == 2) fate.extra_delay_ns = k_delay_ns;
    if (ack->request_id == 3) fate.copies = 2;
    if (ack->request_id == 4) fate.copies = 1000;  // clamped
    return fate;
  }));
  Recorder& sender = world.add_service<Recorder>(1);
  Recorder& near = world.add_service<Recorder>(1);  // same node: no socket
  Recorder& far = world.add_service<Recorder>(2);
  TimeNs sent_at_ns = 0;
  for (Recorder* to : {&near, &far}) {
    const Endpoint dest = world.endpoint_of(*to);
    ASSERT_TRUE(world.start().ok());
    world.call(sender, [&] {
      sent_at_ns = sender.env().now();
      for (std::uint64_t id = 1; id <= 4; ++id) {
        EXPECT_TRUE(sender.env().send(dest, proto::Ack{id, StatusCode::ok, {}}).ok());
      }
    });
    const std::size_t expected = 0 + 1 + 2 + k_max_message_copies;
    ASSERT_TRUE(world.run_until([&] { return to->acks.size() == expected; }, k_any_events, k_max_wait_ns));
    world.run_until_idle(k_any_events, k_max_wait_ns);
    EXPECT_TRUE(world.idle());
    world.call(*to, [&] {
      EXPECT_EQ(to->acks.size(), expected);  // nothing more came after the wait
      EXPECT_EQ(std::count(to->acks.begin(), to->acks.end(), 1u), 0);
      EXPECT_EQ(std::count(to->acks.begin(), to->acks.end(), 3u), 2);
      EXPECT_EQ(std::count(to->acks.begin(), to->acks.end(), 4u), static_cast<long>(k_max_message_copies));
      const auto delayed = std::find(to->acks.begin(), to->acks.end(), 2u);
      ASSERT_NE(delayed, to->acks.end());
      EXPECT_GE(to->acked_at_ns[static_cast<std::size_t>(delayed - to->acks.begin())] - sent_at_ns, k_delay_ns);
    });
  }
  EXPECT_EQ(world.messages_sent(), 8u);
  EXPECT_EQ(world.messages_dropped(), 2u);
}

TEST_F(HwWorldFaults, AKilledServiceHearsNothingAndForgetsItsTimersUntilRevived) {
  HwWorld world(config());
  OpId old_timer = 0;
  Recorder& sender = world.add_service<Recorder>(1);
  Recorder& victim = world.add_service<Recorder>(2, [&](Env& env) { old_timer = env.timer(30 * k_ns_per_ms); });
  ASSERT_TRUE(world.start().ok());
  const Endpoint v = world.endpoint_of(victim);
  world.call(victim, [] {});  // its start() ran: the timer is set
  world.kill(v);
  EXPECT_FALSE(world.alive(v));
  world.call(sender, [&] { EXPECT_TRUE(sender.env().send(v, proto::Ack{1, StatusCode::ok, {}}).ok()); });
  ASSERT_TRUE(world.run_until([&] { return world.messages_dropped() == 1; }, k_any_events, k_max_wait_ns));
  world.revive(v);
  EXPECT_TRUE(world.alive(v));
  const OpId new_timer = world.call(victim, [&] { return victim.env().timer(60 * k_ns_per_ms); });
  world.call(sender, [&] { EXPECT_TRUE(sender.env().send(v, proto::Ack{2, StatusCode::ok, {}}).ok()); });
  ASSERT_TRUE(
      world.run_until([&] { return !victim.completed.empty() && !victim.acks.empty(); }, k_any_events, k_max_wait_ns));
  world.call(victim, [&] {
    EXPECT_EQ(victim.completed, std::vector<OpId>{new_timer});  // the 30 ms timer of the dead one never came
    EXPECT_NE(old_timer, new_timer);
    EXPECT_EQ(victim.acks, std::vector<std::uint64_t>{2});
  });
  world.kill(Endpoint{77, 77});  // unknown: nothing happens
  world.revive(Endpoint{77, 77});
  EXPECT_FALSE(world.alive(Endpoint{77, 77}));
}

// Registers each instance it builds, so a test can reach the fresh one a restart makes.
class Incarnation final : public Service {
 public:
  Incarnation(Env& env, std::shared_ptr<std::vector<Incarnation*>> all) : env_(env) { all->push_back(this); }
  void start() override { first_timer = env_.timer(30 * k_ns_per_ms); }
  void on_event(Event& event) override {
    if (auto* c = std::get_if<Completion>(&event)) completed.push_back(c->op);
    if (std::holds_alternative<Delivery>(event)) ++deliveries;
  }
  std::string name() const override { return "incarnation"; }

  OpId first_timer = 0;
  std::vector<OpId> completed;
  int deliveries = 0;

 private:
  Env& env_;
};

class MoveOnlyArg final : public Service {
 public:
  MoveOnlyArg(Env&, std::unique_ptr<int>) {}
  void start() override {}
  void on_event(Event&) override {}
  std::string name() const override { return "move-only"; }
};

TEST_F(HwWorldFaults, ARestartedServiceIsAFreshInstanceAtTheSameEndpoint) {
  HwWorld world(config());
  auto all = std::make_shared<std::vector<Incarnation*>>();
  Recorder& sender = world.add_service<Recorder>(1);
  Incarnation& first = world.add_service<Incarnation>(2, all);
  ASSERT_TRUE(world.start().ok());
  const Endpoint v = world.endpoint_of(first);
  world.call(first, [] {});  // its start() ran: its 30 ms timer is set
  ASSERT_TRUE(world.restart(v).ok());
  ASSERT_EQ(all->size(), 2u);
  Incarnation& fresh = *all->back();
  EXPECT_EQ(world.endpoint_of(fresh), v);
  EXPECT_TRUE(world.alive(v));
  world.call(sender, [&] { EXPECT_TRUE(sender.env().send(v, proto::Ack{1, StatusCode::ok, {}}).ok()); });
  // The fresh instance started (its own timer), hears messages, and never
  // gets the completion of the timer its predecessor set.
  ASSERT_TRUE(
      world.run_until([&] { return fresh.deliveries == 1 && !fresh.completed.empty(); }, k_any_events, k_max_wait_ns));
  world.run_for(50 * k_ns_per_ms);
  world.call(fresh, [&] {
    EXPECT_EQ(fresh.completed, std::vector<OpId>{fresh.first_timer});
    EXPECT_NE(fresh.first_timer, first.first_timer);
  });
  EXPECT_TRUE(first.completed.empty());
  EXPECT_EQ(first.deliveries, 0);
  // What cannot be restarted says why.
  MoveOnlyArg& stuck = world.add_service<MoveOnlyArg>(3, std::make_unique<int>(7));
  const Status refused = world.restart(world.endpoint_of(stuck));
  EXPECT_EQ(refused.code(), StatusCode::unavailable);
  EXPECT_NE(refused.message().find("cannot be copied"), std::string::npos) << refused.to_string();
  EXPECT_EQ(world.restart(Endpoint{77, 77}).code(), StatusCode::not_found);
}

TEST_F(HwWorldFaults, ServicesAddedAfterStartRunAtOnceAndRunsAreBounded) {
  HwWorld world(config());
  Recorder& first = world.add_service<Recorder>(1);
  ASSERT_TRUE(world.start().ok());
  const Endpoint dest = world.endpoint_of(first);
  // A new node and a new service, after start(): it starts and can talk.
  world.add_service<Recorder>(5, [dest](Env& env) { env.send(dest, proto::Ack{42, StatusCode::ok, {}}).ignore(); });
  ASSERT_TRUE(world.run_until([&] { return first.acks.size() == 1; }, k_any_events, k_max_wait_ns));
  world.call(first, [&] { EXPECT_EQ(first.acks, std::vector<std::uint64_t>{42}); });
  const std::uint64_t before = world.events_handled();
  EXPECT_GT(before, 0u);
  // Bounds: a condition that never holds ends at the event or the time bound.
  EXPECT_FALSE(world.run_until([] { return false; }, 0, k_max_wait_ns));
  EXPECT_FALSE(world.run_until([] { return false; }, k_any_events, 20 * k_ns_per_ms));
  world.run_until_idle(k_any_events, k_max_wait_ns);
  EXPECT_TRUE(world.idle());
  EXPECT_TRUE(world.samples("nothing.sampled").empty());
}

}  // namespace
}  // namespace sluice::hw

namespace sluice::testing {
namespace {

// create /f, write 1 MiB of a pattern, close.
Scripted::Script write_one_file() {
  return [](WorkloadContext& ctx, std::function<void(Status)> done) {
    ctx.client.create("/f", CreateOptions{}, [&ctx, done](Result<proto::InodeDesc> inode) {
      if (!inode.ok()) return done(inode.status());
      MemHandle buf = ctx.env.alloc(MemKind::host, 0, k_mib).value();
      ctx.ops.expect(ctx.env.fill(buf, PatternSpec{3, 0}), [&ctx, done, buf, inode = *inode](Completion&) {
        ctx.client.write(inode, 0, buf, false, [&ctx, done](Result<std::uint64_t> w) {
          if (!w.ok()) return done(w.status());
          ctx.client.close("/f", k_mib, [done](Status s) { done(s); });
        });
      });
    });
  };
}

TEST(HwSuiteWorldCluster, WritesRealChunkFilesAndLeavesNoFilesOrThreadsBehind) {
  // A thread started and joined first: runtimes that start a helper thread of
  // their own with the first thread (TSan's background thread) have it
  // counted in threads_before, not as a thread the cluster left behind.
  std::thread([] {}).join();
  const std::size_t threads_before = hw::thread_count();
  std::string root;
  {
    TestClusterSpec spec;
    spec.meta.default_stripe_count = 6;  // 1 MiB in 512 KiB chunks: two targets get one chunk file each
    BasicTestCluster<HwSuiteWorld> cluster(spec);
    ASSERT_TRUE(cluster.ready().ok()) << cluster.ready().to_string();
    root = cluster.world().storage_root();
    EXPECT_TRUE(std::filesystem::exists(root));
    EXPECT_GT(hw::thread_count(), threads_before);
    cluster.add_host(std::make_unique<Scripted>(write_one_file()), 0, 1);
    ASSERT_TRUE(cluster.run()) << cluster.failures();
    ASSERT_TRUE(cluster.hosts()[0]->result().ok()) << cluster.hosts()[0]->result().to_string();
    cluster.world().run_for(0);
    std::size_t objects = 0;
    for (TargetId t : cluster.targets()) objects += cluster.world().object_count(t);
    EXPECT_GE(objects, 1u);
    EXPECT_EQ(cluster.world().object_count(999), 0u);  // no such target
    EXPECT_EQ(cluster.world().counter("client.write_bytes"), static_cast<double>(k_mib));
    const Distribution* latencies = cluster.world().samples("client.chunk_write_latency_ns");
    ASSERT_NE(latencies, nullptr);
    EXPECT_FALSE(latencies->values.empty());
    EXPECT_EQ(cluster.world().samples("no.such.sample"), nullptr);
    EXPECT_GT(cluster.world().messages_sent(), 0u);
    EXPECT_FALSE(cluster.world().logs().empty());
    cluster.world().clear_faults();
  }
  EXPECT_FALSE(std::filesystem::exists(root));
  EXPECT_EQ(hw::thread_count(), threads_before);
}

}  // namespace
}  // namespace sluice::testing
