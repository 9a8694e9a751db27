#include "core/layout/target_info.hpp"

#include <unordered_set>

namespace sluice {

bool target_usable(const TargetInfo& target) { return target.online && target.capacity_bytes > 0; }

Status validate_targets(const std::vector<TargetInfo>& targets) {
  if (targets.size() > k_max_chooser_candidates) {
    return error(StatusCode::invalid_argument,
                 "targets: " + std::to_string(targets.size()) +
                     " candidates exceed k_max_chooser_candidates=" + std::to_string(k_max_chooser_candidates));
  }
  std::unordered_set<TargetId> seen;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const TargetInfo& t = targets[i];
    const std::string where = "targets[" + std::to_string(i) + "]";
    if (t.id == k_no_id) {
      return error(StatusCode::invalid_argument, where + ".id is the reserved k_no_id");
    }
    if (!seen.insert(t.id).second) {
      return error(StatusCode::invalid_argument, where + ".id=" + std::to_string(t.id) + " repeats an earlier target");
    }
    if (t.free_bytes > t.capacity_bytes) {
      return error(StatusCode::invalid_argument, where + " (id " + std::to_string(t.id) +
                                                     ") free_bytes=" + std::to_string(t.free_bytes) +
                                                     " exceeds capacity_bytes=" + std::to_string(t.capacity_bytes));
    }
  }
  return ok_status();
}

std::string_view to_string(CapacityPool pool) {
  switch (pool) {
    case CapacityPool::normal: return "normal";
    case CapacityPool::low: return "low";
    case CapacityPool::emergency: return "emergency";
  }
  return "unknown";
}

Status validate(const CapacityPoolLimits& limits) {
  if (limits.emergency_free_bytes > limits.low_free_bytes) {
    return error(StatusCode::invalid_argument,
                 "capacity pool limits: emergency_free_bytes=" + std::to_string(limits.emergency_free_bytes) +
                     " exceeds low_free_bytes=" + std::to_string(limits.low_free_bytes));
  }
  return ok_status();
}

CapacityPool capacity_pool_of(const TargetInfo& target, const CapacityPoolLimits& limits) {
  if (target.free_bytes < limits.emergency_free_bytes) return CapacityPool::emergency;
  if (target.free_bytes < limits.low_free_bytes) return CapacityPool::low;
  return CapacityPool::normal;
}

std::string_view to_string(ChooserKind kind) {
  switch (kind) {
    case ChooserKind::randomized: return "randomized";
    case ChooserKind::roundrobin: return "roundrobin";
    case ChooserKind::randomrobin: return "randomrobin";
    case ChooserKind::randominternode: return "randominternode";
    case ChooserKind::lustre_qos: return "lustre_qos";
  }
  return "unknown";
}

Result<ChooserKind> chooser_kind_from_string(std::string_view name) {
  for (ChooserKind kind : {ChooserKind::randomized, ChooserKind::roundrobin, ChooserKind::randomrobin,
                           ChooserKind::randominternode, ChooserKind::lustre_qos}) {
    if (name == to_string(kind)) return kind;
  }
  return error(StatusCode::invalid_argument,
               "target chooser: unknown name '" + std::string(name) +
                   "' (known: randomized, roundrobin, randomrobin, randominternode, lustre_qos)");
}

Status validate(const ChooseRequest& request) {
  if (request.stripe_count == 0 || request.stripe_count > k_max_stripe_count) {
    return error(StatusCode::invalid_argument, "choose request: stripe_count=" + std::to_string(request.stripe_count) +
                                                   " is outside 1.." + std::to_string(k_max_stripe_count));
  }
  if (request.min_required_count == 0 || request.min_required_count > request.stripe_count) {
    return error(StatusCode::invalid_argument,
                 "choose request: min_required_count=" + std::to_string(request.min_required_count) +
                     " is outside 1..stripe_count=" + std::to_string(request.stripe_count));
  }
  return ok_status();
}

}  // namespace sluice
