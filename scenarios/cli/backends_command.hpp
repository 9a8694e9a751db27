// sluice backends: the transports, storage backends and optional pieces of
// this build, and why a missing one is; sluice --version: the release, the
// commit, the build type and the optional pieces.
#pragma once

#include "scenarios/cli/command.hpp"

namespace sluice::cli {

void add_backends_command(CLI::App& app, CommandExit& exit);

// `sluice --version`'s text.
std::string version_text();

}  // namespace sluice::cli
