// HwEnv on real hardware, one process: every Env operation on real bytes,
// real sockets (loopback TCP) and real files (under /tmp), delivered one
// event at a time on each service's own thread. Waits are bounded waits for
// the world's progress, never sleeps.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/common/pattern.hpp"
#include "core/proto/crc32c.hpp"
#include "core/services/rpc.hpp"
#include "hw/hw_world.hpp"

namespace sluice::hw {
namespace {

constexpr TimeNs k_max_wait_ns = 20 * k_ns_per_s;  // bound on one wait: a hang becomes a failure

class TempDir {
 public:
  TempDir() {
    char templ[] = "/tmp/sluice-hwenv-test-XXXXXX";
    path_ = ::mkdtemp(templ);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Records what it is told; tests drive it through HwWorld::call.
class ProbeService final : public Service {
 public:
  explicit ProbeService(Env& env, std::function<void(Env&)> on_start = {})
      : env_(env), on_start_(std::move(on_start)) {}
  void start() override {
    in_handler_ = true;
    if (on_start_) on_start_(env_);
    in_handler_ = false;
  }
  void on_event(Event& event) override {
    if (in_handler_) reentered_ = true;
    in_handler_ = true;
    if (auto* c = std::get_if<Completion>(&event)) {
      arrived_at_ns[c->op] = env_.now();
      order.push_back(c->op);
      completions[c->op] = *c;
    } else {
      deliveries.push_back(std::get<Delivery>(event));
    }
    in_handler_ = false;
  }
  std::string name() const override { return "probe"; }
  Env& env() { return env_; }

  std::map<OpId, Completion> completions;
  std::map<OpId, TimeNs> arrived_at_ns;
  std::vector<OpId> order;
  std::vector<Delivery> deliveries;
  bool reentered_ = false;

 private:
  Env& env_;
  std::function<void(Env&)> on_start_;
  bool in_handler_ = false;
};

class HwEnvTest : public ::testing::Test {
 protected:
  HwWorldConfig config() {
    HwWorldConfig c;
    c.storage_root = dir_.path() + "/storage";
    c.node_memory_limit_bytes = 64ULL << 20;
    return c;
  }

  // Runs fn(env) on the probe's thread and returns its value.
  template <class F>
  auto on(HwWorld& world, ProbeService& probe, F fn) {
    return world.call(probe, [&probe, fn] { return fn(probe.env()); });
  }

  Completion await(HwWorld& world, ProbeService& probe, OpId op) {
    Completion out;
    const bool done = world.wait_until(
        [&] {
          return world.call(probe, [&] {
            auto it = probe.completions.find(op);
            if (it == probe.completions.end()) return false;
            out = it->second;
            return true;
          });
        },
        k_max_wait_ns);
    EXPECT_TRUE(done) << "op " << op << " never completed";
    return out;
  }

  TempDir dir_;
};

TEST_F(HwEnvTest, TimersFireInDeadlineOrderAndNeverEarly) {
  HwWorld world(config());
  std::map<std::string, OpId> ops;
  TimeNs started_ns = 0;
  auto& probe = world.add_service<ProbeService>(1, [&](Env& env) {
    started_ns = env.now();
    ops["late"] = env.timer(30 * k_ns_per_ms);
    ops["early"] = env.timer(5 * k_ns_per_ms);
    ops["now"] = env.timer(-7);  // a negative delay means now
  });
  ASSERT_TRUE(world.start().ok());
  world.call(probe, [] {});  // start() has run: ops is filled
  const Completion late = await(world, probe, ops["late"]);
  EXPECT_TRUE(late.status.ok());
  world.call(probe, [&] {
    ASSERT_EQ(probe.order.size(), 3u);
    EXPECT_EQ(probe.order[0], ops["now"]);
    EXPECT_EQ(probe.order[1], ops["early"]);
    EXPECT_EQ(probe.order[2], ops["late"]);
    EXPECT_GE(probe.arrived_at_ns[ops["early"]] - started_ns, 5 * k_ns_per_ms);
    EXPECT_GE(probe.arrived_at_ns[ops["late"]] - started_ns, 30 * k_ns_per_ms);
    EXPECT_FALSE(probe.reentered_);
  });
}

TEST_F(HwEnvTest, CompletionsArriveAfterTheHandlerThatStartedThem) {
  HwWorld world(config());
  OpId op = 0;
  std::size_t seen_during_start = 0;
  ProbeService* self = nullptr;
  auto& probe = world.add_service<ProbeService>(1, [&](Env& env) {
    op = env.compute(CostKind::meta_create, 3);
    seen_during_start = self->completions.size();
  });
  self = &probe;
  ASSERT_TRUE(world.start().ok());
  world.call(probe, [] {});  // start() has run: op is set
  EXPECT_TRUE(await(world, probe, op).status.ok());
  EXPECT_EQ(seen_during_start, 0u);
  EXPECT_EQ(world.endpoint_of(probe).node, 1u);
}

// HwEnv charges no time for compute (the real work already happened), so a
// service may leave it out: OpTable::after_compute runs the continuation in
// the handler itself, with no operation and no completion (a metadata
// server's stat is then one loop item, not two).
TEST_F(HwEnvTest, AfterComputeGoesOnInTheHandlerWithNoCompletion) {
  HwWorld world(config());
  OpTable ops;
  bool ran_in_start = false;
  auto& probe = world.add_service<ProbeService>(1, [&](Env& env) {
    EXPECT_FALSE(env.compute_charges_time());
    ops.after_compute(env, CostKind::meta_stat, 1, [&](Completion& c) { ran_in_start = c.status.ok(); });
  });
  ASSERT_TRUE(world.start().ok());
  world.call(probe, [] {});  // start() has run
  EXPECT_TRUE(ran_in_start);
  EXPECT_EQ(ops.pending(), 0u);
  EXPECT_TRUE(world.call(probe, [&] { return probe.completions.empty(); }));
}

// A workload's step stands for an accelerator's compute, which nothing here
// does: it takes its time (train_epoch's computation_time on real hardware).
TEST_F(HwEnvTest, AWorkloadStepTakesItsTimeWhereOtherComputeCompletesAtOnce) {
  HwWorld world(config());
  auto& probe = world.add_service<ProbeService>(1);
  ASSERT_TRUE(world.start().ok());
  constexpr TimeNs step_ns = 30 * k_ns_per_ms;
  const TimeNs start = on(world, probe, [](Env& env) { return env.now(); });
  const OpId step = on(world, probe, [&](Env& env) { return env.compute(CostKind::workload_step, step_ns); });
  EXPECT_TRUE(await(world, probe, step).status.ok());
  const TimeNs done = on(world, probe, [](Env& env) { return env.now(); });
  EXPECT_GE(done - start, step_ns) << "the step completed before its time";
  const OpId stat = on(world, probe, [](Env& env) { return env.compute(CostKind::meta_stat, 1'000'000'000); });
  EXPECT_TRUE(await(world, probe, stat).status.ok()) << "a service's compute completes at once (no 1 s wait)";
}

TEST_F(HwEnvTest, MemoryOperationsWorkOnRealBytes) {
  HwWorld world(config());
  auto& probe = world.add_service<ProbeService>(1);
  ASSERT_TRUE(world.start().ok());
  const std::uint64_t n = (1 << 20) + 3;
  Result<MemHandle> a = on(world, probe, [&](Env& env) { return env.alloc(MemKind::pinned, 0, n); });
  Result<MemHandle> b = on(world, probe, [&](Env& env) { return env.alloc(MemKind::host, 0, n); });
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->region, b->region);
  EXPECT_EQ(a->kind, MemKind::pinned);
  EXPECT_TRUE(await(world, probe,
                    on(world, probe,
                       [&](Env& env) {
                         return env.fill(*a, PatternSpec{5, 100});
                       }))
                  .status.ok());
  std::vector<std::byte> expect(n);
  fill_pattern(expect, 5, 100);
  const Completion sum = await(world, probe, on(world, probe, [&](Env& env) { return env.checksum(*a); }));
  ASSERT_TRUE(sum.crc_valid);
  EXPECT_EQ(sum.crc32c, proto::crc32c(expect));
  EXPECT_TRUE(await(world, probe,
                    on(world, probe,
                       [&](Env& env) {
                         return env.verify(*a, PatternSpec{5, 100});
                       }))
                  .status.ok());
  // Copy a different pattern over part of it: verify names the first wrong byte.
  ASSERT_TRUE(await(world, probe,
                    on(world, probe,
                       [&](Env& env) {
                         return env.fill(*b, PatternSpec{6, 0});
                       }))
                  .status.ok());
  TransferSpec copy;
  copy.src = b->slice(0, 4096);
  copy.dst = a->slice(8192, 4096);
  copy.mode = TransferMode::local_copy;
  EXPECT_TRUE(await(world, probe, on(world, probe, [&](Env& env) { return env.transfer(copy); })).status.ok());
  const Completion bad = await(world, probe, on(world, probe, [&](Env& env) {
                                 return env.verify(*a, PatternSpec{5, 100});
                               }));
  EXPECT_EQ(bad.status.code(), StatusCode::corrupt);
  EXPECT_NE(bad.status.message().find("byte 8292"), std::string::npos) << bad.status.message();
  // Limits and kinds.
  EXPECT_EQ(on(world, probe, [](Env& env) { return env.alloc(MemKind::gpu, 0, 4096); }).status().code(),
            StatusCode::unavailable);
  EXPECT_EQ(on(world, probe, [](Env& env) { return env.alloc(MemKind::host, 0, 0); }).status().code(),
            StatusCode::invalid_argument);
  EXPECT_EQ(on(world, probe, [](Env& env) { return env.alloc(MemKind::host, 0, 64ULL << 20); }).status().code(),
            StatusCode::no_space);
  EXPECT_EQ(world.node(1)->allocated_bytes(), 2 * n);
  world.call(probe, [&] { probe.env().free(*a); });
  EXPECT_EQ(world.node(1)->allocated_bytes(), n);
  const Completion gone = await(world, probe, on(world, probe, [&](Env& env) { return env.checksum(*a); }));
  EXPECT_EQ(gone.status.code(), StatusCode::not_found);
  // A region of the freed one's size reuses its buffer (HwNode's pool) and
  // starts zeroed: none of the pattern written into the freed one shows through.
  Result<MemHandle> again = on(world, probe, [&](Env& env) { return env.alloc(MemKind::host, 0, n); });
  ASSERT_TRUE(again.ok());
  EXPECT_NE(again->region, a->region) << "a new region id: the freed one's key stays dead";
  const std::vector<std::byte> zeros(n);
  const Completion zeroed = await(world, probe, on(world, probe, [&](Env& env) { return env.checksum(*again); }));
  ASSERT_TRUE(zeroed.crc_valid);
  EXPECT_EQ(zeroed.crc32c, proto::crc32c(zeros));
  EXPECT_EQ(world.node(1)->allocated_bytes(), 2 * n);
}

TEST_F(HwEnvTest, TransfersMoveBytesBetweenNodesBothWays) {
  HwWorldConfig c = config();
  c.rails_per_node = 2;
  HwWorld world(c);
  auto& a = world.add_service<ProbeService>(1);
  auto& b = world.add_service<ProbeService>(2);
  ASSERT_TRUE(world.start().ok());
  const std::uint64_t n = 3 << 20;
  Result<MemHandle> a_buf = on(world, a, [&](Env& env) { return env.alloc(MemKind::pinned, 0, n); });
  Result<MemHandle> b_buf = on(world, b, [&](Env& env) { return env.alloc(MemKind::host, 0, n); });
  ASSERT_TRUE(a_buf.ok() && b_buf.ok());
  ASSERT_TRUE(await(world, a, on(world, a, [&](Env& env) { return env.fill(*a_buf, PatternSpec{1, 0}); })).status.ok());
  // B hands its buffer to node 1 (A), as a client hands its buffer to a storage server.
  ASSERT_TRUE(on(world, b, [&](Env& env) { return env.remote_access(*b_buf, 0, 1); }).ok());
  // Push: A's bytes into B's region (what a storage server does on a read), on rail 1.
  TransferSpec push;
  push.src = *a_buf;
  push.dst = *b_buf;
  push.src_nic = 1;
  push.mode = TransferMode::stream;
  const Completion pushed = await(world, a, on(world, a, [&](Env& env) { return env.transfer(push); }));
  ASSERT_TRUE(pushed.status.ok()) << pushed.status.to_string();
  EXPECT_EQ(pushed.bytes, n);
  EXPECT_TRUE(await(world, b,
                    on(world, b,
                       [&](Env& env) {
                         return env.verify(*b_buf, PatternSpec{1, 0});
                       }))
                  .status.ok());
  // Pull: B's new bytes into A (what a storage server does on a write); NIC 7 wraps onto a rail.
  ASSERT_TRUE(await(world, b, on(world, b, [&](Env& env) { return env.fill(*b_buf, PatternSpec{2, 0}); })).status.ok());
  TransferSpec pull;
  pull.src = b_buf->slice(1000, 5000);
  pull.dst = a_buf->slice(0, 5000);
  pull.dst_nic = 7;
  pull.mode = TransferMode::rdma_read;
  ASSERT_TRUE(await(world, a, on(world, a, [&](Env& env) { return env.transfer(pull); })).status.ok());
  EXPECT_TRUE(await(world, a,
                    on(world, a,
                       [&](Env& env) {
                         return env.verify(a_buf->slice(0, 5000), PatternSpec{2, 1000});
                       }))
                  .status.ok());
  // Errors: the remote side refuses an unknown region (as one it did not grant); neither end local; unequal
  // lengths.
  TransferSpec unknown = push;
  unknown.dst.region = 999;
  const Completion refused = await(world, a, on(world, a, [&](Env& env) { return env.transfer(unknown); }));
  EXPECT_EQ(refused.status.code(), StatusCode::permission_denied) << refused.status.to_string();
  // A region of B's that B never granted: refused the same way, no byte moved.
  Result<MemHandle> private_buf = on(world, b, [&](Env& env) { return env.alloc(MemKind::host, 0, 4096); });
  ASSERT_TRUE(private_buf.ok());
  TransferSpec ungranted = push;
  ungranted.src = a_buf->slice(0, 4096);
  ungranted.dst = *private_buf;
  const Completion denied = await(world, a, on(world, a, [&](Env& env) { return env.transfer(ungranted); }));
  EXPECT_EQ(denied.status.code(), StatusCode::permission_denied) << denied.status.to_string();
  TransferSpec elsewhere = push;
  elsewhere.src.node = 5;
  EXPECT_EQ(await(world, a, on(world, a, [&](Env& env) { return env.transfer(elsewhere); })).status.code(),
            StatusCode::invalid_argument);
  TransferSpec uneven = push;
  uneven.dst.length = 1;
  EXPECT_EQ(await(world, a, on(world, a, [&](Env& env) { return env.transfer(uneven); })).status.code(),
            StatusCode::invalid_argument);
  const auto logs = world.logs();
  EXPECT_TRUE(std::any_of(logs.begin(), logs.end(),
                          [](const std::string& l) { return l.find("NIC 7 maps to rail 1") != std::string::npos; }));
}

TEST_F(HwEnvTest, StorageIoReadsAndWritesRealChunkFiles) {
  HwWorld world(config());
  auto& probe = world.add_service<ProbeService>(1);
  ASSERT_TRUE(world.add_target(7, 1).ok());
  EXPECT_EQ(world.add_target(7, 2).code(), StatusCode::already_exists);
  ASSERT_TRUE(world.start().ok());
  EXPECT_EQ(world.node_of_target(7), 1u);
  const std::uint64_t n = 256 * 1024 + 5;
  Result<MemHandle> src = on(world, probe, [&](Env& env) { return env.alloc(MemKind::pinned, 0, n); });
  Result<MemHandle> dst = on(world, probe, [&](Env& env) { return env.alloc(MemKind::pinned, 0, n); });
  ASSERT_TRUE(src.ok() && dst.ok());
  ASSERT_TRUE(await(world, probe,
                    on(world, probe,
                       [&](Env& env) {
                         return env.fill(*src, PatternSpec{3, 0});
                       }))
                  .status.ok());
  StorageIoSpec write{StorageOp::write, 7, 0x42, 4096, *src, true};
  const Completion w = await(world, probe, on(world, probe, [&](Env& env) { return env.storage_io(write); }));
  ASSERT_TRUE(w.status.ok()) << w.status.to_string();
  EXPECT_EQ(w.bytes, n);
  const std::string object = dir_.path() + "/storage/node1/target7/0000000000000042";
  ASSERT_TRUE(std::filesystem::exists(object));
  EXPECT_EQ(std::filesystem::file_size(object), 4096 + n);
  StorageIoSpec read{StorageOp::read, 7, 0x42, 4096, *dst, false};
  const Completion r = await(world, probe, on(world, probe, [&](Env& env) { return env.storage_io(read); }));
  ASSERT_TRUE(r.status.ok());
  ASSERT_TRUE(r.crc_valid);
  EXPECT_EQ(r.crc32c, w.crc32c);
  EXPECT_TRUE(await(world, probe,
                    on(world, probe,
                       [&](Env& env) {
                         return env.verify(*dst, PatternSpec{3, 0});
                       }))
                  .status.ok());
  StorageIoSpec stat{StorageOp::stat, 7, 0x42, 0, {}, false};
  EXPECT_EQ(await(world, probe, on(world, probe, [&](Env& env) { return env.storage_io(stat); })).bytes, 4096 + n);
  StorageIoSpec remove{StorageOp::remove, 7, 0x42, 0, {}, false};
  EXPECT_TRUE(await(world, probe, on(world, probe, [&](Env& env) { return env.storage_io(remove); })).status.ok());
  EXPECT_FALSE(std::filesystem::exists(object));
  StorageIoSpec elsewhere{StorageOp::stat, 8, 1, 0, {}, false};
  const Completion missing = await(world, probe, on(world, probe, [&](Env& env) { return env.storage_io(elsewhere); }));
  EXPECT_EQ(missing.status.code(), StatusCode::not_found);
  EXPECT_NE(missing.status.message().find("target 8"), std::string::npos);
}

TEST_F(HwEnvTest, MessagesReachServicesOnTheSameAndOtherNodes) {
  HwWorld world(config());
  auto& a = world.add_service<ProbeService>(1);
  auto& b = world.add_service<ProbeService>(1);
  auto& c = world.add_service<ProbeService>(2);
  ASSERT_TRUE(world.start().ok());
  const Endpoint from = world.endpoint_of(a);
  for (Service* to : {static_cast<Service*>(&b), static_cast<Service*>(&c)}) {
    const Endpoint dest = world.endpoint_of(*to);
    const Status sent = on(world, a, [&](Env& env) { return env.send(dest, proto::Ack{77, StatusCode::ok, {}}); });
    ASSERT_TRUE(sent.ok()) << sent.to_string();
  }
  for (ProbeService* p : {&b, &c}) {
    const bool got =
        world.wait_until([&] { return world.call(*p, [&] { return !p->deliveries.empty(); }); }, k_max_wait_ns);
    ASSERT_TRUE(got);
    world.call(*p, [&] {
      EXPECT_EQ(p->deliveries[0].from, from);
      const auto* ack = std::get_if<proto::Ack>(&p->deliveries[0].message);
      ASSERT_NE(ack, nullptr);
      EXPECT_EQ(ack->request_id, 77u);
    });
  }
  const Status unknown = on(world, a, [](Env& env) { return env.send(Endpoint{9, 9}, proto::Ack{}); });
  EXPECT_EQ(unknown.code(), StatusCode::unavailable);
  proto::Ack too_long;
  too_long.error.assign(proto::k_max_error_bytes + 1, 'x');
  const Endpoint dest = world.endpoint_of(c);
  EXPECT_EQ(on(world, a, [&](Env& env) { return env.send(dest, too_long); }).code(), StatusCode::invalid_argument);
}

TEST_F(HwEnvTest, WorldRefusesTargetsWithoutARootAndLateAdditions) {
  HwWorldConfig c = config();
  c.storage_root.clear();
  HwWorld world(c);
  EXPECT_EQ(world.add_target(1, 1).code(), StatusCode::invalid_argument);
  world.add_service<ProbeService>(1);
  ASSERT_TRUE(world.start().ok());
  EXPECT_EQ(world.add_target(2, 1).code(), StatusCode::invalid_argument);
  HwWorldConfig bad = config();
  bad.transport = "carrier-pigeon";
  HwWorld broken(bad);
  broken.add_service<ProbeService>(1);
  const Status st = broken.start();
  EXPECT_EQ(st.code(), StatusCode::not_found);
  EXPECT_NE(st.message().find("node 1"), std::string::npos);
}

}  // namespace
}  // namespace sluice::hw
