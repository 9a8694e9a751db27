// core/faults: plans as data, the seeded generator, the driver's timeline and
// composition of overlapping faults, and TestWorld's fault primitives.
#include <gtest/gtest.h>

#include <set>

#include "core/faults/fault_driver.hpp"
#include "core/faults/random_fault_plan.hpp"
#include "core/faults/world_fault_control.hpp"
#include "det/test_world.hpp"

namespace sluice::faults {
namespace {

// Records what the driver asks of a world.
class RecordingControl final : public FaultControl {
 public:
  std::vector<std::string> calls;
  Result<NodeId> node_of(const FaultSubject& s) const override {
    if (s.kind == SubjectKind::node) return s.index;
    if (s.kind == SubjectKind::service && s.role == Role::storage) return 10 + s.index;
    return error(StatusCode::not_found, s.to_string() + ": unknown");
  }
  Status kill(const FaultSubject& s) override {
    calls.push_back("kill " + s.to_string());
    return ok_status();
  }
  Status revive(const FaultSubject& s) override {
    calls.push_back("revive " + s.to_string());
    return ok_status();
  }
  Status set_disk_slowdown(const FaultSubject& s, double factor) override {
    calls.push_back("disk " + s.to_string() + " x" + std::to_string(static_cast<int>(factor)));
    return ok_status();
  }
  Status set_partitions(const std::vector<std::vector<NodeId>>& p) override {
    std::string line = "partitions";
    for (const auto& side : p) {
      line += " {";
      for (NodeId n : side) line += std::to_string(n) + ",";
      line += "}";
    }
    calls.push_back(line);
    return ok_status();
  }
  Status set_message_faults(double loss, TimeNs delay) override {
    calls.push_back("messages p=" + std::to_string(static_cast<int>(loss * 100)) + "% +" + std::to_string(delay));
    return ok_status();
  }
};

Fault kill_at(TimeNs at, TimeNs revive_after, std::uint32_t storage) {
  Fault f;
  f.kind = FaultKind::kill;
  f.at_ns = at;
  f.duration_ns = revive_after;
  f.subjects = {FaultSubject::service(Role::storage, storage)};
  return f;
}

TEST(FaultSubject, ParsesEveryForm) {
  EXPECT_EQ(parse_subject("storage:3")->to_string(), "storage:3");
  EXPECT_EQ(parse_subject("meta:0")->to_string(), "meta:0");
  EXPECT_EQ(parse_subject("client:1")->to_string(), "client:1");
  EXPECT_EQ(parse_subject("mgmt")->to_string(), "mgmt:0");
  EXPECT_EQ(parse_subject("node2")->kind, SubjectKind::node);
  EXPECT_EQ(parse_subject("node2")->index, 2u);
  EXPECT_EQ(parse_subject("target:5")->kind, SubjectKind::target);
}

TEST(FaultSubject, RefusesBadNamesWithTheReason) {
  EXPECT_NE(parse_subject("storag:3").status().message().find("unknown role 'storag'"), std::string::npos);
  EXPECT_NE(parse_subject("storage:x").status().message().find("'x' is not an index"), std::string::npos);
  EXPECT_NE(parse_subject("node").status().message().find("is not an index"), std::string::npos);
  EXPECT_NE(parse_subject("storage").status().message().find("expected role:index"), std::string::npos);
  EXPECT_FALSE(parse_subject("storage:99999999999").ok());
}

TEST(FaultPlan, ValidateNamesTheEntryAndTheField) {
  FaultPlan plan;
  plan.faults.push_back(kill_at(0, 0, 1));
  Fault slow;
  slow.kind = FaultKind::slow_disk;
  slow.subjects = {FaultSubject::service(Role::storage, 1)};
  slow.factor = 0.5;
  plan.faults.push_back(slow);
  const Status s = plan.validate();
  EXPECT_EQ(s.code(), StatusCode::invalid_argument);
  EXPECT_NE(s.message().find("fault 2 (slow_disk): factor"), std::string::npos) << s.message();

  FaultPlan bad_kill;
  bad_kill.faults.push_back(kill_at(0, 0, 1));
  bad_kill.faults[0].subjects = {FaultSubject::node(1)};
  EXPECT_NE(bad_kill.validate().message().find("fault 1 (kill): needs exactly one service"), std::string::npos);

  FaultPlan quiet;
  Fault loss;
  loss.kind = FaultKind::message_loss;
  quiet.faults.push_back(loss);
  EXPECT_NE(quiet.validate().message().find("neither loss nor delay"), std::string::npos);
}

TEST(FaultDriver, AppliesChangesAtTheirTimesEndsFirst) {
  FaultPlan plan;
  plan.faults.push_back(kill_at(2 * k_ns_per_s, 3 * k_ns_per_s, 3));  // dead 2s..5s
  plan.faults.push_back(kill_at(5 * k_ns_per_s, 1 * k_ns_per_s, 3));  // again at 5s: revive first, then kill
  Result<FaultDriver> d = FaultDriver::create(plan);
  ASSERT_TRUE(d.ok());
  RecordingControl c;
  EXPECT_EQ(d->next_change_ns(), 2 * k_ns_per_s);
  ASSERT_TRUE(d->apply_due(1 * k_ns_per_s, c).ok());
  EXPECT_TRUE(c.calls.empty());
  ASSERT_TRUE(d->apply_due(2 * k_ns_per_s, c).ok());
  ASSERT_TRUE(d->apply_due(5 * k_ns_per_s, c).ok());
  ASSERT_TRUE(d->apply_due(6 * k_ns_per_s, c).ok());
  EXPECT_EQ(c.calls,
            (std::vector<std::string>{"kill storage:3", "revive storage:3", "kill storage:3", "revive storage:3"}));
  EXPECT_EQ(d->next_change_ns(), -1);
}

TEST(FaultDriver, ComposesOverlappingFaults) {
  FaultPlan plan;
  Fault slow_a;
  slow_a.kind = FaultKind::slow_disk;
  slow_a.subjects = {FaultSubject::service(Role::storage, 1)};
  slow_a.factor = 10;
  slow_a.at_ns = 0;
  slow_a.duration_ns = 10;
  Fault slow_b = slow_a;
  slow_b.factor = 4;
  slow_b.at_ns = 5;
  slow_b.duration_ns = 20;
  Fault part_a;
  part_a.kind = FaultKind::partition;
  part_a.subjects = {FaultSubject::node(1), FaultSubject::service(Role::storage, 0)};
  part_a.at_ns = 0;
  part_a.duration_ns = 30;
  Fault loss_a;
  loss_a.kind = FaultKind::message_loss;
  loss_a.loss_probability = 0.5;
  loss_a.at_ns = 0;
  loss_a.duration_ns = 30;
  Fault loss_b = loss_a;
  loss_b.extra_delay_ns = 7;
  plan.faults = {slow_a, slow_b, part_a, loss_a, loss_b};
  Result<FaultDriver> d = FaultDriver::create(plan);
  ASSERT_TRUE(d.ok());
  RecordingControl c;
  ASSERT_TRUE(d->apply_due(0, c).ok());
  // 1 - 0.5 * 0.5 = 75 %, the larger delay; the partition's storage:0 is on node 10.
  EXPECT_EQ(c.calls, (std::vector<std::string>{"disk storage:1 x10", "partitions {1,10,}", "messages p=50% +0",
                                               "messages p=75% +7"}));
  c.calls.clear();
  ASSERT_TRUE(d->apply_due(10, c).ok());  // slow_b begins under slow_a (x10 holds), then slow_a ends (x4)
  EXPECT_EQ(c.calls, (std::vector<std::string>{"disk storage:1 x10", "disk storage:1 x4"}));
  c.calls.clear();
  ASSERT_TRUE(d->heal_all(c, false).ok());
  EXPECT_EQ(c.calls,
            (std::vector<std::string>{"disk storage:1 x1", "partitions", "messages p=50% +7", "messages p=0% +0"}));
}

TEST(FaultDriver, HealAllKeepsDeadServicesWhenAsked) {
  FaultPlan plan;
  plan.faults.push_back(kill_at(0, 0, 2));  // never revived
  Result<FaultDriver> d = FaultDriver::create(plan);
  ASSERT_TRUE(d.ok());
  RecordingControl c;
  ASSERT_TRUE(d->apply_due(0, c).ok());
  ASSERT_TRUE(d->heal_all(c, true).ok());
  EXPECT_EQ(c.calls, (std::vector<std::string>{"kill storage:2"}));
  ASSERT_EQ(d->dead_services().size(), 1u);
  ASSERT_TRUE(d->heal_all(c, false).ok());
  EXPECT_EQ(c.calls.back(), "revive storage:2");
  EXPECT_TRUE(d->dead_services().empty());
}

TEST(FaultDriver, ReportsWhatTheWorldCannotResolve) {
  FaultPlan plan;
  Fault part;
  part.kind = FaultKind::partition;
  part.subjects = {FaultSubject::service(Role::meta, 0)};
  plan.faults.push_back(part);
  Result<FaultDriver> d = FaultDriver::create(plan);
  ASSERT_TRUE(d.ok());
  RecordingControl c;
  EXPECT_EQ(d->apply_due(0, c).code(), StatusCode::not_found);
  ASSERT_EQ(d->errors().size(), 1u);
  EXPECT_NE(d->errors()[0].find("meta:0: unknown"), std::string::npos);
}

ClusterShape small_shape() {
  ClusterShape s;
  s.meta_services = 1;
  s.storage_services = 4;
  s.client_services = 2;
  s.nodes = {0, 1, 2, 3, 4, 5, 6, 7};
  s.targets = {1, 2, 3, 4};
  return s;
}

TEST(RandomFaultPlan, SameSeedSamePlanOtherSeedOtherPlan) {
  RandomPlanLimits limits;
  Rng a(42), b(42), c(43);
  const std::string pa = random_fault_plan(a, small_shape(), limits)->to_string();
  EXPECT_EQ(pa, random_fault_plan(b, small_shape(), limits)->to_string());
  EXPECT_NE(pa, random_fault_plan(c, small_shape(), limits)->to_string());
}

TEST(RandomFaultPlan, RespectsItsLimits) {
  RandomPlanLimits limits;
  limits.max_faults = 6;
  std::set<FaultKind> kinds;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    Rng rng(seed);
    Result<FaultPlan> plan = random_fault_plan(rng, small_shape(), limits);
    ASSERT_TRUE(plan.ok()) << plan.status().to_string();
    ASSERT_TRUE(plan->validate().ok());
    EXPECT_GE(plan->faults.size(), limits.min_faults);
    EXPECT_LE(plan->faults.size(), limits.max_faults);
    EXPECT_FALSE(plan->leaves_service_dead()) << "revive_every_kill is on by default";
    for (const Fault& f : plan->faults) {
      kinds.insert(f.kind);
      EXPECT_LT(f.at_ns, limits.window_ns);
      if (f.kind == FaultKind::kill) {
        EXPECT_EQ(f.subjects[0].role, Role::storage);  // meta kills are off
      }
      if (f.kind == FaultKind::slow_disk) {
        EXPECT_LE(f.factor, limits.max_disk_slowdown);
      }
      if (f.kind == FaultKind::partition) {
        EXPECT_LE(f.subjects.size(), small_shape().nodes.size() / 2);
      }
      if (f.kind == FaultKind::message_loss) {
        EXPECT_LE(f.loss_probability, limits.max_loss_probability);
      }
    }
  }
  EXPECT_EQ(kinds.size(), 4u) << "300 plans draw every kind";
}

TEST(RandomFaultPlan, PermanentKillsOnlyWhereAllowed) {
  RandomPlanLimits limits;
  limits.revive_every_kill = false;
  limits.max_permanent_kills = 1;
  limits.weight_slow_disk = limits.weight_partition = limits.weight_message_loss = 0;
  bool some_permanent = false;
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    Rng rng(seed);
    Result<FaultPlan> plan = random_fault_plan(rng, small_shape(), limits);
    ASSERT_TRUE(plan.ok());
    std::size_t permanent = 0;
    for (const Fault& f : plan->faults) permanent += f.duration_ns == 0 ? 1 : 0;
    EXPECT_LE(permanent, 1u);
    some_permanent = some_permanent || permanent > 0;
  }
  EXPECT_TRUE(some_permanent);
}

TEST(RandomFaultPlan, RefusesLimitsThatCannotWork) {
  RandomPlanLimits limits;
  limits.min_faults = 5;
  limits.max_faults = 2;
  Rng rng(1);
  EXPECT_EQ(random_fault_plan(rng, small_shape(), limits).status().code(), StatusCode::invalid_argument);
  RandomPlanLimits none;
  none.weight_kill = none.weight_slow_disk = none.weight_partition = none.weight_message_loss = 0;
  EXPECT_NE(random_fault_plan(rng, small_shape(), none).status().message().find("no fault kind"), std::string::npos);
}

// ---- TestWorld's primitives -------------------------------------------------------

// Counts what arrives and answers pings.
class Echo final : public Service {
 public:
  Echo(Env& env, int tag) : env_(env), tag_(tag) {}
  void start() override { ++starts; }
  void on_event(Event& e) override {
    if (std::holds_alternative<Delivery>(e)) ++received;
  }
  std::string name() const override { return "echo" + std::to_string(tag_); }
  Env& env() { return env_; }
  int starts = 0;
  int received = 0;

 private:
  Env& env_;
  int tag_;
};

proto::Message ping() { return proto::Ack{1, StatusCode::ok, {}}; }

TEST(TestWorldFaults, PartitionCutsMessagesAndTransfersBothWays) {
  testing::TestWorld world;
  Echo& a = world.add_service<Echo>(1, 1);
  Echo& b = world.add_service<Echo>(2, 2);
  world.start();
  world.set_partitions({{1}});
  ASSERT_TRUE(a.env().send(world.endpoint_of(b), ping()).ok());
  ASSERT_TRUE(b.env().send(world.endpoint_of(a), ping()).ok());
  world.run_until_idle();
  EXPECT_EQ(a.received + b.received, 0);
  EXPECT_TRUE(world.partitioned(2, 1));
  world.set_partitions({});
  ASSERT_TRUE(a.env().send(world.endpoint_of(b), ping()).ok());
  world.run_until_idle();
  EXPECT_EQ(b.received, 1);
}

TEST(TestWorldFaults, MessageLossIsSeededAndRoughlyItsProbability) {
  auto lost_of = [](std::uint64_t seed) {
    testing::TestWorldConfig cfg;
    cfg.seed = seed;
    testing::TestWorld world(cfg);
    Echo& a = world.add_service<Echo>(1, 1);
    Echo& b = world.add_service<Echo>(2, 2);
    world.start();
    world.set_message_faults(0.3, 0);
    for (int i = 0; i < 1000; ++i) EXPECT_TRUE(a.env().send(world.endpoint_of(b), ping()).ok());
    world.run_until_idle();
    return 1000 - b.received;
  };
  const int lost = lost_of(7);
  EXPECT_EQ(lost, lost_of(7));
  EXPECT_GT(lost, 230);
  EXPECT_LT(lost, 370);
}

TEST(TestWorldFaults, RestartBuildsAFreshInstanceAndDropsTheOld) {
  testing::TestWorld world;
  Echo& a = world.add_service<Echo>(1, 1);
  Echo& b = world.add_service<Echo>(2, 2);
  world.start();
  const Endpoint eb = world.endpoint_of(b);
  ASSERT_TRUE(a.env().send(eb, ping()).ok());  // in flight when b crashes
  world.kill(eb);
  ASSERT_TRUE(world.restart(eb).ok());
  world.run_until_idle();
  EXPECT_TRUE(world.alive(eb));
  // The message to the crashed instance was lost with it.
  EXPECT_EQ(world.messages_dropped(), 1u);
  EXPECT_EQ(world.restart(Endpoint{9, 9}).code(), StatusCode::not_found);
}

TEST(TestWorldFaults, SlowDiskTakesFactorTimesAsLong) {
  auto write_time = [](double factor) {
    testing::TestWorld world;
    Echo& s = world.add_service<Echo>(1, 1);
    world.add_target(1, 1);
    world.start();
    world.set_disk_slowdown(1, factor);
    Result<MemHandle> buf = s.env().alloc(MemKind::host, 0, 1 * k_mib);
    EXPECT_TRUE(buf.ok());
    StorageIoSpec io;
    io.op = StorageOp::write;
    io.target = 1;
    io.file_id = 1;
    io.buffer = *buf;
    static_cast<void>(s.env().storage_io(io));
    world.run_until_idle();
    return world.now();
  };
  const TimeNs normal = write_time(1.0);
  EXPECT_EQ(write_time(10.0), normal * 10);
}

}  // namespace
}  // namespace sluice::faults
