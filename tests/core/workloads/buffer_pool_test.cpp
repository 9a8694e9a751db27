#include "core/workloads/buffer_pool.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "det/test_world.hpp"

namespace sluice::testing {
namespace {

class Idle final : public Service {
 public:
  explicit Idle(Env&) {}
  void start() override {}
  void on_event(Event&) override {}
  std::string name() const override { return "idle"; }
};

TEST(BufferPool, HandsOutEachBufferOnceAndTakesThemBack) {
  TestWorld world;
  Env& env = world.env_of(world.add_service<Idle>(3));
  BufferPool pool(env);
  ASSERT_TRUE(pool.allocate(MemKind::gpu, {1}, 3, 4096).ok());
  EXPECT_EQ(world.allocated_bytes(3), 3u * 4096);
  std::set<std::uint32_t> regions;
  std::vector<MemHandle> taken;
  for (int i = 0; i < 3; ++i) {
    Result<MemHandle> b = pool.take();
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(b->kind, MemKind::gpu);
    EXPECT_EQ(b->device, 1);
    EXPECT_EQ(b->length, 4096u);
    regions.insert(b->region);
    taken.push_back(*b);
  }
  EXPECT_EQ(regions.size(), 3u);
  Result<MemHandle> none = pool.take();
  EXPECT_EQ(none.status().code(), StatusCode::internal);
  pool.give(taken[1]);
  EXPECT_EQ(pool.free_buffers(), 1u);
  EXPECT_EQ(pool.take()->region, taken[1].region);
  pool.release();
  EXPECT_EQ(world.allocated_bytes(3), 0u);
  EXPECT_EQ(pool.buffers(), 0u);
}

TEST(BufferPool, RefusesEmptyPoolsAndReportsAllocationFailures) {
  TestWorldConfig config;
  config.node_memory_limit_bytes = 10'000;
  TestWorld world(config);
  Env& env = world.env_of(world.add_service<Idle>(0));
  BufferPool pool(env);
  EXPECT_EQ(pool.allocate(MemKind::host, {0}, 0, 100).code(), StatusCode::invalid_argument);
  EXPECT_EQ(pool.allocate(MemKind::host, {0}, 2, 0).code(), StatusCode::invalid_argument);
  EXPECT_EQ(pool.allocate(MemKind::host, {}, 2, 100).code(), StatusCode::invalid_argument);
  const Status s = pool.allocate(MemKind::pinned, {0}, 3, 4000);  // the third one is over the limit
  EXPECT_EQ(s.code(), StatusCode::no_space);
  EXPECT_NE(s.message().find("buffer 3 of 3"), std::string::npos) << s.to_string();
  EXPECT_EQ(world.allocated_bytes(0), 0u) << "a failed pool frees what it got";
  EXPECT_EQ(pool.buffers(), 0u);
}

// A rank whose threads run on several NUMA nodes gets its host buffers spread
// over them in turn (each thread's buffer on its own node), so the client's
// rail choice (NUMA-local NIC first) sees every socket's NICs.
TEST(BufferPool, SpreadsBuffersOverTheGivenDevicesInTurn) {
  TestWorld world;
  Env& env = world.env_of(world.add_service<Idle>(0));
  BufferPool pool(env);
  ASSERT_TRUE(pool.allocate(MemKind::pinned, {1, 3, 2}, 7, 100).ok());
  std::map<std::uint16_t, int> per_device;
  for (int i = 0; i < 7; ++i) {
    Result<MemHandle> b = pool.take();
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(b->kind, MemKind::pinned);
    ++per_device[b->device];
  }
  EXPECT_EQ(per_device, (std::map<std::uint16_t, int>{{1, 3}, {2, 2}, {3, 2}}));
}

TEST(BufferPool, DestructorFreesTheBuffers) {
  TestWorld world;
  Env& env = world.env_of(world.add_service<Idle>(0));
  {
    BufferPool pool(env);
    ASSERT_TRUE(pool.allocate(MemKind::host, {0}, 2, 100).ok());
    EXPECT_EQ(world.allocated_bytes(0), 200u);
  }
  EXPECT_EQ(world.allocated_bytes(0), 0u);
}

}  // namespace
}  // namespace sluice::testing
