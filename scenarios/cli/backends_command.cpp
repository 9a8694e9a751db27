#include "scenarios/cli/backends_command.hpp"

#include <fmt/core.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
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
#include <string_view>

#include "core/common/byte_size.hpp"
#include "core/topology/machine_builders.hpp"
#include "core/topology/nvidia_smi_import.hpp"
#include "base/run_marker.hpp"
#include "hw_backends/hwloc/hwloc_import.hpp"
#include "hw_backends/storage_backend.hpp"
#include "transports/shared_secret.hpp"
#include "transports/transport.hpp"
#include "scenarios/build_probes.hpp"
#include "scenarios/calibrate/script_compare.hpp"
#include "scenarios/lua/lua_api.hpp"
#include "scenarios/lua/lua_script.hpp"
#include "scenarios/lua/machine_report.hpp"
#include "scenarios/runner/point_bound.hpp"
#include "scenarios/runner/results_journal.hpp"
#include "scenarios/runner/results_writer.hpp"
#include "scenarios/runner/runner.hpp"
#include "scenarios/runner/sweep_relay_wire.hpp"
#include "scenarios/runner/sweep_schedule.hpp"
#include "analysis/analysis_command.hpp"
#include "analysis/plotter.hpp"
#include "scenarios/deploy/command_runner.hpp"
#include "scenarios/netns/cluster_emulator.hpp"
#include "scenarios/netns/dead_runs.hpp"
#include "scenarios/deploy/cluster_point_run.hpp"
#include "scenarios/netns/emulated_point_run.hpp"
#include "scenarios/deploy/rank_bootstrap.hpp"
#include "hw_backends/cuda/cuda_device.hpp"
#include "hw_backends/cuda/cuda_gpu_memory.hpp"

namespace sluice::cli {
namespace {

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
      "HwEnv (hw/: `sluice run --backend hw`, one process; `--backend emulate`, netns per node).\n");
  return k_exit_ok;
}

}  // namespace

// `sluice --version`: the release, the commit it was built from, the build
// type and which optional pieces are in.
std::string version_text() {
  std::string pieces;
  for (const auto& row : build::k_probes) {
    pieces += fmt::format("{}{} {}", pieces.empty() ? "" : ", ", row.piece, row.available ? "yes" : "no");
  }
  return fmt::format("sluice {} ({}, {} build)\noptional pieces: {}", build::k_version, build::k_git_describe,
                     build::k_build_type, pieces);
}

void add_backends_command(CLI::App& app, CommandExit& exit) {
  auto* cmd = app.add_subcommand("backends", "optional pieces of this build and why missing ones are");
  on_parsed(cmd, exit, [] { return backends(); });
}

}  // namespace sluice::cli
