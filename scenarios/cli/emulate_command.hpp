// The CLI of the deployment half of HwEnv:
//
//   sluice emulate --nodes N --link RATE[,LATENCY] [--subnet 10.213.0.0/24] [--mtu 1500]
//                  [--config cluster.json] [--files-per-rank K] [--file-size 4MiB] [--block-size 1MiB]
//                  [--threads T] [--chunk-size 1MiB] [--stripe-count S] [--seed X] [--max-wait SECONDS]
//                  [--iperf SECONDS] [--out results.json] [--work-dir DIR] [--keep]
//   sluice emulate --cleanup-stale
//       N network namespaces on this machine shaped to the link, one node
//       process in each, a verified file sweep (cluster_emulator.hpp).
//
//   sluice node --config cluster.json --rank R --bootstrap-fd 3      (started by `emulate`)
//   mpirun -np N sluice node --mpi [--config cluster.json | --nodes N] [--listen IP|auto] [--out F]
//       one node of a multi-process deployment (node_runner.hpp); `node`
//       is hidden from --help.
//
// Exit codes as scenarios/cli/command.hpp: 0 ok, 1 the run failed, 2 usage error,
// 130 interrupted (SIGINT/SIGTERM; everything is removed first).
#pragma once

#include "scenarios/cli/command.hpp"

namespace sluice::emulate {

// Adds `emulate` and the hidden `node` (and mount, umount) to `app`; their
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
