// base::EventfdQueue: FIFO order, the fd readable exactly while items wait
// (set on the first push, reset and set again by pop while some remain,
// signal() without an item), move-only items, and no missed wake-up with
// several producers and a consumer that sleeps on the fd.
#include "base/eventfd_queue.hpp"

#include <gtest/gtest.h>
#include <poll.h>

#include <cstddef>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

namespace sluice::base {
namespace {

bool readable(int fd, int timeout_ms = 0) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN) != 0;
}

TEST(EventfdQueue, StartsValidEmptyAndNotReadable) {
  EventfdQueue<int> q;
  ASSERT_TRUE(q.valid()) << q.open_errno();
  EXPECT_EQ(q.open_errno(), 0);
  EXPECT_GE(q.fd(), 0);
  EXPECT_EQ(q.size(), 0u);
  EXPECT_FALSE(readable(q.fd()));
  std::vector<int> out;
  EXPECT_EQ(q.pop(out, 10), 0u);
  EXPECT_TRUE(out.empty());
}

TEST(EventfdQueue, IsReadableExactlyWhileItemsWait) {
  EventfdQueue<int> q;
  q.push(1);
  EXPECT_TRUE(readable(q.fd()));
  q.push(2);
  q.push(3);
  EXPECT_EQ(q.size(), 3u);
  std::vector<int> out{0};  // pop appends
  EXPECT_EQ(q.pop(out, 2), 2u);
  EXPECT_EQ(out, (std::vector<int>{0, 1, 2}));
  EXPECT_TRUE(readable(q.fd())) << "one item is left";
  EXPECT_EQ(q.pop(out, 10), 1u);
  EXPECT_EQ(out, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_FALSE(readable(q.fd()));
  EXPECT_EQ(q.pop(out, 0), 0u);
  q.push(4);
  EXPECT_TRUE(readable(q.fd()));
  EXPECT_EQ(q.pop(out, 0), 0u);  // taking none leaves it readable
  EXPECT_TRUE(readable(q.fd()));
}

TEST(EventfdQueue, SignalSetsTheFdWithoutAnItemUntilTheNextPop) {
  EventfdQueue<int> q;
  q.signal();
  EXPECT_TRUE(readable(q.fd()));
  std::vector<int> out;
  EXPECT_EQ(q.pop(out, 4), 0u);
  EXPECT_FALSE(readable(q.fd()));
}

TEST(EventfdQueue, CarriesMoveOnlyItems) {
  EventfdQueue<std::unique_ptr<int>> q;
  q.push(std::make_unique<int>(7));
  std::vector<std::unique_ptr<int>> out;
  ASSERT_EQ(q.pop(out, 1), 1u);
  EXPECT_EQ(*out[0], 7);
}

TEST(EventfdQueue, AConsumerSleepingOnTheFdMissesNoItemOfSeveralProducers) {
  constexpr int k_producers = 4;
  constexpr int k_per_producer = 20000;
  EventfdQueue<std::pair<int, int>> q;  // (producer, sequence)
  std::vector<std::thread> producers;
  for (int p = 0; p < k_producers; ++p) {
    producers.emplace_back([&q, p] {
      for (int i = 0; i < k_per_producer; ++i) q.push({p, i});
    });
  }
  std::vector<int> next(k_producers, 0);
  std::vector<std::pair<int, int>> out;
  int taken = 0;
  bool stalled = false;
  while (taken < k_producers * k_per_producer) {
    if (!readable(q.fd(), 10000)) {
      stalled = true;  // items wait but the fd never woke us
      break;
    }
    out.clear();
    taken += static_cast<int>(q.pop(out, 97));
    for (const auto& [p, i] : out) {
      EXPECT_EQ(i, next[static_cast<std::size_t>(p)]) << "producer " << p << " out of order";
      next[static_cast<std::size_t>(p)] = i + 1;
    }
  }
  for (auto& t : producers) t.join();
  EXPECT_FALSE(stalled) << "missed wake-up after " << taken << " items";
  EXPECT_EQ(taken, k_producers * k_per_producer);
  EXPECT_EQ(q.size(), 0u);
  EXPECT_FALSE(readable(q.fd()));
}

}  // namespace
}  // namespace sluice::base
