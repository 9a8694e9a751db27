#include "core/workloads/phase_recorder.hpp"

#include <gtest/gtest.h>

#include "tests/support/test_world.hpp"

namespace sluice::testing {
namespace {

class Quiet final : public Service {
 public:
  explicit Quiet(Env&) {}
  void start() override {}
  void on_event(Event&) override {}
  std::string name() const override { return "quiet"; }
};

TEST(PhaseRecorder, ElapsedRunsFromStartToTheLastOpOrTouch) {
  TestWorld world;
  Env& env = world.env_of(world.add_service<Quiet>(0));
  world.run_for(1000);
  PhaseRecorder rec(env, "wl", "write", 4);
  rec.start();
  world.run_for(500);
  rec.op(100, 1200);  // issued at 1200, done at 1500
  world.run_for(250);
  rec.op(50, 1600);
  world.run_for(100);
  rec.touch();  // a compute step after the last op, at 1850
  world.run_for(1000);  // idle time after the end does not count
  const RankPhaseResult r = rec.finish();
  EXPECT_EQ(r.phase, "write");
  EXPECT_EQ(r.rank, 4u);
  EXPECT_EQ(r.bytes, 150u);
  EXPECT_EQ(r.ops, 2u);
  EXPECT_EQ(r.elapsed_ns, 850);
  EXPECT_EQ(world.counter("wl.write.bytes"), 150);
  EXPECT_EQ(world.counter("wl.write.ops"), 2);
  ASSERT_NE(world.samples("wl.write.op_latency_ns"), nullptr);
  EXPECT_EQ(world.samples("wl.write.op_latency_ns")->values, (std::vector<double>{300, 150}));
  EXPECT_EQ(world.samples("wl.write.elapsed_ns")->values, (std::vector<double>{850}));
}

TEST(PhaseRecorder, NoOpsMeansZeroElapsed) {
  TestWorld world;
  Env& env = world.env_of(world.add_service<Quiet>(0));
  PhaseRecorder rec(env, "wl", "stat", 0);
  rec.start();
  world.run_for(700);
  rec.count("entries", 3);
  rec.sample("extra_ns", 9);
  EXPECT_EQ(rec.finish().elapsed_ns, 0);
  EXPECT_EQ(world.counter("wl.stat.entries"), 3);
  EXPECT_EQ(world.samples("wl.stat.extra_ns")->values.size(), 1u);
  EXPECT_EQ(rec.prefix(), "wl.stat.");
}

}  // namespace
}  // namespace sluice::testing
