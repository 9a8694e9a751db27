#include "core/layout/target_chooser.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "core/common/rng.hpp"
#include "core/layout/target_info.hpp"

namespace sluice {
namespace {

std::vector<TargetInfo> targets(TargetId count, std::uint64_t free = 4 * k_tib) {
  std::vector<TargetInfo> out;
  for (TargetId id = 0; id < count; ++id) out.push_back({id, id / 2, 8 * k_tib, free, true});
  return out;
}

ChooseRequest want(std::uint32_t count, std::uint32_t min_required = 1) {
  ChooseRequest r;
  r.stripe_count = count;
  r.min_required_count = min_required;
  return r;
}

TargetChooser make(ChooserKind kind) {
  TargetChooserConfig config;
  config.kind = kind;
  Result<TargetChooser> r = TargetChooser::make(config);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return std::move(r).value();
}

bool mentions(const Status& s, std::string_view text) { return s.message().find(text) != std::string::npos; }

TEST(TargetChooser, RoundRobinKindKeepsItsPositionBetweenFiles) {
  TargetChooser chooser = make(ChooserKind::roundrobin);
  Rng rng(1);
  const std::vector<TargetInfo> cands = targets(5);
  EXPECT_EQ(*chooser.choose(cands, want(3), rng), (std::vector<TargetId>{0, 1, 2}));
  EXPECT_EQ(*chooser.choose(cands, want(3), rng), (std::vector<TargetId>{3, 4, 0}));
  EXPECT_EQ(chooser.round_robin_state().next_target, 1u);
  EXPECT_EQ(chooser.config().kind, ChooserKind::roundrobin);
}

TEST(TargetChooser, EveryKindReturnsDistinctTargets) {
  Rng rng(2);
  for (ChooserKind kind : {ChooserKind::randomized, ChooserKind::roundrobin, ChooserKind::randomrobin,
                           ChooserKind::randominternode, ChooserKind::lustre_qos}) {
    TargetChooser chooser = make(kind);
    std::vector<TargetInfo> cands = targets(12);
    for (TargetInfo& t : cands) t.free_bytes = (t.id % 3 + 1) * k_tib;  // imbalanced for lustre_qos
    for (int f = 0; f < 2000; ++f) {
      Result<std::vector<TargetId>> r = chooser.choose(cands, want(4), rng);
      ASSERT_TRUE(r.ok()) << to_string(kind) << ": " << r.status().to_string();
      ASSERT_EQ(r->size(), 4u);
      std::vector<TargetId> ids = *r;
      std::sort(ids.begin(), ids.end());
      ASSERT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end()) << to_string(kind);
    }
  }
}

TEST(TargetChooser, LustreKindHonoursStartTarget) {
  TargetChooser chooser = make(ChooserKind::lustre_qos);
  Rng rng(3);
  ChooseRequest request = want(3);
  request.start_target = 4;
  EXPECT_EQ(*chooser.choose(targets(6), request, rng), (std::vector<TargetId>{4, 5, 0}));
  EXPECT_EQ(chooser.lustre_allocator().last_mode(), QosMode::specific);
  EXPECT_TRUE(chooser.choose(targets(6), want(3), rng).ok());
  EXPECT_EQ(chooser.lustre_allocator().last_mode(), QosMode::round_robin);
}

TEST(TargetChooser, LustreKindEnforcesRequestAndMinimum) {
  TargetChooser chooser = make(ChooserKind::lustre_qos);
  Rng rng(4);
  const auto short_of_min = chooser.choose(targets(2), want(4, 3), rng);
  EXPECT_EQ(short_of_min.status().code(), StatusCode::no_space);
  EXPECT_TRUE(mentions(short_of_min.status(), "min_required_count=3")) << short_of_min.status().message();
  EXPECT_EQ(chooser.choose(targets(2), want(0), rng).status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(chooser.choose(targets(2), want(2), rng)->size(), 2u);
  std::vector<TargetInfo> offline = targets(2);
  for (TargetInfo& t : offline) t.online = false;
  EXPECT_EQ(chooser.choose(offline, want(1), rng).status().code(), StatusCode::no_space);
}

TEST(TargetChooser, MakeRejectsBadConfiguration) {
  TargetChooserConfig bad_limits;
  bad_limits.pool_limits = CapacityPoolLimits{1 * k_gib, 2 * k_gib};
  EXPECT_EQ(TargetChooser::make(bad_limits).status().code(), StatusCode::invalid_argument);
  TargetChooserConfig bad_qos;
  bad_qos.lustre_qos.prio_free_percent = 150;
  EXPECT_EQ(TargetChooser::make(bad_qos).status().code(), StatusCode::invalid_argument);
}

TEST(ChooserKind, NamesRoundTripAndUnknownNamesAreErrors) {
  for (ChooserKind kind : {ChooserKind::randomized, ChooserKind::roundrobin, ChooserKind::randomrobin,
                           ChooserKind::randominternode, ChooserKind::lustre_qos}) {
    const Result<ChooserKind> back = chooser_kind_from_string(to_string(kind));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, kind);
  }
  const Result<ChooserKind> unknown = chooser_kind_from_string("randomintranode");
  EXPECT_EQ(unknown.status().code(), StatusCode::invalid_argument);
  EXPECT_TRUE(mentions(unknown.status(), "randomintranode")) << unknown.status().message();
}

TEST(ChooseRequest, ValidationNamesTheBadField) {
  EXPECT_TRUE(validate(ChooseRequest{}).ok());
  EXPECT_TRUE(mentions(validate(want(0)), "stripe_count"));
  EXPECT_TRUE(mentions(validate(want(k_max_stripe_count + 1)), "stripe_count"));
  EXPECT_TRUE(mentions(validate(want(3, 0)), "min_required_count"));
  EXPECT_TRUE(mentions(validate(want(3, 4)), "min_required_count"));
}

TEST(TargetInfo, ValidateTargetsNamesTheBadEntry) {
  std::vector<TargetInfo> cands = targets(3);
  EXPECT_TRUE(validate_targets(cands).ok());
  cands[2].id = 0;
  EXPECT_TRUE(mentions(validate_targets(cands), "targets[2].id=0 repeats")) << validate_targets(cands).message();
  cands[2].id = k_no_id;
  EXPECT_TRUE(mentions(validate_targets(cands), "targets[2].id is the reserved"));
  cands[2] = {2, 0, 10, 20, true};
  EXPECT_TRUE(mentions(validate_targets(cands), "free_bytes=20 exceeds capacity_bytes=10"));
  EXPECT_TRUE(
      mentions(validate_targets(std::vector<TargetInfo>(k_max_chooser_candidates + 1)), "k_max_chooser_candidates"));
}

TEST(CapacityPool, ClassifiesByFreeSpaceAtTheLimits) {
  const CapacityPoolLimits limits;  // BeeGFS 7 defaults
  EXPECT_EQ(limits.low_free_bytes, 1 * k_tib);
  EXPECT_EQ(limits.emergency_free_bytes, 20 * k_gib);
  const auto pool = [&](std::uint64_t free) { return capacity_pool_of({1, 1, 8 * k_tib, free, true}, limits); };
  EXPECT_EQ(pool(1 * k_tib), CapacityPool::normal);
  EXPECT_EQ(pool(1 * k_tib - 1), CapacityPool::low);
  EXPECT_EQ(pool(20 * k_gib), CapacityPool::low);
  EXPECT_EQ(pool(20 * k_gib - 1), CapacityPool::emergency);
  EXPECT_EQ(pool(0), CapacityPool::emergency);
  EXPECT_EQ(to_string(CapacityPool::low), "low");
  EXPECT_TRUE(validate(limits).ok());
  EXPECT_TRUE(mentions(validate(CapacityPoolLimits{1, 2}), "emergency_free_bytes"));
}

TEST(TargetInfo, UsableMeansOnlineWithCapacity) {
  EXPECT_TRUE(target_usable({1, 1, 10, 0, true}));
  EXPECT_FALSE(target_usable({1, 1, 10, 5, false}));
  EXPECT_FALSE(target_usable({1, 1, 0, 0, true}));
}

}  // namespace
}  // namespace sluice
