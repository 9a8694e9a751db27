// How HwNode registers a GPU region with its transport, without a GPU or a
// NIC: a FakeGpu (fake_gpu_ops.hpp: host memory) and a test transport over
// TCP ("tcp_gpu_registration_test") that declares CUDA regions where a test
// asks, can refuse them, and records what it was asked to register. The
// order is peer memory -> bounce; a declared way that fails is counted and
// logged once per node.
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
  bool cuda = false;
  std::optional<Status> cuda_refusal;  // register_region(cuda) answers this
};
struct Registered {
  transport::RegionKind kind = transport::RegionKind::host;
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
  if (script().declared.cuda) tcp.region_kinds.push_back(transport::RegionKind::cuda);
  return tcp;
}

class ScriptedTransport final : public WrappedTcpTransport {
 public:
  ScriptedTransport(std::unique_ptr<transport::Transport> tcp, transport::Capabilities caps)
      : WrappedTcpTransport(std::move(tcp), k_transport, std::move(caps)) {}
  Status register_region(std::uint64_t key, std::span<std::byte> bytes, transport::RegionKind kind) override {
    if (kind == transport::RegionKind::cuda && capabilities().reaches(kind)) {
      std::lock_guard lock(script().mu);
      if (script().declared.cuda_refusal) return *script().declared.cuda_refusal;
    }
    return add(key, bytes, Registered{kind});
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
  double peer_memory = 0, bounce = 0, peer_memory_fallback = 0;
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
  run.counters = Counters{world.counter(k_metric_gpu_region_peer_memory), world.counter(k_metric_gpu_region_bounce),
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

TEST(HwGpuRegistration, RegistersByPointerWhereTheTransportDeclaresCudaRegions) {
  FakeGpu gpu;
  reset_script(Declared{true, std::nullopt});
  const RegistrationRun run =
      allocate_gpu_regions(gpu, 2, [&](HwWorld& world, Allocator& a, const std::vector<MemHandle>& h) {
        std::map<std::uint64_t, Registered> r = registered_now();
        ASSERT_EQ(r.size(), 2u);
        for (const MemHandle& region : h) {
          EXPECT_EQ(r.at(world.region_wire_key(region.node, region.region)).kind, transport::RegionKind::cuda);
        }
        EXPECT_TRUE(world.call(a, [&] { return a.env().transport_reaches(h[0]); }));
        world.call(a, [&] {
          a.env().free(h[0]);
          return 0;
        });
        r = registered_now();
        EXPECT_EQ(r.size(), 1u) << "freeing a region deregisters it";
        EXPECT_FALSE(r.contains(world.region_wire_key(h[0].node, h[0].region)));
      });
  EXPECT_TRUE(registered_now().empty());
  EXPECT_EQ(run.counters.peer_memory, 2.0);
  EXPECT_EQ(run.counters.bounce, 0.0);
  EXPECT_EQ(run.counters.peer_memory_fallback, 0.0);
  EXPECT_EQ(lines_with(run.logs, "GPU region"), 0u);
}

TEST(HwGpuRegistration, LeavesTheRegionOnTheBouncePathWhenNoDeclaredWayWorks) {
  FakeGpu gpu;
  reset_script(Declared{
      true, error(StatusCode::unavailable, "ucp_mem_map: Unsupported operation (UCX without CUDA memory support)")});
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
  EXPECT_EQ(run.counters.peer_memory_fallback, 2.0) << "every region that missed registration is counted";
  EXPECT_EQ(lines_with(run.logs, "UCX without CUDA memory support"), 1u) << "logged once, with the reason";
  EXPECT_EQ(lines_with(run.logs, "must bounce through pinned memory"), 1u);
}

TEST(HwGpuRegistration, OverTcpGpuRegionsBounceByPlanWithNothingCountedAsAFallback) {
  FakeGpu gpu;
  const RegistrationRun run = allocate_gpu_regions(
      gpu, 2, [](HwWorld&, Allocator&, const std::vector<MemHandle>&) {}, "tcp");
  EXPECT_EQ(run.counters.bounce, 2.0);
  EXPECT_EQ(run.counters.peer_memory_fallback, 0.0);
  EXPECT_EQ(lines_with(run.logs, "GPU region"), 0u);
}

}  // namespace
}  // namespace sluice::hw
