// TestEnv itself: virtual time, deterministic order, fault controls, limits.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "det/test_world.hpp"

namespace sluice::testing {
namespace {

// Records what it receives; on start, sends `pings` Acks to `peer` and runs a few ops.
class Probe final : public Service {
 public:
  Probe(Env& env, Endpoint peer, int pings) : env_(env), peer_(peer), pings_(pings) {}
  void start() override {
    for (int i = 0; i < pings_; ++i) {
      env_.send(peer_, proto::Ack{static_cast<RequestId>(i + 1), StatusCode::ok, {}}).ignore();
    }
  }
  void on_event(Event& e) override {
    if (auto* d = std::get_if<Delivery>(&e)) {
      log.push_back("msg " + std::to_string(std::get<proto::Ack>(d->message).request_id) + " at " +
                    std::to_string(env_.now()));
    } else {
      auto& c = std::get<Completion>(e);
      completions.push_back(c);
      log.push_back("op " + std::to_string(c.op) + " at " + std::to_string(env_.now()) + " " + c.status.to_string());
    }
  }
  std::string name() const override { return "probe"; }
  Env& env_;
  Endpoint peer_;
  int pings_;
  std::vector<std::string> log;
  std::vector<Completion> completions;
};

TEST(TestWorld, MessagesArriveAfterTheConfiguredLatencyInSendOrder) {
  TestWorldConfig cfg;
  cfg.message_latency_ns = 1000;
  TestWorld w(cfg);
  auto& a = w.add_service<Probe>(0, Endpoint{1, 1}, 0);
  auto& b = w.add_service<Probe>(1, w.endpoint_of(a), 3);
  (void)b;
  w.run_until_idle();
  EXPECT_EQ(a.log, (std::vector<std::string>{"msg 1 at 1000", "msg 2 at 1000", "msg 3 at 1000"}));
}

TEST(TestWorld, DropDelayAndDuplicateApplyToMatchingMessagesOnly) {
  TestWorld w;
  auto& a = w.add_service<Probe>(0, Endpoint{1, 1}, 0);
  w.add_service<Probe>(1, w.endpoint_of(a), 4);
  auto id_is = [](RequestId id) {
    return [id](const Endpoint&, const Endpoint&, const proto::Message& m) {
      return std::get<proto::Ack>(m).request_id == id;
    };
  };
  w.add_fault(MessageRule{id_is(1), FaultAction::drop, 0, 1});
  w.add_fault(MessageRule{id_is(2), FaultAction::delay, 7 * k_ns_per_ms, 1});
  w.add_fault(MessageRule{id_is(3), FaultAction::duplicate, 0, 1});
  w.run_until_idle();
  ASSERT_EQ(a.log.size(), 4u);  // 1 dropped, 3 twice (the copy 1 ns later), 4 once, 2 last (late)
  EXPECT_EQ(a.log[0].substr(0, 5), "msg 3");
  EXPECT_EQ(a.log[1].substr(0, 5), "msg 4");
  EXPECT_EQ(a.log[2].substr(0, 5), "msg 3");
  EXPECT_EQ(a.log[3].substr(0, 5), "msg 2");
  EXPECT_EQ(w.messages_dropped(), 1u);
}

TEST(TestWorld, SameSeedSameRunDifferentSeedDifferentRandomStreams) {
  auto run = [](std::uint64_t seed) {
    TestWorldConfig cfg;
    cfg.seed = seed;
    TestWorld w(cfg);
    auto& p = w.add_service<Probe>(3, Endpoint{}, 0);
    std::vector<std::uint64_t> draws;
    for (int i = 0; i < 5; ++i) draws.push_back(w.env_of(p).rng().next_u64());
    return draws;
  };
  EXPECT_EQ(run(7), run(7));
  EXPECT_NE(run(7), run(8));
}

TEST(TestWorld, StorageTargetsServeOneOperationAtATimeAndShortReadsReportBytes) {
  TestWorldConfig cfg;
  cfg.storage_latency_ns = 1000;
  cfg.storage_write_bytes_per_s = 1e9;  // 1 byte per ns
  cfg.storage_read_bytes_per_s = 1e9;
  TestWorld w(cfg);
  w.add_target(5, 0);
  auto& p = w.add_service<Probe>(0, Endpoint{}, 0);
  Env& env = w.env_of(p);
  MemHandle buf = env.alloc(MemKind::pinned, 0, 4000).value();
  env.fill(buf, PatternSpec{1, 0});
  w.run_until_idle();
  const TimeNs t0 = w.now();
  StorageIoSpec write{StorageOp::write, 5, 9, 0, buf, false};
  env.storage_io(write);
  env.storage_io(write);  // queued behind the first
  MemHandle big = env.alloc(MemKind::pinned, 0, 8000).value();
  env.storage_io(StorageIoSpec{StorageOp::read, 5, 9, 0, big, false});
  w.run_until_idle();
  ASSERT_EQ(p.completions.size(), 4u);
  EXPECT_EQ(w.now() - t0, 3 * 1000 + 4000 + 4000 + 8000);  // the read is charged for its whole buffer
  EXPECT_EQ(p.completions[3].bytes, 4000u);                // but only 4000 bytes exist
  EXPECT_TRUE(p.completions[3].crc_valid);
}

TEST(TestWorld, BadRangesAndUnknownTargetsFailTheOperationNotTheWorld) {
  TestWorld w;
  auto& p = w.add_service<Probe>(0, Endpoint{}, 0);
  Env& env = w.env_of(p);
  MemHandle buf = env.alloc(MemKind::host, 0, 100).value();
  MemHandle beyond = buf;
  beyond.length = 200;
  env.checksum(beyond);
  env.storage_io(StorageIoSpec{StorageOp::read, 77, 1, 0, buf, false});
  EXPECT_FALSE(env.alloc(MemKind::host, 0, 0).ok());
  EXPECT_EQ(env.alloc(MemKind::host, 0, w.config().node_memory_limit_bytes).status().code(), StatusCode::no_space);
  EXPECT_EQ(env.send(Endpoint{42, 42}, proto::Ack{}).code(), StatusCode::unavailable);
  w.run_until_idle();
  ASSERT_EQ(p.completions.size(), 2u);
  // The unknown target fails at once; the checksum after its (virtual) run time.
  EXPECT_EQ(p.completions[0].status.code(), StatusCode::not_found);
  EXPECT_EQ(p.completions[1].status.code(), StatusCode::invalid_argument);
}

TEST(TestWorld, AKilledServiceReceivesNothingAndLosesItsPendingCompletions) {
  TestWorld w;
  auto& a = w.add_service<Probe>(0, Endpoint{1, 1}, 0);
  w.add_service<Probe>(1, w.endpoint_of(a), 2);
  w.env_of(a).timer(10);
  w.start();
  w.kill(w.endpoint_of(a));
  w.run_until_idle();
  EXPECT_TRUE(a.log.empty());
  EXPECT_FALSE(w.alive(w.endpoint_of(a)));
  w.revive(w.endpoint_of(a));
  w.env_of(a).timer(10);
  w.run_until_idle();
  EXPECT_EQ(a.completions.size(), 1u);
}

}  // namespace
}  // namespace sluice::testing
