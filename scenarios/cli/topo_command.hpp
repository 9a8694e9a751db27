// sluice topo show MACHINE|CAPTURE|SCRIPT.lua [--node N] [--out DIR] [--machine M] [--set k=v]...
// sluice topo import CAPTURE [--out DIR]
//   a machine model: devices, path classes, the NIC ranks and the scheduler's
//   choices (scenarios/lua/machine_report.hpp), from a built-in machine, an
//   `nvidia-smi topo -m` or `lstopo --of xml` capture, or a script's machines.
#pragma once

#include "scenarios/cli/command.hpp"

namespace sluice::cli {

void add_topo_command(CLI::App& app, CommandExit& exit);

}  // namespace sluice::cli
