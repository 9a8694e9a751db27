// The deployment as CI runs it (label netns; needs root): a 3-node `emulate`
// in network namespaces, an interrupted one, stale clean-up, and `mpirun -np
// 4 --oversubscribe` on localhost. Each checks that nothing is left behind:
// no namespace of the run, no new link in this namespace, no process.
// Skipped, with the reason, where root or `ip netns` / mpirun is missing.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "analysis/run_record.hpp"
#include "base/run_marker.hpp"
#include "scenarios/netns/cluster_emulator.hpp"
#include "scenarios/deploy/command_runner.hpp"
#include "scenarios/netns/dead_runs.hpp"
#include "scenarios/deploy/mpi_bootstrap.hpp"
#include "scenarios/netns/netns_cluster.hpp"
#include "scenarios/deploy/node_runner.hpp"

namespace sluice::emulate {
namespace {

constexpr std::uint32_t k_run_timeout_ms = 180'000;

class TempDir {
 public:
  TempDir() {
    char templ[] = "/tmp/sluice-emulate-test-XXXXXX";
    path_ = ::mkdtemp(templ);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Link names of this namespace (`ip -o link`: "3: name: <...>").
std::set<std::string> links() {
  std::set<std::string> names;
  Result<CommandOutput> r = run_command({"ip", "-o", "link"}, 10'000);
  if (!r.ok()) return names;
  std::size_t pos = 0;
  while (pos < r->output.size()) {
    std::size_t eol = r->output.find('\n', pos);
    if (eol == std::string::npos) eol = r->output.size();
    const std::string line = r->output.substr(pos, eol - pos);
    pos = eol + 1;
    const std::size_t a = line.find(": ");
    const std::size_t b = a == std::string::npos ? a : line.find(':', a + 2);
    if (b != std::string::npos) names.insert(line.substr(a + 2, b - a - 2));
  }
  return names;
}

std::vector<std::string> namespaces_with(const std::string& prefix) {
  std::vector<std::string> out;
  Result<std::vector<std::string>> ours = our_namespaces();
  if (!ours.ok()) return {"<ip netns list failed>"};
  for (const std::string& n : *ours) {
    if (n.rfind(prefix, 0) == 0) out.push_back(n);
  }
  return out;
}

// Processes whose command line mentions `text` (pgrep exits 1 when none).
std::string processes_with(const std::string& text) {
  Result<CommandOutput> r = run_command({"pgrep", "-af", text}, 10'000);
  if (!r.ok()) return "<pgrep failed>";
  std::string out;
  std::size_t pos = 0;
  while (pos < r->output.size()) {  // pgrep lists itself? it does not; the runner's fork is pgrep itself
    std::size_t eol = r->output.find('\n', pos);
    if (eol == std::string::npos) eol = r->output.size();
    const std::string line = r->output.substr(pos, eol - pos);
    pos = eol + 1;
    if (!line.empty() && line.find("pgrep") == std::string::npos) out += line + "\n";
  }
  return out;
}

#define SKIP_UNLESS_NETNS()                                      \
  do {                                                           \
    if (std::string why = netns_permitted(); !why.empty()) {     \
      GTEST_SKIP() << "network namespaces unavailable: " << why; \
    }                                                            \
  } while (false)

nlohmann::json read_json(const std::string& path) {
  return nlohmann::json::parse(read_text_file(path), nullptr, false);
}

// An --out folder holds the standard results (results.json, .csv) and the
// gathered per-node document (nodes.json); analysis reads results.json as it
// reads a simulated run's.
struct RunOut {
  nlohmann::json nodes;
  nlohmann::json results;
  analysis::RunRecord record;
};

RunOut read_out(const std::string& dir) {
  RunOut o;
  o.nodes = read_json(dir + "/nodes.json");
  o.results = read_json(dir + "/results.json");
  EXPECT_FALSE(o.nodes.is_discarded()) << dir << "/nodes.json";
  EXPECT_FALSE(o.results.is_discarded()) << dir << "/results.json";
  EXPECT_TRUE(std::filesystem::exists(dir + "/results.csv"));
  Result<analysis::ResultsFile> loaded = analysis::load_results(dir + "/results.json");
  EXPECT_TRUE(loaded.ok()) << loaded.status().to_string();
  if (loaded.ok() && loaded->runs.size() == 1) o.record = loaded->runs.front();
  return o;
}

std::uint64_t record_bytes(const analysis::RunRecord& r, const std::string& phase) {
  for (const analysis::PhaseRecord& p : r.phases) {
    if (p.phase == phase) return p.bytes;
  }
  return 0;
}

TEST(EmulateNetns, ThreeNodeRunWritesReadsVerifiesAndLeavesNothingBehind) {
  SKIP_UNLESS_NETNS();
  TempDir dir;
  const std::set<std::string> links_before = links();
  const std::string out = dir.path() + "/out";
  Result<CommandOutput> r = run_command(
      {SLUICE_NODE_BINARY, "emulate", "--nodes", "3", "--link", "1gbit", "--files-per-rank", "4", "--file-size", "1MiB",
       "--block-size", "256KiB", "--chunk-size", "256KiB", "--max-wait", "60", "--out", out},
      k_run_timeout_ms);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->exit_code, 0) << r->output;
  const RunOut o = read_out(out);
  const nlohmann::json& run = o.nodes;
  ASSERT_FALSE(run.is_discarded()) << r->output;
  EXPECT_TRUE(run["ok"].get<bool>());
  const std::uint64_t bytes = 4 * k_mib;
  EXPECT_EQ(phase_total(run, "write").bytes, bytes);
  EXPECT_EQ(phase_total(run, "read").bytes, bytes);
  ASSERT_EQ(run["nodes"].size(), 3u);
  EXPECT_EQ(run["nodes"][0]["counters"]["client.crc_mismatches"].get<double>(), 0.0);
  for (std::size_t i = 1; i < 3; ++i) {
    EXPECT_GT(run["nodes"][i]["counters"]["storage.read_bytes"].get<double>(), 0.0) << "node " << i;
    // Each node listened on its own namespace's address.
    EXPECT_EQ(run["nodes"][i]["addresses"][0].get<std::string>().rfind(
                  run["emulation"]["addresses"][i].get<std::string>() + ":", 0),
              0u);
  }
  // The standard layout: one run, backend emulate, the same phases as the nodes said.
  EXPECT_EQ(o.results["format"], "sluice-results");
  ASSERT_EQ(o.results["runs"].size(), 1u);
  const nlohmann::json& one = o.results["runs"][0];
  EXPECT_EQ(one["backend"], "emulate");
  EXPECT_EQ(one["scenario"], "emulate_file_sweep");
  EXPECT_TRUE(one["ok"].get<bool>());
  EXPECT_EQ(one["config"]["cluster_nodes"], 3);
  EXPECT_EQ(one["config"]["storage_targets"], 2);
  EXPECT_EQ(one["params"]["link_bits_per_s"], "1000000000");
  EXPECT_GT(one["wall_s"].get<double>(), 0.0);
  EXPECT_EQ(o.record.backend, "emulate");
  EXPECT_EQ(record_bytes(o.record, "write"), bytes);
  EXPECT_EQ(record_bytes(o.record, "read"), bytes);
  EXPECT_NE(r->output.find("every byte verified"), std::string::npos);
  // The point's parameters travel with the results (analysis aligns emulated and simulated runs by them).
  EXPECT_EQ(one["params"]["file_bytes"], std::to_string(1 * k_mib));
  EXPECT_EQ(one["params"]["chunk_bytes"], std::to_string(256 * k_kib));
  EXPECT_EQ(one["params"]["stripe_count"], "2");
  const std::string prefix = run["emulation"]["prefix"].get<std::string>();
  EXPECT_TRUE(run["left_behind"].empty());
  EXPECT_TRUE(namespaces_with(prefix).empty());
  EXPECT_EQ(links(), links_before);
  EXPECT_EQ(processes_with(prefix), "");
  EXPECT_FALSE(std::filesystem::exists("/tmp/" + prefix)) << "the work dir of a clean run is removed";
}

// Issue 26: slow links with many files in flight. Every request's data
// queues behind the others on the client's link for longer than the RPC
// timeout, so the client retries requests the servers are still executing;
// before the fix a retried read was executed twice and its second copy of
// the bytes landed in a buffer the client had reused (CRC32C mismatches and
// wrong bytes the CRC did not see). Write then read back, every byte checked.
struct SlowLink {
  const char* link;
  const char* files_in_flight;  // --threads, and as many files per rank
  const char* file_size;
  const char* block_size;
  const char* chunk_size;
};

void PrintTo(const SlowLink& l, std::ostream* os) {
  *os << l.link << ", " << l.files_in_flight << " files in flight of " << l.file_size;
}

class EmulateNetnsSlowLinks : public ::testing::TestWithParam<SlowLink> {};

TEST_P(EmulateNetnsSlowLinks, ManyFilesInFlightWriteThenReadBackEveryByte) {
  SKIP_UNLESS_NETNS();
  const SlowLink& p = GetParam();
  TempDir dir;
  const std::string out = dir.path() + "/out";
  Result<CommandOutput> r = run_command({SLUICE_NODE_BINARY,
                                         "emulate",
                                         "--nodes",
                                         "4",
                                         "--link",
                                         p.link,
                                         "--files-per-rank",
                                         p.files_in_flight,
                                         "--threads",
                                         p.files_in_flight,
                                         "--file-size",
                                         p.file_size,
                                         "--block-size",
                                         p.block_size,
                                         "--chunk-size",
                                         p.chunk_size,
                                         "--stripe-count",
                                         "3",
                                         "--max-wait",
                                         "120",
                                         "--out",
                                         out},
                                        k_run_timeout_ms);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->exit_code, 0) << r->output;
  const RunOut o = read_out(out);
  const nlohmann::json& run = o.nodes;
  ASSERT_FALSE(run.is_discarded()) << r->output;
  EXPECT_TRUE(run["ok"].get<bool>()) << r->output;
  const PhaseTotal written = phase_total(run, "write");
  const PhaseTotal read = phase_total(run, "read");
  EXPECT_GT(written.bytes, 0u);
  EXPECT_EQ(read.bytes, written.bytes);
  EXPECT_EQ(read.verified_bytes, read.bytes) << "bytes read but not checked against the pattern";
  EXPECT_EQ(run["nodes"][0]["counters"].value("client.crc_mismatches", 0.0), 0.0);
  EXPECT_NE(r->output.find("every byte verified"), std::string::npos) << r->output;
  EXPECT_TRUE(run["left_behind"].empty());
}

INSTANTIATE_TEST_SUITE_P(Links, EmulateNetnsSlowLinks,
                         ::testing::Values(SlowLink{"10mbit", "8", "1MiB", "512KiB", "512KiB"},
                                           SlowLink{"50mbit", "16", "1MiB", "1MiB", "1MiB"},
                                           SlowLink{"150mbit", "6", "8MiB", "4MiB", "1MiB"}),
                         [](const ::testing::TestParamInfo<SlowLink>& point) { return std::string(point.param.link); });

TEST(EmulateNetns, InterruptedRunRemovesNamespacesAndProcesses) {
  SKIP_UNLESS_NETNS();
  int stop[2];
  ASSERT_EQ(::pipe(stop), 0);
  const std::set<std::string> links_before = links();
  TempDir dir;
  EmulateOptions o;
  o.nodes = 3;
  o.link = *parse_link_spec("100mbit");
  o.node_command = {SLUICE_NODE_BINARY, "node"};
  o.work_dir = dir.path() + "/work";
  o.cluster = *default_cluster(3);
  o.cluster.max_wait_s = 60;
  o.cluster.workload.sweep.files_per_rank = 64;  // far more than runs before the interruption
  std::string prefix;
  o.log = [&](std::string_view line) {
    if (line.rfind("emulate ", 0) == 0) prefix = std::string(line.substr(8, line.find(':') - 8));
    if (line.find("node processes started") != std::string_view::npos) {
      const char byte = 1;
      ASSERT_EQ(::write(stop[1], &byte, 1), 1);  // as the SIGINT handler does
    }
  };
  Result<nlohmann::json> run = run_emulation(o, stop[0]);
  ::close(stop[0]);
  ::close(stop[1]);
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.status().message().find("interrupted"), std::string::npos) << run.status().to_string();
  ASSERT_FALSE(prefix.empty());
  EXPECT_TRUE(namespaces_with(prefix).empty());
  EXPECT_EQ(links(), links_before);
  EXPECT_EQ(processes_with(prefix), "");
  EXPECT_FALSE(std::filesystem::exists(o.work_dir)) << "an interrupted run removes its work dir too";
}

// Issue 47 item 3: a run whose nodes never report (here they exit at once)
// fails with their logs' tails in the error and removes its work directory
// and namespaces: nothing is left for a sweep.
TEST(EmulateNetns, ABootstrapFailureRemovesItsWorkDirAndNamespaces) {
  SKIP_UNLESS_NETNS();
  EmulateOptions o;
  o.nodes = 2;
  o.link = *parse_link_spec("1gbit");
  o.node_command = {"/bin/false"};
  o.cluster = *default_cluster(2);
  o.cluster.max_wait_s = 10;
  std::string prefix;
  o.log = [&](std::string_view line) {
    if (line.rfind("emulate ", 0) == 0) prefix = std::string(line.substr(8, line.find(':') - 8));
  };
  Result<nlohmann::json> run = run_emulation(o, -1);
  ASSERT_FALSE(run.ok());
  ASSERT_FALSE(prefix.empty());
  EXPECT_TRUE(namespaces_with(prefix).empty());
  EXPECT_FALSE(std::filesystem::exists("/tmp/" + prefix)) << "the failed run's work dir is left: /tmp/" << prefix;
}

// Issue 47 item 3: the owner mark of a run's namespaces (pid and start time)
// tells a dead launcher whose pid now belongs to a live process.
TEST(EmulateNetns, TheSweepTellsADeadLauncherWhosePidWasReused) {
  SKIP_UNLESS_NETNS();
  const std::string prefix = std::string(k_netns_prefix) + std::to_string(::getpid()) + "-reused";
  const std::string netns = prefix + "-n0";
  const std::string owner = netns_owner_dir(prefix);
  std::filesystem::create_directories(owner);
  std::ofstream(owner + "/" + std::string(base::k_run_marker_file)) << ::getpid() << " 1\n";  // not this start
  ASSERT_TRUE(run_checked({"ip", "netns", "add", netns}, 10'000).ok());
  const std::vector<std::string> removed = sweep_dead_runs({}, nullptr);
  EXPECT_NE(std::find(removed.begin(), removed.end(), netns), removed.end());
  EXPECT_TRUE(namespaces_with(netns).empty());
  EXPECT_FALSE(std::filesystem::exists(owner));
  if (!namespaces_with(netns).empty()) run_checked({"ip", "netns", "delete", netns}, 10'000).ignore();
}

TEST(EmulateNetns, CleanupStaleRemovesRunsOfDeadLaunchersOnly) {
  SKIP_UNLESS_NETNS();
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ASSERT_GT(dead, 0);
  ASSERT_EQ(::waitpid(dead, nullptr, 0), dead);  // reaped: no process has this pid now
  const std::string stale = std::string(k_netns_prefix) + std::to_string(dead) + "-stale-n0";
  const std::string live = std::string(k_netns_prefix) + std::to_string(::getpid()) + "-live-n0";
  ASSERT_TRUE(run_checked({"ip", "netns", "add", stale}, 10'000).ok());
  ASSERT_TRUE(run_checked({"ip", "netns", "add", live}, 10'000).ok());
  const std::vector<std::string> removed = sweep_dead_runs({}, nullptr);
  EXPECT_NE(std::find(removed.begin(), removed.end(), stale), removed.end());
  EXPECT_EQ(std::find(removed.begin(), removed.end(), live), removed.end());
  EXPECT_TRUE(namespaces_with(stale).empty());
  EXPECT_EQ(namespaces_with(live).size(), 1u);
  EXPECT_TRUE(run_checked({"ip", "netns", "delete", live}, 10'000).ok());
}

TEST(EmulateMpi, FourRanksOnLocalhostRunTheSweepAndLeaveNoProcess) {
  if (!mpi_available()) GTEST_SKIP() << "this build has no MPI";
  Result<CommandOutput> which = run_command({"sh", "-c", "command -v mpirun"}, 10'000);
  if (!which.ok() || which->exit_code != 0) GTEST_SKIP() << "mpirun not installed (openmpi-bin)";
  TempDir dir;
  const std::string run_id = "ci" + std::to_string(::getpid());
  const std::string out = dir.path() + "/out";
  std::vector<std::string> argv = {"mpirun", "-np", "4", "--oversubscribe", "--timeout", "150"};
  if (::geteuid() == 0) argv.push_back("--allow-run-as-root");
  for (const char* a : {SLUICE_NODE_BINARY, "node", "--mpi", "--files-per-rank", "3", "--file-size", "1MiB",
                        "--max-wait", "60", "--run-id"}) {
    argv.emplace_back(a);
  }
  argv.push_back(run_id);
  argv.push_back("--storage-root");
  argv.push_back(dir.path() + "/storage");
  argv.push_back("--out");
  argv.push_back(out);
  Result<CommandOutput> r = run_command(argv, k_run_timeout_ms);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->exit_code, 0) << r->output;
  const RunOut o = read_out(out);
  const nlohmann::json& run = o.nodes;
  ASSERT_FALSE(run.is_discarded()) << r->output;
  EXPECT_TRUE(run["ok"].get<bool>());
  ASSERT_EQ(run["nodes"].size(), 4u);
  // Rank 0 wrote the standard layout: real processes on (here, one) host, backend hw.
  ASSERT_EQ(o.results["runs"].size(), 1u);
  EXPECT_EQ(o.results["runs"][0]["backend"], "hw");
  EXPECT_EQ(o.results["runs"][0]["scenario"], "mpi_file_sweep");
  EXPECT_EQ(o.results["runs"][0]["config"]["cluster_nodes"], 4);
  EXPECT_EQ(o.results["runs"][0]["params"]["files_per_rank"], "3");
  EXPECT_EQ(record_bytes(o.record, "read"), 3 * k_mib);
  for (std::size_t rank = 0; rank < 4; ++rank) EXPECT_EQ(run["nodes"][rank]["rank"].get<std::uint32_t>(), rank);
  EXPECT_EQ(phase_total(run, "read").bytes, 3 * k_mib);
  double served = 0;
  for (std::size_t i = 1; i < 4; ++i) served += run["nodes"][i]["counters"]["storage.read_bytes"].get<double>();
  EXPECT_EQ(served, static_cast<double>(3 * k_mib));
  EXPECT_EQ(processes_with(run_id), "");
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/storage")) << "every rank removes its chunk files";
}

}  // namespace
}  // namespace sluice::emulate
