// Issue 24 item 3: results readers never abort. Every field of a results
// file is type-checked; a wrong type, an out-of-range count or an unknown
// version is a clear error naming the field's path, and compare, report and
// calibrate --fit exit 2 for such a file (exit 134, an uncaught nlohmann
// type_error, before).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/analysis_command.hpp"
#include "analysis/calibration.hpp"
#include "analysis/fidelity.hpp"
#include "analysis/import_command.hpp"
#include "analysis/run_record.hpp"
#include "analysis_fixtures.hpp"
#include "scenarios/runner/results_writer.hpp"

namespace sluice::analysis {
namespace {

namespace fs = std::filesystem;

nlohmann::json good() { return testing::results_json({testing::run_json("sim", "1", 100)}); }

// parse_runs' error for `doc`, "" when it parses.
std::string error_of(const nlohmann::json& doc) {
  Result<std::vector<RunRecord>> r = parse_runs(doc);
  return r.ok() ? "" : r.status().message();
}

struct Break {
  const char* what;
  std::function<void(nlohmann::json&)> apply;
  const char* message;  // part of the error
};

TEST(ResultsReader, EveryWrongTypeIsAnErrorNamingThePath) {
  const std::vector<Break> breaks = {
      {"ok as a string", [](nlohmann::json& d) { d["runs"][0]["ok"] = "yes"; },
       "runs[0].ok: expected a boolean, got string"},
      {"seed as a string", [](nlohmann::json& d) { d["runs"][0]["seed"] = "1"; },
       "runs[0].seed: expected a whole number"},
      {"negative seed", [](nlohmann::json& d) { d["runs"][0]["seed"] = -1; }, "runs[0].seed: expected a whole number"},
      {"bytes as a string", [](nlohmann::json& d) { d["runs"][0]["phases"][0]["bytes"] = "4096"; },
       "runs[0].phases[0].bytes: expected a whole number"},
      {"ops as a fraction", [](nlohmann::json& d) { d["runs"][0]["phases"][0]["ops"] = 1.5; },
       "runs[0].phases[0].ops: expected a whole number"},
      {"ranks beyond 32 bits", [](nlohmann::json& d) { d["runs"][0]["phases"][0]["ranks"] = 4294967296ULL; },
       "runs[0].phases[0].ranks: expected a whole number in 0..4294967295"},
      {"a rate as a string", [](nlohmann::json& d) { d["runs"][0]["phases"][0]["last_bytes_per_s"] = "1e9"; },
       "runs[0].phases[0].last_bytes_per_s: expected a number, got string"},
      {"a counter as a string", [](nlohmann::json& d) { d["runs"][0]["counters"]["chunks"] = "4"; },
       "runs[0].counters.chunks: expected a number"},
      {"a param as an object",
       [](nlohmann::json& d) {
         d["runs"][0]["params"]["threads"] = {{"a", 1}};
       },
       "runs[0].params.threads: expected a string, number or boolean"},
      {"phases as an object",
       [](nlohmann::json& d) {
         d["runs"][0]["phases"] = {{"a", 1}};
       },
       "runs[0].phases: expected an array"},
      {"a phase as a number", [](nlohmann::json& d) { d["runs"][0]["phases"][0] = 3; },
       "runs[0].phases[0]: expected an object"},
      {"runs as a string", [](nlohmann::json& d) { d["runs"] = "x"; }, "results.runs: expected an array"},
      {"complete as a string", [](nlohmann::json& d) { d["complete"] = "no"; }, "results.complete: expected a boolean"},
      {"version 99999", [](nlohmann::json& d) { d["version"] = 99999; }, "version 99999 is not one this sluice reads"},
      {"version as a string", [](nlohmann::json& d) { d["version"] = "1"; },
       "results.version: expected a whole number"},
  };
  ASSERT_EQ(error_of(good()), "");
  for (const Break& b : breaks) {
    nlohmann::json doc = good();
    b.apply(doc);
    const std::string message = error_of(doc);
    EXPECT_NE(message.find(b.message), std::string::npos) << b.what << ": " << message;
  }
}

TEST(ResultsReader, WrongTypesInAnEmulateFileAreErrorsToo) {
  nlohmann::json doc = testing::emulate_json(1e9, 1 << 20, 1'000'000);
  ASSERT_EQ(error_of(doc), "");
  doc["nodes"][1]["phases"][0]["bytes"] = "many";
  EXPECT_NE(error_of(doc).find("nodes[1].phases[0].bytes: expected a whole number"), std::string::npos)
      << error_of(doc);
  doc = testing::emulate_json(1e9, 1 << 20, 1'000'000);
  doc["ok"] = 1;
  EXPECT_NE(error_of(doc).find("emulate results.ok: expected a boolean"), std::string::npos) << error_of(doc);
}

TEST(ResultsReader, TheReaderKnowsTheWritersVersion) {
  EXPECT_EQ(k_max_results_version, static_cast<std::uint64_t>(scenario::k_results_version));
}

TEST(ResultsReader, CommandsExitTwoForABadFileAndSayWhere) {
  const fs::path dir = fs::temp_directory_path() / "sluice_results_reader_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  nlohmann::json doc = good();
  doc["runs"][0]["ok"] = "true";
  const std::string bad = (dir / "bad.json").string();
  std::ofstream(bad) << doc.dump();
  std::ostringstream out, err;
  EXPECT_EQ(run_compare({{bad, bad}, {}, {}, "", ""}, out, err), 2);
  EXPECT_NE(err.str().find("runs[0].ok: expected a boolean, got string"), std::string::npos) << err.str();
  EXPECT_EQ(run_report({{bad}, (dir / "r").string(), "", "read", "T"}, out, err), 2);
  FitCalibrationArgs fit;
  fit.fit_files = {bad};
  EXPECT_EQ(run_fit_calibration(fit, out, err), 2);
  fs::remove_all(dir);
}

using ResultsReaderFiles = testing::FolderTest;

// Issue 47 item 5: fidelity reads results through the typed reader of report, compare and calibrate; it
// printed figures and exited 0 for each of these (and "inf%" for a tolerance of 1e308).
TEST_F(ResultsReaderFiles, FidelityRefusesWhatEveryCommandRefuses) {
  const nlohmann::json claim = {{"text", "rate"},        {"where", "x.lua:1"}, {"measured", 1.1},
                                {"kind", "seed_figure"}, {"seed_value", 1.0},  {"tolerance", 0.15},
                                {"seed_figure", "~1"},   {"holds", true}};
  const std::vector<Break> breaks = {
      {"runs as an object",
       [](nlohmann::json& d) {
         d["runs"] = {{"a", 1}};
       },
       "results.runs: expected an array"},
      {"scalar runs",
       [](nlohmann::json& d) {
         d["runs"] = {1, 2};
       },
       "runs[0]: expected an object"},
      {"params as an array",
       [](nlohmann::json& d) {
         d["runs"][0]["params"] = {1, 2};
       },
       "runs[0].params: expected an object"},
      {"phases as a string", [](nlohmann::json& d) { d["runs"][0]["phases"] = "read"; },
       "runs[0].phases: expected an array"},
      {"version 1e308", [](nlohmann::json& d) { d["version"] = 1e308; }, "results.version: expected a whole number"},
      {"tolerance 1e308", [](nlohmann::json& d) { d["claims"][0]["tolerance"] = 1e308; },
       "claims[0].tolerance: expected"},
  };
  for (const Break& b : breaks) {
    nlohmann::json doc = good();
    doc["claims"] = {claim};
    std::ostringstream good_out, out, err;
    ASSERT_EQ(run_fidelity({{write("good.json", doc.dump())}, ""}, good_out, err), 0) << err.str();
    b.apply(doc);
    const std::string path = write("bad.json", doc.dump());
    EXPECT_EQ(run_fidelity({{path}, ""}, out, err), 2) << b.what << ": " << out.str();
    EXPECT_NE(err.str().find(path), std::string::npos) << b.what << ": " << err.str();
    EXPECT_NE(err.str().find(b.message), std::string::npos) << b.what << ": " << err.str();
  }
}

// Issue 47 item 5: a JSON syntax error names its line and column in every command that reads a JSON file
// (only import named a line, and no column, before).
TEST_F(ResultsReaderFiles, ASyntaxErrorNamesItsLineAndColumnInEveryCommand) {
  const std::string bad = write("bad.json", "{\n  \"format\": \"sluice-results\",\n  \"runs\": [1,,2]\n}\n");
  const std::string good_file = write("good.json", good().dump());
  const std::string place = bad + ": line 3, column 14: not valid JSON";
  const auto expect_place = [&](const char* command, int code, const std::ostringstream& err) {
    EXPECT_EQ(code, 2) << command;
    EXPECT_NE(err.str().find(place), std::string::npos) << command << ": " << err.str();
  };
  std::ostringstream out, err;
  expect_place("compare", run_compare({{good_file, bad}, {}, {}, "", ""}, out, err), err);
  err.str("");
  expect_place("report", run_report({{bad}, (dir_ / "r").string(), "", "read", "T"}, out, err), err);
  err.str("");
  FitCalibrationArgs fit;
  fit.fit_files = {bad};
  expect_place("calibrate --fit", run_fit_calibration(fit, out, err), err);
  err.str("");
  fit.fit_files = {good_file};
  fit.holdout_files = {bad};
  expect_place("calibrate --holdout", run_fit_calibration(fit, out, err), err);
  err.str("");
  expect_place("fidelity", run_fidelity({{bad}, ""}, out, err), err);
  err.str("");
  expect_place("import", run_import({{bad}, (dir_ / "imported").string(), "fio", "", ""}, out, err), err);
  err.str("");
  Result<nlohmann::json> profile = read_json_file(bad);
  ASSERT_FALSE(profile.ok());
  EXPECT_NE(profile.status().message().find(place), std::string::npos) << profile.status().message();
}

}  // namespace
}  // namespace sluice::analysis
