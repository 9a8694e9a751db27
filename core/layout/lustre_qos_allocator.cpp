#include "core/layout/lustre_qos_allocator.hpp"

#include <algorithm>
#include "core/common/assert.hpp"
#include <limits>
#include <map>

namespace sluice {

namespace {

__extension__ using u128 = unsigned __int128;  // GCC/Clang builtin; -Wpedantic wants the marker

constexpr unsigned k_weight_shift = 20;  // weights and penalties in MiB (see header)
constexpr std::size_t k_empty_slot = std::numeric_limits<std::size_t>::max();

std::uint64_t percent_to_256ths(std::uint32_t percent) { return std::uint64_t{percent} * 256 / 100; }

std::vector<const TargetInfo*> sorted_by_id(const std::vector<TargetInfo>& candidates) {
  std::vector<const TargetInfo*> all;
  all.reserve(candidates.size());
  for (const TargetInfo& t : candidates) all.push_back(&t);
  std::sort(all.begin(), all.end(), [](const TargetInfo* a, const TargetInfo* b) { return a->id < b->id; });
  return all;
}

std::vector<const TargetInfo*> usable_sorted_by_id(const std::vector<TargetInfo>& candidates) {
  std::vector<const TargetInfo*> usable;
  for (const TargetInfo* t : sorted_by_id(candidates)) {
    if (LustreQosAllocator::usable(*t)) usable.push_back(t);
  }
  return usable;
}

bool balanced(const std::vector<const TargetInfo*>& usable, std::uint32_t threshold_rr_percent) {
  if (usable.size() < 2) return true;  // lod_qos_is_usable: QoS needs two active OSTs
  std::uint64_t min_free = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t max_free = 0;
  for (const TargetInfo* t : usable) {
    min_free = std::min(min_free, t->free_bytes);
    max_free = std::max(max_free, t->free_bytes);
  }
  const std::uint64_t threshold = percent_to_256ths(threshold_rr_percent);
  return ((u128{max_free} * (256 - threshold)) >> 8) < u128{min_free};
}

std::uint64_t saturating_sub(std::uint64_t a, std::uint64_t b) { return a > b ? a - b : 0; }

Status validate_count(std::uint32_t stripe_count) {
  if (stripe_count == 0 || stripe_count > k_max_stripe_count) {
    return error(StatusCode::invalid_argument, "lustre qos: stripe_count=" + std::to_string(stripe_count) +
                                                   " is outside 1.." + std::to_string(k_max_stripe_count));
  }
  return ok_status();
}

}  // namespace

Status validate(const LustreQosConfig& config) {
  if (config.threshold_rr_percent > 100) {
    return error(StatusCode::invalid_argument, "lustre qos config: threshold_rr_percent=" +
                                                   std::to_string(config.threshold_rr_percent) + " is outside 0..100");
  }
  if (config.prio_free_percent > 100) {
    return error(StatusCode::invalid_argument, "lustre qos config: prio_free_percent=" +
                                                   std::to_string(config.prio_free_percent) + " is outside 0..100");
  }
  return ok_status();
}

std::string_view to_string(QosMode mode) {
  switch (mode) {
    case QosMode::none: return "none";
    case QosMode::round_robin: return "round_robin";
    case QosMode::weighted: return "weighted";
    case QosMode::specific: return "specific";
  }
  return "unknown";
}

LustreQosAllocator::LustreQosAllocator(LustreQosConfig config) : config_(config) {
  SLUICE_ASSERT(validate(config_).ok());
}

bool LustreQosAllocator::usable(const TargetInfo& target) {
  if (!target_usable(target)) return false;
  const std::uint64_t used = target.capacity_bytes - std::min(target.free_bytes, target.capacity_bytes);
  const std::uint64_t reserve = std::min(used / 1024, k_lustre_full_reserve_bytes_max);
  return target.free_bytes >= reserve;
}

bool LustreQosAllocator::space_balanced(const std::vector<TargetInfo>& candidates) const {
  return balanced(usable_sorted_by_id(candidates), config_.threshold_rr_percent);
}

Result<std::vector<TargetId>> LustreQosAllocator::allocate(const std::vector<TargetInfo>& candidates,
                                                           std::uint32_t stripe_count, Rng& rng) {
  if (Status s = validate_count(stripe_count); !s.ok()) return s;
  if (Status s = validate_targets(candidates); !s.ok()) return s;
  const std::vector<const TargetInfo*> usable_targets = usable_sorted_by_id(candidates);
  if (usable_targets.empty()) {
    return error(StatusCode::no_space, "lustre qos: none of " + std::to_string(candidates.size()) +
                                           " candidates is online, with capacity and not full");
  }
  const std::size_t wanted = std::min<std::size_t>(stripe_count, usable_targets.size());
  if (balanced(usable_targets, config_.threshold_rr_percent)) {
    last_mode_ = QosMode::round_robin;
    ost_penalty_mib_.clear();  // lq_reset: weights start afresh when QoS mode returns
    oss_penalty_mib_.clear();
    return allocate_round_robin(candidates, stripe_count, wanted, rng);
  }
  last_mode_ = QosMode::weighted;
  return allocate_weighted(usable_targets, wanted, rng);
}

std::vector<TargetId> LustreQosAllocator::allocate_round_robin(const std::vector<TargetInfo>& candidates,
                                                               std::uint32_t stripe_count, std::size_t wanted,
                                                               Rng& rng) {
  // lod_qos_calc_rr: spread each server's targets evenly over the slot array.
  const std::vector<const TargetInfo*> all = sorted_by_id(candidates);
  const std::size_t n = all.size();
  std::map<NodeId, std::vector<std::size_t>> by_node;
  for (std::size_t i = 0; i < n; ++i) by_node[all[i]->node].push_back(i);
  std::vector<std::pair<NodeId, std::vector<std::size_t>>> servers(by_node.begin(), by_node.end());
  std::stable_sort(servers.begin(), servers.end(),
                   [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  std::vector<std::size_t> slots(n, k_empty_slot);
  for (const auto& server : servers) {
    const std::size_t count = server.second.size();
    for (std::size_t j = 0; j < count; ++j) {
      std::size_t next = j * n / count;
      while (slots[next] != k_empty_slot) next = (next + 1) % n;
      slots[next] = server.second[j];
    }
  }

  // lod_alloc_rr: reseed the start now and then, precess it for wide files.
  if (rr_files_until_reseed_ <= 1) {
    rr_start_index_ = rng.uniform(n);
    rr_files_until_reseed_ = (k_lustre_rr_reseed_min / n + k_lustre_rr_reseed_mult) * n;
  } else {
    --rr_files_until_reseed_;
    if (stripe_count >= n || rr_start_index_ > n) {
      rr_start_index_ %= n;
      if (stripe_count > 1 && n % stripe_count != 1) ++rr_offset_index_;
    }
  }
  std::vector<TargetId> chosen;
  chosen.reserve(wanted);
  std::size_t slot = static_cast<std::size_t>((rr_start_index_ + rr_offset_index_) % n);
  for (std::size_t i = 0; i < n && chosen.size() < wanted; ++i, slot = (slot + 1) % n) {
    ++rr_start_index_;
    const TargetInfo* t = all[slots[slot]];
    if (!usable(*t)) continue;
    chosen.push_back(t->id);
  }
  return chosen;
}

std::vector<TargetId> LustreQosAllocator::allocate_weighted(const std::vector<const TargetInfo*>& usable_targets,
                                                            std::size_t wanted, Rng& rng) {
  // lod_qos_calc_ppo: per-object penalty steps from the current free space.
  const std::size_t m = usable_targets.size();  // >= 2: balanced() sends fewer to round-robin
  const std::uint64_t prio_wide = 256 - percent_to_256ths(config_.prio_free_percent);
  std::vector<std::uint64_t> free_mib(m);
  std::vector<std::uint64_t> ost_step(m);
  struct Server {
    std::uint64_t free_mib = 0;
    std::uint64_t targets = 0;
    std::uint64_t step = 0;
  };
  std::map<NodeId, Server> servers;
  for (std::size_t i = 0; i < m; ++i) {
    free_mib[i] = usable_targets[i]->free_bytes >> k_weight_shift;
    ost_step[i] = (((free_mib[i] >> 1) / (m - 1)) * prio_wide) >> 8;
    Server& server = servers[usable_targets[i]->node];
    server.free_mib += free_mib[i];
    ++server.targets;
  }
  std::uint64_t server_divisor = servers.size() - 1;
  if (server_divisor < 1) {  // one OSS cannot be penalised against others: double the OST step
    server_divisor = 1;
    for (std::uint64_t& step : ost_step) step <<= 1;
  }
  for (auto& [node, server] : servers) {
    server.step = (((server.free_mib >> 1) / (server.targets * server_divisor)) * prio_wide) >> 8;
  }

  std::vector<TargetId> chosen;
  chosen.reserve(wanted);
  std::vector<bool> taken(m, false);
  std::vector<std::uint64_t> weight(m);
  while (chosen.size() < wanted) {
    // lod_qos_calc_weight over the targets this file has not taken.
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < m; ++i) {
      const TargetInfo& t = *usable_targets[i];
      weight[i] = taken[i] ? 0 : saturating_sub(free_mib[i], ost_penalty_mib_[t.id] + oss_penalty_mib_[t.node]);
      total += weight[i];
    }
    std::size_t pick = m;
    if (total > 0) {
      const std::uint64_t r = rng.uniform(total);
      std::uint64_t running = 0;
      for (std::size_t i = 0; i < m && pick == m; ++i) {
        running += weight[i];
        if (!taken[i] && running > r) pick = i;
      }
    } else {
      std::uint64_t r = rng.uniform(m - chosen.size());
      for (std::size_t i = 0; i < m && pick == m; ++i) {
        if (taken[i]) continue;
        if (r == 0)
          pick = i;
        else
          --r;
      }
    }
    SLUICE_ASSERT(pick < m);
    taken[pick] = true;
    const TargetInfo& t = *usable_targets[pick];
    chosen.push_back(t.id);

    // lod_qos_used: charge the chosen OST and OSS, then let everyone recover a step.
    std::uint64_t& ost_pen = ost_penalty_mib_[t.id];
    std::uint64_t& oss_pen = oss_penalty_mib_[t.node];
    ost_pen = (ost_pen >> 1) + ost_step[pick] * m;
    oss_pen = (oss_pen >> 1) + servers[t.node].step * servers.size();
    for (const auto& [node, server] : servers) {
      std::uint64_t& pen = oss_penalty_mib_[node];
      pen = saturating_sub(pen, server.step);
    }
    for (std::size_t i = 0; i < m; ++i) {
      std::uint64_t& pen = ost_penalty_mib_[usable_targets[i]->id];
      pen = saturating_sub(pen, ost_step[i]);
    }
  }
  return chosen;
}

Result<std::vector<TargetId>> LustreQosAllocator::allocate_from(const std::vector<TargetInfo>& candidates,
                                                                std::uint32_t stripe_count, TargetId start_target) {
  if (Status s = validate_count(stripe_count); !s.ok()) return s;
  if (Status s = validate_targets(candidates); !s.ok()) return s;
  const std::vector<const TargetInfo*> all = sorted_by_id(candidates);
  const auto start = std::find_if(all.begin(), all.end(), [&](const TargetInfo* t) { return t->id == start_target; });
  if (start == all.end()) {
    return error(StatusCode::invalid_argument,
                 "lustre qos: start_target=" + std::to_string(start_target) + " is not among the candidates");
  }
  const std::size_t n = all.size();
  const std::size_t first = static_cast<std::size_t>(start - all.begin());
  std::vector<TargetId> chosen;
  for (std::size_t i = 0; i < n && chosen.size() < stripe_count; ++i) {
    const TargetInfo* t = all[(first + i) % n];
    if (target_usable(*t)) chosen.push_back(t->id);
  }
  if (chosen.size() < stripe_count) {
    return error(StatusCode::no_space, "lustre qos: start_target=" + std::to_string(start_target) + " wants " +
                                           std::to_string(stripe_count) + " stripes but only " +
                                           std::to_string(chosen.size()) +
                                           " candidates are online (Lustre fails such a request with EFBIG)");
  }
  last_mode_ = QosMode::specific;
  return chosen;
}

}  // namespace sluice
