// EmulatedPointRun without root: the points of lua_scripts/calibrate_links.lua
// become emulated clusters (roles, targets, link, sweep), specs that cannot be
// emulated are refused with the rule they break, and gathered node documents
// become RunResults summarised as the simulation summarises its ranks.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "analysis/run_record.hpp"
#include "scenarios/netns/emulated_point_run.hpp"
#include "scenarios/deploy/gathered_results.hpp"
#include "scenarios/lua/lua_script.hpp"
#include "tests/support/scratch_dir.hpp"

namespace sluice::emulate {
namespace {

const std::string k_script = std::string(SLUICE_SOURCE_DIR) + "/lua_scripts/calibrate_links.lua";

std::vector<scenario::ScenarioSpec> script_points(const std::map<std::string, std::string>& sets) {
  std::vector<scenario::ScenarioSpec> points;
  scenario::ScriptOptions o;
  o.sets = sets;
  std::ostringstream quiet;
  o.out = &quiet;
  o.run = [&](const std::vector<scenario::ScenarioSpec>& p,
              scenario::Backend) -> Result<std::vector<scenario::RunResult>> {
    points.insert(points.end(), p.begin(), p.end());
    std::vector<scenario::RunResult> results(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) {
      results[i].spec = p[i];
      results[i].error = "not run (test)";
    }
    return results;
  };
  Result<scenario::ScriptOutcome> outcome = scenario::run_script(k_script, o);
  EXPECT_TRUE(outcome.ok()) << outcome.status().to_string();
  return points;
}

bool has(const NodeSpec& n, Role r) { return n.has(r); }

TEST(EmulatedPointPlan, MapsEachFitPointToAFourNodeClusterWithItsLinkStripeAndSize) {
  const std::vector<scenario::ScenarioSpec> points = script_points({{"set", "fit"}});
  ASSERT_EQ(points.size(), 8u);  // 2 links x 2 stripe counts x 2 sizes
  std::set<std::uint64_t> rates;
  std::set<std::uint32_t> stripes;
  std::set<std::uint64_t> sizes;
  for (const scenario::ScenarioSpec& spec : points) {
    Result<EmulatedPointSetup> s = EmulatedPointRun::plan(spec);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    const ClusterConfig& c = s->cluster;
    ASSERT_EQ(c.nodes.size(), 4u);
    EXPECT_TRUE(has(c.nodes[0], Role::mgmt) && has(c.nodes[0], Role::meta) && has(c.nodes[0], Role::client));
    EXPECT_FALSE(has(c.nodes[0], Role::storage));
    for (std::size_t i = 1; i < 4; ++i) {
      EXPECT_TRUE(has(c.nodes[i], Role::storage)) << i;
      EXPECT_FALSE(has(c.nodes[i], Role::client)) << i;
      EXPECT_EQ(c.nodes[i].targets.size(), 1u) << i;
    }
    EXPECT_EQ(c.storage_target_count(), 3u);
    EXPECT_EQ(s->link.latency_ns, 0u) << "a microsecond-class latency is left to the veth pair";
    EXPECT_EQ(c.workload.chunk_bytes, 1 * k_mib);
    EXPECT_EQ(c.workload.sweep.files_per_rank, 4u);
    EXPECT_EQ(c.seed, spec.seed);
    rates.insert(s->link.rate_bits_per_s);
    stripes.insert(c.workload.stripe_count);
    sizes.insert(c.workload.sweep.file_bytes);
  }
  EXPECT_EQ(rates, (std::set<std::uint64_t>{200'000'000, 500'000'000}));
  EXPECT_EQ(stripes, (std::set<std::uint32_t>{1, 2}));
  EXPECT_EQ(sizes, (std::set<std::uint64_t>{4 * k_mib, 12 * k_mib}));
}

TEST(EmulatedPointPlan, HeldOutPointsUseALinkStripeCountAndSizeTheFitNeverSaw) {
  const std::vector<scenario::ScenarioSpec> points = script_points({{"set", "holdout"}, {"holdout_sizes", "6MiB"}});
  ASSERT_EQ(points.size(), 1u);
  Result<EmulatedPointSetup> s = EmulatedPointRun::plan(points[0]);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->link.rate_bits_per_s, 300'000'000u);
  EXPECT_EQ(s->cluster.workload.stripe_count, 3u);
  EXPECT_EQ(s->cluster.workload.sweep.file_bytes, 6 * k_mib);
}

TEST(EmulatedPointPlan, SeveralRanksPerClientNodeAreConsecutiveRanksOfThatNode) {
  const std::vector<scenario::ScenarioSpec> points = script_points({{"set", "holdout"}});
  ASSERT_FALSE(points.empty());
  scenario::ScenarioSpec spec = points[0];
  spec.workloads[0].clients.ranks_per_node = 3;
  Result<EmulatedPointSetup> s = EmulatedPointRun::plan(spec);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->cluster.workload.ranks_per_client, 3u);
  const ServicePlan plan = plan_services(s->cluster);
  EXPECT_EQ(plan.client_ranks, (std::vector<std::uint32_t>{3}));
  std::vector<std::uint32_t> ranks;
  for (const PlannedService& p : plan.services) {
    if (p.role == Role::client) {
      EXPECT_EQ(p.node, 0u);
      ranks.push_back(p.rank);
    }
  }
  EXPECT_EQ(ranks, (std::vector<std::uint32_t>{0, 1, 2}));
  // It travels to a node process's config and back; out of range is refused by name.
  Result<ClusterConfig> back = parse_cluster_config(to_json(s->cluster));
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->workload.ranks_per_client, 3u);
  ClusterConfig wrong = s->cluster;
  wrong.workload.ranks_per_client = 0;
  const Status st = validate(wrong);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("workload.ranks_per_client"), std::string::npos) << st.message();
}

// A point's workloads run one after the other on one deployment (as in
// simulation): the second keeps its own client nodes, in the spec's rank
// order, and its ranks per node; a node that runs only the second's ranks
// is a client node too. The plan travels to a node process's config.
TEST(EmulatedPointPlan, ALaterWorkloadKeepsItsOwnClientNodesInRankOrder) {
  const std::vector<scenario::ScenarioSpec> points = script_points({{"set", "holdout"}});
  ASSERT_FALSE(points.empty());
  scenario::ScenarioSpec spec = points[0];
  scenario::WorkloadSpec second = spec.workloads[0];
  second.label = "second";
  second.clients.nodes = {3, 0};  // rank 0 on node 3, rank 1 on node 0
  second.clients.ranks_per_node = 2;
  spec.workloads.push_back(second);
  Result<EmulatedPointSetup> s = EmulatedPointRun::plan(spec);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  const ClusterConfig& c = s->cluster;
  EXPECT_EQ(c.workload.client_nodes, spec.workloads[0].clients.nodes);
  ASSERT_EQ(c.later_workloads.size(), 1u);
  EXPECT_EQ(c.later_workloads[0].client_nodes, (std::vector<NodeId>{3, 0}));
  EXPECT_TRUE(c.nodes[3].has(Role::client) && c.nodes[3].has(Role::storage));
  const ServicePlan plan = plan_services(c);
  EXPECT_EQ(plan.client_ranks, (std::vector<std::uint32_t>{1, 4}));
  std::vector<std::tuple<NodeId, std::uint32_t, std::uint32_t>> clients;  // node, workload, rank
  for (const PlannedService& p : plan.services) {
    if (p.role == Role::client) clients.emplace_back(p.node, p.workload, p.rank);
  }
  using T = std::tuple<NodeId, std::uint32_t, std::uint32_t>;
  EXPECT_EQ(clients, (std::vector<T>{T{0, 0, 0}, T{0, 1, 2}, T{0, 1, 3}, T{3, 1, 0}, T{3, 1, 1}}));
  Result<ClusterConfig> back = parse_cluster_config(to_json(c));
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->later_workloads[0].client_nodes, (std::vector<NodeId>{3, 0}));
  EXPECT_EQ(back->later_workloads[0].ranks_per_client, 2u);
  EXPECT_EQ(back->workload.client_nodes, c.workload.client_nodes);
  // What a config may not say, by name.
  auto refused = [&](ClusterConfig wrong, const std::string& words) {
    const Status st = validate(wrong);
    ASSERT_FALSE(st.ok()) << words;
    EXPECT_NE(st.message().find(words), std::string::npos) << st.message();
  };
  ClusterConfig no_role = c;
  no_role.later_workloads[0].client_nodes = {1};
  refused(no_role, "later_workloads[0].client_nodes: node 1 has no client role");
  ClusterConfig twice = c;
  twice.later_workloads[0].client_nodes = {3, 3};
  refused(twice, "node 3 repeated");
  ClusterConfig idle = c;
  idle.later_workloads[0].client_nodes = {0};
  refused(idle, "nodes[3]: a client node that runs no workload's ranks");
  ClusterConfig zero = c;
  zero.later_workloads[0].ranks_per_client = 0;
  refused(zero, "later_workloads[0].ranks_per_client");
  nlohmann::json doc = to_json(c);
  doc["later_workloads"][0]["rank"] = 1;
  Result<ClusterConfig> unknown = parse_cluster_config(doc);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("later_workloads[0]"), std::string::npos) << unknown.status().message();
  EXPECT_NE(unknown.status().message().find("rank"), std::string::npos) << unknown.status().message();
}

TEST(EmulatedPointPlan, RefusesSpecsItCannotEmulateNamingTheRule) {
  const std::vector<scenario::ScenarioSpec> points = script_points({{"set", "holdout"}});
  ASSERT_FALSE(points.empty());
  auto refused = [](const scenario::ScenarioSpec& spec, const std::string& words) {
    Result<EmulatedPointSetup> s = EmulatedPointRun::plan(spec);
    ASSERT_FALSE(s.ok()) << words;
    EXPECT_EQ(s.status().code(), StatusCode::invalid_argument);
    EXPECT_NE(s.status().message().find(words), std::string::npos) << s.status().message();
  };
  scenario::ScenarioSpec many = points[0];
  many.workloads.assign(k_max_cluster_workloads + 1, many.workloads[0]);
  refused(many, std::to_string(k_max_cluster_workloads + 1) + " workloads");
  scenario::ScenarioSpec none = points[0];
  none.workloads.clear();
  refused(none, "0 workloads");
  // GPU buffers plan like host ones: whether a host has a GPU is each rank's to say (run_cluster_point).
  scenario::ScenarioSpec gpu = points[0];
  std::get<FileSweepConfig>(gpu.workloads[0].config).buffer_kind = MemKind::gpu;
  EXPECT_TRUE(EmulatedPointRun::plan(gpu).ok());
  scenario::ScenarioSpec bare = points[0];
  bare.cluster = nullptr;
  refused(bare, "no cluster");
  scenario::ScenarioSpec far = points[0];
  far.fs.mgmt_node = 9;
  refused(far, "not in the cluster");
}

nlohmann::json gathered(bool node1_ok) {
  nlohmann::json client = {
      {"node", 0},
      {"ok", true},
      {"status", "ok"},
      {"phases",
       {{{"phase", "write"}, {"rank", 0}, {"bytes", 8 * k_mib}, {"ops", 8}, {"elapsed_ns", 400'000'000}},
        {{"phase", "read"}, {"rank", 0}, {"bytes", 8 * k_mib}, {"ops", 8}, {"elapsed_ns", 200'000'000}}}},
      {"counters", {{"storage.read_bytes", 0.0}}}};
  nlohmann::json server = {{"node", 1},
                           {"ok", node1_ok},
                           {"status", node1_ok ? "ok" : "timed_out: servers-up"},
                           {"phases", nlohmann::json::array()},
                           {"counters", {{"storage.read_bytes", 8.0 * k_mib}}}};
  return {{"run_id", "t"},
          {"ok", node1_ok},
          {"nodes", {client, server}},
          {"emulation", {{"rate_bits_per_s", 300'000'000}, {"latency_ns", 0}}}};
}

TEST(EmulatedPointResult, SummarisesPhasesCountersAndLinkLikeASimulatedRun) {
  const std::vector<scenario::ScenarioSpec> points = script_points({{"set", "holdout"}});
  ASSERT_FALSE(points.empty());
  const scenario::RunResult r = SpecDeployment::result_of(points[0], gathered(true));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.backend, scenario::Backend::emulate);
  EXPECT_EQ(r.spec.params, points[0].params) << "the script's params travel with the result";
  ASSERT_EQ(r.phases.size(), 2u);
  EXPECT_EQ(r.phases[0].phase, "write");
  EXPECT_EQ(r.phases[1].phase, "read");
  EXPECT_EQ(r.phases[1].workload, points[0].workloads[0].label);
  EXPECT_EQ(r.phases[1].bytes, 8 * k_mib);
  EXPECT_DOUBLE_EQ(r.phases[1].last_done_s, 0.2);
  EXPECT_DOUBLE_EQ(r.phases[1].last_bytes_per_s, 8.0 * k_mib / 0.2);
  EXPECT_DOUBLE_EQ(r.phases[0].last_bytes_per_s, 8.0 * k_mib / 0.4);
  EXPECT_DOUBLE_EQ(r.counters.at("storage.read_bytes"), 8.0 * k_mib);
  EXPECT_DOUBLE_EQ(r.counters.at("emulate.link_bits_per_s"), 300e6);
}

// A training epoch's AU comes back from the nodes (each rank and epoch) as the epoch row's
// au_pct, their mean, as a simulated or hardware run reports it (make bench-mlperf reads it).
TEST(EmulatedPointResult, TrainEpochAuIsTheMeanOfTheNodesAuSamples) {
  const std::vector<scenario::ScenarioSpec> points = script_points({{"set", "holdout"}});
  ASSERT_FALSE(points.empty());
  scenario::ScenarioSpec spec = points[0];
  spec.workloads[0].config = TrainEpochConfig{};
  nlohmann::json g = gathered(true);
  g["nodes"][0]["phases"] = {
      {{"phase", "setup"}, {"rank", 0}, {"bytes", 8 * k_mib}, {"ops", 8}, {"elapsed_ns", 400'000'000}},
      {{"phase", "epoch"}, {"rank", 0}, {"bytes", 8 * k_mib}, {"ops", 8}, {"elapsed_ns", 200'000'000}}};
  g["nodes"][0]["train_epoch_au_ratios"] = {0.5, 0.7};
  g["nodes"][1]["train_epoch_au_ratios"] = nlohmann::json::array();
  const scenario::RunResult r = SpecDeployment::result_of(spec, g);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.phases.size(), 2u);
  EXPECT_EQ(r.phases[0].extra.count("au_pct"), 0u) << "the setup has no AU";
  ASSERT_EQ(r.phases[1].extra.count("au_pct"), 1u);
  EXPECT_DOUBLE_EQ(r.phases[1].extra.at("au_pct"), 60.0);
  // A file sweep's point carries none, whatever a node sent.
  const scenario::RunResult sweep = SpecDeployment::result_of(points[0], g);
  ASSERT_TRUE(sweep.ok) << sweep.error;
  for (const scenario::PhaseRow& row : sweep.phases) EXPECT_EQ(row.extra.count("au_pct"), 0u);
}

TEST(EmulatedPointResult, AFailedNodeFailsTheRunAndIsNamed) {
  const std::vector<scenario::ScenarioSpec> points = script_points({{"set", "holdout"}});
  ASSERT_FALSE(points.empty());
  const scenario::RunResult r = SpecDeployment::result_of(points[0], gathered(false));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("node 1"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("servers-up"), std::string::npos) << r.error;
  const scenario::RunResult bad = SpecDeployment::result_of(points[0], nlohmann::json{{"ok", true}});
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.error.find("malformed"), std::string::npos) << bad.error;
}

// `node --mpi --config C --out` (gathered_results.hpp): the
// standard results layout, read back by analysis as any run, and nodes.json.
TEST(GatheredResults, WritesTheStandardLayoutThatAnalysisReadsAndTheNodesDocument) {
  Result<ClusterConfig> c = default_cluster(2);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  c->workload.sweep.files_per_rank = 3;
  testing::ScratchDir dir("/tmp", "gathered");
  GatheredRunInfo info;
  info.scenario = "mpi_file_sweep";
  info.backend = scenario::Backend::hw;
  info.cluster_description = "2 processes under mpirun";
  info.params = {{"link_bits_per_s", "300000000"}};
  info.wall_s = 1.5;
  ASSERT_TRUE(write_gathered_results(dir.path(), gathered(true), *c, info).ok());
  Result<analysis::ResultsFile> loaded = analysis::load_results(dir.path() + "/results.json");
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  ASSERT_EQ(loaded->runs.size(), 1u);
  const analysis::RunRecord& r = loaded->runs[0];
  EXPECT_EQ(r.backend, "hw");
  EXPECT_EQ(r.scenario, "mpi_file_sweep");
  EXPECT_EQ(r.params.at("files_per_rank"), "3");
  EXPECT_EQ(r.params.at("nodes"), "2");
  EXPECT_EQ(r.params.at("link_bits_per_s"), "300000000");
  ASSERT_EQ(r.phases.size(), 2u);
  EXPECT_EQ(r.phases[1].phase, "read");
  EXPECT_EQ(r.phases[1].bytes, 8 * k_mib);
  EXPECT_TRUE(std::isnan(r.phases[1].latency_us_p50)) << "not gathered: null, never 0";
  const nlohmann::json doc = nlohmann::json::parse(std::ifstream(dir.path() + "/results.json"));
  const nlohmann::json& config = doc["runs"][0]["config"];
  EXPECT_EQ(config["cluster_nodes"], 2) << "no topology: the nodes the services are placed on";
  EXPECT_EQ(config["storage_targets"], 1);
  EXPECT_EQ(config["meta_servers"], 1);
  EXPECT_EQ(config["client_ranks"], 1);
  EXPECT_DOUBLE_EQ(doc["runs"][0]["wall_s"].get<double>(), 1.5);
  const nlohmann::json nodes = nlohmann::json::parse(std::ifstream(dir.path() + "/nodes.json"));
  EXPECT_EQ(nodes, gathered(true));
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/results.csv"));
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/progress.csv"));
  EXPECT_FALSE(write_gathered_results("/proc/no/such/dir", gathered(true), *c, info).ok());
}

}  // namespace
}  // namespace sluice::emulate
