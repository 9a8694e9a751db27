#include "scenarios/cli/topo_command.hpp"

#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/topology/machine_builders.hpp"
#include "core/topology/nvidia_smi_import.hpp"
#include "hw_backends/hwloc/hwloc_import.hpp"
#include "scenarios/lua/lua_script.hpp"
#include "scenarios/lua/machine_report.hpp"

namespace sluice::cli {
namespace {

const std::map<std::string, std::function<Result<topo::Topology>()>>& machine_catalog() {
  static const std::map<std::string, std::function<Result<topo::Topology>()>> catalog{
      {"dgx_a100", [] { return topo::dgx_a100(); }},
      {"azure_nd40rs_v2", [] { return topo::azure_nd40rs_v2(); }},
      {"critical_io_gpu_host", [] { return topo::critical_io_gpu_host(); }},
      {"critical_io_recorder", [] { return topo::critical_io_recorder(); }},
      {"dgx2_like", [] { return topo::dgx2_like(); }},
  };
  return catalog;
}

topo::Topology load_machine(const std::string& what) {
  const auto& catalog = machine_catalog();
  if (auto it = catalog.find(what); it != catalog.end()) {
    Result<topo::Topology> t = it->second();
    if (!t.ok()) throw std::runtime_error("building " + what + ": " + t.status().to_string());
    return std::move(t).value();
  }
  if (!std::filesystem::exists(what)) {
    std::string names;
    for (const auto& [name, fn] : catalog) names += (names.empty() ? "" : ", ") + name;
    throw UsageError("\"" + what + "\" is neither a machine (" + names + ") nor a file");
  }
  const std::string text = read_input_file(what);
  Result<topo::Topology> t =
      text.find("<topology") != std::string::npos ? hw::import_hwloc_xml(text) : topo::import_nvidia_smi_topo(text);
  if (!t.ok()) throw UsageError(what + ": " + t.status().to_string());
  return std::move(t).value();
}

struct TopoArgs {
  std::string what;
  NodeId node = 0;
  std::string out_dir;
  std::string machine;            // with a script: which of its machines (type or 1-based index)
  std::vector<std::string> sets;  // with a script: --set name=value
};

// The machines `topo show` reports on: a built-in, a capture file, or those a script builds.
std::vector<std::pair<std::string, std::shared_ptr<const topo::Topology>>> machines_to_show(const TopoArgs& args) {
  std::vector<std::pair<std::string, std::shared_ptr<const topo::Topology>>> shown;
  if (!std::filesystem::path(args.what).has_extension() || std::filesystem::path(args.what).extension() != ".lua") {
    if (!args.machine.empty()) throw UsageError("--machine: only with a script (a .lua file)");
    shown.emplace_back(args.what, std::make_shared<const topo::Topology>(load_machine(args.what)));
    return shown;
  }
  Result<std::vector<scenario::ScriptMachine>> built = scenario::script_machines(args.what, parse_sets(args.sets));
  if (!built.ok()) throw UsageError(built.status().message());
  if (built->empty()) throw UsageError(args.what + ": the script builds no machine before its first sl.run");
  std::string all;
  for (std::size_t i = 0; i < built->size(); ++i) {
    const scenario::ScriptMachine& m = (*built)[i];
    all += fmt::format("{}#{} {} ({})", all.empty() ? "" : ", ", i + 1, m.type, m.where);
    if (args.machine.empty() || args.machine == m.type || args.machine == std::to_string(i + 1)) {
      shown.emplace_back(fmt::format("#{} {} ({})", i + 1, m.type, m.where), m.topology);
    }
  }
  if (shown.empty())
    throw UsageError("--machine " + args.machine + ": the script builds no such machine (it builds " + all + ")");
  return shown;
}

int topo_show(const TopoArgs& args) {
  nlohmann::json docs = nlohmann::json::array();
  std::string text;
  for (const auto& [name, t] : machines_to_show(args)) {
    if (args.node >= t->node_count()) {
      throw UsageError("node " + std::to_string(args.node) + " does not exist (the topology has " +
                       std::to_string(t->node_count()) + ")");
    }
    if (Status s = t->validate(); !s.ok()) throw UsageError(name + ": " + s.to_string());
    scenario::MachineReport report = scenario::machine_report(*t, args.node, name);
    text += (text.empty() ? "" : "\n") + report.text;
    docs.push_back(std::move(report.doc));
  }
  fmt::print("{}", text);
  if (!args.out_dir.empty()) {
    std::filesystem::create_directories(args.out_dir);
    std::ofstream(std::filesystem::path(args.out_dir) / "topology.txt") << text;
    std::ofstream(std::filesystem::path(args.out_dir) / "topology.json")
        << (docs.size() == 1 ? docs[0] : nlohmann::json{{"machines", docs}}).dump(2) << "\n";
    fmt::print("\nwrote {0}/topology.txt and {0}/topology.json\n", args.out_dir);
  }
  return k_exit_ok;
}

}  // namespace

void add_topo_command(CLI::App& app, CommandExit& exit) {
  auto* topo_cmd = app.add_subcommand("topo", "machine models: show a built-in machine or import a capture");
  topo_cmd->require_subcommand(1);
  auto args = std::make_shared<TopoArgs>();
  auto* show = topo_cmd->add_subcommand("show", "devices, path classes, NIC ranks and scheduler choices");
  show->add_option("machine", args->what, "a built-in machine name, a capture file or a Lua script (.lua)")->required();
  show->add_option("--node", args->node, "which node of a cluster");
  show->add_option("--out", args->out_dir, "also write topology.txt and topology.json here");
  show->add_option("--machine", args->machine,
                   "with a script: only its machines of this type (generic, dgx_a100, ...) or this number (1, 2, ...)");
  show->add_option("--set", args->sets, "with a script: override a declared parameter: name=value (repeatable)");
  auto* import = topo_cmd->add_subcommand("import", "read `nvidia-smi topo -m` text or `lstopo --of xml`");
  import->add_option("file", args->what, "the capture")->required()->check(CLI::ExistingFile);
  import->add_option("--out", args->out_dir, "also write topology.txt and topology.json here");
  on_parsed(show, exit, [args] { return topo_show(*args); });
  on_parsed(import, exit, [args] { return topo_show(*args); });
}

}  // namespace sluice::cli
