// How HwNode registers a GPU region with its transport, without a GPU or a
// NIC: a FakeGpu (fake_gpu_ops.hpp: host memory, pipes for dma-buf fds) and
// a test transport over TCP ("tcp_gpu_registration_test") that declares the
// GPU region kinds a test asks for, can refuse each kind, and records what
// it was asked to register. The order is dma-buf -> peer memory -> bounce;
// every declared way that fails is counted and logged once per node.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "hw/hw_node.hpp"
#include "hw/hw_world.hpp"
#include "tests/hw/fake_gpu_ops.hpp"
#include "tests/hw_backends/wrapped_tcp_transport.hpp"
#include "transports/transport.hpp"

namespace sluice::hw {
namespace {

constexpr std::string_view k_transport = "tcp_gpu_registration_test";

// What the next worlds' test transports declare and refuse, and what they
// were asked to register (every node's). Set before a world starts.
struct Declared {
  bool dmabuf = false;
  bool cuda = false;
  std::optional<Status> dmabuf_refusal;  // register_dmabuf_region answers this
  std::optional<Status> cuda_refusal;    // register_region(cuda) answers this
};
struct Registered {
  transport::RegionKind kind = transport::RegionKind::host;
  int dmabuf_fd = -1;
  std::uint64_t dmabuf_offset = 0;
};
struct TransportScript {
  std::mutex mu;
  Declared declared;
  std::map<std::uint64_t, Registered> registered;  // by key, while registered
};
TransportScript& script() {
  static TransportScript s;
  return s;
}
void reset_script(Declared declared) {
  std::lock_guard lock(script().mu);
  script().declared = std::move(declared);
  script().registered.clear();
}

transport::Capabilities declared_capabilities(transport::Capabilities tcp) {
  std::lock_guard lock(script().mu);
  if (script().declared.dmabuf) tcp.region_kinds.push_back(transport::RegionKind::dmabuf);
  if (script().declared.cuda) tcp.region_kinds.push_back(transport::RegionKind::cuda);
  return tcp;
}

class ScriptedTransport final : public WrappedTcpTransport {
 public:
  ScriptedTransport(std::unique_ptr<transport::Transport> tcp, transport::Capabilities caps)
      : WrappedTcpTransport(std::move(tcp), k_transport, std::move(caps)) {}
  Status register_region(std::uint64_t key, std::span<std::byte> bytes, transport::RegionKind kind) override {
    if (kind == transport::RegionKind::dmabuf) return error(StatusCode::unavailable, "dmabuf needs its fd");
    if (kind == transport::RegionKind::cuda && capabilities().reaches(kind)) {
      std::lock_guard lock(script().mu);
      if (script().declared.cuda_refusal) return *script().declared.cuda_refusal;
    }
    return add(key, bytes, Registered{kind, -1, 0});
  }
  Status register_dmabuf_region(std::uint64_t key, std::span<std::byte> device_bytes, int dmabuf_fd,
                                std::uint64_t dmabuf_offset) override {
    if (!capabilities().reaches(transport::RegionKind::dmabuf)) {
      return error(StatusCode::unavailable, "dmabuf not declared");
    }
    {
      std::lock_guard lock(script().mu);
      if (script().declared.dmabuf_refusal) return *script().declared.dmabuf_refusal;
    }
    return add(key, device_bytes, Registered{transport::RegionKind::dmabuf, dmabuf_fd, dmabuf_offset});
  }
  Status deregister_region(std::uint64_t key) override {
    {
      std::lock_guard lock(script().mu);
      script().registered.erase(key);
    }
    return inner().deregister_region(key);
  }

 private:
  // "GPU" memory is host memory here (FakeGpu): TCP registers it as such.
  Status add(std::uint64_t key, std::span<std::byte> bytes, Registered how) {
    Status st = WrappedTcpTransport::register_region(key, bytes, how.kind);
    if (st.ok() && how.kind != transport::RegionKind::host) {
      std::lock_guard lock(script().mu);
      script().registered[key] = how;
    }
    return st;
  }
};

const bool k_registered =
    register_wrapped_tcp(std::string(k_transport), declared_capabilities,
                         [](std::unique_ptr<transport::Transport> tcp) -> std::unique_ptr<transport::Transport> {
                           transport::Capabilities caps = declared_capabilities(tcp->capabilities());
                           return std::make_unique<ScriptedTransport>(std::move(tcp), std::move(caps));
                         });

// Allocates and frees regions on node 1 for the test (HwWorld::call).
class Allocator final : public Service {
 public:
  explicit Allocator(Env& env) : env_(env) {}
  void start() override {}
  void on_event(Event&) override {}
  std::string name() const override { return "allocator"; }
  Env& env() { return env_; }

 private:
  Env& env_;
};

struct Counters {
  double dmabuf = 0, peer_memory = 0, bounce = 0, dmabuf_fallback = 0, peer_memory_fallback = 0;
};

// A world of one node on the scripted transport (or `transport`), with
// `regions` GPU regions of 64 KiB allocated; `inspect` runs while they are
// live, then they are freed and the world stops.
struct RegistrationRun {
  Counters counters;
  std::vector<std::string> logs;
};
RegistrationRun allocate_gpu_regions(
    const FakeGpu& gpu, std::size_t regions,
    const std::function<void(HwWorld&, Allocator&, const std::vector<MemHandle>&)>& inspect,
    std::string transport = std::string(k_transport)) {
  EXPECT_TRUE(k_registered);
  HwWorldConfig config;
  config.transport = std::move(transport);
  config.gpu_memory = gpu.ops();
  HwWorld world(config);
  Allocator& a = world.add_service<Allocator>(1);
  EXPECT_TRUE(world.start().ok());
  const std::vector<MemHandle> handles = world.call(a, [&] {
    std::vector<MemHandle> out;
    for (std::size_t i = 0; i < regions; ++i) {
      Result<MemHandle> r = a.env().alloc(MemKind::gpu, 0, 64 * k_kib);
      EXPECT_TRUE(r.ok()) << r.status().to_string();
      if (r.ok()) out.push_back(*r);
    }
    return out;
  });
  inspect(world, a, handles);
  world.call(a, [&] {
    for (const MemHandle& h : handles) a.env().free(h);
    return 0;
  });
  world.stop();
  RegistrationRun run;
  run.counters = Counters{world.counter(k_metric_gpu_region_dmabuf), world.counter(k_metric_gpu_region_peer_memory),
                          world.counter(k_metric_gpu_region_bounce), world.counter(k_metric_gpu_dmabuf_fallback),
                          world.counter(k_metric_gpu_peer_memory_fallback)};
  run.logs = world.logs();
  return run;
}

std::size_t lines_with(const std::vector<std::string>& logs, std::string_view text) {
  std::size_t n = 0;
  for (const std::string& line : logs) n += line.find(text) != std::string::npos ? 1 : 0;
  return n;
}

std::map<std::uint64_t, Registered> registered_now() {
  std::lock_guard lock(script().mu);
  return script().registered;
}

TEST(HwGpuRegistration, PrefersDmabufWhereTheTransportDeclaresItAndClosesTheFdOnFree) {
  FakeGpu gpu;
  reset_script(Declared{true, true, std::nullopt, std::nullopt});
  const RegistrationRun run =
      allocate_gpu_regions(gpu, 2, [&](HwWorld& world, Allocator& a, const std::vector<MemHandle>& h) {
        const std::map<std::uint64_t, Registered> r = registered_now();
        ASSERT_EQ(r.size(), 2u);
        for (const MemHandle& region : h) {
          const Registered& how = r.at(world.region_wire_key(region.node, region.region));
          EXPECT_EQ(how.kind, transport::RegionKind::dmabuf);
          EXPECT_GE(how.dmabuf_fd, 0);
          EXPECT_EQ(how.dmabuf_offset, k_fake_dmabuf_offset_bytes) << "the export's offset reaches the transport";
        }
        EXPECT_EQ(gpu.exports(), 2u);
        EXPECT_FALSE(gpu.export_closed(0)) << "the fd stays open while the region is registered";
        world.call(a, [&] {
          a.env().free(h[0]);
          return 0;
        });
        EXPECT_TRUE(gpu.export_closed(0)) << "freeing the region closes its dma-buf fd";
        EXPECT_FALSE(gpu.export_closed(1));
      });
  EXPECT_TRUE(gpu.export_closed(1));
  EXPECT_EQ(run.counters.dmabuf, 2.0);
  EXPECT_EQ(run.counters.peer_memory, 0.0);
  EXPECT_EQ(run.counters.bounce, 0.0);
  EXPECT_EQ(run.counters.dmabuf_fallback, 0.0);
  EXPECT_EQ(lines_with(run.logs, "falling back"), 0u);
}

TEST(HwGpuRegistration, FallsBackToPeerMemoryWhenTheDriverRefusesTheExportAndSaysSoOnce) {
  FakeGpu gpu;
  gpu.refuse_dmabuf_exports(error(StatusCode::unavailable, "fake driver: CUDA_ERROR_NOT_SUPPORTED"));
  reset_script(Declared{true, true, std::nullopt, std::nullopt});
  const RegistrationRun run =
      allocate_gpu_regions(gpu, 3, [&](HwWorld& world, Allocator&, const std::vector<MemHandle>& h) {
        const std::map<std::uint64_t, Registered> r = registered_now();
        ASSERT_EQ(r.size(), 3u);
        for (const MemHandle& region : h) {
          EXPECT_EQ(r.at(world.region_wire_key(region.node, region.region)).kind, transport::RegionKind::cuda);
        }
      });
  EXPECT_EQ(run.counters.peer_memory, 3.0);
  EXPECT_EQ(run.counters.dmabuf_fallback, 3.0) << "every region that missed dma-buf is counted";
  EXPECT_EQ(run.counters.peer_memory_fallback, 0.0);
  EXPECT_EQ(lines_with(run.logs, "CUDA_ERROR_NOT_SUPPORTED"), 1u) << "logged once, with the driver's reason";
  EXPECT_EQ(lines_with(run.logs, "falling back to peer memory"), 1u);
}

TEST(HwGpuRegistration, FallsBackToPeerMemoryWhenTheTransportRefusesTheDmabufAndClosesItsFd) {
  FakeGpu gpu;
  reset_script(
      Declared{true, true, error(StatusCode::unavailable, "ibv_reg_dmabuf_mr: Operation not supported"), std::nullopt});
  const RegistrationRun run =
      allocate_gpu_regions(gpu, 1, [&](HwWorld& world, Allocator&, const std::vector<MemHandle>& h) {
        EXPECT_EQ(registered_now().at(world.region_wire_key(h[0].node, h[0].region)).kind, transport::RegionKind::cuda);
        ASSERT_EQ(gpu.exports(), 1u);
        EXPECT_TRUE(gpu.export_closed(0)) << "an export the transport did not take is closed at once";
      });
  EXPECT_EQ(run.counters.peer_memory, 1.0);
  EXPECT_EQ(run.counters.dmabuf_fallback, 1.0);
  EXPECT_EQ(lines_with(run.logs, "ibv_reg_dmabuf_mr: Operation not supported"), 1u);
}

TEST(HwGpuRegistration, LeavesTheRegionOnTheBouncePathWhenNoDeclaredWayWorks) {
  FakeGpu gpu;
  gpu.refuse_dmabuf_exports(error(StatusCode::unavailable, "fake driver: no dma-buf"));
  reset_script(
      Declared{true, true, std::nullopt,
               error(StatusCode::unavailable, "ibv_reg_mr: Bad address (GPU memory needs nvidia-peermem loaded)")});
  const RegistrationRun run =
      allocate_gpu_regions(gpu, 2, [&](HwWorld& world, Allocator& a, const std::vector<MemHandle>& h) {
        EXPECT_TRUE(registered_now().empty());
        const Status st = world.call(a, [&] { return a.env().remote_access(h[0], 0, 2).status(); });
        EXPECT_EQ(st.code(), StatusCode::unavailable) << st.to_string();
        EXPECT_NE(st.message().find("not registered with the transport"), std::string::npos) << st.to_string();
        EXPECT_FALSE(world.call(a, [&] { return a.env().transport_reaches(h[0]); }))
            << "the client must plan this region's chunks as bounces (found with UCX on the GPU machine)";
      });
  EXPECT_EQ(run.counters.bounce, 2.0);
  EXPECT_EQ(run.counters.dmabuf_fallback, 2.0);
  EXPECT_EQ(run.counters.peer_memory_fallback, 2.0);
  EXPECT_EQ(lines_with(run.logs, "fake driver: no dma-buf"), 1u);
  EXPECT_EQ(lines_with(run.logs, "nvidia-peermem"), 1u);
  EXPECT_EQ(lines_with(run.logs, "must bounce through pinned memory"), 1u);
}

TEST(HwGpuRegistration, ABackendThatCannotExportFallsBackWithThatReason) {
  FakeGpu gpu;
  gpu.without_dmabuf_export();
  reset_script(Declared{true, false, std::nullopt, std::nullopt});
  const RegistrationRun run = allocate_gpu_regions(
      gpu, 1, [&](HwWorld&, Allocator&, const std::vector<MemHandle>&) { EXPECT_TRUE(registered_now().empty()); });
  EXPECT_EQ(run.counters.bounce, 1.0);
  EXPECT_EQ(run.counters.dmabuf_fallback, 1.0);
  EXPECT_EQ(run.counters.peer_memory_fallback, 0.0) << "peer memory was not declared: nothing failed there";
  EXPECT_EQ(lines_with(run.logs, "the GPU backend exports no dma-bufs"), 1u);
  EXPECT_EQ(lines_with(run.logs, "falling back to the bounce path"), 1u);
}

TEST(HwGpuRegistration, TakesPeerMemoryWithoutAFallbackWhereDmabufIsNotDeclared) {
  FakeGpu gpu;
  reset_script(Declared{false, true, std::nullopt, std::nullopt});
  const RegistrationRun run =
      allocate_gpu_regions(gpu, 1, [&](HwWorld& world, Allocator&, const std::vector<MemHandle>& h) {
        EXPECT_EQ(registered_now().at(world.region_wire_key(h[0].node, h[0].region)).kind, transport::RegionKind::cuda);
      });
  EXPECT_EQ(gpu.exports(), 0u) << "no export is asked for a transport that cannot take it";
  EXPECT_EQ(run.counters.peer_memory, 1.0);
  EXPECT_EQ(run.counters.dmabuf_fallback, 0.0);
  EXPECT_EQ(run.counters.peer_memory_fallback, 0.0);
}

TEST(HwGpuRegistration, OverTcpGpuRegionsBounceByPlanWithNothingCountedAsAFallback) {
  FakeGpu gpu;
  const RegistrationRun run = allocate_gpu_regions(
      gpu, 2, [](HwWorld&, Allocator&, const std::vector<MemHandle>&) {}, "tcp");
  EXPECT_EQ(gpu.exports(), 0u);
  EXPECT_EQ(run.counters.bounce, 2.0);
  EXPECT_EQ(run.counters.dmabuf_fallback, 0.0);
  EXPECT_EQ(run.counters.peer_memory_fallback, 0.0);
  EXPECT_EQ(lines_with(run.logs, "GPU region"), 0u);
}

}  // namespace
}  // namespace sluice::hw
