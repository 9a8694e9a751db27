// `sluice calibrate` on the command line (scenarios/calibrate/calibrate.hpp
// runs it): its options, the help text of its three modes, and Ctrl-C
// removing an emulated cluster.
#pragma once

#include "scenarios/cli/command.hpp"

namespace sluice::cli {

// Adds `calibrate` to `app`; its exit code goes to `exit`.
void add_calibrate_command(CLI::App& app, CommandExit& exit);

}  // namespace sluice::cli
