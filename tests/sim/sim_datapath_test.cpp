// SimEnv data-path physics that the seed studies rest on (issue #7):
// - multirail (docs/seeds.md#gpu-rdma-recording-over-roce): two 25 GbE ports
//   move twice one port's bytes in the same time when the ports are the
//   bottleneck, provided the far end spreads over its ports too (core/sched
//   peer_nic); if every chunk meets the server on one port, the second client
//   port buys nothing;
// - the bounce path's client side (docs/seeds.md#beegfs-and-gpudirect-storage):
//   a host -> GPU copy of bounced bytes first pays the CPU copy out of the
//   kernel buffer at one thread's rate (SimProfile staging_*), loads host
//   memory with it, and parallel copies share that memory's bandwidth.
// Expectations come from the topology and the profile, in virtual time.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "core/sched/peer_rail.hpp"
#include "core/topology/cluster_builders.hpp"
#include "core/topology/machine_builders.hpp"
#include "sim/sim_profile.hpp"
#include "sim/sim_runtime.hpp"
#include "tests/sim/sim_test_support.hpp"

namespace sluice::testing {
namespace {

using sim::SimRuntime;
using sim::SimRuntimeConfig;
using topo::VertexKind;

SimRuntimeConfig exact_network() {
  SimRuntimeConfig c;
  c.profile.link_classes[static_cast<std::size_t>(topo::LinkClass::network)] = {1.0, 1.0};
  return c;
}

std::shared_ptr<const topo::Topology> critical_io_pair() {
  const topo::Topology host = *topo::critical_io_gpu_host();
  const topo::Topology recorder = *topo::critical_io_recorder(4);
  const std::array<const topo::Topology*, 2> machines{&host, &recorder};
  return std::make_shared<const topo::Topology>(*topo::star_cluster(machines));
}

// Plays `chunks` 1 MiB transfers recorder staging -> GPU at once, the i-th
// on client NIC client_nic(i) and server NIC server_nic(i); returns the
// virtual time until the last one completed.
template <typename ClientNic, typename ServerNic>
TimeNs playback(SimRuntime& rt, Probe& recorder, const MemHandle& staging, const MemHandle& gpu, int chunks,
                ClientNic client_nic, ServerNic server_nic) {
  const TimeNs start = rt.now();
  std::vector<OpId> ops;
  for (int i = 0; i < chunks; ++i) {
    const std::uint64_t at = static_cast<std::uint64_t>(i) * k_mib;
    const std::uint32_t c = client_nic(i);
    ops.push_back(recorder.env().transfer(
        TransferSpec{staging.slice(at, k_mib), gpu.slice(at, k_mib), server_nic(i, c), c, TransferMode::rdma_write}));
  }
  rt.run_until_idle();
  for (OpId op : ops) EXPECT_TRUE(recorder.completions.at(op).status.ok());
  return rt.now() - start;
}

TEST(SimDataPath, TwoPortsMoveTwiceTheBytesOfOnePortWhenThePortsAreTheBottleneck) {
  in_child([] {
    auto cluster = critical_io_pair();
    auto rt = SimRuntime::create(cluster, test_config(exact_network())).value();
    constexpr int k_chunks = 16;
    Probe& host = rt->add_service<Probe>(0, nullptr);
    Probe& recorder = rt->add_service<Probe>(1, nullptr);
    const MemHandle gpu = host.env().alloc(MemKind::gpu, 0, k_chunks * k_mib).value();
    const MemHandle staging = recorder.env().alloc(MemKind::pinned, 0, k_chunks * k_mib).value();
    const topo::Topology& t = *cluster;
    const auto one = [](int) { return 0u; };
    const auto two = [](int i) { return static_cast<std::uint32_t>(i % 2); };
    const auto matched = [&t](int, std::uint32_t c) { return *sched::peer_nic(t, 0, c, 1); };
    const auto first_port = [](int, std::uint32_t) { return k_no_id; };  // the server's default NIC

    const TimeNs one_port = playback(*rt, recorder, staging, gpu, k_chunks, one, matched);
    const TimeNs two_ports = playback(*rt, recorder, staging, gpu, k_chunks, two, matched);
    const TimeNs two_ports_one_far_end = playback(*rt, recorder, staging, gpu, k_chunks, two, first_port);

    // The ports (25 GbE = 3.125 GB/s) are the bottleneck, not gen3 x8 (6.7 GB/s) that both share.
    const double port_bytes_per_s = topo::k_25gbe_bytes_per_s;
    ASSERT_LT(2 * port_bytes_per_s, topo::pcie_bytes_per_s(3, 8));
    const double bytes = static_cast<double>(k_chunks) * k_mib;
    EXPECT_NEAR(static_cast<double>(one_port), bytes / port_bytes_per_s * 1e9, 0.01 * static_cast<double>(one_port));
    EXPECT_NEAR(static_cast<double>(one_port) / static_cast<double>(two_ports), 2.0, 0.05);
    // One recorder port for both client ports: no better than one port.
    EXPECT_NEAR(static_cast<double>(two_ports_one_far_end), static_cast<double>(one_port),
                0.02 * static_cast<double>(one_port));
  });
}

// A one-node machine whose host memory moves memory_bytes_per_s per direction.
std::shared_ptr<const topo::Topology> one_gpu_node(double memory_bytes_per_s) {
  topo::GenericMachine m;
  m.gpus = 1;
  m.nics = 1;
  m.memory_bytes_per_s = memory_bytes_per_s;
  return std::make_shared<const topo::Topology>(*topo::star_cluster(*topo::generic_machine(m), 1));
}

// Copies `copies` x 64 MiB pinned -> GPU at once with the given profile;
// returns "<elapsed ns> <memory bytes read> <memory bytes written>".
std::string staged_copies(double memory_bytes_per_s, std::uint32_t cpu_copies, int copies) {
  return in_child_capture([=] {
    auto cluster = one_gpu_node(memory_bytes_per_s);
    SimRuntimeConfig config;
    config.profile.staging_cpu_copies = cpu_copies;
    config.account_link_bytes = true;
    auto rt = SimRuntime::create(cluster, test_config(config)).value();
    Probe& client = rt->add_service<Probe>(0, nullptr);
    std::vector<OpId> ops;
    for (int i = 0; i < copies; ++i) {
      const MemHandle bounce = client.env().alloc(MemKind::pinned, 0, 64 * k_mib).value();
      const MemHandle gpu = client.env().alloc(MemKind::gpu, 0, 64 * k_mib).value();
      ops.push_back(client.env().transfer(TransferSpec{bounce, gpu, k_no_id, k_no_id, TransferMode::local_copy}));
    }
    rt->run_until_idle();
    for (OpId op : ops) EXPECT_TRUE(client.completions.at(op).status.ok());
    const topo::Topology& t = *cluster;
    const topo::VertexId mem = *t.device(0, VertexKind::host_memory, 0);
    topo::EdgeId memory_link = topo::k_no_edge;
    for (topo::EdgeId e : t.links_of(mem)) {
      if (t.link(e).spec.link_class == topo::LinkClass::memory) memory_link = e;
    }
    const bool mem_is_a = t.link(memory_link).a == mem;
    return std::to_string(rt->now()) + " " + std::to_string(rt->link_bytes(memory_link, mem_is_a)) + " " +
           std::to_string(rt->link_bytes(memory_link, !mem_is_a));
  });
}

struct Staged {
  double elapsed_ns = 0;
  double read_bytes = 0;
  double written_bytes = 0;
};
Staged parse(const std::string& s) {
  Staged r;
  std::sscanf(s.c_str(), "%lf %lf %lf", &r.elapsed_ns, &r.read_bytes, &r.written_bytes);
  return r;
}

TEST(SimDataPath, ABounceCopyIntoTheGpuPaysOneThreadsCpuCopyBeforeItsDma) {
  constexpr double k_memory = 204.8e9;
  const Staged with_copy = parse(staged_copies(k_memory, 1, 1));
  const Staged dma_only = parse(staged_copies(k_memory, 0, 1));
  const double bytes = 64.0 * k_mib;
  const double thread_rate = sim::default_profile().staging_cpu_copy_bytes_per_s;
  // The DMA alone goes at the PCIe rate (gen4 x16 of the generic machine).
  EXPECT_NEAR(dma_only.elapsed_ns, bytes / topo::pcie_bytes_per_s(4, 16) * 1e9, 0.01 * dma_only.elapsed_ns);
  // The CPU copy adds bytes / one thread's rate, in series.
  EXPECT_NEAR(with_copy.elapsed_ns - dma_only.elapsed_ns, bytes / thread_rate * 1e9, 0.01 * bytes / thread_rate * 1e9);
  // Host memory: the DMA reads the bytes once; the copy reads and writes them once more.
  EXPECT_DOUBLE_EQ(dma_only.read_bytes, bytes);
  EXPECT_DOUBLE_EQ(dma_only.written_bytes, 0.0);
  EXPECT_DOUBLE_EQ(with_copy.read_bytes, 2 * bytes);
  EXPECT_DOUBLE_EQ(with_copy.written_bytes, bytes);
}

TEST(SimDataPath, ParallelCopiesEachRunAtAThreadsRateUntilHostMemoryIsFull) {
  const double bytes = 64.0 * k_mib;
  const double thread_rate = sim::default_profile().staging_cpu_copy_bytes_per_s;
  const double copy_ns = bytes / thread_rate * 1e9;
  const double dma_ns = bytes / topo::pcie_bytes_per_s(4, 16) * 1e9;
  // Ample memory bandwidth: four copies (four threads) run side by side in
  // one copy time; then the four DMAs share the GPU's PCIe link.
  const Staged four = parse(staged_copies(204.8e9, 1, 4));
  EXPECT_NEAR(four.elapsed_ns, copy_ns + 4 * dma_ns, 0.01 * four.elapsed_ns);
  // Memory of 8 GB/s per direction: four copies at 5.9 GB/s each would need
  // 23.6 GB/s; they share 8 GB/s (4 x bytes / 8 GB/s), and so do the DMAs
  // out of that memory afterwards.
  ASSERT_LT(8e9, 4 * thread_rate);
  const Staged starved = parse(staged_copies(8e9, 1, 4));
  EXPECT_NEAR(starved.elapsed_ns, 2 * 4 * bytes / 8e9 * 1e9, 0.01 * starved.elapsed_ns);
}

TEST(SimStagingProfile, StagingParametersRoundTripAndAreChecked) {
  sim::SimProfile p = sim::default_profile();
  p.staging_cpu_copies = 2;
  p.staging_cpu_copy_bytes_per_s = 4.5e9;
  auto back = sim::parse_profile(sim::to_json(p));
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(*back, p);
  const std::string head = R"({"format": "sluice-sim-profile", "version": 1, "staging": )";
  auto typo = sim::parse_profile(head + R"({"cpu_copy": 1}})");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("staging.cpu_copy"), std::string::npos) << typo.status().to_string();
  auto too_many = sim::parse_profile(head + R"({"cpu_copies": 9}})");
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("staging.cpu_copies"), std::string::npos);
  auto no_rate = sim::parse_profile(head + R"({"cpu_copy_bytes_per_s": 0}})");
  EXPECT_FALSE(no_rate.ok());
}

}  // namespace
}  // namespace sluice::testing
