// sluice run SCRIPT.lua [--backend sim|hw|emulate|cluster] [--set k=v]... [--out DIR] ...
//   a Lua scenario: its points go to the runner (scenarios/runner), their
//   results to OUT/results.json, results.csv and progress.csv; SIGINT and
//   SIGTERM stop it after writing the points that finished (exit 128 + the
//   signal). Under an MPI launcher (mpirun/srun) it runs as sluice-node's
//   child: exec_mpi_node, run_under_launcher.
#pragma once

#include "scenarios/cli/command.hpp"

namespace sluice::cli {

void add_run_command(CLI::App& app, CommandExit& exit);

// `sluice node --mpi`, and `sluice run` under an MPI launcher, run as
// sluice-node (built next to sluice) through exec; returns only when the exec
// failed, with the exit code to give.
int exec_mpi_node(char** argv, const char* what);

// `sluice run` started by mpirun/srun with several ranks, and not yet by the relay.
bool run_under_launcher(int argc, char** argv);

}  // namespace sluice::cli
