#include "core/layout/target_chooser.hpp"

namespace sluice {

Result<TargetChooser> TargetChooser::make(TargetChooserConfig config) {
  if (Status s = validate(config.pool_limits); !s.ok()) return s;
  if (Status s = validate(config.lustre_qos); !s.ok()) return s;
  return TargetChooser(config);
}

Result<std::vector<TargetId>> TargetChooser::choose(const std::vector<TargetInfo>& candidates,
                                                    const ChooseRequest& request, Rng& rng) {
  if (config_.kind != ChooserKind::lustre_qos) {
    return choose_beegfs_targets(config_.kind, candidates, request, config_.pool_limits, round_robin_, rng);
  }
  if (Status s = validate(request); !s.ok()) return s;
  Result<std::vector<TargetId>> chosen =
      request.start_target == k_no_id ? lustre_.allocate(candidates, request.stripe_count, rng)
                                      : lustre_.allocate_from(candidates, request.stripe_count, request.start_target);
  if (!chosen.ok()) return chosen;
  if (chosen->size() < request.min_required_count) {
    return error(StatusCode::no_space, "lustre qos: found " + std::to_string(chosen->size()) +
                                           " of min_required_count=" + std::to_string(request.min_required_count) +
                                           " usable targets");
  }
  return chosen;
}

}  // namespace sluice
