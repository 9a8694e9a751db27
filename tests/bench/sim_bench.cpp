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
// over all sizes together (chunks summed, wall times summed).
// Where the time goes (perf, SimGrid 3.32): at 1,024 clients both programs
// spend most of it in SimGrid's linear removal of finished activities from
// activity lists (std::list::remove in CommImpl::finish); see
// sim/sim_runtime.hpp for how SimEnv keeps those lists short.
// Options: --quick (small R), --size=N, --only-sluice / --only-raw (profiling).
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

#include "core/proto/codec.hpp"
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
      const OpId op = env_.storage_io(StorageIoSpec{StorageOp::read, target_, m.file_id, m.object_offset, staging, false});
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

class BenchClient final : public Service {
 public:
  BenchClient(Env& env, const ReadBenchSpec& spec, std::uint32_t rank) : env_(env), spec_(spec), rank_(rank) {}
  void start() override {
    buffer_ = env_.alloc(MemKind::pinned, 0, spec_.chunk_bytes * spec_.window).value();
    for (std::uint32_t w = 0; w < spec_.window && issued_ < spec_.chunks_per_client; ++w) issue(w);
  }
  std::string name() const override { return "bench-client"; }
  void on_event(Event& event) override {
    auto* d = std::get_if<Delivery>(&event);
    if (d == nullptr) return;
    const auto& reply = std::get<proto::ChunkReply>(d->message);
    const auto slot = static_cast<std::uint32_t>(slot_of_.at(reply.request_id));
    slot_of_.erase(reply.request_id);
    ++received_;
    if (issued_ < spec_.chunks_per_client) {
      issue(slot);
    } else if (received_ == spec_.chunks_per_client) {
      finished_at_ns_ = env_.now();
    }
  }
  std::uint32_t received() const { return received_; }
  TimeNs finished_at_ns() const { return finished_at_ns_; }

 private:
  void issue(std::uint32_t slot) {
    const std::uint32_t k = issued_++;
    const std::uint32_t server = (rank_ + k) % spec_.servers;
    proto::ReadChunk m = request_template(spec_.chunk_bytes);
    m.request_id = k + 1;
    m.file_id = rank_;
    m.target = server + 1;
    m.object_offset = std::uint64_t{k} * spec_.chunk_bytes;
    m.dst = buffer_.slice(std::uint64_t{slot} * spec_.chunk_bytes, spec_.chunk_bytes);
    slot_of_[m.request_id] = slot;
    env_.send(Endpoint{server, 0}, std::move(m)).ignore();
  }
  Env& env_;
  const ReadBenchSpec& spec_;
  std::uint32_t rank_;
  MemHandle buffer_;
  std::uint32_t issued_ = 0;
  std::uint32_t received_ = 0;
  TimeNs finished_at_ns_ = 0;
  std::map<RequestId, std::uint32_t> slot_of_;
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
    last = std::max(last, c->finished_at_ns());
  }
  result.simulated_s = static_cast<double>(last) * 1e-9;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  result.peak_rss_kib = usage.ru_maxrss;
  return result;
}

// ---- scale: building a 10,000-GPU platform ------------------------------------------

struct ScaleResult {
  std::size_t hosts = 0, links = 0, zones = 0, leaves = 0;
  double build_wall_s = 0;
  long peak_rss_kib = 0;
};

ScaleResult build_dgx_cluster(std::uint32_t nodes) {
  ScaleResult r;
  const auto start = std::chrono::steady_clock::now();
  Result<topo::Topology> dgx = topo::dgx_a100();
  topo::FatTreeOptions ft;
  ft.nodes_per_leaf = 16;
  ft.spines = 8;
  Result<topo::Topology> cluster = dgx.ok() ? topo::fat_tree_cluster(*dgx, nodes, ft) : dgx.status();
  if (!cluster.ok()) {
    std::fprintf(stderr, "scale cluster: %s\n", cluster.status().to_string().c_str());
    std::exit(2);
  }
  sim::SimRuntimeConfig config;
  config.actor_stack_kib = 256;
  auto rt = sim::SimRuntime::create(std::make_shared<const topo::Topology>(std::move(cluster).value()), config);
  if (!rt.ok()) {
    std::fprintf(stderr, "scale runtime: %s\n", rt.status().to_string().c_str());
    std::exit(2);
  }
  r.build_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const sim::PlatformStats& st = (*rt)->platform().stats();
  r.hosts = st.hosts;
  r.links = st.links;
  r.zones = st.zones;
  r.leaves = st.leaves;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  r.peak_rss_kib = usage.ru_maxrss;
  return r;
}

// ---- running in children and reporting ------------------------------------------

std::string encode(const RunResult& r) {
  char line[256];
  std::snprintf(line, sizeof line, "%.17g %.17g %.17g %" PRIu64 " %ld", r.simulated_s, r.wall_s, r.build_wall_s,
                r.chunks, r.peak_rss_kib);
  return line;
}

RunResult decode(const std::string& s) {
  RunResult r;
  std::istringstream in(s);
  in >> r.simulated_s >> r.wall_s >> r.build_wall_s >> r.chunks >> r.peak_rss_kib;
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
  std::printf("  %-6s C=%-5u S=%-3u R=%-4u chunks=%-8" PRIu64 " simulated=%.6f s  wall=%.3f s (build %.3f s)  "
              "%.0f chunks/wall-s  peak_rss=%.0f MiB\n",
              what, spec.clients, spec.servers, spec.chunks_per_client, r.chunks, r.simulated_s, r.wall_s,
              r.build_wall_s, static_cast<double>(r.chunks) / r.wall_s, static_cast<double>(r.peak_rss_kib) / 1024.0);
}

}  // namespace
}  // namespace sluice::bench

int main(int argc, char** argv) {
  using namespace sluice::bench;
  bool quick = false;
  bool only_sluice = false;
  bool only_raw = false;
  int only_size = -1;
  for (int i = 1; i < argc; ++i) {
    quick = quick || std::strcmp(argv[i], "--quick") == 0;
    only_sluice = only_sluice || std::strcmp(argv[i], "--only-sluice") == 0;  // profiling aids
    only_raw = only_raw || std::strcmp(argv[i], "--only-raw") == 0;
    if (std::strncmp(argv[i], "--size=", 7) == 0) only_size = std::atoi(argv[i] + 7);
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
    std::printf("  simulated time: sluice vs raw %+.2f%% (must agree within 5%%); chunks per wall-second sluice/raw %.3f\n",
                diff_pct, (static_cast<double>(mine.chunks) / mine.wall_s) / (static_cast<double>(raw.chunks) / raw.wall_s));
    agree = agree && std::abs(diff_pct) <= 5.0 && mine.chunks == raw.chunks;
    sluice_chunks += static_cast<double>(mine.chunks);
    sluice_wall += mine.wall_s;
    raw_chunks += static_cast<double>(raw.chunks);
    raw_wall += raw.wall_s;
  }
  const double ratio = (sluice_chunks / sluice_wall) / (raw_chunks / raw_wall);

  // Scale: the 10,000-GPU platform itself (the storm and epoch scenarios
  // need flow coalescing, which is not implemented).
  if (!only_sluice && !only_raw && only_size < 0) {
    const std::uint32_t nodes = quick ? 128 : 1250;
    sluice::Result<std::string> scale = sluice::sim::run_in_child([nodes]() -> sluice::Result<std::string> {
      const ScaleResult r = build_dgx_cluster(nodes);
      char line[256];
      std::snprintf(line, sizeof line, "%zu %zu %zu %zu %.17g %ld", r.hosts, r.links, r.zones, r.leaves, r.build_wall_s,
                    r.peak_rss_kib);
      return std::string(line);
    });
    if (scale.ok()) {
      ScaleResult r;
      std::istringstream in(*scale);
      in >> r.hosts >> r.links >> r.zones >> r.leaves >> r.build_wall_s >> r.peak_rss_kib;
      std::printf("scale: %u x DGX A100 (%u GPUs), fat tree 16 nodes/leaf, 8 spines: %zu hosts, %zu links, %zu zones "
                  "(%zu leaves); build %.2f s wall, peak RSS %.0f MiB\n",
                  nodes, nodes * 8, r.hosts, r.links, r.zones, r.leaves, r.build_wall_s,
                  static_cast<double>(r.peak_rss_kib) / 1024.0);
    } else {
      std::printf("scale: platform build failed: %s\n", scale.status().to_string().c_str());
    }
    std::printf("scale: metadata storm (1,250 nodes x 1,000,000 stats) and CosmoFlow epoch not run: they need flow "
                "coalescing, which is not implemented\n");
  }
  std::printf("RESULT P1 ratio=%.3f goal=0.8%s\n", ratio, agree ? "" : " (simulated times disagree!)");
  std::printf("RESULT P2 ratio=n/a goal=10 error=n/a (flow coalescing not implemented)\n");
  return agree ? 0 : 1;
}
