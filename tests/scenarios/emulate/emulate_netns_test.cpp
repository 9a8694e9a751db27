// The deployment as CI runs it (label netns; needs root): a 3-node file sweep
// in network namespaces (`sluice run lua_scripts/file_sweep.lua --backend
// emulate`), an interrupted emulation, stale clean-up, and the same study on
// `mpirun -np 4 --oversubscribe` on localhost (`--backend cluster`). Each
// checks that nothing is left behind: no namespace of the run, no new link in
// this namespace, no process.
// Skipped, with the reason, where root or `ip netns` / mpirun is missing.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

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

// `sluice run lua_scripts/file_sweep.lua` with `args` (--set ..., --backend,
// --out) and what it wrote to OUT/results.json (its one run).
struct SweepRun {
  Result<CommandOutput> command = error(StatusCode::internal, "not run");
  nlohmann::json results;
  analysis::RunRecord record;
  const nlohmann::json& run() const { return results["runs"][0]; }
  double counter(const std::string& name) const { return run()["counters"].value(name, -1.0); }
};

SweepRun run_file_sweep(std::vector<std::string> launcher, const std::vector<std::string>& args,
                        const std::string& out) {
  std::vector<std::string> argv = std::move(launcher);
  for (const std::string& a : {std::string(SLUICE_BINARY), std::string("run"),
                               std::string(SLUICE_SOURCE_DIR) + "/lua_scripts/file_sweep.lua"}) {
    argv.push_back(a);
  }
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("--out");
  argv.push_back(out);
  SweepRun r;
  r.command = run_command(argv, k_run_timeout_ms);
  if (!r.command.ok() || r.command->exit_code != 0) return r;
  r.results = read_json(out + "/results.json");
  EXPECT_FALSE(r.results.is_discarded()) << out << "/results.json";
  EXPECT_TRUE(std::filesystem::exists(out + "/results.csv"));
  Result<analysis::ResultsFile> loaded = analysis::load_results(out + "/results.json");
  EXPECT_TRUE(loaded.ok()) << loaded.status().to_string();
  if (loaded.ok() && loaded->runs.size() == 1) r.record = loaded->runs.front();
  return r;
}

std::uint64_t record_bytes(const analysis::RunRecord& r, const std::string& phase) {
  for (const analysis::PhaseRecord& p : r.phases) {
    if (p.phase == phase) return p.bytes;
  }
  return 0;
}

// The emulation's prefix (sluice-emu-<pid>-<tag>) from the run's log line "emulate PREFIX: 3 nodes, ...".
std::string emulation_prefix(const std::string& output) {
  const std::size_t at = output.find("emulate " + std::string(k_netns_prefix));
  if (at == std::string::npos) return {};
  const std::size_t start = at + 8;
  return output.substr(start, output.find(':', start) - start);
}

bool empty_dir(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_empty(path, ec) && !ec;
}

TEST(EmulateNetns, ThreeNodeRunWritesReadsVerifiesAndLeavesNothingBehind) {
  SKIP_UNLESS_NETNS();
  TempDir dir;
  const std::set<std::string> links_before = links();
  const std::string storage = dir.path() + "/storage";
  std::filesystem::create_directories(storage);
  const SweepRun r = run_file_sweep({},
                                    {"--backend", "emulate", "--set", "nodes=3", "--set", "link_gbps=1", "--set",
                                     "files=4", "--set", "file_size=1MiB", "--set", "block=256KiB", "--set",
                                     "chunk=256KiB", "--point-timeout", "120", "--storage-root", storage},
                                    dir.path() + "/out");
  ASSERT_TRUE(r.command.ok()) << r.command.status().to_string();
  ASSERT_EQ(r.command->exit_code, 0) << r.command->output;
  ASSERT_EQ(r.results["runs"].size(), 1u) << r.command->output;
  const nlohmann::json& one = r.run();
  EXPECT_EQ(r.results["format"], "sluice-results");
  EXPECT_EQ(one["backend"], "emulate");
  EXPECT_EQ(one["scenario"], "file_sweep");
  EXPECT_TRUE(one["ok"].get<bool>());
  EXPECT_EQ(one["config"]["cluster_nodes"], 3);
  EXPECT_EQ(one["config"]["storage_targets"], 2);
  EXPECT_GT(one["wall_s"].get<double>(), 0.0);
  const std::uint64_t bytes = 4 * k_mib;
  EXPECT_EQ(r.record.backend, "emulate");
  EXPECT_EQ(record_bytes(r.record, "write"), bytes);
  EXPECT_EQ(record_bytes(r.record, "read"), bytes);
  // Every byte read was checked against the pattern written; the storage nodes served them.
  EXPECT_EQ(r.counter("file_sweep.read.verified_bytes"), static_cast<double>(bytes));
  EXPECT_EQ(r.counter("client.crc_mismatches"), 0.0);
  EXPECT_EQ(r.counter("storage.read_bytes"), static_cast<double>(bytes));
  // Shaped links of the asked rate; each node listened on its own namespace's address.
  EXPECT_EQ(r.counter("emulate.link_bits_per_s"), 1e9);
  const nlohmann::json& d = one["deployment"];
  EXPECT_EQ(d["launcher"], "netns");
  EXPECT_EQ(d["link"], "1gbit");
  const std::string hosts = d.value("hosts", std::string());
  std::set<std::string> distinct;
  for (std::size_t pos = 0; pos <= hosts.size();) {
    const std::size_t comma = std::min(hosts.find(',', pos), hosts.size());
    distinct.insert(hosts.substr(pos, comma - pos));
    pos = comma + 1;
  }
  EXPECT_EQ(distinct.size(), 3u) << hosts;
  // The point's parameters travel with the results (analysis aligns emulated and simulated runs by them).
  EXPECT_EQ(one["params"]["file_size"], "1MiB");
  EXPECT_EQ(one["params"]["chunk"], "256KiB");
  EXPECT_EQ(one["params"]["link_gbps"], "1");
  const std::string prefix = emulation_prefix(r.command->output);
  ASSERT_FALSE(prefix.empty()) << r.command->output;
  EXPECT_TRUE(namespaces_with(prefix).empty());
  EXPECT_EQ(links(), links_before);
  EXPECT_EQ(processes_with(prefix), "");
  EXPECT_TRUE(empty_dir(storage)) << "the work dir of a clean run is removed";
}

// Issue 26: slow links with many files in flight. Every request's data
// queues behind the others on the client's link for longer than the RPC
// timeout, so the client retries requests the servers are still executing;
// before the fix a retried read was executed twice and its second copy of
// the bytes landed in a buffer the client had reused (CRC32C mismatches and
// wrong bytes the CRC did not see). Write then read back, every byte checked.
struct SlowLink {
  const char* link_gbps;
  const char* files_in_flight;  // threads, and as many files
  const char* file_size;
  const char* block_size;
  const char* chunk_size;
};

void PrintTo(const SlowLink& l, std::ostream* os) {
  *os << l.link_gbps << " Gb/s, " << l.files_in_flight << " files in flight of " << l.file_size;
}

class EmulateNetnsSlowLinks : public ::testing::TestWithParam<SlowLink> {};

TEST_P(EmulateNetnsSlowLinks, ManyFilesInFlightWriteThenReadBackEveryByte) {
  SKIP_UNLESS_NETNS();
  const SlowLink& p = GetParam();
  TempDir dir;
  const std::string storage = dir.path() + "/storage";
  std::filesystem::create_directories(storage);
  const auto set = [](const std::string& name, const char* value) { return name + "=" + value; };
  const SweepRun r = run_file_sweep({}, {"--backend",       "emulate",
                                         "--set",           "nodes=4",
                                         "--set",           set("link_gbps", p.link_gbps),
                                         "--set",           set("files", p.files_in_flight),
                                         "--set",           set("threads", p.files_in_flight),
                                         "--set",           set("file_size", p.file_size),
                                         "--set",           set("block", p.block_size),
                                         "--set",           set("chunk", p.chunk_size),
                                         "--set",           "stripe_count=3",
                                         "--point-timeout", "150",
                                         "--storage-root",  storage},
                                    dir.path() + "/out");
  ASSERT_TRUE(r.command.ok()) << r.command.status().to_string();
  ASSERT_EQ(r.command->exit_code, 0) << r.command->output;
  ASSERT_EQ(r.results["runs"].size(), 1u) << r.command->output;
  EXPECT_TRUE(r.run()["ok"].get<bool>()) << r.command->output;
  const std::uint64_t written = record_bytes(r.record, "write");
  const std::uint64_t read = record_bytes(r.record, "read");
  EXPECT_GT(written, 0u);
  EXPECT_EQ(read, written);
  EXPECT_EQ(r.counter("file_sweep.read.verified_bytes"), static_cast<double>(read))
      << "bytes read but not checked against the pattern";
  EXPECT_EQ(r.counter("client.crc_mismatches"), 0.0);
  EXPECT_EQ(r.counter("storage.crc_mismatches"), 0.0);
  const std::string prefix = emulation_prefix(r.command->output);
  ASSERT_FALSE(prefix.empty()) << r.command->output;
  EXPECT_TRUE(namespaces_with(prefix).empty());
  EXPECT_TRUE(empty_dir(storage)) << "left behind in " << storage;
}

INSTANTIATE_TEST_SUITE_P(Links, EmulateNetnsSlowLinks,
                         ::testing::Values(SlowLink{"0.01", "8", "1MiB", "512KiB", "512KiB"},
                                           SlowLink{"0.05", "16", "1MiB", "1MiB", "1MiB"},
                                           SlowLink{"0.15", "6", "8MiB", "4MiB", "1MiB"}),
                         [](const ::testing::TestParamInfo<SlowLink>& point) {
                           // 0.01 -> 10mbit, as the links were named before they were Gb/s
                           return std::to_string(std::lround(std::stod(point.param.link_gbps) * 1000)) + "mbit";
                         });

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
  const std::string storage = dir.path() + "/storage";
  std::filesystem::create_directories(storage);
  std::vector<std::string> mpirun = {"mpirun", "-np", "4", "--oversubscribe", "--timeout", "150"};
  if (::geteuid() == 0) mpirun.push_back("--allow-run-as-root");
  const SweepRun r =
      run_file_sweep(mpirun,
                     {"--backend", "cluster", "--set", "nodes=4", "--set", "files=3", "--set", "file_size=1MiB",
                      "--meta-store", "memory", "--point-timeout", "120", "--storage-root", storage},
                     dir.path() + "/out");
  ASSERT_TRUE(r.command.ok()) << r.command.status().to_string();
  ASSERT_EQ(r.command->exit_code, 0) << r.command->output;
  // Rank 0 wrote the standard layout: real processes on (here, one) host, one per node.
  ASSERT_EQ(r.results["runs"].size(), 1u) << r.command->output;
  const nlohmann::json& one = r.run();
  EXPECT_TRUE(one["ok"].get<bool>());
  EXPECT_EQ(one["backend"], "cluster");
  EXPECT_EQ(one["scenario"], "file_sweep");
  EXPECT_EQ(one["config"]["cluster_nodes"], 4);
  EXPECT_EQ(one["params"]["files"], "3");
  const std::string hosts = one["deployment"].value("hosts", std::string());
  EXPECT_EQ(std::count(hosts.begin(), hosts.end(), ','), 3) << "one address per rank: " << hosts;
  EXPECT_EQ(record_bytes(r.record, "read"), 3 * k_mib);
  EXPECT_EQ(r.counter("storage.read_bytes"), static_cast<double>(3 * k_mib));
  EXPECT_EQ(r.counter("file_sweep.read.verified_bytes"), static_cast<double>(3 * k_mib));
  EXPECT_EQ(processes_with(dir.path()), "");
  EXPECT_TRUE(empty_dir(storage)) << "every rank removes its chunk files";
}

}  // namespace
}  // namespace sluice::emulate
