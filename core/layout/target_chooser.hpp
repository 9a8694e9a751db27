// TargetChooser: the one entry point a metadata server uses to pick a new
// file's targets, whatever the configured chooser.
//
// A tagged enum (ChooserKind, target_info.hpp) plus one object holding the
// state the stateful choosers need: the BeeGFS round-robin position and the
// Lustre allocator's round-robin indices and penalties. Keep one TargetChooser
// per metadata server (or per storage pool / OST pool), as BeeGFS keeps one
// TargetCapacityPools and Lustre one lod_qos per pool.
//
// Contract of choose(): the candidates are a snapshot of the targets; the
// result is a list of distinct target ids in stripe order, as many as the
// count rule of ChooseRequest says; errors are invalid_argument (bad request
// or candidates) and no_space (fewer than min_required_count reachable). All
// randomness comes from the Rng passed in; nothing else is read. Not
// thread-safe (service state).
//
// Kinds:
//   randomized, roundrobin, randomrobin, randominternode -> choose_beegfs_targets
//     (beegfs_target_choosers.hpp), with capacity pools from pool_limits;
//   lustre_qos -> LustreQosAllocator::allocate, or allocate_from when the
//     request names a start_target (lustre_qos_allocator.hpp).
#pragma once

#include <vector>

#include "core/common/rng.hpp"
#include "core/common/status.hpp"
#include "core/layout/beegfs_target_choosers.hpp"
#include "core/layout/lustre_qos_allocator.hpp"
#include "core/layout/target_info.hpp"

namespace sluice {

struct TargetChooserConfig {
  ChooserKind kind = ChooserKind::randomized;  // BeeGFS's default tuneTargetChooser
  CapacityPoolLimits pool_limits;              // BeeGFS kinds only
  LustreQosConfig lustre_qos;                  // lustre_qos only
};

class TargetChooser {
 public:
  // Errors: invalid_argument for bad pool limits or Lustre percentages.
  static Result<TargetChooser> make(TargetChooserConfig config);

  Result<std::vector<TargetId>> choose(const std::vector<TargetInfo>& candidates, const ChooseRequest& request,
                                       Rng& rng);

  const TargetChooserConfig& config() const { return config_; }
  const RoundRobinState& round_robin_state() const { return round_robin_; }
  const LustreQosAllocator& lustre_allocator() const { return lustre_; }

 private:
  explicit TargetChooser(TargetChooserConfig config) : config_(config), lustre_(config.lustre_qos) {}

  TargetChooserConfig config_;
  RoundRobinState round_robin_;
  LustreQosAllocator lustre_;
};

}  // namespace sluice
