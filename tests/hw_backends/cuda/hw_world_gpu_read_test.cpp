// A GPU read through HwEnv end to end: a client writes a file from host
// memory to a storage server over loopback TCP (real chunk files), then reads
// it back into a GPU region. TCP cannot reach GPU memory, so core/sched plans
// a bounce: the server's staging -> TCP -> the client's pinned buffer ->
// cudaMemcpy into the GPU region. The bytes are verified on the GPU
// (env.verify on the GPU handle runs the pattern kernel).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>

#include "core/services/meta_service.hpp"
#include "core/services/mgmt_service.hpp"
#include "core/services/storage_service.hpp"
#include "core/workloads/client_host.hpp"
#include "hw_backends/cuda/cuda_device.hpp"
#include "hw_backends/cuda/cuda_gpu_memory.hpp"
#include "hw/hw_world.hpp"

namespace sluice::hw {
namespace {

constexpr TimeNs k_max_run_ns = 60 * k_ns_per_s;

// Writes /g from a host buffer (pattern seed 17), reads it into GPU memory,
// verifies there; records each step's status.
class GpuReadBack final : public Workload {
 public:
  static constexpr std::uint64_t k_bytes = 3 * k_mib + 4096;  // several chunks of 256 KiB, two targets

  std::string name() const override { return "gpu_read_back"; }
  void start(WorkloadContext& ctx, std::function<void(Status)> done) override {
    ctx_ = &ctx;
    done_ = std::move(done);
    ctx.client.create("/g", CreateOptions{}, [this](Result<proto::InodeDesc> created) {
      if (!created.ok()) return done_(created.status());
      inode_ = *created;
      Result<MemHandle> host = ctx_->env.alloc(MemKind::host, 0, k_bytes);
      if (!host.ok()) return done_(host.status());
      host_ = *host;
      ctx_->ops.expect(ctx_->env.fill(host_, PatternSpec{17, 0}), [this](Completion& f) {
        if (!f.status.ok()) return done_(f.status);
        ctx_->client.write(inode_, 0, host_, false, [this](Result<std::uint64_t> w) {
          if (!w.ok()) return done_(w.status());
          ctx_->client.close("/g", k_bytes, [this](Status closed) {
            if (!closed.ok()) return done_(closed);
            inode_.size_bytes = k_bytes;
            read_into_gpu();
          });
        });
      });
    });
  }

  MemHandle gpu_handle;
  std::uint64_t bytes_read = 0;
  bool verified = false;
  Status wrong_seed_verify;

 private:
  void read_into_gpu() {
    Result<MemHandle> gpu = ctx_->env.alloc(MemKind::gpu, 0, k_bytes);
    if (!gpu.ok()) return done_(gpu.status());
    gpu_handle = *gpu;
    ctx_->client.read(inode_, 0, gpu_handle, [this](Result<std::uint64_t> r) {
      if (!r.ok()) return done_(r.status());
      bytes_read = *r;
      ctx_->ops.expect(ctx_->env.verify(gpu_handle, PatternSpec{17, 0}), [this](Completion& v) {
        if (!v.status.ok()) return done_(v.status);
        verified = true;
        // The check can fail: the same bytes against another seed must not verify.
        ctx_->ops.expect(ctx_->env.verify(gpu_handle, PatternSpec{18, 0}), [this](Completion& w) {
          wrong_seed_verify = w.status;
          done_(ok_status());
        });
      });
    });
  }

  WorkloadContext* ctx_ = nullptr;
  std::function<void(Status)> done_;
  proto::InodeDesc inode_;
  MemHandle host_;
};

TEST(HwWorldGpuRead, ClientReadsIntoGpuMemoryOverTcpWithTheBouncePathVerifiedOnTheGpu) {
  if (Status s = cuda::cuda_available(); !s.ok()) GTEST_SKIP() << s.message();
  char templ[] = "/tmp/sluice-gpu-e2e-XXXXXX";
  const std::string dir = ::mkdtemp(templ);
  {
    HwWorldConfig config;
    config.storage_root = dir + "/storage";
    config.node_memory_limit_bytes = 512ULL << 20;
    config.gpu_memory = cuda::gpu_memory_ops();
    HwWorld world(config);
    const Endpoint mgmt = world.endpoint_of(world.add_service<MgmtService>(0, MgmtConfig{}));
    MetaServiceConfig mc;
    mc.mgmt = mgmt;
    mc.ns.shard_count = 1;
    mc.default_chunk_bytes = 256 * k_kib;
    mc.default_stripe_count = 2;
    auto& meta = world.add_service<MetaService>(1, mc);
    std::vector<StorageService*> storage;
    for (std::uint32_t s = 0; s < 2; ++s) {
      ASSERT_TRUE(world.add_target(1 + s, 2 + s).ok());
      StorageServiceConfig sc;
      sc.mgmt = mgmt;
      sc.targets = {1 + s};
      storage.push_back(&world.add_service<StorageService>(2 + s, sc));
    }
    auto workload = std::make_unique<GpuReadBack>();
    GpuReadBack* w = workload.get();
    ClientHostConfig hc;
    hc.client.mgmt = mgmt;
    hc.client.ns.shard_count = 1;
    ClientHost& host = world.add_service<ClientHost>(4, hc, std::move(workload));
    world.defer_start(host);
    ASSERT_TRUE(world.start().ok());
    ASSERT_TRUE(world.wait_until(
        [&] {
          bool ready = world.call(meta, [&] { return meta.registered(); });
          for (StorageService* s : storage) ready = ready && world.call(*s, [s] { return s->registered(); });
          return ready;
        },
        k_max_run_ns));
    world.start_service(host);
    ASSERT_TRUE(world.wait_until([&] { return world.call(host, [&] { return host.finished(); }); }, k_max_run_ns));
    const Status result = world.call(host, [&] { return host.result(); });
    ASSERT_TRUE(result.ok()) << result.to_string();
    EXPECT_EQ(world.call(host, [&] { return w->bytes_read; }), GpuReadBack::k_bytes);
    EXPECT_TRUE(world.call(host, [&] { return w->verified; }));
    const Status wrong = world.call(host, [&] { return w->wrong_seed_verify; });
    EXPECT_EQ(wrong.code(), StatusCode::corrupt) << wrong.to_string();
    EXPECT_EQ(world.call(host, [&] { return w->gpu_handle.kind; }), MemKind::gpu);
    world.stop();
    EXPECT_GT(world.counter("client.chunks_bounce"), 0.0);
    EXPECT_EQ(world.counter("client.chunks_direct") > 0.0, true);  // the write from host memory went direct
    EXPECT_EQ(world.counter("client.crc_mismatches"), 0.0);
  }
  std::filesystem::remove_all(dir);
}

TEST(HwWorldGpuRead, WithoutTheCudaBackendGpuAllocSaysWhy) {
  if (cuda::cuda_available().ok()) {
    GTEST_SKIP() << "a CUDA device is present: the GPU read test runs";
  }
  char templ[] = "/tmp/sluice-gpu-e2e-XXXXXX";
  const std::string dir = ::mkdtemp(templ);
  {
    HwWorldConfig config;
    config.storage_root = dir + "/storage";
    config.gpu_memory = cuda::gpu_memory_ops();  // without a device: every operation says why
    HwWorld world(config);
    struct Probe final : Service {
      explicit Probe(Env& env) : env_(env) {}
      void start() override {}
      void on_event(Event&) override {}
      std::string name() const override { return "probe"; }
      Env& env_;
    };
    auto& p = world.add_service<Probe>(1);
    ASSERT_TRUE(world.start().ok());
    Result<MemHandle> gpu = world.call(p, [&] { return p.env_.alloc(MemKind::gpu, 0, 4096); });
    ASSERT_FALSE(gpu.ok());
    EXPECT_EQ(gpu.status().code(), StatusCode::unavailable);
    EXPECT_NE(gpu.status().message().find("node 1 alloc"), std::string::npos) << gpu.status().message();
    world.stop();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sluice::hw
