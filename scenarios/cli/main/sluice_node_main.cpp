// sluice-node: the `emulate` and `node` commands of sluice alone, for tests
// and benchmarks that must not depend on the full front end.
// GCC 12 at -O2 reports a false -Wnull-dereference inside std::string moves
// that CLI::detail::split inlines here (as with GCC bug 105562's friends).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <CLI/CLI.hpp>
#pragma GCC diagnostic pop

#include <string_view>

#include "scenarios/cli/emulate_command.hpp"
#include "scenarios/deploy/sweep_relay.hpp"

int main(int argc, char** argv) {
  // `sluice run` under an MPI launcher (mpirun/srun) execs sluice-node with
  // its own arguments; the relay calls MPI_Init and starts `sluice run` again
  // as its child (scenarios/runner/sweep_relay_wire.hpp). Not a CLI11
  // command: the arguments are `sluice run`'s, passed on untouched.
  if (argc >= 2 && std::string_view(argv[1]) == "run") return sluice::emulate::run_sweep_relay(argc, argv);
  CLI::App app{"sluice-node: multi-process deployment of sluice (emulate, node)"};
  app.require_subcommand(1);
  sluice::emulate::add_emulate_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  return 0;
}
