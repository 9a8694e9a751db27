// The inputs of target choosers: what they know about a storage target, what
// a file asks for, which chooser runs, and BeeGFS capacity pools.
//
// Choosers take a snapshot of the targets (from the management service's
// target states and free-space reports) as a vector of TargetInfo. For buddy
// mirroring, pass one TargetInfo per buddy group: id = the GroupId, node = the
// primary's node, free/capacity = the smaller of the two buddies' values
// (BeeGFS pools a group by its worse member).
//
// Capacity pools (BeeGFS, common/source/common/nodes/TargetCapacityPools.h):
// every target is in the normal, low or emergency pool by its free space, and
// choosers draw from the normal pool first. The limits are the management
// daemon's tuneStorageSpaceLowLimit and tuneStorageSpaceEmergencyLimit,
// defaults 1T and 20G (mgmtd Config.cpp loadDefaults, BeeGFS 7; BeeGFS sizes
// are binary, so TiB and GiB). Classification uses free space only; BeeGFS
// also classifies by free inodes, and dynamic pool limits are not modelled.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/ids.hpp"
#include "core/common/status.hpp"
#include "core/common/units.hpp"
#include "core/layout/stripe_pattern.hpp"
#include "core/common/field_info.hpp"

namespace sluice {

// At most this many candidates per choice: BeeGFS target ids are 16-bit, and
// Lustre's largest OST index is below LOV_V1_INSANE_STRIPE_COUNT (65532).
inline constexpr std::size_t k_max_chooser_candidates = 65536;

struct TargetInfo {
  TargetId id = k_no_id;  // a TargetId, or a GroupId when choosing buddy groups
  NodeId node = k_no_id;  // the server that holds it (BeeGFS node, Lustre OSS)
  std::uint64_t capacity_bytes = 0;
  std::uint64_t free_bytes = 0;
  bool online = true;
};

// A target can hold new files at all: online and with a capacity. BeeGFS's
// mgmtd moves unreachable targets into the emergency pool; here they are
// simply never chosen, since a file striped onto an offline target fails.
// Lustre skips inactive OSTs the same way (os_blocks == 0, lod_qos.c).
bool target_usable(const TargetInfo& target);

// Rejects a candidate list a chooser cannot use: more than
// k_max_chooser_candidates, a k_no_id id, a repeated id, or free_bytes >
// capacity_bytes. The message names the entry.
Status validate_targets(const std::vector<TargetInfo>& targets);

enum class CapacityPool : std::uint8_t { normal = 0, low = 1, emergency = 2 };
inline constexpr std::size_t k_capacity_pool_count = 3;

std::string_view to_string(CapacityPool pool);

struct CapacityPoolLimits {
  std::uint64_t low_free_bytes = 1 * k_tib;         // below this: low pool
  std::uint64_t emergency_free_bytes = 20 * k_gib;  // below this: emergency pool
};

// Its fields, one description each (core/common/field_info.hpp).
template <class V>
void fields(V& v, CapacityPoolLimits& c) {
  v("low_free_bytes", c.low_free_bytes, bytes_in(0, k_field_max_unbounded, "below this free: the low pool"));
  v("emergency_free_bytes", c.emergency_free_bytes,
    bytes_in(0, k_field_max_unbounded, "below this free: the emergency pool"));
}

// emergency_free_bytes must not exceed low_free_bytes.
Status validate(const CapacityPoolLimits& limits);

// free < emergency -> emergency; else free < low -> low; else normal.
CapacityPool capacity_pool_of(const TargetInfo& target, const CapacityPoolLimits& limits);

// Which chooser picks a new file's targets. The first four are BeeGFS's
// tuneTargetChooser values (meta Config.h TargetChooserType, names as in
// beegfs-meta.conf); lustre_qos is Lustre's LOD allocator (lod_qos.c).
enum class ChooserKind : std::uint8_t {
  randomized = 0,
  roundrobin = 1,
  randomrobin = 2,
  randominternode = 3,
  lustre_qos = 4,
};

std::string_view to_string(ChooserKind kind);
// "randomized", "roundrobin", "randomrobin", "randominternode", "lustre_qos".
Result<ChooserKind> chooser_kind_from_string(std::string_view name);

// What one file asks of a chooser.
//
// Count rule, for every chooser (BeeGFS reduces the count to what it can
// reach: chooseStorageNodesNoPref "numTargets = activeTargetsSize"; Lustre
// lod_alloc_qos "if (good_osts < stripe_cnt) stripe_cnt = good_osts"): the
// result holds min(stripe_count, targets the chooser's rule can reach) distinct
// targets. If that is fewer than min_required_count, the choice fails with
// no_space (BeeGFS DirInode::createFileStripePattern fails below the
// pattern's getMinNumTargets()). min_required_count also decides when BeeGFS
// choosers move on from the normal pool to the low and emergency pools.
struct ChooseRequest {
  std::uint32_t stripe_count = k_default_stripe_count_beegfs;  // 1..k_max_stripe_count
  // BeeGFS minNumRequiredTargets: 1 for RAID0 and buddy mirror patterns.
  std::uint32_t min_required_count = 1;  // 1..stripe_count
  // Candidates are buddy groups: BeeGFS then runs randominternode as
  // randomized (it cannot group buddy groups by node; DirInode.cpp).
  bool buddy_groups = false;
  // Lustre stripe_offset (`lfs setstripe -i`): the first OST; k_no_id lets
  // the allocator choose. Ignored by the BeeGFS choosers.
  TargetId start_target = k_no_id;
};

// The message names the bad field.
Status validate(const ChooseRequest& request);

}  // namespace sluice
