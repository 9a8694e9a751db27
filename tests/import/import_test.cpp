// `sluice import` (issue 22, item 1): other tools' measurements as sluice results.
//
// Fixtures (tests/import/fixtures/):
//  - fio_*.json: real fio 3.33 output made on the development machine
//    (`fio --output-format=json|json+`, 1 s time-based jobs on a 16 MiB file;
//    fio_seqwrite_jobfile.json from the job file beside it). A psync job
//    with iodepth > 1 makes fio print "note:" lines before the JSON, as it does.
//  - elbencho_*: written to elbencho's formats (elbencho source/Statistics.cpp,
//    printPhaseResultsToStringVec for --csvfile and printPhaseResultsAsJSON
//    for --jsonfile, boost::property_tree's write_json quoting every value
//    and escaping '/'; ProgArgs::getAsStringVec for the configuration columns).
//  - ior_*: written to IOR 3.3's formats (hpc/ior src/ior-output.c:
//    PrintHeader, ShowSetup, PrintLongSummaryOneOperation for JSON and text).
//  - mdtest_*: written to mdtest's summary (hpc/ior src/mdtest.c
//    summarize_results; 3.3 with a colon after the operation, 4.0 without,
//    with -P's time table).
//  - gdsio_runs.txt: written to gdsio's result line (NVIDIA GPUDirect Storage
//    Benchmarking and Configuration Guide, "gdsio"), with the shell prompts
//    a captured log has.
//  - the malformed variants: a JSON cut short, a wrong type, a missing
//    field, a row with columns missing, a number that is not one, a wrong unit.
#include "analysis/import_command.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include "analysis/analysis_command.hpp"
#include "scenarios/cli/analysis_commands.hpp"
#include "analysis/import_elbencho.hpp"
#include "analysis/import_fio.hpp"
#include "analysis/import_mdtest.hpp"
#include "analysis/run_record.hpp"
#include "scenarios/runner/results_writer.hpp"

namespace sluice::analysis {
namespace {

namespace fs = std::filesystem;

constexpr double k_mib = 1024.0 * 1024.0;

std::string fixture(const std::string& name) {
  return std::string(SLUICE_SOURCE_DIR) + "/tests/import/fixtures/" + name;
}

std::vector<ImportedRun> runs_of(const std::string& name, std::optional<ImportTool> tool = std::nullopt) {
  Result<ImportedFile> f = import_file(fixture(name), {tool, "", ""});
  EXPECT_TRUE(f.ok()) << f.status().message();
  return f.ok() ? f->runs : std::vector<ImportedRun>{};
}

std::string error_of(const std::string& name, std::optional<ImportTool> tool = std::nullopt) {
  Result<ImportedFile> f = import_file(fixture(name), {tool, "", ""});
  return f.ok() ? "" : f.status().message();
}

const ImportedPhase* phase_of(const ImportedRun& run, const std::string& name) {
  for (const ImportedPhase& p : run.phases) {
    if (p.phase == name) return &p;
  }
  return nullptr;
}

std::vector<std::string> phase_names(const ImportedRun& run) {
  std::vector<std::string> names;
  for (const ImportedPhase& p : run.phases) names.push_back(p.phase);
  return names;
}

nlohmann::json fixture_json(const std::string& name) {
  std::ifstream in(fixture(name));
  std::ostringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str().substr(text.str().find('{')));
}

// ---- fio ----

TEST(FioImport, TheClonesOfAJobAreOneRunWithTheirTotals) {
  const std::vector<ImportedRun> runs = runs_of("fio_randread_psync_2jobs.json");
  ASSERT_EQ(runs.size(), 1u);
  const ImportedRun& r = runs[0];
  const std::map<std::string, std::string> params = {
      {"rw", "randread"}, {"bs_bytes", "4096"},  {"iodepth", "4"},          {"numjobs", "2"},
      {"direct", "0"},    {"ioengine", "psync"}, {"size_bytes", "16777216"}};
  EXPECT_EQ(r.params, params);
  EXPECT_EQ(r.label, "randread");
  EXPECT_EQ(r.scenario, "fio");
  EXPECT_EQ(r.source["format"], "json");
  EXPECT_EQ(r.client_ranks, 2u);
  ASSERT_EQ(phase_names(r), std::vector<std::string>{"read"});
  const ImportedPhase& p = r.phases[0];
  EXPECT_EQ(p.workload, "file_sweep");
  EXPECT_EQ(p.ranks, 2u);
  // The fixture's jobs[].read: io_bytes 42246144 + 42393600, total_ios 10314 + 10350, runtime 1001 ms each.
  EXPECT_EQ(p.bytes, 42246144u + 42393600u);
  EXPECT_EQ(p.ops, 10314u + 10350u);
  EXPECT_DOUBLE_EQ(p.last_done_s, 1.001);
  EXPECT_DOUBLE_EQ(p.last_bytes_per_s, (42246144.0 + 42393600.0) / 1.001);
  EXPECT_DOUBLE_EQ(p.last_ops_per_s, (10314.0 + 10350.0) / 1.001);
  EXPECT_DOUBLE_EQ(p.first_done_s, 1.001);
  // json without bins and two clones: the larger clone's clat percentiles (93696 / 92672 ns, 411648 / 436224 ns).
  EXPECT_DOUBLE_EQ(p.latency_us_p50, 93.696);
  EXPECT_DOUBLE_EQ(p.latency_us_p99, 436.224);
  EXPECT_NE(r.source["latency_percentiles"]["read"].get<std::string>().find("upper bound"), std::string::npos);
  EXPECT_GT(p.extra.at("latency_us_mean"), 90.0);
}

TEST(FioImport, JsonPlusPercentilesAreFiosOwnComputedFromTheMergedBins) {
  // fio's percentile from its bins, as fio computes it, equals what fio printed (per entry).
  const nlohmann::json doc = fixture_json("fio_randread_libaio_jsonplus.json");
  for (const nlohmann::json& job : doc["jobs"]) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> bins;
    for (const auto& [ns, count] : job["read"]["clat_ns"]["bins"].items()) {
      bins.emplace_back(std::stoull(ns), count.get<std::uint64_t>());
    }
    std::sort(bins.begin(), bins.end());
    EXPECT_EQ(fio_histogram_percentile_ns(bins, 50), job["read"]["clat_ns"]["percentile"]["50.000000"].get<double>());
    EXPECT_EQ(fio_histogram_percentile_ns(bins, 99), job["read"]["clat_ns"]["percentile"]["99.000000"].get<double>());
  }
  const std::vector<ImportedRun> runs = runs_of("fio_randread_libaio_jsonplus.json");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].source["format"], "json+");
  EXPECT_EQ(runs[0].params.at("ioengine"), "libaio");
  EXPECT_EQ(runs[0].params.at("direct"), "1");
  EXPECT_EQ(runs[0].queue_depth, 4u);
  const ImportedPhase& p = runs[0].phases.at(0);
  // The merged histogram's median lies between the clones' (333824 and 342016 ns).
  EXPECT_GE(p.latency_us_p50, 333.824);
  EXPECT_LE(p.latency_us_p50, 342.016);
  EXPECT_NE(runs[0].source["latency_percentiles"]["read"].get<std::string>().find("merged (exact)"), std::string::npos);
}

TEST(FioImport, AJobFilesGlobalOptionsApplyAndOneJobsRateIsFiosOwn) {
  const std::vector<ImportedRun> runs = runs_of("fio_seqwrite_jobfile.json");
  ASSERT_EQ(runs.size(), 1u);
  const ImportedRun& r = runs[0];
  EXPECT_EQ(r.params.at("ioengine"), "psync");       // [global]
  EXPECT_EQ(r.params.at("size_bytes"), "16777216");  // [global] size=16M
  EXPECT_EQ(r.params.at("bs_bytes"), "131072");      // the job's bs=128k
  EXPECT_EQ(r.params.at("rw"), "write");
  EXPECT_EQ(r.params.at("numjobs"), "1");  // fio's default
  ASSERT_EQ(phase_names(r), std::vector<std::string>{"write"});
  const ImportedPhase& p = r.phases[0];
  const nlohmann::json doc = fixture_json("fio_seqwrite_jobfile.json");
  const nlohmann::json& w = doc["jobs"][0]["write"];
  EXPECT_EQ(p.bytes, w["io_bytes"].get<std::uint64_t>());
  EXPECT_NEAR(p.last_bytes_per_s, w["bw_bytes"].get<double>(), 1.0);  // fio rounds bw_bytes down
  EXPECT_DOUBLE_EQ(p.latency_us_p50, w["clat_ns"]["percentile"]["50.000000"].get<double>() / 1000);
  EXPECT_DOUBLE_EQ(p.latency_us_p99, w["clat_ns"]["percentile"]["99.000000"].get<double>() / 1000);
}

TEST(FioImport, GroupReportingGivesOneEntryForAllClonesAndBothDirections) {
  const std::vector<ImportedRun> runs = runs_of("fio_randrw_group_reporting.json");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].params.at("rwmixread"), "70");
  ASSERT_EQ(phase_names(runs[0]), (std::vector<std::string>{"read", "write"}));
  EXPECT_EQ(runs[0].phases[0].ranks, 2u);  // numjobs=2, summed by fio
  EXPECT_EQ(runs[0].phases[0].bytes, 474218496u);
  EXPECT_EQ(runs[0].phases[1].bytes, 211812352u);
}

TEST(FioImport, SizesFollowFiosKbBaseRule) {
  // fio HOWTO, kb_base; checked with fio 3.33 here: bs=4KiB moved 4000-byte blocks, bs=4k and 4kB 4096.
  EXPECT_EQ(fio_size_bytes("4k").value_or(0), 4096u);
  EXPECT_EQ(fio_size_bytes("4kB").value_or(0), 4096u);
  EXPECT_EQ(fio_size_bytes("4KiB").value_or(0), 4000u);
  EXPECT_EQ(fio_size_bytes("1M").value_or(0), 1048576u);
  EXPECT_EQ(fio_size_bytes("512").value_or(0), 512u);
  EXPECT_EQ(fio_size_bytes("4k", 1000).value_or(0), 4000u);
  EXPECT_EQ(fio_size_bytes("4KiB", 1000).value_or(0), 4096u);
  for (const char* not_one : {"4k,64k", "4k-16k", "50%", "1x", "", "k"})
    EXPECT_FALSE(fio_size_bytes(not_one)) << not_one;
}

TEST(FioImport, MalformedOutputNamesTheFieldOrLine) {
  EXPECT_NE(error_of("fio_wrong_type.json")
                .find("fio_wrong_type.json: jobs[1].read.io_bytes: expected a number >= 0, got string \"many\""),
            std::string::npos)
      << error_of("fio_wrong_type.json");
  const std::string truncated = error_of("fio_truncated.json", ImportTool::fio);
  EXPECT_NE(truncated.find("fio_truncated.json:"), std::string::npos) << truncated;
  EXPECT_NE(truncated.find("not valid JSON"), std::string::npos) << truncated;
  EXPECT_NE(error_of("fio_no_jobs.json").find("fio_no_jobs.json: jobs: expected an array, got string"),
            std::string::npos)
      << error_of("fio_no_jobs.json");
  EXPECT_NE(error_of("elbencho_dir_2runs.csv", ImportTool::fio).find("no JSON object"), std::string::npos);
}

// ---- elbencho ----

TEST(ElbenchoImport, CsvRowsOfOneConfigurationAreOneRun) {
  const std::vector<ImportedRun> runs = runs_of("elbencho_dir_2runs.csv");
  ASSERT_EQ(runs.size(), 2u);
  const std::map<std::string, std::string> params = {
      {"threads", "4"},           {"hosts", "1"},  {"bs_bytes", "1048576"},
      {"size_bytes", "16777216"}, {"direct", "1"}, {"random", "0"},
      {"iodepth", "1"},           {"files", "8"},  {"dirs", "2"}};
  EXPECT_EQ(runs[0].params, params);
  EXPECT_EQ(runs[0].label, "beegfs 4 threads");
  EXPECT_EQ(runs[0].source["version"], "3.0.19");
  ASSERT_EQ(phase_names(runs[0]), (std::vector<std::string>{"mkdir", "write", "read"}));
  const ImportedPhase& w = runs[0].phases[1];
  EXPECT_EQ(w.ranks, 4u);
  EXPECT_DOUBLE_EQ(w.first_done_s, 3.95);
  EXPECT_DOUBLE_EQ(w.last_done_s, 4.12);
  EXPECT_DOUBLE_EQ(w.last_bytes_per_s, 248 * k_mib);
  EXPECT_DOUBLE_EQ(w.first_bytes_per_s, 253 * k_mib);
  EXPECT_EQ(w.bytes, 1024u * 1024 * 1024);
  EXPECT_EQ(w.ops, 1022u);  // round(248 IOPS x 4.12 s)
  EXPECT_DOUBLE_EQ(w.last_ops_per_s, 248);
  EXPECT_DOUBLE_EQ(w.extra.at("latency_us_mean"), 16080);
  EXPECT_TRUE(std::isnan(w.latency_us_p50));  // elbencho writes no percentile to these files
  const ImportedPhase& mkdir = runs[0].phases[0];
  EXPECT_EQ(mkdir.ops, 8u);  // entries: a metadata phase
  EXPECT_DOUBLE_EQ(mkdir.last_ops_per_s, 666);
  EXPECT_TRUE(std::isnan(mkdir.last_bytes_per_s));
  EXPECT_DOUBLE_EQ(mkdir.extra.at("latency_us_mean"), 1400);  // the entry latency
  EXPECT_EQ(runs[1].params.at("threads"), "8");
  EXPECT_EQ(phase_names(runs[1]), (std::vector<std::string>{"write", "read"}));
}

TEST(ElbenchoImport, JsonRecordsWithQuotedNumbersAreOneRun) {
  const std::vector<ImportedRun> runs = runs_of("elbencho_bdev.json");
  ASSERT_EQ(runs.size(), 1u);
  const ImportedRun& r = runs[0];
  EXPECT_EQ(r.params.at("bs_bytes"), "4096");
  EXPECT_EQ(r.params.at("size_bytes"), "10737418240");
  EXPECT_EQ(r.params.at("direct"), "1");
  EXPECT_EQ(r.params.at("random"), "1");
  EXPECT_EQ(r.params.at("iodepth"), "16");
  EXPECT_EQ(r.client_ranks, 16u);
  ASSERT_EQ(phase_names(r), (std::vector<std::string>{"write", "read"}));
  EXPECT_DOUBLE_EQ(r.phases[0].last_bytes_per_s, 2147483648.0);
  EXPECT_DOUBLE_EQ(r.phases[0].first_done_s, 4.8);
  EXPECT_EQ(r.phases[0].ops, 2621440u);  // 524288 IOPS x 5 s
  EXPECT_EQ(r.phases[0].bytes, 10737418240u);
  EXPECT_DOUBLE_EQ(r.phases[0].extra.at("latency_us_mean"), 487);
  EXPECT_DOUBLE_EQ(r.phases[1].last_done_s, 4.0);
}

TEST(ElbenchoImport, MalformedFilesNameTheLine) {
  EXPECT_NE(error_of("elbencho_short_row.csv")
                .find("elbencho_short_row.csv:4: expected 56 fields as the header names, got 30"),
            std::string::npos)
      << error_of("elbencho_short_row.csv");
  EXPECT_NE(error_of("elbencho_bad_number.csv")
                .find("elbencho_bad_number.csv:3: column \"MiB/s [last]\": expected a number >= 0, got \"fast\""),
            std::string::npos)
      << error_of("elbencho_bad_number.csv");
  EXPECT_NE(error_of("elbencho_bad_value.json")
                .find("elbencho_bad_value.json:1: last_done.elapsed_time_ms: expected a number >= 0 (or one in a "
                      "string), got string \"soon\""),
            std::string::npos)
      << error_of("elbencho_bad_value.json");
  EXPECT_NE(error_of("elbencho_truncated.json").find("elbencho_truncated.json: line 2, column 151: not valid JSON"),
            std::string::npos)
      << error_of("elbencho_truncated.json");
}

TEST(ElbenchoImport, PhaseNamesAreFileSweeps) {
  EXPECT_EQ(elbencho_phase_name("WRITE"), "write");
  EXPECT_EQ(elbencho_phase_name("RMFILES"), "delete");
  EXPECT_EQ(elbencho_phase_name("MKDIRS"), "mkdir");
  EXPECT_EQ(elbencho_phase_name("RWMIX70"), "rwmix70");
}

// ---- IOR ----

void expect_ior_test0(const std::vector<ImportedRun>& runs, double write_mean_mib, double write_time_s) {
  ASSERT_EQ(runs.size(), 1u);
  const ImportedRun& r = runs[0];
  EXPECT_EQ(r.label, "IOR test 0");
  EXPECT_EQ(r.params.at("ioengine"), "POSIX");
  EXPECT_EQ(r.params.at("threads"), "8");
  EXPECT_EQ(r.params.at("bs_bytes"), "1048576");
  EXPECT_EQ(r.params.at("block_bytes"), "16777216");
  EXPECT_EQ(r.params.at("segments"), "4");
  EXPECT_EQ(r.params.at("size_bytes"), "67108864");
  EXPECT_EQ(r.params.at("file_per_proc"), "1");
  EXPECT_EQ(r.params.at("random"), "0");
  EXPECT_EQ(r.nodes, 1u);
  ASSERT_EQ(phase_names(r), (std::vector<std::string>{"write", "read"}));
  const ImportedPhase& w = r.phases[0];
  EXPECT_EQ(w.ranks, 8u);
  EXPECT_DOUBLE_EQ(w.last_bytes_per_s, write_mean_mib * k_mib);  // the mean over repetitions
  EXPECT_DOUBLE_EQ(w.last_done_s, write_time_s);
  EXPECT_EQ(w.bytes, 512u * 1024 * 1024);
  EXPECT_EQ(w.ops, 512u);
  EXPECT_GT(w.extra.at("bytes_per_s_max"), w.last_bytes_per_s);
  EXPECT_TRUE(std::isnan(w.first_done_s));
}

TEST(IorImport, JsonSummaryGivesTheMeanBandwidthOfEachOperation) {
  const std::vector<ImportedRun> runs = runs_of("ior_posix_fpp.json");
  expect_ior_test0(runs, 1200.2778, 0.4266);
  ASSERT_FALSE(runs.empty());
  EXPECT_EQ(runs[0].params.at("direct"), "0");  // tests[0].Parameters.useO_DIRECT
  EXPECT_EQ(runs[0].source["version"], "3.3.0");
  EXPECT_EQ(runs[0].source["options"]["xfersize"], "1 MiB");
}

TEST(IorImport, TextSummaryReadsAsTheJsonDoes) {
  const std::vector<ImportedRun> runs = runs_of("ior_posix_fpp.txt");
  expect_ior_test0(runs, 1200.28, 0.42660);
  ASSERT_FALSE(runs.empty());
  EXPECT_EQ(runs[0].source["version"], "3.3.0");
  EXPECT_EQ(runs[0].source["options"]["api"], "POSIX");
  EXPECT_EQ(runs[0].source["command"].get<std::string>().rfind("ior -a POSIX", 0), 0u);
}

TEST(IorImport, MalformedOutputNamesTheFieldOrLine) {
  EXPECT_NE(error_of("ior_missing_mean.json").find("ior_missing_mean.json: summary[1].bwMeanMIB: missing"),
            std::string::npos)
      << error_of("ior_missing_mean.json");
  EXPECT_NE(error_of("ior_short_row.txt").find("ior_short_row.txt:42: expected 27 columns as the header names, got 20"),
            std::string::npos)
      << error_of("ior_short_row.txt");
}

// ---- mdtest ----

TEST(MdtestImport, RateTableRowsArePhasesOfMdBench) {
  const std::vector<ImportedRun> runs = runs_of("mdtest_3_3_rates.txt");
  ASSERT_EQ(runs.size(), 1u);
  const ImportedRun& r = runs[0];
  EXPECT_EQ(r.workload_kind, "md_bench");
  const std::map<std::string, std::string> params = {{"ranks", "4"},          {"files_per_rank", "1000"},
                                                     {"iterations", "1"},     {"unique_dir", "1"},
                                                     {"write_bytes", "4096"}, {"read_bytes", "4096"}};
  EXPECT_EQ(r.params, params);
  EXPECT_EQ(phase_names(r), (std::vector<std::string>{"dir_create", "dir_stat", "dir_remove", "create", "stat", "read",
                                                      "remove", "tree_create", "tree_remove"}));
  const ImportedPhase* create = phase_of(r, "create");
  ASSERT_NE(create, nullptr);
  EXPECT_EQ(create->workload, "md_bench");
  EXPECT_DOUBLE_EQ(create->last_ops_per_s, 9821.330);
  EXPECT_EQ(create->ops, 4000u);
  EXPECT_EQ(create->bytes, 4000u * 4096);
  EXPECT_DOUBLE_EQ(create->last_done_s, 4000 / 9821.330);  // derived: no time table
  const ImportedPhase* tree = phase_of(r, "tree_create");
  ASSERT_NE(tree, nullptr);
  EXPECT_EQ(tree->ops, 0u);
  EXPECT_TRUE(std::isnan(tree->last_done_s));
}

TEST(MdtestImport, TheTimeTableGivesDurationsAndRowsNotRunAreLeftOut) {
  const std::vector<ImportedRun> runs = runs_of("mdtest_4_0_rate_and_time.txt");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(phase_names(runs[0]), (std::vector<std::string>{"create", "stat", "remove", "tree_create", "tree_remove"}));
  EXPECT_EQ(runs[0].params.at("iterations"), "2");
  EXPECT_EQ(runs[0].nodes, 2u);
  const ImportedPhase* create = phase_of(runs[0], "create");
  ASSERT_NE(create, nullptr);
  EXPECT_EQ(create->ranks, 8u);
  EXPECT_DOUBLE_EQ(create->last_done_s, 0.392);
  EXPECT_DOUBLE_EQ(create->extra.at("ops_per_s_max"), 10512.3);
  EXPECT_EQ(mdtest_phase_name("File creation"), "create");
}

TEST(MdtestImport, ARowThatDoesNotReadNamesItsLine) {
  EXPECT_NE(
      error_of("mdtest_bad_row.txt").find("mdtest_bad_row.txt:18: expected \"OPERATION [:] MAX MIN MEAN STDDEV\""),
      std::string::npos)
      << error_of("mdtest_bad_row.txt");
}

// ---- gdsio ----

TEST(GdsioImport, EachResultLineIsAStreamRun) {
  const std::vector<ImportedRun> runs = runs_of("gdsio_runs.txt");
  ASSERT_EQ(runs.size(), 4u);
  const ImportedRun& w = runs[0];
  EXPECT_EQ(w.workload_kind, "stream");
  EXPECT_TRUE(w.gds);
  const std::map<std::string, std::string> params = {
      {"xfer_type", "GPUD"}, {"threads", "8"}, {"io_bytes", "1048576"}, {"size_bytes", "8589934592"}, {"random", "0"}};
  EXPECT_EQ(w.params, params);
  ASSERT_EQ(phase_names(w), std::vector<std::string>{"record"});
  const ImportedPhase& p = w.phases[0];
  EXPECT_EQ(p.workload, "gpu_stream");
  EXPECT_EQ(p.bytes, 8589934592u);
  EXPECT_EQ(p.ops, 8192u);
  EXPECT_DOUBLE_EQ(p.last_done_s, 1.414505);
  EXPECT_DOUBLE_EQ(p.last_bytes_per_s, 5.655563 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(p.extra.at("latency_us_mean"), 1381.371828);
  EXPECT_TRUE(std::isnan(p.latency_us_p50));  // gdsio gives a mean, not a percentile
  EXPECT_EQ(phase_names(runs[1]), std::vector<std::string>{"playback"});
  EXPECT_EQ(runs[2].params.at("random"), "1");
  EXPECT_FALSE(runs[2].gds);  // CPUONLY
  EXPECT_EQ(runs[3].params.at("io_size"), "16384-32768-4096(KiB)");
}

TEST(GdsioImport, AWrongUnitNamesTheLine) {
  EXPECT_NE(error_of("gdsio_bad_unit.txt").find("gdsio_bad_unit.txt:4: expected \"Throughput: <number> GiB/sec\""),
            std::string::npos)
      << error_of("gdsio_bad_unit.txt");
}

// Issue 47 item 5: a thread count is a whole number of ranks; one beyond 32 bits, a fraction or a
// negative one is refused naming the file, the line and the field (it was cast unchecked: threads "0"
// and 4294967295 ranks for 99999999999999999999999, 2 for 2.5).
TEST(ImportHardening, GdsioThreadCountsThatAreNoRankCountAreRefusedNamingTheLine) {
  const fs::path dir = fs::temp_directory_path() / "sluice_import_gdsio_threads";
  fs::create_directories(dir);
  const std::string path = (dir / "gdsio.txt").string();
  for (const char* threads : {"99999999999999999999999", "4294967296", "2.5", "-4", "1e3", "8x"}) {
    std::ofstream(path) << "$ gdsio -w " << threads << "\nIoType: READ XferType: GPUD Threads: " << threads
                        << " DataSetSize: 8/8(KiB) IOSize: 4(KiB) Throughput: 1.5 GiB/sec, Avg_Latency: 10.5 usecs "
                           "ops: 2 total_time 1.0 secs\n";
    Result<ImportedFile> f = import_file(path, {ImportTool::gdsio, "", ""});
    if (f.ok()) {
      ADD_FAILURE() << threads << ": read as threads " << f->runs[0].params.at("threads") << ", "
                    << f->runs[0].client_ranks << " ranks";
      continue;
    }
    EXPECT_NE(f.status().message().find(path + ":2: Threads: expected a whole number"), std::string::npos)
        << f.status().message();
  }
  fs::remove_all(dir);
}

// The same for IOR's task count (read as threads "0" and 4294967295 ranks too).
TEST(ImportHardening, IorTaskCountsThatAreNoRankCountAreRefusedNamingTheEntry) {
  const fs::path dir = fs::temp_directory_path() / "sluice_import_ior_tasks";
  fs::create_directories(dir);
  std::ifstream in(fixture("ior_posix_fpp.json"));
  std::ostringstream read;
  read << in.rdbuf();
  const std::string text = read.str();
  const std::string path = (dir / "ior.json").string();
  for (const char* tasks : {"99999999999999999999999", "4294967296", "2.5"}) {
    std::string changed = text;
    const std::string from = "\"numTasks\": 8";
    ASSERT_NE(changed.find(from), std::string::npos);
    changed.replace(changed.find(from), from.size(), "\"numTasks\": " + std::string(tasks));
    std::ofstream(path) << changed;
    Result<ImportedFile> f = import_file(path, {ImportTool::ior, "", ""});
    if (f.ok()) {
      ADD_FAILURE() << tasks << ": read as threads " << f->runs[0].params.at("threads") << ", "
                    << f->runs[0].client_ranks << " ranks";
      continue;
    }
    EXPECT_NE(f.status().message().find(path + ": summary[0]: numTasks (#Tasks): expected a whole number"),
              std::string::npos)
        << f.status().message();
  }
  fs::remove_all(dir);
}

// ---- detection ----

TEST(ImportDetection, TheContentNamesTheTool) {
  const std::vector<std::tuple<const char*, ImportTool, const char*>> cases = {
      {"fio_randread_psync_2jobs.json", ImportTool::fio, "json"},
      {"fio_randread_libaio_jsonplus.json", ImportTool::fio, "json"},
      {"elbencho_dir_2runs.csv", ImportTool::elbencho, "csv"},
      {"elbencho_bdev.json", ImportTool::elbencho, "json"},
      {"ior_posix_fpp.json", ImportTool::ior, "json"},
      {"ior_posix_fpp.txt", ImportTool::ior, "text"},
      {"mdtest_3_3_rates.txt", ImportTool::mdtest, "text"},
      {"mdtest_4_0_rate_and_time.txt", ImportTool::mdtest, "text"},
      {"gdsio_runs.txt", ImportTool::gdsio, "text"}};
  for (const auto& [name, tool, format] : cases) {
    Result<ImportInput> input = read_import_input(fixture(name));
    ASSERT_TRUE(input.ok()) << input.status().message();
    Result<ImportFormat> f = detect_import_format(*input);
    ASSERT_TRUE(f.ok()) << name << ": " << f.status().message();
    EXPECT_EQ(f->tool, tool) << name;
    EXPECT_EQ(f->format, format) << name;
  }
  EXPECT_NE(error_of("unknown_tool.txt").find("unknown_tool.txt: not the output of a tool sluice imports"),
            std::string::npos);
  EXPECT_FALSE(parse_import_tool("iozone").ok());
  EXPECT_EQ(*parse_import_tool("gdsio"), ImportTool::gdsio);
}

// ---- the command ----

class ImportCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sluice_import_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  std::ostringstream out_, err_;
};

TEST_F(ImportCommand, WritesAResultsFileThatLoadsWithEveryRun) {
  const std::vector<std::string> files = {fixture("fio_randread_psync_2jobs.json"),
                                          fixture("fio_randread_libaio_jsonplus.json"),
                                          fixture("elbencho_dir_2runs.csv"),
                                          fixture("elbencho_bdev.json"),
                                          fixture("ior_posix_fpp.json"),
                                          fixture("ior_posix_fpp.txt"),
                                          fixture("mdtest_3_3_rates.txt"),
                                          fixture("gdsio_runs.txt")};
  ASSERT_EQ(run_import({files, (dir_ / "out").string(), "", "", ""}, out_, err_), 0) << err_.str();
  EXPECT_NE(out_.str().find("fio_randread_libaio_jsonplus.json: fio json+, 1 run"), std::string::npos) << out_.str();
  Result<ResultsFile> loaded = load_results((dir_ / "out" / "results.json").string());
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_TRUE(loaded->complete);
  ASSERT_EQ(loaded->runs.size(), 1u + 1 + 2 + 1 + 1 + 1 + 1 + 4);
  for (const RunRecord& r : loaded->runs) {
    EXPECT_EQ(r.backend, "hw");
    EXPECT_EQ(r.seed, 0u);
    EXPECT_TRUE(r.ok);
  }
  EXPECT_EQ(loaded->runs[0].scenario, "fio");
  EXPECT_EQ(loaded->runs[0].config.at("measured_with"), "fio");
  EXPECT_TRUE(std::isnan(loaded->runs.back().phases[0].latency_us_p50));  // null, not 0
  const nlohmann::json doc = nlohmann::json::parse(std::ifstream(dir_ / "out" / "results.json"));
  EXPECT_EQ(doc["scenario"], "import");
  EXPECT_EQ(doc["versions"]["fio"], "fio-3.33");
  EXPECT_EQ(doc["runs"][0]["source"]["job options"]["bs"], "4k");  // the tool's options verbatim
}

TEST_F(ImportCommand, TheResultsFileValidatesAgainstTheSchema) {
  const std::vector<std::string> files = {fixture("fio_randrw_group_reporting.json"), fixture("elbencho_dir_2runs.csv"),
                                          fixture("ior_posix_fpp.txt"), fixture("mdtest_4_0_rate_and_time.txt"),
                                          fixture("gdsio_runs.txt")};
  ASSERT_EQ(run_import({files, dir_.string(), "", "measured", "mine"}, out_, err_), 0) << err_.str();
  const std::string command = "python3 " + std::string(SLUICE_SOURCE_DIR) +
                              "/tests/scenarios/runner/validate_results.py " + SLUICE_SOURCE_DIR +
                              "/analysis/results.schema.json " + (dir_ / "results.json").string();
  const int status = std::system(command.c_str());
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 2) GTEST_SKIP() << "validate_results.py could not validate (python3-jsonschema: make deps)";
  EXPECT_EQ(code, 0);
}

TEST_F(ImportCommand, ABadFileExitsTwoNamingItAndWritesNothing) {
  const std::string out = (dir_ / "out").string();
  EXPECT_EQ(run_import({{fixture("gdsio_runs.txt"), fixture("mdtest_bad_row.txt")}, out, "", "", ""}, out_, err_), 2);
  EXPECT_NE(err_.str().find("mdtest_bad_row.txt:18:"), std::string::npos) << err_.str();
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(run_import({{fixture("gdsio_runs.txt")}, out, "iozone", "", ""}, out_, err_), 2);
  EXPECT_NE(err_.str().find("none of fio, elbencho, ior, mdtest, gdsio"), std::string::npos);
  EXPECT_EQ(run_import({{(dir_ / "none.json").string()}, out, "", "", ""}, out_, err_), 2);
  EXPECT_EQ(run_import({{fixture("unknown_tool.txt")}, out, "", "", ""}, out_, err_), 2);
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(ImportCommand, ImportIsASubcommand) {
  CLI::App app;
  cli::CommandExit exit;
  cli::add_analysis_commands(app, exit);
  EXPECT_NE(app.get_subcommand("import"), nullptr);
}

TEST_F(ImportCommand, CompareAlignsAnImportedFioRunWithASimulatedOneOfItsPoint) {
  ASSERT_EQ(run_import({{fixture("fio_randread_psync_2jobs.json")}, dir_.string(), "", "nvme_model", ""}, out_, err_),
            0)
      << err_.str();
  const std::string measured = (dir_ / "results.json").string();
  // The file against itself: every point has one backend (hw), nothing to compare.
  EXPECT_EQ(run_compare({{measured, measured}, {}, {}, "", ""}, out_, err_), 1);
  EXPECT_NE(err_.str().find("with one backend only"), std::string::npos) << err_.str();
  // A simulated run of the same point (scenario and params), 10% faster.
  nlohmann::json sim = nlohmann::json::parse(std::ifstream(measured));
  for (nlohmann::json& run : sim["runs"]) {
    run["backend"] = "sim";
    for (nlohmann::json& p : run["phases"]) p["last_bytes_per_s"] = p["last_bytes_per_s"].get<double>() * 1.1;
  }
  const std::string predicted = (dir_ / "sim.json").string();
  std::ofstream(predicted) << sim.dump();
  std::ostringstream out;
  ASSERT_EQ(run_compare({{predicted, measured}, {"bytes_per_s"}, {}, "", ""}, out, err_), 0) << err_.str();
  EXPECT_NE(out.str().find("nvme_model|bs_bytes=4096,direct=0,iodepth=4,ioengine=psync,numjobs=2,rw=randread,"
                           "size_bytes=16777216"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("file_sweep/read"), std::string::npos);
  EXPECT_NE(out.str().find("1 rows, median_err=10.00%"), std::string::npos) << out.str();
}

TEST_F(ImportCommand, CalibrateFitReadsImportedResults) {
  ASSERT_EQ(run_import({{fixture("fio_randread_psync_2jobs.json")}, dir_.string(), "", "", ""}, out_, err_), 0);
  FitCalibrationArgs fit;
  fit.fit_files = {(dir_ / "results.json").string()};
  // The file reads (not a bad-file exit 2); the transfer model then wants the link its points lack.
  EXPECT_EQ(run_fit_calibration(fit, out_, err_), 1);
  EXPECT_NE(err_.str().find("no link_bits_per_s or link param"), std::string::npos) << err_.str();
}

TEST(ImportRecord, TheImportedDocumentNamesTheWritersRelease) {
  EXPECT_EQ(k_import_sluice_version, scenario::k_sluice_version);
}

TEST(AnalysisCommands, RegisterCompareAndReport) {
  // The command line of analysis/ (scenarios/cli/analysis_commands.hpp);
  // calibrate is scenarios/cli/calibrate_command.hpp's.
  CLI::App app;
  cli::CommandExit exit;
  cli::add_analysis_commands(app, exit);
  for (const char* name : {"compare", "report"}) EXPECT_NE(app.get_subcommand(name), nullptr) << name;
  EXPECT_THROW(app.get_subcommand("calibrate"), CLI::OptionNotFound);
  EXPECT_THROW(app.parse(std::vector<std::string>{"--out", "report"}), CLI::ParseError);
}

}  // namespace
}  // namespace sluice::analysis
