#include "scenarios/cli/backends_command.hpp"

#include <fmt/core.h>

#include <string>

#include "hw_backends/storage_backend.hpp"
#include "scenarios/build_probes.hpp"
#include "transports/transport.hpp"

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
