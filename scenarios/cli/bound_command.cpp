#include "scenarios/cli/bound_command.hpp"

#include <fmt/core.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "scenarios/lua/lua_script.hpp"
#include "scenarios/runner/point_bound.hpp"
#include "scenarios/runner/runner.hpp"

namespace sluice::cli {
namespace {

// `sluice bound SCRIPT`: each point's bulk phases with the hardware's ceiling
// and what binds it (scenarios/runner/point_bound.hpp). The script runs with
// an sl.run that computes bounds instead of running points, so its later
// sl.run calls are seen when they do not depend on earlier results.
int bound_command(const std::string& script, const std::vector<std::string>& sets) {
  scenario::ScriptOptions options;
  options.sets = parse_sets(sets);
  std::ostringstream discard;
  options.out = &discard;
  std::size_t points = 0;
  options.run = [&points](const std::vector<scenario::ScenarioSpec>& specs,
                          scenario::Backend) -> Result<std::vector<scenario::RunResult>> {
    std::vector<scenario::RunResult> results;
    for (const scenario::ScenarioSpec& spec : specs) {
      ++points;
      std::string params;
      for (const auto& [k, v] : spec.params) params += fmt::format("{}{}={}", params.empty() ? "" : " ", k, v);
      fmt::print("point {}{}: {}\n", points, spec.label.empty() ? "" : " (" + spec.label + ")", params);
      Result<std::vector<scenario::PhaseBound>> rows = scenario::point_bounds(spec);
      if (!rows.ok()) return rows.status();
      for (const scenario::PhaseBound& b : *rows) {
        if (b.computed) {
          fmt::print("  {} {}: {:.2f} GB/s, bound by {}\n", b.workload, b.phase, b.bound_bytes_per_s / 1e9,
                     b.binding_resource);
        } else {
          fmt::print("  {} {}: {}\n", b.workload, b.phase, b.binding_resource);
        }
      }
      scenario::RunResult r;
      r.spec = spec;
      r.error = "not run: sluice bound computes bounds only";
      results.push_back(std::move(r));
    }
    return results;
  };
  Result<scenario::ScriptOutcome> outcome = scenario::run_script(script, options);
  if (!outcome.ok()) {
    if (points == 0) throw_script_status(outcome.status());
    fmt::print("(the script stopped after {} points: {})\n", points, outcome.status().message());
  }
  if (points == 0) fmt::print("{} runs no point.\n", script);
  return k_exit_ok;
}

struct BoundArgs {
  std::string script;
  std::vector<std::string> sets;
};

}  // namespace

void add_bound_command(CLI::App& app, CommandExit& exit) {
  auto args = std::make_shared<BoundArgs>();
  auto* cmd = app.add_subcommand(
      "bound", "each point's bulk phases with the hardware's ceiling and the resource that binds it (max flow)");
  cmd->add_option("script", args->script, "the scenario script (.lua)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--set", args->sets, "override a declared parameter: name=value (repeatable)");
  on_parsed(cmd, exit, [args] { return bound_command(args->script, args->sets); });
}

}  // namespace sluice::cli
