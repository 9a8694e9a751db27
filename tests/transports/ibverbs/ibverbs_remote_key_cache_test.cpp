#include "transports/ibverbs/ibverbs_remote_key_cache.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace sluice::transport::ibverbs {
namespace {

using Verdict = RemoteKeyCache::Verdict;

const RemoteRegionDesc k_desc{0x5000, 77, 1 << 20};

TEST(IbverbsRemoteKeyCache, FirstUseQueriesLaterOnesWaitThenAllProceed) {
  RemoteKeyCache cache(16);
  EXPECT_EQ(cache.want(1, 0, 42, 100).verdict, Verdict::query);
  EXPECT_EQ(cache.want(1, 0, 42, 101).verdict, Verdict::wait);
  const auto waiters = cache.answered(1, 0, 42, k_desc);
  ASSERT_EQ(waiters.size(), 2u);
  EXPECT_EQ(waiters[0].op, 100u);
  EXPECT_EQ(waiters[1].op, 101u);
  EXPECT_NE(waiters[0].use, 0u);
  EXPECT_EQ(waiters[0].use, waiters[1].use);
  const auto hit = cache.want(1, 0, 42, 102);
  EXPECT_EQ(hit.verdict, Verdict::hit);
  EXPECT_EQ(hit.desc, k_desc);
  // Another rail or peer is another entry: the rkey differs per NIC.
  EXPECT_EQ(cache.want(1, 1, 42, 103).verdict, Verdict::query);
  EXPECT_EQ(cache.want(2, 0, 42, 104).verdict, Verdict::query);
  EXPECT_EQ(cache.size(), 3u);
}

TEST(IbverbsRemoteKeyCache, ErrorAnswerFailsTheWaitersAndIsNotCached) {
  RemoteKeyCache cache(16);
  ASSERT_EQ(cache.want(1, 0, 9, 1).verdict, Verdict::query);
  ASSERT_EQ(cache.want(1, 0, 9, 2).verdict, Verdict::wait);
  const auto waiters = cache.answered(1, 0, 9, Status(StatusCode::not_found, "no region with key 9"));
  ASSERT_EQ(waiters.size(), 2u);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.want(1, 0, 9, 3).verdict, Verdict::query) << "the region may exist later";
  // An answer nobody waits for is ignored.
  EXPECT_TRUE(cache.answered(5, 0, 1, k_desc).empty());
}

TEST(IbverbsRemoteKeyCache, RevokeIsAckedAtOnceWhenIdle) {
  RemoteKeyCache cache(16);
  ASSERT_EQ(cache.want(1, 0, 42, 1).verdict, Verdict::query);
  const auto w = cache.answered(1, 0, 42, k_desc);
  EXPECT_FALSE(cache.finished(w[0].use).has_value());
  EXPECT_TRUE(cache.revoke(1, 42));
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.want(1, 0, 42, 2).verdict, Verdict::query) << "a revoked region is asked for again";
  EXPECT_TRUE(cache.revoke(3, 1)) << "revoking something unknown acks at once";
}

TEST(IbverbsRemoteKeyCache, RevokeWaitsForTransfersInFlightOnEveryRail) {
  RemoteKeyCache cache(16);
  ASSERT_EQ(cache.want(1, 0, 42, 1).verdict, Verdict::query);
  ASSERT_EQ(cache.want(1, 1, 42, 2).verdict, Verdict::query);
  const std::uint64_t use0 = cache.answered(1, 0, 42, k_desc)[0].use;
  const std::uint64_t use1 = cache.answered(1, 1, 42, RemoteRegionDesc{0x5000, 88, 1 << 20})[0].use;
  const auto again = cache.want(1, 0, 42, 3);
  ASSERT_EQ(again.verdict, Verdict::hit);
  EXPECT_FALSE(cache.revoke(1, 42));
  EXPECT_EQ(cache.want(1, 0, 42, 4).verdict, Verdict::query) << "no new use of a revoked entry";
  EXPECT_FALSE(cache.finished(use0).has_value());
  EXPECT_FALSE(cache.finished(again.use).has_value()) << "rail 1 still in flight";
  const auto ack = cache.finished(use1);
  ASSERT_TRUE(ack.has_value());
  EXPECT_EQ(ack->first, 1u);
  EXPECT_EQ(ack->second, 42u);
  EXPECT_FALSE(cache.finished(use1).has_value()) << "a use ends once";
}

TEST(IbverbsRemoteKeyCache, EvictsTheLeastRecentlyUsedIdleEntry) {
  RemoteKeyCache cache(2);
  ASSERT_EQ(cache.want(1, 0, 1, 1).verdict, Verdict::query);
  const std::uint64_t u1 = cache.answered(1, 0, 1, k_desc)[0].use;
  ASSERT_EQ(cache.want(1, 0, 2, 2).verdict, Verdict::query);
  const std::uint64_t u2 = cache.answered(1, 0, 2, k_desc)[0].use;
  ASSERT_FALSE(cache.finished(u1).has_value());
  ASSERT_FALSE(cache.finished(u2).has_value());
  const auto touch = cache.want(1, 0, 1, 3);  // key 1 is now the most recent
  ASSERT_EQ(touch.verdict, Verdict::hit);
  cache.finished(touch.use);
  EXPECT_EQ(cache.want(1, 0, 3, 4).verdict, Verdict::query);
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.want(1, 0, 1, 5).verdict, Verdict::hit) << "the recent entry stayed";
  EXPECT_EQ(cache.want(1, 0, 2, 6).verdict, Verdict::full) << "key 2 was evicted; nothing idle to evict now";
}

TEST(IbverbsRemoteKeyCache, BusyEntriesAreNeverEvicted) {
  RemoteKeyCache cache(1);
  ASSERT_EQ(cache.want(1, 0, 1, 1).verdict, Verdict::query);
  EXPECT_EQ(cache.want(1, 0, 2, 2).verdict, Verdict::full) << "a pending query holds its entry";
  const std::uint64_t use = cache.answered(1, 0, 1, k_desc)[0].use;
  EXPECT_EQ(cache.want(1, 0, 2, 3).verdict, Verdict::full) << "a use in flight holds its entry";
  cache.finished(use);
  EXPECT_EQ(cache.want(1, 0, 2, 4).verdict, Verdict::query);
}

TEST(IbverbsRemoteKeyCache, ForgettingAPeerReturnsItsWaitingOps) {
  RemoteKeyCache cache(16);
  ASSERT_EQ(cache.want(1, 0, 1, 10).verdict, Verdict::query);
  ASSERT_EQ(cache.want(1, 0, 1, 11).verdict, Verdict::wait);
  ASSERT_EQ(cache.want(1, 1, 5, 12).verdict, Verdict::query);
  ASSERT_EQ(cache.want(2, 0, 1, 13).verdict, Verdict::query);
  auto waiting = cache.forget_peer(1);
  std::sort(waiting.begin(), waiting.end());
  EXPECT_EQ(waiting, (std::vector<std::uint64_t>{10, 11, 12}));
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_TRUE(cache.forget_peer(1).empty());
}

TEST(IbverbsRemoteKeyCache, ACarriedKeyIsUsedWithoutAQuery) {
  RemoteKeyCache cache(16);
  const auto primed = cache.prime(1, 0, 42, k_desc);
  EXPECT_TRUE(primed.stored);
  EXPECT_TRUE(primed.waiters.empty());
  const auto hit = cache.want(1, 0, 42, 100);
  ASSERT_EQ(hit.verdict, Verdict::hit);
  EXPECT_EQ(hit.desc, k_desc);
  EXPECT_EQ(cache.queries(), 0u);
  EXPECT_EQ(cache.primes(), 1u);
  // The key is per (peer, rail): another rail still asks, and is counted.
  EXPECT_EQ(cache.want(1, 1, 42, 101).verdict, Verdict::query);
  EXPECT_EQ(cache.queries(), 1u);
}

TEST(IbverbsRemoteKeyCache, ACarriedKeyAnswersAQueryInFlightAndTheLateAnswerIsIgnored) {
  RemoteKeyCache cache(16);
  ASSERT_EQ(cache.want(1, 0, 42, 100).verdict, Verdict::query);
  ASSERT_EQ(cache.want(1, 0, 42, 101).verdict, Verdict::wait);
  const auto primed = cache.prime(1, 0, 42, k_desc);
  ASSERT_TRUE(primed.stored);
  ASSERT_EQ(primed.waiters.size(), 2u);
  EXPECT_EQ(primed.waiters[0].op, 100u);
  EXPECT_EQ(primed.waiters[1].op, 101u);
  EXPECT_NE(primed.waiters[0].use, 0u);
  EXPECT_TRUE(cache.answered(1, 0, 42, RemoteRegionDesc{0x9000, 5, 64}).empty()) << "already resolved";
  EXPECT_EQ(cache.want(1, 0, 42, 102).desc, k_desc) << "the late answer did not overwrite the carried key";
}

TEST(IbverbsRemoteKeyCache, ANewerCarriedKeyReplacesTheCachedOneAndOldUsesFinishQuietly) {
  RemoteKeyCache cache(16);
  ASSERT_TRUE(cache.prime(1, 0, 42, k_desc).stored);
  const auto old_use = cache.want(1, 0, 42, 1);
  ASSERT_EQ(old_use.verdict, Verdict::hit);
  const RemoteRegionDesc newer{0x7000, 78, 1 << 20};
  ASSERT_TRUE(cache.prime(1, 0, 42, newer).stored);
  const auto fresh = cache.want(1, 0, 42, 2);
  ASSERT_EQ(fresh.verdict, Verdict::hit);
  EXPECT_EQ(fresh.desc, newer);
  EXPECT_NE(fresh.use, old_use.use);
  EXPECT_FALSE(cache.finished(old_use.use).has_value()) << "no revoke was asked: no ack owed";
  EXPECT_FALSE(cache.finished(old_use.use).has_value()) << "the retired use is gone";
  // The same key again changes nothing.
  ASSERT_TRUE(cache.prime(1, 0, 42, newer).stored);
  EXPECT_EQ(cache.want(1, 0, 42, 3).use, fresh.use);
}

TEST(IbverbsRemoteKeyCache, RevokeWaitsForAReplacedIncarnationStillInFlight) {
  RemoteKeyCache cache(16);
  ASSERT_TRUE(cache.prime(1, 0, 42, k_desc).stored);
  const auto old_use = cache.want(1, 0, 42, 1);
  ASSERT_TRUE(cache.prime(1, 0, 42, RemoteRegionDesc{0x7000, 78, 1 << 20}).stored);
  EXPECT_FALSE(cache.revoke(1, 42)) << "a transfer on the old key is still in flight";
  const auto ack = cache.finished(old_use.use);
  ASSERT_TRUE(ack.has_value());
  EXPECT_EQ(ack->second, 42u);
  EXPECT_EQ(cache.want(1, 0, 42, 2).verdict, Verdict::query) << "revoked: carried again or asked again";
}

TEST(IbverbsRemoteKeyCache, CarriedKeysRespectTheBound) {
  RemoteKeyCache cache(1);
  ASSERT_EQ(cache.want(1, 0, 1, 1).verdict, Verdict::query);
  EXPECT_FALSE(cache.prime(1, 0, 2, k_desc).stored) << "the pending query holds the only entry";
  const auto primed = cache.prime(1, 0, 1, k_desc);
  EXPECT_TRUE(primed.stored) << "priming the pending entry itself needs no room";
  ASSERT_EQ(primed.waiters.size(), 1u);
  EXPECT_FALSE(cache.prime(1, 0, 2, k_desc).stored) << "op 1 is in flight on the only entry: not evicted";
  cache.finished(primed.waiters[0].use);
  EXPECT_TRUE(cache.prime(1, 0, 2, k_desc).stored) << "idle now: evicted for the new key";
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.want(1, 0, 2, 3).verdict, Verdict::hit);
}

}  // namespace
}  // namespace sluice::transport::ibverbs
