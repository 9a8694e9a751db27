// make bench-meta (P7, issue 20): the metadata RPC path against its ceiling
// and against the socket's, in one run, on loopback TCP. Three parts:
//   1. sockperf (the peer): one `sockperf server` thread (epoll) and one
//      `sockperf ping-pong` client on one connection (ours: one control
//      connection per direction between two nodes) keeping all our messages
//      in flight (--burst), messages the size of our Stat frame. Rate = the
//      replies over sockperf's valid duration.
//   2. A null RPC over our transport and thread layout: the same nodes,
//      HwWorld, HwEnv, HwNode dispatcher and service loops as part 3; the
//      client ranks send Stat requests and a null service answers each with
//      an InodeReply at once (no store, no path, no RPC library). The
//      mechanism's ceiling.
//   3. One metadata server (MetaService on HwEnv) on one core; clients
//      create, stat, list with attributes and stat every entry
//      (readdir+stat: MdBench's ls_storm) and unlink 200,000 files in
//      private directories (MdBench, mdtest -u style), once with the RocksDB
//      MetaStore and once with the in-memory one.
// Prints a table and RESULT P7 creates_per_s=.. stats_per_s=..
// null_rpc_vs_sockperf=.. stat_vs_null_rpc=.. (RocksDB figures; the rest of
// the figures after them). Goals (issue 20): null RPC >= 0.8x sockperf,
// stats >= 150,000/s and creates >= 40,000/s per metadata server thread on
// the 16-core GPU host, stat_vs_null_rpc >= 0.7.
//
// For scale: a BeeGFS metadata server does ~10-16k creates/s and 50-70k
// stats/s in IO500 submissions (mdtest-easy write/stat on one metadata
// server); it does not fsync per create either (it relies on the local file
// system's journal), hence RocksDB with sync_writes = false here: a create
// survives a crash of the process (the WAL is in the OS), not power loss. As
// in real runs, the store group-commits: a loop turn's mutations are written
// to the WAL (one write) before the turn's replies leave. Environment:
// SLUICE_BENCH_META_SYNC=1 fsyncs the WAL as real runs do;
// SLUICE_BENCH_META_GROUP_COMMIT=0 writes (and syncs) each mutation alone.
//
// Deployment (HwWorld, all in this process): node 0 mgmt + barrier, node 1
// the metadata server (or the null service), node 2 one storage target
// (creates choose a target; empty files never touch it), node 3.. the client
// ranks (ranks share the client nodes round-robin). The server's loop
// thread is pinned to CPU 0 (its transport's progress thread is not
// reachable from here and floats); clients' loops are pinned to the other
// CPUs when there are any. Rates: a phase's ops summed over the ranks, over
// the slowest rank's elapsed time (phases start after a barrier).
// k_repeats runs of each part, each in a fresh world and database; medians
// are reported. BENCH_SMOKE=1 (tests/bench/smoke.hpp): one run of each part
// at the k_smoke_ sizes.
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/common/percentile.hpp"
#include "core/proto/codec.hpp"
#include "core/services/meta_service.hpp"
#include "core/services/mgmt_service.hpp"
#include "core/services/storage_service.hpp"
#include "core/workloads/barrier_service.hpp"
#include "core/workloads/client_host.hpp"
#include "core/workloads/md_bench.hpp"
#include "hw/hw_world.hpp"
#include "hw_backends/rocksdb/rocksdb_meta_store.hpp"
#include "tests/bench/loopback_port.hpp"
#include "tests/bench/smoke.hpp"
#include "transports/tcp/tcp_wire.hpp"

namespace {

using namespace sluice;
using namespace sluice::hw;

constexpr std::uint64_t k_smoke_total_files = 4'000;
constexpr std::uint64_t k_smoke_null_rpcs = 8'000;
constexpr int k_smoke_sockperf_seconds = 1;
const std::uint64_t k_total_files = bench::full_or_smoke<std::uint64_t>(200'000, k_smoke_total_files);
const std::uint64_t k_null_rpcs = bench::full_or_smoke<std::uint64_t>(400'000, k_smoke_null_rpcs);  // part 2, all ranks
// Each sockperf client's run (sockperf drops its first 0.4 s).
const int k_sockperf_seconds = bench::full_or_smoke(4, k_smoke_sockperf_seconds);
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

// The project's one percentile definition (core/common/percentile.hpp) at q = 0.5.
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return percentile_of_sorted(v, 0.5);
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

// Part 2's server: every Stat is answered at once with a file's inode.
class NullStatServer final : public Service {
 public:
  explicit NullStatServer(Env& env) : env_(env) {}
  void start() override {}
  std::string name() const override { return "null_stat"; }
  void on_event(Event& event) override {
    auto* delivery = std::get_if<Delivery>(&event);
    if (delivery == nullptr) return;
    const auto* stat = std::get_if<proto::Stat>(&delivery->message);
    if (stat == nullptr) return;
    proto::InodeReply reply;
    reply.request_id = stat->request_id;
    reply.inode.file_id = stat->request_id;
    reply.inode.type = proto::InodeType::file;
    reply.inode.mode = 0644;
    reply.inode.owner_shard = 0;
    reply.inode.stripe.chunk_bytes = 1 << 20;
    reply.inode.stripe.targets = {1};
    env_.send(delivery->from, std::move(reply)).ignore();
  }

 private:
  Env& env_;
};

// Part 2's client rank: `requests` Stats to `server`, `window` in flight.
class NullStatClient final : public Service {
 public:
  NullStatClient(Env& env, Endpoint server, std::uint32_t rank, std::uint64_t requests, std::uint32_t window)
      : env_(env), server_(server), rank_(rank), requests_(requests), window_(window) {}
  void start() override {
    started_ns_ = env_.now();
    for (std::uint32_t i = 0; i < window_ && sent_ < requests_; ++i) send_next();
  }
  std::string name() const override { return "null_client:" + std::to_string(rank_); }
  void on_event(Event& event) override {
    auto* delivery = std::get_if<Delivery>(&event);
    if (delivery == nullptr || !std::holds_alternative<proto::InodeReply>(delivery->message)) return;
    if (++answered_ == requests_) ended_ns_ = env_.now();
    if (sent_ < requests_) send_next();
  }
  bool finished() const { return answered_ == requests_; }
  std::uint64_t answered() const { return answered_; }
  TimeNs elapsed_ns() const { return ended_ns_ - started_ns_; }

 private:
  void send_next() {
    proto::Stat stat;
    stat.request_id = ++sent_;
    stat.path = "/mdtest/r" + std::to_string(rank_) + "/f" + std::to_string(rank_) + "." + std::to_string(sent_);
    if (Status st = env_.send(server_, std::move(stat)); !st.ok()) env_.log(LogLevel::error, st.to_string());
  }
  Env& env_;
  Endpoint server_;
  std::uint32_t rank_;
  std::uint64_t requests_;
  std::uint32_t window_;
  std::uint64_t sent_ = 0;
  std::uint64_t answered_ = 0;
  TimeNs started_ns_ = 0;
  TimeNs ended_ns_ = 0;
};

struct Shape {
  std::uint32_t ranks = k_ranks;
  std::uint32_t inflight_per_rank = k_inflight_per_rank;
  std::uint32_t client_nodes = k_client_nodes;
};

// Nodes: 0 mgmt + barrier, 1 the server, 2 storage, 3.. clients.
constexpr NodeId k_server_node = 1;
constexpr NodeId k_storage_node = 2;
constexpr NodeId k_first_client_node = 3;

HwWorldConfig world_config(const std::string& dir, int repeat) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  HwWorldConfig wc;
  wc.seed = 1 + static_cast<std::uint64_t>(repeat);
  wc.transport = "tcp";
  wc.storage_backend = "posix";
  wc.storage_root = dir + "/storage";
  wc.node_memory_limit_bytes = 256ULL << 20;
  return wc;
}

void print_last_logs(HwWorld& world) {
  const auto logs = world.logs();
  for (std::size_t i = logs.size() > 20 ? logs.size() - 20 : 0; i < logs.size(); ++i) {
    std::fprintf(stderr, "  %s\n", logs[i].c_str());
  }
}

// Starts the deferred client services, pins their loops to CPUs 1.. (the
// server has CPU 0) and waits until every one has finished; false (after
// the world's last log lines) when they do not within k_max_run. Pinned
// only after start_service: before it a deferred service's call() runs on
// the calling thread, and this thread's affinity would leak into every
// thread it creates later.
template <typename S>
bool run_clients(HwWorld& world, const std::vector<S*>& clients, const char* what) {
  for (S* c : clients) world.start_service(*c);
  const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  for (std::size_t i = 0; cpus > 1 && i < clients.size(); ++i) {
    world.call(*clients[i], [i, cpus] { pin_current_thread(1 + static_cast<int>(i % (cpus - 1))); });
  }
  const bool finished = wait_for([&] {
    return std::all_of(clients.begin(), clients.end(),
                       [&](S* c) { return world.call(*c, [c] { return c->finished(); }); });
  });
  if (!finished) {
    std::fprintf(stderr, "bench_meta: %s: clients did not finish\n", what);
    print_last_logs(world);
  }
  return finished;
}

// Part 2: null RPCs per second, or a negative value on failure.
double run_null_rpc(const std::string& dir, int repeat, const Shape& shape) {
  HwWorld world(world_config(dir, repeat));
  NullStatServer& server = world.add_service<NullStatServer>(k_server_node);
  const Endpoint to = world.endpoint_of(server);
  std::vector<NullStatClient*> clients;
  for (std::uint32_t rank = 0; rank < shape.ranks; ++rank) {
    NullStatClient& c = world.add_service<NullStatClient>(k_first_client_node + rank % shape.client_nodes, to, rank,
                                                          k_null_rpcs / shape.ranks, shape.inflight_per_rank);
    world.defer_start(c);
    clients.push_back(&c);
  }
  if (Status st = world.start(); !st.ok()) {
    std::fprintf(stderr, "bench_meta: null rpc: start: %s\n", st.to_string().c_str());
    return -1;
  }
  world.call(server, [] { pin_current_thread(0); });
  if (!run_clients(world, clients, "null rpc")) return -1;
  std::uint64_t answered = 0;
  TimeNs slowest = 0;
  for (NullStatClient* c : clients) {
    answered += world.call(*c, [c] { return c->answered(); });
    slowest = std::max(slowest, world.call(*c, [c] { return c->elapsed_ns(); }));
  }
  world.stop();
  return slowest > 0 ? static_cast<double>(answered) * 1e9 / static_cast<double>(slowest) : -1;
}

// Part 3's phases, in MdBench's order; "ls_storm" is readdir+stat.
const std::vector<MdPhase> k_meta_phases = {MdPhase::create, MdPhase::stat, MdPhase::ls_storm, MdPhase::remove};
using PhaseRates = std::map<std::string, double>;  // phase -> ops/s

// An environment variable "0" or "1"; `fallback` when unset.
bool env_flag(const char* name, bool fallback) {
  const char* v = std::getenv(name);
  return v == nullptr ? fallback : std::string(v) != "0";
}

std::unique_ptr<MetaStore> open_store(const std::string& dir, bool rocksdb) {
  if (!rocksdb) return std::make_unique<InMemoryMetaStore>();
  RocksDbMetaStoreConfig sc;
  sc.path = dir + "/meta";
  // SLUICE_BENCH_META_SYNC=1: fsynced as real runs are; SLUICE_BENCH_META_GROUP_COMMIT=0: each mutation on its own.
  sc.sync_writes = env_flag("SLUICE_BENCH_META_SYNC", false);
  sc.group_commit = env_flag("SLUICE_BENCH_META_GROUP_COMMIT", true);  // run_meta commits before each turn's replies
  Result<std::unique_ptr<RocksDbMetaStore>> store = RocksDbMetaStore::open(sc);
  if (!store.ok()) {
    std::fprintf(stderr, "bench_meta: %s\n", store.status().to_string().c_str());
    return nullptr;
  }
  return std::unique_ptr<MetaStore>(std::move(store).value());
}

// Sums each phase's ops over the ranks, over the slowest rank's time.
bool collect_rates(HwWorld& world, const std::vector<ClientHost*>& hosts, const std::vector<MdBench*>& benches,
                   PhaseRates* rates) {
  std::map<std::string, std::uint64_t> ops;
  std::map<std::string, TimeNs> slowest;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    ClientHost* h = hosts[i];
    const Status result = world.call(*h, [h] { return h->result(); });
    if (!result.ok()) {
      std::fprintf(stderr, "bench_meta: rank %zu: %s\n", i, result.to_string().c_str());
      return false;
    }
    for (const RankPhaseResult& r : world.call(*h, [&, i] { return benches[i]->results(); })) {
      ops[r.phase] += r.ops;
      slowest[r.phase] = std::max(slowest[r.phase], r.elapsed_ns);
    }
  }
  for (MdPhase phase : k_meta_phases) {
    const std::string name(to_string(phase));
    if (ops[name] == 0 || slowest[name] <= 0) {
      std::fprintf(stderr, "bench_meta: phase %s measured nothing\n", name.c_str());
      return false;
    }
    (*rates)[name] = static_cast<double>(ops[name]) * 1e9 / static_cast<double>(slowest[name]);
  }
  return true;
}

std::vector<ClientHost*> add_md_ranks(HwWorld& world, const Shape& shape, Endpoint mgmt, Endpoint barrier,
                                      std::vector<MdBench*>* benches) {
  std::vector<ClientHost*> hosts;
  for (std::uint32_t rank = 0; rank < shape.ranks; ++rank) {
    MdBenchConfig md;
    md.root_dir = "/mdtest";
    md.shared_dir = false;
    md.files_per_rank = k_total_files / shape.ranks;
    md.threads = shape.inflight_per_rank;
    md.phases = k_meta_phases;
    md.create.stripe_count = 1;
    auto bench = std::make_unique<MdBench>(md);
    benches->push_back(bench.get());
    ClientHostConfig hc;
    hc.client.mgmt = mgmt;
    hc.client.ns.shard_count = 1;
    hc.rank = rank;
    hc.ranks = shape.ranks;
    hc.barrier = barrier;
    ClientHost& host =
        world.add_service<ClientHost>(k_first_client_node + rank % shape.client_nodes, hc, std::move(bench));
    world.defer_start(host);
    hosts.push_back(&host);
  }
  return hosts;
}

// Part 3 with one store.
bool run_meta(const std::string& dir, int repeat, const Shape& shape, bool rocksdb, PhaseRates* rates) {
  HwWorld world(world_config(dir, repeat));
  const Endpoint mgmt = world.endpoint_of(world.add_service<MgmtService>(0, MgmtConfig{}));
  const Endpoint barrier = world.endpoint_of(world.add_service<BarrierService>(0));
  std::unique_ptr<MetaStore> store = open_store(dir, rocksdb);
  if (store == nullptr) return false;
  MetaServiceConfig mc;
  mc.shard = 0;
  mc.mgmt = mgmt;
  mc.ns.shard_count = 1;
  mc.default_stripe_count = 1;
  MetaService& meta = world.add_service<MetaService>(k_server_node, mc, std::move(store));
  world.before_messages_leave(meta, [](Service& now) { dynamic_cast<MetaService&>(now).commit_store().ignore(); });
  if (Status st = world.add_target(k_storage_node, 2); !st.ok()) {
    std::fprintf(stderr, "bench_meta: %s\n", st.to_string().c_str());
    return false;
  }
  StorageServiceConfig ssc;
  ssc.mgmt = mgmt;
  ssc.targets = {1};
  StorageService& storage = world.add_service<StorageService>(k_storage_node, ssc);
  std::vector<MdBench*> benches;
  const std::vector<ClientHost*> hosts = add_md_ranks(world, shape, mgmt, barrier, &benches);
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
  if (!run_clients(world, hosts, rocksdb ? "rocksdb store" : "in-memory store")) return false;
  const bool ok = collect_rates(world, hosts, benches, rates);
  world.stop();
  return ok;
}

// Messages per second one `sockperf ping-pong` printed ("[Valid Duration]
// RunTime=T sec; SentMessages=S; ReceivedMessages=R"), or a negative value.
double sockperf_client_rate(FILE* out) {
  char line[1024];
  double rate = -1;
  while (std::fgets(line, sizeof line, out) != nullptr) {
    const char* at = std::strstr(line, "[Valid Duration] RunTime=");
    if (at == nullptr) continue;
    double seconds = 0;
    unsigned long long sent = 0, received = 0;
    if (std::sscanf(at, "[Valid Duration] RunTime=%lf sec; SentMessages=%llu; ReceivedMessages=%llu", &seconds, &sent,
                    &received) == 3 &&
        seconds > 0) {
      rate = static_cast<double>(received) / seconds;
    }
  }
  return rate;
}

// Part 1: sockperf's replies per second summed over `connections` clients
// (one server thread),
// each with `burst` messages of `message_bytes` in flight; negative on failure.
double run_sockperf(std::uint32_t connections, std::uint32_t burst, std::size_t message_bytes, const std::string& dir) {
  const std::string feed = dir + "/sockperf-feed";
  bench::LoopbackServer server = bench::start_loopback_server(
      [&](int port) {
        if (FILE* f = std::fopen(feed.c_str(), "w"); f != nullptr) {
          std::fprintf(f, "T:127.0.0.1:%d\n", port);
          std::fclose(f);
        }
        return std::vector<std::string>{
            "timeout", std::to_string(4 * k_sockperf_seconds + 30), "sockperf", "server", "-f", feed, "-F", "e"};
      },
      [] { pin_current_thread(0); });  // as our server's loop
  if (server.pid < 0) {
    std::fprintf(stderr, "bench_meta: sockperf server: %s\n", server.why.c_str());
    return -1;
  }
  const int port = server.port;
  std::vector<FILE*> clients;
  const std::string client = "timeout " + std::to_string(2 * k_sockperf_seconds + 20) +
                             " sockperf ping-pong --tcp -i 127.0.0.1 -p " + std::to_string(port) + " -m " +
                             std::to_string(message_bytes) + " -b " + std::to_string(burst) + " -t " +
                             std::to_string(k_sockperf_seconds) + " --mps=max 2>&1";
  for (std::uint32_t c = 0; c < connections; ++c) clients.push_back(::popen(client.c_str(), "r"));
  double total = 0;
  bool all = true;
  for (FILE* out : clients) {
    const double rate = out != nullptr ? sockperf_client_rate(out) : -1;
    if (out != nullptr) ::pclose(out);
    all = all && rate > 0;
    total += std::max(rate, 0.0);
  }
  bench::stop_loopback_server(&server);
  return all ? total : -1;
}

// The bytes of one of our Stat frames as part 2 sends it: sockperf's -m.
std::size_t stat_frame_bytes() {
  proto::Stat stat;
  stat.request_id = k_null_rpcs;
  stat.path = "/mdtest/r0/f0." + std::to_string(k_null_rpcs);
  return proto::encoded_size(proto::Message(stat)) + transport::tcp::k_tcp_packet_header_bytes;
}

}  // namespace

namespace {

// One repeat's figures: [0] sockperf, [1] null RPC, then the RocksDB and the
// in-memory store's phases, each in k_meta_phases order.
constexpr std::size_t k_columns = 2 + 2 * 4;

bool run_repeat(const std::string& root, int repeat, const Shape& shape, std::vector<double>* row) {
  const std::string dir = root + "/run" + std::to_string(repeat);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  // Our messages between two nodes travel on one control connection per
  // direction (tcp transport: Peer::control), so one sockperf connection
  // carries all of them, request and reply.
  const double sockperf = run_sockperf(1, shape.ranks * shape.inflight_per_rank, stat_frame_bytes(), dir);
  if (sockperf <= 0) {
    std::fprintf(stderr, "bench_meta: sockperf gave no figure (is it installed? make deps installs it)\n");
    return false;
  }
  const double null_rpc = run_null_rpc(dir + "/null", repeat, shape);
  if (null_rpc <= 0) return false;
  *row = {sockperf, null_rpc};
  for (bool rocksdb : {true, false}) {
    PhaseRates rates;
    if (!run_meta(dir + (rocksdb ? "/rocksdb" : "/memory"), repeat, shape, rocksdb, &rates)) return false;
    for (MdPhase phase : k_meta_phases) row->push_back(rates[std::string(to_string(phase))]);
  }
  std::filesystem::remove_all(dir, ec);
  return true;
}

void print_row(const char* label, const std::vector<double>& row) {
  std::printf("%-7s", label);
  for (double v : row) std::printf(" %10.0f", v);
  std::printf("\n");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  // Optional arguments override k_repeats (1 for profiling under perf),
  // k_ranks, k_inflight_per_rank and k_client_nodes, in that order.
  const auto arg = [&](int i, std::uint32_t fallback) {
    return argc > i ? static_cast<std::uint32_t>(std::max(1, std::atoi(argv[i]))) : fallback;
  };
  const int repeats = static_cast<int>(arg(1, bench::full_or_smoke<std::uint32_t>(k_repeats, 1)));
  Shape shape;
  shape.ranks = arg(2, k_ranks);
  shape.inflight_per_rank = arg(3, k_inflight_per_rank);
  shape.client_nodes = arg(4, k_client_nodes);
  if (k_total_files % shape.ranks != 0 || k_null_rpcs % shape.ranks != 0) {
    std::fprintf(stderr, "bench_meta: %u ranks must divide %llu files and %llu null RPCs\n", shape.ranks,
                 static_cast<unsigned long long>(k_total_files), static_cast<unsigned long long>(k_null_rpcs));
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
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::printf(
      "bench_meta: %u cores; %u client ranks x %u in flight on %u client nodes; sockperf with %zu-byte "
      "messages; %llu null RPCs; %llu files in private directories; RocksDB (sync_writes %s, group commit %s) and "
      "in-memory stores under %s\n",
      cores, shape.ranks, shape.inflight_per_rank, shape.client_nodes, stat_frame_bytes(),
      static_cast<unsigned long long>(k_null_rpcs), static_cast<unsigned long long>(k_total_files),
      env_flag("SLUICE_BENCH_META_SYNC", false) ? "on" : "off",
      env_flag("SLUICE_BENCH_META_GROUP_COMMIT", true) ? "on" : "off", root.c_str());
  std::printf("ops/s   %10s %10s %10s %10s %10s %10s %10s %10s %10s %10s\n", "sockperf", "null_rpc", "db_create",
              "db_stat", "db_ls+stat", "db_unlink", "mem_create", "mem_stat", "mem_ls+stat", "mem_unlink");
  std::vector<std::vector<double>> columns(k_columns);
  for (int repeat = 0; repeat < repeats; ++repeat) {
    std::vector<double> row;
    if (!run_repeat(root, repeat, shape, &row)) return 1;
    for (std::size_t c = 0; c < k_columns; ++c) columns[c].push_back(row[c]);
    print_row(std::to_string(repeat).c_str(), row);
  }
  std::vector<double> m;
  for (const auto& c : columns) m.push_back(median(c));
  print_row("median", m);
  std::printf(
      "RESULT P7 creates_per_s=%.0f stats_per_s=%.0f null_rpc_vs_sockperf=%.3f stat_vs_null_rpc=%.3f "
      "readdir_stat_per_s=%.0f unlinks_per_s=%.0f null_rpc_per_s=%.0f sockperf_per_s=%.0f memory_creates_per_s=%.0f "
      "memory_stats_per_s=%.0f memory_readdir_stat_per_s=%.0f memory_unlinks_per_s=%.0f cores=%u\n",
      m[2], m[3], m[1] / m[0], m[3] / m[1], m[4], m[5], m[1], m[0], m[6], m[7], m[8], m[9], cores);
  std::printf(
      "goals (issue 20, on the 16-core GPU host): creates >= 40000, stats >= 150000, null_rpc_vs_sockperf >= 0.8, "
      "stat_vs_null_rpc >= 0.7\n");
  return 0;
}
