#include "core/layout/beegfs_target_choosers.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <unordered_set>
#include <utility>

namespace sluice {

namespace {

using Pool = std::vector<const TargetInfo*>;  // ordered by id
using Pools = std::array<Pool, k_capacity_pool_count>;

Pools make_pools(const std::vector<TargetInfo>& candidates, const CapacityPoolLimits& limits) {
  Pools pools;
  for (const TargetInfo& t : candidates) {
    if (!target_usable(t)) continue;
    pools[static_cast<std::size_t>(capacity_pool_of(t, limits))].push_back(&t);
  }
  for (Pool& pool : pools) {
    std::sort(pool.begin(), pool.end(), [](const TargetInfo* a, const TargetInfo* b) { return a->id < b->id; });
  }
  return pools;
}

// chooseStorageNodesNoPref: one random pick in each of k consecutive parts of
// the pool's ring, the ring starting at a random element.
void choose_randomized_from(const Pool& pool, std::uint32_t wanted, Rng& rng, std::vector<TargetId>& out) {
  const std::uint64_t n = pool.size();
  if (n == 0 || wanted == 0) return;
  const std::uint64_t k = std::min<std::uint64_t>(wanted, n);
  const std::uint64_t part = n / k;
  const std::uint64_t start = rng.uniform(n);
  for (std::uint64_t i = 0; i < k; ++i) {
    const std::uint64_t first = i * part;
    const std::uint64_t last = i + 1 == k ? n - 1 : first + part - 1;
    const std::uint64_t pick = first + rng.uniform(last - first + 1);
    out.push_back(pool[(start + pick) % n]->id);
  }
}

// chooseStorageNodesNoPrefRoundRobin, with the exact-start fix described in
// the header.
void choose_round_robin_from(const Pool& pool, std::uint32_t wanted, RoundRobinState& state,
                             std::vector<TargetId>& out) {
  const std::size_t n = pool.size();
  if (n == 0 || wanted == 0) return;
  const std::size_t k = std::min<std::size_t>(wanted, n);
  auto it = std::lower_bound(pool.begin(), pool.end(), state.next_target,
                             [](const TargetInfo* t, TargetId id) { return t->id < id; });
  std::size_t index = it == pool.end() ? 0 : static_cast<std::size_t>(it - pool.begin());
  TargetId last = k_no_id;
  for (std::size_t i = 0; i < k; ++i) {
    last = pool[(index + i) % n]->id;
    out.push_back(last);
  }
  // last < k_no_id, so last + 1 cannot wrap; lower_bound past the end wraps to 0.
  state.next_target = last + 1;
}

// chooseTargetsInterdomainNoPref over the nodes not used yet.
void choose_internode_from(const Pool& pool, std::uint32_t wanted, std::unordered_set<NodeId>& used_nodes, Rng& rng,
                           std::vector<TargetId>& out) {
  if (wanted == 0) return;
  std::map<NodeId, std::vector<TargetId>> by_node;  // node order as BeeGFS's std::map
  for (const TargetInfo* t : pool) {
    if (t->node == k_no_id || used_nodes.count(t->node) != 0) continue;
    by_node[t->node].push_back(t->id);
  }
  if (by_node.empty()) return;
  std::vector<std::pair<NodeId, std::vector<TargetId>>> nodes(by_node.begin(), by_node.end());
  const std::size_t k = std::min<std::size_t>(wanted, nodes.size());
  const std::size_t start = static_cast<std::size_t>(rng.uniform(nodes.size()));
  for (std::size_t i = 0; i < k; ++i) {
    const auto& [node, targets] = nodes[(start + i) % nodes.size()];
    out.push_back(targets[static_cast<std::size_t>(rng.uniform(targets.size()))]);
    used_nodes.insert(node);
  }
}

void shuffle(std::vector<TargetId>& ids, Rng& rng) {
  for (std::size_t i = ids.size(); i > 1; --i) {
    const std::size_t j = static_cast<std::size_t>(rng.uniform(i));
    std::swap(ids[i - 1], ids[j]);
  }
}

}  // namespace

Result<std::vector<TargetId>> choose_beegfs_targets(ChooserKind kind, const std::vector<TargetInfo>& candidates,
                                                    const ChooseRequest& request, const CapacityPoolLimits& limits,
                                                    RoundRobinState& round_robin, Rng& rng) {
  if (kind == ChooserKind::lustre_qos) {
    return error(StatusCode::invalid_argument, "beegfs chooser: lustre_qos is not a BeeGFS chooser");
  }
  if (Status s = validate(request); !s.ok()) return s;
  if (Status s = validate_targets(candidates); !s.ok()) return s;
  if (Status s = validate(limits); !s.ok()) return s;

  const Pools pools = make_pools(candidates, limits);
  const ChooserKind effective =
      (kind == ChooserKind::randominternode && request.buddy_groups) ? ChooserKind::randomized : kind;
  std::vector<TargetId> chosen;
  chosen.reserve(request.stripe_count);

  switch (effective) {
    case ChooserKind::randomized:
      for (const Pool& pool : pools) {
        if (chosen.size() >= request.min_required_count) break;
        choose_randomized_from(pool, request.stripe_count - static_cast<std::uint32_t>(chosen.size()), rng, chosen);
      }
      break;
    case ChooserKind::roundrobin:
    case ChooserKind::randomrobin:
      for (const Pool& pool : pools) {
        if (pool.empty()) continue;
        choose_round_robin_from(pool, request.stripe_count, round_robin, chosen);
        break;
      }
      if (effective == ChooserKind::randomrobin) shuffle(chosen, rng);
      break;
    case ChooserKind::randominternode: {
      std::unordered_set<NodeId> used_nodes;
      for (const Pool& pool : pools) {
        if (chosen.size() >= request.min_required_count) break;
        choose_internode_from(pool, request.stripe_count - static_cast<std::uint32_t>(chosen.size()), used_nodes, rng,
                              chosen);
      }
      break;
    }
    case ChooserKind::lustre_qos: break;  // rejected above
  }

  if (chosen.size() < request.min_required_count) {
    std::size_t usable = 0;
    for (const Pool& pool : pools) usable += pool.size();
    return error(StatusCode::no_space,
                 "beegfs chooser " + std::string(to_string(kind)) + ": found " + std::to_string(chosen.size()) +
                     " of min_required_count=" + std::to_string(request.min_required_count) + " targets (" +
                     std::to_string(candidates.size()) + " candidates, " + std::to_string(usable) +
                     " online with capacity; normal/low/emergency pools " + std::to_string(pools[0].size()) + "/" +
                     std::to_string(pools[1].size()) + "/" + std::to_string(pools[2].size()) + ")");
  }
  return chosen;
}

}  // namespace sluice
