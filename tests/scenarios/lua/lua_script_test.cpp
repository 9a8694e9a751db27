// Scripts run against a fake runner that records the ScenarioSpecs it
// receives: placement, stripes, sweep products, seeds and parameters.
#include <fstream>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>

#include "scenarios/lua/lua_script.hpp"
#include "tests/support/scratch_dir.hpp"

namespace sluice::scenario {
namespace {

const std::string k_dir = std::string(SLUICE_SOURCE_DIR) + "/tests/scenarios/lua/good_scripts/";
const std::string k_studies = std::string(SLUICE_SOURCE_DIR) + "/lua_scripts/";

struct FakeRunner {
  std::vector<ScenarioSpec> specs;
  std::vector<Backend> backends;
  RunPointsFn fn() {
    return [this](const std::vector<ScenarioSpec>& points, Backend backend) -> Result<std::vector<RunResult>> {
      std::vector<RunResult> out;
      for (const ScenarioSpec& p : points) {
        specs.push_back(p);
        backends.push_back(backend);
        RunResult r;
        r.spec = p;
        r.backend = backend;
        r.ok = true;
        r.simulated_s = 1.5;
        PhaseRow row;
        row.workload = p.workloads.front().label;
        row.phase = "read";
        row.ranks = 4;
        row.last_bytes_per_s = 2e9;
        row.extra["au_pct"] = 50;
        r.phases.push_back(row);
        out.push_back(r);
      }
      return out;
    };
  }
};

struct ScriptRun {
  FakeRunner runner;
  std::ostringstream out;
  ScriptOptions options;
  ScriptRun() {
    options.run = runner.fn();
    options.out = &out;
  }
  Result<ScriptOutcome> go(const std::string& path) { return run_script(path, options); }
};

const FileSweepConfig& sweep_of(const ScenarioSpec& spec) {
  return std::get<FileSweepConfig>(spec.workloads.at(0).config);
}

TEST(LuaScript, BeeondSweepBuildsPlacementStripeAndProduct) {
  ScriptRun run;
  Result<ScriptOutcome> outcome = run.go(k_dir + "beeond_sweep.lua");
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  ASSERT_EQ(run.runner.specs.size(), 6u);  // 2 sizes x 3 threads
  const ScenarioSpec& first = run.runner.specs.front();
  EXPECT_EQ(first.scenario, "beeond_sweep");
  EXPECT_EQ(first.seed, 7u);
  EXPECT_EQ(first.cluster->node_count(), 4u);
  EXPECT_EQ(first.fs.preset, "beeond");
  EXPECT_EQ(first.fs.mgmt_node, 0u);
  EXPECT_EQ(first.fs.meta_nodes, std::vector<NodeId>{0});
  ASSERT_EQ(first.fs.storage.size(), 4u);
  for (NodeId n = 0; n < 4; ++n) {
    EXPECT_EQ(first.fs.storage[n].node, n);
    EXPECT_EQ(first.fs.storage[n].nvme, std::vector<std::uint32_t>{0});
  }
  EXPECT_EQ(first.fs.meta.default_chunk_bytes, 512 * k_kib);
  EXPECT_EQ(first.fs.meta.default_stripe_count, 4u);
  EXPECT_EQ(first.fs.meta.default_chooser, proto::ChooserKind::randomized);
  EXPECT_EQ(first.workloads[0].clients.nodes, (std::vector<NodeId>{0, 1, 2, 3}));
  EXPECT_EQ(first.workloads[0].clients.ranks_per_node, 1u);
  // Points: size slowest, threads fastest; block clamped to the file size.
  const std::vector<std::pair<std::string, std::string>> expected = {{"256KiB", "1"}, {"256KiB", "8"}, {"256KiB", "32"},
                                                                     {"1MiB", "1"},   {"1MiB", "8"},   {"1MiB", "32"}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const ScenarioSpec& s = run.runner.specs[i];
    EXPECT_EQ(s.params.at("size"), expected[i].first);
    EXPECT_EQ(s.params.at("threads"), expected[i].second);
    EXPECT_EQ(s.params.at("nodes"), "4");
    EXPECT_EQ(sweep_of(s).threads, std::stoul(expected[i].second));
    EXPECT_EQ(sweep_of(s).files_per_rank, 16u);  // 64 files over 4 ranks
  }
  EXPECT_EQ(sweep_of(run.runner.specs[0]).file_bytes, 256 * k_kib);
  EXPECT_EQ(sweep_of(run.runner.specs[0]).block_bytes, 256 * k_kib);
  EXPECT_EQ(sweep_of(run.runner.specs[5]).block_bytes, 1 * k_mib);
  const std::vector<SweepPhase> phases = {SweepPhase::mkdir, SweepPhase::write, SweepPhase::read,
                                          SweepPhase::delete_files, SweepPhase::rmdir};
  EXPECT_EQ(sweep_of(first).phases, phases);
  // What came back reached the script and its report.
  EXPECT_EQ(outcome->results.size(), 6u);
  EXPECT_EQ(outcome->headlines, std::vector<std::string>{"points run: 6 (seed: 6)"});
  EXPECT_NE(run.out.str().find("points\t6"), std::string::npos);
  EXPECT_NE(run.out.str().find("size    threads"), std::string::npos) << run.out.str();
  EXPECT_EQ(outcome->params.size(), 3u);
  EXPECT_EQ(outcome->param_values.at("sizes"), "{256KiB, 1MiB}");
}

TEST(LuaScript, SetsSeedAndBackendOverrideTheScript) {
  ScriptRun run;
  run.options.sets = {{"nodes", "2"}, {"sizes", "4MiB"}, {"meta", "2"}};
  run.options.seed = 99;
  run.options.backend = Backend::hw;
  Result<ScriptOutcome> outcome = run.go(k_dir + "beeond_sweep.lua");
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  ASSERT_EQ(run.runner.specs.size(), 3u);
  for (const ScenarioSpec& s : run.runner.specs) {
    EXPECT_EQ(s.seed, 99u);
    EXPECT_EQ(s.cluster->node_count(), 2u);
    EXPECT_EQ(s.fs.meta_nodes, (std::vector<NodeId>{0, 1}));
    EXPECT_EQ(sweep_of(s).file_bytes, 4 * k_mib);
    EXPECT_EQ(s.params.at("sizes"), "{4MiB}");
  }
  EXPECT_EQ(run.runner.backends, std::vector<Backend>(3, Backend::hw));
  EXPECT_EQ(outcome->param_values.at("nodes"), "2");
}

TEST(LuaScript, PresetsPlaceServicesAsDocumented) {
  ScriptRun run;
  Result<ScriptOutcome> outcome = run.go(k_dir + "presets.lua");
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  ASSERT_EQ(run.runner.specs.size(), 4u);
  const ScenarioSpec& beegfs = run.runner.specs[0];
  EXPECT_EQ(beegfs.fs.gds, GdsMode::off);
  ASSERT_EQ(beegfs.fs.storage.size(), 2u);  // the GPU-less nodes with NVMe
  EXPECT_EQ(beegfs.fs.storage[0].node, 2u);
  EXPECT_EQ(beegfs.fs.storage[1].nvme, (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(beegfs.fs.mgmt_node, 2u);
  EXPECT_EQ(beegfs.fs.meta_nodes, std::vector<NodeId>{2});
  EXPECT_EQ(beegfs.workloads[0].clients.nodes, (std::vector<NodeId>{0, 1}));
  EXPECT_EQ(beegfs.workloads[0].clients.ranks_per_node, 4u);  // train_epoch: one rank per GPU
  const auto& train = std::get<TrainEpochConfig>(beegfs.workloads[0].config);
  EXPECT_EQ(train.compute_ns_per_step, 5 * k_ns_per_ms);
  const ScenarioSpec& lustre = run.runner.specs[1];
  EXPECT_EQ(lustre.fs.policy, MetaPolicy::striped_dir);
  EXPECT_EQ(lustre.fs.meta.stripe_flavor, StripeFlavor::lustre);
  EXPECT_EQ(lustre.fs.meta.default_chooser, proto::ChooserKind::space_weighted_qos);
  EXPECT_EQ(lustre.fs.meta.default_chunk_bytes, 1 * k_mib);
  EXPECT_EQ(lustre.fs.meta_nodes, (std::vector<NodeId>{2, 3}));
  EXPECT_EQ(lustre.fs.meta.ns.shard_count, 2u);
  EXPECT_EQ(lustre.fs.meta.ns.dir_stripe_count, 2u);
  const ScenarioSpec& gekko = run.runner.specs[2];
  EXPECT_EQ(gekko.fs.policy, MetaPolicy::path_hash);
  EXPECT_EQ(gekko.fs.meta_nodes, (std::vector<NodeId>{0, 1, 2, 3}));
  ASSERT_EQ(gekko.fs.storage.size(), 2u) << "GPU nodes have no NVMe";
  EXPECT_EQ(gekko.fs.meta.default_stripe_count, 4u);  // every target
  const ScenarioSpec& beeond = run.runner.specs[3];
  EXPECT_EQ(beeond.fs.storage[0].nvme, std::vector<std::uint32_t>{0});
  EXPECT_EQ(beeond.fs.mgmt_node, 0u);
  EXPECT_NE(beegfs.cluster_description.find("ethernet 25 Gb/s"), std::string::npos) << beegfs.cluster_description;
}

TEST(LuaScript, ExplicitSweepOverFsFieldAndSeveralWorkloads) {
  ScriptRun run;
  Result<ScriptOutcome> outcome = run.go(k_dir + "multi.lua");
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  ASSERT_EQ(run.runner.specs.size(), 2u);
  EXPECT_EQ(run.runner.specs[0].fs.client.planner.rails.max_connections_per_nic, 2u);
  EXPECT_EQ(run.runner.specs[1].fs.client.planner.rails.max_connections_per_nic, 12u);
  EXPECT_EQ(run.runner.specs[1].params.at("rail_connections"), "12");
  const ScenarioSpec& s = run.runner.specs[0];
  ASSERT_EQ(s.workloads.size(), 2u);
  EXPECT_EQ(s.workloads[0].clients.ranks_per_node, 2u);
  EXPECT_EQ(s.workloads[1].clients.nodes, std::vector<NodeId>{1});
  EXPECT_EQ(s.workloads[1].clients.ranks_per_node, 8u);
  EXPECT_EQ(std::get<StreamConfig>(s.workloads[1].config).direction, StreamDirection::playback);
  EXPECT_EQ(std::get<CheckpointConfig>(s.workloads[0].config).shard_bytes, 64 * k_mib);
  EXPECT_EQ(s.fs.meta.default_chooser, proto::ChooserKind::round_robin);
  EXPECT_EQ(s.seed, 1u);
  EXPECT_EQ(outcome->headlines, (std::vector<std::string>{"points: 2 (seed: 2)", "tag: x"}));
}

// sl.run_all: every entry's points go to the runner in one call (so they
// run together), and come back as one list per entry.
TEST(LuaScript, RunAllRunsEveryEntrysPointsInOneCall) {
  ScriptRun run;
  int calls = 0;
  RunPointsFn inner = run.runner.fn();
  run.options.run = [&](const std::vector<ScenarioSpec>& points, Backend backend) {
    ++calls;
    return inner(points, backend);
  };
  Result<ScriptOutcome> outcome = run.go(k_dir + "run_all.lua");
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  EXPECT_EQ(calls, 1);
  ASSERT_EQ(run.runner.specs.size(), 4u);
  EXPECT_EQ(run.runner.specs[0].label, "1 MDS");
  EXPECT_EQ(run.runner.specs[3].label, "2 MDS");
  EXPECT_EQ(run.runner.specs[3].fs.meta_nodes.size(), 2u);
  ASSERT_EQ(outcome->results.size(), 4u);
  EXPECT_EQ(outcome->results[2].spec.params.at("meta"), "2");
  EXPECT_EQ(outcome->headlines,
            (std::vector<std::string>{"entries: 2", "points of the second: 2", "meta of the second: 2"}));
}

TEST(LuaScript, DescribeListsParamsWithoutRunning) {
  Result<std::vector<ParamDecl>> params = describe_script(k_dir + "beeond_sweep.lua");
  ASSERT_TRUE(params.ok()) << params.status().to_string();
  ASSERT_EQ(params->size(), 3u);
  EXPECT_EQ((*params)[0].name, "meta");
  EXPECT_EQ((*params)[1].name, "nodes");
  EXPECT_EQ((*params)[1].type, "number");
  EXPECT_EQ((*params)[1].default_text, "4");
  EXPECT_EQ((*params)[1].description, "cluster nodes");
  EXPECT_EQ((*params)[2].type, "list");
  Result<std::vector<ParamDecl>> multi = describe_script(k_dir + "multi.lua");
  ASSERT_TRUE(multi.ok()) << multi.status().to_string();
  EXPECT_EQ((*multi)[0].type, "boolean");
  EXPECT_EQ((*multi)[2].type, "string");
}

TEST(LuaScript, RunnerFailureIsNotAScriptError) {
  ScriptRun run;
  run.options.run = [](const std::vector<ScenarioSpec>&, Backend) -> Result<std::vector<RunResult>> {
    return error(StatusCode::io_error, "fork failed");
  };
  Result<ScriptOutcome> outcome = run.go(k_dir + "beeond_sweep.lua");
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.status().code(), StatusCode::io_error);
}

TEST(LuaScript, MissingScriptIsAnInvalidArgument) {
  ScriptRun run;
  Result<ScriptOutcome> outcome = run.go(k_dir + "no_such_script.lua");
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.status().code(), StatusCode::invalid_argument);
  EXPECT_NE(outcome.status().message().find("no_such_script.lua"), std::string::npos);
}

TEST(LuaScript, TinyMemoryLimitIsAnErrorNotACrash) {
  ScriptRun run;
  run.options.memory_limit_bytes = 2000;
  Result<ScriptOutcome> outcome = run.go(k_dir + "beeond_sweep.lua");
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.status().code(), StatusCode::invalid_argument);
  EXPECT_NE(outcome.status().message().find("memory limit of 2000 bytes"), std::string::npos)
      << outcome.status().message();
  EXPECT_TRUE(run.runner.specs.empty());
}

TEST(LuaScript, ClaimsAreCheckedRecordedAndPlotsAskTheDrawer) {
  ScriptRun run;
  std::vector<ScriptPlot> plots;
  run.options.draw_plot = [&plots](const ScriptPlot& plot) -> Result<std::vector<std::string>> {
    plots.push_back(plot);
    return std::vector<std::string>{plot.out_base + ".svg"};
  };
  run.options.out_dir = "/tmp/claims_out";
  Result<ScriptOutcome> outcome = run.go(k_dir + "claims_and_plot.lua");
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  ASSERT_EQ(outcome->claims.size(), 7u);
  EXPECT_TRUE(outcome->claims[6].model_input);
  EXPECT_FALSE(outcome->claims[5].model_input);
  EXPECT_TRUE(outcome->claims[0].holds);
  EXPECT_FALSE(outcome->claims[0].is_seed_figure());
  EXPECT_TRUE(outcome->claims[3].is_seed_figure());
  EXPECT_TRUE(outcome->claims[3].holds);
  EXPECT_NEAR(outcome->claims[3].relative_error(), -0.10, 1e-12);
  EXPECT_DOUBLE_EQ(outcome->claims[3].tolerance, 0.15);
  EXPECT_FALSE(outcome->claims[4].holds);
  EXPECT_NEAR(outcome->claims[4].relative_error(), 0.20, 1e-12);
  EXPECT_TRUE(outcome->claims[5].holds);
  EXPECT_EQ(outcome->claims[5].tolerance_why, "the seed gives 10-15%");
  EXPECT_NE(run.out.str().find("CLAIM DOES NOT HOLD: seed figure, 20% off: 2.4 (+20.0%) (expected 2 +- 15%)"),
            std::string::npos)
      << run.out.str();
  EXPECT_EQ(outcome->claims[0].seed_figure, "~2x");
  EXPECT_NE(outcome->claims[0].where.find("claims_and_plot.lua:7"), std::string::npos) << outcome->claims[0].where;
  EXPECT_FALSE(outcome->claims[1].holds);
  EXPECT_FALSE(outcome->claims[2].holds);  // NaN never holds
  EXPECT_NE(run.out.str().find("CLAIM DOES NOT HOLD: rate above: 1 (expected >= 1.5)"), std::string::npos)
      << run.out.str();
  ASSERT_EQ(plots.size(), 1u);
  EXPECT_EQ(plots[0].out_base, "/tmp/claims_out/claims_plot");
  EXPECT_EQ(plots[0].x_label, "threads");
  ASSERT_EQ(plots[0].series.size(), 1u);  // one workload/phase; the fake runner's 2 GB/s at threads 1 and 8
  EXPECT_EQ(plots[0].series[0].x, (std::vector<double>{1, 8}));
  EXPECT_EQ(plots[0].series[0].y, (std::vector<double>{2, 2}));
}

TEST(LuaScript, AClaimWithoutBoundsOrMeasurementIsAScriptError) {
  for (const char* body :
       {"sl.claim{\"x\", measured = 1}", "sl.claim{measured = 1, at_least = 0}",
        "sl.claim{\"x\", measured = \"big\", at_least = 0}", "sl.claim{\"x\", measured = 1, at_least = 2, at_most = 1}",
        "sl.claim{\"x\", measured = 1, at_lest = 2}", "sl.claim{\"x\", measured = 1, seed_value = 2, at_least = 1}",
        "sl.claim{\"x\", measured = 1, seed_value = 2, tolerance = 0.3}",
        "sl.claim{\"x\", measured = 1, seed_value = 0}", "sl.claim{\"x\", measured = 1, at_most = 2, input = true}",
        "sl.claim{\"x\", measured = 1, at_least = 0, tolerance = 0.1}",
        "sl.claim{\"x\", measured = 1, seed_value = 2, tolerance = -1, tolerance_why = \"y\"}"}) {
    const std::string path = ::testing::TempDir() + "bad_claim.lua";
    std::ofstream(path) << "local sl = require \"sluice\"\n" << body << "\n";
    ScriptRun run;
    Result<ScriptOutcome> outcome = run.go(path);
    ASSERT_FALSE(outcome.ok()) << body;
    EXPECT_EQ(outcome.status().code(), StatusCode::invalid_argument);
    EXPECT_NE(outcome.status().message().find("bad_claim.lua:2: sl.claim"), std::string::npos)
        << outcome.status().message();
  }
}

using sluice::testing::ScratchDir;

// The first lines of the sl.compare scripts: one point at rw = "read", bs_bytes = "4KiB" (line 4, `r`).
const std::string k_compare_prelude =
    "local sl = require \"sluice\"\n"
    "local cluster = sl.cluster{ nodes = 2, node = sl.machines.generic{ nvmes = 1 }, "
    "fabric = sl.fabric.ethernet{ gbps = 25 } }\n"
    "local w = sl.workload.file_sweep{ op = {\"read\"}, files = 8, size = \"1MiB\", threads = 1 }\n"
    "local r = sl.run{ cluster = cluster, fs = sl.fs.beeond{}, workload = w, "
    "params = { rw = \"read\", bs_bytes = \"4KiB\" } }\n";

// sl.compare hands the binding the runs it was given (each once, in the
// order made) and the files where it found them, prints what comes back and
// returns it as a table. (The comparison itself, through the real binding:
// tests/scenarios/calibrate/script_compare_test.cpp.)
TEST(LuaScript, CompareGivesTheBindingTheRunsAndFilesAndReturnsItsTable) {
  ScratchDir dir;
  dir.write("fio.json", "{}");
  const std::string script =
      dir.write("compare_runs.lua",
                k_compare_prelude +
                    "local all = sl.run_all{ { cluster = cluster, fs = sl.fs.beeond{}, workload = w, "
                    "params = { rw = \"write\", bs_bytes = \"4KiB\" } } }\n"
                    "local c = sl.compare{ r, all, r[1], measured = \"fio.json\", match = {\"rw\", \"bs_bytes\"}, "
                    "metrics = \"bytes_per_s\", title = \"my NVMe under fio\" }\n"
                    "sl.headline(\"rows\", #c.rows)\n"
                    "sl.headline(\"rel_err\", c.rows[1].rel_err)\n"
                    "sl.headline(\"point\", c.rows[1].point .. \" \" .. c.rows[1].predicted_backend .. \"/\" .. "
                    "c.rows[1].measured_backend)\n"
                    "sl.headline(\"median\", c.median_rel_err)\n"
                    "sl.headline(\"unmatched\", c.unmatched[1])\n");
  ScriptRun run;
  std::vector<std::string> predicted_rw;
  ScriptCompareRequest asked;
  run.options.compare = [&](const std::vector<RunResult>& predicted,
                            const ScriptCompareRequest& request) -> Result<ScriptComparison> {
    for (const RunResult& p : predicted) predicted_rw.push_back(p.spec.params.at("rw"));
    asked = request;
    ScriptComparison c;
    c.rows.push_back({"rw=read,bs_bytes=4096", "file_sweep", "read", "bytes_per_s", "sim", "hw", 2.2e9, 2e9, 0.1});
    c.median_rel_err = 0.1;
    c.p90_rel_err = 0.1;
    c.unmatched = {"rw=write,bs_bytes=8192"};
    c.text = "THE TABLE\n";
    return c;
  };
  Result<ScriptOutcome> outcome = run.go(script);
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  EXPECT_EQ(predicted_rw, (std::vector<std::string>{"read", "write"}));
  ASSERT_EQ(asked.measured.size(), 1u);
  EXPECT_EQ(asked.measured[0].argument, "measured");
  EXPECT_EQ(asked.measured[0].given, "fio.json");
  EXPECT_EQ(asked.measured[0].path, dir.path() + "/fio.json");
  EXPECT_EQ(asked.match, (std::vector<std::string>{"rw", "bs_bytes"}));
  EXPECT_EQ(asked.metrics, std::vector<std::string>{"bytes_per_s"});
  EXPECT_NE(run.out.str().find("my NVMe under fio\nTHE TABLE\n"), std::string::npos) << run.out.str();
  EXPECT_EQ(outcome->headlines,
            (std::vector<std::string>{"rows: 1", "rel_err: 0.1", "point: rw=read,bs_bytes=4096 sim/hw", "median: 0.1",
                                      "unmatched: rw=write,bs_bytes=8192"}));
}

TEST(LuaScript, CompareErrorsNameTheArgumentAndTheLine) {
  struct Case {
    const char* body;  // line 5 of the script
    const char* fragment;
  };
  const Case cases[] = {
      {"sl.compare{ r, measured = {\"fio.json\", \"nope.json\"} }",
       "sl.compare: measured[2]: cannot read \"nope.json\": no such file"},
      {"sl.compare{ r, measured = 42 }",
       "sl.compare: measured: expected a path or a non-empty list of paths, not a number"},
      {"sl.compare{ r }", "sl.compare: measured: missing"},
      {"sl.compare{ r, measured = \"fio.json\", match = {\"rw\", 2} }",
       "sl.compare: match[2]: expected a name, not a number"},
      {"sl.compare{ r, measured = \"fio.json\", metric = \"bytes_per_s\" }",
       "sl.compare: unknown field \"metric\"; did you mean \"metrics\"?"},
      {"sl.compare{ \"r\", measured = \"fio.json\" }",
       "sl.compare: [1]: expected what sl.run or sl.run_all returned, not a string"},
      {"sl.compare{ {{ok = true}}, measured = \"fio.json\" }",
       "sl.compare: [1][1]: expected a point sl.run returned (it has an index)"},
      {"sl.compare{ {{index = 7}}, measured = \"fio.json\" }",
       "sl.compare: [1][1]: its index is not the number of a run of this script (1 .. 1)"},
      {"sl.compare{ {}, measured = \"fio.json\" }", "sl.compare: no runs to compare"},
      {"sl.compare(\"fio.json\")", "sl.compare takes a table"},
      {"local m = {} for i = 1, 65 do m[i] = \"fio.json\" end sl.compare{ r, measured = m }",
       "sl.compare: measured: 65 files, more than k_max_compare_files = 64"},
      // What the binding refuses comes back as a script error at the call.
      {"sl.compare{ r, measured = \"fio.json\", match = \"bs\" }",
       "sl.compare: match: fio.json: run 1 (fio) has no param \"bs\""},
  };
  ScratchDir dir;
  dir.write("fio.json", "{}");
  for (const Case& c : cases) {
    const std::string script = dir.write("compare_case.lua", k_compare_prelude + c.body + "\n");
    ScriptRun run;
    run.options.compare = [](const std::vector<RunResult>&,
                             const ScriptCompareRequest& request) -> Result<ScriptComparison> {
      if (request.match == std::vector<std::string>{"bs"}) {
        return error(StatusCode::invalid_argument, "match: fio.json: run 1 (fio) has no param \"bs\" (it has rw)");
      }
      return ScriptComparison{};
    };
    Result<ScriptOutcome> outcome = run.go(script);
    ASSERT_FALSE(outcome.ok()) << c.body;
    EXPECT_EQ(outcome.status().code(), StatusCode::invalid_argument) << c.body;
    EXPECT_NE(outcome.status().message().find(std::string("compare_case.lua:5: ") + c.fragment), std::string::npos)
        << c.body << "\n"
        << outcome.status().message();
  }
}

TEST(LuaScript, CompareIsAScriptErrorWhereTheProgramComparesNothing) {
  ScratchDir dir;
  dir.write("fio.json", "{}");
  const std::string script =
      dir.write("compare_unbound.lua", k_compare_prelude + "sl.compare{ r, measured = \"fio.json\" }\n");
  ScriptRun run;  // no options.compare
  Result<ScriptOutcome> outcome = run.go(script);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.status().code(), StatusCode::invalid_argument);
  EXPECT_NE(outcome.status().message().find("compare_unbound.lua:5: sl.compare: not available here"), std::string::npos)
      << outcome.status().message();
}

// Every seed study, reduced as CI runs it, builds valid specs and prints headlines.
struct Study {
  const char* file;
  std::map<std::string, std::string> sets;
};

class StudyTest : public ::testing::TestWithParam<Study> {};

TEST_P(StudyTest, RunsReducedAgainstFakeRunner) {
  ScriptRun run;
  run.options.sets = GetParam().sets;
  Result<ScriptOutcome> outcome = run.go(k_studies + GetParam().file);
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  EXPECT_FALSE(run.runner.specs.empty());
  EXPECT_FALSE(outcome->headlines.empty());
  for (const std::string& h : outcome->headlines) EXPECT_NE(h.find("(seed: "), std::string::npos) << h;
  Result<std::vector<ParamDecl>> params = describe_script(k_studies + GetParam().file);
  ASSERT_TRUE(params.ok()) << params.status().to_string();
  EXPECT_FALSE(params->empty());
}

const Study k_reduced_studies[] = {
    {"beegfs_gds_vs_bounce.lua", {{"gpus", "1,8"}, {"sizes", "1MiB"}, {"files", "64"}}},
    {"beeond_azure_sweep.lua", {{"files", "256"}, {"sizes", "256KiB,16MiB"}, {"threads", "1,8"}, {"more_meta", "2"}}},
    {"dne_metadata_sharding.lua", {{"shards", "1,4"}, {"entries", "512"}, {"clients", "8"}, {"storm_clients", "2"}}},
    {"gpu_rdma_recorder.lua", {{"buffers", "64"}}},
    {"nvmesh_bandwidth_sharing.lua",
     {{"files", "32"}, {"file_size", "16MiB"}, {"active_gpus", "2,16"}, {"servers", "2"}}},
    {"beeond_stage_in.lua", {{"nodes", "2,4"}, {"objects_per_node", "4"}, {"threads", "2"}}},
    {"cosmoflow_epoch.lua", {{"nodes", "2"}, {"steps", "2"}, {"pfs_servers", "1"}}},
    {"checkpoint_burst.lua", {{"servers", "2"}, {"clients", "2"}, {"shard", "256MiB"}}},
};

INSTANTIATE_TEST_SUITE_P(Studies, StudyTest, ::testing::ValuesIn(k_reduced_studies),
                         [](const ::testing::TestParamInfo<Study>& param_info) {
                           std::string name = param_info.param.file;
                           return name.substr(0, name.find('.'));
                         });

}  // namespace
}  // namespace sluice::scenario
