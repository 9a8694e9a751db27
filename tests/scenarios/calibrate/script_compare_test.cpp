// sl.compare through its real binding (compare_script_runs): a script's runs
// (from a fake runner) against a results file the test writes, as `sluice
// import` would write a fio measurement. The Lua side alone (arguments, the
// returned table) is tested in tests/scenarios/lua/lua_script_test.cpp.
#include "scenarios/calibrate/script_compare.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/run_record.hpp"
#include "scenarios/lua/lua_script.hpp"
#include "tests/support/scratch_dir.hpp"

namespace sluice::calibrate {
namespace {

using scenario::Backend;
using scenario::RunResult;
using scenario::ScenarioSpec;

// What the fake runner's every point reads at.
constexpr double k_predicted_bytes_per_s = 2e9;

using sluice::testing::ScratchDir;

// A measured run as `sluice import` writes one of fio: scenario "fio", backend hw.
nlohmann::json fio_run(const std::string& rw, const std::string& bs_bytes, double bytes_per_s) {
  const nlohmann::json phase = {{"workload", "file_sweep"},
                                {"phase", rw},
                                {"ranks", 1},
                                {"bytes", 1048576},
                                {"ops", 256},
                                {"last_done_s", 1.0},
                                {"last_bytes_per_s", bytes_per_s},
                                {"last_ops_per_s", 256.0},
                                {"latency_us_p50", 40.0},
                                {"latency_us_p99", 90.0}};
  return {{"scenario", "fio"},
          {"backend", "hw"},
          {"ok", true},
          {"seed", 0},
          {"params", {{"rw", rw}, {"bs_bytes", bs_bytes}, {"iodepth", "1"}}},
          {"phases", nlohmann::json::array({phase})}};
}

std::string results_text(const std::vector<nlohmann::json>& runs) {
  const nlohmann::json doc = {{"format", "sluice-results"},
                              {"version", analysis::k_max_results_version},
                              {"scenario", "fio"},
                              {"complete", true},
                              {"runs", nlohmann::json(runs)}};
  return doc.dump(2);
}

// Every point reads at k_predicted_bytes_per_s.
scenario::RunPointsFn fake_runner() {
  return [](const std::vector<ScenarioSpec>& points, Backend backend) -> Result<std::vector<RunResult>> {
    std::vector<RunResult> out;
    for (const ScenarioSpec& p : points) {
      RunResult r;
      r.spec = p;
      r.backend = backend;
      r.ok = true;
      scenario::PhaseRow row;
      row.workload = p.workloads.front().label;
      row.phase = "read";
      row.ranks = 1;
      row.bytes = 1048576;
      row.ops = 256;
      row.last_done_s = 1.0;
      row.last_bytes_per_s = k_predicted_bytes_per_s;
      row.last_ops_per_s = 256;
      r.phases.push_back(row);
      out.push_back(r);
    }
    return out;
  };
}

// Two points of the model, at bs_bytes 4KiB and 1MiB; line 8 is `compare_line`.
std::string study(const std::string& compare_line) {
  return "local sl = require \"sluice\"\n"
         "local cluster = sl.cluster{ nodes = 2, node = sl.machines.generic{ nvmes = 1 }, "
         "fabric = sl.fabric.ethernet{ gbps = 25 } }\n"
         "local w = sl.workload.file_sweep{ op = {\"read\"}, files = 8, size = \"1MiB\", threads = 1 }\n"
         "local runs = {}\n"
         "for _, bs in ipairs({\"4KiB\", \"1MiB\"}) do\n"
         "  runs[#runs + 1] = sl.run{ cluster = cluster, fs = sl.fs.beeond{}, workload = w, "
         "params = { rw = \"read\", bs_bytes = bs } }\n"
         "end\n" +
         compare_line + "\n";
}

struct Ran {
  Result<scenario::ScriptOutcome> outcome;
  std::string out;
};

Ran run(const std::string& script) {
  std::ostringstream out;
  scenario::ScriptOptions options;
  options.run = fake_runner();
  options.compare = compare_script_runs;
  options.out = &out;
  Result<scenario::ScriptOutcome> outcome = scenario::run_script(script, options);
  return {std::move(outcome), out.str()};
}

TEST(ScriptCompare, TheModelsPointsMeetTheMeasuredOnesByRwAndBlockSize) {
  ScratchDir dir;
  // The drive measured 10% below the model at 4096-byte reads ("4KiB" in the script); writes the model has not.
  dir.write("fio.json",
            results_text({fio_run("read", "4096", k_predicted_bytes_per_s / 1.1), fio_run("write", "4096", 1e9)}));
  const Ran ran = run(dir.write(
      "nvme_model.lua",
      study("local c = sl.compare{ runs, measured = \"fio.json\", match = {\"rw\", \"bs_bytes\"}, "
            "metrics = {\"bytes_per_s\"}, title = \"my NVMe under fio\" }\n"
            "sl.headline(\"rows\", #c.rows)\n"
            "sl.headline(\"point\", c.rows[1].point .. \" \" .. c.rows[1].workload .. \"/\" .. c.rows[1].phase)\n"
            "sl.headline(\"rel_err\", c.rows[1].rel_err)\n"
            "sl.headline(\"median\", c.median_rel_err)\n"
            "sl.headline(\"unmatched\", c.unmatched[1])")));
  ASSERT_TRUE(ran.outcome.ok()) << ran.outcome.status().to_string();
  EXPECT_EQ(ran.outcome->headlines,
            (std::vector<std::string>{"rows: 1", "point: rw=read,bs_bytes=4096 file_sweep/read", "rel_err: 0.1",
                                      "median: 0.1", "unmatched: rw=write,bs_bytes=4096"}));
  EXPECT_NE(ran.out.find("my NVMe under fio\n"), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("median_err=10.00%"), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("unmatched (no predicted run there): rw=write,bs_bytes=4096"), std::string::npos) << ran.out;
}

TEST(ScriptCompare, ErrorsNameTheArgumentAndTheLine) {
  struct Case {
    const char* line;  // line 8 of the script
    const char* fragment;
  };
  const Case cases[] = {
      {"sl.compare{ runs, measured = \"nope.json\" }", "sl.compare: measured: cannot read \"nope.json\": no such file"},
      {"sl.compare{ runs, measured = {\"fio.json\", \"bad.json\"} }",
       "sl.compare: measured[2]: cannot read bad.json: "},
      {"sl.compare{ runs, measured = \"writes.json\", match = {\"rw\"} }",
       "sl.compare: no measured point has a predicted run at it"},
      {"sl.compare{ runs, measured = \"fio.json\", match = {\"rw\", \"bs\"} }",
       "sl.compare: match: fio.json: run 1 (fio) has no param \"bs\" (it has bs_bytes, iodepth, rw)"},
      {"sl.compare{ runs, measured = \"fio.json\", metrics = {\"byte_per_s\"} }",
       "sl.compare: metrics: \"byte_per_s\" is not a metric"},
  };
  ScratchDir dir;
  dir.write("fio.json", results_text({fio_run("read", "4096", 1e9)}));
  dir.write("writes.json", results_text({fio_run("write", "4096", 1e9)}));
  dir.write("bad.json", "fio: no such option\n");
  for (const Case& c : cases) {
    const Ran ran = run(dir.write("compare_bad.lua", study(c.line)));
    ASSERT_FALSE(ran.outcome.ok()) << c.line;
    EXPECT_EQ(ran.outcome.status().code(), StatusCode::invalid_argument) << c.line;
    EXPECT_NE(ran.outcome.status().message().find(std::string("compare_bad.lua:8: ") + c.fragment), std::string::npos)
        << c.line << "\n"
        << ran.outcome.status().message();
  }
}

}  // namespace
}  // namespace sluice::calibrate
