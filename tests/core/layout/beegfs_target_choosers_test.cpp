#include "core/layout/beegfs_target_choosers.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "core/common/rng.hpp"

namespace sluice {
namespace {

constexpr std::uint64_t k_capacity = 8 * k_tib;
constexpr std::uint64_t k_normal_free = 4 * k_tib;  // above the 1 TiB low limit
constexpr std::uint64_t k_low_free = 100 * k_gib;   // between 20 GiB and 1 TiB
constexpr std::uint64_t k_emergency_free = 5 * k_gib;

constexpr ChooserKind k_beegfs_kinds[] = {ChooserKind::randomized, ChooserKind::roundrobin, ChooserKind::randomrobin,
                                          ChooserKind::randominternode};

// `nodes` nodes with `per_node` targets each; target id = 100 + index.
std::vector<TargetInfo> cluster(std::uint32_t nodes, std::uint32_t per_node, std::uint64_t free = k_normal_free) {
  std::vector<TargetInfo> targets;
  for (std::uint32_t n = 0; n < nodes; ++n) {
    for (std::uint32_t t = 0; t < per_node; ++t) {
      targets.push_back(TargetInfo{100 + n * per_node + t, n, k_capacity, free, true});
    }
  }
  return targets;
}

ChooseRequest want(std::uint32_t count, std::uint32_t min_required = 1) {
  ChooseRequest r;
  r.stripe_count = count;
  r.min_required_count = min_required;
  return r;
}

std::vector<TargetId> choose_ok(ChooserKind kind, const std::vector<TargetInfo>& targets, const ChooseRequest& request,
                                RoundRobinState& rr, Rng& rng) {
  Result<std::vector<TargetId>> r = choose_beegfs_targets(kind, targets, request, CapacityPoolLimits{}, rr, rng);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? *r : std::vector<TargetId>{};
}

bool distinct(std::vector<TargetId> ids) {
  std::sort(ids.begin(), ids.end());
  return std::adjacent_find(ids.begin(), ids.end()) == ids.end();
}

// ---- properties of every BeeGFS chooser -----------------------------------------------

TEST(BeegfsChoosers, NeverRepeatATargetInOneFileAndOnlyPickCandidates) {
  Rng rng(1);
  for (ChooserKind kind : k_beegfs_kinds) {
    RoundRobinState rr;
    for (int round = 0; round < 400; ++round) {
      std::vector<TargetInfo> targets = cluster(1 + rng.uniform(6), 1 + rng.uniform(6));
      for (TargetInfo& t : targets) {
        const std::uint64_t roll = rng.uniform(10);
        if (roll == 0) t.online = false;
        if (roll == 1) t.free_bytes = k_low_free;
        if (roll == 2) t.free_bytes = k_emergency_free;
      }
      const auto count = static_cast<std::uint32_t>(1 + rng.uniform(40));
      Result<std::vector<TargetId>> r =
          choose_beegfs_targets(kind, targets, want(count), CapacityPoolLimits{}, rr, rng);
      if (!r.ok()) {
        ASSERT_EQ(r.status().code(), StatusCode::no_space) << r.status().to_string();
        continue;
      }
      ASSERT_FALSE(r->empty());
      ASSERT_LE(r->size(), count);
      ASSERT_TRUE(distinct(*r)) << to_string(kind);
      for (TargetId id : *r) {
        const auto it = std::find_if(targets.begin(), targets.end(), [&](const TargetInfo& t) { return t.id == id; });
        ASSERT_NE(it, targets.end());
        ASSERT_TRUE(it->online) << to_string(kind) << " chose offline target " << id;
      }
    }
  }
}

TEST(BeegfsChoosers, ReduceTheCountToTheTargetsAvailable) {
  Rng rng(2);
  const std::vector<TargetInfo> targets = cluster(3, 1);
  for (ChooserKind kind : k_beegfs_kinds) {
    RoundRobinState rr;
    EXPECT_EQ(choose_ok(kind, targets, want(8), rr, rng).size(), 3u) << to_string(kind);
    EXPECT_EQ(choose_ok(kind, targets, want(2), rr, rng).size(), 2u) << to_string(kind);
  }
}

TEST(BeegfsChoosers, FailWithNoSpaceWhenFewerThanTheRequiredMinimumAreReachable) {
  Rng rng(3);
  std::vector<TargetInfo> offline = cluster(2, 2);
  for (TargetInfo& t : offline) t.online = false;
  for (ChooserKind kind : k_beegfs_kinds) {
    RoundRobinState rr;
    const auto none = choose_beegfs_targets(kind, offline, want(2), CapacityPoolLimits{}, rr, rng);
    EXPECT_EQ(none.status().code(), StatusCode::no_space) << to_string(kind);
    const auto short_of_min = choose_beegfs_targets(kind, cluster(1, 2), want(4, 3), CapacityPoolLimits{}, rr, rng);
    EXPECT_EQ(short_of_min.status().code(), StatusCode::no_space) << to_string(kind);
    EXPECT_NE(short_of_min.status().message().find("min_required_count=3"), std::string::npos)
        << short_of_min.status().message();
  }
}

TEST(BeegfsChoosers, RejectBadRequestsCandidatesAndLimits) {
  Rng rng(4);
  RoundRobinState rr;
  const std::vector<TargetInfo> targets = cluster(2, 2);
  const auto bad = [&](const ChooseRequest& req, const std::vector<TargetInfo>& cands, CapacityPoolLimits limits,
                       ChooserKind kind = ChooserKind::randomized) {
    return choose_beegfs_targets(kind, cands, req, limits, rr, rng).status().code();
  };
  EXPECT_EQ(bad(want(0), targets, {}), StatusCode::invalid_argument);
  EXPECT_EQ(bad(want(k_max_stripe_count + 1), targets, {}), StatusCode::invalid_argument);
  EXPECT_EQ(bad(want(2, 0), targets, {}), StatusCode::invalid_argument);
  EXPECT_EQ(bad(want(2, 3), targets, {}), StatusCode::invalid_argument);
  EXPECT_EQ(bad(want(2), targets, {}, ChooserKind::lustre_qos), StatusCode::invalid_argument);
  std::vector<TargetInfo> duplicate = targets;
  duplicate[1].id = duplicate[0].id;
  EXPECT_EQ(bad(want(2), duplicate, {}), StatusCode::invalid_argument);
  EXPECT_EQ(bad(want(2), targets, CapacityPoolLimits{10, 20}), StatusCode::invalid_argument);
}

TEST(BeegfsChoosers, SameSeedGivesTheSameChoices) {
  const std::vector<TargetInfo> targets = cluster(4, 4);
  for (ChooserKind kind : k_beegfs_kinds) {
    Rng a(99), b(99);
    RoundRobinState rr_a, rr_b;
    for (int i = 0; i < 100; ++i) {
      ASSERT_EQ(choose_ok(kind, targets, want(5), rr_a, a), choose_ok(kind, targets, want(5), rr_b, b));
    }
  }
}

// ---- randomized ----------------------------------------------------------------------------

void expect_even_shares(const std::map<TargetId, int>& counts, std::size_t targets, double expected, double tolerance) {
  ASSERT_EQ(counts.size(), targets);
  for (const auto& [id, count] : counts) {
    EXPECT_NEAR(count, expected, expected * tolerance) << "target " << id;
  }
}

TEST(BeegfsRandomized, SpreadsFilesEvenlyOverTargets) {
  Rng rng(5);
  RoundRobinState rr;
  constexpr int k_files = 100000;
  for (const auto& [target_count, stripes] : {std::pair{16u, 4u}, std::pair{10u, 3u}, std::pair{7u, 7u}}) {
    const std::vector<TargetInfo> targets = cluster(target_count, 1);
    std::map<TargetId, int> counts;
    std::map<TargetId, int> first_stripe;
    for (int f = 0; f < k_files; ++f) {
      const std::vector<TargetId> ids = choose_ok(ChooserKind::randomized, targets, want(stripes), rr, rng);
      ASSERT_EQ(ids.size(), stripes);
      for (TargetId id : ids) ++counts[id];
      ++first_stripe[ids.front()];
    }
    expect_even_shares(counts, target_count, static_cast<double>(k_files) * stripes / target_count, 0.03);
    // The random start of the ring also makes the first stripe uniform.
    expect_even_shares(first_stripe, target_count, static_cast<double>(k_files) / target_count, 0.05);
  }
}

// ---- roundrobin ----------------------------------------------------------------------------

TEST(BeegfsRoundRobin, HandsOutTargetsInIdOrderAroundTheRing) {
  Rng rng(6);
  RoundRobinState rr;
  const std::vector<TargetInfo> targets = {{9, 0, k_capacity, k_normal_free, true},
                                           {2, 0, k_capacity, k_normal_free, true},
                                           {7, 1, k_capacity, k_normal_free, true},
                                           {5, 1, k_capacity, k_normal_free, true}};
  EXPECT_EQ(choose_ok(ChooserKind::roundrobin, targets, want(3), rr, rng), (std::vector<TargetId>{2, 5, 7}));
  EXPECT_EQ(choose_ok(ChooserKind::roundrobin, targets, want(3), rr, rng), (std::vector<TargetId>{9, 2, 5}));
  EXPECT_EQ(choose_ok(ChooserKind::roundrobin, targets, want(1), rr, rng), (std::vector<TargetId>{7}));
  EXPECT_EQ(rr.next_target, 8u);
  EXPECT_EQ(choose_ok(ChooserKind::roundrobin, targets, want(4), rr, rng), (std::vector<TargetId>{9, 2, 5, 7}));
}

TEST(BeegfsRoundRobin, IsExactOver100000Files) {
  Rng rng(7);
  RoundRobinState rr;
  const std::vector<TargetInfo> targets = cluster(13, 1);
  std::map<TargetId, int> counts;
  for (int f = 0; f < 100000; ++f) {
    for (TargetId id : choose_ok(ChooserKind::roundrobin, targets, want(4), rr, rng)) ++counts[id];
  }
  const auto [lo, hi] = std::minmax_element(counts.begin(), counts.end(),
                                            [](const auto& a, const auto& b) { return a.second < b.second; });
  EXPECT_EQ(counts.size(), 13u);
  EXPECT_LE(hi->second - lo->second, 1);
}

TEST(BeegfsRoundRobin, SkipsOfflineTargetsAndKeepsItsPlace) {
  Rng rng(8);
  RoundRobinState rr;
  std::vector<TargetInfo> targets = cluster(5, 1);  // ids 100..104
  EXPECT_EQ(choose_ok(ChooserKind::roundrobin, targets, want(2), rr, rng), (std::vector<TargetId>{100, 101}));
  targets[2].online = false;  // 102
  EXPECT_EQ(choose_ok(ChooserKind::roundrobin, targets, want(2), rr, rng), (std::vector<TargetId>{103, 104}));
  EXPECT_EQ(choose_ok(ChooserKind::roundrobin, targets, want(3), rr, rng), (std::vector<TargetId>{100, 101, 103}));
}

// ---- randomrobin ---------------------------------------------------------------------------

TEST(BeegfsRandomRobin, ChoosesTheRoundRobinTargetsInShuffledOrder) {
  Rng rng_rr(9), rng_shuffled(9);
  RoundRobinState rr, shuffled_rr;
  const std::vector<TargetInfo> targets = cluster(11, 1);
  int reordered = 0;
  std::map<TargetId, int> counts;
  for (int f = 0; f < 100000; ++f) {
    const std::vector<TargetId> plain = choose_ok(ChooserKind::roundrobin, targets, want(5), rr, rng_rr);
    std::vector<TargetId> shuffled = choose_ok(ChooserKind::randomrobin, targets, want(5), shuffled_rr, rng_shuffled);
    for (TargetId id : shuffled) ++counts[id];
    if (shuffled != plain) ++reordered;
    std::vector<TargetId> a = plain, b = shuffled;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    ASSERT_EQ(a, b) << "randomrobin must pick the round-robin set";
  }
  // 1 of 120 orders is the round-robin one.
  EXPECT_GT(reordered, 95000);
  const auto [lo, hi] = std::minmax_element(counts.begin(), counts.end(),
                                            [](const auto& a, const auto& b) { return a.second < b.second; });
  EXPECT_LE(hi->second - lo->second, 1);
}

// ---- randominternode -----------------------------------------------------------------------

TEST(BeegfsRandomInternode, NeverPutsTwoStripesOnOneNode) {
  Rng rng(10);
  RoundRobinState rr;
  const std::vector<TargetInfo> targets = cluster(8, 4);
  std::map<NodeId, int> node_counts;
  std::map<TargetId, int> target_counts;
  constexpr int k_files = 100000;
  for (int f = 0; f < k_files; ++f) {
    const std::vector<TargetId> ids = choose_ok(ChooserKind::randominternode, targets, want(4), rr, rng);
    ASSERT_EQ(ids.size(), 4u);
    std::set<NodeId> nodes;
    for (TargetId id : ids) {
      const NodeId node = (id - 100) / 4;
      ASSERT_TRUE(nodes.insert(node).second) << "two stripes on node " << node;
      ++node_counts[node];
      ++target_counts[id];
    }
  }
  expect_even_shares(node_counts, 8, k_files * 4.0 / 8, 0.03);
  expect_even_shares(target_counts, 32, k_files * 4.0 / 32, 0.05);
}

TEST(BeegfsRandomInternode, ReducesTheCountToTheNumberOfNodes) {
  Rng rng(11);
  RoundRobinState rr;
  const std::vector<TargetInfo> targets = cluster(3, 5);
  for (int f = 0; f < 1000; ++f) {
    const std::vector<TargetId> ids = choose_ok(ChooserKind::randominternode, targets, want(6), rr, rng);
    ASSERT_EQ(ids.size(), 3u);
    std::set<NodeId> nodes;
    for (TargetId id : ids) nodes.insert((id - 100) / 5);
    ASSERT_EQ(nodes.size(), 3u);
  }
}

TEST(BeegfsRandomInternode, SkipsTargetsWithoutAKnownNode) {
  Rng rng(12);
  RoundRobinState rr;
  std::vector<TargetInfo> targets = cluster(2, 1);
  targets.push_back(TargetInfo{500, k_no_id, k_capacity, k_normal_free, true});
  for (int f = 0; f < 200; ++f) {
    const std::vector<TargetId> ids = choose_ok(ChooserKind::randominternode, targets, want(3), rr, rng);
    ASSERT_EQ(ids.size(), 2u);
    ASSERT_EQ(std::count(ids.begin(), ids.end(), TargetId{500}), 0);
  }
}

TEST(BeegfsRandomInternode, UsesANodeOnlyOnceAcrossPools) {
  Rng rng(13);
  RoundRobinState rr;
  // Node 0 has a normal and a low target; node 1 only a low one.
  const std::vector<TargetInfo> targets = {{1, 0, k_capacity, k_normal_free, true},
                                           {2, 0, k_capacity, k_low_free, true},
                                           {3, 1, k_capacity, k_low_free, true}};
  for (int f = 0; f < 200; ++f) {
    const std::vector<TargetId> ids = choose_ok(ChooserKind::randominternode, targets, want(3, 2), rr, rng);
    ASSERT_EQ(ids, (std::vector<TargetId>{1, 3}));
  }
}

TEST(BeegfsRandomInternode, RunsAsRandomizedForBuddyGroups) {
  Rng rng(14);
  RoundRobinState rr;
  const std::vector<TargetInfo> groups = cluster(1, 6);  // all on one node
  ChooseRequest request = want(4);
  request.buddy_groups = true;
  EXPECT_EQ(choose_ok(ChooserKind::randominternode, groups, request, rr, rng).size(), 4u);
  request.buddy_groups = false;
  EXPECT_EQ(choose_ok(ChooserKind::randominternode, groups, request, rr, rng).size(), 1u);
}

// ---- capacity pools ------------------------------------------------------------------------

std::vector<TargetInfo> mixed_pools() {
  std::vector<TargetInfo> targets;
  for (TargetId id = 0; id < 8; ++id) targets.push_back({id, id, k_capacity, k_normal_free, true});
  for (TargetId id = 10; id < 14; ++id) targets.push_back({id, id, k_capacity, k_low_free, true});
  for (TargetId id = 20; id < 24; ++id) targets.push_back({id, id, k_capacity, k_emergency_free, true});
  return targets;
}

TEST(BeegfsCapacityPools, EmergencyTargetIsNeverChosenWhileNormalTargetsExist) {
  Rng rng(15);
  const std::vector<TargetInfo> targets = mixed_pools();
  for (ChooserKind kind : k_beegfs_kinds) {
    RoundRobinState rr;
    for (int f = 0; f < 20000; ++f) {
      const std::vector<TargetId> ids = choose_ok(kind, targets, want(1 + f % 12), rr, rng);
      for (TargetId id : ids) ASSERT_LT(id, 10u) << to_string(kind) << " left the normal pool";
    }
  }
}

TEST(BeegfsCapacityPools, LowPoolTopsUpOnlyWhenTheRequiredMinimumDemandsIt) {
  Rng rng(16);
  const std::vector<TargetInfo> targets = mixed_pools();
  for (ChooserKind kind : {ChooserKind::randomized, ChooserKind::randominternode}) {
    RoundRobinState rr;
    for (int f = 0; f < 2000; ++f) {
      const std::vector<TargetId> ids = choose_ok(kind, targets, want(10, 10), rr, rng);
      ASSERT_EQ(ids.size(), 10u);
      ASSERT_EQ(std::count_if(ids.begin(), ids.end(), [](TargetId id) { return id < 10; }), 8);
      ASSERT_EQ(std::count_if(ids.begin(), ids.end(), [](TargetId id) { return id >= 10 && id < 14; }), 2);
    }
    // Wanting more than normal+low reaches into the emergency pool.
    const std::vector<TargetId> all = choose_ok(kind, targets, want(14, 14), rr, rng);
    ASSERT_EQ(all.size(), 14u);
    EXPECT_EQ(std::count_if(all.begin(), all.end(), [](TargetId id) { return id >= 20; }), 2);
  }
}

TEST(BeegfsCapacityPools, EmergencyPoolIsTheLastResort) {
  Rng rng(17);
  std::vector<TargetInfo> targets = mixed_pools();
  for (TargetInfo& t : targets) {
    if (t.id < 20) t.online = false;
  }
  for (ChooserKind kind : k_beegfs_kinds) {
    RoundRobinState rr;
    const std::vector<TargetId> ids = choose_ok(kind, targets, want(3), rr, rng);
    ASSERT_EQ(ids.size(), 3u);
    for (TargetId id : ids) EXPECT_GE(id, 20u);
  }
}

TEST(BeegfsCapacityPools, RoundRobinDrawsOnlyFromTheFirstNonEmptyPool) {
  Rng rng(18);
  std::vector<TargetInfo> targets = mixed_pools();
  for (TargetInfo& t : targets) {
    if (t.id < 10) t.online = false;  // normal pool empty: the low pool serves alone
  }
  RoundRobinState rr;
  const std::vector<TargetId> ids = choose_ok(ChooserKind::roundrobin, targets, want(6), rr, rng);
  EXPECT_EQ(ids, (std::vector<TargetId>{10, 11, 12, 13}));
  EXPECT_EQ(choose_beegfs_targets(ChooserKind::roundrobin, targets, want(6, 5), CapacityPoolLimits{}, rr, rng)
                .status()
                .code(),
            StatusCode::no_space);
}

}  // namespace
}  // namespace sluice
