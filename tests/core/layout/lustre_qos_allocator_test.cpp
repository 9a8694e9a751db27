#include "core/layout/lustre_qos_allocator.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "core/common/rng.hpp"

namespace sluice {
namespace {

constexpr std::uint64_t k_ost_capacity = 100 * k_gib;

// `oss` servers with `per_oss` OSTs each; OST id = oss * per_oss + index.
std::vector<TargetInfo> osts(std::uint32_t oss, std::uint32_t per_oss, std::uint64_t free = 80 * k_gib) {
  std::vector<TargetInfo> targets;
  for (std::uint32_t s = 0; s < oss; ++s) {
    for (std::uint32_t i = 0; i < per_oss; ++i) targets.push_back({s * per_oss + i, s, k_ost_capacity, free, true});
  }
  return targets;
}

std::vector<TargetId> allocate_ok(LustreQosAllocator& qos, const std::vector<TargetInfo>& targets, std::uint32_t count,
                                  Rng& rng) {
  Result<std::vector<TargetId>> r = qos.allocate(targets, count, rng);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? *r : std::vector<TargetId>{};
}

NodeId node_of(const std::vector<TargetInfo>& targets, TargetId id) {
  for (const TargetInfo& t : targets) {
    if (t.id == id) return t.node;
  }
  return k_no_id;
}

bool distinct(std::vector<TargetId> ids) {
  std::sort(ids.begin(), ids.end());
  return std::adjacent_find(ids.begin(), ids.end()) == ids.end();
}

// ---- mode selection -------------------------------------------------------------------

TEST(LustreQosMode, IsRoundRobinWithinTheThresholdAndWeightedBeyondIt) {
  LustreQosAllocator qos;
  Rng rng(1);
  std::vector<TargetInfo> targets = osts(2, 2, 100 * k_gib);
  targets[3].free_bytes = 84 * k_gib;  // 16% below the emptiest: balanced
  EXPECT_TRUE(qos.space_balanced(targets));
  allocate_ok(qos, targets, 2, rng);
  EXPECT_EQ(qos.last_mode(), QosMode::round_robin);

  targets[3].free_bytes = 82 * k_gib;  // 18% below: imbalanced
  EXPECT_FALSE(qos.space_balanced(targets));
  allocate_ok(qos, targets, 2, rng);
  EXPECT_EQ(qos.last_mode(), QosMode::weighted);
}

TEST(LustreQosMode, ThresholdIsConfigurable) {
  LustreQosAllocator strict(LustreQosConfig{5, 90});
  LustreQosAllocator lax(LustreQosConfig{50, 90});
  std::vector<TargetInfo> targets = osts(2, 2, 100 * k_gib);
  targets[0].free_bytes = 70 * k_gib;
  EXPECT_FALSE(strict.space_balanced(targets));
  EXPECT_TRUE(lax.space_balanced(targets));
  EXPECT_EQ(strict.config().threshold_rr_percent, 5u);
}

TEST(LustreQosMode, FewerThanTwoUsableTargetsMeansRoundRobin) {
  LustreQosAllocator qos;
  Rng rng(2);
  std::vector<TargetInfo> targets = osts(1, 2);
  targets[0].free_bytes = 10 * k_gib;
  targets[1].online = false;
  EXPECT_TRUE(qos.space_balanced(targets));
  EXPECT_EQ(allocate_ok(qos, targets, 3, rng), (std::vector<TargetId>{0}));
  EXPECT_EQ(qos.last_mode(), QosMode::round_robin);
}

TEST(LustreQosConfig, RejectsPercentagesAbove100) {
  EXPECT_TRUE(validate(LustreQosConfig{}).ok());
  EXPECT_NE(validate(LustreQosConfig{101, 90}).message().find("threshold_rr_percent"), std::string::npos);
  EXPECT_NE(validate(LustreQosConfig{17, 101}).message().find("prio_free_percent"), std::string::npos);
  EXPECT_EQ(to_string(QosMode::weighted), "weighted");
}

// ---- round-robin ---------------------------------------------------------------------------

TEST(LustreQosRoundRobin, SpreadsEvenlyOver100000Files) {
  LustreQosAllocator qos;
  Rng rng(3);
  const std::vector<TargetInfo> targets = osts(4, 4);
  std::map<TargetId, int> counts;
  for (int f = 0; f < 100000; ++f) {
    for (TargetId id : allocate_ok(qos, targets, 4, rng)) ++counts[id];
  }
  EXPECT_EQ(qos.last_mode(), QosMode::round_robin);
  ASSERT_EQ(counts.size(), 16u);
  for (const auto& [id, count] : counts) EXPECT_NEAR(count, 25000, 100) << "OST " << id;
}

TEST(LustreQosRoundRobin, PutsConsecutiveStripesOnDifferentServers) {
  LustreQosAllocator qos;
  Rng rng(4);
  const std::vector<TargetInfo> symmetric = osts(4, 4);
  for (int f = 0; f < 20000; ++f) {
    std::set<NodeId> nodes;
    for (TargetId id : allocate_ok(qos, symmetric, 4, rng)) nodes.insert(node_of(symmetric, id));
    ASSERT_EQ(nodes.size(), 4u) << "file " << f;
  }
  // Unequal servers: 4 + 2 + 2 OSTs interleave as A B A C A B A C.
  std::vector<TargetInfo> uneven = osts(1, 4);
  for (TargetId id = 4; id < 8; ++id) uneven.push_back({id, id < 6 ? 1u : 2u, k_ost_capacity, 80 * k_gib, true});
  LustreQosAllocator qos2;
  for (int f = 0; f < 20000; ++f) {
    const std::vector<TargetId> ids = allocate_ok(qos2, uneven, 2, rng);
    ASSERT_NE(node_of(uneven, ids[0]), node_of(uneven, ids[1])) << "file " << f;
  }
}

TEST(LustreQosRoundRobin, WideFilesStillCoverEveryTargetOnce) {
  LustreQosAllocator qos;
  Rng rng(5);
  const std::vector<TargetInfo> targets = osts(3, 3);
  for (int f = 0; f < 3000; ++f) {
    const std::vector<TargetId> ids = allocate_ok(qos, targets, 12, rng);
    ASSERT_EQ(ids.size(), 9u);
    ASSERT_TRUE(distinct(ids));
  }
}

// ---- weighted ------------------------------------------------------------------------------

TEST(LustreQosWeighted, PrefersEmptierTargets) {
  LustreQosAllocator qos;
  Rng rng(6);
  // Four OSSs; per OSS one OST with 90 GiB free and one with 20 GiB free.
  std::vector<TargetInfo> targets = osts(4, 2);
  for (TargetInfo& t : targets) t.free_bytes = (t.id % 2 == 0) ? 90 * k_gib : 20 * k_gib;
  for (const std::uint32_t stripes : {1u, 3u}) {
    std::uint64_t empty_share = 0, full_share = 0;
    for (int f = 0; f < 100000; ++f) {
      const std::vector<TargetId> ids = allocate_ok(qos, targets, stripes, rng);
      ASSERT_TRUE(distinct(ids));
      for (TargetId id : ids) (id % 2 == 0 ? empty_share : full_share) += 1;
    }
    EXPECT_EQ(qos.last_mode(), QosMode::weighted);
    // Free space is 4.5 : 1; penalties flatten that, but the emptier OSTs
    // must clearly win.
    EXPECT_GT(empty_share, 2 * full_share) << stripes << " stripes";
  }
}

TEST(LustreQosWeighted, PreferenceGrowsWithFreeSpace) {
  LustreQosAllocator qos;
  Rng rng(7);
  std::vector<TargetInfo> targets;
  const std::uint64_t free_gib[] = {95, 70, 45, 20};
  for (TargetId id = 0; id < 4; ++id) targets.push_back({id, id, k_ost_capacity, free_gib[id] * k_gib, true});
  std::map<TargetId, int> counts;
  for (int f = 0; f < 100000; ++f) ++counts[allocate_ok(qos, targets, 1, rng).front()];
  EXPECT_GT(counts[0], counts[1]);
  EXPECT_GT(counts[1], counts[2]);
  EXPECT_GT(counts[2], counts[3]);
}

TEST(LustreQosWeighted, WorksWhenAllTargetsShareOneServer) {
  LustreQosAllocator qos;
  Rng rng(8);
  std::vector<TargetInfo> targets = osts(1, 4);
  targets[0].free_bytes = 90 * k_gib;
  targets[1].free_bytes = 90 * k_gib;
  targets[2].free_bytes = 10 * k_gib;
  targets[3].free_bytes = 10 * k_gib;
  std::map<TargetId, int> counts;
  for (int f = 0; f < 20000; ++f) {
    const std::vector<TargetId> ids = allocate_ok(qos, targets, 2, rng);
    ASSERT_TRUE(distinct(ids));
    for (TargetId id : ids) ++counts[id];
  }
  EXPECT_EQ(qos.last_mode(), QosMode::weighted);
  EXPECT_GT(counts[0] + counts[1], counts[2] + counts[3]);
}

TEST(LustreQosWeighted, PicksUniformlyWhenAllWeightsRoundToZero) {
  LustreQosAllocator qos;
  Rng rng(9);
  // Under 1 MiB free each: weights are 0 MiB, yet the targets are not full.
  std::vector<TargetInfo> targets = {{0, 0, 2 * k_mib, 900 * k_kib, true}, {1, 1, 2 * k_mib, 500 * k_kib, true}};
  std::map<TargetId, int> counts;
  for (int f = 0; f < 10000; ++f) ++counts[allocate_ok(qos, targets, 1, rng).front()];
  EXPECT_EQ(qos.last_mode(), QosMode::weighted);
  EXPECT_NEAR(counts[0], 5000, 300);
  EXPECT_EQ(allocate_ok(qos, targets, 2, rng).size(), 2u);
}

// ---- eligibility and errors ------------------------------------------------------------------

TEST(LustreQos, NeverRepeatsATargetAndNeverPicksFullOrOfflineOnes) {
  Rng rng(10);
  LustreQosAllocator qos;
  for (int round = 0; round < 3000; ++round) {
    std::vector<TargetInfo> targets = osts(1 + rng.uniform(5), 1 + rng.uniform(5), 0);
    for (TargetInfo& t : targets) {
      t.free_bytes = rng.uniform(k_ost_capacity);
      if (rng.uniform(8) == 0) t.online = false;
      if (rng.uniform(8) == 0) t.free_bytes = 10 * k_mib;  // below 0.1% of ~100 GiB used: full
    }
    const auto count = static_cast<std::uint32_t>(1 + rng.uniform(30));
    Result<std::vector<TargetId>> r = qos.allocate(targets, count, rng);
    if (!r.ok()) {
      ASSERT_EQ(r.status().code(), StatusCode::no_space);
      continue;
    }
    ASSERT_TRUE(distinct(*r));
    ASSERT_LE(r->size(), count);
    std::size_t usable = 0;
    for (const TargetInfo& t : targets) usable += LustreQosAllocator::usable(t) ? 1 : 0;
    ASSERT_EQ(r->size(), std::min<std::size_t>(count, usable)) << "count rule";
    for (TargetId id : *r) {
      const auto it = std::find_if(targets.begin(), targets.end(), [&](const TargetInfo& t) { return t.id == id; });
      ASSERT_TRUE(LustreQosAllocator::usable(*it)) << "picked unusable OST " << id;
    }
  }
}

TEST(LustreQos, FullMeansFreeBelowATenthOfAPercentOfUsedCappedAt1GiB) {
  EXPECT_FALSE(LustreQosAllocator::usable({0, 0, 100 * k_gib, 50 * k_mib, true}));  // reserve 99.95 MiB
  EXPECT_TRUE(LustreQosAllocator::usable({0, 0, 100 * k_gib, 150 * k_mib, true}));
  EXPECT_TRUE(LustreQosAllocator::usable({0, 0, 10 * k_tib, 1 * k_gib, true}));  // reserve capped at 1 GiB
  EXPECT_FALSE(LustreQosAllocator::usable({0, 0, 10 * k_tib, 1 * k_gib - 1, true}));
  EXPECT_FALSE(LustreQosAllocator::usable({0, 0, 100 * k_gib, 50 * k_gib, false}));
  EXPECT_FALSE(LustreQosAllocator::usable({0, 0, 0, 0, true}));
}

TEST(LustreQos, NoUsableTargetIsNoSpaceAndBadCountsAreRejected) {
  LustreQosAllocator qos;
  Rng rng(11);
  std::vector<TargetInfo> targets = osts(1, 2);
  EXPECT_EQ(qos.allocate(targets, 0, rng).status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(qos.allocate(targets, k_max_stripe_count + 1, rng).status().code(), StatusCode::invalid_argument);
  for (TargetInfo& t : targets) t.online = false;
  EXPECT_EQ(qos.allocate(targets, 1, rng).status().code(), StatusCode::no_space);
  std::vector<TargetInfo> duplicate = osts(1, 2);
  duplicate[1].id = duplicate[0].id;
  EXPECT_EQ(qos.allocate(duplicate, 1, rng).status().code(), StatusCode::invalid_argument);
}

// ---- stripe_offset ---------------------------------------------------------------------------

TEST(LustreQosSpecific, StartsAtTheRequestedTargetAndContinuesInIdOrder) {
  LustreQosAllocator qos;
  std::vector<TargetInfo> targets = osts(2, 4);  // ids 0..7
  Result<std::vector<TargetId>> r = qos.allocate_from(targets, 4, 6);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(*r, (std::vector<TargetId>{6, 7, 0, 1}));
  EXPECT_EQ(qos.last_mode(), QosMode::specific);
  targets[7].online = false;
  EXPECT_EQ(*qos.allocate_from(targets, 4, 6), (std::vector<TargetId>{6, 0, 1, 2}));
}

TEST(LustreQosSpecific, FailsRatherThanReducingTheCount) {
  LustreQosAllocator qos;
  std::vector<TargetInfo> targets = osts(1, 3);
  EXPECT_EQ(qos.allocate_from(targets, 4, 0).status().code(), StatusCode::no_space);
  EXPECT_EQ(qos.allocate_from(targets, 2, 42).status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(qos.allocate_from(targets, 0, 0).status().code(), StatusCode::invalid_argument);
  std::vector<TargetInfo> duplicate = targets;
  duplicate[1].id = duplicate[0].id;
  EXPECT_EQ(qos.allocate_from(duplicate, 1, 0).status().code(), StatusCode::invalid_argument);
}

}  // namespace
}  // namespace sluice
