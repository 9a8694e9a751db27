#include "scenarios/calibrate/fio_point_run.hpp"

#include <chrono>
#include <cmath>
#include <exception>
#include <filesystem>
#include <fstream>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "analysis/import_fio.hpp"
#include "analysis/import_input.hpp"
#include "analysis/import_record.hpp"
#include "scenarios/deploy/command_runner.hpp"
#include "scenarios/runner/result_codec.hpp"

namespace sluice::calibrate {
namespace {

using scenario::RunResult;
using scenario::ScenarioSpec;

// The point's one file_sweep, or invalid_argument naming what stands in the way.
Result<const FileSweepConfig*> sweep_of(const ScenarioSpec& point) {
  if (point.workloads.size() != 1) {
    return error(
        StatusCode::invalid_argument,
        fmt::format("fio measures one file_sweep per point; this point has {} workloads", point.workloads.size()));
  }
  const auto* sweep = std::get_if<FileSweepConfig>(&point.workloads.front().config);
  if (sweep == nullptr) return error(StatusCode::invalid_argument, "fio measures a file_sweep workload only");
  const scenario::ClientPlacement& clients = point.workloads.front().clients;
  if (clients.nodes.size() * clients.ranks_per_node != 1) {
    return error(StatusCode::invalid_argument,
                 "fio measures one rank: give the file_sweep one client node and "
                 "ranks_per_node = 1");
  }
  if (sweep->files_per_rank != sweep->threads) {
    return error(StatusCode::invalid_argument,
                 fmt::format("fio runs one file per thread: file_sweep files ({}) must equal threads ({})",
                             sweep->files_per_rank, sweep->threads));
  }
  if (sweep->file_bytes == 0 || sweep->file_bytes % sweep->block_bytes != 0) {
    return error(StatusCode::invalid_argument,
                 fmt::format("fio moves whole blocks: file_sweep file_bytes ({}) must be a non-zero multiple of "
                             "block_bytes ({})",
                             sweep->file_bytes, sweep->block_bytes));
  }
  if (sweep->buffer_kind != MemKind::host) return error(StatusCode::invalid_argument, "fio measures host buffers");
  return sweep;
}

Result<bool> random_access(const ScenarioSpec& point) {
  auto it = point.params.find("access");
  if (it == point.params.end() || it->second == "sequential") return false;
  if (it->second == "random") return true;
  return error(StatusCode::invalid_argument,
               "param access = \"" + it->second + "\": expected \"sequential\" or \"random\"");
}

// fio's data file of clone i (the same for every phase, so the read job reads what the write job wrote).
std::string data_file(std::uint32_t clone) { return fmt::format("sluice-f4.{}", clone); }

void remove_data_files(const FioPointOptions& options, std::uint32_t clones) {
  std::error_code ec;
  for (std::uint32_t i = 0; i < clones; ++i) {
    std::filesystem::remove(std::filesystem::path(options.directory) / data_file(i), ec);
  }
}

// The measured phases of the imported document, in the job file's order, as the runner's phase rows.
Result<std::vector<scenario::PhaseRow>> imported_phases(const std::string& json_path) {
  Result<analysis::ImportInput> input = analysis::read_import_input(json_path);
  if (!input.ok()) return input.status();
  std::vector<analysis::ImportedRun> runs;
  try {
    runs = analysis::import_fio(*input);
  } catch (const analysis::ImportError& e) {
    return error(StatusCode::corrupt, e.what());
  }
  const nlohmann::json doc = analysis::imported_results_document(runs, {});
  std::vector<scenario::PhaseRow> phases;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (!runs[i].ok) return error(StatusCode::io_error, "fio job " + runs[i].label + ": " + runs[i].error);
    for (const nlohmann::json& p : doc.at("runs").at(i).at("phases")) {
      Result<scenario::PhaseRow> row = scenario::phase_row_from_json(p);
      if (!row.ok()) return row.status();
      phases.push_back(std::move(row).value());
    }
  }
  return phases;
}

}  // namespace

Result<std::string> fio_job_file(const ScenarioSpec& point, const FioPointOptions& options) {
  Result<const FileSweepConfig*> sweep = sweep_of(point);
  if (!sweep.ok()) return sweep.status();
  Result<bool> random = random_access(point);
  if (!random.ok()) return random.status();
  if (options.directory.empty()) return error(StatusCode::invalid_argument, "fio: no directory for its data files");
  if (!(options.time_limit_s > 0) || options.time_limit_s > k_fio_max_job_time_limit_s) {
    return error(StatusCode::invalid_argument, fmt::format("fio: job time limit {} s is outside (0, {}]",
                                                           options.time_limit_s, k_fio_max_job_time_limit_s));
  }
  const FileSweepConfig& s = **sweep;
  std::string text = fmt::format(
      "; {} (sluice calibrate --backend fio): one section per sweep thread and phase\n"
      "[global]\ndirectory={}\ndirect=1\nioengine={}\nbs={}\nsize={}\niodepth=1\ngroup_reporting=1\n"
      "runtime={}\nunlink=0\n",
      point.label.empty() ? point.scenario : point.label, options.directory, options.ioengine, s.block_bytes,
      s.file_bytes, static_cast<std::uint64_t>(std::ceil(options.time_limit_s)));
  if (s.sync_writes) text += "sync=1\n";
  bool any = false;
  for (SweepPhase phase : s.phases) {
    if (phase != SweepPhase::write && phase != SweepPhase::read) continue;
    const std::string name(to_string(phase));
    const std::string rw = (*random ? "rand" : "") + name;
    for (std::uint32_t i = 0; i < s.threads; ++i) {
      text += fmt::format("\n[{}.{}]\nfilename={}\nrw={}\n", name, i, data_file(i), rw);
      if (i == 0) text += "stonewall\nnew_group\n";
    }
    any = true;
  }
  if (!any) return error(StatusCode::invalid_argument, "fio measures the write and read phases; the sweep has neither");
  return text;
}

RunResult run_fio_point(const ScenarioSpec& point, const FioPointOptions& options) {
  RunResult r;
  r.spec = point;
  r.backend = scenario::Backend::hw;
  const auto started = std::chrono::steady_clock::now();
  auto fail = [&](const std::string& why) {
    r.ok = false;
    r.error = why;
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return r;
  };
  Result<std::string> job = fio_job_file(point, options);
  if (!job.ok()) return fail(job.status().message());
  const std::filesystem::path work(options.work_dir);
  std::error_code ec;
  std::filesystem::create_directories(work, ec);
  std::filesystem::create_directories(options.directory, ec);
  if (ec) return fail("fio: cannot make " + options.directory + ": " + ec.message());
  const std::string job_path = (work / "job.fio").string();
  const std::string json_path = (work / "fio.json").string();
  std::ofstream(job_path) << *job;
  const std::uint32_t threads = std::get<FileSweepConfig>(point.workloads.front().config).threads;
  const auto deadline_ms = static_cast<std::uint32_t>(2 * options.time_limit_s * 1000) + k_fio_command_slack_ms;
  Result<emulate::CommandOutput> ran =
      emulate::run_command({options.fio, "--output-format=json", "--output=" + json_path, job_path}, deadline_ms);
  remove_data_files(options, threads);
  if (!ran.ok()) return fail("fio: " + ran.status().message());
  std::ofstream(work / "fio.log") << ran->output;
  if (ran->exit_code != 0) {
    return fail(fmt::format("fio exited {} (see {}): {}", ran->exit_code, (work / "fio.log").string(),
                            ran->output.substr(0, 400)));
  }
  Result<std::vector<scenario::PhaseRow>> phases = imported_phases(json_path);
  if (!phases.ok()) return fail("fio output " + json_path + ": " + phases.status().message());
  r.phases = std::move(phases).value();
  for (scenario::PhaseRow& row : r.phases) row.workload = point.workloads.front().label;  // as the sweep names them
  r.ok = true;
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return r;
}

}  // namespace sluice::calibrate
