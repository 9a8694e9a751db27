// SpecDeployment: a ScenarioSpec as the multi-process deployment that runs
// it on real hosts (`--backend cluster`, cluster_point_run.hpp) and on netns
// hosts (`--backend emulate`, emulated_point_run.hpp, which adds the links),
// and the gathered nodes' results back as the spec's RunResult.
//
// Mapping (cluster_of): mgmt, metadata (one shard per meta node, in node
// order), storage (one target per NVMe drive of a storage server, ids from 1
// in the spec's order) and client roles from the spec's FsSpec and client
// placement; stripe chunk and count from the metadata server's defaults (a
// count above the number of targets is every target, as the chooser gives
// it). The rank processes start every service's config from the spec's
// (FsSpec::mgmt, meta with its namespace policy, storage_config, client: the
// configs FsDeployment gives a simulated or hardware run; NodeRunOptions::fs),
// so the file system runs as the simulation of the same spec models it; a
// storage node run as a child process of its rank (one the fault plan kills)
// gets its config as a file and runs the core's storage defaults.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/common/status.hpp"
#include "core/faults/fault_plan.hpp"
#include "scenarios/deploy/cluster_config.hpp"
#include "scenarios/scenario_spec.hpp"

namespace sluice::emulate {

// Default bound on every wait of one deployed point (bootstrap, phases).
inline constexpr std::uint32_t k_point_max_wait_s = 120;

struct SpecDeployment {
  // The deployment of `spec`, by the rules of emulated_point_run.hpp but the
  // links' (a real cluster's links are what they are); invalid_argument
  // naming the rule it breaks. When the first workload is a file sweep, the
  // config's sweep is its (a node process of the config runs it); every
  // kind runs as the spec's WorkloadSpec.
  static Result<ClusterConfig> cluster_of(const scenario::ScenarioSpec& spec);

  // The RunResult of a gathered run (run_emulation's document) of `spec`.
  static scenario::RunResult result_of(const scenario::ScenarioSpec& spec, const nlohmann::json& gathered);

  // A failed point of `spec` (backend emulate) saying why.
  static scenario::RunResult failed(const scenario::ScenarioSpec& spec, std::string why);

  // The node and role of a fault plan's storage:N or meta:N (meta counts the
  // shards' first servers, then their second ones: faults::Role::meta's rule).
  static std::optional<std::pair<NodeId, Role>> server_of(const scenario::FsSpec& fs, faults::Role role,
                                                          std::uint32_t index);
};

}  // namespace sluice::emulate
