// IndexedMinHeap (sim/indexed_heap.hpp): under a seeded mix of inserts, key
// moves up and down, erasures (present or not) and pops, its top is always
// the least (key, id) of a reference ordered set holding the same entries,
// each id at most once; reset() empties it and it can be used again.
#include "sim/indexed_heap.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <utility>

#include "core/common/rng.hpp"

namespace sluice::testing {
namespace {

TEST(IndexedMinHeap, MatchesAnOrderedSetUnderRandomOperations) {
  constexpr std::uint32_t k_ids = 64;
  sim::IndexedMinHeap<double> heap;
  heap.reset(k_ids);
  std::set<std::pair<double, std::uint32_t>> reference;
  std::map<std::uint32_t, double> key_of;
  Rng rng(7);
  for (int step = 0; step < 20000; ++step) {
    const auto id = static_cast<std::uint32_t>(rng.uniform(k_ids));
    const std::uint64_t what = rng.uniform(10);
    if (what < 6) {  // insert or move, often onto a key another id has (ties go to the lower id)
      const double key = static_cast<double>(rng.uniform(32));
      if (auto it = key_of.find(id); it != key_of.end()) reference.erase({it->second, id});
      reference.insert({key, id});
      key_of[id] = key;
      heap.set(id, key);
    } else if (what < 8) {  // erase, present or not
      if (auto it = key_of.find(id); it != key_of.end()) {
        reference.erase({it->second, id});
        key_of.erase(it);
      }
      heap.erase(id);
    } else if (!reference.empty()) {  // pop
      ASSERT_FALSE(heap.empty());
      key_of.erase(reference.begin()->second);
      reference.erase(reference.begin());
      heap.pop();
    }
    ASSERT_EQ(heap.size(), reference.size()) << "step " << step;
    ASSERT_EQ(heap.contains(id), key_of.count(id) == 1) << "step " << step;
    if (!reference.empty()) {
      ASSERT_EQ(heap.top(), *reference.begin()) << "step " << step;
    }
  }
  heap.reset(k_ids);
  EXPECT_TRUE(heap.empty());
  for (std::uint32_t id = 0; id < k_ids; ++id) EXPECT_FALSE(heap.contains(id));
  heap.set(3, 1.5);
  heap.set(1, 1.5);
  EXPECT_EQ(heap.top(), (std::pair<double, std::uint32_t>{1.5, 1}));
}

}  // namespace
}  // namespace sluice::testing
