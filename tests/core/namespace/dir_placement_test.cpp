#include "core/namespace/dir_placement.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/namespace/meta_sharding.hpp"
#include "core/namespace/namespace_config.hpp"

namespace sluice {
namespace {

void expect_refused(const Status& s, const std::string& needle) {
  EXPECT_EQ(s.code(), StatusCode::invalid_argument) << s.to_string();
  EXPECT_NE(s.message().find(needle), std::string::npos)
      << "message \"" << s.message() << "\" does not mention \"" << needle << "\"";
}

NamespaceConfig striped_config(std::uint32_t shards) {
  NamespaceConfig c;
  c.policy = MetaPolicy::striped_dir;
  c.shard_count = shards;
  return c;
}

DirPlacement striped(std::vector<ShardId> stripes, std::uint32_t shards) {
  DirPlacement p;
  p.policy = MetaPolicy::striped_dir;
  p.hash_kind = DirHashKind::crush;
  p.owner_shard = stripes.empty() ? 0 : stripes[0];
  p.shard_count = shards;
  p.stripe_shards = std::move(stripes);
  return p;
}

TEST(ValidateConfig, AcceptsDefaultsOfEveryPolicy) {
  for (const MetaPolicy policy : {MetaPolicy::dir_owner, MetaPolicy::striped_dir, MetaPolicy::path_hash}) {
    NamespaceConfig c;
    c.policy = policy;
    c.shard_count = 8;
    EXPECT_TRUE(validate_config(c).ok()) << to_string(policy);
  }
}

TEST(ValidateConfig, RefusesShardCountsOutOfRange) {
  NamespaceConfig c;
  c.shard_count = 0;
  expect_refused(validate_config(c), "shard_count is 0");
  c.shard_count = k_shard_count_max + 1;
  expect_refused(validate_config(c), "k_shard_count_max");
  c.shard_count = 4;
  c.root_shard = 4;
  expect_refused(validate_config(c), "root_shard 4");
  c.policy = MetaPolicy::path_hash;  // the root lives where "/" hashes: root_shard unused
  EXPECT_TRUE(validate_config(c).ok());
}

TEST(ValidateConfig, RefusesStripeSettingsThatCannotWork) {
  auto c = striped_config(4);
  c.dir_stripe_count = 5;
  expect_refused(validate_config(c), "dir_stripe_count 5 exceeds");
  c.dir_stripe_count = 0;
  expect_refused(validate_config(c), "dir_stripe_count is 0");
  c = striped_config(4);
  c.dir_stripes_max = 2;
  c.dir_stripe_count = 3;
  expect_refused(validate_config(c), "min(shard_count, dir_stripes_max) 2");
  c = striped_config(4);
  c.dir_stripes_max = 0;
  expect_refused(validate_config(c), "dir_stripes_max 0");
  c.dir_stripes_max = k_dir_stripes_max + 1;
  expect_refused(validate_config(c), "k_dir_stripes_max");
  c = striped_config(4);
  c.dir_hash = DirHashKind::none;
  expect_refused(validate_config(c), "dir_hash");
  c = striped_config(4);
  c.dir_split_count = 0;
  expect_refused(validate_config(c), "dir_split_count is 0");
  c = striped_config(4);
  c.dir_split_delta = 0;
  expect_refused(validate_config(c), "dir_split_delta is 0");
}

TEST(ValidateConfig, RefusesUnknownEnumValuesFromTheWire) {
  NamespaceConfig c;
  c.policy = static_cast<MetaPolicy>(9);
  expect_refused(validate_config(c), "unknown policy");
  c = striped_config(4);
  c.mkdir_rule = static_cast<MkdirShardRule>(9);
  expect_refused(validate_config(c), "unknown mkdir_rule");
  c = striped_config(4);
  c.split_rule = static_cast<SplitShardRule>(9);
  expect_refused(validate_config(c), "unknown split_rule");
}

TEST(ValidatePlacement, AcceptsEveryRootPlacement) {
  for (const MetaPolicy policy : {MetaPolicy::dir_owner, MetaPolicy::striped_dir, MetaPolicy::path_hash}) {
    NamespaceConfig c;
    c.policy = policy;
    c.shard_count = 16;
    c.dir_stripe_count = 4;
    const auto root = root_placement(c);
    ASSERT_TRUE(root.ok()) << root.status().to_string();
    EXPECT_TRUE(validate_placement(*root).ok()) << root->to_string();
  }
}

TEST(ValidatePlacement, RefusesBrokenStripedInvariants) {
  EXPECT_TRUE(validate_placement(striped({3, 4, 5}, 8)).ok());
  expect_refused(validate_placement(striped({3, 4, 3}, 8)), "shard 3 holds two stripes");
  expect_refused(validate_placement(striped({3, 9}, 8)), "stripe shard 9");
  expect_refused(validate_placement(striped({}, 8)), "no stripes");
  expect_refused(validate_placement(striped({0, 1, 2}, 2)), "more stripes than shards");
  auto p = striped({3, 4}, 8);
  p.owner_shard = 4;
  expect_refused(validate_placement(p), "stripe 0 is not on owner_shard");
  p = striped({3, 4}, 8);
  p.hash_kind = DirHashKind::none;
  expect_refused(validate_placement(p), "hash_kind");
  std::vector<ShardId> many(k_dir_stripes_max + 1);
  for (std::size_t i = 0; i < many.size(); ++i) many[i] = static_cast<ShardId>(i);
  expect_refused(validate_placement(striped(many, k_shard_count_max)), "k_dir_stripes_max");
}

TEST(ValidatePlacement, RefusesBrokenOwnerAndPathHashInvariants) {
  DirPlacement p;
  p.policy = MetaPolicy::dir_owner;
  p.owner_shard = 2;
  p.shard_count = 4;
  p.stripe_shards = {2};
  EXPECT_TRUE(validate_placement(p).ok());
  p.shard_count = 0;
  expect_refused(validate_placement(p), "shard_count is 0");
  p.shard_count = k_shard_count_max + 1;
  expect_refused(validate_placement(p), "k_shard_count_max");
  p.shard_count = 2;
  expect_refused(validate_placement(p), "owner_shard 2 is not below");
  p.shard_count = 4;
  p.stripe_shards = {2, 3};
  expect_refused(validate_placement(p), "{owner_shard}");
  p.stripe_shards = {2};
  p.hash_kind = DirHashKind::crush;
  expect_refused(validate_placement(p), "hash_kind none");
  p.hash_kind = DirHashKind::none;
  p.split_generation = 1;
  expect_refused(validate_placement(p), "never split");

  DirPlacement h;
  h.policy = MetaPolicy::path_hash;
  h.hash_kind = DirHashKind::fnv_1a_64;
  h.owner_shard = 1;
  h.shard_count = 4;
  EXPECT_TRUE(validate_placement(h).ok());
  h.stripe_shards = {1};
  expect_refused(validate_placement(h), "stripe_shards empty");
  h.stripe_shards.clear();
  h.hash_kind = DirHashKind::crush;
  expect_refused(validate_placement(h), "fnv_1a_64");
  h.hash_kind = DirHashKind::fnv_1a_64;
  h.split_generation = 2;
  expect_refused(validate_placement(h), "never split");

  DirPlacement u = h;
  u.split_generation = 0;
  u.policy = static_cast<MetaPolicy>(7);
  expect_refused(validate_placement(u), "unknown policy");
}

TEST(DirPlacement, PrintsEveryField) {
  auto p = striped({3, 4, 5, 6}, 16);
  p.split_generation = 1;
  EXPECT_EQ(p.to_string(), "striped_dir crush owner=3 shards=16 gen=1 stripes=[3,4,5,6]");
  EXPECT_EQ(to_string(DirHashKind::rendezvous), "rendezvous");
  EXPECT_EQ(to_string(DirHashKind::fnv_1a_64), "fnv_1a_64");
  EXPECT_EQ(to_string(MetaPolicy::path_hash), "path_hash");
  EXPECT_EQ(to_string(static_cast<MetaPolicy>(7)), "unknown");
  EXPECT_EQ(to_string(static_cast<DirHashKind>(7)), "unknown");
  EXPECT_EQ(to_string(MkdirShardRule::random_near_root), "random_near_root");
  EXPECT_EQ(to_string(MkdirShardRule::with_entry), "with_entry");
  EXPECT_EQ(to_string(MkdirShardRule::random), "random");
  EXPECT_EQ(to_string(static_cast<MkdirShardRule>(7)), "unknown");
  EXPECT_EQ(to_string(SplitShardRule::round_robin), "round_robin");
  EXPECT_EQ(to_string(SplitShardRule::random), "random");
  EXPECT_EQ(to_string(static_cast<SplitShardRule>(7)), "unknown");
}

}  // namespace
}  // namespace sluice
