#include "scenarios/lua/lua_script.hpp"

#include <filesystem>
#include <iostream>
#include <sstream>

#include "scenarios/lua/lua_sandbox.hpp"
#include "scenarios/lua/sluice_module.hpp"

namespace sluice::scenario {
namespace {

struct ScriptRun {
  ScriptContext ctx;
  Status status;
};

void run_in_sandbox(const std::string& path, const ScriptOptions& options, bool describe, std::ostream& out,
                    ScriptRun& run) {
  ScriptContext& ctx = run.ctx;
  ctx.options = &options;
  ctx.path = path;
  const std::filesystem::path p(path);
  ctx.dir = p.parent_path().string();
  ctx.scenario = p.stem().string();
  ctx.describe = describe;
  ctx.out = &out;
  Result<std::string> text = read_script_file(path);
  if (!text.ok()) {
    run.status = text.status();
    return;
  }
  LuaSandbox sandbox(options.memory_limit_bytes, options.instruction_limit, out, ctx.dir);
  if (sandbox.state() != nullptr) open_sluice_module(sandbox.state(), &ctx);
  Status status = sandbox.run(path, *text);
  if (ctx.run_failure) {
    run.status = *ctx.run_failure;
    return;
  }
  if (describe && ctx.stopped) {
    run.status = ok_status();
    return;
  }
  if (!status.ok()) {
    run.status = status;
    return;
  }
  if (const std::string bad = check_sets(ctx); !bad.empty()) {
    const std::string where = ctx.params_where.empty() ? path + ":1" : ctx.params_where;
    run.status = error(StatusCode::invalid_argument, where + ": " + bad);
    return;
  }
  run.status = ok_status();
}

}  // namespace

Result<ScriptOutcome> run_script(const std::string& path, const ScriptOptions& options) {
  ScriptRun run;
  std::ostream& out = options.out != nullptr ? *options.out : std::cout;
  run_in_sandbox(path, options, false, out, run);
  if (!run.status.ok()) return run.status;
  ScriptOutcome outcome;
  outcome.scenario = run.ctx.scenario;
  outcome.params = std::move(run.ctx.params);
  outcome.param_values = std::move(run.ctx.param_values);
  outcome.results = std::move(run.ctx.results);
  outcome.headlines = std::move(run.ctx.headlines);
  outcome.mlperf = std::move(run.ctx.mlperf);
  outcome.claims = std::move(run.ctx.claims);
  return outcome;
}

Result<std::vector<ParamDecl>> describe_script(const std::string& path) {
  ScriptOptions options;
  std::ostringstream discard;
  ScriptRun run;
  run_in_sandbox(path, options, true, discard, run);
  if (!run.status.ok()) return run.status;
  return std::move(run.ctx.params);
}

Result<std::vector<ScriptMachine>> script_machines(const std::string& path,
                                                   const std::map<std::string, std::string>& sets) {
  ScriptOptions options;
  options.sets = sets;
  std::ostringstream discard;
  ScriptRun run;
  run_in_sandbox(path, options, true, discard, run);
  if (!run.status.ok()) return run.status;
  return std::move(run.ctx.machines);
}

}  // namespace sluice::scenario
