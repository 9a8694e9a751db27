#include "core/workloads/phase_recorder.hpp"

#include <gtest/gtest.h>

#include "det/test_world.hpp"

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
  rec.touch();          // a compute step after the last op, at 1850
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

TEST(PhaseRecorder, ThroughputOverTimeKeepsEveryByteInBoundedWindows) {
  TestWorld world;
  Env& env = world.env_of(world.add_service<Quiet>(0));
  PhaseRecorder rec(env, "wl", "read", 0);
  rec.start();
  // 3 ms: 100 bytes in window 0 (1 ms windows), 200 in window 2.
  world.run_for(500 * k_ns_per_us);
  rec.op(100, 0);
  world.run_for(2 * k_ns_per_ms);
  rec.op(200, 0);
  const std::string fine = "wl.read.progress_bytes." + std::to_string(k_progress_first_width_ns) + ".";
  RankPhaseResult r = rec.finish();
  EXPECT_EQ(world.counter(fine + "0"), 100);
  EXPECT_EQ(world.counter(fine + "1"), 0);
  EXPECT_EQ(world.counter(fine + "2"), 200);
  // A phase longer than k_max_progress_windows windows halves its resolution
  // as often as needed; no byte is lost and the count stays bounded.
  PhaseRecorder slow(env, "wl", "write", 0);
  slow.start();
  std::uint64_t bytes = 0;
  for (int i = 0; i < 3000; ++i) {
    world.run_for(k_ns_per_ms);
    slow.op(10, 0);
    bytes += 10;
  }
  slow.finish();
  double sum = 0;
  std::size_t windows = 0;
  TimeNs width = 0;
  for (const auto& [name, value] : world.counters()) {
    if (name.rfind("wl.write.progress_bytes.", 0) != 0) continue;
    sum += value;
    ++windows;
    const std::string rest = name.substr(std::string("wl.write.progress_bytes.").size());
    width = std::stoll(rest.substr(0, rest.find('.')));
  }
  EXPECT_EQ(sum, static_cast<double>(bytes));
  EXPECT_LE(windows, k_max_progress_windows);
  EXPECT_EQ(width, 8 * k_progress_first_width_ns);  // 3000 ms in at most 512 windows: 8 ms each
  EXPECT_EQ(r.bytes, 300u);
}

}  // namespace
}  // namespace sluice::testing
