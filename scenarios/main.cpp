// sluice: the command-line front end.
//
// Commands today: `run SCRIPT` (a Lua scenario: its runs go to the runner,
// scenarios/runner, and their results to OUT/results.json and results.csv),
// `describe SCRIPT` (the parameters a script declares), `topo show|import`
// (the machine model, its path classes, the nvidia-fs-style NIC ranks and
// core/sched's choices) and `backends` (what this build has); `emulate`,
// `compare` and `report` come from analysis, `calibrate` from
// scenarios/calibrate (`calibrate SCRIPT --backend emulate` runs the issue 8
// loop: scenarios/calibrate/script_calibration.hpp).
//
// Exit codes: 0 ok, 1 the command (or a run) failed, 2 usage error, bad input
// or an error in the script.
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
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
#include "scenarios/lua/lua_script.hpp"
#include "scenarios/runner/results_writer.hpp"
#include "scenarios/runner/runner.hpp"
// GCC 12 reports a false -Wnull-dereference inside CLI11 through these headers.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include "analysis/analysis_command.hpp"
#include "analysis/plotter.hpp"
#include "scenarios/emulate/emulate_command.hpp"
#include "scenarios/emulate/emulated_point_run.hpp"
#include "hw_backends/cuda/cuda_device.hpp"
#include "hw_backends/cuda/cuda_gpu_memory.hpp"
#include "scenarios/calibrate/calibrate_command.hpp"
#pragma GCC diagnostic pop

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
  Result<topo::Topology> t =
      text.find("<topology") != std::string::npos ? hw::import_hwloc_xml(text) : topo::import_nvidia_smi_topo(text);
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
      nic_rows.push_back({{"nic", t.vertex(peer.peer).name},
                          {"index", peer.index},
                          {"path_class", cls},
                          {"pci_distance", peer.rank.pci_distance},
                          {"cross_numa", peer.rank.cross_numa},
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
               b.available
                   ? fmt::format("direct I/O {}; registered buffers {}; queue depth up to {}",
                                 b.capabilities.direct_io ? "yes" : "no",
                                 b.capabilities.registered_buffers ? "yes" : "no", b.capabilities.max_queue_depth)
                   : "unavailable: " + b.why_unavailable);
  }
  fmt::print("Optional pieces of this build:\n");
  for (const auto& row : build::k_probes) {
    fmt::print("  {:<10} {}\n", row.piece, row.available ? "found" : std::string("missing: ") + row.why_unavailable);
  }
  fmt::print(
      "Worlds: TestEnv (tests), SimEnv (sim/, when SimGrid is found: `sluice run --backend sim`), "
      "HwEnv (hw_backends: `sluice run --backend hw`, one process; `--backend emulate`, netns per node).\n");
  return k_exit_ok;
}

// ---- run / describe ----

struct RunArgs {
  std::string script;
  std::string backend;  // "" = the script's choice
  std::vector<std::string> sets;
  std::optional<std::uint64_t> seed;
  std::string out_dir = "out";
  std::uint32_t jobs = 0;
  double point_timeout_s = scenario::k_default_point_timeout_s;
  bool check_claims = false;  // exit 1 when a claim of the script does not hold
  bool report = false;        // also write OUT/report.md with its plots (sluice report)
  std::string report_phase = "read";
};

// A script error ("file:line: ...") is the user's: exit 2; a failed run: exit 1.
[[noreturn]] void throw_script_status(const Status& s) {
  if (s.code() == StatusCode::invalid_argument) throw UsageError(s.message());
  throw std::runtime_error(s.to_string());
}

// One progress line on stderr, rewritten in place; only on a terminal and
// only once a call to the runner has taken a second.
class ProgressLine {
 public:
  ProgressLine() : enabled_(::isatty(STDERR_FILENO) == 1) {}
  ~ProgressLine() { clear(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void update(const scenario::RunnerProgress& p) {
    if (!enabled_ || p.wall_s < k_quiet_s) return;
    fmt::print(stderr, "\r\033[Ksluice: {}/{} points done{}, {} running, {:.1f} s", p.done, p.points,
               p.failed > 0 ? fmt::format(" ({} failed)", p.failed) : "", p.running, p.wall_s);
    std::fflush(stderr);
    shown_ = true;
  }
  void clear() {
    if (!shown_) return;
    fmt::print(stderr, "\r\033[K");
    std::fflush(stderr);
    shown_ = false;
  }

 private:
  static constexpr double k_quiet_s = 1.0;
  bool enabled_;
  bool shown_ = false;
};

int run_command(const RunArgs& args) {
  scenario::ScriptOptions options;
  for (const std::string& set : args.sets) {
    const std::size_t eq = set.find('=');
    if (eq == std::string::npos || eq == 0) throw UsageError("--set " + set + ": expected name=value");
    options.sets[set.substr(0, eq)] = set.substr(eq + 1);
  }
  options.seed = args.seed;
  if (!args.backend.empty()) {
    Result<scenario::Backend> b = scenario::parse_backend(args.backend);
    if (!b.ok()) throw UsageError("--backend: " + b.status().message());
    options.backend = *b;
  }
  options.out_dir = args.out_dir;
  ProgressLine progress;
  scenario::RunnerOptions runner;
  runner.jobs = args.jobs;
  runner.point_timeout_s = args.point_timeout_s;
  runner.progress = [&progress](const scenario::RunnerProgress& p) { progress.update(p); };
  options.run = [&](const std::vector<scenario::ScenarioSpec>& points, scenario::Backend backend) {
    scenario::RunnerOptions call = runner;
    // Hardware runs are measurements: one at a time unless asked otherwise.
    if (backend == scenario::Backend::hw && args.jobs == 0) call.jobs = 1;
    // GPU memory for hardware runs (hw_backends/cuda), handed to the world
    // of each point (HwWorldConfig::gpu_memory); CUDA is first touched in the
    // child that runs the point, since it does not survive a fork after it
    // was initialised. Without a device (or a CUDA build) a workload's GPU
    // buffer fails to allocate with the reason, and the run says so.
    if (backend == scenario::Backend::hw) {
      call.hw.gpu_memory = sluice::hw::cuda::gpu_memory_ops();
      call.run_point = [hw = call.hw](const scenario::ScenarioSpec& spec, scenario::Backend b) {
        scenario::RunnerOptions point;
        point.hw = hw;
        scenario::RunResult r = scenario::run_point(spec, b, point);
        if (const Status gpu = sluice::hw::cuda::cuda_available(); !gpu.ok()) {
          r.log_tail.push_back("GPU memory: " + gpu.message());
        }
        return r;
      };
    }
    // Emulated runs: the netns cluster (scenarios/emulate/emulated_point_run.hpp), one at a time.
    if (backend == scenario::Backend::emulate) {
      call.jobs = 1;
      call.run_point = [](const scenario::ScenarioSpec& spec, scenario::Backend) {
        return sluice::emulate::EmulatedPointRun::run(spec);
      };
    }
    Result<std::vector<scenario::RunResult>> r = scenario::run_points(points, backend, call);
    progress.clear();
    return r;
  };
  options.draw_plot = [](const scenario::ScriptPlot& plot) -> Result<std::vector<std::string>> {
    analysis::PlotSpec spec;
    spec.title = plot.title;
    spec.x_label = plot.x_label;
    spec.y_label = plot.y_label;
    spec.log_x = plot.log_x;
    for (const auto& s : plot.series) spec.series.push_back(analysis::PlotSeries{s.title, s.x, s.y, {}, {}});
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(plot.out_base).parent_path(), ec);
    return analysis::render_plot(spec, plot.out_base);
  };
  Result<scenario::ScriptOutcome> outcome = scenario::run_script(args.script, options);
  progress.clear();
  if (!outcome.ok()) throw_script_status(outcome.status());
  const std::vector<scenario::RunResult>& results = outcome->results;
  const scenario::ScriptFindings findings{outcome->headlines, outcome->claims};
  if (Status s = scenario::write_results(args.out_dir, outcome->scenario, results, findings); !s.ok()) {
    throw std::runtime_error(s.to_string());
  }
  if (results.empty()) {
    fmt::print("\nscenario {} made no runs\n", outcome->scenario);
  } else {
    fmt::print("\n{}", scenario::results_table(results));
  }
  std::set<std::uint64_t> seeds;
  for (const auto& r : results) seeds.insert(r.spec.seed);
  std::string seed_text;
  for (std::uint64_t s : seeds) seed_text += (seed_text.empty() ? "" : ", ") + std::to_string(s);
  fmt::print("scenario {}: seed {}; wrote {}/results.json, results.csv and progress.csv\n", outcome->scenario,
             seed_text.empty() ? "-" : seed_text, args.out_dir);
  if (args.report && !results.empty()) {
    // The same report `sluice report OUT/results.json --out OUT` writes.
    analysis::ReportArgs report;
    report.files = {(std::filesystem::path(args.out_dir) / "results.json").string()};
    report.out_dir = args.out_dir;
    report.phase = args.report_phase;
    report.title = "sluice run " + outcome->scenario;
    std::ostringstream said;
    if (analysis::run_report(report, said, said) != k_exit_ok) {
      throw std::runtime_error("writing the report: " + said.str());
    }
    fmt::print("{}", said.str());
  }
  std::size_t failed = 0;
  for (const auto& r : results) {
    if (r.ok) continue;
    if (failed++ == 0) fmt::print(stderr, "sluice: run failed: {}\n", r.error);
  }
  if (failed > 1) fmt::print(stderr, "sluice: {} runs failed in all (see the table)\n", failed);
  std::size_t broken = 0;
  for (const auto& c : outcome->claims) broken += c.holds ? 0 : 1;
  if (!outcome->claims.empty()) {
    fmt::print("claims: {} of {} hold\n", outcome->claims.size() - broken, outcome->claims.size());
    for (const auto& c : outcome->claims) {
      if (!c.holds) fmt::print(stderr, "sluice: claim does not hold ({}): {}: {:.4g}\n", c.where, c.text, c.measured);
    }
  }
  if (failed == 0 && broken > 0 && args.check_claims) return k_exit_failed;
  return failed == 0 ? k_exit_ok : k_exit_failed;
}

int describe_command(const std::string& script) {
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
  RunArgs run_args;
  auto* run_cmd = app.add_subcommand("run", "run a Lua scenario; write OUT/results.json and OUT/results.csv");
  run_cmd->add_option("script", run_args.script, "the scenario script (.lua)")->required()->check(CLI::ExistingFile);
  run_cmd->add_option("--backend", run_args.backend, "where the runs go (default: the script's choice)")
      ->check(CLI::IsMember({"sim", "hw", "emulate"}));
  run_cmd->add_option("--set", run_args.sets, "override a declared parameter: name=value (repeatable)");
  run_cmd->add_option("--seed", run_args.seed, "the seed of every run (default: the script's, else 1)");
  run_cmd->add_option("--out", run_args.out_dir, "where results and reports go")->capture_default_str();
  run_cmd->add_flag("--check-claims", run_args.check_claims,
                    "exit 1 when a shape claim of the script (sl.claim) does not hold");
  run_cmd->add_flag("--report", run_args.report, "also write OUT/report.md with throughput plots (as sluice report)");
  run_cmd->add_option("--report-phase", run_args.report_phase, "the phase the report plots")->capture_default_str();
  run_cmd->add_option("--jobs", run_args.jobs, "run points at once (default: the number of cores in sim, 1 on hw)");
  run_cmd->add_option("--point-timeout", run_args.point_timeout_s, "wall-clock limit of one run point, in seconds")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  std::string describe_script;
  auto* describe_cmd = app.add_subcommand("describe", "list the parameters a scenario script declares");
  describe_cmd->add_option("script", describe_script, "the scenario script (.lua)")
      ->required()
      ->check(CLI::ExistingFile);
  // emulate, node, compare, calibrate and report end the process themselves.
  sluice::emulate::add_emulate_commands(app);
  sluice::analysis::add_analysis_commands(app);
  sluice::calibrate::add_calibrate_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? k_exit_ok : k_exit_usage;
  }
  try {
    if (backends_cmd->parsed()) return backends();
    if (run_cmd->parsed()) return run_command(run_args);
    if (describe_cmd->parsed()) return describe_command(describe_script);
    return topo_show(what, node, out_dir);
  } catch (const UsageError& e) {
    fmt::print(stderr, "sluice: {}\n", e.what());
    return k_exit_usage;
  } catch (const std::exception& e) {
    fmt::print(stderr, "sluice: {}\n", e.what());
    return k_exit_failed;
  }
}
