// The CLI of the deployment half of HwEnv that is not `sluice run` (studies run
// on netns hosts and real clusters with `sluice run STUDY --backend
// emulate|cluster`, scenarios/cli/run_command.hpp):
//
//   sluice node --config cluster.json --rank R --bootstrap-fd 3 [--netns NAME]
//       (started by a deployment: `sluice run --backend emulate|cluster`, `sluice mount`)
//   mpirun -np N sluice node --mpi --config cluster.json [--listen IP|auto] [--out DIR]
//       one node of a multi-process deployment (node_runner.hpp): a cluster
//       JSON's workload (a file sweep, or a mount: docs/mount.md) under mpirun;
//   sluice emulate --cleanup-stale
//       removes what killed runs left (dead_runs.hpp) and exits.
//   `node` and `emulate` are hidden from --help.
//
// Exit codes as scenarios/cli/command.hpp: 0 ok, 1 the run failed, 2 usage error,
// 130 interrupted (SIGINT/SIGTERM; everything is removed first).
#pragma once

#include "scenarios/cli/command.hpp"

namespace sluice::emulate {

// Adds the hidden `emulate` and `node` (and mount, umount) to `app`; their
// exit codes go to `exit` (cli::on_parsed).
void add_emulate_commands(CLI::App& app, cli::CommandExit& exit);

//   sluice mount MOUNTPOINT [--nodes N] [--link RATE] [--config cluster.json] [--direct-io] ...
//   sluice umount MOUNTPOINT [--lazy]
// A deployment in network namespaces whose client node serves a FUSE mount
// of it (scenarios/mount) until it is unmounted; docs/mount.md.
void add_mount_commands(CLI::App& app, cli::CommandExit& exit);

// Makes SIGINT/SIGTERM/SIGHUP write to a pipe and returns its read end (-1
// when no pipe could be made): an emulation given it as stop_fd stops and
// removes its namespaces and processes (`sluice calibrate SCRIPT` uses it).
int install_emulate_stop_signals();

}  // namespace sluice::emulate
