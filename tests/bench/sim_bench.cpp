// make bench-sim: SimEnv's cost per simulated chunk against a raw SimGrid
// S4U program (sim_raw_peer.cpp) on the same workload, in the same
// invocation (issue 4, Performance).
//
// Workload: C clients each read R chunks of 1 MiB, W = 8 in flight, from S
// servers (request 256 B -> disk read -> 1 MiB reply), each server serving
// 8 requests at once (its drive's queue depth; the rest wait in order); one NVMe per server
// (3.2 GB/s read, 2.0 GB/s write); hosts on a star of 100 Gb/s split-duplex
// links with 2 us latency. In sluice the client sends a ReadChunk whose wire
// size (frame + profile overhead) is 256 bytes; the server does storage_io
// into a staging buffer, transfer (RDMA write) into the client's buffer, then
// sends a ChunkReply: one more (small) message per chunk than the raw
// program, whose 1 MiB reply is the data itself. The machine inside each
// host is one socket, its memory, a NIC and a drive joined by links of 1e15
// B/s and no latency, so the network and the drive are all that is modelled
// on both sides; the disk's per-request latency and occupancy are set to 0
// because the raw program has none.
//
// Every simulation runs in its own child process (one SimGrid engine per
// process); wall times are of the engine run only (platform building is
// reported apart). Output: one line per size and program, then
//   RESULT P1 ratio=<sluice chunks per wall-second / raw chunks per wall-second> goal=0.8
// over all sizes together (chunks summed, wall times summed); then P2, the
// same workload with flow coalescing (8 chunks of one client on one server
// per request, R = 512 at both sizes; see BenchClient and docs/sim.md):
//   RESULT P2 ratio=<coalesced chunks per wall-second / raw chunks per wall-second (P1)> goal=10
//          error=<worst simulated-time difference vs SimEnv per chunk, %>
// then the two scale studies (metadata storm, CosmoFlow-like epoch) with
// their wall time and peak RSS, each in a child ended by alarm() past 900 s.
// Where the time goes (perf, SimGrid 3.32): at 1,024 clients both programs
// spend most of it in SimGrid's linear removal of finished activities from
// activity lists (std::list::remove in CommImpl::finish); see
// sim/sim_runtime.hpp for how SimEnv keeps those lists short.
// Options: --quick (small R, 1/10 storm, 1/32 epoch), --size=N, --only-sluice /
// --only-raw (profiling), --no-p2, --no-scale, --scale-only=0 (storm) | 1 (epoch).
// Environment (studies at other sizes): SLUICE_STORM_NODES=<DGX nodes>,
// SLUICE_EPOCH_DIVISOR=<data set divisor>, SLUICE_EPOCH_COALESCE=0|1.
// BENCH_SMOKE=1 (tests/bench/smoke.hpp): --quick at the small size only, no scale studies.
#include <sys/resource.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <functional>
#include <unordered_map>

#include "core/layout/stripe_pattern.hpp"
#include "core/proto/codec.hpp"
#include "core/services/client.hpp"
#include "core/services/mgmt_service.hpp"
#include "tests/bench/smoke.hpp"
#include "core/services/storage_service.hpp"
#include "core/services/wire_convert.hpp"
#include "core/topology/cluster_builders.hpp"
#include "core/topology/machine_builders.hpp"
#include "sim/sim_process.hpp"
#include "sim/sim_runtime.hpp"
#include "tests/bench/sim_raw_peer.hpp"

namespace sluice::bench {
namespace {

// ---- the workload as sluice services ----------------------------------------------

proto::ReadChunk request_template(std::uint64_t chunk_bytes) {
  proto::ReadChunk m;
  m.request_id = 1;
  m.file_id = 1;
  m.target = 1;
  m.length = chunk_bytes;
  m.dst = MemHandle{1, MemKind::pinned, 0, 1, 0, chunk_bytes};
  return m;
}

class BenchServer final : public Service {
 public:
  BenchServer(Env& env, TargetId target, std::uint32_t queue_depth)
      : env_(env), target_(target), queue_depth_(queue_depth) {}
  void start() override {}
  std::string name() const override { return "bench-server"; }
  void on_event(Event& event) override {
    if (auto* d = std::get_if<Delivery>(&event)) {
      waiting_.push_back(Waiting{d->from, std::get<proto::ReadChunk>(d->message)});
      pump();
      return;
    }
    auto& c = std::get<Completion>(event);
    auto it = jobs_.find(c.op);
    Job job = it->second;
    jobs_.erase(it);
    if (!job.sent) {
      job.sent = true;
      const OpId op = env_.transfer(TransferSpec{job.staging, job.dst, k_no_id, k_no_id, TransferMode::rdma_write});
      jobs_.emplace(op, job);
      return;
    }
    env_.free(job.staging);
    env_.send(job.client, proto::ChunkReply{job.request_id, StatusCode::ok, {}, job.dst.length, 0}).ignore();
    --active_;
    pump();
  }

 private:
  struct Waiting {
    Endpoint from;
    proto::ReadChunk request;
  };
  // At most queue_depth requests at the drive, the others in arrival order.
  void pump() {
    while (active_ < queue_depth_ && !waiting_.empty()) {
      const Waiting w = std::move(waiting_.front());
      waiting_.pop_front();
      ++active_;
      const proto::ReadChunk& m = w.request;
      const MemHandle staging = env_.alloc(MemKind::pinned, 0, m.length).value();
      const OpId op =
          env_.storage_io(StorageIoSpec{StorageOp::read, target_, m.file_id, m.object_offset, staging, false});
      jobs_.emplace(op, Job{w.from, m.request_id, m.dst, staging, false});
    }
  }

  struct Job {
    Endpoint client;
    RequestId request_id = 0;
    MemHandle dst;
    MemHandle staging;
    bool sent = false;
  };
  Env& env_;
  TargetId target_;
  std::uint32_t queue_depth_;
  std::uint32_t active_ = 0;
  std::deque<Waiting> waiting_;
  std::map<OpId, Job> jobs_;
};

// Per chunk (spec.coalesce_chunks <= 1): chunk k of client c comes from
// server (c + k) mod S, W requests in flight. Coalesced (g =
// spec.coalesce_chunks > 1, the rule of ClientConfig::coalesce with strided
// merging): the client's chunk stream is cut in rows of g x S chunks; in a
// row, the g chunks that live on one server (k, k + S, ..., contiguous in that
// server's object of a file striped over the S servers) go as ONE request of
// g chunks: one disk request, one transfer, one reply on the same route.
// The bytes in flight stay W chunks: max(1, W / g) requests of g chunks.
class BenchClient final : public Service {
 public:
  BenchClient(Env& env, const ReadBenchSpec& spec, std::uint32_t rank)
      : env_(env), spec_(spec), rank_(rank), group_(std::max<std::uint32_t>(spec.coalesce_chunks, 1)) {}
  void start() override {
    const std::uint32_t slots = std::max<std::uint32_t>(1, spec_.window / group_);
    buffer_ = env_.alloc(MemKind::pinned, 0, spec_.chunk_bytes * group_ * slots).value();
    for (std::uint32_t w = 0; w < slots && !all_issued(); ++w) issue(w);
  }
  std::string name() const override { return "bench-client"; }
  void on_event(Event& event) override {
    auto* d = std::get_if<Delivery>(&event);
    if (d == nullptr) return;
    const auto& reply = std::get<proto::ChunkReply>(d->message);
    auto it = slot_of_.find(reply.request_id);
    const std::uint32_t slot = it->second.first;
    received_ += it->second.second;
    slot_of_.erase(it);
    if (!all_issued()) {
      issue(slot);
    } else if (received_ == spec_.chunks_per_client) {
      finished_at_ns_ = env_.now();
    }
  }
  std::uint32_t received() const { return received_; }
  std::uint64_t requests() const { return next_request_; }
  TimeNs finished_at_ns() const { return finished_at_ns_; }

 private:
  bool all_issued() const { return issued_ >= spec_.chunks_per_client; }
  void issue(std::uint32_t slot) {
    const std::uint32_t j = next_request_++;
    std::uint32_t first = j;  // first chunk of the request
    std::uint32_t chunks = 1;
    if (group_ > 1) {
      // Request j: row j / S, column j % S; skip columns past the end.
      const std::uint32_t s = spec_.servers;
      do {
        first = (request_cursor_ / s) * group_ * s + request_cursor_ % s;
        ++request_cursor_;
      } while (first >= spec_.chunks_per_client);  // a column past the end of the last row
      chunks = 0;
      for (std::uint32_t i = 0; i < group_ && first + i * s < spec_.chunks_per_client; ++i) ++chunks;
    }
    issued_ += chunks;
    const std::uint32_t server = (rank_ + first) % spec_.servers;
    const std::uint64_t bytes = spec_.chunk_bytes * chunks;
    proto::ReadChunk m = request_template(bytes);
    m.request_id = j + 1;
    m.file_id = rank_;
    m.target = server + 1;
    m.object_offset = std::uint64_t{first} * spec_.chunk_bytes;
    m.dst = buffer_.slice(std::uint64_t{slot} * spec_.chunk_bytes * group_, bytes);
    slot_of_[m.request_id] = {slot, chunks};
    env_.send(Endpoint{server, 0}, std::move(m)).ignore();
  }
  Env& env_;
  const ReadBenchSpec& spec_;
  std::uint32_t rank_;
  std::uint32_t group_;
  MemHandle buffer_;
  std::uint32_t issued_ = 0;  // chunks
  std::uint32_t next_request_ = 0;
  std::uint32_t request_cursor_ = 0;  // coalesced: next (row, column) position
  std::uint32_t received_ = 0;
  TimeNs finished_at_ns_ = 0;
  std::map<RequestId, std::pair<std::uint32_t, std::uint32_t>> slot_of_;  // slot, chunks
};

// One socket, its memory, a NIC and (for servers) a drive, joined by links
// that never limit: the star's network links and the drive are the model.
Result<topo::Topology> bench_machine(const ReadBenchSpec& spec, bool with_drive) {
  using topo::LinkClass;
  using topo::LinkSpec;
  using topo::Vertex;
  using topo::VertexKind;
  topo::Topology t;
  constexpr double k_free = 1e15;
  Vertex socket{.kind = VertexKind::cpu_socket, .name = "cpu0", .node = 0, .index = 0, .numa = 0};
  Vertex memory{.kind = VertexKind::host_memory, .name = "mem0", .node = 0, .index = 0, .numa = 0};
  memory.host_memory_bytes = 512 * k_gib;
  Vertex root{.kind = VertexKind::pcie_root_port, .name = "rp0", .node = 0, .index = 0, .numa = 0};
  Vertex nic{.kind = VertexKind::nic, .name = "nic0", .node = 0, .index = 0, .numa = 0};
  nic.nic_port_rate_bytes_per_s = spec.link_bytes_per_s;
  Result<topo::VertexId> s = t.add_vertex(socket);
  Result<topo::VertexId> m = t.add_vertex(memory);
  Result<topo::VertexId> r = t.add_vertex(root);
  Result<topo::VertexId> n = t.add_vertex(nic);
  if (!s.ok() || !m.ok() || !r.ok() || !n.ok()) return error(StatusCode::internal, "bench machine vertices");
  for (auto [a, b, c] : {std::tuple{*s, *m, LinkClass::memory}, {*s, *r, LinkClass::pcie}, {*r, *n, LinkClass::pcie}}) {
    if (!t.add_link(a, b, LinkSpec::symmetric(c, k_free, 0)).ok()) return error(StatusCode::internal, "bench link");
  }
  if (with_drive) {
    Vertex drive{.kind = VertexKind::nvme, .name = "nvme0", .node = 0, .index = 0, .numa = 0};
    drive.nvme_read_bytes_per_s = spec.disk_read_bytes_per_s;
    drive.nvme_write_bytes_per_s = spec.disk_write_bytes_per_s;
    drive.nvme_capacity_bytes = 4'000'000'000'000ULL;
    Result<topo::VertexId> d = t.add_vertex(drive);
    if (!d.ok() || !t.add_link(*r, *d, LinkSpec::symmetric(LinkClass::pcie, k_free, 0)).ok()) {
      return error(StatusCode::internal, "bench drive");
    }
  }
  if (Status v = t.validate(); !v.ok()) return v;
  return t;
}

RunResult run_sluice(const ReadBenchSpec& spec) {
  RunResult result;
  const auto build_start = std::chrono::steady_clock::now();
  Result<topo::Topology> server = bench_machine(spec, true);
  Result<topo::Topology> client = bench_machine(spec, false);
  if (!server.ok() || !client.ok()) {
    std::fprintf(stderr, "bench machine: %s\n", (server.ok() ? client : server).status().to_string().c_str());
    std::exit(2);
  }
  std::vector<const topo::Topology*> machines;
  for (std::uint32_t i = 0; i < spec.servers; ++i) machines.push_back(&server.value());
  for (std::uint32_t i = 0; i < spec.clients; ++i) machines.push_back(&client.value());
  topo::StarOptions star;
  star.link_bytes_per_s = spec.link_bytes_per_s;
  star.link_latency_ns = static_cast<TimeNs>(spec.link_latency_s * 1e9);
  Result<topo::Topology> cluster = topo::star_cluster(machines, star);
  if (!cluster.ok()) {
    std::fprintf(stderr, "bench cluster: %s\n", cluster.status().to_string().c_str());
    std::exit(2);
  }
  sim::SimRuntimeConfig config;
  config.profile.name = "bench-read";
  config.profile.link_classes.fill(sim::LinkClassFactors{1.0, 1.0});
  config.profile.disk_read_latency_ns = 0;
  config.profile.disk_write_latency_ns = 0;
  config.profile.disk_request_occupancy_ns = 0;
  const std::size_t request_frame = proto::encoded_size(proto::Message{request_template(spec.chunk_bytes)});
  config.profile.message_overhead_bytes =
      static_cast<std::uint32_t>(spec.request_bytes > request_frame ? spec.request_bytes - request_frame : 0);
  config.validate_messages = false;  // the codec has its own tests; this measures the simulation
  config.node_memory_limit_bytes = 64 * k_gib;
  auto rt_or = sim::SimRuntime::create(std::make_shared<const topo::Topology>(std::move(cluster).value()), config);
  if (!rt_or.ok()) {
    std::fprintf(stderr, "sim runtime: %s\n", rt_or.status().to_string().c_str());
    std::exit(2);
  }
  auto rt = std::move(rt_or).value();
  for (std::uint32_t s = 0; s < spec.servers; ++s) {
    if (!rt->add_target(s + 1, s).ok()) std::exit(2);
    rt->add_service<BenchServer>(s, s + 1, spec.server_queue_depth);
    for (std::uint32_t c = 0; c < spec.clients; ++c) {
      if (!rt->preload_object(s + 1, c, spec.chunk_bytes * spec.chunks_per_client).ok()) std::exit(2);
    }
  }
  std::vector<BenchClient*> clients;
  for (std::uint32_t c = 0; c < spec.clients; ++c) {
    clients.push_back(&rt->add_service<BenchClient>(spec.servers + c, spec, c));
  }
  result.build_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - build_start).count();
  const auto run_start = std::chrono::steady_clock::now();
  rt->run_until_idle(~std::uint64_t{0});
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
  TimeNs last = 0;
  for (const BenchClient* c : clients) {
    result.chunks += c->received();
    result.requests += c->requests();
    last = std::max(last, c->finished_at_ns());
  }
  result.simulated_s = static_cast<double>(last) * 1e-9;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  result.peak_rss_kib = usage.ru_maxrss;
  return result;
}

// ---- running in children and reporting ------------------------------------------

std::string encode(const RunResult& r) {
  char line[256];
  std::snprintf(line, sizeof line, "%.17g %.17g %.17g %" PRIu64 " %ld %" PRIu64, r.simulated_s, r.wall_s,
                r.build_wall_s, r.chunks, r.peak_rss_kib, r.requests);
  return line;
}

RunResult decode(const std::string& s) {
  RunResult r;
  std::istringstream in(s);
  in >> r.simulated_s >> r.wall_s >> r.build_wall_s >> r.chunks >> r.peak_rss_kib >> r.requests;
  return r;
}

RunResult in_child(RunResult (*run)(const ReadBenchSpec&), const ReadBenchSpec& spec, const char* what) {
  Result<std::string> out = sim::run_in_child([&]() -> Result<std::string> { return encode(run(spec)); });
  if (!out.ok()) {
    std::fprintf(stderr, "bench-sim: %s run failed: %s\n", what, out.status().to_string().c_str());
    std::exit(1);
  }
  return decode(out.value());
}

void print(const char* what, const ReadBenchSpec& spec, const RunResult& r) {
  std::printf("  %-6s C=%-5u S=%-3u R=%-4u chunks=%-8" PRIu64
              " simulated=%.6f s  wall=%.3f s (build %.3f s)  "
              "%.0f chunks/wall-s  peak_rss=%.0f MiB\n",
              what, spec.clients, spec.servers, spec.chunks_per_client, r.chunks, r.simulated_s, r.wall_s,
              r.build_wall_s, static_cast<double>(r.chunks) / r.wall_s, static_cast<double>(r.peak_rss_kib) / 1024.0);
}

// ---- scale studies (issue 4, Scale) ---------------------------------------------------
//
// Both run in a child process each, bounded by alarm(limit): a run past its
// limit is killed and reported as such. Wall time is of the engine run
// (platform and deployment apart); peak RSS is the child's ru_maxrss.

constexpr unsigned k_scale_limit_s = 900;  // per study; the aim is under 600 s

struct ScaleRun {
  double build_wall_s = 0;
  double wall_s = 0;
  double simulated_s = 0;
  long peak_rss_kib = 0;
  double work = 0;        // stats (storm) or bytes (epoch) done
  double requests = 0;    // RPCs (storm) or storage requests (epoch)
  double activities = 0;  // SimGrid activities started
  std::uint64_t hosts = 0;
  std::uint64_t links = 0;
};

std::string encode_scale(const ScaleRun& r) {
  std::ostringstream out;
  out.precision(17);
  out << r.build_wall_s << ' ' << r.wall_s << ' ' << r.simulated_s << ' ' << r.peak_rss_kib << ' ' << r.work << ' '
      << r.requests << ' ' << r.activities << ' ' << r.hosts << ' ' << r.links;
  return out.str();
}

ScaleRun decode_scale(const std::string& s) {
  ScaleRun r;
  std::istringstream in(s);
  in >> r.build_wall_s >> r.wall_s >> r.simulated_s >> r.peak_rss_kib >> r.work >> r.requests >> r.activities >>
      r.hosts >> r.links;
  return r;
}

long peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

[[noreturn]] void die(const char* what, const Status& s) {
  std::fprintf(stderr, "bench-sim scale: %s: %s\n", what, s.to_string().c_str());
  std::fflush(stderr);
  std::_Exit(2);
}

// A storage / metadata server machine: one socket, one 200 Gb/s NIC and
// `nvmes` drives of 3.2 GB/s read, 2.0 GB/s write (the bench's drive).
topo::Topology server_machine(std::uint32_t nvmes) {
  topo::GenericMachine m;
  m.gpus = 0;
  m.nics = 1;
  m.nvmes = nvmes;
  m.nvme_read_bytes_per_s = 3.2e9;
  m.nvme_write_bytes_per_s = 2.0e9;
  Result<topo::Topology> t = topo::generic_machine(m);
  if (!t.ok()) die("server machine", t.status());
  return std::move(t).value();
}

// DGX A100 nodes first (node i), then the servers, on a two-level fat tree
// (16 nodes per leaf, 8 spines, non-blocking).
std::shared_ptr<const topo::Topology> dgx_fat_tree(std::uint32_t dgx_nodes, const topo::Topology& server,
                                                   std::uint32_t servers) {
  Result<topo::Topology> dgx = topo::dgx_a100();
  if (!dgx.ok()) die("dgx_a100", dgx.status());
  std::vector<const topo::Topology*> machines(dgx_nodes, &dgx.value());
  for (std::uint32_t i = 0; i < servers; ++i) machines.push_back(&server);
  topo::FatTreeOptions ft;
  ft.nodes_per_leaf = 16;
  ft.spines = 8;
  Result<topo::Topology> cluster = topo::fat_tree_cluster(machines, ft);
  if (!cluster.ok()) die("fat tree", cluster.status());
  return std::make_shared<const topo::Topology>(std::move(cluster).value());
}

// ---- the metadata storm ----
//
// 10,000 GPU ranks (8 per DGX A100 node, 1,250 nodes) each run `ls -l` on
// one directory of 1,000,000 entries, striped over 8 metadata servers (Lustre
// DNE2 striped directory, 125,000 entries per shard). Granularity: one RPC
// per readdir-plus page of page_entries entries WITH attributes (getdents +
// the statx of each entry answered from the page: NFS READDIRPLUS, Lustre
// statahead, BeeGFS inlined inodes): the server charges page_entries x
// (meta_readdir_entry + meta_stat) CPU time (two computes, FIFO per server),
// and the reply carries page_entries x entry_bytes on the network (size only,
// no entries materialised). A client lists the shards one after the other
// (starting at rank mod shards, so that the load spreads), `inflight` pages
// at once. Logical stats = ranks x entries = 10^10; simulated RPCs = ranks x
// entries / page_entries.
struct StormSpec {
  std::uint32_t dgx_nodes = 1250;
  std::uint32_t ranks_per_node = 8;
  std::uint32_t meta_servers = 8;
  std::uint64_t entries = 1'000'000;
  std::uint32_t page_entries = 1000;
  std::uint32_t entry_bytes = 160;  // name + attributes on the wire
  std::uint32_t inflight = 1;       // pages in flight per client (ls: one getdents at a time)
};

class StormServer final : public Service {
 public:
  explicit StormServer(Env& env) : env_(env) {}
  void start() override {}
  std::string name() const override { return "storm-mds"; }
  void on_event(Event& event) override {
    if (auto* d = std::get_if<Delivery>(&event)) {
      const auto& r = std::get<proto::Readdir>(d->message);
      static_cast<void>(env_.compute(CostKind::meta_readdir_entry, r.max_entries));  // its completion is ignored
      pending_.emplace(env_.compute(CostKind::meta_stat, r.max_entries),
                       Pending{d->from, r.request_id, r.cookie + r.max_entries});
      return;
    }
    auto& c = std::get<Completion>(event);
    auto it = pending_.find(c.op);
    if (it == pending_.end()) return;
    proto::ReaddirReply reply;
    reply.request_id = it->second.request_id;
    reply.next_cookie = it->second.next_cookie;
    env_.send(it->second.client, std::move(reply)).ignore();
    pending_.erase(it);
  }

 private:
  struct Pending {
    Endpoint client;
    RequestId request_id = 0;
    std::uint64_t next_cookie = 0;
  };
  Env& env_;
  std::unordered_map<OpId, Pending> pending_;
};

class StormClient final : public Service {
 public:
  StormClient(Env& env, const StormSpec& spec, const std::vector<Endpoint>& servers, std::uint32_t rank)
      : env_(env), spec_(spec), servers_(servers), rank_(rank) {
    pages_per_shard_ = (spec.entries / spec.meta_servers + spec.page_entries - 1) / spec.page_entries;
  }
  void start() override {
    for (std::uint32_t w = 0; w < spec_.inflight; ++w) issue();
  }
  std::string name() const override { return "storm-client"; }
  void on_event(Event& event) override {
    if (!std::holds_alternative<Delivery>(event)) return;
    ++pages_done_;
    if (pages_done_ == pages_per_shard_ * spec_.meta_servers) {
      finished_at_ns_ = env_.now();
      return;
    }
    issue();
  }
  std::uint64_t pages_done() const { return pages_done_; }
  TimeNs finished_at_ns() const { return finished_at_ns_; }

 private:
  void issue() {
    if (next_ >= pages_per_shard_ * spec_.meta_servers) return;
    const std::uint64_t p = next_++;
    const std::uint32_t shard = static_cast<std::uint32_t>((p / pages_per_shard_ + rank_) % spec_.meta_servers);
    proto::Readdir m;
    m.request_id = p + 1;
    m.cookie = (p % pages_per_shard_) * spec_.page_entries;
    m.max_entries = spec_.page_entries;
    m.with_attrs = true;
    env_.send(servers_[shard], std::move(m)).ignore();
  }
  Env& env_;
  const StormSpec& spec_;
  const std::vector<Endpoint>& servers_;
  std::uint32_t rank_;
  std::uint64_t pages_per_shard_ = 0;
  std::uint64_t next_ = 0;
  std::uint64_t pages_done_ = 0;
  TimeNs finished_at_ns_ = 0;
};

ScaleRun run_storm(const StormSpec& spec) {
  ScaleRun r;
  const auto build_start = std::chrono::steady_clock::now();
  const topo::Topology server = server_machine(1);
  sim::SimRuntimeConfig config;
  config.actor_stack_kib = 64;
  config.validate_messages = false;
  auto rt_or = sim::SimRuntime::create(dgx_fat_tree(spec.dgx_nodes, server, spec.meta_servers), config);
  if (!rt_or.ok()) die("storm runtime", rt_or.status());
  auto rt = std::move(rt_or).value();
  const std::uint64_t reply_extra = std::uint64_t{spec.page_entries} * spec.entry_bytes;
  rt->set_message_hook([reply_extra](const Endpoint&, const Endpoint&, const proto::Message& m) {
    MessageFate fate;
    if (std::holds_alternative<proto::ReaddirReply>(m)) fate.extra_bytes = reply_extra;
    return fate;
  });
  std::vector<Endpoint> servers;
  for (std::uint32_t s = 0; s < spec.meta_servers; ++s) {
    servers.push_back(rt->endpoint_of(rt->add_service<StormServer>(spec.dgx_nodes + s)));
  }
  std::vector<StormClient*> clients;
  for (std::uint32_t n = 0; n < spec.dgx_nodes; ++n) {
    for (std::uint32_t g = 0; g < spec.ranks_per_node; ++g) {
      clients.push_back(&rt->add_service<StormClient>(n, spec, servers, n * spec.ranks_per_node + g));
    }
  }
  r.build_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - build_start).count();
  r.hosts = rt->platform().stats().hosts;
  r.links = rt->platform().stats().links;
  const auto run_start = std::chrono::steady_clock::now();
  rt->run_until_idle(~std::uint64_t{0});
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
  TimeNs last = 0;
  for (const StormClient* c : clients) {
    r.requests += static_cast<double>(c->pages_done());
    last = std::max(last, c->finished_at_ns());
  }
  r.work = r.requests * spec.page_entries;  // stats answered
  r.simulated_s = static_cast<double>(last) * 1e-9;
  r.activities = static_cast<double>(rt->activities_started());
  r.peak_rss_kib = peak_rss_kib();
  return r;
}

// ---- the CosmoFlow-like epoch ----
//
// 512 GPU ranks (64 DGX A100 nodes) read a 5.5 TB data set of 16 MiB files
// (327,826 files) once, each file whole into the rank's GPU memory, through
// sluice's own Client (core/services/client) and StorageService, from 64
// storage nodes (4 NVMe targets each, 3.2 GB/s read; one 200 Gb/s NIC).
// Files have Lustre's default layout, stripe_count 1 (1 MiB chunks; file f
// on target f mod 256), so a file is 16 chunk pieces on one target,
// contiguous in the object and in the buffer: the coalescing client sends one
// 16 MiB request (contiguous merging, exact in every world). Rank r reads files
// r, r + 512, ... with read_threads files in flight (DLIO read_threads; no
// compute: the data-loading bound of an epoch). The inode of each file is
// known (its open/stat is not simulated: the metadata storm covers that).
// Coalescing on: ClientConfig::coalesce {16 MiB, contiguous} (1 request per
// file instead of 16) and SimRuntimeConfig::stream_read_segment_bytes = 1 MiB.
struct EpochSpec {
  std::uint32_t dgx_nodes = 64;
  std::uint32_t storage_nodes = 64;
  std::uint32_t targets_per_node = 4;
  std::uint64_t file_bytes = 16 * k_mib;
  std::uint64_t dataset_bytes = 5'500'000'000'000ULL;
  std::uint64_t chunk_bytes = 1 * k_mib;
  std::uint32_t stripe_count = 1;
  std::uint32_t read_threads = 4;
  bool coalesce = true;
  bool stream = true;  // coalesced reads stream in chunk segments (SLUICE_EPOCH_STREAM=0: not)
  std::uint64_t files() const { return dataset_bytes / file_bytes; }
};

proto::InodeDesc epoch_inode(const EpochSpec& spec, std::uint64_t file, std::uint32_t targets) {
  std::vector<TargetId> stripe;
  for (std::uint32_t i = 0; i < spec.stripe_count; ++i) {
    stripe.push_back(static_cast<TargetId>((file * spec.stripe_count + i) % targets + 1));
  }
  Result<StripePattern> pattern = StripePattern::raid0(StripeFlavor::beegfs, spec.chunk_bytes, std::move(stripe));
  if (!pattern.ok()) die("epoch stripe pattern", pattern.status());
  proto::InodeDesc inode;
  inode.file_id = file + 1;
  inode.type = proto::InodeType::file;
  inode.size_bytes = spec.file_bytes;
  inode.stripe = to_wire(*pattern);
  return inode;
}

class EpochRank final : public Service {
 public:
  EpochRank(Env& env, ClientConfig config, const EpochSpec& spec, std::uint32_t rank, std::uint32_t ranks,
            std::uint32_t targets, std::uint16_t gpu)
      : env_(env),
        client_(env, ops_, std::move(config)),
        spec_(spec),
        rank_(rank),
        ranks_(ranks),
        targets_(targets),
        gpu_(gpu) {}
  void start() override {
    client_.start([this](Status s) {
      if (!s.ok()) die("epoch client start", s);
      buffer_ = env_.alloc(MemKind::gpu, gpu_, spec_.file_bytes * spec_.read_threads).value();
      for (std::uint32_t t = 0; t < spec_.read_threads; ++t) next(t);
    });
  }
  std::string name() const override { return "epoch-rank"; }
  void on_event(Event& event) override { client_.handle(event); }
  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t files_done() const { return files_done_; }
  TimeNs finished_at_ns() const { return finished_at_ns_; }
  Status error() const { return error_; }

 private:
  void next(std::uint32_t slot) {
    const std::uint64_t file = rank_ + std::uint64_t{issued_} * ranks_;
    if (file >= spec_.files()) {
      if (files_done_ == issued_ && finished_at_ns_ == 0) finished_at_ns_ = env_.now();
      return;
    }
    ++issued_;
    client_.read(epoch_inode(spec_, file, targets_), 0, buffer_.slice(slot * spec_.file_bytes, spec_.file_bytes),
                 [this, slot](Result<std::uint64_t> r) {
                   if (!r.ok() && error_.ok()) error_ = r.status();
                   if (r.ok()) bytes_ += *r;
                   ++files_done_;
                   next(slot);
                 });
  }
  Env& env_;
  OpTable ops_;
  Client client_;
  const EpochSpec& spec_;
  std::uint32_t rank_, ranks_, targets_;
  std::uint16_t gpu_;
  MemHandle buffer_;
  std::uint64_t issued_ = 0;
  std::uint64_t files_done_ = 0;
  std::uint64_t bytes_ = 0;
  TimeNs finished_at_ns_ = 0;
  Status error_;
};

ScaleRun run_epoch(const EpochSpec& spec) {
  ScaleRun r;
  const auto build_start = std::chrono::steady_clock::now();
  const topo::Topology server = server_machine(spec.targets_per_node);
  sim::SimRuntimeConfig config;
  config.actor_stack_kib = 256;
  config.validate_messages = false;
  config.stream_read_segment_bytes = spec.coalesce && spec.stream ? spec.chunk_bytes : 0;
  config.node_memory_limit_bytes = 64 * k_gib;
  auto rt_or = sim::SimRuntime::create(dgx_fat_tree(spec.dgx_nodes, server, spec.storage_nodes), config);
  if (!rt_or.ok()) die("epoch runtime", rt_or.status());
  auto rt = std::move(rt_or).value();
  const NodeId first_storage = spec.dgx_nodes;
  const Endpoint mgmt = rt->endpoint_of(rt->add_service<MgmtService>(first_storage, MgmtConfig{}));
  const std::uint32_t targets = spec.storage_nodes * spec.targets_per_node;
  for (std::uint32_t n = 0; n < spec.storage_nodes; ++n) {
    StorageServiceConfig sc;
    sc.mgmt = mgmt;
    for (std::uint32_t i = 0; i < spec.targets_per_node; ++i) {
      const TargetId t = n * spec.targets_per_node + i + 1;
      if (Status s = rt->add_target(t, first_storage + n); !s.ok()) die("epoch target", s);
      sc.targets.push_back(t);
    }
    rt->add_service<StorageService>(first_storage + n, sc);
  }
  const std::uint64_t object_bytes = spec.file_bytes / spec.stripe_count;  // full stripes only
  for (std::uint64_t f = 0; f < spec.files(); ++f) {
    for (std::uint32_t i = 0; i < spec.stripe_count; ++i) {
      const TargetId t = static_cast<TargetId>((f * spec.stripe_count + i) % targets + 1);
      if (Status s = rt->preload_object(t, f + 1, object_bytes); !s.ok()) die("epoch preload", s);
    }
  }
  ClientConfig cc;
  cc.mgmt = mgmt;
  cc.planner.caps.gpu_memory_reachable = true;  // GPUDirect RDMA into the rank's GPU
  if (spec.coalesce) cc.coalesce = ChunkCoalescing{spec.file_bytes, false};
  const std::uint32_t ranks = spec.dgx_nodes * 8;
  std::vector<EpochRank*> ranks_v;
  for (std::uint32_t n = 0; n < spec.dgx_nodes; ++n) {
    for (std::uint16_t g = 0; g < 8; ++g) {
      ranks_v.push_back(&rt->add_service<EpochRank>(n, cc, spec, n * 8 + g, ranks, targets, g));
    }
  }
  r.build_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - build_start).count();
  r.hosts = rt->platform().stats().hosts;
  r.links = rt->platform().stats().links;
  const auto run_start = std::chrono::steady_clock::now();
  rt->run_until_idle(~std::uint64_t{0});
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
  TimeNs last = 0;
  for (const EpochRank* k : ranks_v) {
    if (!k->error().ok()) die("epoch read", k->error());
    r.work += static_cast<double>(k->bytes());
    last = std::max(last, k->finished_at_ns());
  }
  r.requests = rt->counter("storage.requests");
  r.simulated_s = static_cast<double>(last) * 1e-9;
  r.activities = static_cast<double>(rt->activities_started());
  r.peak_rss_kib = peak_rss_kib();
  return r;
}

bool scale_in_child(const char* what, const std::function<ScaleRun()>& body, ScaleRun& out) {
  Result<std::string> res = sim::run_in_child([&]() -> Result<std::string> {
    alarm(k_scale_limit_s);  // bounded: SIGALRM ends the child past the limit
    return encode_scale(body());
  });
  if (!res.ok()) {
    std::printf("scale: %s did not complete: %s\n", what, res.status().to_string().c_str());
    return false;
  }
  out = decode_scale(*res);
  return true;
}

void run_scale_studies(bool quick, int only) {
  // quick: 1/10 of the storm's ranks (125 nodes) and 1/32 of the epoch's data.
  if (only < 0 || only == 0) {
    StormSpec storm;
    if (quick) storm.dgx_nodes = 125;
    if (const char* n = std::getenv("SLUICE_STORM_NODES")) storm.dgx_nodes = static_cast<std::uint32_t>(std::atoi(n));
    ScaleRun r;
    if (scale_in_child(
            "metadata storm", [&] { return run_storm(storm); }, r)) {
      const std::uint32_t ranks = storm.dgx_nodes * storm.ranks_per_node;
      std::printf("scale storm: %u GPU ranks (%u DGX A100 nodes, fat tree) x ls -l of %" PRIu64
                  " entries over %u MDS: %.3g stats in %.3g readdir-plus RPCs of %u entries; %.3g activities; "
                  "simulated %.1f s; platform %" PRIu64 " hosts %" PRIu64
                  " links; build %.1f s; wall %.1f s; "
                  "peak RSS %.0f MiB\n",
                  ranks, storm.dgx_nodes, storm.entries, storm.meta_servers, r.work, r.requests, storm.page_entries,
                  r.activities, r.simulated_s, r.hosts, r.links, r.build_wall_s, r.wall_s,
                  static_cast<double>(r.peak_rss_kib) / 1024.0);
    }
  }
  if (only < 0 || only == 1) {
    EpochSpec epoch;
    if (quick) epoch.dataset_bytes /= 32;
    if (const char* d = std::getenv("SLUICE_EPOCH_DIVISOR")) epoch.dataset_bytes /= std::strtoull(d, nullptr, 10);
    if (const char* c = std::getenv("SLUICE_EPOCH_COALESCE")) epoch.coalesce = std::atoi(c) != 0;
    if (const char* s = std::getenv("SLUICE_EPOCH_STREAM")) epoch.stream = std::atoi(s) != 0;
    ScaleRun r;
    if (scale_in_child(
            "CosmoFlow epoch", [&] { return run_epoch(epoch); }, r)) {
      std::printf("scale epoch: %u GPU ranks read %" PRIu64
                  " files of 16 MiB (%.4g TB) from %u storage nodes x %u "
                  "targets, coalescing %s: %.0f storage requests; %.3g activities; simulated %.4f s (%.1f GB/s); "
                  "build %.1f s; wall %.1f s; peak RSS %.0f MiB\n",
                  epoch.dgx_nodes * 8, epoch.files(), r.work * 1e-12, epoch.storage_nodes, epoch.targets_per_node,
                  epoch.coalesce ? "on" : "off", r.requests, r.activities, r.simulated_s, r.work / r.simulated_s * 1e-9,
                  r.build_wall_s, r.wall_s, static_cast<double>(r.peak_rss_kib) / 1024.0);
    }
  }
}
}  // namespace
}  // namespace sluice::bench

int main(int argc, char** argv) {
  using namespace sluice::bench;
  bool quick = sluice::bench::smoke();
  bool only_sluice = false;
  bool only_raw = false;
  bool run_p2 = true;
  bool run_scale = !sluice::bench::smoke();
  int only_size = -1;
  int only_scale = -1;  // --scale-only=0 (storm) or 1 (epoch): only that study
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--scale-only=", 13) == 0) only_scale = std::atoi(argv[i] + 13);
    quick = quick || std::strcmp(argv[i], "--quick") == 0;
    only_sluice = only_sluice || std::strcmp(argv[i], "--only-sluice") == 0;  // profiling aids
    only_raw = only_raw || std::strcmp(argv[i], "--only-raw") == 0;
    if (std::strcmp(argv[i], "--no-p2") == 0) run_p2 = false;
    if (std::strcmp(argv[i], "--no-scale") == 0) run_scale = false;
    if (std::strncmp(argv[i], "--size=", 7) == 0) only_size = std::atoi(argv[i] + 7);
  }
  if (only_scale >= 0) {
    run_scale_studies(quick, only_scale);
    return 0;
  }
  std::vector<ReadBenchSpec> sizes;
  ReadBenchSpec small;
  small.clients = 32;
  small.servers = 8;
  small.chunks_per_client = quick ? 32 : 512;
  ReadBenchSpec large;
  large.clients = 1024;
  large.servers = 64;
  large.chunks_per_client = quick ? 4 : 64;
  sizes = {small, large};
  if (sluice::bench::smoke()) sizes = {small};

  std::printf("bench-sim P1: SimEnv vs raw SimGrid S4U, chunk reads (1 MiB, W=8)\n");
  double sluice_chunks = 0, sluice_wall = 0, raw_chunks = 0, raw_wall = 0;
  bool agree = true;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    const ReadBenchSpec& spec = sizes[k];
    if (only_size >= 0 && static_cast<std::size_t>(only_size) != k) continue;
    if (only_sluice || only_raw) {
      print(only_raw ? "raw" : "sluice", spec, only_raw ? run_raw_s4u(spec) : run_sluice(spec));
      continue;
    }
    const RunResult raw = in_child(run_raw_s4u, spec, "raw S4U");
    const RunResult mine = in_child(run_sluice, spec, "sluice");
    print("raw", spec, raw);
    print("sluice", spec, mine);
    const double diff_pct = 100.0 * (mine.simulated_s - raw.simulated_s) / raw.simulated_s;
    std::printf(
        "  simulated time: sluice vs raw %+.2f%% (must agree within 5%%); chunks per wall-second sluice/raw %.3f\n",
        diff_pct, (static_cast<double>(mine.chunks) / mine.wall_s) / (static_cast<double>(raw.chunks) / raw.wall_s));
    agree = agree && std::abs(diff_pct) <= 5.0 && mine.chunks == raw.chunks;
    sluice_chunks += static_cast<double>(mine.chunks);
    sluice_wall += mine.wall_s;
    raw_chunks += static_cast<double>(raw.chunks);
    raw_wall += raw.wall_s;
  }
  const double ratio = (sluice_chunks / sluice_wall) / (raw_chunks / raw_wall);
  if (only_sluice || only_raw || only_size >= 0) {
    std::printf("RESULT P1 ratio=%.3f goal=0.8\n", ratio);
    return 0;
  }
  std::printf("RESULT P1 ratio=%.3f goal=0.8%s\n", ratio, agree ? "" : " (simulated times disagree!)");

  // P2: the same workload with coalescing (8 chunks of one client on one
  // server per request), R = 512 chunks per client at both sizes so that a
  // client has chunks to merge (at R = 64 and S = 64 every chunk of a client
  // is on another server). Error: simulated time against SimEnv per chunk
  // on the same R. The raw program's rate is its chunks per wall-second from
  // P1 (its cost per chunk does not depend on R: each chunk is the same work).
  bool p2_ok = true;
  if (run_p2) {
    std::printf(
        "bench-sim P2: SimEnv with coalescing (8 chunks per request) vs SimEnv per chunk vs raw S4U (P1 rate)\n");
    double co_chunks = 0, co_wall = 0, worst_err = 0;
    for (ReadBenchSpec spec : sizes) {
      // A client needs 8 x S chunks to fill one row; --quick runs the small size only.
      if (quick && spec.servers > 8) continue;
      spec.chunks_per_client = quick ? 64 : 512;
      const RunResult per_chunk = in_child(run_sluice, spec, "sluice per chunk");
      ReadBenchSpec co = spec;
      co.coalesce_chunks = 8;
      const RunResult merged = in_child(run_sluice, co, "sluice coalesced");
      print("chunk", spec, per_chunk);
      print("coal.", co, merged);
      const double err = 100.0 * (merged.simulated_s - per_chunk.simulated_s) / per_chunk.simulated_s;
      std::printf("  coalesced: %" PRIu64 " requests for %" PRIu64
                  " chunks; simulated time %+.3f%% vs per chunk; "
                  "wall speed-up %.1fx\n",
                  merged.requests, merged.chunks, err,
                  (static_cast<double>(merged.chunks) / merged.wall_s) /
                      (static_cast<double>(per_chunk.chunks) / per_chunk.wall_s));
      p2_ok = p2_ok && merged.chunks == per_chunk.chunks;
      if (std::abs(err) > std::abs(worst_err)) worst_err = err;
      co_chunks += static_cast<double>(merged.chunks);
      co_wall += merged.wall_s;
    }
    const double p2 = (co_chunks / co_wall) / (raw_chunks / raw_wall);
    std::printf("RESULT P2 ratio=%.3f goal=10 error=%+.3f%%%s\n", p2, worst_err,
                p2_ok ? "" : " (chunk counts differ!)");
  }
  if (run_scale) run_scale_studies(quick, only_scale);
  return agree && p2_ok ? 0 : 1;
}
