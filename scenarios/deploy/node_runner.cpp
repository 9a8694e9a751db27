#include "scenarios/deploy/node_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <optional>
#include <mutex>
#include <condition_variable>
#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <tuple>

#include "core/common/assert.hpp"
#include "core/namespace/name_hash.hpp"
#include "core/services/meta_service.hpp"
#include "core/services/mgmt_service.hpp"
#include "core/services/storage_service.hpp"
#include "core/workloads/barrier_service.hpp"
#include "core/workloads/client_host.hpp"
#include "hw/hw_world.hpp"
#if SLUICE_HAVE_ROCKSDB
#include "hw_backends/rocksdb/rocksdb_meta_store.hpp"
#endif
#include "scenarios/deploy/bootstrapped_transport.hpp"
#if SLUICE_HAVE_FUSE
#include "scenarios/mount/mount_client.hpp"
#include "scenarios/runner/hw_point_run.hpp"
#endif
#include "transports/shared_secret.hpp"

namespace sluice::emulate {
namespace {

// Counters every node reports (summed over its services), besides those of
// a hardware run (scenario::k_hw_server_counters).
constexpr std::string_view k_reported_counters[] = {"client.crc_mismatches",
                                                    // Issue 26: retries that found their request still executing, or
                                                    // answered; the bytes each sweep phase checked against the pattern.
                                                    "rpc.in_progress_replies", "storage.duplicate_in_progress",
                                                    "storage.duplicate_answered", "file_sweep.read.verified_bytes",
                                                    // Issue 18: messages to a peer process that was gone.
                                                    "net.messages_undeliverable",
                                                    // Issue 53: a mount's lookups, and the entries the
                                                    // kernel got from listings instead (readdirplus).
                                                    "mount.lookups", "mount.listed_with_attrs",
                                                    // Unanswered metadata requests sent again.
                                                    "client.meta_resends", "meta.duplicate_in_progress"};

// Stands in the world for a service that another process hosts, so that
// endpoint indices are the same everywhere. Never started.
class PlaceholderService final : public Service {
 public:
  explicit PlaceholderService(Env& /*env*/) {}
  void start() override {}
  void on_event(Event& /*event*/) override {}
  std::string name() const override { return "placeholder"; }
};

std::string join_rails(const transport::PeerAddress& a) {
  std::string s;
  for (const std::string& r : a.rails) s += (s.empty() ? "" : " ") + r;
  return s;
}

transport::PeerAddress split_rails(const std::string& text) {
  transport::PeerAddress a;
  std::istringstream in(text);
  std::string rail;
  while (in >> rail) a.rails.push_back(rail);
  return a;
}

struct LocalServices {
  std::vector<Service*> servers;  // meta and storage: start after mgmt, wait for registration
  std::vector<Service*> early;    // mgmt and barrier
  std::vector<ClientHost*> clients;
  std::vector<FileSweep*> sweeps;        // parallel to clients; null for a mount or a given workload
  std::vector<Workload*> mounts;         // parallel to clients: the mount's workload, or null
  std::vector<std::uint32_t> ranks;      // parallel to clients: the client rank
  std::vector<std::uint32_t> workloads;  // parallel to clients: which workload (0: the first)
  // NodeRunOptions::make_workload / rank_results (empty: the config's FileSweep).
  std::function<std::unique_ptr<Workload>(std::uint32_t workload, std::uint32_t rank)> make_workload;
  std::function<std::vector<RankPhaseResult>(std::uint32_t workload, std::uint32_t rank)> rank_results;
  const NodeRunOptions::FsSettings* fs = nullptr;  // NodeRunOptions::fs, or null
  std::map<Role, Service*> server_of;              // meta, meta_mirror, storage: this node's (at most one each)
};

// What the options give the services this node will host (filed in it as they are made).
LocalServices local_services_of(const NodeRunOptions& options) {
  LocalServices local;
  local.make_workload = options.make_workload;
  local.rank_results = options.rank_results;
  local.fs = options.fs ? &*options.fs : nullptr;
  return local;
}

// 1-2. The node's transport (ClusterConfig::transport) into table.local, then every node's listen
// address into table.addresses; this node's address.
Result<transport::PeerAddress> open_endpoints(const NodeRunOptions& options, const std::vector<NodeSpec>& nodes,
                                              const NodeSpec& me, const std::string& where, Bootstrap& bootstrap,
                                              TransportTable& table, std::shared_ptr<std::atomic<bool>> quiet) {
  const ClusterConfig& config = options.config;
  register_bootstrapped_transport();
  transport::TransportConfig tc;
  tc.local_id = me.id;
  tc.rail_addresses.assign(config.rails_per_node, me.address + ":0");
  if (!options.listen_rails.empty()) {
    if (options.listen_rails.size() != config.rails_per_node) {
      return error(StatusCode::invalid_argument, where + ": " + std::to_string(options.listen_rails.size()) +
                                                     " listen rails given for " +
                                                     std::to_string(config.rails_per_node) + " rails per node");
    }
    tc.rail_addresses = options.listen_rails;
  }
  tc.connections_per_rail = config.connections_per_rail;
  tc.shared_secret = config.shared_secret;
  // quiet: set once every node's clients are done; peers lost after that are
  // the other nodes shutting down, not news.
  tc.log = [sink = options.log, where, quiet](std::string_view line) {
    if (sink && !quiet->load()) sink(where + " transport: " + std::string(line));
  };
  Result<std::unique_ptr<transport::Transport>> made = transport::create_transport(config.transport, tc);
  if (!made.ok()) {
    return error(made.status().code(), where + ": transport " + config.transport + ": " + made.status().message());
  }
  table.local_node = me.id;
  table.local = std::move(made).value();
  const transport::PeerAddress my_address = table.local->listen_address();
  Result<std::vector<std::string>> all = bootstrap.all_gather(join_rails(my_address));
  if (!all.ok()) return error(all.status().code(), where + ": endpoint exchange: " + all.status().message());
  for (std::size_t i = 0; i < nodes.size(); ++i) table.addresses[nodes[i].id] = split_rails((*all)[i]);
  return my_address;
}

hw::HwWorldConfig world_config(const NodeRunOptions& options) {
  const ClusterConfig& config = options.config;
  hw::HwWorldConfig wc;
  wc.seed = config.seed;
  wc.transport = std::string(k_bootstrapped_transport);
  wc.rails_per_node = config.rails_per_node;
  wc.connections_per_rail = config.connections_per_rail;
  wc.storage_backend = config.storage_backend;
  wc.storage_root = config.storage_root + "/" + config.run_id;
  wc.node_memory_limit_bytes = config.node_memory_limit_bytes;
  wc.gpu_memory = options.gpu_memory;
  // Every process of the run must derive the same region keys: from the
  // secret (HwWorld does), else from the run id (an insecure run).
  wc.shared_secret = config.shared_secret;
  if (config.shared_secret.empty()) {
    wc.region_key_salt = fnv_1a_64(config.run_id) | 1;
  }
  wc.log = [sink = options.log](std::string_view line) {
    if (sink) sink(line);
  };
  return wc;
}

// A client of the plan: a FileSweep of the config's workload in a ClientHost, filed in local.
ClientHost& add_client(hw::HwWorld& world, const PlannedService& s, const ServicePlan& plan,
                       const ClusterConfig& config, TimeNs max_wait_ns, LocalServices& local) {
  FileSweepConfig sweep = config.workload.sweep;
  sweep.run_tag = config.run_id;
  sweep.barrier_max_wait_ns = max_wait_ns;
  sweep.create.stripe_count = config.workload.stripe_count;
  std::unique_ptr<Workload> workload;
  FileSweep* sweep_ptr = nullptr;
  Workload* mount_ptr = nullptr;
  if (config.workload.mounted()) {
#if SLUICE_HAVE_FUSE
    workload = std::make_unique<mount::MountWorkload>();
    mount_ptr = workload.get();
#endif
  } else if (local.make_workload) {
    workload = local.make_workload(s.workload, s.rank);
  } else {
    auto made = std::make_unique<FileSweep>(sweep);
    sweep_ptr = made.get();
    workload = std::move(made);
  }
  ClientHostConfig hc;
  if (local.fs != nullptr && local.fs->client) hc = local.fs->client(s.workload, s.rank);
  hc.client.mgmt = plan.mgmt;
  if (local.fs == nullptr) hc.client.ns.shard_count = plan.meta_shards;
  SLUICE_ASSERT(hc.client.ns.shard_count == plan.meta_shards);
  hc.rank = s.rank;
  hc.ranks = plan.client_ranks.at(s.workload);
  hc.barrier = plan.barrier;
  ClientHost& host = world.add_service<ClientHost>(s.node, hc, std::move(workload));
  local.clients.push_back(&host);
  local.sweeps.push_back(sweep_ptr);
  local.mounts.push_back(mount_ptr);
  local.ranks.push_back(s.rank);
  local.workloads.push_back(s.workload);
  return host;
}

// The durable store of a metadata service of the plan (ClusterConfig::meta_store); empty: in memory.
std::function<Result<std::unique_ptr<MetaStore>>()> meta_store_opener(const ClusterConfig& config,
                                                                      const PlannedService& s) {
  if (config.meta_store != "rocksdb") return {};
#if SLUICE_HAVE_ROCKSDB
  hw::RocksDbMetaStoreConfig store;
  store.path = config.storage_root + "/" + config.run_id + "/node" + std::to_string(s.node) + "/meta-shard" +
               std::to_string(s.shard);
  store.sync_writes = true;
  store.group_commit = true;  // committed before each loop turn's replies leave (the meta role's hook)
  return hw::rocksdb_store_opener(std::move(store));
#else
  (void)s;
  return {};  // said in the node's results ("meta_store": "memory")
#endif
}

// mgmt of the deployment: with mirror.storage, the buddy groups and the
// heartbeat watch that switches a group whose primary goes silent.
MgmtConfig mgmt_config(const ClusterConfig& config, const NodeRunOptions::FsSettings* fs) {
  MgmtConfig mc = fs != nullptr ? fs->mgmt : MgmtConfig{};
  if (!config.mirror.storage && !config.mirror.metadata) return mc;
  mc.meta_mirror = config.mirror.metadata;
  Result<std::vector<proto::BuddyGroupDesc>> groups = buddy_groups(config);  // validate() checked it
  if (groups.ok()) mc.buddy_groups = std::move(groups).value();
  mc.check_interval_ns = static_cast<TimeNs>(config.mirror.heartbeat_ms) * k_ns_per_ms;
  mc.probably_offline_after_ns = static_cast<TimeNs>(config.mirror.probably_offline_ms) * k_ns_per_ms;
  mc.offline_after_ns = static_cast<TimeNs>(config.mirror.offline_ms) * k_ns_per_ms;
  return mc;
}

// The config's faults on this node's storage service, each at its time from
// "servers-up", on a thread of their own; stop() (also the destructor) ends
// the waits and joins it before the world stops.
class NodeFaults {
 public:
  NodeFaults(hw::HwWorld& world, const ClusterConfig& config, const NodeSpec& me, const LocalServices& local,
             std::function<void(const std::string&)> log) {
    std::vector<Planned> mine;
    for (const ClusterFault& f : config.faults) {
      const auto it = local.server_of.find(f.role);
      if (f.node == me.id && it != local.server_of.end()) mine.push_back(Planned{f, world.endpoint_of(*it->second)});
    }
    if (mine.empty()) return;
    std::sort(mine.begin(), mine.end(),
              [](const Planned& a, const Planned& b) { return a.fault.at_ms < b.fault.at_ms; });
    thread_ = std::thread([this, &world, mine, log] { run(world, mine, log); });
  }
  ~NodeFaults() { stop(); }
  NodeFaults(const NodeFaults&) = delete;
  NodeFaults& operator=(const NodeFaults&) = delete;
  void stop() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  using Clock = std::chrono::steady_clock;
  // False when stopped before `until`.
  bool wait_until(Clock::time_point until) {
    std::unique_lock lock(mu_);
    return !cv_.wait_until(lock, until, [this] { return stopping_; });
  }
  struct Planned {
    ClusterFault fault;
    Endpoint service;
  };
  void run(hw::HwWorld& world, const std::vector<Planned>& faults, const std::function<void(const std::string&)>& log) {
    const Clock::time_point start = Clock::now();
    for (const auto& [f, service] : faults) {
      const std::string what = "the " + std::string(to_string(f.role)) + " service";
      if (!wait_until(start + std::chrono::milliseconds(f.at_ms))) return;
      log("fault: " + what + " is killed");
      world.kill(service);
      if (f.restart_after_ms == 0) continue;
      if (!wait_until(Clock::now() + std::chrono::milliseconds(f.restart_after_ms))) return;
      const Status restarted = world.restart(service);
      log("fault: " + what + " restarts: " + restarted.to_string());
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

// One service of the plan that this node hosts, filed in local by its role.
Service* add_local_service(hw::HwWorld& world, const PlannedService& s, const ServicePlan& plan,
                           const ClusterConfig& config, const NodeSpec& me, TimeNs max_wait_ns, LocalServices& local) {
  Service* created = nullptr;
  switch (s.role) {
    case Role::mgmt:
      if (s.barrier) {
        created = &world.add_service<BarrierService>(s.node);
      } else {
        created = &world.add_service<MgmtService>(s.node, mgmt_config(config, local.fs));
      }
      local.early.push_back(created);
      break;
    case Role::meta:
    case Role::meta_mirror: {
      MetaServiceConfig mc;
      if (local.fs != nullptr) {
        mc = local.fs->meta;
      } else {
        mc.ns.shard_count = plan.meta_shards;
        mc.default_chunk_bytes = config.workload.chunk_bytes;
        mc.default_stripe_count = config.stripe_count();
      }
      SLUICE_ASSERT(mc.ns.shard_count == plan.meta_shards);
      mc.shard = s.shard;
      mc.mgmt = plan.mgmt;
      // Metadata buddy mirroring: the shard's two servers; mgmt makes the first to register primary
      // unless it is the second (MetaMirrorConfig).
      mc.mirror.enabled = config.mirror.metadata;
      mc.mirror.second = s.role == Role::meta_mirror;
      mc.open_store = meta_store_opener(config, s);
      mc.mirror_file_data = config.mirror.storage;  // new files go to buddy groups
      created = &world.add_service<MetaService>(s.node, mc);
      // Its RocksDB store group-commits (meta_store_opener): each loop turn's
      // mutations before the turn's replies leave.
      world.before_messages_leave(*created,
                                  [](Service& now) { dynamic_cast<MetaService&>(now).commit_store().ignore(); });
      local.servers.push_back(created);
      local.server_of[s.role] = created;
      break;
    }
    case Role::storage: {
      StorageServiceConfig sc = local.fs != nullptr ? local.fs->storage : StorageServiceConfig{};
      sc.mgmt = plan.mgmt;
      sc.targets = me.targets;
      if (config.mirror.storage) {
        sc.mirror.enabled = true;
        sc.heartbeat_interval_ns = static_cast<TimeNs>(config.mirror.heartbeat_ms) * k_ns_per_ms;
      }
      created = &world.add_service<StorageService>(s.node, sc);
      local.servers.push_back(created);
      local.server_of[s.role] = created;
      break;
    }
    case Role::client: created = &add_client(world, s, plan, config, max_wait_ns, local); break;
  }
  return created;
}

// 3. The world: this node's targets, every planned service (real ones for
// this node only, placeholders for the others'), mgmt and barrier started.
Status build_world(hw::HwWorld& world, const std::string& storage_root, TransportTable& table,
                   const ClusterConfig& config, const NodeSpec& me, const std::string& where, TimeNs max_wait_ns,
                   LocalServices& local) {
  const ServicePlan plan = plan_services(config);
  Status build = ok_status();
  if (!me.targets.empty()) {
    std::error_code ec;  // HwWorld makes the last two levels (node<N>/target<T>) itself
    std::filesystem::create_directories(storage_root, ec);
    if (ec) build = error(StatusCode::io_error, where + ": cannot create " + storage_root + ": " + ec.message());
  }
  TransportTableScope scope(table);
  for (TargetId t : me.targets) {
    if (!build.ok()) break;
    build = world.add_target(t, me.id);
  }
  for (const PlannedService& s : plan.services) {
    if (!build.ok()) break;
    if (s.node != me.id) {
      world.defer_start(world.add_service<PlaceholderService>(s.node));
      continue;
    }
    Service* created = add_local_service(world, s, plan, config, me, max_wait_ns, local);
    if (world.endpoint_of(*created) != Endpoint{s.node, s.index}) {
      build = error(StatusCode::internal, where + ": service " + created->name() + " got endpoint " +
                                              world.endpoint_of(*created).to_string() + ", planned " +
                                              Endpoint{s.node, s.index}.to_string());
    }
    if (s.role != Role::mgmt) world.defer_start(*created);
  }
  if (build.ok()) build = world.start();
  return build;
}

// 4. Starts the meta and storage servers; timed out when they do not register
// with mgmt in time, nor, on the mgmt node, the metadata mirrors come in sync.
Status start_servers(hw::HwWorld& world, const LocalServices& local, const ClusterConfig& config,
                     const std::string& where, TimeNs max_wait_ns, const std::function<bool()>& stop_requested) {
  for (Service* s : local.servers) world.start_service(*s);
  const std::uint32_t shards = plan_services(config).meta_shards;
  std::string store_failed;  // a metadata store that could not be opened ends the wait at once
  bool stopped = false;
  const bool registered = world.wait_until(
      [&] {
        if (stop_requested && stop_requested()) return stopped = true;
        for (Service* s : local.servers) {
          if (auto* m = dynamic_cast<MetaService*>(s)) {
            store_failed = world.call(*s, [m] { return m->store_failure().ok() ? "" : m->store_failure().message(); });
            if (!store_failed.empty()) return true;
          }
          // A mirrored metadata server answers nothing before mgmt told it its
          // role (as FsDeployment::registered waits for it).
          const bool done = world.call(*s, [s] {
            if (auto* m = dynamic_cast<MetaService*>(s)) {
              return m->registered() && m->mirror_role() != MetaService::MirrorRole::unknown;
            }
            return static_cast<StorageService*>(s)->registered();
          });
          if (!done) return false;
        }
        // The mgmt node: every metadata mirror in sync (MgmtService::meta_mirrors_in_sync).
        for (Service* s : local.early) {
          auto* mgmt = dynamic_cast<MgmtService*>(s);
          if (mgmt != nullptr && !world.call(*s, [mgmt, shards] { return mgmt->meta_mirrors_in_sync(shards); }))
            return false;
        }
        return true;
      },
      max_wait_ns);
  if (!store_failed.empty()) {
    return error(StatusCode::unavailable, where + ": a metadata server cannot open its store: " + store_failed);
  }
  if (stopped) return error(StatusCode::unavailable, where + ": stopped (SIGINT/SIGTERM) while servers registered");
  if (!registered) {
    return error(StatusCode::timed_out,
                 where + ": servers did not register with mgmt (and metadata mirrors come in sync) within " +
                     std::to_string(config.max_wait_s) + " s");
  }
  return ok_status();
}

// A results document's "phases" entries of one client's ranks of `workload`.
void add_phase_results(nlohmann::json& phases, std::uint32_t workload, const std::vector<RankPhaseResult>& results) {
  for (const RankPhaseResult& r : results) {
    const double rate = r.elapsed_ns > 0 ? static_cast<double>(r.bytes) * 1e9 / static_cast<double>(r.elapsed_ns) : 0.0;
    phases.push_back({{"workload", workload},
                      {"phase", r.phase},
                      {"rank", r.rank},
                      {"bytes", r.bytes},
                      {"ops", r.ops},
                      {"elapsed_ns", r.elapsed_ns},
                      {"bytes_per_s", rate}});
  }
}

// 5, for workload kind "mount": the node's client serves a FUSE mount until it is unmounted.
Status serve_mounts(hw::HwWorld& world, const LocalServices& local, const ClusterConfig& config,
                    const std::string& where, TimeNs max_wait_ns, const std::function<void(std::string_view)>& log) {
#if SLUICE_HAVE_FUSE
  if (local.clients.size() != 1) {
    return error(StatusCode::invalid_argument,
                 where + ": a node mounts with one client, it has " + std::to_string(local.clients.size()));
  }
  const ClusterMount& m = config.workload.mount;
  mount::MountOptions options;
  options.mount_point = m.mount_point;
  options.direct_io = m.direct_io;
  options.sync_writes = m.sync_writes;
  options.entry_timeout_s = m.entry_timeout_ms / 1e3;
  options.attr_timeout_s = m.attr_timeout_ms / 1e3;
  options.threads = m.threads;
  options.fs_name = "sluice-" + config.run_id;
  mount::MountedClient client{world, *local.clients.front(), *static_cast<mount::MountWorkload*>(local.mounts.front()),
                              world.endpoint_of(*local.clients.front()).node};
  Status served = mount::run_mount_client(client, options, max_wait_ns, log);
  if (!served.ok()) return error(served.code(), where + ": " + served.message());
  return ok_status();
#else
  (void)world, (void)local, (void)config, (void)max_wait_ns, (void)log;
  return error(StatusCode::unavailable,
               where + ": this build has no FUSE (Debian libfuse3-dev was missing at configure time): cannot mount");
#endif
}

// 5. Starts this node's clients of `workload` and waits until they finish;
// their phases go to `phases`. Timed out, or the first client's error.
Status run_clients(hw::HwWorld& world, const LocalServices& local, std::uint32_t workload, const ClusterConfig& config,
                   const std::string& where, TimeNs max_wait_ns, const std::function<bool()>& stop_requested,
                   nlohmann::json& phases) {
  Status status = ok_status();
  std::vector<std::size_t> mine;
  for (std::size_t i = 0; i < local.clients.size(); ++i) {
    if (local.workloads[i] == workload) mine.push_back(i);
  }
  if (mine.empty()) return status;
  for (std::size_t i : mine) world.start_service(*local.clients[i]);
  bool stopped = false;
  const bool finished = world.wait_until(
      [&] {
        if (stop_requested && stop_requested()) return stopped = true;
        for (std::size_t i : mine) {
          ClientHost* h = local.clients[i];
          if (!world.call(*h, [h] { return h->finished(); })) return false;
        }
        return true;
      },
      max_wait_ns);
  if (stopped) {
    status = error(StatusCode::unavailable, where + ": stopped (SIGINT/SIGTERM) before the workload finished");
  } else if (!finished) {
    status = error(StatusCode::timed_out,
                   where + ": the workload did not finish within " + std::to_string(config.max_wait_s) + " s");
  }
  for (std::size_t i : mine) {
    ClientHost* h = local.clients[i];
    FileSweep* sweep = local.sweeps[i];
    const std::uint32_t rank = local.ranks[i];
    const auto [done, result, results] = world.call(*h, [h, sweep, workload, rank, &local] {
      std::vector<RankPhaseResult> r = sweep != nullptr ? sweep->results() : local.rank_results(workload, rank);
      return std::make_tuple(h->finished(), h->finished() ? h->result() : Status{}, std::move(r));
    });
    if (done && !result.ok() && status.ok()) status = error(result.code(), where + ": " + result.message());
    add_phase_results(phases, workload, results);
  }
  return status;
}

// What the nodes said after a workload: the first failure.
std::string_view workload_failure(const std::vector<std::string>& said) {
  for (const std::string& s : said) {
    if (!s.empty()) return s;
  }
  return {};
}

// A node with clients of later workloads needs the launcher's workloads.
Status check_workloads(const NodeRunOptions& options, const NodeSpec& me) {
  if (options.config.later_workloads.empty() || !me.has(Role::client) || options.make_workload) return ok_status();
  return error(StatusCode::invalid_argument, "node " + std::to_string(me.id) +
                                                 ": later_workloads need the launcher's workloads (the cluster "
                                                 "path); the config's file sweep is one workload");
}

// 5. The node's part of each workload in turn, or its mount: after each
// workload but the last, an all_gather says which nodes failed it, and then
// no node starts the next. node_status in and out; not ok: a collective
// failed (the run ends with it).
Status run_workloads(hw::HwWorld& world, const LocalServices& local, const NodeRunOptions& options, const NodeSpec& me,
                     Bootstrap& bootstrap, const std::function<void(const std::string&)>& log, Status& node_status,
                     nlohmann::json& phases) {
  const ClusterConfig& config = options.config;
  const std::string where = "node " + std::to_string(me.id);
  const TimeNs max_wait_ns = static_cast<TimeNs>(config.max_wait_s) * k_ns_per_s;
  if (node_status.ok() && !local.clients.empty() && config.workload.mounted()) {
    node_status = serve_mounts(world, local, config, where, max_wait_ns,
                               [&log](std::string_view line) { log(std::string(line)); });
  }
  bool others_failed = false;
  for (std::uint32_t w = 0; w < config.workload_count(); ++w) {
    if (node_status.ok() && !others_failed && !config.workload.mounted()) {
      node_status = run_clients(world, local, w, config, where, max_wait_ns, options.stop_requested, phases);
    }
    if (w + 1 == config.workload_count()) break;
    Result<std::vector<std::string>> done = bootstrap.all_gather(node_status.ok() ? std::string() : where + " failed");
    if (!done.ok()) return error(done.status().code(), where + ": " + done.status().message());
    const std::string_view failed = workload_failure(*done);
    others_failed = others_failed || !failed.empty();
    if (others_failed && node_status.ok()) log("later workloads not started: " + std::string(failed));
  }
  return ok_status();
}

// 6. The node's results document (the world stopped).
nlohmann::json node_document(const ClusterConfig& config, const NodeSpec& me, const Bootstrap& bootstrap,
                             const Status& node_status, const transport::PeerAddress& my_address,
                             const nlohmann::json& phases, const hw::HwWorld& world) {
  nlohmann::json roles = nlohmann::json::array();
  for (Role r : me.roles) roles.push_back(std::string(to_string(r)));
  nlohmann::json counters = nlohmann::json::object();
  for (std::string_view name : k_reported_counters) counters[std::string(name)] = world.counter(name);
  for (const char* name : scenario::k_hw_server_counters) counters[name] = world.counter(name);
  for (const char* name : scenario::k_hw_path_counters) counters[name] = world.counter(name);
  return {{"node", me.id},
          {"rank", bootstrap.rank()},
          {"roles", roles},
          {"ok", node_status.ok()},
          {"status", node_status.to_string()},
          {"addresses", my_address.rails},
          {"authenticated", !config.shared_secret.empty()},
          {"meta_store", SLUICE_HAVE_ROCKSDB ? config.meta_store : std::string("memory")},
          {"phases", phases},
          {"counters", counters},
          // train_epoch's AU of each rank and epoch (SpecDeployment::result_of: the epoch row's au_pct).
          {"train_epoch_au_ratios", world.samples("train_epoch.epoch.au_ratio")}};
}

}  // namespace

PhaseTotal phase_total(const nlohmann::json& run, std::string_view phase) {
  PhaseTotal t;
  if (!run.contains("nodes")) return t;
  const std::string verified_suffix = "." + std::string(phase) + ".verified_bytes";
  for (const auto& node : run["nodes"]) {
    if (node.contains("counters") && node["counters"].is_object()) {
      for (const auto& [name, value] : node["counters"].items()) {
        if (name.size() > verified_suffix.size() && name.ends_with(verified_suffix) && value.is_number()) {
          t.verified_bytes += static_cast<std::uint64_t>(value.get<double>());
        }
      }
    }
    if (!node.contains("phases")) continue;
    for (const auto& p : node["phases"]) {
      if (p.value("phase", "") != phase) continue;
      t.bytes += p.value("bytes", std::uint64_t{0});
      t.elapsed_ns = std::max<TimeNs>(t.elapsed_ns, p.value("elapsed_ns", TimeNs{0}));
    }
  }
  if (t.elapsed_ns > 0) t.bytes_per_s = static_cast<double>(t.bytes) * 1e9 / static_cast<double>(t.elapsed_ns);
  return t;
}

std::string phase_summary_line(const nlohmann::json& run, std::string_view phase) {
  const PhaseTotal t = phase_total(run, phase);
  if (t.bytes == 0) return {};
  std::string checked;
  if (!run.contains("ok") || !run["ok"].is_boolean() || !run["ok"].get<bool>()) {
    checked = "the run FAILED: not verified";
  } else if (phase == "write") {
    checked = "each chunk's CRC32C checked by its server";
  } else if (t.verified_bytes == t.bytes) {
    checked = "every byte verified";
  } else {
    checked = fmt::format("{} of them verified against the pattern", t.verified_bytes);
  }
  return fmt::format("{:<5} {:>12} bytes in {:.3f} s: {:.1f} MB/s ({:.3f} Gbit/s), {}", phase, t.bytes,
                     static_cast<double>(t.elapsed_ns) / 1e9, t.bytes_per_s / 1e6, t.bytes_per_s * 8 / 1e9, checked);
}

namespace {

// Authentication is on unless the config says insecure: the secret from its file.
Result<std::string> node_secret(const ClusterConfig& config) {
  if (config.shared_secret_file.empty()) {
    return error(StatusCode::invalid_argument,
                 "node: no shared secret: connections are authenticated by default; give the cluster JSON a "
                 "shared_secret_file (or --shared-secret-file), or \"insecure\": true");
  }
  Result<std::string> secret = transport::read_shared_secret_file(config.shared_secret_file);
  if (!secret.ok()) return error(secret.status().code(), "node: " + secret.status().message());
  return secret;
}

}  // namespace

namespace {
constexpr std::string_view k_workload_step_prefix = "all_gather workload-";
}  // namespace

std::vector<std::string> node_collectives(const ClusterConfig& config) {
  std::vector<std::string> steps = {"all_gather ", "barrier mgmt-up", "barrier servers-up"};
  for (std::size_t w = 0; w + 1 < config.workload_count(); ++w) {
    steps.push_back(std::string(k_workload_step_prefix) + std::to_string(w) + "-done");
  }
  for (const char* last : {"barrier clients-done", "barrier stopping", "gather "}) steps.emplace_back(last);
  return steps;
}

bool is_workload_done_step(std::string_view step) { return step.starts_with(k_workload_step_prefix); }

Result<nlohmann::json> run_node(const NodeRunOptions& options, Bootstrap& bootstrap) {
  if (options.config.shared_secret.empty() && !options.config.insecure) {
    Result<std::string> secret = node_secret(options.config);
    if (!secret.ok()) return secret.status();
    NodeRunOptions secured = options;
    secured.config.shared_secret = std::move(secret).value();
    return run_node(secured, bootstrap);
  }
  const ClusterConfig& config = options.config;
  if (Status st = validate(config); !st.ok()) return st;
  std::vector<NodeSpec> nodes = config.nodes;
  std::sort(nodes.begin(), nodes.end(), [](const NodeSpec& a, const NodeSpec& b) { return a.id < b.id; });
  if (bootstrap.size() != nodes.size() || bootstrap.rank() >= nodes.size()) {
    return error(StatusCode::invalid_argument, "node runner: " + std::to_string(bootstrap.size()) +
                                                   " processes for a cluster of " + std::to_string(nodes.size()) +
                                                   " nodes (one process per node)");
  }
  const NodeSpec& me = nodes[bootstrap.rank()];
  const std::string where = "node " + std::to_string(me.id);
  if (Status st = check_workloads(options, me); !st.ok()) return st;
  const TimeNs max_wait_ns = static_cast<TimeNs>(config.max_wait_s) * k_ns_per_s;
  const auto log = [&](const std::string& line) {
    if (options.log) options.log(where + ": " + line);
  };

  // 1-2. The node's transport, then the endpoint table.
  TransportTable table;
  const auto quiet = std::make_shared<std::atomic<bool>>(false);
  const Result<transport::PeerAddress> my_address = open_endpoints(options, nodes, me, where, bootstrap, table, quiet);
  if (!my_address.ok()) return my_address.status();
  log("listening on " + join_rails(*my_address) + " (" + options.config.transport + ")");

  // 3. The world: every planned service, real ones for this node only.
  const hw::HwWorldConfig wc = world_config(options);
  hw::HwWorld world(wc);
  LocalServices local = local_services_of(options);
  Status node_status = build_world(world, wc.storage_root, table, config, me, where, max_wait_ns, local);
  if (node_status.ok() && table.local) {
    node_status = error(StatusCode::internal, where + ": the world never took its transport");
  }
  if (!node_status.ok()) log("set-up failed: " + node_status.to_string());

  // 4. Servers, once mgmt is up everywhere.
  if (Status st = bootstrap.barrier("mgmt-up"); !st.ok()) return error(st.code(), where + ": " + st.message());
  if (node_status.ok()) node_status = start_servers(world, local, config, where, max_wait_ns, options.stop_requested);
  // 5. Clients, once every server is registered.
  if (Status st = bootstrap.barrier("servers-up"); !st.ok()) return error(st.code(), where + ": " + st.message());
  if (options.servers_up) options.servers_up();
  nlohmann::json phases = nlohmann::json::array();
  NodeFaults faults(world, config, me, local, log);
  if (Status st = run_workloads(world, local, options, me, bootstrap, log, node_status, phases); !st.ok()) return st;
  if (Status st = bootstrap.barrier("clients-done"); !st.ok()) return error(st.code(), where + ": " + st.message());
  // Every node quiet before any node stops: a normal shutdown logs no lost peers.
  quiet->store(true);
  faults.stop();
  if (Status st = bootstrap.barrier("stopping"); !st.ok()) return error(st.code(), where + ": " + st.message());
  world.stop();  // counters are read once every thread has stopped

  // 6. Results.
  const nlohmann::json doc = node_document(config, me, bootstrap, node_status, *my_address, phases, world);
  Result<std::vector<std::string>> gathered = bootstrap.gather_to_root(doc.dump());
  if (!gathered.ok()) return error(gathered.status().code(), where + ": gather: " + gathered.status().message());
  if (gathered->empty()) return doc;
  return combine_node_results(config.run_id, *gathered);
}

Result<nlohmann::json> combine_node_results(const std::string& run_id, const std::vector<std::string>& documents) {
  nlohmann::json run = {{"run_id", run_id}, {"ok", !documents.empty()}, {"nodes", nlohmann::json::array()}};
  for (std::size_t i = 0; i < documents.size(); ++i) {
    nlohmann::json node = nlohmann::json::parse(documents[i], nullptr, false);
    if (node.is_discarded() || !node.is_object()) {
      return error(StatusCode::corrupt, "results of rank " + std::to_string(i) + " are not a JSON object");
    }
    if (node.contains("ok") && !node["ok"].is_boolean()) {
      return error(StatusCode::corrupt, "results of rank " + std::to_string(i) + ": \"ok\" is not a boolean");
    }
    if (!node.value("ok", false)) run["ok"] = false;
    run["nodes"].push_back(std::move(node));
  }
  return run;
}

}  // namespace sluice::emulate
