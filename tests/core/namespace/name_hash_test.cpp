#include "core/namespace/name_hash.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "namespace_test_util.hpp"

namespace sluice {
namespace {

TEST(Fnv1a64, MatchesPublishedTestVectors) {
  // Vectors of the FNV reference test suite (isthe.com/chongo/src/fnv/test_fnv.c).
  EXPECT_EQ(fnv_1a_64(""), 0xCBF29CE484222325ULL);
  EXPECT_EQ(fnv_1a_64("a"), 0xAF63DC4C8601EC8CULL);
  EXPECT_EQ(fnv_1a_64("foobar"), 0x85944171F73967E8ULL);
}

TEST(Fnv1a64, ExtendEqualsHashOfConcatenation) {
  EXPECT_EQ(fnv_1a_64_extend(fnv_1a_64("/data"), "/f123"), fnv_1a_64("/data/f123"));
  EXPECT_EQ(fnv_1a_64_extend(fnv_1a_64(""), "x"), fnv_1a_64("x"));
  EXPECT_EQ(fnv_1a_64_extend(fnv_1a_64("abc"), ""), fnv_1a_64("abc"));
}

TEST(Fnv1a64, HashesBytesNotCharacters) {
  // Bytes >= 0x80 must not be sign-extended (char is signed on x86).
  const std::string high("\xff", 1);
  EXPECT_EQ(fnv_1a_64(high), (k_fnv_1a_64_offset_basis ^ 0xFFULL) * k_fnv_1a_64_prime);
}

// Placement is persisted: if any of these change, existing file systems lose
// track of their entries. Values computed once and checked against an
// independent Python FNV-1a for the fnv columns.
TEST(NameHash, GoldenValuesNeverChange) {
  struct Golden {
    const char* name;
    std::uint64_t fnv;
    std::uint32_t pg;
    std::uint32_t fnv_of_16;
    std::uint32_t crush_of_16;
    std::uint32_t rendezvous_of_16;
  };
  const Golden golden[] = {
      {"file.mdtest.0.0", 0xe54f049348986656ULL, 1622u, 6u, 13u, 5u},
      {"checkpoint_000042.pt", 0x77a9befb92e4bd40ULL, 3392u, 0u, 7u, 8u},
      {"train-00017-of-01024.tfrecord", 0x9d374c98abd7a979ULL, 2425u, 9u, 13u, 9u},
      {"a", 0xaf63dc4c8601ec8cULL, 3212u, 12u, 7u, 1u},
  };
  for (const Golden& g : golden) {
    SCOPED_TRACE(g.name);
    EXPECT_EQ(fnv_1a_64(g.name), g.fnv);
    EXPECT_EQ(crush_pg_of_name(g.name), g.pg);
    EXPECT_EQ(stripe_index_fnv_1a_64(g.name, 16), g.fnv_of_16);
    EXPECT_EQ(stripe_index_crush(g.name, 16), g.crush_of_16);
    EXPECT_EQ(stripe_index_rendezvous(g.name, 16), g.rendezvous_of_16);
  }
  EXPECT_EQ(crush_straw(7, 3), 0x7197016efb622d24ULL);
  EXPECT_EQ(rendezvous_straw(12345, 3), 0x2d160e7e5c3f42caULL);
}

TEST(StripeIndex, StaysBelowStripeCountForEveryHash) {
  const auto names = test::mdtest_names(2000);
  for (std::uint32_t count = 1; count <= 40; ++count) {
    for (const auto& name : names) {
      ASSERT_LT(stripe_index_fnv_1a_64(name, count), count);
      ASSERT_LT(stripe_index_crush(name, count), count);
      ASSERT_LT(stripe_index_rendezvous(name, count), count);
    }
  }
}

TEST(StripeIndex, OneStripeTakesEveryName) {
  for (const auto& name : test::mdtest_names(500)) {
    EXPECT_EQ(stripe_index_fnv_1a_64(name, 1), 0u);
    EXPECT_EQ(stripe_index_crush(name, 1), 0u);
    EXPECT_EQ(stripe_index_rendezvous(name, 1), 0u);
  }
}

TEST(CrushPg, IsFnvOfNameModuloGroupCount) {
  for (const auto& name : test::random_names(1000, 5)) {
    EXPECT_EQ(crush_pg_of_name(name), fnv_1a_64(name) % k_crush_pg_count);
  }
}

TEST(CrushStraw, StripesOfOneGroupNeverTie) {
  for (std::uint32_t pg = 0; pg < k_crush_pg_count; ++pg) {
    std::set<std::uint64_t> straws;
    for (std::uint32_t stripe = 0; stripe < 64; ++stripe) straws.insert(crush_straw(pg, stripe));
    ASSERT_EQ(straws.size(), 64u) << "pg " << pg;
  }
}

TEST(CrushStraw, SpreadsGroupsUniformlyOverStripes) {
  // The 4096 groups are the unit of balance: their spread over stripes must
  // look like a fair multinomial (chi-square below the p = 0.001 critical value).
  for (const std::uint32_t stripes : {4u, 16u}) {
    std::vector<std::uint64_t> groups(stripes, 0);
    for (std::uint32_t pg = 0; pg < k_crush_pg_count; ++pg) {
      std::uint32_t best = 0;
      for (std::uint32_t i = 1; i < stripes; ++i) {
        if (crush_straw(pg, i) > crush_straw(pg, best)) best = i;
      }
      ++groups[best];
    }
    EXPECT_LT(test::chi_square(groups), test::chi_square_critical_p001(stripes - 1)) << stripes << " stripes";
  }
}

TEST(RendezvousStraw, StripesOfOneNameNeverTie) {
  for (const auto& name : test::random_names(2000, 9)) {
    std::set<std::uint64_t> straws;
    const std::uint64_t h = fnv_1a_64(name);
    for (std::uint32_t stripe = 0; stripe < 64; ++stripe) straws.insert(rendezvous_straw(h, stripe));
    ASSERT_EQ(straws.size(), 64u) << name;
  }
}

}  // namespace
}  // namespace sluice
