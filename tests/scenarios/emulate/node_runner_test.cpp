// run_node without namespaces or MPI: each node of a cluster on its own
// thread with its own HwWorld, as separate processes would have, meeting
// through the socket bootstrap (the launcher's coordinator on another
// thread), every byte over loopback TCP and verified.
#include "scenarios/deploy/node_runner.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <sys/stat.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <mutex>
#include <map>
#include <fstream>
#include <thread>

#include "core/workloads/file_sweep.hpp"
#include "scenarios/deploy/bootstrap_coordinator.hpp"
#include "scenarios/deploy/socket_bootstrap.hpp"

namespace sluice::emulate {
namespace {

constexpr auto k_bootstrap_wait = std::chrono::seconds(120);

class TempDir {
 public:
  TempDir() {
    char templ[] = "/tmp/sluice-node-runner-test-XXXXXX";
    path_ = ::mkdtemp(templ);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct ClusterRun {
  Result<std::vector<std::string>> gathered = error(StatusCode::internal, "not run");
  std::vector<Result<nlohmann::json>> node_results;
};

// Runs every node of `config` on a thread; `ranks` of them take part (the
// others never start, to test a missing node).
ClusterRun run_cluster(const ClusterConfig& config, std::size_t ranks,
                       const std::optional<NodeRunOptions::FsSettings>& fs = std::nullopt,
                       const std::function<void(NodeRunOptions&)>& adjust = {}) {
  const std::size_t n = config.nodes.size();
  std::vector<LineChannel> launcher_ends;
  std::vector<int> node_ends;
  for (std::size_t i = 0; i < n; ++i) {
    int pair[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
    launcher_ends.emplace_back(pair[0]);
    node_ends.push_back(pair[1]);
  }
  ClusterRun run;
  run.node_results.resize(n, error(StatusCode::internal, "not run"));
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < ranks; ++i) {
    threads.emplace_back([&, i] {
      SocketBootstrap bootstrap(node_ends[i], static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(n),
                                k_bootstrap_wait);
      NodeRunOptions options;
      options.config = config;
      options.fs = fs;
      if (adjust) adjust(options);
      run.node_results[i] = run_node(options, bootstrap);
    });
  }
  for (std::size_t i = ranks; i < n; ++i) ::close(node_ends[i]);  // a node whose process died at once
  BootstrapCoordinator coordinator(std::move(launcher_ends));
  run.gathered = coordinator.serve(std::chrono::steady_clock::now() + k_bootstrap_wait, -1);
  for (std::thread& t : threads) t.join();
  return run;
}

ClusterConfig small_cluster(const std::string& root) {
  ClusterConfig c = *default_cluster(3);
  c.run_id = "unit";
  c.storage_root = root;
  c.max_wait_s = 60;
  c.workload.sweep.files_per_rank = 3;
  c.workload.sweep.file_bytes = 1 * k_mib + 4097;  // an unaligned tail too
  c.workload.sweep.block_bytes = 256 * k_kib;
  c.workload.chunk_bytes = 256 * k_kib;
  c.node_memory_limit_bytes = 256 * k_mib;
  c.shared_secret = "node-runner-test-secret-0123456789";  // as a launcher hands it out
  return c;
}

TEST(NodeRunner, ThreeNodeProcessesWriteAndReadVerifiedFilesStripedOverTheStorageNodes) {
  TempDir dir;
  const ClusterConfig config = small_cluster(dir.path());
  ClusterRun run = run_cluster(config, 3);
  ASSERT_TRUE(run.gathered.ok()) << run.gathered.status().to_string();
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(run.node_results[i].ok()) << i << ": " << run.node_results[i].status().to_string();
    EXPECT_TRUE(run.node_results[i]->value("ok", false)) << run.node_results[i]->dump();
  }
  Result<nlohmann::json> all = combine_node_results(config.run_id, *run.gathered);
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->value("ok", false));
  const std::uint64_t bytes = config.workload.sweep.files_per_rank * config.workload.sweep.file_bytes;
  EXPECT_EQ(phase_total(*all, "write").bytes, bytes);
  EXPECT_EQ(phase_total(*all, "read").bytes, bytes);
  EXPECT_GT(phase_total(*all, "read").bytes_per_s, 0.0);
  // Both storage nodes hold part of every file (stripe over all targets) and
  // served the reads; the client saw no bad CRC.
  const auto& nodes = (*all)["nodes"];
  ASSERT_EQ(nodes.size(), 3u);
  double served = 0;
  for (std::size_t i = 1; i < 3; ++i) {
    EXPECT_GT(nodes[i]["counters"]["storage.write_bytes"].get<double>(), 0.0) << i;
    EXPECT_GT(nodes[i]["counters"]["storage.read_bytes"].get<double>(), 0.0) << i;
    served += nodes[i]["counters"]["storage.read_bytes"].get<double>();
  }
  EXPECT_EQ(served, static_cast<double>(bytes));
  EXPECT_EQ(nodes[0]["counters"]["client.crc_mismatches"].get<double>(), 0.0);
  EXPECT_EQ(nodes[0]["counters"]["storage.read_bytes"].get<double>(), 0.0);  // no storage on the client node
  // Each node listened on its own port and told the others.
  EXPECT_NE(nodes[1]["addresses"][0], nodes[2]["addresses"][0]);
  // Every connection authenticated; metadata in RocksDB where it is built.
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(nodes[i]["authenticated"], true) << i;
    EXPECT_EQ(nodes[i]["meta_store"], SLUICE_HAVE_ROCKSDB ? "rocksdb" : "memory") << i;
  }
}

double counter_sum(const nlohmann::json& all, const std::string& name) {
  double sum = 0;
  for (const auto& node : all["nodes"]) sum += node["counters"].value(name, 0.0);
  return sum;
}

// The cluster path hands the study's file-system settings to every service
// (NodeRunOptions::fs): here a 64 KiB chunk (the config says 256 KiB), an
// egress limit on the storage servers, and each client rank's config.
TEST(NodeRunner, TheStudysFileSystemSettingsReachEveryService) {
  TempDir dir;
  const ClusterConfig config = small_cluster(dir.path());
  ClusterRun plain = run_cluster(config, 3);
  ASSERT_TRUE(plain.gathered.ok()) << plain.gathered.status().to_string();
  Result<nlohmann::json> plain_all = combine_node_results(config.run_id, *plain.gathered);
  ASSERT_TRUE(plain_all.ok() && plain_all->value("ok", false)) << plain_all->dump();

  NodeRunOptions::FsSettings fs;
  fs.meta.ns.shard_count = 1;
  fs.meta.default_chunk_bytes = 64 * k_kib;
  fs.meta.default_stripe_count = 2;
  fs.storage.egress_limit_bytes_per_s = 200e6;
  fs.storage.egress_burst_bytes = 64 * k_kib;
  std::atomic<int> client_configs{0};
  fs.client = [&](std::uint32_t /*workload*/, std::uint32_t rank) {
    ++client_configs;
    ClientHostConfig c;
    c.client.ns = fs.meta.ns;
    c.rank = rank + 100;  // the node's own rank wins
    return c;
  };
  TempDir dir2;
  const ClusterConfig config2 = small_cluster(dir2.path());
  ClusterRun run = run_cluster(config2, 3, fs);
  ASSERT_TRUE(run.gathered.ok()) << run.gathered.status().to_string();
  Result<nlohmann::json> all = combine_node_results(config2.run_id, *run.gathered);
  ASSERT_TRUE(all.ok() && all->value("ok", false)) << all->dump();
  const std::uint64_t bytes = config.workload.sweep.files_per_rank * config.workload.sweep.file_bytes;
  EXPECT_EQ(phase_total(*all, "read").bytes, bytes);
  EXPECT_EQ(client_configs.load(), 1);  // one client rank in the cluster
  // A quarter of the chunk: about four times the chunk requests.
  const double requests = counter_sum(*all, "storage.requests");
  const double plain_requests = counter_sum(*plain_all, "storage.requests");
  EXPECT_GT(requests, 3.0 * plain_requests) << requests << " vs " << plain_requests;
  EXPECT_GT(counter_sum(*all, "storage.egress_throttled_ns"), 0.0);
  EXPECT_EQ(counter_sum(*plain_all, "storage.egress_throttled_ns"), 0.0);
}

TEST(NodeRunner, ANodeWithoutASecretRefusesToRunUnlessInsecureIsSaid) {
  TempDir dir;
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  SocketBootstrap bootstrap(pair[1], 0, 3, std::chrono::seconds(1));
  NodeRunOptions options;
  options.config = small_cluster(dir.path());
  options.config.shared_secret.clear();
  Result<nlohmann::json> r = run_node(options, bootstrap);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("authenticated by default"), std::string::npos) << r.status().to_string();
  // A secret file others may read is refused, naming its mode.
  const std::string file = dir.path() + "/secret";
  std::ofstream(file) << "a-secret-of-enough-bytes-for-a-cluster\n";
  ::chmod(file.c_str(), 0644);
  options.config.shared_secret_file = file;
  r = run_node(options, bootstrap);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("mode 0644"), std::string::npos) << r.status().to_string();
  ::close(pair[0]);
}

TEST(NodeRunner, ANodeThatNeverStartsFailsTheOthersInsteadOfHangingThem) {
  TempDir dir;
  ClusterRun run = run_cluster(small_cluster(dir.path()), 2);
  ASSERT_FALSE(run.gathered.ok());
  EXPECT_NE(run.gathered.status().message().find("node 2"), std::string::npos) << run.gathered.status().to_string();
  for (std::size_t i = 0; i < 2; ++i) {
    ASSERT_FALSE(run.node_results[i].ok());
    EXPECT_NE(run.node_results[i].status().message().find("endpoint exchange"), std::string::npos)
        << run.node_results[i].status().to_string();
  }
}

TEST(NodeRunner, RefusesAProcessCountThatDoesNotMatchTheCluster) {
  TempDir dir;
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  SocketBootstrap bootstrap(pair[1], 0, 2, std::chrono::seconds(1));
  NodeRunOptions options;
  options.config = small_cluster(dir.path());
  Result<nlohmann::json> r = run_node(options, bootstrap);
  ::close(pair[0]);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("one process per node"), std::string::npos);
}

// Two workloads of one point (ClusterConfig::later_workloads), each a file
// sweep: node 0's rank writes (first), node 2's rank reads (second).
struct TwoSweeps {
  FileSweepConfig first;
  FileSweepConfig second;
  std::mutex mu;
  std::map<std::pair<std::uint32_t, std::uint32_t>, FileSweep*> made;  // (workload, rank) on node 0 or 2

  void give(NodeRunOptions& o) {
    o.make_workload = [this](std::uint32_t w, std::uint32_t rank) -> std::unique_ptr<Workload> {
      auto sweep = std::make_unique<FileSweep>(w == 0 ? first : second);
      std::lock_guard lock(mu);
      made[{w, rank}] = sweep.get();
      return sweep;
    };
    o.rank_results = [this](std::uint32_t w, std::uint32_t rank) {
      std::lock_guard lock(mu);
      return made.at({w, rank})->results();
    };
  }
};

ClusterConfig two_workload_cluster(const std::string& root) {
  ClusterConfig config = small_cluster(root);
  config.nodes[2].roles.push_back(Role::client);
  config.workload.client_nodes = {0};
  config.later_workloads = {ClusterLaterWorkload{{2}, 1}};
  return config;
}

// The later workload starts on its own client node once every rank of the
// first has finished: node 2 reads back and verifies every byte node 0's
// rank wrote (started early, it would find no file). Its phases say which
// workload they are.
TEST(NodeRunner, ALaterWorkloadStartsOnItsOwnNodeOnceTheFirstHasFinishedEverywhere) {
  TempDir dir;
  const ClusterConfig config = two_workload_cluster(dir.path());
  ASSERT_TRUE(validate(config).ok()) << validate(config).to_string();
  TwoSweeps sweeps;
  sweeps.first = config.workload.sweep;
  sweeps.first.phases = {SweepPhase::mkdir, SweepPhase::write};
  sweeps.first.run_tag = "first";
  sweeps.second = config.workload.sweep;
  sweeps.second.phases = {SweepPhase::read};
  sweeps.second.run_tag = "second";
  ClusterRun run = run_cluster(config, 3, std::nullopt, [&](NodeRunOptions& o) { sweeps.give(o); });
  ASSERT_TRUE(run.gathered.ok()) << run.gathered.status().to_string();
  Result<nlohmann::json> all = combine_node_results(config.run_id, *run.gathered);
  ASSERT_TRUE(all.ok() && all->value("ok", false)) << all->dump();
  const std::uint64_t bytes = config.workload.sweep.files_per_rank * config.workload.sweep.file_bytes;
  EXPECT_EQ(phase_total(*all, "write").bytes, bytes);
  const PhaseTotal read = phase_total(*all, "read");
  EXPECT_EQ(read.bytes, bytes);
  EXPECT_EQ(read.verified_bytes, bytes);
  for (const auto& p : (*all)["nodes"][0]["phases"]) EXPECT_EQ(p["workload"], 0) << p.dump();
  ASSERT_FALSE((*all)["nodes"][2]["phases"].empty());
  for (const auto& p : (*all)["nodes"][2]["phases"]) {
    EXPECT_EQ(p["workload"], 1) << p.dump();
    EXPECT_EQ(p["phase"], "read");
  }
  // Both ranks were rank 0 of a workload of one rank.
  EXPECT_EQ(sweeps.made.size(), 2u);
}

// A first workload that fails on one node: no node starts the later one, and
// the point says why (the first failure, not a consequence of it).
TEST(NodeRunner, NoLaterWorkloadStartsOnceAnEarlierOneFailedOnANode) {
  TempDir dir;
  const ClusterConfig config = two_workload_cluster(dir.path());
  TwoSweeps sweeps;
  sweeps.first = config.workload.sweep;
  sweeps.first.phases = {SweepPhase::read};  // nothing was written: it fails
  sweeps.first.run_tag = "first";
  sweeps.second = sweeps.first;
  sweeps.second.run_tag = "second";
  ClusterRun run = run_cluster(config, 3, std::nullopt, [&](NodeRunOptions& o) { sweeps.give(o); });
  ASSERT_TRUE(run.gathered.ok()) << run.gathered.status().to_string();
  Result<nlohmann::json> all = combine_node_results(config.run_id, *run.gathered);
  ASSERT_TRUE(all.ok());
  EXPECT_FALSE(all->value("ok", true));
  const auto& nodes = (*all)["nodes"];
  EXPECT_FALSE(nodes[0].value("ok", true));
  EXPECT_NE(nodes[0].value("status", std::string()).find("file_sweep open /sweep/r0"), std::string::npos)
      << nodes[0].dump();
  EXPECT_TRUE(nodes[2].value("ok", false)) << nodes[2].dump();
  EXPECT_TRUE(nodes[2]["phases"].empty()) << nodes[2].dump();
  EXPECT_EQ(sweeps.made.size(), 2u);  // made with the world; only the first was started
}

// A node that hosts clients of a later workload needs the launcher's workloads.
TEST(NodeRunner, LaterWorkloadsWithoutTheLaunchersWorkloadsAreRefusedByName) {
  TempDir dir;
  const ClusterConfig config = two_workload_cluster(dir.path());
  ClusterRun run = run_cluster(config, 3);
  EXPECT_FALSE(run.node_results[0].ok());
  EXPECT_NE(run.node_results[0].status().message().find("later_workloads"), std::string::npos)
      << run.node_results[0].status().to_string();
}

TEST(CombineNodeResults, OkOnlyWhenEveryNodeIsAndNamesABadDocument) {
  Result<nlohmann::json> ok = combine_node_results("r", {R"({"ok": true})", R"({"ok": true})"});
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE((*ok)["ok"].get<bool>());
  Result<nlohmann::json> one_bad = combine_node_results("r", {R"({"ok": true})", R"({"ok": false})"});
  ASSERT_TRUE(one_bad.ok());
  EXPECT_FALSE((*one_bad)["ok"].get<bool>());
  Result<nlohmann::json> broken = combine_node_results("r", {R"({"ok": true})", "nope"});
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.status().message().find("rank 1"), std::string::npos);
  EXPECT_FALSE((*combine_node_results("r", {}))["ok"].get<bool>());
}

TEST(PhaseTotal, SumsBytesOverRanksAndTakesTheSlowestRank) {
  const nlohmann::json run = {{"nodes",
                               {{{"phases", {{{"phase", "read"}, {"bytes", 100}, {"elapsed_ns", 1'000'000'000}}}}},
                                {{"phases",
                                  {{{"phase", "read"}, {"bytes", 300}, {"elapsed_ns", 2'000'000'000}},
                                   {{"phase", "write"}, {"bytes", 7}, {"elapsed_ns", 1}}}}},
                                {{"counters", nlohmann::json::object()}}}}};
  const PhaseTotal t = phase_total(run, "read");
  EXPECT_EQ(t.bytes, 400u);
  EXPECT_EQ(t.elapsed_ns, 2'000'000'000);
  EXPECT_DOUBLE_EQ(t.bytes_per_s, 200.0);
  EXPECT_EQ(phase_total(run, "stat").bytes, 0u);
  EXPECT_EQ(phase_total(nlohmann::json::object(), "read").bytes, 0u);
}

// Issue 26: the summary said "every byte verified" for a run that had
// failed with a CRC32C mismatch. It says "verified" only for what was.
TEST(PhaseSummary, SaysVerifiedOnlyForBytesThatWere) {
  nlohmann::json run = {{"ok", true},
                        {"nodes",
                         {{{"phases",
                            {{{"phase", "read"}, {"bytes", 400}, {"elapsed_ns", 1'000'000'000}},
                             {{"phase", "write"}, {"bytes", 400}, {"elapsed_ns", 1'000'000'000}}}},
                           {"counters", {{"file_sweep.read.verified_bytes", 400.0}}}}}}};
  EXPECT_EQ(phase_total(run, "read").verified_bytes, 400u);
  EXPECT_NE(phase_summary_line(run, "read").find("every byte verified"), std::string::npos);
  EXPECT_NE(phase_summary_line(run, "write").find("CRC32C checked by its server"), std::string::npos);
  EXPECT_EQ(phase_summary_line(run, "stat"), "");
  // Fewer bytes checked than read: said so, not "every byte".
  run["nodes"][0]["counters"]["file_sweep.read.verified_bytes"] = 100.0;
  EXPECT_NE(phase_summary_line(run, "read").find("100 of them verified"), std::string::npos)
      << phase_summary_line(run, "read");
  // A failed run verifies nothing, in either phase.
  run["ok"] = false;
  run["nodes"][0]["counters"]["file_sweep.read.verified_bytes"] = 400.0;
  for (const char* phase : {"read", "write"}) {
    const std::string line = phase_summary_line(run, phase);
    EXPECT_EQ(line.find("every byte verified"), std::string::npos) << line;
    EXPECT_NE(line.find("FAILED"), std::string::npos) << line;
  }
}

}  // namespace
}  // namespace sluice::emulate
