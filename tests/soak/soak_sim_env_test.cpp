// The R1 soak in SimEnv (issue 9): the same seeded runs as in TestEnv, on
// the SimGrid machine model (tests/sim's SimWorld), each in a child process
// (SimGrid runs one engine per process). SimEnv moves no bytes, so CRC32C
// checks are skipped there (crc_valid is false): a run checks that every
// acknowledged write reads back in full, that files' chunk objects exist
// with their sizes, and that nothing hangs; corruption is TestEnv's and
// HwEnv's to find.
//
// SLUICE_SOAK_SIM_RUNS overrides the number of runs (make soak: 100).
#include <gtest/gtest.h>

#ifdef SLUICE_SOAK_HAS_SIM

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "tests/sim/sim_world.hpp"

namespace sluice::testing {
// The fault primitives of a SimWorld are its runtime's (found by ADL from soak_run).
inline sim::SimRuntime& fault_world(SimWorld& world) { return world.runtime(); }
}  // namespace sluice::testing

#include "tests/soak/soak_harness.hpp"

namespace sluice::soak {
namespace {

using testing::SimWorld;

// Runs in CI: 100, as make soak (a child process and a small SimGrid run
// each, ~10 ms per run measured on the 2-core CI machine).
constexpr std::uint32_t k_ci_runs_sim_env = 100;

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::strtoull(v, nullptr, 10);
}

std::optional<std::uint64_t> sim_object_size(SimWorld& world, TargetId target, FileId file) {
  const std::uint64_t bytes = world.runtime().object_bytes(target, file);
  if (bytes == 0) return std::nullopt;
  return bytes;
}

// A run's result through the pipe from its child process: one "key value" per line.
std::string encode(const SoakRunResult& r) {
  std::ostringstream out;
  out << "acked " << r.acked << "\nwrites_failed " << r.writes_failed << "\nlost " << r.lost << "\ncorrupt "
      << r.corrupt << "\nhung " << r.hung << "\nmeta_bad " << r.meta_bad << "\nunavailable " << r.unavailable_while_dead
      << "\nwrite_phase_ns " << r.write_phase_ns << "\nlongest_op_ns " << r.longest_op_ns << "\n";
  std::istringstream plan(r.plan);
  for (std::string line; std::getline(plan, line);) out << "plan " << line << "\n";
  for (const std::string& p : r.problems) {
    std::string flat = p;
    for (char& c : flat) c = c == '\n' ? ' ' : c;
    out << "problem " << flat << "\n";
  }
  return out.str();
}

SoakRunResult decode(std::uint64_t seed, const std::string& text) {
  SoakRunResult r;
  r.seed = seed;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const std::size_t space = line.find(' ');
    const std::string key = line.substr(0, space);
    const std::string value = space == std::string::npos ? "" : line.substr(space + 1);
    auto number = [&value] { return std::strtoull(value.c_str(), nullptr, 10); };
    if (key == "acked") r.acked = number();
    if (key == "writes_failed") r.writes_failed = number();
    if (key == "lost") r.lost = number();
    if (key == "corrupt") r.corrupt = number();
    if (key == "hung") r.hung = number();
    if (key == "meta_bad") r.meta_bad = number();
    if (key == "unavailable") r.unavailable_while_dead = number();
    if (key == "write_phase_ns") r.write_phase_ns = static_cast<TimeNs>(number());
    if (key == "longest_op_ns") r.longest_op_ns = static_cast<TimeNs>(number());
    if (key == "plan") r.plan += value + "\n";
    if (key == "problem") r.problems.push_back(value);
  }
  if (text.empty()) r.problems.push_back("the child process of this run failed (see above)");
  return r;
}

SoakTotals soak_sim_env(bool mirroring, std::uint32_t default_runs) {
  SoakConfig config;
  config.runs = static_cast<std::uint32_t>(env_number("SLUICE_SOAK_SIM_RUNS", default_runs));
  config.first_seed = env_number("SLUICE_SOAK_SEED", 1);
  config.mirroring = mirroring;
  config.revive_before_check = !mirroring;
  config.limits.revive_every_kill = !mirroring;
  config.limits.kill_meta = mirroring;  // the metadata shard is mirrored too
  config.limits.max_permanent_kills = mirroring ? 1 : 0;
  SoakTotals totals;
  for (std::uint32_t i = 0; i < config.runs; ++i) {
    const std::uint64_t seed = config.first_seed + i;
    const std::string text =
        testing::in_child_capture([&] { return encode(soak_run<SimWorld>(seed, config, sim_object_size)); });
    totals.add(decode(seed, text));
  }
  std::printf("%s\n", totals.line("sim_env", mirroring).c_str());
  for (const std::string& f : totals.first_failures) std::printf("%s", f.c_str());
  EXPECT_EQ(totals.runs, config.runs);
  EXPECT_GT(totals.acked, 0u);
  EXPECT_EQ(totals.lost, 0u);
  EXPECT_EQ(totals.corrupt, 0u);
  EXPECT_EQ(totals.hung, 0u);
  EXPECT_EQ(totals.meta_bad, 0u);
  EXPECT_EQ(totals.failed_runs, 0u);
  return totals;
}

TEST(SoakSimEnv, R1RandomFaultRunsLoseNothing) { soak_sim_env(false, k_ci_runs_sim_env); }

TEST(SoakSimEnv, R1WithMirroringSurvivesAPrimaryThatStaysDead) { soak_sim_env(true, k_ci_runs_sim_env); }

// The SimRuntime's fault primitives, one by one.
TEST(SimRuntimeFaults, PartitionDropsMessagesAndFailsTransfers) {
  testing::in_child([] {
    SimWorld world(testing::small_cluster({.nodes = 3}), sim::SimRuntimeConfig{});
    sim::SimRuntime& rt = world.runtime();
    testing::Probe& a = world.add_service<testing::Probe>(0, testing::Probe::Script{});
    testing::Probe& b = world.add_service<testing::Probe>(1, testing::Probe::Script{});
    world.start();
    world.run_until_idle();
    rt.set_partitions({{1}});
    ASSERT_TRUE(a.env().send(world.endpoint_of(b), proto::Ack{1, StatusCode::ok, {}}).ok());
    Result<MemHandle> src = a.env().alloc(MemKind::host, 0, 4096);
    Result<MemHandle> dst = b.env().alloc(MemKind::host, 0, 4096);
    ASSERT_TRUE(src.ok() && dst.ok());
    TransferSpec spec;
    spec.src = *src;
    spec.dst = *dst;
    const OpId t = a.env().transfer(spec);
    world.run_until_idle();
    EXPECT_TRUE(b.deliveries.empty());
    ASSERT_EQ(a.completions.count(t), 1u);
    EXPECT_EQ(a.completions[t].status.code(), StatusCode::unavailable);
    rt.set_partitions({});
    ASSERT_TRUE(a.env().send(world.endpoint_of(b), proto::Ack{2, StatusCode::ok, {}}).ok());
    world.run_until_idle();
    EXPECT_EQ(b.deliveries.size(), 1u);
  });
}

TEST(SimRuntimeFaults, SlowDiskAndRestart) {
  testing::in_child([] {
    SimWorld world(testing::small_cluster({.nodes = 2}), sim::SimRuntimeConfig{});
    sim::SimRuntime& rt = world.runtime();
    testing::Probe& p = world.add_service<testing::Probe>(0, testing::Probe::Script{});
    world.add_target(1, 0);
    world.start();
    world.run_until_idle();
    auto write_ns = [&] {
      Result<MemHandle> buf = p.env().alloc(MemKind::host, 0, 8 * k_mib);
      EXPECT_TRUE(buf.ok());
      StorageIoSpec io;
      io.op = StorageOp::write;
      io.target = 1;
      io.file_id = 1;
      io.buffer = *buf;
      const TimeNs began = world.now();
      const OpId op = p.env().storage_io(io);
      world.run_until_idle();
      p.env().free(*buf);
      return p.done_at_ns[op] - began;
    };
    const TimeNs normal = write_ns();
    rt.set_disk_slowdown(1, 4.0);
    const TimeNs slow = write_ns();
    EXPECT_GT(slow, 3 * normal);
    EXPECT_LT(slow, 5 * normal);
    // A Probe is built from a copyable script: it can restart, and starts again.
    const Endpoint ep = world.endpoint_of(p);
    rt.kill(ep);
    ASSERT_TRUE(rt.restart(ep).ok());
    world.run_until_idle();
    EXPECT_TRUE(rt.alive(ep));
    EXPECT_EQ(rt.restart(Endpoint{7, 7}).code(), StatusCode::not_found);
  });
}

}  // namespace
}  // namespace sluice::soak

#endif  // SLUICE_SOAK_HAS_SIM
