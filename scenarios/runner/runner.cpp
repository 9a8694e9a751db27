#include "scenarios/runner/runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <thread>

#include "scenarios/runner/child_pool.hpp"
#include "scenarios/runner/hw_point_run.hpp"
#include "scenarios/runner/point_bound.hpp"
#include "scenarios/runner/result_codec.hpp"
#include "scenarios/runner/sim_point_run.hpp"

namespace sluice::scenario {

std::string_view to_string(Backend backend) {
  switch (backend) {
    case Backend::sim: return "sim";
    case Backend::hw: return "hw";
    case Backend::emulate: return "emulate";
    case Backend::cluster: return "cluster";
  }
  return "?";
}

Result<Backend> parse_backend(std::string_view text) {
  if (text == "sim") return Backend::sim;
  if (text == "hw") return Backend::hw;
  if (text == "emulate") return Backend::emulate;
  if (text == "cluster") return Backend::cluster;
  return error(StatusCode::invalid_argument,
               "\"" + std::string(text) + "\" is not a backend (sim, hw, emulate, cluster)");
}

std::string_view to_string(GdsMode mode) {
  switch (mode) {
    case GdsMode::on: return "on";
    case GdsMode::off: return "off";
    case GdsMode::automatic: return "auto";
  }
  return "?";
}

namespace {

// Backend::cluster: every rank of the launcher runs each point together, in
// its own process (a point is the whole deployment, one node per rank), one
// point after the other on the same processes.
Result<std::vector<RunResult>> run_together(const std::vector<ScenarioSpec>& points, const RunnerOptions& options) {
  std::vector<RunResult> results(points.size());
  const auto start = std::chrono::steady_clock::now();
  std::size_t failed = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (options.stop_requested && options.stop_requested()) {
      return error(StatusCode::unavailable,
                   "runner: stopped after " + std::to_string(i) + " of " + std::to_string(points.size()) + " points");
    }
    results[i] = options.run_point ? options.run_point(points[i], Backend::cluster)
                                   : run_point(points[i], Backend::cluster, options);
    attach_bounds(results[i]);
    if (!results[i].ok) ++failed;
    if (options.point_done) options.point_done(i, results[i]);
    if (options.progress) {
      const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      options.progress(RunnerProgress{points.size(), i + 1, failed, 0, wall_s, {}, 0});
    }
  }
  return results;
}

}  // namespace

RunResult run_point(const ScenarioSpec& spec, Backend backend, const RunnerOptions& options) {
  if (backend == Backend::sim) return SimPointRun::run(spec, options.profile_dirs);
  if (backend == Backend::hw) return HwPointRun::run(spec, options.hw);
  RunResult result;
  result.spec = spec;
  result.backend = backend;
  result.error = backend == Backend::cluster
                     ? "backend cluster needs the node processes of a launcher (`mpirun -np N sluice run SCRIPT "
                       "--backend cluster`; scenarios/deploy/cluster_point_run.hpp)"
                     : "backend emulate is not yet supported by `sluice run` (the netns cluster emulation is "
                       "scenarios/netns'); use --backend sim or hw";
  return result;
}

Result<std::vector<RunResult>> run_points(const std::vector<ScenarioSpec>& points, Backend backend,
                                          const RunnerOptions& options) {
  if (points.size() > k_max_points) {
    return error(StatusCode::invalid_argument, "runner: " + std::to_string(points.size()) +
                                                   " points exceed k_max_points (" + std::to_string(k_max_points) +
                                                   ")");
  }
  std::vector<RunResult> results(points.size());
  if (points.empty()) return results;
  if (backend == Backend::emulate && !options.run_point) {
    // Nothing to isolate: the answer is known without running anything.
    for (std::size_t i = 0; i < points.size(); ++i) {
      results[i] = run_point(points[i], backend, options);
      attach_bounds(results[i]);
      if (options.point_done) options.point_done(i, results[i]);
    }
    return results;
  }

  if (backend == Backend::cluster) return run_together(points, options);

  std::uint32_t jobs = options.jobs;
  if (jobs == 0) jobs = std::max(1u, std::thread::hardware_concurrency());
  jobs = std::min<std::uint32_t>({jobs, k_max_runner_jobs, static_cast<std::uint32_t>(points.size())});

  double simulated_s_done = 0;
  ChildPoolOptions pool;
  pool.jobs = jobs;
  pool.timeout_s = options.point_timeout_s;
  pool.max_payload_bytes = k_max_point_result_bytes;
  pool.log_tail_lines = k_log_tail_lines;
  pool.progress_interval_s = options.progress_interval_s;
  pool.stop_requested = options.stop_requested;
  if (options.progress) {
    pool.progress = [&](const ChildPoolProgress& p) {
      options.progress(RunnerProgress{p.jobs, p.done, p.failed, p.running, p.wall_s, p.running_jobs, simulated_s_done});
    };
  }
  // Decoded as each point ends, so point_done sees it at once.
  std::vector<bool> decoded(points.size(), false);
  pool.on_done = [&](std::size_t index, const ChildJobResult& job) {
    results[index] = run_result_of_child(job, points[index], backend);
    attach_bounds(results[index]);
    decoded[index] = true;
    if (std::isfinite(results[index].simulated_s)) simulated_s_done += results[index].simulated_s;
    if (options.point_done) options.point_done(index, results[index]);
  };
  const RunPointFn body = options.run_point ? options.run_point : [&options](const ScenarioSpec& spec, Backend b) {
    return run_point(spec, b, options);
  };
  const ChildPool::Body job = [&](std::size_t index) { return to_json(body(points[index], backend)).dump(); };
  Result<std::vector<ChildJobResult>> ran =
      options.sweep != nullptr ? options.sweep->run(points, job, pool) : ChildPool::run(points.size(), job, pool);
  if (!ran.ok()) return ran.status();
  // Spread over ranks, the points of other ranks come with the whole list.
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (decoded[i]) continue;
    results[i] = run_result_of_child((*ran)[i], points[i], backend);
    attach_bounds(results[i]);
  }
  return results;
}

}  // namespace sluice::scenario
