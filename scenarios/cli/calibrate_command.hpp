// `sluice calibrate` on the command line (scenarios/calibrate/calibrate.hpp
// runs it): its options, the help text of its three modes, and Ctrl-C
// removing an emulated cluster.
#pragma once

#include <CLI/CLI.hpp>

namespace sluice::cli {

// Adds `calibrate` to `app`; its callback ends the process with the exit code.
void add_calibrate_command(CLI::App& app);

}  // namespace sluice::cli
