// make bench-meta (P7, issue 5): one metadata server (MetaService on HwEnv
// with the RocksDB MetaStore) on one core over loopback TCP; clients create
// and then stat 200,000 files in private directories (MdBench, mdtest -u
// style). Prints creates/s and stats/s. Goals: >= 20,000 creates/s and
// >= 100,000 stats/s.
//
// For scale: a BeeGFS metadata server does ~10-16k creates/s and 50-70k
// stats/s in IO500 submissions (mdtest-easy write/stat on one metadata
// server); it does not fsync per create either (it relies on the local file
// system's journal), hence RocksDB with sync_writes = false here: a create
// survives a crash of the process (the WAL is in the OS), not power loss.
//
// Deployment (HwWorld, all in this process): node 0 mgmt + barrier, node 1
// the metadata server, node 2 one storage target (creates choose a target;
// empty files never touch it), nodes 3.. one client rank each. The metadata
// service's loop thread is pinned to CPU 0 (its transport's progress thread
// is not reachable from here and floats); clients' loops are pinned to the
// other CPUs when there are any. Rates: a phase's ops summed over the ranks,
// over the slowest rank's elapsed time (phases start after a barrier).
// k_repeats runs, each in a fresh world and database; medians are reported.
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/services/meta_service.hpp"
#include "core/services/mgmt_service.hpp"
#include "core/services/storage_service.hpp"
#include "core/workloads/barrier_service.hpp"
#include "core/workloads/client_host.hpp"
#include "core/workloads/md_bench.hpp"
#include "hw/hw_world.hpp"
#include "hw_backends/rocksdb/rocksdb_meta_store.hpp"

namespace {

using namespace sluice;
using namespace sluice::hw;

constexpr std::uint64_t k_total_files = 200'000;
constexpr std::uint32_t k_ranks = 4;
constexpr std::uint32_t k_inflight_per_rank = 64;  // mdtest ranks are synchronous; a client library is not
constexpr std::uint32_t k_client_nodes = 1;        // ranks share the client nodes round-robin
constexpr int k_repeats = 3;
constexpr auto k_check_period = std::chrono::milliseconds(100);  // how often the main thread looks
constexpr auto k_max_run = std::chrono::seconds(600);            // a hang becomes an error

void pin_current_thread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  ::pthread_setaffinity_np(::pthread_self(), sizeof set, &set);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Checks `done` every k_check_period (not after every event: that would
// wake this thread thousands of times a second and steal the server's CPU).
template <typename F>
bool wait_for(F done) {
  const auto deadline = std::chrono::steady_clock::now() + k_max_run;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(k_check_period);
  }
  return false;
}

struct Rates {
  double creates_per_s = 0;
  double stats_per_s = 0;
};

struct Shape {
  std::uint32_t ranks = k_ranks;
  std::uint32_t inflight_per_rank = k_inflight_per_rank;
  std::uint32_t client_nodes = k_client_nodes;
};

bool run_once(const std::string& dir, int repeat, const Shape& shape, Rates* rates) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  HwWorldConfig wc;
  wc.seed = 1 + static_cast<std::uint64_t>(repeat);
  wc.transport = "tcp";
  wc.storage_backend = "posix";
  wc.storage_root = dir + "/storage";
  wc.node_memory_limit_bytes = 256ULL << 20;
  HwWorld world(wc);
  const Endpoint mgmt = world.endpoint_of(world.add_service<MgmtService>(0, MgmtConfig{}));
  const Endpoint barrier = world.endpoint_of(world.add_service<BarrierService>(0));
  RocksDbMetaStoreConfig sc;
  sc.path = dir + "/meta";
  sc.sync_writes = false;
  Result<std::unique_ptr<RocksDbMetaStore>> store = RocksDbMetaStore::open(sc);
  if (!store.ok()) {
    std::fprintf(stderr, "bench_meta: %s\n", store.status().to_string().c_str());
    return false;
  }
  MetaServiceConfig mc;
  mc.shard = 0;
  mc.mgmt = mgmt;
  mc.ns.shard_count = 1;
  mc.default_stripe_count = 1;
  MetaService& meta = world.add_service<MetaService>(1, mc, std::unique_ptr<MetaStore>(std::move(store).value()));
  if (Status st = world.add_target(1, 2); !st.ok()) {
    std::fprintf(stderr, "bench_meta: %s\n", st.to_string().c_str());
    return false;
  }
  StorageServiceConfig ssc;
  ssc.mgmt = mgmt;
  ssc.targets = {1};
  StorageService& storage = world.add_service<StorageService>(2, ssc);

  std::vector<ClientHost*> hosts;
  std::vector<MdBench*> benches;
  for (std::uint32_t rank = 0; rank < shape.ranks; ++rank) {
    MdBenchConfig md;
    md.root_dir = "/mdtest";
    md.shared_dir = false;
    md.files_per_rank = k_total_files / shape.ranks;
    md.threads = shape.inflight_per_rank;
    md.phases = {MdPhase::create, MdPhase::stat};
    md.remove_dirs = false;
    md.create.stripe_count = 1;
    auto bench = std::make_unique<MdBench>(md);
    benches.push_back(bench.get());
    ClientHostConfig hc;
    hc.client.mgmt = mgmt;
    hc.client.ns.shard_count = 1;
    hc.rank = rank;
    hc.ranks = shape.ranks;
    hc.barrier = barrier;
    ClientHost& host = world.add_service<ClientHost>(3 + rank % shape.client_nodes, hc, std::move(bench));
    world.defer_start(host);
    hosts.push_back(&host);
  }
  if (Status st = world.start(); !st.ok()) {
    std::fprintf(stderr, "bench_meta: start: %s\n", st.to_string().c_str());
    return false;
  }
  world.call(meta, [] { pin_current_thread(0); });
  const bool ready = wait_for([&] {
    return world.call(meta, [&] { return meta.registered(); }) &&
           world.call(storage, [&] { return storage.registered(); });
  });
  if (!ready) {
    std::fprintf(stderr, "bench_meta: servers did not register with mgmt\n");
    return false;
  }
  for (ClientHost* h : hosts) world.start_service(*h);
  // Pinned only now: before start_service a deferred service's call() runs
  // on the calling thread, and this thread's affinity would leak into every
  // thread it creates later.
  const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  if (cpus > 1) {
    for (std::size_t i = 0; i < hosts.size(); ++i) {
      world.call(*hosts[i], [i, cpus] { pin_current_thread(1 + static_cast<int>(i % (cpus - 1))); });
    }
  }
  const bool finished = wait_for([&] {
    return std::all_of(hosts.begin(), hosts.end(),
                       [&](ClientHost* h) { return world.call(*h, [h] { return h->finished(); }); });
  });
  if (!finished) {
    std::fprintf(stderr, "bench_meta: clients did not finish\n");
    const auto logs = world.logs();
    for (std::size_t i = logs.size() > 20 ? logs.size() - 20 : 0; i < logs.size(); ++i) {
      std::fprintf(stderr, "  %s\n", logs[i].c_str());
    }
    return false;
  }
  std::uint64_t create_ops = 0, stat_ops = 0;
  TimeNs create_ns = 0, stat_ns = 0;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    ClientHost* h = hosts[i];
    const Status result = world.call(*h, [h] { return h->result(); });
    if (!result.ok()) {
      std::fprintf(stderr, "bench_meta: rank %zu: %s\n", i, result.to_string().c_str());
      return false;
    }
    for (const RankPhaseResult& r : world.call(*h, [&, i] { return benches[i]->results(); })) {
      if (r.phase == "create") {
        create_ops += r.ops;
        create_ns = std::max(create_ns, r.elapsed_ns);
      } else if (r.phase == "stat") {
        stat_ops += r.ops;
        stat_ns = std::max(stat_ns, r.elapsed_ns);
      }
    }
  }
  world.stop();
  if (create_ops != k_total_files || stat_ops != k_total_files || create_ns <= 0 || stat_ns <= 0) {
    std::fprintf(stderr, "bench_meta: expected %llu creates and stats, got %llu and %llu\n",
                 static_cast<unsigned long long>(k_total_files), static_cast<unsigned long long>(create_ops),
                 static_cast<unsigned long long>(stat_ops));
    return false;
  }
  rates->creates_per_s = static_cast<double>(create_ops) * 1e9 / static_cast<double>(create_ns);
  rates->stats_per_s = static_cast<double>(stat_ops) * 1e9 / static_cast<double>(stat_ns);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  // Optional arguments override k_repeats (1 for profiling under perf),
  // k_ranks, k_inflight_per_rank and k_client_nodes, in that order.
  const auto arg = [&](int i, std::uint32_t fallback) {
    return argc > i ? static_cast<std::uint32_t>(std::max(1, std::atoi(argv[i]))) : fallback;
  };
  const int repeats = static_cast<int>(arg(1, k_repeats));
  Shape shape;
  shape.ranks = arg(2, k_ranks);
  shape.inflight_per_rank = arg(3, k_inflight_per_rank);
  shape.client_nodes = arg(4, k_client_nodes);
  if (k_total_files % shape.ranks != 0) {
    std::fprintf(stderr, "bench_meta: %u ranks do not divide %llu files\n", shape.ranks,
                 static_cast<unsigned long long>(k_total_files));
    return 2;
  }
  const char* base = std::getenv("SLUICE_BENCH_DIR");
  std::string templ = std::string(base != nullptr ? base : "/var/tmp") + "/sluice-bench-meta-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) {
    std::fprintf(stderr, "bench_meta: cannot create a directory under %s\n", base != nullptr ? base : "/var/tmp");
    return 1;
  }
  const std::string root = templ;
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } cleanup{root};
  std::printf(
      "bench_meta: %llu files, %u client ranks x %u in flight on %u client nodes, private directories, "
      "RocksDB at %s\n",
      static_cast<unsigned long long>(k_total_files), shape.ranks, shape.inflight_per_rank, shape.client_nodes,
      root.c_str());
  std::printf("%-8s %14s %14s\n", "run", "creates/s", "stats/s");
  std::vector<double> creates, stats;
  for (int repeat = 0; repeat < repeats; ++repeat) {
    Rates r;
    if (!run_once(root + "/run" + std::to_string(repeat), repeat, shape, &r)) return 1;
    creates.push_back(r.creates_per_s);
    stats.push_back(r.stats_per_s);
    std::printf("%-8d %14.0f %14.0f\n", repeat, r.creates_per_s, r.stats_per_s);
    std::fflush(stdout);
  }
  std::printf("%-8s %14.0f %14.0f\n", "median", median(creates), median(stats));
  std::printf("RESULT P7 creates_per_s=%.0f goal=20000 stats_per_s=%.0f goal=100000\n", median(creates), median(stats));
  return 0;
}
