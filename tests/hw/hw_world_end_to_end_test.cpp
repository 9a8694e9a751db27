// The file system's services end to end on HwEnv: the same service objects
// as in TestWorld, each on its own thread, talking over loopback TCP, with
// chunks in real files (every available storage backend) and every byte read
// verified against the pattern written.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/services/meta_service.hpp"
#include "core/services/mgmt_service.hpp"
#include "core/services/storage_service.hpp"
#include "core/workloads/barrier_service.hpp"
#include "core/workloads/client_host.hpp"
#include "core/workloads/file_sweep.hpp"
#include "hw/hw_world.hpp"

namespace sluice::hw {
namespace {

constexpr TimeNs k_max_run_ns = 60 * k_ns_per_s;  // bound on a run: a hang becomes a failure

class TempDir {
 public:
  TempDir() {
    char templ[] = "/tmp/sluice-hwworld-test-XXXXXX";
    path_ = ::mkdtemp(templ);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::vector<std::string> available_backends() {
  std::vector<std::string> names;
  for (const auto& l : list_storage_backends()) {
    if (l.available) names.push_back(l.name);
  }
  return names;
}

// Node 0: mgmt and barrier; node 1: metadata; nodes 2..: storage (one target
// each); then client nodes.
struct SmallCluster {
  static constexpr std::uint32_t k_storage_nodes = 2;

  SmallCluster(HwWorld& world, std::uint32_t stripe_count, RpcLimits client_rpc = {}) : world_(world) {
    mgmt = world.endpoint_of(world.add_service<MgmtService>(0, MgmtConfig{}));
    barrier = world.endpoint_of(world.add_service<BarrierService>(0));
    MetaServiceConfig mc;
    mc.shard = 0;
    mc.mgmt = mgmt;
    mc.ns.shard_count = 1;
    mc.default_chunk_bytes = 256 * k_kib;
    mc.default_stripe_count = stripe_count;
    servers.push_back(&world.add_service<MetaService>(1, mc));
    for (std::uint32_t s = 0; s < k_storage_nodes; ++s) {
      const NodeId node = 2 + s;
      const TargetId target = 1 + s;
      status = world.add_target(target, node);
      if (!status.ok()) return;
      StorageServiceConfig sc;
      sc.mgmt = mgmt;
      sc.targets = {target};
      servers.push_back(&world.add_service<StorageService>(node, sc));
    }
    rpc = client_rpc;
  }

  ClientHost& add_host(NodeId node, std::unique_ptr<Workload> workload, std::uint32_t rank, std::uint32_t ranks) {
    ClientHostConfig hc;
    hc.client.mgmt = mgmt;
    hc.client.ns.shard_count = 1;
    hc.client.rpc = rpc;
    hc.rank = rank;
    hc.ranks = ranks;
    hc.barrier = barrier;
    ClientHost& host = world_.add_service<ClientHost>(node, hc, std::move(workload));
    world_.defer_start(host);
    hosts.push_back(&host);
    return host;
  }

  // Starts the world, waits until every server has registered with mgmt,
  // then starts the clients (a client that comes first finds no shard).
  Status start() {
    Status st = world_.start();
    if (!st.ok()) return st;
    const bool ready = world_.wait_until(
        [&] {
          for (Service* s : servers) {
            const bool registered = world_.call(*s, [s] {
              if (auto* m = dynamic_cast<MetaService*>(s)) return m->registered();
              return static_cast<StorageService*>(s)->registered();
            });
            if (!registered) return false;
          }
          return true;
        },
        k_max_run_ns);
    if (!ready) return error(StatusCode::timed_out, "servers did not register with mgmt");
    for (ClientHost* h : hosts) world_.start_service(*h);
    return ok_status();
  }

  HwWorld& world_;
  std::vector<Service*> servers;
  std::vector<ClientHost*> hosts;
  Endpoint mgmt, barrier;
  RpcLimits rpc;
  Status status;
};

class HwWorldEndToEnd : public ::testing::TestWithParam<std::string> {
 protected:
  HwWorldConfig config() {
    HwWorldConfig c;
    c.storage_backend = GetParam();
    c.storage_root = dir_.path() + "/storage";
    c.node_memory_limit_bytes = 512ULL << 20;
    return c;
  }
  TempDir dir_;
};

TEST_P(HwWorldEndToEnd, FileSweepWritesReadsAndVerifiesOverTcpAndRealFiles) {
  HwWorldConfig authenticated = config();
  authenticated.shared_secret = "e2e-cluster-secret-0123456789";  // every connection proves it (tcp_auth.hpp)
  HwWorld world(authenticated);
  SmallCluster cluster(world, 2);
  ASSERT_TRUE(cluster.status.ok()) << cluster.status.to_string();
  FileSweepConfig sweep;
  sweep.files_per_rank = 6;
  sweep.file_bytes = 1 * k_mib + 4097;  // unaligned tails take the buffered path
  sweep.block_bytes = 256 * k_kib;
  sweep.threads = 3;
  sweep.sync_writes = true;
  constexpr std::uint32_t k_ranks = 2;
  std::vector<ClientHost*> hosts;
  std::vector<FileSweep*> sweeps;
  for (std::uint32_t rank = 0; rank < k_ranks; ++rank) {
    auto workload = std::make_unique<FileSweep>(sweep);
    sweeps.push_back(workload.get());
    hosts.push_back(&cluster.add_host(4 + rank, std::move(workload), rank, k_ranks));
  }
  ASSERT_TRUE(cluster.start().ok());
  const bool finished = world.wait_until(
      [&] {
        for (ClientHost* h : hosts) {
          if (!world.call(*h, [h] { return h->finished(); })) return false;
        }
        return true;
      },
      k_max_run_ns);
  if (!finished) {
    const auto logs = world.logs();
    for (std::size_t i = logs.size() > 40 ? logs.size() - 40 : 0; i < logs.size(); ++i) ADD_FAILURE() << logs[i];
  }
  ASSERT_TRUE(finished) << "the sweep did not finish";
  const std::uint64_t total = k_ranks * sweep.files_per_rank * sweep.file_bytes;
  for (std::uint32_t rank = 0; rank < k_ranks; ++rank) {
    ClientHost* h = hosts[rank];
    const Status result = world.call(*h, [h] { return h->result(); });
    ASSERT_TRUE(result.ok()) << "rank " << rank << ": " << result.to_string();
    const auto results = world.call(*h, [&] { return sweeps[rank]->results(); });
    for (const RankPhaseResult& r : results) {
      if (r.phase == "write" || r.phase == "read") {
        EXPECT_EQ(r.bytes, sweep.files_per_rank * sweep.file_bytes) << r.phase;
      }
    }
  }
  world.stop();  // counters are read once every thread has stopped
  EXPECT_EQ(world.counter("storage.write_bytes"), static_cast<double>(total));
  EXPECT_EQ(world.counter("storage.read_bytes"), static_cast<double>(total));
  EXPECT_EQ(world.counter("client.crc_mismatches"), 0.0);
  EXPECT_EQ(world.counter("storage.crc_mismatches"), 0.0);
}

// Writes one file, then waits for the test's cue to read it back.
class WriteThenReadOnCue final : public Workload {
 public:
  std::string name() const override { return "write_then_read"; }
  void start(WorkloadContext& ctx, std::function<void(Status)> done) override {
    ctx_ = &ctx;
    done_ = std::move(done);
    CreateOptions one_target;
    one_target.stripe_count = 1;
    ctx.client.create("/k", one_target, [this](Result<proto::InodeDesc> created) {
      if (!created.ok()) return done_(created.status());
      inode_ = *created;
      Result<MemHandle> b = ctx_->env.alloc(MemKind::pinned, 0, k_bytes);
      if (!b.ok()) return done_(b.status());
      buffer_ = *b;
      ctx_->ops.expect(ctx_->env.fill(buffer_, PatternSpec{9, 0}), [this](Completion&) {
        ctx_->client.write(inode_, 0, buffer_, false, [this](Result<std::uint64_t> w) {
          if (!w.ok()) return done_(w.status());
          ctx_->client.close("/k", k_bytes, [this](Status closed) {
            if (!closed.ok()) return done_(closed);
            inode_.size_bytes = k_bytes;  // what close recorded; the read is clamped to it
            written = true;
          });
        });
      });
    });
  }
  void read_now() {
    ctx_->client.read(inode_, 0, buffer_, [this](Result<std::uint64_t> r) { done_(r.status()); });
  }
  TargetId target() const { return inode_.stripe.targets.empty() ? k_no_id : inode_.stripe.targets[0]; }

  static constexpr std::uint64_t k_bytes = 1 * k_mib;
  bool written = false;

 private:
  WorkloadContext* ctx_ = nullptr;
  std::function<void(Status)> done_;
  proto::InodeDesc inode_;
  MemHandle buffer_;
};

TEST_P(HwWorldEndToEnd, KillingAStorageNodeFailsTheReadNamingTheTarget) {
  HwWorld world(config());
  RpcLimits fast;  // fail quickly once the server is gone
  fast.timeout_ns = 200 * k_ns_per_ms;
  fast.max_attempts = 2;
  SmallCluster cluster(world, 1, fast);
  ASSERT_TRUE(cluster.status.ok());
  auto workload = std::make_unique<WriteThenReadOnCue>();
  WriteThenReadOnCue* w = workload.get();
  ClientHost& host = cluster.add_host(4, std::move(workload), 0, 1);
  ASSERT_TRUE(cluster.start().ok());
  ASSERT_TRUE(
      world.wait_until([&] { return world.call(host, [&] { return w->written || host.finished(); }); }, k_max_run_ns));
  ASSERT_FALSE(world.call(host, [&] { return host.finished(); }))
      << world.call(host, [&] { return host.result().to_string(); });
  const TargetId target = world.call(host, [&] { return w->target(); });
  const NodeId node = world.node_of_target(target);
  ASSERT_NE(node, k_no_id);
  world.kill_node(node);
  world.call(host, [&] { w->read_now(); });
  ASSERT_TRUE(world.wait_until([&] { return world.call(host, [&] { return host.finished(); }); }, k_max_run_ns));
  const Status result = world.call(host, [&] { return host.result(); });
  EXPECT_FALSE(result.ok());
  EXPECT_NE(result.message().find("target " + std::to_string(target)), std::string::npos) << result.to_string();
  RecordProperty("failure", result.to_string());
}

INSTANTIATE_TEST_SUITE_P(Backends, HwWorldEndToEnd, ::testing::ValuesIn(available_backends()),
                         [](const ::testing::TestParamInfo<std::string>& param_info) { return param_info.param; });

}  // namespace
}  // namespace sluice::hw
