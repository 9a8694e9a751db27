// A node hosted in child processes of its rank (scenarios/deploy/
// node_process.hpp): the relay makes the child's collectives on the ranks'
// bootstrap, kills it with SIGKILL at the fault plan's time, starts it again
// with the rails its peers know and replays what already happened, and
// stands in for a child that will not come back. Two ranks as threads over
// an in-memory hub; the node program is a stand-in (data/fake_node.py) that
// makes run_node's collectives. The real program runs in cluster.study.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "scenarios/deploy/node_process.hpp"
#include "scenarios/deploy/rank_bootstrap.hpp"
#include "tests/scenarios/cluster/hub_messenger.hpp"
#include "tests/support/scratch_dir.hpp"

namespace sluice::emulate {
namespace {

using json = nlohmann::json;

constexpr auto k_timeout = std::chrono::milliseconds(10'000);
constexpr auto k_workload = std::chrono::milliseconds(800);  // rank 0's clients, between servers-up and clients-done

// Node 0 hosts mgmt, metadata and the client; node 1 storage only, which the plan kills.
ClusterConfig two_nodes(std::uint32_t kill_at_ms, std::uint32_t restart_after_ms) {
  ClusterConfig c;
  c.run_id = "relay-test";
  c.insecure = true;
  NodeSpec n0;
  n0.id = 0;
  n0.roles = {Role::mgmt, Role::meta, Role::client};
  NodeSpec n1;
  n1.id = 1;
  n1.roles = {Role::storage};
  n1.targets = {1};
  c.nodes = {n0, n1};
  c.faults.push_back(ClusterFault{kill_at_ms, 1, Role::storage, restart_after_ms});
  return c;
}

// Rank 0 as run_node makes its collectives (node_collectives), with a
// workload of k_workload; its gathered documents.
std::vector<std::string> rank_zero(Hub& hub, const ClusterConfig& config) {
  HubMessenger m(hub, 0);
  RankBootstrap b(m, k_timeout);
  std::vector<std::string> gathered;
  EXPECT_TRUE(b.all_gather("127.0.0.1:5000").ok());
  EXPECT_TRUE(b.barrier("mgmt-up").ok());
  EXPECT_TRUE(b.barrier("servers-up").ok());
  std::this_thread::sleep_for(k_workload);
  for (std::size_t w = 0; w < config.later_workloads.size(); ++w) {
    Result<std::vector<std::string>> done = b.all_gather("");
    EXPECT_TRUE(done.ok()) << done.status().message();
  }
  EXPECT_TRUE(b.barrier("clients-done").ok());
  EXPECT_TRUE(b.barrier("stopping").ok());
  Result<std::vector<std::string>> all = b.gather_to_root(R"({"node": 0, "ok": true})");
  EXPECT_TRUE(all.ok()) << all.status().message();
  if (all.ok()) gathered = *all;
  return gathered;
}

struct Outcome {
  Result<json> relay = error(StatusCode::internal, "not run");
  json node1;  // node 1's document as rank 0 gathered it
  std::vector<std::string> log;
};

Outcome run_two_ranks(const ClusterConfig& config, std::optional<NodeRunOptions::FsSettings> fs = std::nullopt) {
  testing::ScratchDir work;
  Hub hub(2);
  Outcome out;
  std::vector<std::string> gathered;
  std::thread zero([&] { gathered = rank_zero(hub, config); });
  {
    HubMessenger m(hub, 1);
    RankBootstrap b(m, k_timeout);
    NodeProcessOptions o;
    o.config = config;
    o.node_command = {"/usr/bin/env", "python3",
                      std::string(SLUICE_SOURCE_DIR) + "/tests/scenarios/cluster/data/fake_node.py"};
    o.fs = std::move(fs);
    o.work_dir = work.path();
    o.log = [&out](std::string_view line) { out.log.emplace_back(line); };
    out.relay = run_node_in_child_process(o, b);
  }
  zero.join();
  if (gathered.size() == 2) out.node1 = json::parse(gathered[1], nullptr, false);
  return out;
}

bool logged(const Outcome& o, const std::string& text) {
  for (const std::string& line : o.log) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(NodeProcess, OnlyAStorageOnlyNodeThePlanKillsRunsInAChildAndNeverRankZero) {
  ClusterConfig c = two_nodes(100, 100);
  EXPECT_TRUE(runs_in_child_process(c, 1));
  EXPECT_FALSE(runs_in_child_process(c, 0));
  c.nodes[1].roles = {Role::storage, Role::client};  // a kill of the process would take the client too
  EXPECT_FALSE(runs_in_child_process(c, 1));
  c = two_nodes(100, 100);
  c.faults.clear();
  EXPECT_FALSE(runs_in_child_process(c, 1));
  // A metadata server alone on its node, which the plan kills.
  for (Role r : {Role::meta, Role::meta_mirror}) {
    c = two_nodes(100, 100);
    c.nodes[0].roles = {Role::mgmt, Role::storage, Role::client};
    c.nodes[1].roles = {r};
    c.faults[0].role = r;
    EXPECT_TRUE(runs_in_child_process(c, 1)) << to_string(r);
    c.faults[0].role = Role::storage;  // the plan kills another role (none of this node's)
    EXPECT_FALSE(runs_in_child_process(c, 1)) << to_string(r);
  }
  c = two_nodes(100, 100);
  c.nodes[1].roles = {Role::meta, Role::storage};  // the process hosts two servers
  EXPECT_FALSE(runs_in_child_process(c, 1));
  c.nodes[1].roles = {Role::mgmt};
  c.faults[0].role = Role::mgmt;
  EXPECT_FALSE(runs_in_child_process(c, 1));
}

// With a second workload too: its all_gather reaches the relay without a
// name (SocketBootstrap), and is still the step it expects.
TEST(NodeProcess, AKilledMetadataProcessStartsAgainWithTheStudysSettings) {
  ClusterConfig c = two_nodes(100, 150);
  c.nodes[0].roles = {Role::mgmt, Role::storage, Role::client};
  c.nodes[1].roles = {Role::meta};
  c.faults[0].role = Role::meta;
  c.later_workloads.push_back(ClusterLaterWorkload{{0}, 1});
  NodeRunOptions::FsSettings fs;
  fs.meta.ns.policy = MetaPolicy::striped_dir;
  fs.meta.default_stripe_count = 3;
  fs.storage.max_active_per_target = 5;
  const Outcome o = run_two_ranks(c, fs);
  ASSERT_TRUE(o.relay.ok()) << o.relay.status().message();
  EXPECT_TRUE((*o.relay)["ok"].get<bool>()) << o.relay->dump();
  ASSERT_TRUE(o.node1.is_object()) << "rank 0 gathered no document of node 1";
  EXPECT_EQ(o.node1["counters"]["faults.meta_process_kills"], 1);
  EXPECT_EQ(o.node1["counters"]["faults.meta_process_restarts"], 1);
  EXPECT_FALSE(o.node1["counters"].contains("faults.storage_process_kills"));
  // The process started again got the study's settings too, not the core's defaults.
  const json& got = o.node1["fs_settings"];
  ASSERT_TRUE(got.is_object()) << o.node1.dump();
  EXPECT_EQ(got["meta"]["ns"]["policy"], "striped_dir");
  EXPECT_EQ(got["meta"]["default_stripe_count"], 3);
  EXPECT_EQ(got["storage"]["max_active_per_target"], 5);
  EXPECT_TRUE(logged(o, "which hosts the meta server, with SIGKILL"));
}

TEST(NodeProcess, AKilledNodeProcessStartsAgainOnItsRailsAndReplaysWhatHappened) {
  const Outcome o = run_two_ranks(two_nodes(100, 150));
  ASSERT_TRUE(o.relay.ok()) << o.relay.status().message();
  EXPECT_TRUE((*o.relay)["ok"].get<bool>()) << o.relay->dump();
  ASSERT_TRUE(o.node1.is_object()) << "rank 0 gathered no document of node 1";
  EXPECT_EQ(o.node1["counters"]["faults.storage_process_kills"], 1);
  EXPECT_EQ(o.node1["counters"]["faults.storage_process_restarts"], 1);
  ASSERT_EQ(o.node1["processes"].size(), 2u) << o.node1.dump();
  EXPECT_EQ(o.node1["processes"][0]["how_it_ended"], "killed by signal 9");
  // The second process listens where its peers already connect: the first one's rails.
  const json argv = o.node1["argv"];
  const auto rails = std::find(argv.begin(), argv.end(), "--listen-rails");
  ASSERT_NE(rails, argv.end()) << argv.dump();
  EXPECT_EQ(*(rails + 1), "127.0.0.1:5001");
  EXPECT_EQ(o.node1["table"], json::array({"127.0.0.1:5000", "127.0.0.1:5001"})) << "the table, replayed";
  EXPECT_TRUE(logged(o, "with SIGKILL"));
  EXPECT_TRUE(logged(o, "started again"));
}

TEST(NodeProcess, ANodeKilledForGoodIsStoodInForAsThePlanMeantIt) {
  const Outcome o = run_two_ranks(two_nodes(100, 0));
  ASSERT_TRUE(o.relay.ok()) << o.relay.status().message();
  EXPECT_TRUE((*o.relay)["ok"].get<bool>());
  ASSERT_TRUE(o.node1.is_object());
  EXPECT_TRUE(o.node1["ok"].get<bool>());
  EXPECT_EQ(o.node1["status"], "killed by the fault plan (SIGKILL), not restarted");
  EXPECT_EQ(o.node1["counters"]["faults.storage_process_kills"], 1);
  EXPECT_EQ(o.node1["counters"]["faults.storage_process_restarts"], 0);
}

TEST(NodeProcess, ANodeProcessThatCrashesIsStoodInForAndTheRunFailsSayingHow) {
  ::setenv("FAKE_NODE_CRASH", "1", 1);
  const Outcome o = run_two_ranks(two_nodes(60'000, 100));  // the crash comes first
  ::unsetenv("FAKE_NODE_CRASH");
  ASSERT_TRUE(o.relay.ok()) << o.relay.status().message();
  EXPECT_FALSE((*o.relay)["ok"].get<bool>());
  ASSERT_TRUE(o.node1.is_object());
  EXPECT_FALSE(o.node1["ok"].get<bool>());
  EXPECT_EQ(o.node1["status"], "the node process exited with code 5 before the run was over");
  EXPECT_EQ(o.node1["counters"]["faults.storage_process_kills"], 0);
}

TEST(NodeProcess, AKillDueAfterTheWorkloadIsNotMade) {
  const Outcome o = run_two_ranks(two_nodes(60'000, 100));
  ASSERT_TRUE(o.relay.ok()) << o.relay.status().message();
  EXPECT_TRUE((*o.relay)["ok"].get<bool>());
  ASSERT_TRUE(o.node1.is_object());
  EXPECT_EQ(o.node1["counters"]["faults.storage_process_kills"], 0);
  EXPECT_EQ(o.node1["processes"].size(), 1u);
}

}  // namespace
}  // namespace sluice::emulate
