#include "transports/ibverbs/ibverbs_remote_key_cache.hpp"

namespace sluice::transport::ibverbs {

void RemoteKeyCache::touch(Entry& e, const EntryKey& k) {
  lru_.erase(e.lru);
  lru_.push_front(k);
  e.lru = lru_.begin();
}

bool RemoteKeyCache::evict_one() {
  for (auto it = lru_.rbegin(); it != lru_.rend(); ++it) {
    auto found = entries_.find(*it);
    Entry& e = found->second;
    if (!e.resolved) continue;
    auto use = uses_.find(e.use);
    if (use != uses_.end() && use->second.in_flight > 0) continue;
    if (use != uses_.end()) uses_.erase(use);
    lru_.erase(std::next(it).base());
    entries_.erase(found);
    return true;
  }
  return false;
}

std::uint64_t RemoteKeyCache::new_use(PeerId peer, std::uint64_t key) {
  const std::uint64_t id = next_use_++;
  uses_.emplace(id, Use{peer, key, 0, false});
  return id;
}

RemoteKeyCache::Lookup RemoteKeyCache::want(PeerId peer, std::uint32_t rail, std::uint64_t key, std::uint64_t op) {
  const EntryKey k{peer, rail, key};
  auto it = entries_.find(k);
  if (it != entries_.end()) {
    Entry& e = it->second;
    touch(e, k);
    if (!e.resolved) {
      e.waiting_ops.push_back(op);
      return Lookup{Verdict::wait, {}, 0};
    }
    ++uses_[e.use].in_flight;
    return Lookup{Verdict::hit, e.desc, e.use};
  }
  if (entries_.size() >= max_entries_ && !evict_one()) return Lookup{Verdict::full, {}, 0};
  lru_.push_front(k);
  Entry e;
  e.waiting_ops.push_back(op);
  e.lru = lru_.begin();
  entries_.emplace(k, std::move(e));
  ++queries_;
  return Lookup{Verdict::query, {}, 0};
}

RemoteKeyCache::Primed RemoteKeyCache::prime(PeerId peer, std::uint32_t rail, std::uint64_t key,
                                             const RemoteRegionDesc& desc) {
  Primed out;
  const EntryKey k{peer, rail, key};
  auto it = entries_.find(k);
  if (it == entries_.end()) {
    if (entries_.size() >= max_entries_ && !evict_one()) return out;
    lru_.push_front(k);
    Entry e;
    e.resolved = true;
    e.desc = desc;
    e.use = new_use(peer, key);
    e.lru = lru_.begin();
    entries_.emplace(k, std::move(e));
    ++primes_;
    out.stored = true;
    return out;
  }
  Entry& e = it->second;
  touch(e, k);
  ++primes_;
  out.stored = true;
  if (!e.resolved) {
    // A query is out for it: the carried desc answers it now.
    e.resolved = true;
    e.desc = desc;
    e.use = new_use(peer, key);
    uses_[e.use].in_flight = e.waiting_ops.size();
    for (std::uint64_t op : e.waiting_ops) out.waiters.push_back(Waiter{op, e.use});
    e.waiting_ops.clear();
    return out;
  }
  if (e.desc == desc) return out;
  // The owner re-registered the region under the same key and our revoke
  // has not come yet: the carried desc is the newer one.
  auto old = uses_.find(e.use);
  if (old != uses_.end()) {
    if (old->second.in_flight == 0) {
      uses_.erase(old);
    } else {
      old->second.retired = true;
    }
  }
  e.desc = desc;
  e.use = new_use(peer, key);
  return out;
}

std::vector<RemoteKeyCache::Waiter> RemoteKeyCache::answered(PeerId peer, std::uint32_t rail, std::uint64_t key,
                                                             const Result<RemoteRegionDesc>& answer) {
  std::vector<Waiter> out;
  const EntryKey k{peer, rail, key};
  auto it = entries_.find(k);
  if (it == entries_.end() || it->second.resolved) return out;  // an answer nobody waits for
  Entry& e = it->second;
  if (!answer.ok()) {
    for (std::uint64_t op : e.waiting_ops) out.push_back(Waiter{op, 0});
    lru_.erase(e.lru);
    entries_.erase(it);
    return out;
  }
  e.resolved = true;
  e.desc = *answer;
  e.use = new_use(peer, key);
  uses_[e.use].in_flight = e.waiting_ops.size();
  for (std::uint64_t op : e.waiting_ops) out.push_back(Waiter{op, e.use});
  e.waiting_ops.clear();
  return out;
}

std::optional<std::pair<PeerId, std::uint64_t>> RemoteKeyCache::finished(std::uint64_t use) {
  auto it = uses_.find(use);
  if (it == uses_.end() || it->second.in_flight == 0) return std::nullopt;
  Use& u = it->second;
  if (--u.in_flight > 0) return std::nullopt;
  if (u.retired && !u.revoked) {
    uses_.erase(it);
    return std::nullopt;
  }
  if (!u.revoked) return std::nullopt;
  const std::pair<PeerId, std::uint64_t> done{u.peer, u.key};
  uses_.erase(it);
  // The ack is due when no other revoked incarnation of (peer, key) is still in use.
  for (const auto& [id, other] : uses_) {
    if (other.revoked && other.peer == done.first && other.key == done.second) return std::nullopt;
  }
  return done;
}

bool RemoteKeyCache::revoke(PeerId peer, std::uint64_t key) {
  bool busy = false;
  for (auto it = entries_.begin(); it != entries_.end();) {
    const auto& [p, rail, k] = it->first;
    if (p != peer || k != key || !it->second.resolved) {
      ++it;
      continue;
    }
    auto use = uses_.find(it->second.use);
    if (use != uses_.end()) {
      if (use->second.in_flight > 0) {
        use->second.revoked = true;
        busy = true;
      } else {
        uses_.erase(use);
      }
    }
    lru_.erase(it->second.lru);
    it = entries_.erase(it);
  }
  // Older incarnations replaced by a carried desc may still be in flight.
  for (auto& [id, use] : uses_) {
    if (use.retired && use.peer == peer && use.key == key && use.in_flight > 0) {
      use.revoked = true;
      busy = true;
    }
  }
  return !busy;
}

std::vector<std::uint64_t> RemoteKeyCache::forget_peer(PeerId peer) {
  std::vector<std::uint64_t> waiting;
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (std::get<0>(it->first) != peer) {
      ++it;
      continue;
    }
    waiting.insert(waiting.end(), it->second.waiting_ops.begin(), it->second.waiting_ops.end());
    lru_.erase(it->second.lru);
    it = entries_.erase(it);
  }
  for (auto it = uses_.begin(); it != uses_.end();) {
    it = it->second.peer == peer ? uses_.erase(it) : std::next(it);
  }
  return waiting;
}

}  // namespace sluice::transport::ibverbs
