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
#include "scenarios/runner/run_workloads.hpp"
#include "scenarios/runner/runner.hpp"
#include "scenarios/runner/workload_run.hpp"

namespace sluice::scenario {

void set_paths_taken(RunResult& result) {
  result.paths_taken["direct"] = static_cast<std::uint64_t>(result.counters["client.chunks_direct"]);
  result.paths_taken["bounce"] = static_cast<std::uint64_t>(result.counters["client.chunks_bounce"]);
}

std::string gpu_unreachable_by(const std::string& transport) {
  for (const transport::TransportListing& t : transport::list_transports()) {
    if (t.name != transport) continue;
    const bool gpu = t.capabilities.reaches(transport::RegionKind::cuda);
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

}  // namespace

// A point on this machine's threads (run_workloads.hpp). HwWorld starts its
// services together: every workload's ranks are made before it starts, each
// workload's started when it begins. Services run on their own threads:
// every look at one goes through HwWorld::call. The ranks' metrics are read
// once every thread has ended (finish).
template <>
class PointSite<hw::HwWorld> {
 public:
  using FaultWorld = HwFaultWorld;
  // The fault loop checks whether the workload finished this often (real time).
  static constexpr TimeNs k_fault_slice_ns = 100 * k_ns_per_ms;

  PointSite(hw::HwWorld& world, HwFaultWorld* fault_world, MetaStoreFn meta_store)
      : world_(world), fault_world_(fault_world), meta_store_(std::move(meta_store)) {}

  hw::HwWorld& world() { return world_; }
  HwFaultWorld* fault_world() { return fault_world_; }

  Result<FsDeployment> deploy(const ScenarioSpec& spec) {
    return FsDeployment::deploy(
        world_, spec, [this](TargetId target, NodeId node, std::uint32_t) { return world_.add_target(target, node); },
        meta_store_);
  }

  std::string bring_up(const FsDeployment& fs, std::vector<WorkloadRun>& runs) {
    // A metadata server's store commits the loop turn's mutations before the
    // turn's replies leave (meta_store_of opens them with group_commit).
    for (MetaService* meta : fs.metas()) {
      world_.before_messages_leave(*meta,
                                   [](Service& now) { dynamic_cast<MetaService&>(now).commit_store().ignore(); });
    }
    hosts_.resize(runs.size());
    envs_.resize(runs.size());
    for (std::size_t index = 0; index < runs.size(); ++index) {
      WorkloadRun& run = runs[index];
      envs_[index].assign(run.ranks(), nullptr);  // not resized again: the workloads keep pointers into it
      for (std::uint32_t rank = 0; rank < run.ranks(); ++rank) {
        ClientHostConfig config = fs.client_host_config(run, rank);
        config.client.planner.topology = nullptr;  // this machine, not the modelled one: one loopback rail
        auto workload = std::make_unique<EnvRecordingWorkload>(run.make(rank), &envs_[index][rank]);
        ClientHost& host = world_.add_service<ClientHost>(run.node_of(rank), config, std::move(workload));
        world_.defer_start(host);
        hosts_[index].push_back(&host);
      }
    }
    if (Status s = world_.start(); !s.ok()) return "hw world did not start: " + s.to_string();
    return wait_for_registration(world_, fs);
  }

  std::vector<ClientHost*> begin(const FsDeployment&, WorkloadRun&, std::size_t index) {
    for (ClientHost* h : hosts_[index]) world_.start_service(*h);
    return hosts_[index];
  }

  std::string wait(const std::function<bool()>& all_finished) {
    return world_.wait_until(all_finished, k_hw_max_workload_ns) ? "" : " within k_hw_max_workload_ns";
  }
  void end(const FsDeployment&, WorkloadRun&, std::size_t, RunResult&) {}  // rows once the threads end (finish)

  bool finished(ClientHost& h) {
    return world_.call(h, [&h] { return h.finished(); });
  }
  Status status(ClientHost& h) {
    return world_.call(h, [&h] { return h.result(); });
  }
  std::string name(ClientHost& h) {
    return world_.call(h, [&h] { return h.name(); });
  }

  void finish(const FsDeployment& fs, std::vector<WorkloadRun>& runs, std::size_t ran, RunResult& result) {
    // What the faults did, while the targets' backends (which count the slow
    // disk's held completions) still exist.
    if (fault_world_ != nullptr) {
      result.counters["faults.messages_dropped"] = static_cast<double>(fault_world_->messages_dropped());
      result.counters["faults.messages_delayed"] = static_cast<double>(fault_world_->messages_delayed());
      result.counters["faults.storage_completions_slowed"] = static_cast<double>(fault_world_->completions_slowed());
      fault_world_->detach_backends();  // stop() frees them
    }
    world_.stop();  // every thread ends: results and metrics are read without races below
    for (std::size_t index = 0; index < ran; ++index) add_rows(fs, runs[index], envs_[index], result);
    for (const char* name : k_hw_server_counters) result.counters[name] = world_.counter(name);
    // Each kind of service's loop-thread CPU (cpu.storage_thread_ns, ...): over
    // storage.requests, what a chunk request costs a storage server's thread.
    for (const auto& [kind, ns] : world_.thread_cpu_ns()) result.counters["cpu." + kind + "_thread_ns"] = ns;
    set_paths_taken(result);
    const std::vector<std::string> logs = world_.logs();
    for (std::size_t i = logs.size() > k_log_tail_lines ? logs.size() - k_log_tail_lines : 0; i < logs.size(); ++i) {
      result.log_tail.push_back(logs[i]);
    }
  }

 private:
  // A workload's phase rows from its ranks' metrics (their Envs').
  static void add_rows(const FsDeployment& fs, WorkloadRun& run, const std::vector<Env*>& ranks, RunResult& result) {
    MetricWindow window;
    std::vector<hw::HwEnv*> envs;
    for (Env* e : ranks) {
      if (auto* h = dynamic_cast<hw::HwEnv*>(e)) envs.push_back(h);
    }
    for (hw::HwEnv* e : envs) {
      for (const auto& [name, value] : e->counters()) {
        window.counters[name] += value;
        result.counters[name] += value;
      }
    }
    // The phases the ranks ran, to name their samples.
    for (const PhaseRow& row : run.rows(window, fs.targets())) {
      for (const char* suffix : k_phase_samples) {
        const std::string name = run.metric_name() + "." + row.phase + "." + suffix;
        for (hw::HwEnv* e : envs) {
          std::vector<double> values = e->samples(name);
          auto& into = window.samples[name];
          into.insert(into.end(), values.begin(), values.end());
        }
      }
    }
    for (PhaseRow& row : run.rows(window, fs.targets())) result.phases.push_back(std::move(row));
  }

  hw::HwWorld& world_;
  HwFaultWorld* fault_world_;
  MetaStoreFn meta_store_;
  std::vector<std::vector<ClientHost*>> hosts_;  // by workload, by rank
  std::vector<std::vector<Env*>> envs_;          // by workload, by rank: set when the rank starts
};

namespace {

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
// RocksDB ones group-commit (PointSite<hw::HwWorld> commits them before each turn's replies).
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
    config.group_commit = true;  // PointSite<hw::HwWorld> commits before each loop turn's replies leave
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
    // GPU-direct chunks need a transport that reaches GPU memory (ucx built
    // with CUDA support); tcp and shm move host bytes only. As
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
      PointSite<hw::HwWorld> site(world, fault_world ? &*fault_world : nullptr,
                                  meta_store_of(options, dir.path() + "/meta", result));
      why = run_workloads(run_spec, site, result);
    }
    return finish(why);
  } catch (const std::exception& e) {
    return finish(std::string("the hw run threw: ") + e.what());
  }
}

}  // namespace sluice::scenario
