// What a launcher of the multi-process deployment uses (scenarios/netns/: one
// rank process per network namespace; `sluice mount`, `sluice node`): the
// one interface through which netns/ reaches deploy/ (ctest label
// `structure`: TheDeploymentAndTheNamespacesMeetThroughOneInterface).
//
// - the deployment's description and a spec's (cluster_config.hpp,
//   deployment_options.hpp, spec_deployment.hpp);
// - a node's services in its process, and in child processes of it
//   (node_runner.hpp, node_process.hpp via node_runner), and their settings
//   on the wire (server_settings_codec.hpp);
// - how the ranks find each other: the bootstrap protocol and its
//   coordinator, over sockets or MPI, and the rank path's own bootstrap
//   through a relay (bootstrap_coordinator.hpp, socket_bootstrap.hpp,
//   mpi_bootstrap.hpp, rank_bootstrap.hpp, frame_relay.hpp);
// - a point on the ranks and its gathered results (cluster_point_run.hpp,
//   gathered_results.hpp);
// - running the system's commands and child processes (command_runner.hpp).
//
// deploy/ itself includes nothing of netns/.
#pragma once

#include "scenarios/deploy/bootstrap_coordinator.hpp"
#include "scenarios/deploy/cluster_config.hpp"
#include "scenarios/deploy/cluster_point_run.hpp"
#include "scenarios/deploy/command_runner.hpp"
#include "scenarios/deploy/deployment_options.hpp"
#include "scenarios/deploy/frame_relay.hpp"
#include "scenarios/deploy/gathered_results.hpp"
#include "scenarios/deploy/mpi_bootstrap.hpp"
#include "scenarios/deploy/node_runner.hpp"
#include "scenarios/deploy/rank_bootstrap.hpp"
#include "scenarios/deploy/server_settings_codec.hpp"
#include "scenarios/deploy/socket_bootstrap.hpp"
#include "scenarios/deploy/spec_deployment.hpp"
