// sluice-node: the `emulate` and `node` commands of sluice alone, for tests
// and benchmarks that must not depend on the full front end.
// GCC 12 at -O2 reports a false -Wnull-dereference inside std::string moves
// that CLI::detail::split inlines here (as with GCC bug 105562's friends).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <CLI/CLI.hpp>
#pragma GCC diagnostic pop

#include "scenarios/emulate/emulate_command.hpp"

int main(int argc, char** argv) {
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
