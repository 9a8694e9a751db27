#include "core/faults/random_fault_plan.hpp"

#include <algorithm>

namespace sluice::faults {

namespace {

TimeNs uniform_time(Rng& rng, TimeNs lo, TimeNs hi) {
  if (hi <= lo) return lo;
  return lo + static_cast<TimeNs>(rng.uniform(static_cast<std::uint64_t>(hi - lo) + 1));
}

}  // namespace

Result<FaultPlan> random_fault_plan(Rng& rng, const ClusterShape& shape, const RandomPlanLimits& limits) {
  auto bad = [](const std::string& what) { return error(StatusCode::invalid_argument, "random fault plan: " + what); };
  if (limits.min_faults > limits.max_faults || limits.max_faults > k_max_faults_per_plan) {
    return bad("fault count range [" + std::to_string(limits.min_faults) + ", " + std::to_string(limits.max_faults) +
               "] is empty or over " + std::to_string(k_max_faults_per_plan));
  }
  if (limits.window_ns <= 0 || limits.min_duration_ns <= 0 || limits.min_duration_ns > limits.max_duration_ns) {
    return bad("window and duration range must be positive, min <= max");
  }
  if (!(limits.max_disk_slowdown > 1.0) || limits.max_disk_slowdown > k_max_disk_slowdown) {
    return bad("max_disk_slowdown must be in (1, " + std::to_string(k_max_disk_slowdown) + "]");
  }
  if (!(limits.max_loss_probability >= 0.0 && limits.max_loss_probability <= 1.0)) {
    return bad("max_loss_probability must be in [0, 1]");
  }
  if (!(limits.max_partition_share > 0.0 && limits.max_partition_share <= 1.0)) {
    return bad("max_partition_share must be in (0, 1]");
  }

  // Who may be killed.
  std::vector<FaultSubject> killable;
  if (limits.kill_storage) {
    for (std::uint32_t i = 0; i < shape.storage_services; ++i)
      killable.push_back(FaultSubject::service(Role::storage, i));
  }
  if (limits.kill_meta) {
    for (std::uint32_t i = 0; i < shape.meta_services; ++i) killable.push_back(FaultSubject::service(Role::meta, i));
  }
  if (limits.kill_mgmt) killable.push_back(FaultSubject::service(Role::mgmt, 0));

  // The kinds that can be drawn in this cluster, by weight.
  struct Choice {
    FaultKind kind;
    std::uint32_t weight;
  };
  std::vector<Choice> choices;
  if (limits.weight_kill > 0 && !killable.empty()) choices.push_back({FaultKind::kill, limits.weight_kill});
  if (limits.weight_slow_disk > 0 && shape.storage_services > 0) {
    choices.push_back({FaultKind::slow_disk, limits.weight_slow_disk});
  }
  const auto partition_max =
      static_cast<std::size_t>(limits.max_partition_share * static_cast<double>(shape.nodes.size()));
  if (limits.weight_partition > 0 && partition_max >= 1)
    choices.push_back({FaultKind::partition, limits.weight_partition});
  if (limits.weight_message_loss > 0 && (limits.max_loss_probability > 0 || limits.max_extra_delay_ns > 0)) {
    choices.push_back({FaultKind::message_loss, limits.weight_message_loss});
  }
  if (choices.empty()) return bad("no fault kind is enabled for this cluster");
  std::uint64_t total_weight = 0;
  for (const Choice& c : choices) total_weight += c.weight;

  FaultPlan plan;
  const std::uint32_t count =
      limits.min_faults + static_cast<std::uint32_t>(rng.uniform(limits.max_faults - limits.min_faults + 1));
  std::uint32_t permanent_kills = 0;
  for (std::uint32_t n = 0; n < count; ++n) {
    std::uint64_t pick = rng.uniform(total_weight);
    FaultKind kind = choices.back().kind;
    for (const Choice& c : choices) {
      if (pick < c.weight) {
        kind = c.kind;
        break;
      }
      pick -= c.weight;
    }
    Fault f;
    f.kind = kind;
    f.at_ns = uniform_time(rng, 0, limits.window_ns - 1);
    f.duration_ns = uniform_time(rng, limits.min_duration_ns, limits.max_duration_ns);
    switch (kind) {
      case FaultKind::kill:
        f.subjects.push_back(killable[rng.uniform(killable.size())]);
        // A permanent kill only where the caller said mirroring covers it,
        // and only of storage servers (the mirrored role).
        if (!limits.revive_every_kill && permanent_kills < limits.max_permanent_kills &&
            f.subjects[0].role == Role::storage && rng.uniform(2) == 0) {
          f.duration_ns = 0;
          ++permanent_kills;
        }
        break;
      case FaultKind::slow_disk: {
        const bool one_target = !shape.targets.empty() && rng.uniform(2) == 0;
        f.subjects.push_back(one_target
                                 ? FaultSubject::target(shape.targets[rng.uniform(shape.targets.size())])
                                 : FaultSubject::service(
                                       Role::storage, static_cast<std::uint32_t>(rng.uniform(shape.storage_services))));
        // Factors spread over (1, max]: 1 + (max - 1) * u, u in (0, 1].
        f.factor = 1.0 + (limits.max_disk_slowdown - 1.0) * (1.0 - rng.uniform01());
        break;
      }
      case FaultKind::partition: {
        std::vector<NodeId> nodes = shape.nodes;
        // A partial Fisher-Yates shuffle picks `size` distinct nodes.
        const std::size_t size = 1 + rng.uniform(partition_max);
        for (std::size_t i = 0; i < size; ++i) {
          std::swap(nodes[i], nodes[i + rng.uniform(nodes.size() - i)]);
          f.subjects.push_back(FaultSubject::node(nodes[i]));
        }
        break;
      }
      case FaultKind::message_loss:
        f.loss_probability = limits.max_loss_probability * rng.uniform01();
        f.extra_delay_ns = limits.max_extra_delay_ns > 0 ? uniform_time(rng, 0, limits.max_extra_delay_ns) : 0;
        if (f.loss_probability == 0.0 && f.extra_delay_ns == 0) f.extra_delay_ns = 1;  // keep it a fault
        break;
    }
    plan.faults.push_back(std::move(f));
  }
  std::stable_sort(plan.faults.begin(), plan.faults.end(),
                   [](const Fault& a, const Fault& b) { return a.at_ns < b.at_ns; });
  if (Status s = plan.validate(); !s.ok()) return error(StatusCode::internal, "random fault plan: " + s.message());
  return plan;
}

}  // namespace sluice::faults
