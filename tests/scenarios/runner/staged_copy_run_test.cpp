// The simulator's host -> GPU copy model as `sluice calibrate --gpu-sweep`
// drives it (scenarios/runner/staged_copy_run.hpp): rates it must give from
// first principles, and how each profile field moves them. Every point runs in
// a child process (one SimGrid engine per process).
#include "scenarios/runner/staged_copy_run.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/topology/hardware_figures.hpp"
#include "scenarios/runner/child_pool.hpp"
#include "scenarios/runner/sim_point_run.hpp"

#if __has_include(<simgrid/forward.h>)
#include "sim/sim_profile.hpp"
#define SLUICE_TEST_HAS_SIM 1
#else
#define SLUICE_TEST_HAS_SIM 0
#endif

namespace sluice::scenario {
namespace {

TEST(StagedCopyPoint, ValidateNamesTheField) {
  StagedCopyPoint p{StagedCopySeries::bounce, 0, 1, 1 << 20, 1 << 20};
  EXPECT_NE(validate(p).message().find("lanes"), std::string::npos);
  p.lanes = k_max_staged_copy_lanes + 1;
  EXPECT_NE(validate(p).message().find("lanes"), std::string::npos);
  p.lanes = 1;
  p.piece_bytes = 0;
  EXPECT_NE(validate(p).message().find("piece_bytes"), std::string::npos);
  p.piece_bytes = 2 << 20;
  EXPECT_NE(validate(p).message().find("total_bytes"), std::string::npos);
  p.piece_bytes = 1;
  p.total_bytes = k_max_staged_copy_pieces + 1;
  EXPECT_NE(validate(p).message().find("k_max_staged_copy_pieces"), std::string::npos);
  p.total_bytes = 1 << 20;
  EXPECT_TRUE(validate(p).ok());
  p.depth = 0;
  EXPECT_NE(validate(p).message().find("depth"), std::string::npos);
  EXPECT_EQ(parse_staged_copy_series("dma").value(), StagedCopySeries::dma);
  EXPECT_FALSE(parse_staged_copy_series("cufile").ok());
}

TEST(StagedCopyTopology, HasTheGpuOnItsPcieLink) {
  Result<topo::Topology> t = staged_copy_topology({});
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  StagedCopyMachine bad;
  bad.pcie_gen = 9;
  EXPECT_FALSE(staged_copy_topology(bad).ok());
}

#if SLUICE_TEST_HAS_SIM

// profile -> rates of `points`, each simulated in a child.
std::vector<double> simulate_all(const sim::SimProfile& profile, const std::vector<StagedCopyPoint>& points,
                                 const StagedCopyMachine& machine = {}) {
  const std::string text = sim::to_json(profile);
  ChildPoolOptions o;
  o.jobs = 2;
  o.timeout_s = 120;
  auto jobs = ChildPool::run(
      points.size(),
      [&](std::size_t i) {
        Result<double> r = simulate_staged_copy(text, machine, points[i]);
        if (!r.ok()) throw std::runtime_error(r.status().to_string());
        return std::to_string(*r);
      },
      o);
  EXPECT_TRUE(jobs.ok());
  std::vector<double> out;
  for (const ChildJobResult& j : *jobs) {
    EXPECT_TRUE(j.ok) << j.error;
    out.push_back(j.ok ? std::stod(j.payload) : 0.0);
  }
  return out;
}

constexpr std::uint64_t k_mib = 1ULL << 20;
const double k_gen5_x16 = topo::pcie_raw_bytes_per_s(5, 16) * topo::k_pcie_protocol_efficiency;

TEST(StagedCopySim, DmaRunsAtThePcieRateAndBounceAddsTheReadCopy) {
  const sim::SimProfile p = sim::default_profile();
  const std::vector<double> r = simulate_all(p, {{StagedCopySeries::dma, 1, 1, 16 * k_mib, 512 * k_mib},
                                                 {StagedCopySeries::bounce, 1, 1, 16 * k_mib, 512 * k_mib},
                                                 {StagedCopySeries::bounce, 1, 2, 16 * k_mib, 512 * k_mib},
                                                 {StagedCopySeries::bounce, 16, 2, 16 * k_mib, 4096 * k_mib}});
  // One lane of DMA: the link's rate (hop latencies are microseconds against
  // a 16 MiB piece's ~300 us).
  EXPECT_NEAR(r[0], k_gen5_x16, 0.03 * k_gen5_x16);
  // One bounce lane with one buffer: the read() copy, then the DMA, in series.
  const double serial = 1.0 / (1.0 / p.staging_cpu_copy_bytes_per_s + 1.0 / k_gen5_x16);
  EXPECT_NEAR(r[1], serial, 0.03 * serial);
  // Two buffers: the next read overlaps the DMA, the lane runs at its read rate
  // (less the first piece's DMA, 1 of 32).
  EXPECT_NEAR(r[2], p.staging_cpu_copy_bytes_per_s, 0.04 * p.staging_cpu_copy_bytes_per_s);
  // 16 lanes reading at 16 x 5.9 GB/s: the PCIe link binds, close to its rate, never above.
  EXPECT_LE(r[3], 1.01 * k_gen5_x16);
  EXPECT_GE(r[3], 0.9 * k_gen5_x16);
}

// Issue 19 item 5: GPUs filled at once, each on a root port of its own,
// share the socket's memory link and nothing else.
TEST(StagedCopySim, GpusAtOnceShareOnlyTheHostMemoryLink) {
  const sim::SimProfile p = sim::default_profile();
  StagedCopyPoint one{StagedCopySeries::dma, 1, 1, 64 * k_mib, 512 * k_mib};
  StagedCopyPoint two = one;
  two.gpus = 2;
  StagedCopyPoint eight = one;
  eight.gpus = 8;
  const StagedCopyMachine machine;
  const std::vector<double> r = simulate_all(p, {one, two, eight}, machine);
  EXPECT_NEAR(r[0], k_gen5_x16, 0.03 * k_gen5_x16);
  EXPECT_NEAR(r[1], 2 * k_gen5_x16, 0.03 * 2 * k_gen5_x16);  // two links, one memory well below its rate
  // Eight links (8 x 53.6 GB/s) read one socket's memory: its link binds.
  EXPECT_LE(r[2], 1.01 * machine.memory_bytes_per_s);
  EXPECT_GE(r[2], 0.9 * machine.memory_bytes_per_s);
  StagedCopyPoint none = one;
  none.gpus = 0;
  EXPECT_NE(validate(none).message().find("gpus 0 outside 1..8"), std::string::npos);
}

TEST(StagedCopySim, EachProfileFieldMovesWhatItModels) {
  const sim::SimProfile base = sim::default_profile();
  sim::SimProfile slow_pcie = base;
  slow_pcie.link_classes[static_cast<std::size_t>(topo::LinkClass::pcie)].bandwidth_factor = 0.5;
  sim::SimProfile slow_copy = base;
  slow_copy.staging_cpu_copy_bytes_per_s = base.staging_cpu_copy_bytes_per_s / 2;
  sim::SimProfile late_pcie = base;
  late_pcie.link_classes[static_cast<std::size_t>(topo::LinkClass::pcie)].latency_factor = 50;
  const std::vector<StagedCopyPoint> pts = {{StagedCopySeries::dma, 1, 1, 16 * k_mib, 256 * k_mib},
                                            {StagedCopySeries::bounce, 1, 2, 16 * k_mib, 256 * k_mib},
                                            {StagedCopySeries::dma, 1, 1, k_mib / 4, 64 * k_mib}};
  const std::vector<double> b = simulate_all(base, pts);
  const std::vector<double> sp = simulate_all(slow_pcie, pts);
  const std::vector<double> sc = simulate_all(slow_copy, pts);
  const std::vector<double> lp = simulate_all(late_pcie, pts);
  EXPECT_NEAR(sp[0] / b[0], 0.5, 0.02);  // DMA halves
  EXPECT_NEAR(sc[0] / b[0], 1.0, 0.01);  // DMA does not copy
  EXPECT_LT(sc[1], 0.6 * b[1]);          // one bounce lane is copy-bound: nearly halves
  // Latency costs per piece: a 256 KiB piece loses far more than a 16 MiB one.
  EXPECT_LT(lp[2] / b[2], 0.9);
  EXPECT_GT(lp[0] / b[0], lp[2] / b[2]);
}

TEST(StagedCopySim, BadProfileTextIsAnError) {
  auto jobs = ChildPool::run(
      1,
      [](std::size_t) {
        Result<double> r = simulate_staged_copy("{\"format\": 3}", {}, {StagedCopySeries::dma, 1, 1, k_mib, k_mib});
        return r.ok() ? std::string("ok") : r.status().message();
      },
      {});
  ASSERT_TRUE(jobs.ok());
  ASSERT_TRUE((*jobs)[0].ok);
  EXPECT_NE((*jobs)[0].payload, "ok");
}

#endif

}  // namespace
}  // namespace sluice::scenario
