// Malformed scripts: each must fail with invalid_argument, a message that
// starts at the script's file:line and says what is wrong; none may crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <sstream>

#include "scenarios/lua/lua_script.hpp"

namespace sluice::scenario {
namespace {

const std::string k_bad_dir = std::string(SLUICE_SOURCE_DIR) + "/tests/scenarios/lua/bad_scripts/";

struct BadScript {
  const char* file;
  const char* place;     // "file.lua:line:" expected in the message
  const char* fragment;  // the sentence (part of it)
  std::map<std::string, std::string> sets = {};
};

const BadScript k_bad_scripts[] = {
    {"unknown_field.lua", "unknown_field.lua:2:", "unknown field \"chunck\"; did you mean \"chunk\"?"},
    {"bad_size.lua", "bad_size.lua:2:", "\"64KB\" is not a size, use \"64KiB\""},
    {"bad_rate.lua", "bad_rate.lua:3:", "\"100Gbit\" is not a rate, use \"100Gb/s\""},
    {"bad_rate_gbe.lua", "bad_rate_gbe.lua:2:", "\"25GbE\" is not a rate, use \"25Gb/s\""},
    {"wrong_type.lua", "wrong_type.lua:2:", "threads: expected a whole number, not a string"},
    {"count_zero.lua", "count_zero.lua:2:", "threads: 0 is out of range (1 .. 4096)"},
    {"node_missing.lua", "node_missing.lua:3:", "meta_nodes[2]: node 5 does not exist (the cluster has 4 nodes, 0..3)"},
    {"syntax_error.lua", "syntax_error.lua:3:", "unexpected symbol near '='"},
    {"runtime_error.lua", "runtime_error.lua:3:", "attempt to index a nil value (local 't')"},
    {"unknown_machine.lua", "unknown_machine.lua:2:", "sl.machines has no \"dgx_a10\"; did you mean \"dgx_a100\"?"},
    {"unknown_fs.lua", "unknown_fs.lua:2:", "sl.fs has no \"beond\"; did you mean \"beeond\"?"},
    {"instruction_limit.lua", "instruction_limit.lua:", "instruction limit of 200000 VM instructions reached"},
    {"memory_limit.lua", "memory_limit.lua:", "memory limit of 4194304 bytes reached"},
    {"set_undeclared.lua",
     "set_undeclared.lua:2:",
     "--set nodez=8: the script declares no parameter \"nodez\"; did you mean \"nodes\"?",
     {{"nodez", "8"}}},
    {"missing_cluster.lua", "missing_cluster.lua:4:", "sl.run: cluster: missing"},
    {"run_all_backends.lua", "run_all_backends.lua:4:", "sl.run_all[2]: runs on other backends than sl.run_all[1]"},
    {"run_all_entry.lua", "run_all_entry.lua:3:", "sl.run_all[2]: expected a table of sl.run fields, not a string"},
    {"bad_choice.lua", "bad_choice.lua:2:", "gds: \"maybe\" is not one of on, off, auto"},
    {"fractional.lua", "fractional.lua:2:", "files_per_rank: 2.5 is not a whole number"},
    {"sweep_unknown.lua", "sweep_unknown.lua:5:", "sweep.thread: no field \"thread\"", {}},
    {"bad_param_decl.lua", "bad_param_decl.lua:2:", "nodes: declare it as {\"description\", default}"},
    {"require_missing.lua", "require_missing.lua:2:", "module 'no_such_helper' not found"},
    {"bad_duration.lua", "bad_duration.lua:2:", "\"10 sec\" is not a duration"},
    {"storage_no_servers.lua", "storage_no_servers.lua:3:", "storage_nodes: missing, and no node of the cluster"},
    {"error_not_string.lua", "error_not_string.lua:2:", "raised an error that is not a message (table)"},
    {"positional_args.lua", "positional_args.lua:2:", "sl.cluster: takes named fields (name = value)"},
    {"targets_too_many.lua",
     "targets_too_many.lua:3:", "targets_per_node = 2 but node 0 (azure_nd40rs_v2) has 1 NVMe drive(s)"},
    {"fat_tree_options.lua", "fat_tree_options.lua:2:", "need topology = \"fat_tree\""},
    {"mirror_odd_targets.lua", "mirror_odd_targets.lua:3:",
     "mirror: 3 storage targets cannot be paired into buddy groups (an even number is needed)"},
    {"mirror_metadata_one_node.lua", "mirror_metadata_one_node.lua:3:", "mirror.metadata: shard 0 on node 0"},
    {"mirror_timeouts.lua",
     "mirror_timeouts.lua:3:", "mirror.probably_offline_after: must be longer than the heartbeat (2000 ms)"},
    {"set_bad_value.lua", "set_bad_value.lua:2:", "--set nodes=abc: \"abc\" is not a number", {{"nodes", "abc"}}},
    {"list_hole.lua", "list_hole.lua:2:", "a list has a hole"},
    {"bad_lib.lua", "broken_helper.lua:2:", "expected near 'return'"},
    {"no_os.lua", "no_os.lua:2:", "attempt to index a nil value (global 'os')"},
    {"cyclic_table.lua", "cyclic_table.lua:4:", "nested deeper than 32 levels"},
    {"chooser_typo.lua", "chooser_typo.lua:2:", "\"randomised\" is not one of"},
    {"no_load.lua", "no_load.lua:2:", "attempt to call a nil value (global 'load')"},
    {"bad_phase.lua", "bad_phase.lua:2:",
     "\"stats\" is not one of create, stat, readdir, ls_storm, remove, link, rename; did you mean \"stat\"?"},
    {"wrong_object.lua", "wrong_object.lua:2:", "node: expected a machine, not a file system (beeond)"},
    {"run_wrong_fs.lua", "run_wrong_fs.lua:3:", "sl.run: fs: expected a file system, not a string"},
    {"unknown_sl.lua", "unknown_sl.lua:2:", "sl has no \"clustr\"; did you mean \"cluster\"?"},
    {"compare_no_runs.lua", "compare_no_runs.lua:2:", "sl.compare: no runs to compare"},
    {"compare_measured_type.lua",
     "compare_measured_type.lua:2:", "sl.compare: measured[2]: expected a path (a string), not a number"},
    {"compare_unknown_field.lua",
     "compare_unknown_field.lua:2:", "sl.compare: unknown field \"matsh\"; did you mean \"match\"?"},
    // sl.peak (issue 48 item 4): each mistake names its field, before anything runs.
    {"peak_bad_axis.lua", "peak_bad_axis.lua:4:",
     "sl.peak: axis: \"thread\" is not one of threads, iodepth, inflight_blocks; did you mean \"threads\"?"},
    {"peak_bad_phase.lua", "peak_bad_phase.lua:4:",
     "sl.peak: phase: \"reed\" is not a bulk phase of this file_sweep (its bulk phases: write, read); did you "
     "mean \"read\"?"},
    {"peak_wrong_axis.lua", "peak_wrong_axis.lua:4:",
     "sl.peak: axis: file_sweep has no concurrency \"inflight_blocks\"; its axes: threads or iodepth"},
    {"peak_few_files.lua", "peak_few_files.lua:4:",
     "sl.peak: run.workload: threads = 8 but files_per_rank = 2: a rank cannot keep more files in flight"},
    {"peak_sweep.lua", "peak_sweep.lua:4:", "sl.peak: run: 2 points (a sweep over threads); a peak starts from one"},
    {"peak_max_steps.lua", "peak_max_steps.lua:4:", "sl.peak: max_steps: 9 is out of range (2 .. 8)"},
    {"peak_md_bench.lua", "peak_md_bench.lua:4:",
     "sl.peak: run.workload: sl.peak raises a file_sweep's threads or iodepth or a checkpoint_burst's inflight_blocks, "
     "not a "
     "md_bench's"},
    {"headline_row.lua", "headline_row.lua:2:", "sl.headline: row takes a table"},
};

class BadScriptTest : public ::testing::TestWithParam<BadScript> {};

TEST_P(BadScriptTest, FailsWithFileLineAndSentence) {
  const BadScript& bad = GetParam();
  std::ostringstream out;
  ScriptOptions options;
  options.out = &out;
  options.sets = bad.sets;
  options.memory_limit_bytes = 4ULL << 20;
  options.instruction_limit = 200'000;
  bool ran = false;
  options.run = [&](const std::vector<ScenarioSpec>& points, Backend) -> Result<std::vector<RunResult>> {
    ran = true;
    return std::vector<RunResult>(points.size());
  };
  Result<ScriptOutcome> outcome = run_script(k_bad_dir + bad.file, options);
  ASSERT_FALSE(outcome.ok()) << bad.file << " ran without error";
  EXPECT_EQ(outcome.status().code(), StatusCode::invalid_argument) << outcome.status().to_string();
  const std::string& message = outcome.status().message();
  EXPECT_NE(message.find(bad.place), std::string::npos) << "message: " << message;
  EXPECT_NE(message.find(bad.fragment), std::string::npos) << "message: " << message;
  EXPECT_FALSE(ran) << "a bad script reached the runner";
}

INSTANTIATE_TEST_SUITE_P(BadScripts, BadScriptTest, ::testing::ValuesIn(k_bad_scripts),
                         [](const ::testing::TestParamInfo<BadScript>& param_info) {
                           std::string name = param_info.param.file;
                           name = name.substr(0, name.find('.'));
                           return name;
                         });

TEST(BadScripts, EveryFileInTheFolderIsChecked) {
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(k_bad_dir)) {
    if (entry.path().extension() != ".lua") continue;
    ++files;
    const std::string name = entry.path().filename().string();
    bool listed = false;
    for (const BadScript& bad : k_bad_scripts) listed = listed || name == bad.file;
    EXPECT_TRUE(listed) << name << " has no expected message";
  }
  EXPECT_GE(files, 20u);
}

}  // namespace
}  // namespace sluice::scenario
