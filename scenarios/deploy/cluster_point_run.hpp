// run_cluster_point: one ScenarioSpec on a real cluster (`mpirun -np N sluice
// run study.lua --backend cluster`, or srun). Every rank of the launcher
// evaluates the script and, at each point, runs this together with the
// others: rank r hosts the services of node r of the spec's cluster (by id)
// in its own `sluice run` process (node_runner.hpp: mgmt, metadata shards,
// storage targets under its storage root, client ranks), over the TCP
// transport between the hosts. The bootstrap is the launcher's
// (rank_bootstrap.hpp through the MPI relay). Points run one after the
// other on the same processes, each a fresh deployment (its own run id,
// storage directories and, unless given one, shared secret).
//
// The deployment is SpecDeployment::cluster_of(spec), and the clients run
// the study's own workload of any kind (file_sweep, md_bench, train_epoch,
// checkpoint, stage_in, stream; host buffers: scenario::WorkloadRun). The
// launchers: mpirun/srun on real hosts (the links are the hosts' own; the
// spec's link rates are what the simulation of the same point models), and
// `--backend emulate` on netns hosts of one machine, behind links shaped to
// the spec's (netns_ranks.hpp; emulated_point_run.hpp). Every rank returns the
// same RunResult (rank 0 gathers every node's document and hands it to all, so
// the script goes on the same way on every rank); only rank 0 writes results
// files. The result's `deployment` records how it ran: launcher, transport,
// storage backend and root, metadata store, hosts (each node's address),
// authentication.
//
// A failure (a spec this path cannot run, a rank count that is not the
// spec's node count, ranks that evaluated different points, a node that
// fails) is the point's result with the reason on every rank, never a hang:
// every wait is bounded by max_wait_s.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.hpp"
#include "scenarios/deploy/bootstrap.hpp"
#include "scenarios/deploy/cluster_config.hpp"
#include "scenarios/deploy/deployment_options.hpp"
#include "scenarios/deploy/spec_deployment.hpp"
#include "scenarios/scenario_spec.hpp"

namespace sluice::emulate {

struct ClusterPointOptions {
  // This host's address for its node's transport (listen_address()).
  std::string listen = "auto";
  // Per host: each rank's node keeps its chunk files and metadata store in
  // <root>/sluice-hw-run-XXXXXX/<run id>/node<N>/, removed after the point
  // unless kept (and swept by a later run on the host if its process died).
  std::string storage_root = "/tmp";
  DeploymentOptions deployment;
  std::uint32_t max_wait_s = k_point_max_wait_s;
  // What launched the ranks, as the result's deployment says it: "mpi"
  // (mpirun/srun: scenarios/cli/run_command.cpp) or "netns" (`--backend emulate`: netns_ranks.hpp).
  std::string launcher = "mpi";
  // The backend the results name (cluster, or emulate for the netns launcher).
  scenario::Backend backend = scenario::Backend::cluster;
  // The program of a node that runs as a child process (node_process.hpp):
  // `<node_command...> --config F ...`; empty: this program's `node`.
  std::vector<std::string> node_command;
  // NodeRunOptions::servers_up of this rank's node (in process only); may be empty.
  std::function<void()> servers_up;
  std::function<void(std::string_view)> log;  // may be empty
  std::function<bool()> stop_requested;       // SIGINT/SIGTERM: the point ends early (NodeRunOptions); may be empty
};

// The IPv4 address `listen` names on this host:
//   "auto" or ""        the first up, non-loopback interface's (127.0.0.1 when
//                       the host has none: one machine)
//   "a.b.c.d"           itself (it must be this host's to be bound)
//   "a.b.c.d/n"         this host's address inside that subnet (the same
//                       --listen on every host of a cluster network)
//   an interface name   that interface's address
// invalid_argument / not_found with the reason otherwise.
Result<std::string> listen_address(const std::string& listen);

// A point that did not run, with why: "<backend>: <why>".
scenario::RunResult failed_cluster_point(const scenario::ScenarioSpec& spec, const ClusterPointOptions& options,
                                         std::string why);

// The point on this rank; see above. `bootstrap` spans the launcher's ranks
// and stays usable for the next point unless a collective failed.
scenario::RunResult run_cluster_point(const scenario::ScenarioSpec& spec, Bootstrap& bootstrap,
                                      const ClusterPointOptions& options);

}  // namespace sluice::emulate
