#include "scenarios/runner/sim_point_run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>

#include "core/services/meta_disk.hpp"
#include "scenarios/runner/child_pool.hpp"
#include "scenarios/runner/crash_log.hpp"
#include "scenarios/runner/fs_deployment.hpp"
#include "scenarios/runner/result_codec.hpp"
#include "scenarios/runner/run_workloads.hpp"
#include "scenarios/runner/runner.hpp"
#include "scenarios/runner/workload_run.hpp"

// SimEnv exists where SimGrid was found (scenarios/CMakeLists.txt links
// sluice_sim then); its headers need SimGrid's.
#if __has_include(<simgrid/forward.h>)
#define SLUICE_RUNNER_HAS_SIM 1
#include "core/faults/world_fault_control.hpp"
#include "scenarios/runner/fault_directory.hpp"
#include "sim/sim_profile.hpp"
#include "sim/sim_runtime.hpp"
#else
#define SLUICE_RUNNER_HAS_SIM 0
#endif

namespace sluice::scenario {

#if SLUICE_RUNNER_HAS_SIM
namespace {

using Clock = std::chrono::steady_clock;

std::string seconds_text(TimeNs ns) {
  return std::to_string(static_cast<double>(ns) / static_cast<double>(k_ns_per_s)) + " s";
}

}  // namespace

// A point in the simulated cluster (run_workloads.hpp). Each metadata server
// keeps its namespace on a disk that outlives it (MetaDisk): a killed and
// restarted server finds what it acknowledged. A workload's ranks are made
// when it begins; its phase rows are read from what the run's metrics grew
// by while it ran; every workload draws on one budget of events
// (ScenarioSpec::max_events).
template <>
class PointSite<sim::SimRuntime> {
 public:
  using FaultWorld = sim::SimRuntime;
  // The fault loop checks whether the workload finished this often (simulated).
  static constexpr TimeNs k_fault_slice_ns = 100 * k_ns_per_ms;

  PointSite(sim::SimRuntime& rt, std::uint64_t max_events) : rt_(rt), max_events_(max_events), budget_(max_events) {}

  sim::SimRuntime& world() { return rt_; }
  sim::SimRuntime* fault_world() { return &rt_; }

  Result<FsDeployment> deploy(const ScenarioSpec& spec) {
    return FsDeployment::deploy(
        rt_, spec,
        [this](TargetId target, NodeId node, std::uint32_t nvme) { return rt_.add_target(target, node, nvme); },
        [](NodeId, ShardId, bool) { return MetaDisk{}.opener(); }, spec.cluster.get());
  }

  std::string bring_up(const FsDeployment& fs, std::vector<WorkloadRun>&) {
    if (rt_.run_until([&] { return fs.registered(); }, k_setup_max_events)) return "";
    return "servers not registered with mgmt (or metadata mirrors not in sync) after " +
           std::to_string(k_setup_max_events) + " events (k_setup_max_events); simulated time " +
           seconds_text(rt_.now());
  }

  std::vector<ClientHost*> begin(const FsDeployment& fs, WorkloadRun& run, std::size_t) {
    counters_before_ = rt_.counters();
    samples_before_.clear();
    for (const auto& [name, values] : rt_.all_samples()) samples_before_[name] = values.size();
    std::vector<ClientHost*> hosts;
    for (std::uint32_t rank = 0; rank < run.ranks(); ++rank) {
      hosts.push_back(
          &rt_.add_service<ClientHost>(run.node_of(rank), fs.client_host_config(run, rank), run.make(rank)));
    }
    events_before_ = rt_.events_delivered();
    return hosts;
  }

  std::string wait(const std::function<bool()>& all_finished) {
    const bool finished = rt_.run_until(all_finished, budget_);
    const std::uint64_t spent = rt_.events_delivered() - events_before_;
    budget_ = spent >= budget_ ? 0 : budget_ - spent;
    if (finished) return "";
    return ": " +
           (budget_ == 0 ? "the event budget (ScenarioSpec::max_events = " + std::to_string(max_events_) + ") is spent"
                         : std::string("nothing is left to happen but ranks still wait")) +
           " at simulated time " + seconds_text(rt_.now());
  }

  // Metrics of this workload alone: counters' growth, samples added.
  void end(const FsDeployment& fs, WorkloadRun& run, std::size_t, RunResult& result) {
    MetricWindow window;
    for (const auto& [name, value] : rt_.counters()) {
      auto it = counters_before_.find(name);
      const double delta = value - (it == counters_before_.end() ? 0.0 : it->second);
      if (delta != 0) window.counters[name] = delta;
    }
    for (const auto& [name, values] : rt_.all_samples()) {
      auto it = samples_before_.find(name);
      const std::size_t from = it == samples_before_.end() ? 0 : it->second;
      if (values.size() > from) {
        window.samples[name].assign(values.begin() + static_cast<std::ptrdiff_t>(from), values.end());
      }
    }
    for (PhaseRow& row : run.rows(window, fs.targets())) result.phases.push_back(std::move(row));
  }

  bool finished(const ClientHost& h) const { return h.finished(); }
  Status status(const ClientHost& h) const { return h.result(); }
  std::string name(const ClientHost& h) const { return h.name(); }
  void finish(const FsDeployment&, std::vector<WorkloadRun>&, std::size_t, RunResult&) {}

 private:
  sim::SimRuntime& rt_;
  const std::uint64_t max_events_;
  std::uint64_t budget_;
  std::uint64_t events_before_ = 0;
  std::map<std::string, double, std::less<>> counters_before_;
  std::map<std::string, std::size_t> samples_before_;
};

namespace {

// sl.run's sim_coalesce (or sluice run --sim-coalesce on): each client merges
// the pieces of one request that sit on one target (strided: SimEnv moves no
// bytes) into requests of at most k_sim_coalesce_pieces chunks (and at most
// a slot's share of the server's staging); a merged read streams in
// chunk-sized segments (SimRuntimeConfig::stream_read_segment_bytes). The
// servers measure how many pieces their merged requests stand for beyond
// their request slots (StorageServiceConfig::slot_piece_bytes): where the
// slots would bind per chunk, merging changes the answer (docs/sim.md: up to
// -29% on the CosmoFlow epoch), and SimPointRun::run runs per chunk instead.
ScenarioSpec coalescing(const ScenarioSpec& spec, sim::SimRuntimeConfig& config) {
  ScenarioSpec out = spec;
  const std::uint64_t chunk = spec.fs.meta.default_chunk_bytes;
  const std::uint64_t share = spec.fs.storage_config.staging_budget_bytes /
                              std::max<std::uint32_t>(spec.fs.storage_config.max_active_per_target, 1);
  out.fs.client.coalesce = ChunkCoalescing{std::max(chunk, std::min(k_sim_coalesce_pieces * chunk, share)), true};
  out.fs.storage_config.slot_piece_bytes = chunk;
  config.stream_read_segment_bytes = chunk;
  return out;
}

// A merged run's own measure of how far it strayed from per chunk
// (counters of the servers, StorageServiceConfig::slot_piece_bytes):
// - sim.coalesce_slot_excess: the share of the pieces' service time given
//   beyond the targets' request slots;
// - sim.coalesce_write_share: the share of the pieces that came in merged
//   writes. A merged write is not streamed: its drive work starts after its
//   whole transfer, where per chunk the next chunk's transfer overlaps the
//   drive (-13% on 2 nodes, 8 MiB files, docs/sim.md).
void measure_coalescing(const sim::SimRuntime& rt, std::map<std::string, double>& counters) {
  const double piece_ns = rt.counter("storage.slot_piece_ns");
  const double pieces = rt.counter("storage.slot_pieces");
  counters["sim.coalesce_slot_excess"] = piece_ns > 0 ? rt.counter("storage.slot_excess_piece_ns") / piece_ns : 0.0;
  counters["sim.coalesce_write_share"] = pieces > 0 ? rt.counter("storage.slot_merged_write_pieces") / pieces : 0.0;
}

// The run's own counters (Env::metrics) and the runtime's: its cost drivers
// (events, activities, messages) and the page cache's (write-back,
// read-ahead, flushes).
void count_runtime(const sim::SimRuntime& rt, std::map<std::string, double>& counters) {
  for (const auto& [name, value] : rt.counters()) counters.emplace(name, value);
  counters["sim.events"] = static_cast<double>(rt.events_delivered());
  counters["sim.activities"] = static_cast<double>(rt.activities_started());
  counters["sim.messages_sent"] = static_cast<double>(rt.messages_sent());
  counters["sim.messages_dropped"] = static_cast<double>(rt.messages_dropped());
  counters["sim.buffered_writes"] = static_cast<double>(rt.buffered_writes());
  counters["sim.buffered_reads"] = static_cast<double>(rt.buffered_reads());
  counters["sim.read_ahead_pieces"] = static_cast<double>(rt.read_ahead_pieces());
  counters["sim.read_ahead_hits"] = static_cast<double>(rt.read_ahead_hits());
  counters["sim.dirty_throttled_writes"] = static_cast<double>(rt.throttled_writes());
  counters["sim.storage_flushes"] = static_cast<double>(rt.flushes());
  counters["sim.storage_flushes_waited"] = static_cast<double>(rt.flushes_waited());
}

std::string percent_text(double share);

// A fluid run's own cost drivers and measure of distortion (sim_point_run.hpp).
void count_fluid(const sim::SimRuntime& rt, RunResult& result) {
  const sim::FluidNet& f = rt.fluid();
  result.counters["sim.fluid_solves"] = static_cast<double>(f.solves());
  result.counters["sim.fluid_big_solves"] = static_cast<double>(f.big_solves());
  result.counters["sim.fluid_deadline_solves"] = static_cast<double>(f.deadline_solves());
  result.counters["sim.fluid_flows"] = static_cast<double>(f.flows_started());
  // Over the bytes of flows whose rates were let stray (components solved at
  // each change were exact).
  const double measured = f.bulk_bytes() - f.exact_bytes();
  result.counters["sim.fluid_deviation_share"] = measured > 0 ? f.deviation_bytes() / measured : 0.0;
  result.counters["sim.fluid_net_deviation_share"] = measured > 0 ? std::abs(f.net_deviation_bytes()) / measured : 0.0;
  result.counters["sim.fluid_unsolved_share"] = f.bulk_bytes() > 0 ? f.unsolved_bytes() / f.bulk_bytes() : 0.0;
  const double all = f.bulk_bytes() + f.small_bytes();
  result.counters["sim.fluid_small_share"] = all > 0 ? f.small_bytes() / all : 0.0;
  result.log_tail.push_back("sim_mode fluid: " + std::to_string(f.flows_started()) + " flows, " +
                            std::to_string(f.solves()) + " solves; bulk flows strayed from the solved sharing by " +
                            percent_text(result.counters["sim.fluid_deviation_share"]) + " of their bytes (" +
                            percent_text(result.counters["sim.fluid_net_deviation_share"]) + " net)");
}

std::string percent_text(double share) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", 100 * share);
  return text;
}

// Why a merged run's answer cannot stand for the per-chunk one ("" when it can).
std::string coalesce_distortion(const std::map<std::string, double>& counters) {
  auto measure = [&counters](const char* name) {
    const auto it = counters.find(name);
    return it == counters.end() ? 0.0 : it->second;
  };
  const double excess = measure("sim.coalesce_slot_excess");
  const double writes = measure("sim.coalesce_write_share");
  const std::string limit = " (limit " + percent_text(k_sim_coalesce_max_slot_excess) +
                            ", k_sim_coalesce_max_slot_excess; docs/sim.md, flow coalescing)";
  if (excess > k_sim_coalesce_max_slot_excess) {
    return "merged requests stood for more pieces than the targets' request slots allow for " + percent_text(excess) +
           " of the pieces' service time" + limit;
  }
  if (writes > k_sim_coalesce_max_slot_excess) {
    return percent_text(writes) + " of the pieces came in merged writes, which are not streamed" + limit;
  }
  return "";
}

}  // namespace

bool SimPointRun::available() { return true; }

namespace {

// Why a fluid run's answer cannot stand for the per-chunk one ("" when it can).
std::string fluid_distortion(const RunResult& fluid) {
  if (!fluid.ok) return "the fluid run failed: " + fluid.error;
  const auto it = fluid.counters.find("sim.fluid_net_deviation_share");
  const double deviation = it == fluid.counters.end() ? 0.0 : it->second;
  if (deviation > k_sim_fluid_max_deviation) {
    return "the fluid run's bulk flows moved " + percent_text(deviation) +
           " of their bytes ahead of or behind the solved sharing, net (limit " +
           percent_text(k_sim_fluid_max_deviation) + ", k_sim_fluid_max_deviation; docs/sim.md, fluid mode)";
  }
  return "";
}

// One run of `body` in a child process (SimGrid allows one engine per
// process, and the run that may follow it here needs one): its result, and
// whether the child ended well; or why it could not start.
struct ChildRun {
  RunResult result;
  bool child_ok = false;
};
Result<ChildRun> run_in_child(const std::function<RunResult()>& body, const ScenarioSpec& spec) {
  ChildPoolOptions pool;
  pool.max_payload_bytes = k_max_point_result_bytes;
  pool.log_tail_lines = k_log_tail_lines;
  Result<std::vector<ChildJobResult>> ran = ChildPool::run(
      1, [&](std::size_t) { return to_json(body()).dump(); }, pool);
  if (!ran.ok()) return ran.status();
  return ChildRun{run_result_of_child(ran->front(), spec, Backend::sim), ran->front().ok};
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

RunResult SimPointRun::run(const ScenarioSpec& spec, const std::vector<std::string>& profile_dirs) {
  if (spec.sim_mode != SimMode::automatic) return run_mode(spec, profile_dirs);
  // Fluid first, in a child.
  const auto wall_start = std::chrono::steady_clock::now();
  ScenarioSpec fluid_spec = spec;
  fluid_spec.sim_mode = SimMode::fluid;
  Result<ChildRun> ran = run_in_child([&] { return run_mode(fluid_spec, profile_dirs); }, fluid_spec);
  std::string why;
  if (ran.ok()) {
    RunResult& fluid = ran->result;
    if (!ran->child_ok) fluid.ok = false;
    why = fluid_distortion(fluid);
    if (why.empty()) {
      fluid.spec = spec;
      fluid.wall_s = seconds_since(wall_start);
      return std::move(fluid);
    }
  } else {
    why = "the fluid run could not start: " + ran.status().message();
  }
  ScenarioSpec chunk_spec = spec;
  chunk_spec.sim_mode = SimMode::chunk;
  RunResult result = run_mode(chunk_spec, profile_dirs);
  result.spec = spec;
  if (ran.ok()) {
    // The fluid run's own measures (count_fluid's sim.fluid_*_share), beside the per-chunk answer.
    for (const auto& [name, value] : ran->result.counters) {
      if (name.starts_with("sim.fluid_") && name.ends_with("_share")) result.counters[name] = value;
    }
  }
  result.wall_s = seconds_since(wall_start);
  result.deployment["sim_mode"] = "chunk: " + why;
  result.log_tail.push_back("sim_mode auto: ran per chunk: " + why);
  return result;
}

RunResult SimPointRun::run_mode(const ScenarioSpec& spec, const std::vector<std::string>& profile_dirs) {
  if (!spec.sim_coalesce) return run_here(spec, profile_dirs);
  // Merged first, in a child.
  const auto wall_start = std::chrono::steady_clock::now();
  Result<ChildRun> ran = run_in_child([&] { return run_here(spec, profile_dirs); }, spec);
  if (!ran.ok()) {
    RunResult failed;
    failed.spec = spec;
    failed.error = "sim_coalesce: the merged run could not start: " + ran.status().message();
    return failed;
  }
  RunResult& merged = ran->result;
  if (!ran->child_ok) merged.error = "sim_coalesce: the merged run died: " + merged.error;
  const std::string distortion = coalesce_distortion(merged.counters);
  if (!merged.ok || distortion.empty()) return std::move(merged);

  ScenarioSpec per_chunk = spec;
  per_chunk.sim_coalesce = false;
  RunResult result = run_here(per_chunk, profile_dirs);
  result.spec = spec;
  for (const char* name : {"sim.coalesce_slot_excess", "sim.coalesce_write_share"}) {
    result.counters[name] = merged.counters[name];
  }
  result.wall_s = seconds_since(wall_start);
  const std::string why = "per_chunk: " + distortion;
  result.deployment["sim_coalesce"] = why;
  result.log_tail.push_back("sim_coalesce: ran " + why);
  return result;
}

RunResult SimPointRun::run_here(const ScenarioSpec& spec, const std::vector<std::string>& profile_dirs) {
  const Clock::time_point wall_start = Clock::now();
  RunResult result;
  result.spec = spec;
  result.backend = Backend::sim;
  result.deployment["authenticated"] = "false";  // the simulated nodes prove nothing to each other
  auto finish = [&](std::string why) {
    result.ok = why.empty();
    result.error = std::move(why);
    result.wall_s = std::chrono::duration<double>(Clock::now() - wall_start).count();
    return result;
  };
  try {
    if (Status s = FsDeployment::validate(spec); !s.ok()) return finish(s.message());
    for (std::size_t i = 0; i < spec.workloads.size(); ++i) {
      Result<WorkloadRun> check = WorkloadRun::create(spec.workloads[i], i, *spec.cluster);
      if (!check.ok()) return finish(check.status().message());
    }
    Result<sim::SimProfile> profile = sim::load_profile(spec.sim_profile, profile_dirs);
    if (!profile.ok()) return finish("sim profile \"" + spec.sim_profile + "\": " + profile.status().message());
    sim::SimRuntimeConfig config;
    config.seed = spec.seed;
    config.profile = std::move(profile).value();
    config.log_sink = [](std::string_view line) { note_child_log(line); };
    config.fluid = spec.sim_mode == SimMode::fluid;
    const ScenarioSpec run_spec = spec.sim_coalesce ? coalescing(spec, config) : spec;
    const bool config_fluid = config.fluid;
    Result<std::unique_ptr<sim::SimRuntime>> created = sim::SimRuntime::create(spec.cluster, std::move(config));
    if (!created.ok()) return finish(created.status().to_string());
    sim::SimRuntime& rt = **created;

    PointSite<sim::SimRuntime> site(rt, run_spec.max_events);
    std::string why = run_workloads(run_spec, site, result);
    if (spec.sim_coalesce) {
      measure_coalescing(rt, result.counters);
      result.deployment["sim_coalesce"] = "merged";
      result.log_tail.push_back("sim_coalesce: chunk pieces merged per target (" +
                                std::to_string(static_cast<std::uint64_t>(rt.counter("client.chunks_coalesced"))) +
                                " pieces folded in; beyond the targets' request slots: " +
                                percent_text(result.counters["sim.coalesce_slot_excess"]) +
                                " of the pieces' service time; in merged writes: " +
                                percent_text(result.counters["sim.coalesce_write_share"]) + " of the pieces)");
    }

    count_runtime(rt, result.counters);
    result.deployment["sim_mode"] = config_fluid ? "fluid" : "chunk";
    if (config_fluid) count_fluid(rt, result);
    const auto direct = static_cast<std::uint64_t>(rt.counter("client.chunks_direct"));
    const auto bounce = static_cast<std::uint64_t>(rt.counter("client.chunks_bounce"));
    result.paths_taken["direct"] = direct;
    result.paths_taken["bounce"] = bounce;
    if (why.empty() && spec.fs.gds == GdsMode::on && bounce > 0) {
      why = "gds = on, but " + std::to_string(bounce) +
            " chunks had to bounce through host memory (the topology puts a GPU beyond PXB from its NIC; "
            "use gds = auto to allow the bounce path)";
    }
    result.simulated_s = static_cast<double>(rt.now()) / static_cast<double>(k_ns_per_s);
    const auto& logs = rt.logs();
    for (std::size_t i = logs.size() > k_log_tail_lines ? logs.size() - k_log_tail_lines : 0; i < logs.size(); ++i) {
      result.log_tail.push_back(logs[i]);
    }
    return finish(why);
  } catch (const std::exception& e) {
    return finish(std::string("the simulation threw: ") + e.what());
  }
}

#else

bool SimPointRun::available() { return false; }

RunResult SimPointRun::run(const ScenarioSpec& spec, const std::vector<std::string>&) {
  RunResult result;
  result.spec = spec;
  result.backend = Backend::sim;
  result.error = "sim backend unavailable: this build has no SimGrid (libsimgrid-dev not found at configure time)";
  return result;
}

#endif

}  // namespace sluice::scenario
