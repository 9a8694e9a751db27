// sluice: the command-line front end. Each command is a file of
// scenarios/cli/ that adds its options and runs through cli::on_parsed
// (command.hpp): run, describe, bound, topo, backends (with --version),
// compare, report, fidelity, import, calibrate, mount, umount, netns-hosts
// and the hidden node and emulate (--cleanup-stale alone).
//
// Exit codes: 0 ok, 1 the command (or a run) failed, 2 usage error, bad input
// or an error in the script; `run` stopped by SIGINT/SIGTERM: 130/143, after
// writing the points that finished (results.json "complete": false).
#include <fmt/core.h>

#include <algorithm>
#include <string_view>

#include "scenarios/cli/analysis_commands.hpp"
#include "scenarios/cli/backends_command.hpp"
#include "scenarios/cli/bound_command.hpp"
#include "scenarios/cli/calibrate_command.hpp"
#include "scenarios/cli/command.hpp"
#include "scenarios/cli/describe_command.hpp"
#include "scenarios/cli/emulate_command.hpp"
#include "scenarios/cli/netns_hosts.hpp"
#include "scenarios/cli/run_command.hpp"
#include "scenarios/cli/topo_command.hpp"

int main(int argc, char** argv) {
  using namespace sluice;
  // Before any parsing: the MPI paths exec sluice-node, and a launch agent's
  // words are the launcher's, not options (netns_hosts.hpp).
  if (argc >= 2 && std::string_view(argv[1]) == "node" &&
      std::any_of(argv + 2, argv + argc, [](const char* a) { return std::string_view(a) == "--mpi"; })) {
    return cli::exec_mpi_node(argv, "sluice node --mpi");
  }
  if (cli::run_under_launcher(argc, argv)) return cli::exec_mpi_node(argv, "sluice run (under an MPI launcher)");
  if (argc >= 2 && std::string_view(argv[1]) == "netns-exec") return emulate::netns_exec(argc - 2, argv + 2);
  // --version by hand: CLI11's set_version_flag trips GCC 12's -Wnull-dereference (an error in CI).
  if (argc == 2 && std::string_view(argv[1]) == "--version") {
    fmt::print("{}\n", cli::version_text());
    return cli::k_exit_ok;
  }
  CLI::App app{"sluice: a testbed for feeding GPUs from parallel storage"};
  app.footer("sluice --version: the release, commit, build type and optional pieces of this build");
  app.require_subcommand(1);
  cli::CommandExit exit;
  cli::add_topo_command(app, exit);
  cli::add_backends_command(app, exit);
  cli::add_run_command(app, exit);
  cli::add_describe_command(app, exit);
  cli::add_bound_command(app, exit);
  emulate::add_emulate_commands(app, exit);
  emulate::add_netns_hosts_command(app, exit);
  cli::add_analysis_commands(app, exit);
  cli::add_calibrate_command(app, exit);
  return cli::run_command_line(app, exit, argc, argv);
}
