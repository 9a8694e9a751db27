// sl.run's faults (issue 9, scenarios/lua/fault_plan_reader.hpp): a good
// plan reaches the runner as data; each malformed one fails with the
// script's file:line and a sentence naming the entry and the field.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "scenarios/lua/lua_script.hpp"

namespace sluice::scenario {
namespace {

const std::string k_fault_dir = std::string(SLUICE_SOURCE_DIR) + "/tests/scenarios/lua/bad_scripts/faults/";

struct BadFaultScript {
  const char* file;
  const char* fragment;
};

const BadFaultScript k_bad_fault_scripts[] = {
    {"fault_no_kind.lua", "sl.run: faults[1]: names no fault; give one of kill, slow_disk, partition, message_loss"},
    {"fault_bad_subject.lua", "faults[1] (kill): kill: fault subject 'storge:0': unknown role 'storge'"},
    {"fault_bad_factor.lua", "faults[1] (slow_disk): factor: 0.5 is out of range (1 .. 1000)"},
    {"fault_two_kinds.lua", "faults[1]: names both kill and partition; one fault per entry"},
    {"fault_bad_time.lua", "faults[1] (kill): at: \"2 sec\" is not a duration"},
    {"fault_for_on_kill.lua", "faults[1] (kill): for_: a kill lasts until revive_after"},
    {"fault_field_typo.lua", "faults[1] (kill): unknown field \"revive_afte\"; did you mean \"revive_after\"?"},
    {"fault_not_a_list.lua", "sl.run: faults: expected a list of faults"},
    {"fault_partition_empty.lua", "faults[1] (partition): partition: expected a list of nodes or services"},
    {"fault_loss_range.lua", "faults[1] (message_loss): message_loss: 1.5 is out of range (0 .. 1)"},
    {"fault_factor_missing.lua", "faults[1] (slow_disk): factor: missing"},
};

ScriptOptions quiet_options(std::ostringstream& out, bool& ran, std::vector<ScenarioSpec>* seen = nullptr) {
  ScriptOptions options;
  options.out = &out;
  options.memory_limit_bytes = 4ULL << 20;
  options.instruction_limit = 200'000;
  options.run = [&ran, seen](const std::vector<ScenarioSpec>& points, Backend) -> Result<std::vector<RunResult>> {
    ran = true;
    if (seen != nullptr) *seen = points;
    return std::vector<RunResult>(points.size());
  };
  return options;
}

class BadFaultScriptTest : public ::testing::TestWithParam<BadFaultScript> {};

TEST_P(BadFaultScriptTest, FailsWithFileLineAndSentence) {
  const BadFaultScript& bad = GetParam();
  std::ostringstream out;
  bool ran = false;
  Result<ScriptOutcome> outcome = run_script(k_fault_dir + bad.file, quiet_options(out, ran));
  ASSERT_FALSE(outcome.ok()) << bad.file << " ran without error";
  EXPECT_EQ(outcome.status().code(), StatusCode::invalid_argument) << outcome.status().to_string();
  const std::string& message = outcome.status().message();
  EXPECT_NE(message.find(std::string(bad.file) + ":3:"), std::string::npos) << "message: " << message;
  EXPECT_NE(message.find(bad.fragment), std::string::npos) << "message: " << message;
  EXPECT_FALSE(ran) << "a bad script reached the runner";
}

INSTANTIATE_TEST_SUITE_P(BadFaultScripts, BadFaultScriptTest, ::testing::ValuesIn(k_bad_fault_scripts),
                         [](const ::testing::TestParamInfo<BadFaultScript>& param_info) {
                           std::string name = param_info.param.file;
                           return name.substr(0, name.find('.'));
                         });

TEST(BadFaultScripts, EveryFileInTheFolderIsChecked) {
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(k_fault_dir)) {
    if (entry.path().extension() != ".lua") continue;
    ++files;
    const std::string name = entry.path().filename().string();
    bool listed = false;
    for (const BadFaultScript& bad : k_bad_fault_scripts) listed = listed || name == bad.file;
    EXPECT_TRUE(listed) << name << " has no expected message";
  }
  EXPECT_EQ(files, std::size(k_bad_fault_scripts));
}

TEST(FaultScripts, APlanReachesTheRunnerAsData) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "sluice_fault_plan_good.lua";
  {
    std::ofstream f(path);
    f << "local sl = require \"sluice\"\n"
         "local cluster = sl.cluster{ nodes = 2, node = sl.machines.generic{ nvmes = 1 } }\n"
         "sl.run{ cluster = cluster, fs = sl.fs.beeond{}, workload = sl.workload.md_bench{},\n"
         "        faults = { {at=\"2s\", kill=\"storage:0\", revive_after=\"1s\"},\n"
         "                   {at=\"5s\", slow_disk=\"storage:0\", factor=10},\n"
         "                   {partition={\"node1\",\"node0\"}, for_=\"3s\"},\n"
         "                   {at=\"1s\", message_loss=0.25, delay=\"2ms\", for_=\"500ms\"} } }\n";
  }
  std::ostringstream out;
  bool ran = false;
  std::vector<ScenarioSpec> seen;
  Result<ScriptOutcome> outcome = run_script(path.string(), quiet_options(out, ran, &seen));
  std::filesystem::remove(path);
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  ASSERT_EQ(seen.size(), 1u);
  const auto& plan = seen[0].faults.faults;
  ASSERT_EQ(plan.size(), 4u);
  EXPECT_EQ(plan[0].to_string(), "kill storage:0 at 2s revive after 1s");
  EXPECT_EQ(plan[1].kind, faults::FaultKind::slow_disk);
  EXPECT_DOUBLE_EQ(plan[1].factor, 10.0);
  EXPECT_EQ(plan[1].duration_ns, 0) << "no for_: until the end";
  EXPECT_EQ(plan[2].to_string(), "partition node1,node0 at 0ns for 3s");
  EXPECT_DOUBLE_EQ(plan[3].loss_probability, 0.25);
  EXPECT_EQ(plan[3].extra_delay_ns, 2 * k_ns_per_ms);
  EXPECT_EQ(plan[3].duration_ns, 500 * k_ns_per_ms);
}

}  // namespace
}  // namespace sluice::scenario
