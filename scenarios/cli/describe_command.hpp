// sluice describe SCRIPT.lua: the parameters a script declares (sl.params);
// sluice describe --api: the reference of the sluice Lua module (docs/lua-api.md).
#pragma once

#include "scenarios/cli/command.hpp"

namespace sluice::cli {

void add_describe_command(CLI::App& app, CommandExit& exit);

}  // namespace sluice::cli
