// What a hardware run does without being asked (issue 24): its nodes'
// connections are authenticated with a fresh secret (or the given one;
// --insecure says none), and its metadata is kept in RocksDB under the run's
// directory (the run says so; "memory" opts out).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/topology/cluster_builders.hpp"
#include "core/topology/machine_builders.hpp"
#include "scenarios/runner/hw_point_run.hpp"

namespace sluice::scenario {
namespace {

// 2 nodes: 0 mgmt + metadata + storage, 1 the client.
ScenarioSpec small_spec() {
  topo::GenericMachine m;
  m.gpus = 1;
  m.nics = 1;
  m.nvmes = 1;
  Result<topo::Topology> machine = topo::generic_machine(m);
  EXPECT_TRUE(machine.ok()) << machine.status().to_string();
  Result<topo::Topology> cluster = topo::star_cluster(*machine, 2, topo::StarOptions{});
  EXPECT_TRUE(cluster.ok()) << cluster.status().to_string();
  ScenarioSpec spec;
  spec.scenario = "hw_meta_store_test";
  spec.cluster = std::make_shared<const topo::Topology>(std::move(cluster).value());
  spec.fs.preset = "custom";
  spec.fs.meta_nodes = {0};
  spec.fs.storage = {{0, {0}}};
  spec.fs.meta.default_chunk_bytes = 64 * k_kib;
  spec.fs.meta.default_stripe_count = 1;
  FileSweepConfig sweep;
  sweep.files_per_rank = 3;
  sweep.file_bytes = 128 * k_kib;
  sweep.block_bytes = 64 * k_kib;
  spec.workloads = {WorkloadSpec{"sweep", sweep, ClientPlacement{{1}, 1}}};
  return spec;
}

class HwMetaStore : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = (std::filesystem::temp_directory_path() / "hw-meta-store-XXXXXX").string();
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    root_ = templ;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  HwRunOptions options(const std::string& store) const {
    HwRunOptions o;
    o.temp_root = root_;
    o.meta_store = store;
    o.keep = true;
    return o;
  }
  // The one run directory the point left (keep = true).
  std::string run_dir() const {
    for (const auto& e : std::filesystem::directory_iterator(root_)) return e.path().string();
    return "";
  }
  std::string root_;
};

TEST_F(HwMetaStore, RocksDbIsTheDefaultAndLivesUnderTheRunDirectory) {
  EXPECT_EQ(HwRunOptions{}.meta_store, "rocksdb");
  const RunResult r = HwPointRun::run(small_spec(), options("rocksdb"));
  ASSERT_TRUE(r.ok) << r.error;
#if SLUICE_HAVE_ROCKSDB
  EXPECT_EQ(r.counters.at("meta.store_durable"), 1.0);
  EXPECT_TRUE(std::filesystem::exists(run_dir() + "/meta/node0-shard0/CURRENT")) << run_dir();
  bool said = false;
  for (const std::string& l : r.log_tail) said = said || l.find("metadata in RocksDB") != std::string::npos;
  EXPECT_TRUE(said) << "the run's log names its metadata store";
#else
  EXPECT_EQ(r.counters.at("meta.store_durable"), 0.0);
#endif
}

TEST_F(HwMetaStore, MemoryOptsOut) {
  const RunResult r = HwPointRun::run(small_spec(), options("memory"));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.counters.at("meta.store_durable"), 0.0);
  EXPECT_FALSE(std::filesystem::exists(run_dir() + "/meta"));
}

// Each kind of service's loop-thread CPU time is a counter of the run
// (HwWorld::thread_cpu_ns): the servers worked, so theirs is above zero.
TEST_F(HwMetaStore, TheRunRecordsEachKindOfServicesThreadCpu) {
  const RunResult r = HwPointRun::run(small_spec(), options("memory"));
  ASSERT_TRUE(r.ok) << r.error;
  for (const char* kind : {"cpu.storage_thread_ns", "cpu.meta_thread_ns", "cpu.client_thread_ns"}) {
    ASSERT_TRUE(r.counters.contains(kind)) << kind;
    EXPECT_GT(r.counters.at(kind), 0.0) << kind;
    EXPECT_LT(r.counters.at(kind), 600e9) << kind << ": more than the run could have used";
  }
}

TEST_F(HwMetaStore, ConnectionsAreAuthenticatedUnlessTheRunSaysInsecure) {
  HwRunOptions o = options("memory");
  RunResult r = HwPointRun::run(small_spec(), o);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.counters.at("security.authenticated"), 1.0) << "a fresh secret without the user doing anything";
  o.shared_secret = "a-secret-the-user-keeps-in-a-file";
  r = HwPointRun::run(small_spec(), o);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.counters.at("security.authenticated"), 1.0);
  o.shared_secret.clear();
  o.insecure = true;
  r = HwPointRun::run(small_spec(), o);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.counters.at("security.authenticated"), 0.0);
  bool said = false;
  for (const std::string& l : r.log_tail) said = said || l.find("--insecure") != std::string::npos;
  EXPECT_TRUE(said) << "an insecure run says so";
}

}  // namespace
}  // namespace sluice::scenario
