// compare, report, fidelity and import on the command line (analysis/ runs
// them: analysis_command.hpp, fidelity.hpp, import_command.hpp).
#pragma once

#include "scenarios/cli/command.hpp"

namespace sluice::cli {

// Adds compare, report, fidelity and import to `app` (calibrate:
// calibrate_command.hpp); their exit codes go to `exit`.
void add_analysis_commands(CLI::App& app, CommandExit& exit);

}  // namespace sluice::cli
