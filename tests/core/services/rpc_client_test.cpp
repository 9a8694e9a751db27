// RpcClient's retransmission timeouts (RpcLimits): each attempt waits longer
// than the one before, and the first attempt's wait follows the server's
// observed reply times (Karn's rule: never from a retried call). A fixed
// 3 x 2 s gave up on live servers whose replies queued behind a slow link's
// bulk data (issue 26, the 10 Mbit/s netns test in CI).
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "core/proto/messages.hpp"
#include "core/services/rpc.hpp"
#include "det/test_world.hpp"

namespace sluice {
namespace {

using testing::TestWorld;

// Answers every GetMaps with an Ack after delay_of(n) (n: the 0-based count
// of GetMaps seen; a negative delay: never), recording when each arrived.
class SlowServer final : public Service {
 public:
  SlowServer(Env& env, std::function<TimeNs(std::size_t)> delay_of) : env_(env), delay_of_(std::move(delay_of)) {}
  void start() override {}
  void on_event(Event& event) override {
    if (auto* c = std::get_if<Completion>(&event)) {
      ops_.dispatch(*c);
      return;
    }
    auto& d = std::get<Delivery>(event);
    const auto* get = std::get_if<proto::GetMaps>(&d.message);
    if (get == nullptr) return;
    const TimeNs delay = delay_of_(arrivals.size());
    arrivals.push_back(env_.now());
    if (delay < 0) return;
    ops_.expect(env_.timer(delay), [this, to = d.from, id = get->request_id](Completion&) {
      proto::Ack ack;
      ack.request_id = id;
      (void)env_.send(to, ack);
    });
  }
  std::string name() const override { return "slow"; }
  std::vector<TimeNs> arrivals;

 private:
  Env& env_;
  std::function<TimeNs(std::size_t)> delay_of_;
  OpTable ops_;
};

// Makes `calls` GetMaps calls to `server`, one after the other.
class Caller final : public Service {
 public:
  Caller(Env& env, Endpoint server, int calls, RpcLimits limits)
      : env_(env), server_(server), calls_left_(calls), rpc_(env, ops_, limits) {}
  // Each call asks still_there after an unanswered attempt; it answers `answer` after `delay`.
  void answer_still_there(bool answer, TimeNs delay) {
    still_there_ = [this, answer, delay](std::function<void(bool)> resume) {
      asked_at.push_back(env_.now());
      ops_.expect(env_.timer(delay), [resume, answer](Completion&) { resume(answer); });
    };
  }
  std::vector<TimeNs> asked_at;
  void start() override { next(); }
  void on_event(Event& event) override {
    if (auto* c = std::get_if<Completion>(&event)) {
      ops_.dispatch(*c);
    } else {
      rpc_.on_delivery(std::get<Delivery>(event));
    }
  }
  std::string name() const override { return "caller"; }
  std::vector<Status> results;
  std::vector<TimeNs> finished_at;

 private:
  void next() {
    if (calls_left_-- <= 0) return;
    rpc_.call(
        server_, proto::GetMaps{},
        [this](Result<proto::Message> r) {
          results.push_back(r.status());
          finished_at.push_back(env_.now());
          next();
        },
        0, still_there_);
  }
  RpcClient::StillThereFn still_there_;
  Env& env_;
  Endpoint server_;
  int calls_left_;
  OpTable ops_;
  RpcClient rpc_;
};

constexpr TimeNs k_s = k_ns_per_s;

TEST(RpcLimits, EachAttemptWaitsBackoffTimesThePreviousUpToTheCap) {
  RpcLimits l;
  EXPECT_EQ(l.attempt_timeout_ns(1, 2 * k_s), 2 * k_s);
  EXPECT_EQ(l.attempt_timeout_ns(2, 2 * k_s), 4 * k_s);
  EXPECT_EQ(l.attempt_timeout_ns(3, 2 * k_s), 8 * k_s);
  EXPECT_EQ(l.give_up_ns(), 14 * k_s);
  EXPECT_EQ(l.attempt_timeout_ns(10, 2 * k_s), l.timeout_max_ns);
  EXPECT_EQ(l.attempt_timeout_ns(1, 100 * k_s), l.timeout_max_ns);
  l.timeout_backoff = 1;  // the old fixed per-attempt timeout
  EXPECT_EQ(l.give_up_ns(), 3 * l.timeout_ns);
}

TEST(RpcClient, ASilentServerIsAskedAtDoublingIntervalsThenTheCallTimesOut) {
  TestWorld world;
  auto& server = world.add_service<SlowServer>(1, [](std::size_t) { return TimeNs{-1}; });
  auto& caller = world.add_service<Caller>(0, world.endpoint_of(server), 1, RpcLimits{});
  world.start();
  world.run_until_idle();
  ASSERT_EQ(caller.results.size(), 1u);
  EXPECT_EQ(caller.results[0].code(), StatusCode::timed_out);
  EXPECT_NE(caller.results[0].message().find("after 3 attempts in 14000 ms"), std::string::npos)
      << caller.results[0].to_string();
  ASSERT_EQ(server.arrivals.size(), 3u);
  const TimeNs t0 = server.arrivals[0];
  EXPECT_NEAR(static_cast<double>(server.arrivals[1] - t0), 2.0 * k_s, 1e6);
  EXPECT_NEAR(static_cast<double>(server.arrivals[2] - t0), 6.0 * k_s, 1e6);
  EXPECT_NEAR(static_cast<double>(caller.finished_at[0] - t0), 14.0 * k_s, 1e6);
}

// A mirrored server's client asks, after an unanswered attempt, whether the
// server is still the one to ask (it refreshes its maps): "no" ends the call
// with unavailable there and then, naming the server, instead of spending
// the 2 + 4 + 8 s on a dead primary.
TEST(RpcClient, AServerNoLongerToAskEndsTheCallAfterItsFirstUnansweredAttempt) {
  TestWorld world;
  auto& server = world.add_service<SlowServer>(1, [](std::size_t) { return TimeNs{-1}; });
  auto& caller = world.add_service<Caller>(0, world.endpoint_of(server), 1, RpcLimits{});
  caller.answer_still_there(false, 100 * k_ns_per_ms);
  world.start();
  world.run_until_idle();
  ASSERT_EQ(caller.results.size(), 1u);
  EXPECT_EQ(caller.results[0].code(), StatusCode::unavailable);
  EXPECT_NE(caller.results[0].message().find("is no longer the server of this GetMaps after 1 unanswered attempt"),
            std::string::npos)
      << caller.results[0].to_string();
  ASSERT_EQ(server.arrivals.size(), 1u);
  ASSERT_EQ(caller.asked_at.size(), 1u);
  EXPECT_NEAR(static_cast<double>(caller.asked_at[0] - server.arrivals[0]), 2.0 * k_s, 1e6);
  EXPECT_NEAR(static_cast<double>(caller.finished_at[0] - server.arrivals[0]), 2.1 * k_s, 1e6);
}

// "Yes" resends as without the question: the same attempts at the same
// times, each after its answer, then timed_out.
TEST(RpcClient, AServerStillToAskIsAskedAgainAsWithoutTheQuestion) {
  TestWorld world;
  auto& server = world.add_service<SlowServer>(1, [](std::size_t) { return TimeNs{-1}; });
  auto& caller = world.add_service<Caller>(0, world.endpoint_of(server), 1, RpcLimits{});
  caller.answer_still_there(true, 0);
  world.start();
  world.run_until_idle();
  ASSERT_EQ(caller.results.size(), 1u);
  EXPECT_EQ(caller.results[0].code(), StatusCode::timed_out) << caller.results[0].to_string();
  ASSERT_EQ(server.arrivals.size(), 3u);
  EXPECT_EQ(caller.asked_at.size(), 2u);  // before the second and the third attempt
  EXPECT_NEAR(static_cast<double>(server.arrivals[2] - server.arrivals[0]), 6.0 * k_s, 1e6);
}

// A reply that arrives while the question is out is the answer; the late
// "no" changes nothing.
TEST(RpcClient, AReplyWhileTheQuestionIsOutFinishesTheCall) {
  TestWorld world;
  auto& server =
      world.add_service<SlowServer>(1, [](std::size_t n) { return n == 0 ? TimeNs{2100 * k_ns_per_ms} : TimeNs{-1}; });
  auto& caller = world.add_service<Caller>(0, world.endpoint_of(server), 1, RpcLimits{});
  caller.answer_still_there(false, 500 * k_ns_per_ms);
  world.start();
  world.run_until_idle();
  ASSERT_EQ(caller.results.size(), 1u);
  EXPECT_TRUE(caller.results[0].ok()) << caller.results[0].to_string();
  EXPECT_EQ(server.arrivals.size(), 1u);
}

TEST(RpcClient, AReplySlowerThanEveryFixedAttemptButWithinTheBackoffIsTaken) {
  // 7 s: a fixed 3 x 2 s gave up at 6 s; backing off asks at 0, 2 and 6 s.
  TestWorld world;
  auto& server = world.add_service<SlowServer>(1, [](std::size_t n) { return n == 0 ? 7 * k_s : TimeNs{-1}; });
  auto& caller = world.add_service<Caller>(0, world.endpoint_of(server), 1, RpcLimits{});
  world.start();
  world.run_until_idle();
  ASSERT_EQ(caller.results.size(), 1u);
  EXPECT_TRUE(caller.results[0].ok()) << caller.results[0].to_string();
}

// Replies that took 1 to 1.9 s teach the client that this server is slow:
// a 3 s reply is then waited for on the first send. A client without that
// history (the same 3 s reply as its first call) sends twice.
TEST(RpcClient, TheFirstAttemptWaitsLongerForAServerWhoseRepliesHaveBeenSlow) {
  const auto delay = [](std::size_t n) { return n < 20 ? (n % 2 == 0 ? 1 * k_s : 1900 * k_ns_per_ms) : 3 * k_s; };
  TestWorld world;
  auto& server = world.add_service<SlowServer>(1, delay);
  auto& caller = world.add_service<Caller>(0, world.endpoint_of(server), 21, RpcLimits{});
  world.start();
  world.run_until_idle();
  ASSERT_EQ(caller.results.size(), 21u);
  for (const Status& s : caller.results) EXPECT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(server.arrivals.size(), 21u) << "the 3 s reply was waited for without a retry";
  EXPECT_EQ(world.counter("rpc.retries"), 0.0);

  TestWorld fresh;
  auto& server2 = fresh.add_service<SlowServer>(1, [](std::size_t) { return 3 * k_s; });
  auto& caller2 = fresh.add_service<Caller>(0, fresh.endpoint_of(server2), 1, RpcLimits{});
  fresh.start();
  fresh.run_until_idle();
  ASSERT_EQ(caller2.results.size(), 1u);
  EXPECT_TRUE(caller2.results[0].ok());
  EXPECT_EQ(server2.arrivals.size(), 2u);
}

// Karn's rule: a call answered after a retry says nothing about the round
// trip (which send was answered?), so a server that always answers 2.5 s
// after each request keeps costing every call a retry; it never inflates the
// estimate from ambiguous samples.
TEST(RpcClient, RetriedCallsAreNotRoundTripSamples) {
  TestWorld world;
  auto& server = world.add_service<SlowServer>(1, [](std::size_t) { return 2500 * k_ns_per_ms; });
  auto& caller = world.add_service<Caller>(0, world.endpoint_of(server), 5, RpcLimits{});
  world.start();
  world.run_until_idle();
  ASSERT_EQ(caller.results.size(), 5u);
  for (const Status& s : caller.results) EXPECT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(server.arrivals.size(), 10u);
  EXPECT_EQ(world.counter("rpc.retries"), 5.0);
}

// OpTable::after_compute where the world charges compute time (TestEnv's
// table): the continuation waits for the compute's completion, after the
// handler that started it, at the charged time (HwEnv's case, at once with
// no completion, is HwEnvTest.AfterComputeGoesOnInTheHandlerWithNoCompletion).
class Charger final : public Service {
 public:
  explicit Charger(Env& env) : env_(env) {}
  void start() override {
    ops_.after_compute(env_, CostKind::meta_create, 3, [this](Completion& c) {
      ran_at = env_.now();
      ok = c.status.ok();
    });
    ran_in_start = ran_at >= 0;
    pending_in_start = ops_.pending();
  }
  void on_event(Event& event) override {
    if (auto* c = std::get_if<Completion>(&event)) ops_.dispatch(*c);
  }
  std::string name() const override { return "charger"; }
  TimeNs ran_at = -1;
  bool ok = false, ran_in_start = false;
  std::size_t pending_in_start = 0;

 private:
  Env& env_;
  OpTable ops_;
};

TEST(OpTable, AfterComputeWaitsForTheChargedComputeWhereTheWorldChargesTime) {
  TestWorld world;
  auto& charger = world.add_service<Charger>(0);
  world.start();
  world.run_until_idle();
  EXPECT_FALSE(charger.ran_in_start);
  EXPECT_EQ(charger.pending_in_start, 1u);
  EXPECT_TRUE(charger.ok);
  EXPECT_GE(charger.ran_at, 0);
}

}  // namespace
}  // namespace sluice
