// Random fault plans drawn from a run's seed (FoundationDB-style simulation
// testing: the seed is printed with the run, and the same seed gives the same
// plan, so any failing run can be replayed).
//
// Every choice comes from the Rng passed in (core/common/rng.hpp); every
// range is a named limit in RandomPlanLimits.
#pragma once

#include <cstdint>
#include <vector>

#include "core/common/ids.hpp"
#include "core/common/rng.hpp"
#include "core/faults/fault_plan.hpp"

namespace sluice::faults {

// What the plan may name: how many services of each role the deployment
// has (indices 0..n-1), its node ids and its target ids.
struct ClusterShape {
  std::uint32_t meta_services = 0;
  std::uint32_t storage_services = 0;
  std::uint32_t client_services = 0;
  std::vector<NodeId> nodes;
  std::vector<TargetId> targets;
};

struct RandomPlanLimits {
  // Faults begin in [0, window_ns).
  TimeNs window_ns = 8 * k_ns_per_s;
  std::uint32_t min_faults = 1;
  std::uint32_t max_faults = 4;
  // Durations of faults that end (and the time before a revive).
  TimeNs min_duration_ns = 100 * k_ns_per_ms;
  TimeNs max_duration_ns = 3 * k_ns_per_s;
  double max_disk_slowdown = 20.0;
  double max_loss_probability = 0.3;
  TimeNs max_extra_delay_ns = 2 * k_ns_per_ms;
  // Relative weights of the fault kinds (0 turns a kind off).
  std::uint32_t weight_kill = 3;
  std::uint32_t weight_slow_disk = 2;
  std::uint32_t weight_partition = 2;
  std::uint32_t weight_message_loss = 2;
  // Which roles may be killed. Metadata servers keep their namespace in
  // memory in TestEnv and SimEnv (a restart loses it), so they are off by
  // default; clients are the workload itself, never killed.
  bool kill_storage = true;
  bool kill_meta = false;
  bool kill_mgmt = false;
  // Without mirroring every killed server must come back before the final
  // check (acknowledged data survives a crash on its disk, but only a live
  // server can serve it). With mirroring at most max_permanent_kills storage
  // servers may stay dead (one per buddy group is what mirroring covers; the
  // caller passes how many it can tolerate).
  bool revive_every_kill = true;
  std::uint32_t max_permanent_kills = 0;
  // A partition holds at most this share of the nodes (it cuts them off
  // from the rest; larger sets are the same cut seen from the other side).
  double max_partition_share = 0.5;
};

// invalid_argument when the limits cannot give a valid plan (no kind
// enabled, an empty cluster, min > max).
Result<FaultPlan> random_fault_plan(Rng& rng, const ClusterShape& shape, const RandomPlanLimits& limits);

}  // namespace sluice::faults
