// SimPointRun: one ScenarioSpec on SimEnv, in this process.
//
// Steps: load the sim profile (ScenarioSpec::sim_profile), create the
// SimRuntime on the cluster topology with the point's seed, deploy the file
// system (fs_deployment.hpp), run until every server registered with mgmt
// (bounded by k_setup_max_events), then each workload in order: add one
// ClientHost per rank and run until every rank finished. The whole run is
// bounded by ScenarioSpec::max_events events; a run that spends them, or in
// which nothing is left to happen before every rank finished, fails naming
// the workload and the simulated time.
//
// Result: one PhaseRow per phase of each workload (workload_run.hpp; metrics
// measured while that workload ran), every counter of the run ("client.
// read_bytes", ... plus the runtime's "sim.events", "sim.activities",
// "sim.messages_sent", "sim.messages_dropped"), paths_taken = chunks planned
// direct and bounce (the clients' "client.chunks_direct"/"client.chunks_bounce"),
// the simulated time at the end and the last log lines.
//
// With ScenarioSpec::sim_coalesce the clients merge the chunk pieces of a
// request that sit on one target into requests of at most
// k_sim_coalesce_pieces chunks (sim_point_run.cpp `coalescing`), in a child
// process. Per chunk, each piece would hold one of its target's request
// slots; the servers measure the share of the pieces' service time that the
// merged requests gave beyond those slots ("sim.coalesce_slot_excess"). Past
// k_sim_coalesce_max_slot_excess the slots would have bound, and merging
// changes the answer (docs/sim.md: -29% on the CosmoFlow epoch): the point
// then runs again per chunk, here, and its result says so (deployment
// "sim_coalesce": "merged" or "per_chunk: <why>", and the log).
//
// ScenarioSpec::sim_mode (issue 50): chunk runs every communication as a
// SimGrid activity; fluid carries them as flows of the runtime's fluid
// network (sim/fluid_net.hpp), counting "sim.fluid_solves" (and of them
// "sim.fluid_big_solves", "sim.fluid_deadline_solves"), "sim.fluid_flows",
// "sim.fluid_deviation_share" (the bytes by which the bulk flows strayed
// from the rates solved after them, over their bytes), its signed sum
// "sim.fluid_net_deviation_share" (what the strays added to or took from the
// throughput), and "sim.fluid_small_share" (the bytes of flows that shared
// without entering the solve, over all). automatic runs fluid first, in a
// child process; where its net deviation share is within
// k_sim_fluid_max_deviation its result stands, else the point runs again per
// chunk, here. deployment "sim_mode" says "chunk", "fluid", or
// "chunk: <why fluid was not kept>", and the log.
//
// SimGrid allows one engine per process: call this in a fresh (child) process.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scenarios/scenario_spec.hpp"

namespace sluice::scenario {

// Limits: chunk pieces one coalesced request merges (sl.run sim_coalesce).
inline constexpr std::uint64_t k_sim_coalesce_pieces = 16;
// Limits: the share of the pieces' service time a merged run may give
// beyond the targets' request slots and stand; the 2% to which coalesced
// and per-chunk runs must agree (issue 19 item 4).
inline constexpr double k_sim_coalesce_max_slot_excess = 0.02;

// Limits: the share of a fluid run's bulk bytes that may stray from the
// solved sharing, net, for auto mode to keep it (issue 50: within 2% of per
// chunk). Measured against per chunk (docs/sim.md, fluid mode): issue 48's
// 18 + 50 read strayed 0.6% net (2.3% counting each flow's stray) and agreed
// within 0.15% on every phase.
inline constexpr double k_sim_fluid_max_deviation = 0.02;

class SimPointRun {
 public:
  // Never throws; a failure is ok = false with the reason.
  static RunResult run(const ScenarioSpec& spec, const std::vector<std::string>& profile_dirs);
  // Whether this build has SimEnv (SimGrid was found).
  static bool available();

 private:
  // The point in its spec's sim mode (chunk or fluid), merged or not as
  // sim_coalesce says.
  static RunResult run_mode(const ScenarioSpec& spec, const std::vector<std::string>& profile_dirs);
  // The point as its spec says, in this process (merged when sim_coalesce).
  static RunResult run_here(const ScenarioSpec& spec, const std::vector<std::string>& profile_dirs);
};

}  // namespace sluice::scenario
