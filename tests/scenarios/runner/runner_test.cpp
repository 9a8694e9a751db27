// The runner end to end on SimEnv (every point in a child process), its child
// pool's failure handling, the result codec and the results files.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "core/topology/cluster_builders.hpp"
#include "core/topology/machine_builders.hpp"
#include "scenarios/runner/child_pool.hpp"
#include "scenarios/runner/fs_deployment.hpp"
#include "scenarios/runner/result_codec.hpp"
#include "scenarios/runner/results_writer.hpp"
#include "scenarios/runner/runner.hpp"
#include "scenarios/runner/sim_point_run.hpp"
#include "scenarios/runner/workload_run.hpp"

namespace sluice::scenario {
namespace {

constexpr double k_link_bytes_per_s = 1.25e9;  // 10 Gb/s per NIC and switch port

std::shared_ptr<const topo::Topology> generic_cluster(std::uint32_t nodes, std::uint32_t gpus, std::uint32_t nvmes) {
  topo::GenericMachine m;
  m.gpus = gpus;
  m.nics = 1;
  m.nvmes = nvmes;
  m.nic_port_rate_bytes_per_s = k_link_bytes_per_s;
  m.nvme_read_bytes_per_s = 3.2e9;
  m.nvme_write_bytes_per_s = 2.0e9;
  Result<topo::Topology> machine = topo::generic_machine(m);
  EXPECT_TRUE(machine.ok()) << machine.status().to_string();
  topo::StarOptions star;
  star.link_bytes_per_s = k_link_bytes_per_s;
  star.link_latency_ns = 1000;
  Result<topo::Topology> cluster = topo::star_cluster(*machine, nodes, star);
  EXPECT_TRUE(cluster.ok()) << cluster.status().to_string();
  return std::make_shared<const topo::Topology>(std::move(cluster).value());
}

// 4 nodes: 0 mgmt + metadata, 1 and 2 storage (2 drives each), 3 clients (2 ranks).
ScenarioSpec small_spec() {
  ScenarioSpec spec;
  spec.scenario = "runner_test";
  spec.params = {{"files", "8"}, {"size", "1MiB"}};
  spec.seed = 7;
  spec.cluster = generic_cluster(4, 2, 2);
  spec.cluster_description = "4 x generic, star 10 Gb/s";
  spec.fs.preset = "custom";
  spec.fs.mgmt_node = 0;
  spec.fs.meta_nodes = {0};
  spec.fs.storage = {{1, {0, 1}}, {2, {0, 1}}};
  spec.fs.meta.default_chunk_bytes = 256 * k_kib;
  spec.fs.meta.default_stripe_count = 4;

  FileSweepConfig sweep;
  sweep.files_per_rank = 8;
  sweep.file_bytes = 1 * k_mib;
  sweep.block_bytes = 256 * k_kib;
  sweep.threads = 4;
  WorkloadSpec w1{"sweep", sweep, ClientPlacement{{3}, 2}};
  MdBenchConfig md;
  md.files_per_rank = 50;
  md.threads = 8;
  WorkloadSpec w2{"md", md, ClientPlacement{{3}, 2}};
  spec.workloads = {w1, w2};
  return spec;
}

const PhaseRow* find_row(const RunResult& r, const std::string& workload, const std::string& phase) {
  for (const PhaseRow& p : r.phases) {
    if (p.workload == workload && p.phase == phase) return &p;
  }
  return nullptr;
}

RunnerOptions quick_options() {
  RunnerOptions o;
  o.jobs = 2;
  o.point_timeout_s = 120;  // a bound on a broken run, far above its few hundred milliseconds
  return o;
}

// Where a rank's threads (and host buffers) run: a node's only rank on every
// socket, a rank with a GPU of its own on that GPU's socket, other ranks on
// the sockets they split (socket s to rank s % ranks_per_node).
TEST(RankHostNuma, OnlyRankSpreadsGpuRanksBindNearTheirGpuOthersSplitTheSockets) {
  topo::GenericMachine m;
  m.sockets = 4;
  m.gpus = 2;  // GPU 0 on socket 0, GPU 1 on socket 2 (device i of n on socket i*S/n)
  m.nics = 1;
  Result<topo::Topology> machine = topo::generic_machine(m);
  ASSERT_TRUE(machine.ok()) << machine.status().to_string();
  Result<topo::Topology> cluster = topo::star_cluster(*machine, 2);
  ASSERT_TRUE(cluster.ok()) << cluster.status().to_string();
  using V = std::vector<std::uint16_t>;
  ClientPlacement one{{0, 1}, 1};
  EXPECT_EQ(rank_host_numa(one, 0, *cluster), (V{0, 1, 2, 3}));
  EXPECT_EQ(rank_host_numa(one, 1, *cluster), (V{0, 1, 2, 3}));
  ClientPlacement gpu_ranks{{0, 1}, 2};
  EXPECT_EQ(rank_host_numa(gpu_ranks, 0, *cluster), (V{0}));
  EXPECT_EQ(rank_host_numa(gpu_ranks, 1, *cluster), (V{2}));
  EXPECT_EQ(rank_host_numa(gpu_ranks, 3, *cluster), (V{2})) << "rank 3 is node 1's second rank";
  ClientPlacement three{{0}, 3};  // ranks 0 and 1 have GPUs, rank 2 none: sockets 2 (2 % 3)
  EXPECT_EQ(rank_host_numa(three, 2, *cluster), (V{2}));
  ClientPlacement six{{0}, 6};  // more ranks than sockets: rank 5 on socket 5 % 4
  EXPECT_EQ(rank_host_numa(six, 5, *cluster), (V{1}));
}

TEST(RunnerSim, FileSweepAndMdBenchOnFourNodesMoveEveryByteWithinTheLinkRate) {
  const ScenarioSpec spec = small_spec();
  Result<std::vector<RunResult>> ran = run_points({spec}, Backend::sim, quick_options());
  ASSERT_TRUE(ran.ok()) << ran.status().to_string();
  ASSERT_EQ(ran->size(), 1u);
  const RunResult& r = (*ran)[0];
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.backend, Backend::sim);
  EXPECT_EQ(r.spec.params.at("files"), "8");
  EXPECT_GT(r.simulated_s, 0);

  const std::uint64_t total_bytes = 2 * 8 * k_mib;
  for (const char* phase : {"write", "read"}) {
    const PhaseRow* row = find_row(r, "sweep", phase);
    ASSERT_NE(row, nullptr) << phase;
    EXPECT_EQ(row->ranks, 2u);
    EXPECT_EQ(row->bytes, total_bytes) << phase;
    EXPECT_EQ(row->ops, total_bytes / (256 * k_kib)) << phase;  // block I/Os
    EXPECT_GT(row->last_bytes_per_s, 0) << phase;
    // Both ranks share node 3's one 10 Gb/s NIC.
    EXPECT_LE(row->last_bytes_per_s, k_link_bytes_per_s * 1.001) << phase;
    // Throughput over time: every byte is in exactly one window.
    ASSERT_GT(row->progress_window_s, 0) << phase;
    ASSERT_FALSE(row->progress_bytes_per_s.empty()) << phase;
    double progress_bytes = 0;
    for (double rate : row->progress_bytes_per_s) progress_bytes += rate * row->progress_window_s;
    EXPECT_NEAR(progress_bytes, static_cast<double>(total_bytes), 1.0) << phase;
    EXPECT_GE(row->first_bytes_per_s, row->last_bytes_per_s * 0.999) << phase;
    EXPECT_GT(row->latency_us_p50, 0) << phase;
    EXPECT_GE(row->latency_us_p99, row->latency_us_p50) << phase;
    EXPECT_NEAR(row->last_done_s, static_cast<double>(total_bytes) / row->last_bytes_per_s, 1e-9) << phase;
    EXPECT_EQ(row->extra.at("files"), 16.0) << phase;
  }
  ASSERT_NE(find_row(r, "sweep", "mkdir"), nullptr);
  EXPECT_EQ(find_row(r, "sweep", "stat")->ops, 16u);

  const PhaseRow* create = find_row(r, "md", "create");
  ASSERT_NE(create, nullptr);
  EXPECT_EQ(create->ops, 100u);
  EXPECT_EQ(create->bytes, 0u);
  EXPECT_GT(create->last_ops_per_s, 0);
  const PhaseRow* readdir = find_row(r, "md", "readdir");
  ASSERT_NE(readdir, nullptr);
  EXPECT_EQ(readdir->extra.at("entries"), 200.0);  // each of 2 ranks lists the shared directory of 100

  // Host buffers: every chunk planned direct, none bounced.
  EXPECT_EQ(r.paths_taken.at("bounce"), 0u);
  EXPECT_EQ(static_cast<double>(r.paths_taken.at("direct")), r.counters.at("client.chunks_direct"));
  EXPECT_GT(r.paths_taken.at("direct"), 0u);
  EXPECT_EQ(r.counters.at("storage.write_bytes"), static_cast<double>(total_bytes));
  EXPECT_GT(r.counters.at("sim.events"), 0);
}

TEST(RunnerSim, SameSeedSameResultsAcrossParallelChildren) {
  ScenarioSpec a = small_spec();
  a.workloads.resize(1);
  Result<std::vector<RunResult>> ran = run_points({a, a}, Backend::sim, quick_options());
  ASSERT_TRUE(ran.ok()) << ran.status().to_string();
  ASSERT_TRUE((*ran)[0].ok && (*ran)[1].ok) << (*ran)[0].error << (*ran)[1].error;
  ASSERT_EQ((*ran)[0].phases.size(), (*ran)[1].phases.size());
  for (std::size_t i = 0; i < (*ran)[0].phases.size(); ++i) {
    EXPECT_EQ(to_json((*ran)[0].phases[i]), to_json((*ran)[1].phases[i])) << i;
  }
  EXPECT_EQ((*ran)[0].simulated_s, (*ran)[1].simulated_s);
}

// GPU buffers: GdsMode decides whether the planner may go direct into GPU memory.
ScenarioSpec gpu_spec(GdsMode gds) {
  ScenarioSpec spec = small_spec();
  FileSweepConfig sweep = std::get<FileSweepConfig>(spec.workloads[0].config);
  sweep.buffer_kind = MemKind::gpu;
  sweep.phases = {SweepPhase::mkdir, SweepPhase::write, SweepPhase::read};
  spec.workloads = {WorkloadSpec{"gpu_sweep", sweep, ClientPlacement{{3}, 2}}};
  spec.fs.gds = gds;
  return spec;
}

TEST(RunnerSim, GdsModeSelectsDirectOrBounceForGpuBuffers) {
  // The generic machine's GPUs and NIC share one PCIe switch (PIX): direct is allowed.
  Result<std::vector<RunResult>> ran = run_points(
      {gpu_spec(GdsMode::automatic), gpu_spec(GdsMode::off), gpu_spec(GdsMode::on)}, Backend::sim, quick_options());
  ASSERT_TRUE(ran.ok()) << ran.status().to_string();
  const RunResult& automatic = (*ran)[0];
  const RunResult& off = (*ran)[1];
  const RunResult& on = (*ran)[2];
  ASSERT_TRUE(automatic.ok) << automatic.error;
  ASSERT_TRUE(off.ok) << off.error;
  ASSERT_TRUE(on.ok) << on.error;
  EXPECT_GT(automatic.paths_taken.at("direct"), 0u);
  EXPECT_EQ(automatic.paths_taken.at("bounce"), 0u);
  EXPECT_EQ(off.paths_taken.at("direct"), 0u);
  EXPECT_EQ(off.paths_taken.at("bounce"), automatic.paths_taken.at("direct"));
  EXPECT_EQ(on.paths_taken.at("bounce"), 0u);
}

TEST(RunnerSim, GdsOnFailsWhenATransferHadToBounce) {
  // Two sockets, GPU on socket 0 and NIC on socket 1: SYS, never direct.
  ScenarioSpec spec = gpu_spec(GdsMode::on);
  topo::GenericMachine m;
  m.sockets = 2;
  m.gpus = 2;
  m.nics = 1;
  m.nvmes = 2;
  m.nic_port_rate_bytes_per_s = k_link_bytes_per_s;
  Result<topo::Topology> machine = topo::generic_machine(m);
  ASSERT_TRUE(machine.ok());
  Result<topo::Topology> cluster = topo::star_cluster(*machine, 4, {});
  ASSERT_TRUE(cluster.ok());
  spec.cluster = std::make_shared<const topo::Topology>(std::move(cluster).value());
  std::get<FileSweepConfig>(spec.workloads[0].config).files_per_rank = 2;
  Result<std::vector<RunResult>> ran = run_points({spec}, Backend::sim, quick_options());
  ASSERT_TRUE(ran.ok());
  const RunResult& r = (*ran)[0];
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("gds = on"), std::string::npos) << r.error;
  EXPECT_GT(r.paths_taken.at("bounce"), 0u);
}

TEST(RunnerSim, BadPlacementIsNotOkAndSaysWhy) {
  ScenarioSpec no_node = small_spec();
  no_node.fs.meta_nodes = {9};
  ScenarioSpec no_drive = small_spec();
  no_drive.fs.storage = {{1, {0, 5}}};
  ScenarioSpec no_clients = small_spec();
  no_clients.workloads[1].clients.nodes.clear();
  ScenarioSpec bad_workload = small_spec();
  std::get<FileSweepConfig>(bad_workload.workloads[0].config).block_bytes = 0;
  ScenarioSpec bad_profile = small_spec();
  bad_profile.sim_profile = "no_such_profile";
  Result<std::vector<RunResult>> ran =
      run_points({no_node, no_drive, no_clients, bad_workload, bad_profile}, Backend::sim, quick_options());
  ASSERT_TRUE(ran.ok());
  const char* expected[] = {"node 9 does not exist", "has no NVMe drive 5", "no client nodes", "\"sweep\"",
                            "no_such_profile"};
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_FALSE((*ran)[i].ok) << i;
    EXPECT_NE((*ran)[i].error.find(expected[i]), std::string::npos) << i << ": " << (*ran)[i].error;
  }
}

TEST(RunnerSim, SpentEventBudgetFailsTheRunNamingTheWorkload) {
  ScenarioSpec spec = small_spec();
  spec.max_events = 1000;
  Result<std::vector<RunResult>> ran = run_points({spec}, Backend::sim, quick_options());
  ASSERT_TRUE(ran.ok());
  EXPECT_FALSE((*ran)[0].ok);
  EXPECT_NE((*ran)[0].error.find("workload \"sweep\" did not finish"), std::string::npos) << (*ran)[0].error;
  EXPECT_NE((*ran)[0].error.find("max_events"), std::string::npos) << (*ran)[0].error;
}

// ---- the pool: failures of a point never fail the others, never hang ----

RunResult fake_ok(const ScenarioSpec& spec, Backend backend) {
  RunResult r;
  r.spec = spec;
  r.backend = backend;
  r.ok = true;
  r.simulated_s = static_cast<double>(spec.seed);
  return r;
}

ScenarioSpec seeded(std::uint64_t seed) {
  ScenarioSpec s;
  s.scenario = "fake";
  s.seed = seed;
  return s;
}

TEST(RunnerPool, CrashingPointIsNotOkAndTheOthersRun) {
  RunnerOptions o = quick_options();
  o.run_point = [](const ScenarioSpec& spec, Backend backend) {
    if (spec.seed == 2) std::abort();
    return fake_ok(spec, backend);
  };
  Result<std::vector<RunResult>> ran = run_points({seeded(1), seeded(2), seeded(3)}, Backend::sim, o);
  ASSERT_TRUE(ran.ok());
  EXPECT_TRUE((*ran)[0].ok);
  EXPECT_FALSE((*ran)[1].ok);
  EXPECT_NE((*ran)[1].error.find("signal 6"), std::string::npos) << (*ran)[1].error;
  EXPECT_EQ((*ran)[1].spec.seed, 2u);
  EXPECT_TRUE((*ran)[2].ok);
  EXPECT_EQ((*ran)[2].simulated_s, 3.0);  // results stay in point order
}

TEST(RunnerPool, HangingPointIsKilledAtItsLimit) {
  RunnerOptions o = quick_options();
  o.point_timeout_s = 0.3;
  std::vector<RunnerProgress> reports;
  o.progress = [&](const RunnerProgress& p) { reports.push_back(p); };
  o.run_point = [](const ScenarioSpec& spec, Backend backend) {
    if (spec.seed == 1) {
      for (;;) ::pause();  // never returns: only the runner's limit ends it
    }
    return fake_ok(spec, backend);
  };
  Result<std::vector<RunResult>> ran = run_points({seeded(1), seeded(2)}, Backend::sim, o);
  ASSERT_TRUE(ran.ok());
  EXPECT_FALSE((*ran)[0].ok);
  EXPECT_NE((*ran)[0].error.find("wall-clock limit"), std::string::npos) << (*ran)[0].error;
  EXPECT_TRUE((*ran)[1].ok);
  ASSERT_FALSE(reports.empty());
  EXPECT_EQ(reports.back().done, 2u);
  EXPECT_EQ(reports.back().failed, 1u);
  EXPECT_EQ(reports.back().points, 2u);
}

TEST(RunnerPool, ThrowingOrExitingPointIsNotOk) {
  RunnerOptions o = quick_options();
  o.jobs = 1;
  o.run_point = [](const ScenarioSpec& spec, Backend backend) -> RunResult {
    if (spec.seed == 1) throw std::runtime_error("boom");
    if (spec.seed == 2) ::_exit(9);
    return fake_ok(spec, backend);
  };
  Result<std::vector<RunResult>> ran = run_points({seeded(1), seeded(2), seeded(3)}, Backend::sim, o);
  ASSERT_TRUE(ran.ok());
  EXPECT_NE((*ran)[0].error.find("boom"), std::string::npos) << (*ran)[0].error;
  EXPECT_NE((*ran)[1].error.find("exited with status 9"), std::string::npos) << (*ran)[1].error;
  EXPECT_TRUE((*ran)[2].ok);
}

TEST(RunnerPool, PointDoneHearsOfEveryPointAsItFinishes) {
  RunnerOptions o = quick_options();
  o.run_point = fake_ok;
  std::vector<std::size_t> heard;
  o.point_done = [&](std::size_t index, const RunResult& r) {
    EXPECT_EQ(r.spec.seed, index + 1);
    heard.push_back(index);
  };
  Result<std::vector<RunResult>> ran = run_points({seeded(1), seeded(2), seeded(3)}, Backend::sim, o);
  ASSERT_TRUE(ran.ok());
  std::sort(heard.begin(), heard.end());
  EXPECT_EQ(heard, (std::vector<std::size_t>{0, 1, 2}));
}

TEST(RunnerPool, AStopKillsTheRunningPointsKeepsTheFinishedOnesAndLeavesNoChild) {
  RunnerOptions o = quick_options();
  o.jobs = 2;
  o.run_point = [](const ScenarioSpec& spec, Backend backend) {
    if (spec.seed != 1) {
      for (;;) ::pause();  // never returns: only the stop ends it
    }
    return fake_ok(spec, backend);
  };
  std::vector<std::size_t> finished;
  double simulated_s_done = 0;
  o.point_done = [&](std::size_t index, const RunResult&) { finished.push_back(index); };
  o.progress = [&](const RunnerProgress& p) { simulated_s_done = p.simulated_s_done; };
  o.stop_requested = [&] { return !finished.empty(); };  // stop once the first point finished
  Result<std::vector<RunResult>> ran = run_points({seeded(1), seeded(2), seeded(3)}, Backend::sim, o);
  ASSERT_FALSE(ran.ok());
  EXPECT_EQ(ran.status().code(), StatusCode::unavailable);
  EXPECT_NE(ran.status().message().find("2 of 3 points unfinished"), std::string::npos) << ran.status().message();
  EXPECT_EQ(finished, std::vector<std::size_t>{0});
  EXPECT_EQ(simulated_s_done, 1.0);  // fake_ok's simulated_s is the seed
  errno = 0;
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);  // every child was reaped
  EXPECT_EQ(errno, ECHILD);
}

TEST(ChildPool, AStopBeforeAnyJobStartsRunsNothing) {
  ChildPoolOptions o;
  o.jobs = 2;
  o.stop_requested = [] { return true; };
  std::size_t done = 0;
  o.on_done = [&](std::size_t, const ChildJobResult&) { ++done; };
  Result<std::vector<ChildJobResult>> ran = ChildPool::run(
      3, [](std::size_t) { return std::string("x"); }, o);
  EXPECT_EQ(ran.status().code(), StatusCode::unavailable);
  EXPECT_EQ(done, 0u);
}

TEST(ChildPool, ProgressNamesTheRunningJobs) {
  ChildPoolOptions o;
  o.jobs = 1;
  std::vector<std::vector<std::size_t>> running;
  o.progress = [&](const ChildPoolProgress& p) { running.push_back(p.running_jobs); };
  ASSERT_TRUE(ChildPool::run(
                  2, [](std::size_t i) { return std::to_string(i); }, o)
                  .ok());
  ASSERT_FALSE(running.empty());
  for (const auto& r : running) EXPECT_LE(r.size(), 1u);  // one job at a time
  EXPECT_TRUE(running.back().empty());                    // the last report: every job done
}

TEST(ChildPool, OversizedResultIsNotOk) {
  ChildPoolOptions o;
  o.jobs = 2;
  o.max_payload_bytes = 1000;
  Result<std::vector<ChildJobResult>> ran = ChildPool::run(
      2, [](std::size_t i) { return std::string(i == 0 ? 10 : 100'000, 'x'); }, o);
  ASSERT_TRUE(ran.ok());
  EXPECT_TRUE((*ran)[0].ok);
  EXPECT_EQ((*ran)[0].payload, std::string(10, 'x'));
  EXPECT_FALSE((*ran)[1].ok);
  EXPECT_NE((*ran)[1].error.find("larger than 1000"), std::string::npos) << (*ran)[1].error;
}

TEST(RunnerPool, EmulateSaysNotYetSupported) {
  Result<std::vector<RunResult>> ran = run_points({small_spec()}, Backend::emulate, quick_options());
  ASSERT_TRUE(ran.ok());
  EXPECT_FALSE((*ran)[0].ok);
  EXPECT_EQ((*ran)[0].backend, Backend::emulate);
  EXPECT_NE((*ran)[0].error.find("not yet supported"), std::string::npos) << (*ran)[0].error;
}

TEST(RunnerHw, SmallSpecRunsOnLoopbackWithRealFilesAndEveryByteCounted) {
  ScenarioSpec spec = small_spec();
  std::get<FileSweepConfig>(spec.workloads[0].config).files_per_rank = 3;
  std::get<MdBenchConfig>(spec.workloads[1].config).files_per_rank = 10;
  Result<std::vector<RunResult>> ran = run_points({spec}, Backend::hw, quick_options());
  ASSERT_TRUE(ran.ok());
  const RunResult& r = (*ran)[0];
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.backend, Backend::hw);
  const std::uint64_t total_bytes = 2 * 3 * k_mib;
  for (const char* phase : {"write", "read"}) {
    const PhaseRow* row = find_row(r, "sweep", phase);
    ASSERT_NE(row, nullptr) << phase;
    EXPECT_EQ(row->bytes, total_bytes) << phase;
    EXPECT_GT(row->last_bytes_per_s, 0) << phase;
    EXPECT_GT(row->latency_us_p50, 0) << phase;
    double progress_bytes = 0;
    for (double rate : row->progress_bytes_per_s) progress_bytes += rate * row->progress_window_s;
    EXPECT_NEAR(progress_bytes, static_cast<double>(total_bytes), 1.0) << phase;
  }
  EXPECT_EQ(find_row(r, "md", "create")->ops, 20u);
  EXPECT_EQ(r.counters.at("storage.write_bytes"), static_cast<double>(total_bytes));
  EXPECT_EQ(r.counters.at("storage.read_bytes"), static_cast<double>(total_bytes));
  EXPECT_EQ(r.counters.count("client.crc_mismatches"), 0u);  // never counted: no mismatch
  EXPECT_EQ(static_cast<double>(r.paths_taken.at("direct")), r.counters.at("client.chunks_direct"));
  EXPECT_GT(r.paths_taken.at("direct"), 0u);
}

TEST(RunnerHw, GdsNeedsATransportThatReachesGpuMemory) {
  // tcp moves host bytes only: gds on fails saying why, auto takes the bounce
  // path and says so in the run's log (issue 6's modes).
  ScenarioSpec spec = small_spec();
  spec.fs.gds = GdsMode::on;
  Result<std::vector<RunResult>> on = run_points({spec}, Backend::hw, quick_options());
  ASSERT_TRUE(on.ok());
  EXPECT_FALSE((*on)[0].ok);
  EXPECT_NE((*on)[0].error.find("GDS on: transport tcp cannot reach GPU memory"), std::string::npos) << (*on)[0].error;
  spec.fs.gds = GdsMode::automatic;
  std::get<FileSweepConfig>(spec.workloads[0].config).files_per_rank = 1;
  Result<std::vector<RunResult>> automatic = run_points({spec}, Backend::hw, quick_options());
  ASSERT_TRUE(automatic.ok());
  const RunResult& r = (*automatic)[0];
  ASSERT_TRUE(r.ok) << r.error;
  auto says_fallback = [](const RunResult& run) {
    bool said = false;
    for (const std::string& line : run.log_tail) said = said || line.find("GDS auto -> bounce") != std::string::npos;
    return said;
  };
  // Host buffers never go GPU-direct: nothing to say (issue 25, quiet by default).
  EXPECT_FALSE(says_fallback(r)) << "a host-memory run spoke of GDS";
  // GPU buffers: the fallback is said (the run itself needs GPU memory, which this test has none of).
  std::get<FileSweepConfig>(spec.workloads[0].config).buffer_kind = MemKind::gpu;
  Result<std::vector<RunResult>> gpu = run_points({spec}, Backend::hw, quick_options());
  ASSERT_TRUE(gpu.ok());
  EXPECT_TRUE(says_fallback((*gpu)[0])) << "the fallback is not in the run's log";
}

TEST(RunnerHw, BadPlacementIsNotOk) {
  ScenarioSpec spec = small_spec();
  spec.fs.storage = {{7, {0}}};
  Result<std::vector<RunResult>> ran = run_points({spec}, Backend::hw, quick_options());
  ASSERT_TRUE(ran.ok());
  EXPECT_FALSE((*ran)[0].ok);
  EXPECT_NE((*ran)[0].error.find("node 7 does not exist"), std::string::npos) << (*ran)[0].error;
}

TEST(RunnerPool, NoPointsIsNoRun) {
  Result<std::vector<RunResult>> ran = run_points({}, Backend::sim, quick_options());
  ASSERT_TRUE(ran.ok());
  EXPECT_TRUE(ran->empty());
}

TEST(Runner, BackendNamesRoundTripAndUnknownIsAnError) {
  for (Backend b : {Backend::sim, Backend::hw, Backend::emulate}) EXPECT_EQ(*parse_backend(to_string(b)), b);
  Result<Backend> bad = parse_backend("simulation");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("sim, hw, emulate"), std::string::npos);
  EXPECT_EQ(to_string(GdsMode::automatic), "auto");
}

// ---- codec and files ----

RunResult sample_result() {
  RunResult r;
  r.spec = small_spec();
  r.backend = Backend::sim;
  r.ok = false;
  r.error = "something, \"quoted\"";
  r.simulated_s = 1.5;
  r.wall_s = 0.25;
  PhaseRow row;
  row.workload = "sweep";
  row.phase = "read";
  row.ranks = 2;
  row.bytes = 1 << 20;
  row.ops = 4;
  row.first_done_s = 0.5;
  row.last_done_s = 1.0;
  row.first_bytes_per_s = 2.0 * (1 << 20);
  row.last_bytes_per_s = 1.0 * (1 << 20);
  row.first_ops_per_s = 8;
  row.last_ops_per_s = 4;
  row.latency_us_p50 = 10;
  row.latency_us_p99 = 20;
  row.extra = {{"files", 2}, {"au_pct", std::numeric_limits<double>::infinity()}};
  r.phases = {row};
  r.counters = {{"client.read_bytes", 1048576}};
  r.paths_taken = {{"direct", 3}, {"bounce", 1}};
  r.log_tail = {"a warning"};
  return r;
}

TEST(ResultCodec, RunResultRoundTripsThroughJson) {
  const RunResult r = sample_result();
  const std::string text = to_json(r).dump();
  Result<RunResult> back = run_result_from_json(nlohmann::json::parse(text));
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->spec.scenario, r.spec.scenario);
  EXPECT_EQ(back->spec.params, r.spec.params);
  EXPECT_EQ(back->spec.seed, r.spec.seed);
  EXPECT_EQ(back->ok, r.ok);
  EXPECT_EQ(back->error, r.error);
  EXPECT_EQ(back->simulated_s, r.simulated_s);
  EXPECT_EQ(back->paths_taken, r.paths_taken);
  EXPECT_EQ(back->counters, r.counters);
  EXPECT_EQ(back->log_tail, r.log_tail);
  ASSERT_EQ(back->phases.size(), 1u);
  EXPECT_EQ(back->phases[0].bytes, r.phases[0].bytes);
  EXPECT_EQ(back->phases[0].latency_us_p99, 20);
  EXPECT_EQ(back->phases[0].extra.at("files"), 2);
  EXPECT_TRUE(std::isnan(back->phases[0].extra.at("au_pct")));  // non-finite is written as null
  EXPECT_EQ(to_json(*back)["phases"], to_json(r)["phases"]);
}

TEST(ResultCodec, MissingOrMistypedFieldIsAnErrorNamingIt) {
  nlohmann::json j = to_json(sample_result());
  j.erase("paths_taken");
  Result<RunResult> missing = run_result_from_json(j);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("paths_taken"), std::string::npos) << missing.status().message();
  j = to_json(sample_result());
  j["phases"][0]["bytes"] = "many";
  EXPECT_FALSE(run_result_from_json(j).ok());
  j = to_json(sample_result());
  j["backend"] = "cloud";
  EXPECT_FALSE(run_result_from_json(j).ok());
}

TEST(ResultCodec, SpecSummaryRecordsPlacementAndWorkloadSettings) {
  const nlohmann::json s = spec_summary(small_spec());
  EXPECT_EQ(s["cluster"]["nodes"], 4);
  EXPECT_EQ(s["fs"]["targets"], 4);
  EXPECT_EQ(s["fs"]["gds"], "auto");
  EXPECT_EQ(s["fs"]["chunk_bytes"], 256 * k_kib);
  ASSERT_EQ(s["workloads"].size(), 2u);
  EXPECT_EQ(s["workloads"][0]["kind"], "file_sweep");
  EXPECT_EQ(s["workloads"][0]["ranks"], 2);
  EXPECT_EQ(s["workloads"][0]["settings"]["file_bytes"], k_mib);
  EXPECT_EQ(s["workloads"][1]["kind"], "md_bench");
  // Every workload kind has a summary.
  ScenarioSpec all = small_spec();
  all.workloads = {WorkloadSpec{"t", TrainEpochConfig{}, {}}, WorkloadSpec{"c", CheckpointConfig{}, {}},
                   WorkloadSpec{"s", StageInConfig{}, {}}, WorkloadSpec{"g", StreamConfig{}, {}}};
  const nlohmann::json a = spec_summary(all);
  EXPECT_EQ(a["workloads"][0]["kind"], "train_epoch");
  EXPECT_EQ(a["workloads"][1]["settings"]["shard_bytes"], 64 * k_mib);
  EXPECT_EQ(a["workloads"][2]["kind"], "stage_in");
  EXPECT_EQ(a["workloads"][3]["settings"]["direction"], "record");
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The cells of one CSV line, unquoted.
std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '"' && quoted && i + 1 < line.size() && line[i + 1] == '"') {
      cells.back() += '"';  // "" inside quotes
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      cells.emplace_back();
    } else {
      cells.back() += c;
    }
  }
  return cells;
}

// The cell of `column` in `line` of a CSV whose header is `header`; "?" when there is no such column.
std::string csv_cell(const std::string& header, const std::string& line, const std::string& column) {
  const std::vector<std::string> names = csv_cells(header);
  const std::vector<std::string> cells = csv_cells(line);
  for (std::size_t i = 0; i < names.size() && i < cells.size(); ++i) {
    if (names[i] == column) return cells[i];
  }
  return "?";
}

TEST(ResultsWriter, CsvHasOneRowPerPhaseAndUnitsInColumnNames) {
  RunResult ok_run = sample_result();
  ok_run.ok = true;
  ok_run.error.clear();
  ok_run.phases.push_back(ok_run.phases[0]);
  ok_run.phases[1].phase = "write";
  RunResult failed = sample_result();
  failed.phases.clear();
  const std::vector<std::string> lines = lines_of(results_csv({ok_run, failed}));
  ASSERT_EQ(lines.size(), 4u);  // header, 2 phases, 1 row for the run without phases
  const std::string& header = lines[0];
  for (const char* column : {"throughput_GB_per_s", "first_throughput_GB_per_s", "elapsed_s", "latency_us_p50",
                             "latency_us_p99", "ops_per_s", "param_files", "param_size", "au_pct", "files"}) {
    EXPECT_NE(header.find(column), std::string::npos) << column;
  }
  EXPECT_EQ(header.find("MiB"), std::string::npos) << header;  // one unit family: decimal GB/s
  for (const std::string& line : lines) EXPECT_EQ(csv_cells(line).size(), csv_cells(header).size()) << line;
  EXPECT_EQ(csv_cell(header, lines[1], "throughput_GB_per_s"), "0.00104858");  // 1 MiB/s
  EXPECT_EQ(csv_cell(header, lines[1], "first_throughput_GB_per_s"), "0.00209715");
  EXPECT_NE(lines[3].find("\"something, \"\"quoted\"\"\""), std::string::npos);  // CSV quoting
}

// Issue 22: sizes, rates and durations get a numeric column beside their text; a script's list
// parameters (its axes) stay out of the CSV; what was not measured is an empty cell, never 0.
TEST(ResultsWriter, CsvGivesQuantitiesAsNumbersLeavesListsOutAndUnmeasuredEmpty) {
  RunResult a = sample_result();
  a.ok = true;
  a.spec.params = {{"block", "256KiB"}, {"link", "200Mb/s"},        {"pause", "10ms"},
                   {"files", "2"},      {"sizes", "{4MiB, 12MiB}"}, {"mixed", "4MiB"}};
  a.phases[0].latency_us_p50 = std::numeric_limits<double>::quiet_NaN();
  a.phases[0].first_ops_per_s = std::numeric_limits<double>::quiet_NaN();
  RunResult b = a;
  b.spec.params["block"] = "1MiB";
  b.spec.params["mixed"] = "fast";  // not every value is a size: no number column
  const std::vector<std::string> lines = lines_of(results_csv({a, b}));
  ASSERT_EQ(lines.size(), 3u);
  const std::string& header = lines[0];
  for (const std::string& line : lines) EXPECT_EQ(csv_cells(line).size(), csv_cells(header).size()) << line;
  EXPECT_EQ(csv_cell(header, lines[1], "param_block"), "256KiB");
  EXPECT_EQ(csv_cell(header, lines[1], "param_block_bytes"), "262144");
  EXPECT_EQ(csv_cell(header, lines[2], "param_block_bytes"), "1048576");
  EXPECT_EQ(csv_cell(header, lines[1], "param_link_bytes_per_s"), "25000000");
  EXPECT_EQ(csv_cell(header, lines[1], "param_pause_s"), "0.01");
  EXPECT_EQ(csv_cell(header, lines[1], "param_files"), "2");
  EXPECT_EQ(csv_cell(header, lines[1], "param_files_bytes"), "?");  // a plain number is its own number
  EXPECT_EQ(csv_cell(header, lines[1], "param_mixed_bytes"), "?");
  EXPECT_EQ(csv_cell(header, lines[1], "param_sizes"), "?");  // the script's axis, not the point's value
  EXPECT_EQ(csv_cell(header, lines[1], "latency_us_p50"), "");
  EXPECT_EQ(csv_cell(header, lines[1], "first_ops_per_s"), "");
  EXPECT_EQ(csv_cell(header, lines[1], "latency_us_p99"), "20");
  // The table shows an unmeasured latency as "-".
  const std::string table = results_table({a});
  EXPECT_NE(table.find(" - "), std::string::npos) << table;
  EXPECT_EQ(table.find("nan"), std::string::npos) << table;
}

TEST(ResultsWriter, ARowWithoutMeasurementsLeavesItsLatenciesAndSimulatedTimeUnmeasured) {
  const PhaseRow row;
  EXPECT_TRUE(std::isnan(row.latency_us_p50));
  EXPECT_TRUE(std::isnan(row.latency_us_p99));
  EXPECT_TRUE(std::isnan(RunResult{}.simulated_s));
  const nlohmann::json j = to_json(row);
  EXPECT_TRUE(j.at("latency_us_p50").is_null());
}

TEST(ResultsWriter, ProgressCsvGivesRatesInGBPerSecond) {
  RunResult r = sample_result();
  r.phases[0].progress_window_s = 0.5;
  r.phases[0].progress_bytes_per_s = {2e9, 0};
  const std::vector<std::string> lines = lines_of(progress_csv({r}));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "run,workload,phase,window_start_s,window_s,throughput_GB_per_s");
  EXPECT_EQ(lines[1], "0,sweep,read,0,0.5,2");
  EXPECT_EQ(lines[2], "0,sweep,read,0.5,0.5,0");
}

TEST(ResultsWriter, LabelAndConfigurationAreColumns) {
  RunResult four = sample_result();
  four.ok = true;
  four.spec.label = "4 MDS";
  four.spec.fs.meta_nodes = {0, 1, 2, 3};
  four.spec.fs.gds = GdsMode::on;
  RunResult one = sample_result();
  one.ok = true;  // no label; the same params as `four`
  const std::vector<std::string> lines = lines_of(results_csv({four, one}));
  ASSERT_EQ(lines.size(), 3u);
  const std::string& header = lines[0];
  EXPECT_EQ(header.rfind("run,scenario,label,", 0), 0u) << header;
  for (const char* column : {"config_cluster", "config_cluster_nodes", "config_fs_preset", "config_gds",
                             "config_meta_servers", "config_storage_targets", "config_stripe_count",
                             "config_chunk_bytes", "config_client_max_inflight_chunks", "config_workloads"}) {
    EXPECT_NE(csv_cell(header, lines[1], column), "?") << column;
  }
  EXPECT_EQ(csv_cell(header, lines[1], "label"), "4 MDS");
  EXPECT_EQ(csv_cell(header, lines[2], "label"), "");
  EXPECT_EQ(csv_cell(header, lines[1], "config_meta_servers"), "4");
  EXPECT_EQ(csv_cell(header, lines[2], "config_meta_servers"), "1");
  EXPECT_EQ(csv_cell(header, lines[1], "config_gds"), "on");
  EXPECT_EQ(csv_cell(header, lines[2], "config_gds"), "auto");
  EXPECT_EQ(csv_cell(header, lines[1], "config_storage_targets"), "4");
  EXPECT_EQ(csv_cell(header, lines[1], "config_chunk_bytes"), std::to_string(256 * k_kib));
  EXPECT_EQ(csv_cell(header, lines[1], "config_workloads"), "file_sweep+md_bench");
  EXPECT_EQ(csv_cell(header, lines[1], "config_cluster"), "4 x generic, star 10 Gb/s");
  // The rows differ although the script named neither a label nor params.
  const auto head_of = [&](const std::string& line) { return line.substr(line.find(',')); };
  EXPECT_NE(head_of(lines[1]), head_of(lines[2]));
}

TEST(ResultsWriter, TableHasALabelColumnShowsTheConfigurationThatVariesAndRatesInGBPerSecond) {
  RunResult four = sample_result();
  four.ok = true;
  four.spec.label = "4 MDS";
  four.spec.fs.meta_nodes = {0, 1, 2, 3};
  four.phases[0].last_bytes_per_s = 2.5e9;
  RunResult one = sample_result();
  one.ok = true;
  const std::string table = results_table({four, one});
  const std::vector<std::string> lines = lines_of(table);
  ASSERT_GE(lines.size(), 3u) << table;
  EXPECT_NE(lines[0].find("label"), std::string::npos) << table;
  EXPECT_NE(lines[0].find("GB/s"), std::string::npos) << table;
  EXPECT_EQ(table.find("MiB/s"), std::string::npos) << table;
  EXPECT_NE(lines[1].find("4 MDS"), std::string::npos) << table;
  EXPECT_NE(lines[1].find("meta_servers=4"), std::string::npos) << table;
  EXPECT_NE(lines[1].find("2.500"), std::string::npos) << table;
  EXPECT_NE(lines[2].find("meta_servers=1"), std::string::npos) << table;
  EXPECT_EQ(table.find("files=8"), std::string::npos) << table;  // the same in every run
  // Without labels there is no label column.
  EXPECT_EQ(results_table({one}).find("label"), std::string::npos);
}

TEST(ResultCodec, LabelAndConfigurationAreRecordedAndTheLabelReadBack) {
  RunResult r = sample_result();
  r.spec.label = "gds on";
  r.spec.fs.gds = GdsMode::on;
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j["label"], "gds on");
  EXPECT_EQ(j["config"], run_config(r.spec));
  EXPECT_EQ(j["config"].size(), k_run_config_entries);
  EXPECT_EQ(j["config"]["gds"], "on");
  EXPECT_EQ(j["config"]["meta_servers"], 1);
  EXPECT_EQ(j["config"]["storage_servers"], 2);
  EXPECT_EQ(j["config"]["storage_targets"], 4);
  EXPECT_EQ(j["config"]["stripe_count"], 4);
  EXPECT_EQ(j["config"]["cluster_nodes"], 4);
  EXPECT_EQ(j["config"]["client_ranks"], 2);
  EXPECT_EQ(j["config"]["meta_mirrored"], false);
  for (const auto& [name, value] : j["config"].items()) {
    EXPECT_TRUE(value.is_primitive() && !value.is_null()) << name << " is not a scalar";
  }
  Result<RunResult> back = run_result_from_json(j);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->spec.label, "gds on");
  nlohmann::json older = j;
  older.erase("label");  // results written before labels
  EXPECT_EQ(run_result_from_json(older)->spec.label, "");
}

TEST(ResultsWriter, TableShowsPhasesFailuresAndTheParametersThatVary) {
  RunResult ok_run = sample_result();
  ok_run.ok = true;
  RunResult failed = sample_result();
  failed.spec.params["size"] = "2MiB";
  const std::string table = results_table({ok_run, failed});
  EXPECT_NE(table.find("sweep/read"), std::string::npos) << table;
  EXPECT_NE(table.find("size=2MiB"), std::string::npos) << table;
  EXPECT_EQ(table.find("files=8"), std::string::npos) << table;  // the same in every run
  EXPECT_NE(results_table({ok_run}).find("files=8 size=1MiB"), std::string::npos);
  EXPECT_NE(table.find("FAILED: something"), std::string::npos) << table;
  EXPECT_NE(table.find("2 runs, 1 failed"), std::string::npos) << table;
  EXPECT_EQ(table.find("label"), std::string::npos) << table;  // no run has one
}

class TempDir {
 public:
  TempDir() {
    char templ[] = "/tmp/sluice-runner-test-XXXXXX";
    path_ = ::mkdtemp(templ);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

int validate(const std::string& results_path) {
  const std::string command = std::string("python3 ") + SLUICE_SOURCE_DIR +
                              "/tests/scenarios/runner/validate_results.py " + SLUICE_SOURCE_DIR +
                              "/analysis/results.schema.json " + results_path;
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(ResultsSchema, ResultsOfARealRunValidateAndABrokenDocumentDoesNot) {
  ScenarioSpec failing = small_spec();
  failing.fs.meta_nodes = {9};
  Result<std::vector<RunResult>> ran = run_points({small_spec(), failing}, Backend::sim, quick_options());
  ASSERT_TRUE(ran.ok());
  ASSERT_TRUE((*ran)[0].ok) << (*ran)[0].error;
  TempDir dir;
  ASSERT_TRUE(write_results(dir.path() + "/out", "runner_test", *ran).ok());
  const std::string path = dir.path() + "/out/results.json";
  ASSERT_TRUE(std::filesystem::exists(dir.path() + "/out/results.csv"));
  ASSERT_EQ(validate(path), 0);

  std::ifstream in(path);
  nlohmann::json doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc["runs"].size(), 2u);
  EXPECT_EQ(doc["complete"], true);
  EXPECT_EQ(doc["runs"][0]["config"]["fs_preset"], "custom");
  EXPECT_EQ(doc["machine"]["cores"], this_machine().cores);
  EXPECT_EQ(doc["versions"]["sluice"], k_sluice_version);
  EXPECT_EQ(doc["versions"]["simgrid"].get<std::string>().rfind("3.", 0), 0u);
  doc["runs"][0]["phases"][0]["bytes"] = -1;
  doc["runs"][1]["error"] = "";  // a failed run must say why
  std::ofstream(dir.path() + "/broken.json") << doc.dump();
  EXPECT_EQ(validate(dir.path() + "/broken.json"), 1);
}

TEST(ResultsWriter, IncompleteResultsSaySoValidateAndLeaveNoTemporaryFile) {
  RunResult r = sample_result();
  r.spec.label = "a label";
  TempDir dir;
  ASSERT_TRUE(write_results(dir.path(), "runner_test", {r}, {}, Completeness::incomplete).ok());
  ASSERT_EQ(validate(dir.path() + "/results.json"), 0);
  std::ifstream in(dir.path() + "/results.json");
  const nlohmann::json doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc["complete"], false);
  EXPECT_EQ(doc["runs"][0]["label"], "a label");
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_NE(entry.path().extension(), ".tmp") << entry.path();
  }
}

TEST(ResultsWriter, UnwritableDirectoryIsAnIoError) {
  TempDir dir;
  std::ofstream(dir.path() + "/file") << "x";
  Status s = write_results(dir.path() + "/file/sub", "x", {});
  EXPECT_EQ(s.code(), StatusCode::io_error);
}

}  // namespace
}  // namespace sluice::scenario
