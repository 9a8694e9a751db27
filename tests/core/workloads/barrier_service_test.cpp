#include "core/workloads/barrier_service.hpp"

#include <gtest/gtest.h>

#include "core/workloads/workload_steps.hpp"
#include "tests/support/test_cluster.hpp"

namespace sluice::testing {
namespace {

// Waits delay_ns, then passes the named barriers in order, noting when each released.
class BarrierProbe final : public Workload {
 public:
  BarrierProbe(TimeNs delay_ns, std::vector<std::string> names, TimeNs max_wait_ns = k_barrier_max_wait_ns)
      : delay_ns_(delay_ns), names_(std::move(names)), max_wait_ns_(max_wait_ns) {}

  void start(WorkloadContext& ctx, std::function<void(Status)> done) override {
    ctx_ = &ctx;
    done_ = std::move(done);
    ctx.ops.expect(ctx.env.timer(delay_ns_), [this](Completion&) { next(0); });
  }
  std::string name() const override { return "barrier_probe"; }

  std::vector<TimeNs> released_at;

 private:
  void next(std::size_t i) {
    if (i == names_.size()) return done_(ok_status());
    barrier(*ctx_, names_[i], max_wait_ns_, [this, i](Status s) {
      if (!s.ok()) return done_(s);
      released_at.push_back(ctx_->env.now());
      next(i + 1);
    });
  }

  TimeNs delay_ns_;
  std::vector<std::string> names_;
  TimeNs max_wait_ns_;
  WorkloadContext* ctx_ = nullptr;
  std::function<void(Status)> done_;
};

// Sends one raw Barrier with the given participant count.
class RawBarrier final : public Workload {
 public:
  explicit RawBarrier(std::uint32_t participants) : participants_(participants) {}
  void start(WorkloadContext& ctx, std::function<void(Status)> done) override {
    proto::Barrier m;
    m.name = "raw";
    m.participants = participants_;
    ctx.rpc.call(ctx.barrier, std::move(m), [done](Result<proto::Message> r) { done(r.status()); });
  }
  std::string name() const override { return "raw_barrier"; }

 private:
  std::uint32_t participants_;
};

TestClusterSpec small_spec() {
  TestClusterSpec spec;
  spec.meta_shards = 1;
  spec.targets_per_server = {1};
  spec.client_nodes = 3;
  return spec;
}

std::vector<BarrierProbe*> launch_probes(TestCluster& cluster, const std::vector<TimeNs>& delays,
                                         const std::vector<std::string>& names,
                                         TimeNs max_wait_ns = k_barrier_max_wait_ns) {
  std::vector<BarrierProbe*> probes;
  cluster.launch([&](std::uint32_t rank) {
    auto p = std::make_unique<BarrierProbe>(delays[rank], names, max_wait_ns);
    probes.push_back(p.get());
    return p;
  });
  return probes;
}

TEST(Barrier, ReleasesEveryRankOnlyWhenTheLastArrives) {
  TestCluster cluster(small_spec());
  ASSERT_TRUE(cluster.ready().ok()) << cluster.ready().to_string();
  const TimeNs t0 = cluster.world().now();
  auto probes = launch_probes(cluster, {1 * k_ns_per_ms, 5 * k_ns_per_ms, 3 * k_ns_per_ms}, {"a"});
  ASSERT_TRUE(cluster.run(1'000'000));
  EXPECT_EQ(cluster.failures(), "");
  for (BarrierProbe* p : probes) {
    ASSERT_EQ(p->released_at.size(), 1u);
    EXPECT_GE(p->released_at[0], t0 + 5 * k_ns_per_ms);
    EXPECT_EQ(p->released_at[0], probes[0]->released_at[0]) << "one Ack round, same latency to every node";
  }
  EXPECT_EQ(cluster.world().counter("barrier.releases"), 1);
}

TEST(Barrier, WaitsLongerThanTheRpcTimeoutByResending) {
  TestCluster cluster(small_spec());
  ASSERT_TRUE(cluster.ready().ok());
  const TimeNs late_ns = 30 * k_ns_per_s;  // far past RpcLimits::give_up_ns (14 s)
  auto probes = launch_probes(cluster, {0, 0, late_ns}, {"slow"});
  ASSERT_TRUE(cluster.run(1'000'000));
  EXPECT_EQ(cluster.failures(), "");
  for (BarrierProbe* p : probes) {
    ASSERT_EQ(p->released_at.size(), 1u);
    EXPECT_GE(p->released_at[0], late_ns);
  }
  EXPECT_EQ(cluster.world().counter("barrier.releases"), 1);
}

TEST(Barrier, SurvivesLostAcksAndDuplicatedArrivals) {
  TestCluster cluster(small_spec());
  ASSERT_TRUE(cluster.ready().ok());
  const Endpoint barrier_ep = cluster.barrier();
  // Lose the first three Acks of the barrier service, duplicate every Barrier.
  cluster.world().add_fault(MessageRule{[barrier_ep](const Endpoint& from, const Endpoint&, const proto::Message& m) {
                                          return from == barrier_ep && std::holds_alternative<proto::Ack>(m);
                                        },
                                        FaultAction::drop, 0, 3});
  cluster.world().add_fault(MessageRule{[](const Endpoint&, const Endpoint&, const proto::Message& m) {
                                          return std::holds_alternative<proto::Barrier>(m);
                                        },
                                        FaultAction::duplicate, 0, 1000});
  auto probes = launch_probes(cluster, {0, 2 * k_ns_per_ms, 1 * k_ns_per_ms}, {"x", "y", "z"});
  ASSERT_TRUE(cluster.run(2'000'000));
  EXPECT_EQ(cluster.failures(), "");
  for (BarrierProbe* p : probes) {
    ASSERT_EQ(p->released_at.size(), 3u);
    EXPECT_LT(p->released_at[0], p->released_at[1]);
  }
  EXPECT_EQ(cluster.world().counter("barrier.releases"), 3) << "a duplicated arrival must not release twice";
}

TEST(Barrier, GivesUpAfterMaxWaitWhenARankNeverArrives) {
  TestCluster cluster(small_spec());
  ASSERT_TRUE(cluster.ready().ok());
  std::vector<BarrierProbe*> probes;
  cluster.launch([&](std::uint32_t rank) {
    // Rank 2 passes no barrier at all.
    auto p = std::make_unique<BarrierProbe>(0, rank == 2 ? std::vector<std::string>{} : std::vector<std::string>{"z"},
                                            10 * k_ns_per_s);
    probes.push_back(p.get());
    return p;
  });
  ASSERT_TRUE(cluster.run(1'000'000));
  EXPECT_EQ(cluster.hosts()[0]->result().code(), StatusCode::timed_out);
  EXPECT_EQ(cluster.hosts()[1]->result().code(), StatusCode::timed_out);
  EXPECT_TRUE(cluster.hosts()[2]->result().ok());
  EXPECT_GE(cluster.hosts()[0]->finished_at_ns(), 10 * k_ns_per_s);
  EXPECT_NE(cluster.hosts()[0]->result().message().find("barrier 'z'"), std::string::npos);
}

TEST(Barrier, RefusesAParticipantCountThatDisagrees) {
  TestCluster cluster(small_spec());
  ASSERT_TRUE(cluster.ready().ok());
  cluster.launch([](std::uint32_t rank) { return std::make_unique<RawBarrier>(rank == 0 ? 3 : 4); }, 2);
  ASSERT_TRUE(cluster.run(1'000'000));
  EXPECT_EQ(cluster.hosts()[1]->result().code(), StatusCode::invalid_argument);
  EXPECT_FALSE(cluster.hosts()[0]->finished() && cluster.hosts()[0]->result().ok());
}

TEST(Barrier, RefusesAnArrivalAfterTheReleaseFromANonParticipant) {
  TestCluster cluster(small_spec());
  ASSERT_TRUE(cluster.ready().ok());
  // Three ranks at a barrier for two: the first two release it, the third is refused.
  cluster.launch([](std::uint32_t) { return std::make_unique<RawBarrier>(2); });
  ASSERT_TRUE(cluster.run(1'000'000));
  EXPECT_TRUE(cluster.hosts()[0]->result().ok());
  EXPECT_TRUE(cluster.hosts()[1]->result().ok());
  EXPECT_EQ(cluster.hosts()[2]->result().code(), StatusCode::invalid_argument);
  EXPECT_NE(cluster.hosts()[2]->result().message().find("single-use"), std::string::npos);
}

TEST(Barrier, RefusesZeroParticipants) {
  TestCluster cluster(small_spec());
  ASSERT_TRUE(cluster.ready().ok());
  cluster.launch([](std::uint32_t) { return std::make_unique<RawBarrier>(0); }, 1);
  ASSERT_TRUE(cluster.run(1'000'000));
  EXPECT_EQ(cluster.hosts()[0]->result().code(), StatusCode::invalid_argument);
}

TEST(Barrier, RefusesMoreOpenBarriersThanItsLimit) {
  TestClusterSpec spec = small_spec();
  spec.barrier_config.max_open_barriers = 1;
  TestCluster cluster(spec);
  ASSERT_TRUE(cluster.ready().ok());
  // Rank 0 opens "a" (never completed: rank 1 waits elsewhere first), rank 1 asks for "b".
  cluster.launch(
      [](std::uint32_t rank) {
        return std::make_unique<BarrierProbe>(rank * k_ns_per_ms, std::vector<std::string>{rank == 0 ? "a" : "b"},
                                              1 * k_ns_per_s);
      },
      2);
  ASSERT_TRUE(cluster.run(1'000'000));
  EXPECT_EQ(cluster.hosts()[1]->result().code(), StatusCode::no_space);
}

TEST(Barrier, WithoutACoordinatorCompletesAtOnce) {
  TestClusterSpec spec = small_spec();
  spec.barrier = false;
  TestCluster cluster(spec);
  ASSERT_TRUE(cluster.ready().ok());
  EXPECT_FALSE(cluster.barrier().valid());
  auto probes = launch_probes(cluster, {0, 0, 0}, {"a", "b"});
  ASSERT_TRUE(cluster.run(100'000));
  EXPECT_EQ(cluster.failures(), "");
  EXPECT_EQ(probes[2]->released_at.size(), 2u);
}

}  // namespace
}  // namespace sluice::testing
