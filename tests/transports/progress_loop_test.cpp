// ProgressLoop (transports/progress_loop.hpp), the progress thread tcp and
// shm share: ready descriptors reach the transport under its lock, the
// thread waits while the transport's queue has no room (bounded drain) and
// goes on once the owner drains it, and stop() ends a thread blocked there.
#include "transports/progress_loop.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace sluice::transport {
namespace {

using namespace std::chrono_literals;

constexpr std::uint64_t k_pipe_id = 7;

struct Owner {
  std::mutex mu;
  std::condition_variable drained;
  std::condition_variable changed;
  bool room = true;
  std::vector<std::uint64_t> ready;  // ids handed over
  int turns = 0;
  int pipe_fds[2] = {-1, -1};

  Owner() { EXPECT_EQ(::pipe(pipe_fds), 0); }
  ~Owner() {
    for (int fd : pipe_fds) ::close(fd);
  }
  ProgressLoop::Hooks hooks() {
    ProgressLoop::Hooks h;
    h.wait_ms = [] { return -1; };
    h.has_room = [this] { return room; };
    h.ready = [this](std::uint64_t id, std::uint32_t) {
      char byte = 0;
      [[maybe_unused]] const auto n = ::read(pipe_fds[0], &byte, 1);
      ready.push_back(id);
      changed.notify_all();
    };
    h.after_turn = [this] { ++turns; };
    return h;
  }
  void poke() const {
    const char byte = 1;
    [[maybe_unused]] const auto n = ::write(pipe_fds[1], &byte, 1);
  }
  // Waits (bounded) until `count` ids were handed over.
  bool wait_for(std::size_t count) {
    std::unique_lock lock(mu);
    return changed.wait_for(lock, 5s, [&] { return ready.size() >= count; });
  }
};

TEST(ProgressLoop, HandsEachReadyDescriptorToTheTransportUnderItsLock) {
  Owner o;
  ProgressLoop loop("test transport", o.mu, o.drained);
  ASSERT_TRUE(loop.open().ok());
  loop.watch(o.pipe_fds[0], k_pipe_id);
  loop.start("test:loop", o.hooks());
  o.poke();
  ASSERT_TRUE(o.wait_for(1));
  o.poke();
  ASSERT_TRUE(o.wait_for(2));
  loop.stop();
  std::lock_guard lock(o.mu);
  EXPECT_EQ(o.ready, (std::vector<std::uint64_t>{k_pipe_id, k_pipe_id}));
  EXPECT_GE(o.turns, 2);
}

TEST(ProgressLoop, WaitsWhileTheQueueHasNoRoomAndGoesOnOnceDrained) {
  Owner o;
  o.room = false;
  ProgressLoop loop("test transport", o.mu, o.drained);
  ASSERT_TRUE(loop.open().ok());
  loop.watch(o.pipe_fds[0], k_pipe_id);
  loop.start("test:loop", o.hooks());
  o.poke();
  {
    std::unique_lock lock(o.mu);
    EXPECT_FALSE(o.changed.wait_for(lock, 200ms, [&] { return !o.ready.empty(); }))
        << "handed over while the transport's queue had no room";
    o.room = true;
  }
  o.drained.notify_all();
  EXPECT_TRUE(o.wait_for(1)) << "not handed over after the owner drained its queue";
  loop.stop();
}

TEST(ProgressLoop, StopEndsAThreadBlockedOnAFullQueueAndAnIdleOne) {
  for (bool full : {true, false}) {
    Owner o;
    o.room = !full;
    ProgressLoop loop("test transport", o.mu, o.drained);
    ASSERT_TRUE(loop.open().ok());
    loop.watch(o.pipe_fds[0], k_pipe_id);
    loop.start("test:loop", o.hooks());
    if (full) o.poke();
    std::this_thread::sleep_for(50ms);
    const auto start = std::chrono::steady_clock::now();
    loop.stop();
    EXPECT_LT(std::chrono::steady_clock::now() - start, 2s) << (full ? "full" : "idle");
    EXPECT_TRUE(loop.stopping());
    loop.stop();  // idempotent
  }
}

}  // namespace
}  // namespace sluice::transport
