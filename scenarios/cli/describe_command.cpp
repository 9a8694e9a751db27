#include "scenarios/cli/describe_command.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "scenarios/lua/lua_api.hpp"
#include "scenarios/lua/lua_script.hpp"

namespace sluice::cli {
namespace {

// `sluice describe --api`: docs/lua-api.md, generated from the module's field tables.
int describe_api_command() {
  fmt::print("{}", scenario::lua_api_markdown());
  return k_exit_ok;
}

int describe_command(const std::string& script) {
  if (script.empty()) throw UsageError("describe: give a script (.lua), or --api for the Lua module's reference");
  Result<std::vector<scenario::ParamDecl>> params = scenario::describe_script(script);
  if (!params.ok()) throw_script_status(params.status());
  const std::string name = std::filesystem::path(script).stem().string();
  if (params->empty()) {
    fmt::print("{} declares no parameters.\n", name);
    return k_exit_ok;
  }
  fmt::print("Parameters of {} (override with --set name=value):\n", name);
  std::size_t width = 4;
  for (const auto& p : *params) width = std::max(width, p.name.size());
  fmt::print("  {:<{}}  {:<8} {:<16} {}\n", "name", width, "type", "default", "description");
  for (const auto& p : *params) {
    fmt::print("  {:<{}}  {:<8} {:<16} {}\n", p.name, width, p.type, p.default_text, p.description);
  }
  return k_exit_ok;
}

}  // namespace

void add_describe_command(CLI::App& app, CommandExit& exit) {
  struct DescribeArgs {
    std::string script;
    bool api = false;
  };
  auto args = std::make_shared<DescribeArgs>();
  auto* cmd = app.add_subcommand("describe", "list the parameters a scenario script declares, or the Lua API (--api)");
  cmd->add_option("script", args->script, "the scenario script (.lua)")->check(CLI::ExistingFile);
  cmd->add_flag("--api", args->api, "print the reference of the sluice Lua module (docs/lua-api.md is this output)");
  on_parsed(cmd, exit, [args] { return args->api ? describe_api_command() : describe_command(args->script); });
}

}  // namespace sluice::cli
