// BeeGFS target choosers: which storage targets a new file is striped over.
//
// The metadata server picks a file's targets when it creates the file
// (meta/source/storage/DirInode.cpp createFileStripePattern, by the
// tuneTargetChooser setting) from the capacity pools of
// common/source/common/nodes/TargetCapacityPools.cpp. Each chooser below
// follows that code; the pools are the normal, low and emergency pools of
// target_info.hpp, each ordered by target id (BeeGFS keeps them in std::set).
//
// randomized (chooseStorageTargets -> chooseStorageNodesNoPref): for the
//   normal pool, then the low pool, then the emergency pool, and only while
//   fewer than min_required_count targets are chosen: take k = min(wanted,
//   pool size) targets by starting the ring of the pool at a random element,
//   cutting it into k consecutive parts (each pool_size / k long, the last
//   taking the remainder) and picking one uniformly random target in each
//   part. Parts are disjoint, so no target repeats; the random start makes
//   every target of a pool equally likely. Here each later pool is asked for
//   the remaining count (BeeGFS asks the emergency pool for the full count).
// roundrobin (chooseStorageTargetsRoundRobin ->
//   chooseStorageNodesNoPrefRoundRobin): from the first non-empty pool only
//   (normal, else low, else emergency), the k = min(wanted, pool size) targets
//   that follow the last one handed out, in id order around the ring. The
//   position persists across calls in RoundRobinState (BeeGFS:
//   lastRoundRobinTarget, one per TargetCapacityPools, not saved across
//   restarts). Deviation: BeeGFS starts at lower_bound(last) and then steps
//   once, which skips the lowest target on the very first call; here the next
//   file starts at the first id >= next_target, so the sequence is exact.
// randomrobin: roundrobin, then the chosen list is shuffled (meta Config.h:
//   "randomized round-robin (round-robin, but shuffle result)"; DirInode.cpp
//   calls random_shuffle on the round-robin result). Which targets a file gets
//   is round-robin; only their stripe order is random.
// randominternode (chooseTargetsInterdomain -> chooseTargetsInterdomainNoPref):
//   targets are grouped by node; for each pool in turn (skipping nodes already
//   used by an earlier pool), start at a random node, take one uniformly random
//   target of it, move to the next node in id order, and so on, for k =
//   min(remaining wanted, nodes in the pool) targets; stop once at least
//   min_required_count are chosen. So no two stripes ever share a node, and
//   the count is reduced to the number of distinct nodes. Targets whose node
//   is k_no_id are skipped (BeeGFS groupTargetsByNode: a target without a
//   known node cannot be placed in a failure domain). With buddy_groups set,
//   randominternode runs as randomized, as BeeGFS does for buddy mirroring.
//
// Offline targets and targets without capacity are never candidates (see
// target_usable). All randomness comes from the Rng passed in; the only state
// is RoundRobinState, owned by the caller (one per metadata server or
// storage pool).
#pragma once

#include <cstdint>
#include <vector>

#include "core/common/rng.hpp"
#include "core/common/status.hpp"
#include "core/layout/target_info.hpp"

namespace sluice {

struct RoundRobinState {
  TargetId next_target = 0;  // the next file starts at the first target id >= this
};

// kind must be one of the four BeeGFS kinds (lustre_qos -> invalid_argument).
// Errors: invalid_argument for a bad request, candidate list or limits;
// no_space when fewer than request.min_required_count targets can be chosen.
// On success the ids are distinct and in stripe order.
Result<std::vector<TargetId>> choose_beegfs_targets(ChooserKind kind, const std::vector<TargetInfo>& candidates,
                                                    const ChooseRequest& request, const CapacityPoolLimits& limits,
                                                    RoundRobinState& round_robin, Rng& rng);

}  // namespace sluice
