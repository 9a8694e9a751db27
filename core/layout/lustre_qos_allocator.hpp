// Lustre's OST object allocator (LOD QoS), after lustre/lod/lod_qos.c.
//
// Which targets can take an object: online with a capacity (Lustre skips
// inactive OSTs, os_blocks == 0) and not full (lod_qos_dev_is_full: free below
// min(used / 1024, 1 GiB), i.e. 0.1% of the used space capped at 1 GiB).
//
// Mode (lod_qos_calc_ppo): with fewer than two usable targets, or when free
// space is balanced, allocate round-robin; otherwise weighted random.
// Balanced means (max_free * (256 - t)) >> 8 < min_free over usable targets,
// t = threshold_rr_percent * 256 / 100: the spread between the emptiest and
// fullest OST is below qos_threshold_rr (default 17%,
// LOV_QOS_DEF_THRESHOLD_RR_PCT). Entering round-robin resets all penalties
// (lq_reset).
//
// Round-robin (lod_qos_calc_rr, lod_alloc_rr): the candidates are laid out in
// an order that spreads each OSS's OSTs evenly: servers in order of how many
// OSTs they have (most first, then node id), and the j-th of a server's c OSTs
// goes to slot j * n / c, or the next free slot after it. A file takes the next
// usable slots from (start_index + offset_index) % n, so consecutive stripes
// land on different OSSs. The start index is reseeded at random every
// (2000 / n + 30) * n files (LOV_CREATE_RESEED_MIN/MULT); when a file wants at
// least n stripes the offset index advances so successive files start
// elsewhere. Not modelled: lod's second and third passes that accept
// degraded or slow OSTs.
//
// Weighted (lod_alloc_qos, lod_qos_calc_weight, lod_qos_used): weight =
// free - ost_penalty - oss_penalty (floored at 0); each stripe draws r
// uniformly in [0, total weight) and takes the first target whose running
// weight sum exceeds r; a target is taken once per file. Penalties keep one
// file's stripes and successive files apart: per object, an OST's penalty
// step is (free / 2 / (usable OSTs - 1)) * prio_wide / 256 and an OSS's is
// (OSS free / 2 / (its OSTs * (OSSs - 1))) * prio_wide / 256, with
// prio_wide = 256 - qos_prio_free * 256 / 100 (qos_prio_free default 90%,
// LOV_QOS_DEF_PRIO_FREE); with one OSS the OST step doubles. Taking a target
// halves its and its OSS's penalty, adds step * (usable OSTs) resp.
// step * (OSSs), and then every OST and OSS penalty drops by its own step.
// Simplifications, said plainly: penalties decay only per allocated object,
// never with time (Lustre also halves them for every qos_maxage an OST stays
// idle and clears them after 32 * qos_maxage); weights and penalties are in
// MiB, not bytes, so that sums over 65536 targets fit 64 bits; a zero total
// weight picks uniformly among the remaining targets (Lustre takes the first);
// an OSS's OST count is its usable OSTs.
//
// allocate_from (lod_alloc_specific, `lfs setstripe -i`): the targets from
// start_target on, in id order around the ring, skipping offline ones; fewer
// than stripe_count is an error (Lustre returns EFBIG), not a reduced count.
//
// Targets whose node is k_no_id count as one shared server.
//
// State: the round-robin indices and the penalties persist across calls (one
// allocator per metadata server / OST pool). Not thread-safe, like every
// service state; all randomness comes from the Rng passed in.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/common/rng.hpp"
#include "core/common/status.hpp"
#include "core/layout/target_info.hpp"

namespace sluice {

struct LustreQosConfig {
  std::uint32_t threshold_rr_percent = 17;  // lod qos_threshold_rr, LOV_QOS_DEF_THRESHOLD_RR_PCT
  std::uint32_t prio_free_percent = 90;     // lod qos_prio_free, LOV_QOS_DEF_PRIO_FREE
};

// Both percentages must be in 0..100.
Status validate(const LustreQosConfig& config);

// lod_qos_dev_is_full caps the reserve at 1 GiB.
inline constexpr std::uint64_t k_lustre_full_reserve_bytes_max = 1 * k_gib;
// lod_alloc_rr reseeding: LOV_CREATE_RESEED_MIN and LOV_CREATE_RESEED_MULT.
inline constexpr std::uint64_t k_lustre_rr_reseed_min = 2000;
inline constexpr std::uint64_t k_lustre_rr_reseed_mult = 30;

enum class QosMode : std::uint8_t {
  none = 0,         // nothing allocated yet
  round_robin = 1,  // free space balanced
  weighted = 2,     // free space imbalanced
  specific = 3,     // allocate_from
};

std::string_view to_string(QosMode mode);

class LustreQosAllocator {
 public:
  // config must pass validate() (asserted).
  explicit LustreQosAllocator(LustreQosConfig config = {});

  // Up to stripe_count distinct usable targets (fewer when fewer are usable).
  // Errors: invalid_argument for a bad count or candidate list; no_space when
  // no candidate is usable.
  Result<std::vector<TargetId>> allocate(const std::vector<TargetInfo>& candidates, std::uint32_t stripe_count,
                                         Rng& rng);

  // Exactly stripe_count targets: start_target (if online) and the online
  // targets after it in id order. Errors: invalid_argument when start_target
  // is not a candidate; no_space when fewer than stripe_count are online.
  Result<std::vector<TargetId>> allocate_from(const std::vector<TargetInfo>& candidates, std::uint32_t stripe_count,
                                              TargetId start_target);

  // Online, with capacity, and not full by lod_qos_dev_is_full.
  static bool usable(const TargetInfo& target);
  // Whether allocate would use round-robin for these candidates.
  bool space_balanced(const std::vector<TargetInfo>& candidates) const;

  QosMode last_mode() const { return last_mode_; }
  const LustreQosConfig& config() const { return config_; }

 private:
  std::vector<TargetId> allocate_round_robin(const std::vector<TargetInfo>& candidates, std::uint32_t stripe_count,
                                             std::size_t wanted, Rng& rng);
  std::vector<TargetId> allocate_weighted(const std::vector<const TargetInfo*>& usable_targets, std::size_t wanted,
                                          Rng& rng);

  LustreQosConfig config_;
  QosMode last_mode_ = QosMode::none;
  // lov_qos_rr: lqr_start_idx, lqr_offset_idx, lqr_start_count.
  std::uint64_t rr_start_index_ = 0;
  std::uint64_t rr_offset_index_ = 0;
  std::uint64_t rr_files_until_reseed_ = 0;
  // ltq_penalty per OST and lqo_penalty per OSS, in MiB.
  std::unordered_map<TargetId, std::uint64_t> ost_penalty_mib_;
  std::unordered_map<NodeId, std::uint64_t> oss_penalty_mib_;
};

}  // namespace sluice
