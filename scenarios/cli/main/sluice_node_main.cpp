// sluice-node: the `node`, `mount` and hidden `emulate` commands of sluice alone, for tests
// and benchmarks that must not depend on the full front end, and the MPI
// relay of `sluice run` under a launcher (real MPI lives in this binary:
// scenarios/cli/run_command.hpp, exec_mpi_node).
#include <string_view>

#include "scenarios/cli/command.hpp"
#include "scenarios/cli/emulate_command.hpp"
#include "scenarios/deploy/sweep_relay.hpp"

int main(int argc, char** argv) {
  // `sluice run` under an MPI launcher (mpirun/srun) execs sluice-node with
  // its own arguments; the relay calls MPI_Init and starts `sluice run` again
  // as its child (scenarios/runner/sweep_relay_wire.hpp). Not a CLI11
  // command: the arguments are `sluice run`'s, passed on untouched.
  if (argc >= 2 && std::string_view(argv[1]) == "run") return sluice::emulate::run_sweep_relay(argc, argv);
  CLI::App app{"sluice-node: multi-process deployment of sluice (node, mount)"};
  app.require_subcommand(1);
  sluice::cli::CommandExit exit;
  sluice::emulate::add_emulate_commands(app, exit);
  return sluice::cli::run_command_line(app, exit, argc, argv);
}
