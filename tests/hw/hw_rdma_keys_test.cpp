// Carried RDMA keys on HwEnv, without an RDMA device: a test-only transport
// ("tcp_keyed_test") moves bytes over TCP but declares itself one-sided and
// behaves as an RDMA NIC does about keys: it grants a key per (region, rail)
// through remote_access() and refuses a put/get whose carried key is not the
// region's key on the rail it reaches. So HwEnv's remote_access, HwNode's
// choice between the carried key and the fallback, its counters and log
// lines, and the client -> ReadChunk/WriteChunk -> storage server path are
// exercised for real; the ucx transport's own keys are tested in
// tests/transports/ucx.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/services/meta_service.hpp"
#include "core/services/mgmt_service.hpp"
#include "core/services/storage_service.hpp"
#include "core/workloads/barrier_service.hpp"
#include "core/workloads/client_host.hpp"
#include "core/workloads/file_sweep.hpp"
#include "hw/hw_world.hpp"
#include "core/common/pattern.hpp"
#include "core/proto/crc32c.hpp"
#include "hw_backends/gpu_memory_ops.hpp"
#include "tests/hw/fake_gpu_ops.hpp"
#include "tests/hw_backends/wrapped_tcp_transport.hpp"
#include "transports/transport.hpp"

namespace sluice::hw {
namespace {

constexpr TimeNs k_max_run_ns = 60 * k_ns_per_s;  // bound on a run: a hang becomes a failure
constexpr std::string_view k_keyed = "tcp_keyed_test";

// What the keyed transports of this process saw (every node's).
struct KeyStats {
  std::atomic<std::uint64_t> carried_ok{0};   // put/get with the right key
  std::atomic<std::uint64_t> carried_bad{0};  // refused: not the region's key on that rail
  std::atomic<std::uint64_t> missing{0};      // no key carried: an RDMA NIC would have asked
  void reset() {
    carried_ok = 0;
    carried_bad = 0;
    missing = 0;
  }
};
KeyStats& key_stats() {
  static KeyStats s;
  return s;
}

// The synthetic key of region `key` on rail `rail`: one address per region,
// one rkey per (region, rail), as one MR per device.
transport::RemoteRegionAccess synthetic_key(std::uint64_t key, std::uint32_t rail, std::uint64_t length) {
  return transport::RemoteRegionAccess{0x00007F0000000000ull + (key << 24),
                                       static_cast<std::uint32_t>(key * 131 + rail + 1), length};
}

// TCP's declaration made one-sided, and reaching CUDA memory where asked.
transport::Capabilities keyed_capabilities(transport::Capabilities tcp, bool reach_cuda) {
  tcp.rdma_write = true;
  tcp.rdma_read = true;
  if (reach_cuda) tcp.region_kinds.push_back(transport::RegionKind::cuda);
  return tcp;
}

class KeyedTcpTransport final : public WrappedTcpTransport {
 public:
  KeyedTcpTransport(std::unique_ptr<transport::Transport> tcp, std::string_view name, transport::Capabilities caps)
      : WrappedTcpTransport(std::move(tcp), name, std::move(caps)) {}
  // "GPU" memory here is host memory (FakeGpu, fake_gpu_ops.hpp): TCP moves it as such.
  Status register_region(std::uint64_t key, std::span<std::byte> bytes, transport::RegionKind kind) override {
    Status st = WrappedTcpTransport::register_region(key, bytes, kind);
    if (st.ok()) {
      std::lock_guard lock(mu_);
      lengths_[key] = bytes.size();
    }
    return st;
  }
  Status deregister_region(std::uint64_t key) override {
    {
      std::lock_guard lock(mu_);
      lengths_.erase(key);
    }
    return WrappedTcpTransport::deregister_region(key);
  }
  Result<transport::RemoteRegionAccess> remote_access(std::uint64_t key, std::uint32_t rail,
                                                      std::uint64_t grantee_id) override {
    if (rail >= listen_address().rails.size()) return error(StatusCode::invalid_argument, "no rail");
    // The grant is TCP's to check (HwNode requires grants): record it there too.
    if (Result<transport::RemoteRegionAccess> tcp = WrappedTcpTransport::remote_access(key, rail, grantee_id);
        !tcp.ok()) {
      return tcp.status();
    }
    std::lock_guard lock(mu_);
    auto it = lengths_.find(key);
    if (it == lengths_.end()) return error(StatusCode::not_found, "no region " + std::to_string(key));
    return synthetic_key(key, rail, it->second);
  }
  Status put(const transport::BulkRequest& request) override {
    if (Status st = check_key(request); !st.ok()) return st;
    return WrappedTcpTransport::put(request);
  }
  Status get(const transport::BulkRequest& request) override {
    if (Status st = check_key(request); !st.ok()) return st;
    return WrappedTcpTransport::get(request);
  }

 private:
  // Our rail r reaches the peer's rail r: the key must be the remote
  // region's key on that rail (every region of a node has the same
  // synthetic address for its key, whatever the node: enough here).
  Status check_key(const transport::BulkRequest& request) {
    if (!request.remote_access) {
      ++key_stats().missing;
      return ok_status();
    }
    const transport::RemoteRegionAccess expected =
        synthetic_key(request.remote_key, request.rail, request.remote_access->length);
    if (request.remote_access->address != expected.address || request.remote_access->rkey != expected.rkey) {
      ++key_stats().carried_bad;
      return error(StatusCode::invalid_argument,
                   "remote access error: rkey " + std::to_string(request.remote_access->rkey) + " is not region " +
                       std::to_string(request.remote_key) + "'s on rail " + std::to_string(request.rail));
    }
    ++key_stats().carried_ok;
    return ok_status();
  }

  std::mutex mu_;
  std::map<std::uint64_t, std::uint64_t> lengths_;
};

bool register_keyed(std::string_view name, bool reach_cuda) {
  return register_wrapped_tcp(
      std::string(name), [reach_cuda](transport::Capabilities tcp) { return keyed_capabilities(tcp, reach_cuda); },
      [name, reach_cuda](std::unique_ptr<transport::Transport> tcp) -> std::unique_ptr<transport::Transport> {
        transport::Capabilities caps = keyed_capabilities(tcp->capabilities(), reach_cuda);
        return std::make_unique<KeyedTcpTransport>(std::move(tcp), name, std::move(caps));
      });
}
const bool k_keyed_registered = register_keyed(k_keyed, false);
// The same, declaring that it reaches CUDA memory as ucx with CUDA support does.
constexpr std::string_view k_keyed_gpu = "tcp_keyed_gpu_test";
const bool k_keyed_gpu_registered = register_keyed(k_keyed_gpu, true);

class TempDir {
 public:
  TempDir() {
    char templ[] = "/tmp/sluice-hwkeys-test-XXXXXX";
    path_ = ::mkdtemp(templ);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

HwWorldConfig keyed_config(const TempDir& dir, const std::string& transport, std::uint32_t rails) {
  HwWorldConfig c;
  c.transport = transport;
  c.rails_per_node = rails;
  c.storage_root = dir.path() + "/storage";
  c.node_memory_limit_bytes = 512ULL << 20;
  return c;
}

// Records its completions; the test drives it through HwWorld::call.
class Probe final : public Service {
 public:
  explicit Probe(Env& env) : env_(env) {}
  void start() override {}
  void on_event(Event& event) override {
    if (auto* c = std::get_if<Completion>(&event)) done.push_back(*c);
  }
  std::string name() const override { return "probe"; }
  Env& env() { return env_; }
  std::vector<Completion> done;

 private:
  Env& env_;
};

struct ProbePair {
  Probe* owner = nullptr;  // node 1: owns the remote region
  Probe* mover = nullptr;  // node 2: starts the transfers
};

ProbePair add_probes(HwWorld& world) {
  ProbePair p;
  p.owner = &world.add_service<Probe>(1);
  p.mover = &world.add_service<Probe>(2);
  return p;
}

TEST(HwRdmaKeys, TheCarriedKeyGoesDownTheRailItWasGrantedForAndEveryFallbackIsCounted) {
  ASSERT_TRUE(k_keyed_registered);
  key_stats().reset();
  TempDir dir;
  HwWorld world(keyed_config(dir, std::string(k_keyed), 2));
  ProbePair p = add_probes(world);
  ASSERT_TRUE(world.start().ok());
  constexpr std::uint64_t k_bytes = 8192;
  struct Granted {
    MemHandle region;
    proto::RdmaRegionDesc rail0, rail1;
  };
  const Granted g = world.call(*p.owner, [&] {
    Granted out;
    out.region = p.owner->env().alloc(MemKind::host, 0, k_bytes).value();
    out.rail0 = p.owner->env().remote_access(out.region, 0, 2).value();
    out.rail1 = p.owner->env().remote_access(out.region, 1, 2).value();
    return out;
  });
  EXPECT_EQ(g.rail0.nic, 0u);
  EXPECT_EQ(g.rail1.nic, 1u);
  EXPECT_EQ(g.rail0.address, g.rail1.address) << "one region, one address";
  EXPECT_NE(g.rail0.rkey, g.rail1.rkey) << "one key per rail";
  EXPECT_EQ(g.rail0.length, k_bytes);
  // A NIC beyond this node's rails maps to rail nic % rails (logged), as
  // transfers do: the key granted for NIC 7 is rail 1's.
  const proto::RdmaRegionDesc nic7 =
      world.call(*p.owner, [&] { return p.owner->env().remote_access(g.region, 7, 2).value(); });
  EXPECT_EQ(nic7.nic, 7u);
  EXPECT_EQ(nic7.rkey, g.rail1.rkey);
  const Status unknown = world.call(*p.owner, [&] {
    return p.owner->env().remote_access(MemHandle{1, MemKind::host, 0, 999, 0, 16}, 0, 2).status();
  });
  EXPECT_FALSE(unknown.ok()) << "a region the node does not own has no key";

  auto transfer = [&](std::optional<proto::RdmaRegionDesc> key) {
    return world.call(*p.mover, [&] {
      TransferSpec t;
      t.src = p.mover->env().alloc(MemKind::pinned, 0, 4096).value();
      t.dst = g.region.slice(4096, 4096);
      t.src_nic = 0;
      t.dst_nic = 0;
      t.mode = TransferMode::rdma_write;
      t.remote_region = key;
      return p.mover->env().transfer(t);
    });
  };
  transfer(g.rail0);       // carried, right key: no round trip
  transfer(g.rail1);       // a key for rail 1 on a rail-0 transfer: fallback
  transfer(std::nullopt);  // no key: fallback
  proto::RdmaRegionDesc forged = g.rail0;
  forged.rkey ^= 1;
  transfer(forged);  // carried, wrong key: the NIC refuses it
  ASSERT_TRUE(
      world.wait_until([&] { return world.call(*p.mover, [&] { return p.mover->done.size(); }) == 4; }, k_max_run_ns));
  const std::vector<Completion> done = world.call(*p.mover, [&] { return p.mover->done; });
  world.stop();
  std::size_t ok = 0, refused = 0;
  for (const Completion& c : done) {
    if (c.status.ok()) ++ok;
    if (c.status.code() == StatusCode::invalid_argument &&
        c.status.message().find("remote access error") != std::string::npos) {
      ++refused;
    }
  }
  EXPECT_EQ(ok, 3u);
  EXPECT_EQ(refused, 1u);
  EXPECT_EQ(world.counter(k_metric_rdma_key_carried), 2.0);
  EXPECT_EQ(world.counter(k_metric_rdma_key_fallback), 2.0);
  EXPECT_EQ(key_stats().carried_ok.load(), 1u);
  EXPECT_EQ(key_stats().carried_bad.load(), 1u);
  EXPECT_EQ(key_stats().missing.load(), 2u);
  bool logged_rail = false, logged_none = false;
  for (const std::string& line : world.logs()) {
    if (line.find("the carried key is for rail 1, the transfer reaches rail 0") != std::string::npos)
      logged_rail = true;
    if (line.find("no key carried") != std::string::npos) logged_none = true;
  }
  EXPECT_TRUE(logged_rail) << "a fallback for a key of another rail is logged";
  EXPECT_TRUE(logged_none) << "a fallback for a missing key is logged";
}

TEST(HwRdmaKeys, OverTcpAGrantCarriesNoKeyAndNothingIsCounted) {
  TempDir dir;
  HwWorld world(keyed_config(dir, "tcp", 1));
  ProbePair p = add_probes(world);
  ASSERT_TRUE(world.start().ok());
  const Result<proto::RdmaRegionDesc> granted = world.call(*p.owner, [&] {
    const MemHandle region = p.owner->env().alloc(MemKind::host, 0, 4096).value();
    return p.owner->env().remote_access(region, 0, 2);
  });
  ASSERT_TRUE(granted.ok()) << granted.status().to_string();
  EXPECT_EQ(granted->rkey, 0u);
  EXPECT_EQ(granted->address, 0u);
  EXPECT_EQ(granted->length, 4096u);
  world.stop();
  EXPECT_EQ(world.counter(k_metric_rdma_key_carried), 0.0);
}

// The whole path: a client's chunks carry keys, the storage server's
// one-sided transfers use them, nothing falls back, every byte verifies.
TEST(HwRdmaKeys, FileSweepChunksCarryKeysFromClientToStorageServer) {
  ASSERT_TRUE(k_keyed_registered);
  key_stats().reset();
  TempDir dir;
  HwWorld world(keyed_config(dir, std::string(k_keyed), 2));
  const Endpoint mgmt = world.endpoint_of(world.add_service<MgmtService>(0, MgmtConfig{}));
  const Endpoint barrier = world.endpoint_of(world.add_service<BarrierService>(0));
  MetaServiceConfig mc;
  mc.shard = 0;
  mc.mgmt = mgmt;
  mc.ns.shard_count = 1;
  mc.default_chunk_bytes = 256 * k_kib;
  mc.default_stripe_count = 2;
  std::vector<Service*> servers{&world.add_service<MetaService>(1, mc)};
  for (std::uint32_t s = 0; s < 2; ++s) {
    ASSERT_TRUE(world.add_target(1 + s, 2 + s).ok());
    StorageServiceConfig sc;
    sc.mgmt = mgmt;
    sc.targets = {1 + s};
    servers.push_back(&world.add_service<StorageService>(2 + s, sc));
  }
  FileSweepConfig sweep;
  sweep.files_per_rank = 3;
  sweep.file_bytes = 1 * k_mib;
  sweep.block_bytes = 256 * k_kib;
  sweep.threads = 2;
  ClientHostConfig hc;
  hc.client.mgmt = mgmt;
  hc.client.ns.shard_count = 1;
  hc.rank = 0;
  hc.ranks = 1;
  hc.barrier = barrier;
  ClientHost& host = world.add_service<ClientHost>(4, hc, std::make_unique<FileSweep>(sweep));
  world.defer_start(host);
  ASSERT_TRUE(world.start().ok());
  ASSERT_TRUE(world.wait_until(
      [&] {
        for (Service* s : servers) {
          const bool registered = world.call(*s, [s] {
            if (auto* m = dynamic_cast<MetaService*>(s)) return m->registered();
            return static_cast<StorageService*>(s)->registered();
          });
          if (!registered) return false;
        }
        return true;
      },
      k_max_run_ns));
  world.start_service(host);
  ASSERT_TRUE(world.wait_until([&] { return world.call(host, [&] { return host.finished(); }); }, k_max_run_ns));
  const Status result = world.call(host, [&] { return host.result(); });
  world.stop();
  ASSERT_TRUE(result.ok()) << result.to_string();
  const double chunks = 2.0 * sweep.files_per_rank * (sweep.file_bytes / sweep.block_bytes);  // written and read
  EXPECT_EQ(world.counter(k_metric_rdma_key_carried), chunks);
  EXPECT_EQ(world.counter(k_metric_rdma_key_fallback), 0.0);
  EXPECT_EQ(key_stats().carried_ok.load(), static_cast<std::uint64_t>(chunks));
  EXPECT_EQ(key_stats().carried_bad.load(), 0u);
  EXPECT_EQ(key_stats().missing.load(), 0u);
  EXPECT_EQ(world.counter("client.crc_mismatches"), 0.0);
}

struct GpuSweepOutcome {
  Status result;
  double carried = 0, fallback = 0, crc_mismatches = 0;
  std::uint64_t copies = 0;
  std::vector<std::string> logs;
};

// A file sweep whose client buffers are GPU memory, with GPU-direct chunks
// (the client's planner may reach GPU memory) over `transport`.
GpuSweepOutcome gpu_sweep(const std::string& transport, FakeGpu& gpu) {
  TempDir dir;
  HwWorldConfig config = keyed_config(dir, transport, 1);
  config.gpu_memory = gpu.ops();
  HwWorld world(config);
  const Endpoint mgmt = world.endpoint_of(world.add_service<MgmtService>(0, MgmtConfig{}));
  const Endpoint barrier = world.endpoint_of(world.add_service<BarrierService>(0));
  MetaServiceConfig mc;
  mc.mgmt = mgmt;
  mc.ns.shard_count = 1;
  mc.default_chunk_bytes = 256 * k_kib;
  mc.default_stripe_count = 2;
  std::vector<Service*> servers{&world.add_service<MetaService>(1, mc)};
  for (std::uint32_t s = 0; s < 2; ++s) {
    EXPECT_TRUE(world.add_target(1 + s, 2 + s).ok());
    StorageServiceConfig sc;
    sc.mgmt = mgmt;
    sc.targets = {1 + s};
    servers.push_back(&world.add_service<StorageService>(2 + s, sc));
  }
  FileSweepConfig sweep;
  sweep.files_per_rank = 2;
  sweep.file_bytes = 1 * k_mib;
  sweep.block_bytes = 256 * k_kib;
  sweep.threads = 2;
  sweep.buffer_kind = MemKind::gpu;
  ClientHostConfig hc;
  hc.client.mgmt = mgmt;
  hc.client.ns.shard_count = 1;
  hc.client.planner.caps.gpu_memory_reachable = true;
  hc.rank = 0;
  hc.ranks = 1;
  hc.barrier = barrier;
  ClientHost& host = world.add_service<ClientHost>(4, hc, std::make_unique<FileSweep>(sweep));
  world.defer_start(host);
  GpuSweepOutcome out;
  if (!world.start().ok()) {
    out.result = error(StatusCode::internal, "world did not start");
    return out;
  }
  const bool registered = world.wait_until(
      [&] {
        for (Service* s : servers) {
          const bool r = world.call(*s, [s] {
            if (auto* m = dynamic_cast<MetaService*>(s)) return m->registered();
            return static_cast<StorageService*>(s)->registered();
          });
          if (!r) return false;
        }
        return true;
      },
      k_max_run_ns);
  EXPECT_TRUE(registered);
  gpu.copies = 0;  // from here on, only the sweep's copies
  world.start_service(host);
  const bool finished =
      world.wait_until([&] { return world.call(host, [&] { return host.finished(); }); }, k_max_run_ns);
  out.result = finished ? world.call(host, [&] { return host.result(); })
                        : error(StatusCode::timed_out, "the sweep did not finish");
  world.stop();
  out.carried = world.counter(k_metric_rdma_key_carried);
  out.fallback = world.counter(k_metric_rdma_key_fallback);
  out.crc_mismatches = world.counter("client.crc_mismatches");
  out.copies = gpu.copies.load();
  out.logs = world.logs();
  return out;
}

// GPUDirect in HwEnv: with a transport that reaches CUDA memory, the client's
// GPU buffers are registered with it, their keys travel in the chunk
// messages, and the storage servers move every chunk straight into and out
// of GPU memory: no bounce copy anywhere, every byte verified (on the "GPU").
TEST(HwGpuDirect, StorageServersMoveChunksStraightIntoRegisteredGpuMemory) {
  ASSERT_TRUE(k_keyed_gpu_registered);
  FakeGpu gpu;
  key_stats().reset();
  const GpuSweepOutcome o = gpu_sweep(std::string(k_keyed_gpu), gpu);
  ASSERT_TRUE(o.result.ok()) << o.result.to_string();
  const double chunks = 2.0 * 2 * (1 * k_mib / (256 * k_kib));  // files x chunks, written and read
  EXPECT_EQ(o.carried, chunks);
  EXPECT_EQ(o.fallback, 0.0);
  EXPECT_EQ(key_stats().carried_ok.load(), static_cast<std::uint64_t>(chunks));
  EXPECT_EQ(o.copies, 0u) << "a GPU-direct chunk needs no copy through pinned memory";
  EXPECT_EQ(o.crc_mismatches, 0.0);
}

// Over a transport that cannot reach GPU memory, the same GPU buffers stay
// unregistered, a direct plan is refused with the reason and the client
// does not get its bytes moved behind its back.
TEST(HwGpuDirect, WithoutCudaRegionsAGpuRegionHasNoKeyAndDirectTransfersAreRefused) {
  ASSERT_TRUE(k_keyed_registered);
  FakeGpu gpu;
  TempDir dir;
  HwWorldConfig config = keyed_config(dir, std::string(k_keyed), 1);
  config.gpu_memory = gpu.ops();
  HwWorld world(config);
  ProbePair p = add_probes(world);
  ASSERT_TRUE(world.start().ok());
  const Status st = world.call(*p.owner, [&] {
    const MemHandle region = p.owner->env().alloc(MemKind::gpu, 0, 4096).value();
    return p.owner->env().remote_access(region, 0, 2).status();
  });
  world.stop();
  EXPECT_EQ(st.code(), StatusCode::unavailable) << st.to_string();
  EXPECT_NE(st.message().find("GPU memory is not registered with the transport"), std::string::npos) << st.to_string();
}
}  // namespace
}  // namespace sluice::hw
