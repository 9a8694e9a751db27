// The dma-buf wiring end to end on a real GPU, short of a NIC: HwEnv
// allocates GPU regions through the CUDA backend (cuda::gpu_memory_ops, HwWorldConfig::gpu_memory)
// on a node whose transport declares RegionKind::dmabuf. The test
// transport ("tcp_dmabuf_probe_test", TCP underneath) stands where ibverbs'
// ibv_reg_dmabuf_mr would: it checks that the fd it is handed is a live
// dma-buf covering [offset, +length). Then the region is freed, and the
// process holds no more dma-buf fds than before (HwNode closed it). Where
// the driver refuses the export, the region falls back, counted, with the
// driver's reason in the log.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hw_backends/cuda/cuda_device.hpp"
#include "hw_backends/cuda/cuda_gpu_memory.hpp"
#include "hw/hw_node.hpp"
#include "hw/hw_world.hpp"
#include "tests/hw_backends/wrapped_tcp_transport.hpp"
#include "transports/transport.hpp"

namespace sluice::hw {
namespace {

constexpr std::string_view k_probe_transport = "tcp_dmabuf_probe_test";

// What the probe transport saw of each dma-buf registration.
struct SeenDmabuf {
  Status checked;  // ok when the fd was a live dma-buf covering the range
  std::uint64_t dmabuf_bytes = 0;
  std::uint64_t offset_bytes = 0;
  std::uint64_t region_bytes = 0;
};
std::mutex& seen_mu() {
  static std::mutex mu;
  return mu;
}
std::vector<SeenDmabuf>& seen() {
  static std::vector<SeenDmabuf> s;
  return s;
}

// The dma-buf fds this process holds (/proc/self/fd links to "/dmabuf:..."
// or "anon_inode:dmabuf").
std::size_t dmabuf_fds_open() {
  std::size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    const std::filesystem::path target = std::filesystem::read_symlink(entry.path(), ec);
    if (!ec && target.string().find("dmabuf") != std::string::npos) ++n;
  }
  return n;
}

class DmabufProbeTransport final : public WrappedTcpTransport {
 public:
  DmabufProbeTransport(std::unique_ptr<transport::Transport> tcp, transport::Capabilities caps)
      : WrappedTcpTransport(std::move(tcp), k_probe_transport, std::move(caps)) {}
  Status register_region(std::uint64_t key, std::span<std::byte> bytes, transport::RegionKind kind) override {
    if (kind != transport::RegionKind::host) return error(StatusCode::unavailable, "only host and dmabuf declared");
    return WrappedTcpTransport::register_region(key, bytes, kind);
  }
  Status register_dmabuf_region(std::uint64_t key, std::span<std::byte> device_bytes, int dmabuf_fd,
                                std::uint64_t dmabuf_offset) override {
    SeenDmabuf s;
    s.offset_bytes = dmabuf_offset;
    s.region_bytes = device_bytes.size();
    struct stat st {};
    if (::fstat(dmabuf_fd, &st) != 0) {
      s.checked = error(StatusCode::invalid_argument, "fstat of dma-buf fd " + std::to_string(dmabuf_fd) + " failed");
    } else {
      s.dmabuf_bytes = static_cast<std::uint64_t>(st.st_size);
      if (s.dmabuf_bytes < dmabuf_offset + device_bytes.size()) {
        s.checked = error(StatusCode::invalid_argument,
                          "the dma-buf (" + std::to_string(s.dmabuf_bytes) + " bytes) does not cover the range");
      }
    }
    {
      std::lock_guard lock(seen_mu());
      seen().push_back(s);
    }
    if (!s.checked.ok()) return s.checked;
    std::lock_guard lock(mu_);
    dmabuf_keys_.push_back(key);
    return ok_status();
  }
  Status deregister_region(std::uint64_t key) override {
    {
      std::lock_guard lock(mu_);
      for (auto it = dmabuf_keys_.begin(); it != dmabuf_keys_.end(); ++it) {
        if (*it == key) {
          dmabuf_keys_.erase(it);
          return ok_status();
        }
      }
    }
    return inner().deregister_region(key);
  }

 private:
  std::mutex mu_;
  std::vector<std::uint64_t> dmabuf_keys_;  // never handed to TCP: the GPU pointer is not host memory
};

transport::Capabilities with_dmabuf(transport::Capabilities tcp) {
  tcp.region_kinds.push_back(transport::RegionKind::dmabuf);
  return tcp;
}

const bool k_probe_registered =
    register_wrapped_tcp(std::string(k_probe_transport), with_dmabuf,
                         [](std::unique_ptr<transport::Transport> tcp) -> std::unique_ptr<transport::Transport> {
                           transport::Capabilities caps = with_dmabuf(tcp->capabilities());
                           return std::make_unique<DmabufProbeTransport>(std::move(tcp), std::move(caps));
                         });

TEST(HwWorldGpuDmabuf, GpuRegionsReachADmabufTransportAsLiveFdsClosedOnFree) {
  if (Status s = cuda::cuda_available(); !s.ok()) GTEST_SKIP() << s.message();
  ASSERT_TRUE(k_probe_registered);
  {
    std::lock_guard lock(seen_mu());
    seen().clear();
  }
  HwWorldConfig config;
  config.transport = std::string(k_probe_transport);
  config.gpu_memory = cuda::gpu_memory_ops();
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
  const std::size_t fds_before = dmabuf_fds_open();
  const std::vector<std::uint64_t> sizes{4 * k_mib,
                                         3 * k_mib + 1000};  // the second is rounded up to pages by the backend
  std::vector<MemHandle> regions;
  for (const std::uint64_t bytes : sizes) {
    Result<MemHandle> r = world.call(p, [&] { return p.env_.alloc(MemKind::gpu, 0, bytes); });
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    regions.push_back(*r);
  }
  const std::size_t fds_registered = dmabuf_fds_open();
  for (const MemHandle& r : regions) {
    world.call(p, [&] {
      p.env_.free(r);
      return 0;
    });
  }
  const std::size_t fds_after = dmabuf_fds_open();
  world.stop();
  const double dmabuf = world.counter(k_metric_gpu_region_dmabuf);
  const double fallback = world.counter(k_metric_gpu_dmabuf_fallback);
  if (dmabuf == 0.0) {
    // The driver refused the export: each region fell back to bounce, counted, and the log says why.
    EXPECT_EQ(fallback, static_cast<double>(sizes.size()));
    EXPECT_EQ(world.counter(k_metric_gpu_region_bounce), static_cast<double>(sizes.size()));
    std::string why;
    for (const std::string& line : world.logs()) {
      if (line.find("no dma-buf registration") != std::string::npos) why = line;
    }
    ASSERT_FALSE(why.empty()) << "the fallback is logged";
    GTEST_SKIP() << "dma-buf export unavailable here; fell back as designed: " << why;
  }
  EXPECT_EQ(dmabuf, static_cast<double>(sizes.size()));
  EXPECT_EQ(fallback, 0.0);
  std::lock_guard lock(seen_mu());
  ASSERT_EQ(seen().size(), sizes.size());
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_TRUE(seen()[i].checked.ok()) << seen()[i].checked.to_string();
    EXPECT_EQ(seen()[i].region_bytes, sizes[i]);
    std::cout << "dma-buf registration " << i << ": region " << seen()[i].region_bytes << " bytes at offset "
              << seen()[i].offset_bytes << " of a " << seen()[i].dmabuf_bytes << "-byte dma-buf\n";
  }
  EXPECT_EQ(fds_registered, fds_before + sizes.size()) << "one open dma-buf fd per registered region";
  EXPECT_EQ(fds_after, fds_before) << "free() closes the region's dma-buf fd";
}

}  // namespace
}  // namespace sluice::hw
