#include "scenarios/runner/hw_point_run.hpp"

#include <stdlib.h>

#include <chrono>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>

#include "base/run_marker.hpp"
#if SLUICE_HAVE_ROCKSDB
#include "hw_backends/rocksdb/rocksdb_meta_store.hpp"
#endif
#include "scenarios/runner/crash_log.hpp"
#include "hw/hw_env.hpp"
#include "hw/hw_world.hpp"
#include "transports/shared_secret.hpp"
#include "transports/transport.hpp"
#include "core/faults/fault_driver.hpp"
#include "core/faults/world_fault_control.hpp"
#include "scenarios/runner/fault_directory.hpp"
#include "scenarios/runner/fs_deployment.hpp"
#include "scenarios/runner/hw_fault_world.hpp"
#include "scenarios/runner/runner.hpp"
#include "scenarios/runner/workload_run.hpp"

namespace sluice::scenario {

std::string gpu_unreachable_by(const std::string& transport) {
  for (const transport::TransportListing& t : transport::list_transports()) {
    if (t.name != transport) continue;
    const bool gpu =
        t.capabilities.reaches(transport::RegionKind::cuda) || t.capabilities.reaches(transport::RegionKind::dmabuf);
    return gpu ? "" : "transport " + t.name + " cannot reach GPU memory (" + t.capabilities.to_string() + ")";
  }
  return "transport " + transport + " is not registered";
}

namespace {

// <root>/sluice-hw-run-XXXXXX made and marked as this process's; "" when it cannot be made.
std::string make_hw_run_dir(const std::string& root) {
  std::string templ = root + "/" + std::string(k_hw_run_dir_prefix) + "XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) return "";
  base::write_run_marker(templ).ignore();  // without it the directory is only never swept
  return templ;
}

}  // namespace

HwRunDir::HwRunDir(const std::string& root, bool keep) : dir_(make_hw_run_dir(root), keep) {}
namespace {

using Clock = std::chrono::steady_clock;

// Per-phase samples besides op_latency_ns that workloads record (their means become extras).
constexpr const char* k_phase_samples[] = {"op_latency_ns", "au_ratio",     "target_max_over_mean",
                                           "target_cv",     "mb_per_s",     "bytes_per_s",
                                           "step_ns",       "data_wait_ns", "source_wait_ns"};

// Passes everything to the workload and remembers the rank's Env (its
// metrics are the workload's).
class EnvRecordingWorkload final : public Workload {
 public:
  EnvRecordingWorkload(std::unique_ptr<Workload> inner, Env** env) : inner_(std::move(inner)), env_(env) {}
  void start(WorkloadContext& context, std::function<void(Status)> done) override {
    *env_ = &context.env;
    inner_->start(context, std::move(done));
  }
  std::string name() const override { return inner_->name(); }

 private:
  std::unique_ptr<Workload> inner_;
  Env** env_;
};

struct DeployedWorkload {
  WorkloadRun run;
  std::vector<ClientHost*> hosts;
  std::vector<Env*> envs;  // by rank, set when the rank starts
};

// The fault loop checks whether the workload finished this often (real time).
constexpr TimeNs k_hw_fault_slice_ns = 100 * k_ns_per_ms;

// Waits until every server registered with mgmt; "" or why not (a metadata
// store that could not be opened ends the wait at once).
std::string wait_for_registration(hw::HwWorld& world, const FsDeployment& fs) {
  std::string store_failed;
  const bool registered = world.wait_until(
      [&] {
        for (const MetaService* m : fs.metas()) {
          store_failed =
              world.call(*m, [m] { return m->store_failure().ok() ? std::string() : m->store_failure().message(); });
          if (!store_failed.empty()) return true;
          if (!world.call(*m, [m] { return m->registered(); })) return false;
        }
        for (const StorageService* st : fs.storages()) {
          if (!world.call(*st, [st] { return st->registered(); })) return false;
        }
        const MgmtService& mgmt = fs.mgmt_service();
        return world.call(mgmt, [&mgmt, &fs] { return mgmt.meta_mirrors_in_sync(fs.meta_shards()); });
      },
      k_hw_max_registration_ns);
  if (!store_failed.empty()) return "a metadata server cannot open its store: " + store_failed;
  if (!registered) {
    return "the file system's servers did not register with mgmt (and metadata mirrors come in sync) within "
           "k_hw_max_registration_ns";
  }
  return "";
}

std::string run_deployed(const ScenarioSpec& spec, hw::HwWorld& world, HwFaultWorld* fault_world,
                         const MetaStoreFn& meta_store, RunResult& result) {
  Result<FsDeployment> deployed = FsDeployment::deploy(
      world, spec, [&world](TargetId target, NodeId node, std::uint32_t) { return world.add_target(target, node); },
      meta_store);
  if (!deployed.ok()) return deployed.status().to_string();
  const FsDeployment& fs = *deployed;
  // A metadata server's store commits the loop turn's mutations before the
  // turn's replies leave (meta_store_of opens them with group_commit).
  for (MetaService* meta : fs.metas()) {
    world.before_messages_leave(*meta, [](Service& now) { dynamic_cast<MetaService&>(now).commit_store().ignore(); });
  }

  std::vector<std::unique_ptr<DeployedWorkload>> workloads;
  for (std::size_t index = 0; index < spec.workloads.size(); ++index) {
    Result<WorkloadRun> made = WorkloadRun::create(spec.workloads[index], index, *spec.cluster);
    if (!made.ok()) return made.status().message();
    auto w = std::make_unique<DeployedWorkload>(DeployedWorkload{std::move(made).value(), {}, {}});
    w->envs.assign(w->run.ranks(), nullptr);
    for (std::uint32_t rank = 0; rank < w->run.ranks(); ++rank) {
      ClientHostConfig config = fs.client_host_config(w->run, rank);
      config.client.planner.topology = nullptr;  // this machine, not the modelled one: one loopback rail
      auto workload = std::make_unique<EnvRecordingWorkload>(w->run.make(rank), &w->envs[rank]);
      ClientHost& host = world.add_service<ClientHost>(w->run.node_of(rank), config, std::move(workload));
      world.defer_start(host);
      w->hosts.push_back(&host);
    }
    workloads.push_back(std::move(w));
  }

  if (Status s = world.start(); !s.ok()) return "hw world did not start: " + s.to_string();
  if (std::string why = wait_for_registration(world, fs); !why.empty()) return why;

  std::string why;
  std::size_t ran = 0;
  for (auto& w : workloads) {
    ++ran;
    for (ClientHost* h : w->hosts) world.start_service(*h);
    auto all_finished = [&] {
      for (ClientHost* h : w->hosts) {
        if (!world.call(*h, [h] { return h->finished(); })) return false;
      }
      return true;
    };
    // sl.run's faults, as in a sim run: started with the first workload,
    // applied at their times (here real ones) while it runs; what the plan
    // still holds after its last change lasts to the end of the run.
    if (ran == 1 && fault_world != nullptr) {
      Result<faults::FaultDriver> driver = fault_driver_from(spec.faults, world.now());
      if (!driver.ok()) return "fault plan: " + driver.status().message();
      faults::WorldFaultControl<HwFaultWorld> control(*fault_world, fault_directory(fs, world, w->hosts));
      faults::run_with_faults(*fault_world, *driver, control, all_finished, driver->plan().last_change_ns() + 1,
                              k_hw_fault_slice_ns);
      result.counters["faults.changes_applied"] = static_cast<double>(driver->changes_applied());
      if (!driver->errors().empty()) return "fault plan: " + driver->errors().front();
    }
    const bool finished = world.wait_until(all_finished, k_hw_max_workload_ns);
    const std::string what = "workload \"" + w->run.spec().label + "\"";
    if (!finished) {
      why = what + " did not finish within k_hw_max_workload_ns";
      break;
    }
    std::size_t failed = 0;
    std::string failures;
    for (ClientHost* h : w->hosts) {
      const Status s = world.call(*h, [h] { return h->result(); });
      if (!s.ok() && failed++ < 3) failures += "; " + world.call(*h, [h] { return h->name(); }) + ": " + s.to_string();
    }
    if (failed > 0) {
      why = what + " failed on " + std::to_string(failed) + " of " + std::to_string(w->hosts.size()) + " ranks" +
            failures;
      break;
    }
  }
  // What the faults did, while the targets' backends (which count the slow
  // disk's held completions) still exist.
  if (fault_world != nullptr) {
    result.counters["faults.messages_dropped"] = static_cast<double>(fault_world->messages_dropped());
    result.counters["faults.messages_delayed"] = static_cast<double>(fault_world->messages_delayed());
    result.counters["faults.storage_completions_slowed"] = static_cast<double>(fault_world->completions_slowed());
    fault_world->detach_backends();  // stop() frees them
  }
  world.stop();  // every thread ends: results and metrics are read without races below

  for (std::size_t i = 0; i < ran; ++i) {
    DeployedWorkload& w = *workloads[i];
    MetricWindow window;
    std::vector<hw::HwEnv*> envs;
    for (Env* e : w.envs) {
      if (auto* h = dynamic_cast<hw::HwEnv*>(e)) envs.push_back(h);
    }
    for (hw::HwEnv* e : envs) {
      for (const auto& [name, value] : e->counters()) {
        window.counters[name] += value;
        result.counters[name] += value;
      }
    }
    // The phases the ranks ran, to name their samples.
    const std::vector<PhaseRow> first = w.run.rows(window, fs.targets());
    for (const PhaseRow& row : first) {
      for (const char* suffix : k_phase_samples) {
        const std::string name = w.run.metric_name() + "." + row.phase + "." + suffix;
        for (hw::HwEnv* e : envs) {
          std::vector<double> values = e->samples(name);
          auto& into = window.samples[name];
          into.insert(into.end(), values.begin(), values.end());
        }
      }
    }
    for (PhaseRow& row : w.run.rows(window, fs.targets())) result.phases.push_back(std::move(row));
  }
  for (const char* name : k_hw_server_counters) result.counters[name] = world.counter(name);
  // Each kind of service's loop-thread CPU (cpu.storage_thread_ns, ...): over
  // storage.requests, what a chunk request costs a storage server's thread.
  for (const auto& [kind, ns] : world.thread_cpu_ns()) result.counters["cpu." + kind + "_thread_ns"] = ns;

  result.paths_taken["direct"] = static_cast<std::uint64_t>(result.counters["client.chunks_direct"]);
  result.paths_taken["bounce"] = static_cast<std::uint64_t>(result.counters["client.chunks_bounce"]);
  const std::vector<std::string> logs = world.logs();
  for (std::size_t i = logs.size() > k_log_tail_lines ? logs.size() - k_log_tail_lines : 0; i < logs.size(); ++i) {
    result.log_tail.push_back(logs[i]);
  }
  return why;
}

// What results.json says of how the run was deployed (RunResult::deployment):
// storage_root is the run's own directory (its chunk files under storage/,
// its metadata under meta/); secure() adds authenticated.
std::map<std::string, std::string> deployment_of(const HwRunOptions& options, const std::string& run_dir) {
  return {{"transport", options.transport},
          {"storage_backend", options.storage_backend},
          {"storage_root", run_dir},
          {"node_memory_limit_bytes", std::to_string(options.node_memory_limit_bytes)},
          {"meta_store", SLUICE_HAVE_ROCKSDB ? options.meta_store : std::string("memory")}};
}

// The metadata servers' stores (HwRunOptions::meta_store), said in the run's log;
// RocksDB ones group-commit (run_deployed commits them before each turn's replies).
MetaStoreFn meta_store_of(const HwRunOptions& options, const std::string& root, RunResult& result) {
  result.counters["meta.store_durable"] = 0;
  if (options.meta_store == "memory") return {};
#if SLUICE_HAVE_ROCKSDB
  result.counters["meta.store_durable"] = 1;
  result.log_tail.push_back("hw: metadata in RocksDB under " + root +
                            (options.meta_sync_writes
                                 ? " (every mutation fsynced before its reply leaves, one fsync per loop turn)"
                                 : " (mutations survive a process crash, not a power loss)"));
  return [root, sync = options.meta_sync_writes](NodeId node, ShardId shard, bool second) {
    hw::RocksDbMetaStoreConfig config;
    config.path = root + "/node" + std::to_string(node) + "-shard" + std::to_string(shard) + (second ? "-second" : "");
    config.sync_writes = sync;
    config.group_commit = true;  // run_deployed commits before each loop turn's replies leave
    return hw::rocksdb_store_opener(std::move(config));
  };
#else
  result.log_tail.push_back("hw: metadata store rocksdb -> memory: this build has no RocksDB (librocksdb-dev)");
  (void)root;
  return {};
#endif
}

// The world's shared secret (HwRunOptions::shared_secret says which); the
// run's counters and deployment record whether its connections were authenticated.
Status secure(const HwRunOptions& options, hw::HwWorldConfig& config, RunResult& result) {
  const bool networked = options.transport != "shm";
  result.counters["security.authenticated"] = 0;
  result.deployment["authenticated"] = "false";
  if (options.insecure || !networked) {
    if (options.insecure) result.log_tail.push_back("hw: --insecure: connections are not authenticated");
    return ok_status();
  }
  if (!options.shared_secret.empty()) {
    config.shared_secret = options.shared_secret;
  } else {
    Result<std::string> secret = transport::make_shared_secret();
    if (!secret.ok()) return error(secret.status().code(), "hw: no secret for the run: " + secret.status().message());
    config.shared_secret = std::move(secret).value();
  }
  result.counters["security.authenticated"] = 1;
  result.deployment["authenticated"] = "true";
  return ok_status();
}

}  // namespace

RunResult HwPointRun::run(const ScenarioSpec& spec, const HwRunOptions& options) {
  const Clock::time_point wall_start = Clock::now();
  RunResult result;
  result.spec = spec;
  result.backend = Backend::hw;
  auto finish = [&](std::string why) {
    result.ok = why.empty();
    result.error = std::move(why);
    result.wall_s = std::chrono::duration<double>(Clock::now() - wall_start).count();
    return result;
  };
  try {
    if (Status s = FsDeployment::validate(spec); !s.ok()) return finish(s.message());
    // GPU-direct chunks need a transport that reaches GPU memory (ibverbs
    // with dma-buf or peer memory); tcp and shm move host bytes only. As
    // issue 6's modes say: gds on fails with the reason, auto falls back to
    // the bounce path and says so in the run's log.
    ScenarioSpec run_spec = spec;
    if (spec.fs.gds != GdsMode::off) {
      const std::string why = gpu_unreachable_by(options.transport);
      if (!why.empty() && spec.fs.gds == GdsMode::on)
        return finish("hw: GDS on: " + why + "; use gds=\"auto\" or \"off\"");
      if (!why.empty()) {
        run_spec.fs.gds = GdsMode::off;
        // Said only where it matters: host-memory workloads never go GPU-direct.
        if (uses_gpu_memory(spec)) result.log_tail.push_back("hw: GDS auto -> bounce: " + why);
      }
    }
    for (std::size_t i = 0; i < spec.workloads.size(); ++i) {
      Result<WorkloadRun> check = WorkloadRun::create(spec.workloads[i], i, *spec.cluster);
      if (!check.ok()) return finish(check.status().message());
    }
    HwRunDir dir(options.temp_root, options.keep);
    if (dir.path().empty()) return finish("hw: cannot make a temporary directory under " + options.temp_root);
    if (options.keep) result.log_tail.push_back("hw: --keep: the run's files stay in " + dir.path());
    hw::HwWorldConfig config;
    config.seed = spec.seed;
    config.transport = options.transport;
    config.storage_backend = options.storage_backend;
    config.storage_root = dir.path() + "/storage";
    result.deployment = deployment_of(options, dir.path());
    config.node_memory_limit_bytes = options.node_memory_limit_bytes;
    config.log = [](std::string_view line) { note_child_log(line); };
    if (Status st = secure(options, config, result); !st.ok()) return finish(st.message());
    config.gpu_memory = options.gpu_memory;
    std::optional<HwFaultWorld> fault_world;
    if (!spec.faults.faults.empty()) {
      fault_world.emplace(spec.seed);
      config.message_hook = fault_world->hook();
      config.wrap_storage_backend = fault_world->wrap();
    }
    std::string why;
    {
      hw::HwWorld world(config);
      if (fault_world) fault_world->attach(world);
      why = run_deployed(run_spec, world, fault_world ? &*fault_world : nullptr,
                         meta_store_of(options, dir.path() + "/meta", result), result);
    }
    return finish(why);
  } catch (const std::exception& e) {
    return finish(std::string("the hw run threw: ") + e.what());
  }
}

}  // namespace sluice::scenario
