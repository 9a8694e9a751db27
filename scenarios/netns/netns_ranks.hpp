// run_netns_ranks: the launcher of `sluice run --backend emulate`. It starts
// the ranks of the cluster path (cluster_point_run.hpp) as processes of this
// machine, one per node, each in the network namespace of its node
// (NetnsCluster: veth links shaped to the spec's network), so that a point
// emulated here runs the very code a point on a real cluster runs: the same
// run_cluster_point, RankBootstrap and SweepSchedule, and only the relay
// differs (FrameRelay here, the MPI relay under mpirun; frame_relay.hpp).
//
// Each rank is a fork of the calling process, which holds the point's
// ScenarioSpec: nothing about the spec is written down or parsed again. The
// caller must not have started threads (the runner's point child has none).
// A rank joins its namespace's network only (setns; files and mounts stay
// the machine's), listens on its node's address, and runs
// run_cluster_point; rank 0 hands the point's RunResult back through a pipe.
// Ranks die with the calling process (PR_SET_PDEATHSIG). Every wait is
// bounded: past `deadline_s`, or once `stop_fd` is readable, the ranks are
// killed and the result says why.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "scenarios/deploy/deploy.hpp"
#include "scenarios/scenario_spec.hpp"

namespace sluice::emulate {

// Grace after the deadline for ranks to end once killed (reaped).
inline constexpr std::uint32_t k_netns_rank_reap_ms = 10'000;

struct NetnsRanksOptions {
  ClusterPointOptions point;           // its `listen` is set per rank to the rank's address
  std::vector<std::string> netns;      // by rank: the namespace (/run/netns/NAME)
  std::vector<std::string> addresses;  // by rank: its address there
  std::uint32_t deadline_s = 2 * k_point_max_wait_s + 60;
  int stop_fd = -1;  // readable: stop (the CLI's signal pipe); -1: none
  // The launcher's own timeline (emulated_point_run.cpp's link faults):
  // on_servers_up once rank 0 says every server registered ("servers-up",
  // where the fault plan's times count from), then on_tick at every turn of
  // the relay's loop, at most tick_ms apart. Both may be empty.
  std::function<void()> on_servers_up;
  std::function<void()> on_tick;
  int tick_ms = 500;
};

scenario::RunResult run_netns_ranks(const scenario::ScenarioSpec& spec, const NetnsRanksOptions& options);

}  // namespace sluice::emulate
