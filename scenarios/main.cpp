// sluice: the command-line front end.
//
// Commands today: `topo show|import` (the machine model, its path classes,
// the nvidia-fs-style NIC ranks and core/sched's choices) and `backends`
// (what this build has). `run`, `describe`, `emulate`, `compare` and
// `calibrate` arrive with the scenario, SimEnv, HwEnv and analysis issues.
//
// Exit codes: 0 ok, 1 the command failed, 2 usage error or bad input.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>

#include "core/sched/data_path.hpp"
#include "core/sched/rail_selector.hpp"
#include "core/topology/machine_builders.hpp"
#include "core/topology/nvidia_smi_import.hpp"
#include "core/topology/path_class.hpp"
#include "core/topology/peer_rank.hpp"
#include "core/topology/topology_text.hpp"
#include "hw_backends/hwloc/hwloc_import.hpp"
#include "hw_backends/storage_backend.hpp"
#include "transports/transport.hpp"
#include "scenarios/build_probes.hpp"

namespace {

using namespace sluice;

constexpr int k_exit_ok = 0;
constexpr int k_exit_failed = 1;
constexpr int k_exit_usage = 2;
constexpr std::uintmax_t k_max_input_file_bytes = 64ULL << 20;

// A failure the user caused (bad name, bad file): exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

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

std::string read_file(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw UsageError(path + ": cannot read: " + ec.message());
  if (size > k_max_input_file_bytes) {
    throw UsageError(path + ": " + std::to_string(size) + " bytes is larger than the " +
                     std::to_string(k_max_input_file_bytes) + "-byte input limit");
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
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
  const std::string text = read_file(what);
  Result<topo::Topology> t = text.find("<topology") != std::string::npos ? hw::import_hwloc_xml(text)
                                                                          : topo::import_nvidia_smi_topo(text);
  if (!t.ok()) throw UsageError(what + ": " + t.status().to_string());
  return std::move(t).value();
}

std::string decision_text(const Result<sched::PathDecision>& d) {
  if (!d.ok()) return "unplannable: " + d.status().to_string();
  return std::string(sched::to_string(d->path)) + " (" + d->reason + ")";
}

// Per GPU: NICs by nvidia-fs rank, and what the scheduler does for a read into that GPU.
nlohmann::json gpu_choices(const topo::Topology& t, NodeId node, std::string& text) {
  nlohmann::json gpus = nlohmann::json::array();
  const std::uint32_t gpu_count = t.count(node, topo::VertexKind::gpu);
  if (gpu_count == 0 || t.count(node, topo::VertexKind::nic) == 0) {
    text += "\nNo GPU or no NIC on this machine: no GPU-direct scheduling to show.\n";
    return gpus;
  }
  Result<sched::RailSelector> rails = sched::RailSelector::create(t, node);
  if (!rails.ok()) throw std::runtime_error("rail selector: " + rails.status().to_string());
  text += "\nScheduler choices for a read into each GPU (core/sched):\n";
  text += fmt::format("{:<8} {:<34} {:<10} {}\n", "GPU", "NICs by nvidia-fs rank (class)", "chosen NIC",
                      "path with GPU-direct capable transport | without");
  for (std::uint32_t g = 0; g < gpu_count; ++g) {
    const topo::VertexId gpu = t.device(node, topo::VertexKind::gpu, g).value();
    Result<std::vector<topo::RankedPeer>> ranked = topo::rank_peers(t, gpu, topo::VertexKind::nic);
    if (!ranked.ok()) throw std::runtime_error("ranking NICs: " + ranked.status().to_string());
    std::string ranks;
    nlohmann::json nic_rows = nlohmann::json::array();
    for (const auto& peer : *ranked) {
      const std::string cls(topo::to_string(peer.rank.path_class));
      ranks += fmt::format("{}{}({})", ranks.empty() ? "" : " ", t.vertex(peer.peer).name, cls);
      nic_rows.push_back({{"nic", t.vertex(peer.peer).name}, {"index", peer.index}, {"path_class", cls},
                          {"pci_distance", peer.rank.pci_distance}, {"cross_numa", peer.rank.cross_numa},
                          {"rank_key", peer.rank.key}});
    }
    Result<std::uint32_t> nic = rails->choose(sched::MemoryPlace::gpu(g));
    if (!nic.ok()) throw std::runtime_error("choosing a NIC: " + nic.status().to_string());
    rails->release(*nic).ignore();  // a what-if: give the connection back at once
    const auto direct = sched::decide_path(t, node, sched::MemoryPlace::gpu(g), *nic, {true});
    const auto plain = sched::decide_path(t, node, sched::MemoryPlace::gpu(g), *nic, {false});
    const std::string nic_name = t.vertex(t.device(node, topo::VertexKind::nic, *nic).value()).name;
    text += fmt::format("{:<8} {:<34} {:<10} {} | {}\n", t.vertex(gpu).name, ranks, nic_name, decision_text(direct),
                        decision_text(plain));
    gpus.push_back({{"gpu", t.vertex(gpu).name},
                    {"nics_by_rank", nic_rows},
                    {"chosen_nic", nic_name},
                    {"path_gpu_direct_capable", direct.ok() ? std::string(sched::to_string(direct->path)) : "error"},
                    {"reason_gpu_direct_capable", direct.ok() ? direct->reason : direct.status().to_string()},
                    {"path_without_gpu_direct", plain.ok() ? std::string(sched::to_string(plain->path)) : "error"},
                    {"reason_without_gpu_direct", plain.ok() ? plain->reason : plain.status().to_string()}});
  }
  return gpus;
}

int topo_show(const std::string& what, NodeId node, const std::string& out_dir) {
  const topo::Topology t = load_machine(what);
  if (node >= t.node_count()) {
    throw UsageError("node " + std::to_string(node) + " does not exist (the topology has " +
                     std::to_string(t.node_count()) + ")");
  }
  if (Status s = t.validate(); !s.ok()) throw UsageError(what + ": " + s.to_string());
  Result<std::string> rendered = topo::to_text(t, node);
  if (!rendered.ok()) throw std::runtime_error(rendered.status().to_string());
  std::string text = "Machine: " + what + "\n" + *rendered;
  nlohmann::json doc;
  doc["machine"] = what;
  doc["node"] = node;
  doc["vertices"] = t.vertex_count();
  doc["links"] = t.link_count();
  doc["gpus"] = gpu_choices(t, node, text);
  fmt::print("{}", text);
  if (!out_dir.empty()) {
    std::filesystem::create_directories(out_dir);
    std::ofstream(std::filesystem::path(out_dir) / "topology.txt") << text;
    std::ofstream(std::filesystem::path(out_dir) / "topology.json") << doc.dump(2) << "\n";
    fmt::print("\nwrote {0}/topology.txt and {0}/topology.json\n", out_dir);
  }
  return k_exit_ok;
}

int backends() {
  fmt::print("Transports:\n");
  for (const auto& t : transport::list_transports()) {
    fmt::print("  {:<10} {}\n", t.name, t.available ? t.capabilities.to_string() : "unavailable: " + t.why_unavailable);
  }
  fmt::print("Storage backends:\n");
  for (const auto& b : hw::list_storage_backends()) {
    fmt::print("  {:<10} {}\n", b.name,
               b.available ? fmt::format("direct I/O {}; registered buffers {}; queue depth up to {}",
                                         b.capabilities.direct_io ? "yes" : "no",
                                         b.capabilities.registered_buffers ? "yes" : "no", b.capabilities.max_queue_depth)
                           : "unavailable: " + b.why_unavailable);
  }
  fmt::print("Optional pieces of this build:\n");
  for (const auto& row : build::k_probes) {
    fmt::print("  {:<10} {}\n", row.piece, row.available ? "found" : std::string("missing: ") + row.why_unavailable);
  }
  fmt::print("Worlds: TestEnv (tests), HwEnv (hw_backends; not yet reachable from the CLI), "
             "SimEnv (sim/, when SimGrid is found; not yet reachable from the CLI).\n");
  return k_exit_ok;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"sluice: a testbed for feeding GPUs from parallel storage"};
  app.require_subcommand(1);
  auto* topo_cmd = app.add_subcommand("topo", "machine models: show a built-in machine or import a capture");
  topo_cmd->require_subcommand(1);
  std::string what, out_dir;
  NodeId node = 0;
  auto* show = topo_cmd->add_subcommand("show", "devices, path classes, NIC ranks and scheduler choices");
  show->add_option("machine", what, "a built-in machine name or a capture file")->required();
  show->add_option("--node", node, "which node of a cluster");
  show->add_option("--out", out_dir, "also write topology.txt and topology.json here");
  auto* import = topo_cmd->add_subcommand("import", "read `nvidia-smi topo -m` text or `lstopo --of xml`");
  import->add_option("file", what, "the capture")->required()->check(CLI::ExistingFile);
  import->add_option("--out", out_dir, "also write topology.txt and topology.json here");
  auto* backends_cmd = app.add_subcommand("backends", "optional pieces of this build and why missing ones are");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? k_exit_ok : k_exit_usage;
  }
  try {
    if (backends_cmd->parsed()) return backends();
    return topo_show(what, node, out_dir);
  } catch (const UsageError& e) {
    fmt::print(stderr, "sluice: {}\n", e.what());
    return k_exit_usage;
  } catch (const std::exception& e) {
    fmt::print(stderr, "sluice: {}\n", e.what());
    return k_exit_failed;
  }
}
