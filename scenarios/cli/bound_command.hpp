// sluice bound SCRIPT.lua [--set k=v]...: each point's bulk phases with the
// hardware's ceiling and the resource that binds it (scenarios/runner/point_bound.hpp).
#pragma once

#include "scenarios/cli/command.hpp"

namespace sluice::cli {

void add_bound_command(CLI::App& app, CommandExit& exit);

}  // namespace sluice::cli
