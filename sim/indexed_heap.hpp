// IndexedMinHeap: a binary min-heap of (key, id) with at most one entry per
// id, whose key can be moved in place. FluidNet's progressive filling keeps
// its links' fair levels in one: with a plain priority queue every move of a
// level pushed another entry and left the old one stale until it surfaced,
// and those pushes and pops were a fifth of a data-scale run (perf on issue
// 50's 18 + 50 read, 2-core VM, 2026-12-06).
//
// Entries order by key, then id; ids are small integers (an index into the
// owner's vectors), below the size given to reset().
#pragma once

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "core/common/assert.hpp"

namespace sluice::sim {

template <class Key>
class IndexedMinHeap {
 public:
  using Entry = std::pair<Key, std::uint32_t>;  // (key, id)

  // Empties the heap and makes room for ids below `ids`.
  void reset(std::size_t ids) {
    for (const Entry& e : heap_) pos_[e.second] = k_absent;
    heap_.clear();
    reserve(ids);
  }
  // Makes room for ids below `ids`, keeping the entries.
  void reserve(std::size_t ids) {
    if (pos_.size() < ids) pos_.resize(ids, k_absent);
  }
  // Adds `id` at `key`, or moves it there.
  void set(std::uint32_t id, Key key) {
    SLUICE_ASSERT_MSG(id < pos_.size(), "an indexed heap's id is below its reserved size");
    const Entry entry{std::move(key), id};
    if (pos_[id] == k_absent) {
      heap_.push_back(entry);
      up(heap_.size() - 1);
      return;
    }
    const std::size_t at = pos_[id];
    const bool lower = entry < heap_[at];
    heap_[at] = entry;
    if (lower) {
      up(at);
    } else {
      down(at);
    }
  }
  // Takes `id` out, if it is in.
  void erase(std::uint32_t id) {
    if (id >= pos_.size() || pos_[id] == k_absent) return;
    const std::size_t at = pos_[id];
    pos_[id] = k_absent;
    const Entry last = heap_.back();
    heap_.pop_back();
    if (at == heap_.size()) return;  // it was the last entry
    heap_[at] = last;
    if (at > 0 && last < heap_[(at - 1) / 2]) {
      up(at);
    } else {
      down(at);
    }
  }
  bool contains(std::uint32_t id) const { return id < pos_.size() && pos_[id] != k_absent; }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Entry& top() const { return heap_.front(); }
  void pop() { erase(heap_.front().second); }

 private:
  static constexpr std::uint32_t k_absent = std::numeric_limits<std::uint32_t>::max();

  void place(std::size_t at, const Entry& entry) {
    pos_[entry.second] = static_cast<std::uint32_t>(at);
    heap_[at] = entry;
  }
  void up(std::size_t at) {
    const Entry moving = heap_[at];
    while (at > 0) {
      const std::size_t parent = (at - 1) / 2;
      if (!(moving < heap_[parent])) break;
      place(at, heap_[parent]);
      at = parent;
    }
    place(at, moving);
  }
  void down(std::size_t at) {
    const Entry moving = heap_[at];
    const std::size_t n = heap_.size();
    while (true) {
      std::size_t child = 2 * at + 1;
      if (child >= n) break;
      if (child + 1 < n && heap_[child + 1] < heap_[child]) ++child;
      if (!(heap_[child] < moving)) break;
      place(at, heap_[child]);
      at = child;
    }
    place(at, moving);
  }

  std::vector<Entry> heap_;
  std::vector<std::uint32_t> pos_;  // by id: its index in heap_, or k_absent
};

}  // namespace sluice::sim
