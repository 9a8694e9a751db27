// compare, report, fidelity and import on the command line (analysis/ runs
// them: analysis_command.hpp, fidelity.hpp, import_command.hpp).
#pragma once

#include <CLI/CLI.hpp>

namespace sluice::cli {

// Adds compare, report, fidelity and import to `app` (calibrate:
// calibrate_command.hpp); each callback ends the process with its exit code.
void add_analysis_commands(CLI::App& app);

}  // namespace sluice::cli
