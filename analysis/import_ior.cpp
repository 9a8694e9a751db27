#include "analysis/import_ior.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>

namespace sluice::analysis {
namespace {

using nlohmann::json;

constexpr double k_bytes_per_mib = 1024.0 * 1024.0;

// One summary entry (JSON) or row (text): one operation of one test.
struct IorSummary {
  std::string operation;
  std::string api;
  double test_id = 0;
  double tasks = 0;
  double tasks_per_node = 0;
  double repetitions = 0;
  double file_per_proc = 0;
  double segments = 0;
  double block_bytes = 0;
  double transfer_bytes = 0;
  double bw_max_mib = 0, bw_min_mib = 0, bw_mean_mib = 0, bw_sd_mib = 0;
  double ops_max = 0, ops_min = 0, ops_mean = 0, ops_sd = 0;
  double mean_time_s = 0;
  double agg_mib = 0;
};

// What the output says beside the summary.
struct IorHeader {
  std::string version;
  std::string machine;
  std::string command;
  std::map<std::uint64_t, json> test_options;                               // TestID -> that test's options, verbatim
  std::map<std::uint64_t, std::map<std::string, std::string>> test_params;  // TestID -> direct/random
};

std::string count_text(double v) { return std::to_string(static_cast<std::uint64_t>(v)); }

ImportedPhase ior_phase(const ImportInput& input, const std::string& where, const IorSummary& s) {
  ImportedPhase p;
  p.workload = "file_sweep";
  p.phase = s.operation;
  p.ranks = static_cast<std::uint32_t>(s.tasks);  // check_counts: whole, below 2^32
  p.last_bytes_per_s = s.bw_mean_mib * k_bytes_per_mib;
  p.last_ops_per_s = s.ops_mean;
  p.last_done_s = s.mean_time_s;
  p.bytes = whole_count(input, where, s.agg_mib * k_bytes_per_mib);
  if (s.transfer_bytes > 0) p.ops = whole_count(input, where, static_cast<double>(p.bytes) / s.transfer_bytes);
  p.extra = {{"bytes_per_s_max", s.bw_max_mib * k_bytes_per_mib},
             {"bytes_per_s_min", s.bw_min_mib * k_bytes_per_mib},
             {"bytes_per_s_stddev", s.bw_sd_mib * k_bytes_per_mib},
             {"ops_per_s_max", s.ops_max},
             {"ops_per_s_min", s.ops_min},
             {"ops_per_s_stddev", s.ops_sd},
             {"repetitions", s.repetitions}};
  return p;
}

void ior_params(const IorSummary& s, const IorHeader& h, ImportedRun& r) {
  r.params = {{"ioengine", s.api},
              {"threads", count_text(s.tasks)},
              {"tasks_per_node", count_text(s.tasks_per_node)},
              {"bs_bytes", count_text(s.transfer_bytes)},
              {"block_bytes", count_text(s.block_bytes)},
              {"segments", count_text(s.segments)},
              {"size_bytes", count_text(s.block_bytes * s.segments)},
              {"file_per_proc", count_text(s.file_per_proc)}};
  const auto id = static_cast<std::uint64_t>(s.test_id);
  if (const auto it = h.test_params.find(id); it != h.test_params.end()) {
    for (const auto& [name, value] : it->second) r.params[name] = value;
  }
  r.client_ranks = static_cast<std::uint32_t>(s.tasks);
  if (s.tasks_per_node > 0) {
    r.nodes = static_cast<std::uint32_t>(std::min<double>(s.tasks / s.tasks_per_node, 1e9));
  }
}

// A row's counts are whole numbers in range (tasks are ranks: below 2^32), so the casts below are
// exact: 99999999999999999999999 tasks or 2.5 were cut to 0 and 2 before.
void check_counts(const ImportInput& input, const std::string& where, const IorSummary& s) {
  constexpr double k_most_ranks = std::numeric_limits<std::uint32_t>::max();
  constexpr double k_most = 9007199254740992.0;  // 2^53: every whole double below it is exact
  const std::pair<const char*, double> counts[] = {{"TestID", s.test_id},          {"segmentCount", s.segments},
                                                   {"blockSize", s.block_bytes},   {"transferSize", s.transfer_bytes},
                                                   {"repetitions", s.repetitions}, {"filePerProc", s.file_per_proc}};
  for (const auto& [name, v] : counts) {
    if (v != std::floor(v) || v > k_most)
      fail_at_field(input, where, std::string(name) + ": expected a whole number in 0..2^53, got " + json(v).dump());
  }
  if (s.block_bytes * s.segments > k_most)
    fail_at_field(input, where, "blockSize x segmentCount: more than 2^53 bytes");
  for (const auto& [name, v] :
       {std::pair<const char*, double>{"numTasks (#Tasks)", s.tasks}, {"tasksPerNode (tPN)", s.tasks_per_node}}) {
    if (v != std::floor(v) || v > k_most_ranks)
      fail_at_field(input, where,
                    std::string(name) + ": expected a whole number in 0..4294967295, got " + json(v).dump());
  }
}

// One run per test, its phases in the order of the summary.
std::vector<ImportedRun> ior_runs(const ImportInput& input, const std::vector<std::pair<std::string, IorSummary>>& rows,
                                  const IorHeader& h, const char* format) {
  std::vector<ImportedRun> runs;
  std::map<std::uint64_t, std::size_t> run_of;
  for (const auto& [where, s] : rows) {
    check_counts(input, where, s);
    const auto id = static_cast<std::uint64_t>(s.test_id);
    if (!run_of.contains(id)) {
      ImportedRun r;
      ior_params(s, h, r);
      r.label = "IOR test " + std::to_string(id);
      r.source = {
          {"tool", "ior"},           {"file", input.path},
          {"format", format},        {"version", h.version},
          {"command", h.command},    {"machine", h.machine},
          {"test_id", id},           {"options", h.test_options.contains(id) ? h.test_options.at(id) : json::object()},
          {"summary", json::array()}};
      run_of[id] = runs.size();
      runs.push_back(std::move(r));
    }
    ImportedRun& r = runs[run_of[id]];
    if (r.phases.size() == k_import_max_phases_per_run)
      fail_at_field(input, where, "more than k_import_max_phases_per_run phases");
    r.phases.push_back(ior_phase(input, where, s));
    r.source["summary"].push_back(where);
  }
  return runs;
}

// ---- JSON ----

IorSummary json_summary(const ImportInput& input, const json& e, const std::string& at) {
  if (!e.is_object()) fail_at_field(input, at, "expected an object, got " + std::string(e.type_name()));
  const auto need = [&](const char* key) { return json_amount_field(input, e, at, key); };
  const auto may = [&](const char* key) { return json_optional_amount(input, e, at, key).value_or(0); };
  IorSummary s;
  s.operation = json_text_field(input, e, at, "operation");
  if (s.operation != "write" && s.operation != "read") {
    fail_at_field(input, field_path(at, "operation"), "expected \"write\" or \"read\", got \"" + s.operation + "\"");
  }
  s.api = json_text_field(input, e, at, "API");
  s.test_id = need("TestID");
  s.block_bytes = need("blockSize");
  s.transfer_bytes = need("transferSize");
  s.tasks = need("numTasks");
  s.tasks_per_node = may("tasksPerNode");
  s.repetitions = may("repetitions");
  s.file_per_proc = may("filePerProc");
  s.segments = json_optional_amount(input, e, at, "segmentCount").value_or(1);
  s.bw_mean_mib = need("bwMeanMIB");
  s.bw_max_mib = may("bwMaxMIB");
  s.bw_min_mib = may("bwMinMIB");
  s.bw_sd_mib = may("bwStdMIB");
  s.ops_mean = may("OPsMean");
  s.ops_max = may("OPsMax");
  s.ops_min = may("OPsMin");
  s.ops_sd = may("OPsSD");
  s.mean_time_s = need("MeanTime");
  s.agg_mib = need("xsizeMiB");
  return s;
}

std::string optional_text(const ImportInput& input, const json& j, const std::string& where, const char* key) {
  return j.contains(key) ? json_text_field(input, j, where, key) : std::string();
}

// tests[]: each test's Options (verbatim) and, from its Parameters, direct and random.
void json_tests(const ImportInput& input, const json& doc, IorHeader& h) {
  if (!doc.contains("tests")) return;
  const json& tests = json_array_field(input, doc, "", "tests");
  for (std::size_t i = 0; i < tests.size(); ++i) {
    const std::string at = "tests[" + std::to_string(i) + "]";
    if (!tests[i].is_object()) fail_at_field(input, at, "expected an object, got " + std::string(tests[i].type_name()));
    const auto id = whole_count(input, field_path(at, "TestID"), json_amount_field(input, tests[i], at, "TestID"));
    if (tests[i].contains("Options")) h.test_options[id] = json_object_field(input, tests[i], at, "Options");
    if (!tests[i].contains("Parameters")) continue;
    const json& params = json_object_field(input, tests[i], at, "Parameters");
    const std::string pat = field_path(at, "Parameters");
    if (const auto direct = json_optional_amount(input, params, pat, "useO_DIRECT"))
      h.test_params[id]["direct"] = count_text(*direct);
    if (const auto random = json_optional_amount(input, params, pat, "randomOffset"))
      h.test_params[id]["random"] = count_text(*random);
  }
}

}  // namespace

std::vector<ImportedRun> import_ior_json(const ImportInput& input) {
  const std::size_t start = input.text.find('{');
  if (start == std::string::npos) fail_at_line(input, 1, "no JSON object: expected ior -O summaryFormat=JSON output");
  const json doc = parse_json_at(input, start, input.text.size());
  if (!doc.is_object())
    fail_at_field(input, "", "expected a JSON object (IOR's output), got " + std::string(doc.type_name()));
  IorHeader h;
  h.version = optional_text(input, doc, "", "Version");
  h.command = optional_text(input, doc, "", "Command line");
  h.machine = optional_text(input, doc, "", "Machine");
  json_tests(input, doc, h);
  const json& summary = json_array_field(input, doc, "", "summary");
  if (summary.empty()) fail_at_field(input, "summary", "expected an entry per test and operation, got an empty array");
  std::vector<std::pair<std::string, IorSummary>> rows;
  for (std::size_t i = 0; i < summary.size(); ++i) {
    const std::string at = "summary[" + std::to_string(i) + "]";
    rows.emplace_back(at, json_summary(input, summary[i], at));
  }
  return ior_runs(input, rows, h, "json");
}

// ---- text ----

namespace {

// "key   : value" lines (IOR's "%-20s: %s"); nullopt for other lines.
std::optional<std::pair<std::string, std::string>> key_value(std::string_view line) {
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0 || line[0] == ' ') return std::nullopt;
  return std::make_pair(std::string(trim(line.substr(0, colon))), std::string(trim(line.substr(colon + 1))));
}

// The header's lines before the summary: version, command, machine and each test's "Options:" block.
void text_header(const std::vector<std::string_view>& lines, std::size_t end, IorHeader& h) {
  std::uint64_t test = 0;
  for (std::size_t i = 0; i < end; ++i) {
    const std::string_view line = trim(lines[i]);
    // "IOR-3.3.0: MPI Coordinated Test of Parallel I/O": the version as the JSON's "Version" gives it.
    if (starts_with(line, "IOR-") && h.version.empty()) h.version = std::string(line.substr(4, line.find(':') - 4));
    if (line != "Options:") {
      if (const auto kv = key_value(line); kv && kv->first == "Command line") h.command = kv->second;
      if (const auto kv = key_value(line); kv && kv->first == "Machine") h.machine = kv->second;
      continue;
    }
    json options = json::object();
    for (++i; i < end && !trim(lines[i]).empty(); ++i) {
      if (const auto kv = key_value(trim(lines[i]))) options[kv->first] = kv->second;
    }
    if (options.contains("ordering in a file") && options["ordering in a file"].is_string()) {
      h.test_params[test]["random"] = options["ordering in a file"].get<std::string>() == "random" ? "1" : "0";
    }
    h.test_options[test++] = options;
  }
}

// Column name -> index; IOR's header has two "StdDev" (MiB, then OPs).
std::map<std::string, std::size_t> text_columns(const ImportInput& input, std::size_t line_no,
                                                const std::vector<std::string_view>& header) {
  std::map<std::string, std::size_t> column;
  int stddevs = 0;
  for (std::size_t i = 0; i < header.size(); ++i) {
    std::string name(header[i]);
    if (name == "StdDev") name = ++stddevs == 1 ? "StdDev(MiB)" : "StdDev(OPs)";
    column.emplace(name, i);
  }
  for (const char* name : {"Operation", "Max(MiB)",    "Min(MiB)", "Mean(MiB)", "StdDev(MiB)", "Max(OPs)", "Min(OPs)",
                           "Mean(OPs)", "StdDev(OPs)", "Mean(s)",  "Test#",     "#Tasks",      "tPN",      "reps",
                           "fPP",       "segcnt",      "blksiz",   "xsize",     "aggs(MiB)",   "API"}) {
    if (!column.contains(name)) {
      fail_at_line(input, line_no, std::string("expected IOR's summary header with a \"") + name + "\" column");
    }
  }
  return column;
}

IorSummary text_row(const ImportInput& input, std::size_t line_no, const std::map<std::string, std::size_t>& column,
                    const std::vector<std::string_view>& words) {
  const auto number = [&](const char* name) {
    const std::string_view word = words[column.at(name)];
    const std::optional<double> v = parse_decimal(word);
    if (!v || *v < 0) {
      fail_at_line(input, line_no,
                   std::string("column ") + name + ": expected a number >= 0, got \"" + std::string(word) + "\"");
    }
    return *v;
  };
  IorSummary s;
  s.operation = std::string(words[column.at("Operation")]);
  s.api = std::string(words[column.at("API")]);
  s.bw_max_mib = number("Max(MiB)");
  s.bw_min_mib = number("Min(MiB)");
  s.bw_mean_mib = number("Mean(MiB)");
  s.bw_sd_mib = number("StdDev(MiB)");
  s.ops_max = number("Max(OPs)");
  s.ops_min = number("Min(OPs)");
  s.ops_mean = number("Mean(OPs)");
  s.ops_sd = number("StdDev(OPs)");
  s.mean_time_s = number("Mean(s)");
  s.test_id = number("Test#");
  s.tasks = number("#Tasks");
  s.tasks_per_node = number("tPN");
  s.repetitions = number("reps");
  s.file_per_proc = number("fPP");
  s.segments = number("segcnt");
  s.block_bytes = number("blksiz");
  s.transfer_bytes = number("xsize");
  s.agg_mib = number("aggs(MiB)");
  return s;
}

}  // namespace

std::vector<ImportedRun> import_ior_text(const ImportInput& input) {
  const std::vector<std::string_view> lines = split_lines(input.text);
  const auto summary =
      std::find_if(lines.begin(), lines.end(), [](std::string_view l) { return trim(l) == "Summary of all tests:"; });
  if (summary == lines.end()) {
    fail_at_line(input, 1, "no \"Summary of all tests:\" line: expected IOR's text output");
  }
  std::size_t i = static_cast<std::size_t>(summary - lines.begin()) + 1;
  while (i < lines.size() && trim(lines[i]).empty()) ++i;
  if (i == lines.size() || !starts_with(trim(lines[i]), "Operation")) {
    fail_at_line(input, i + 1, "expected the summary's header line (\"Operation   Max(MiB) ...\")");
  }
  const std::vector<std::string_view> header = split_words(lines[i]);
  const std::map<std::string, std::size_t> column = text_columns(input, i + 1, header);
  IorHeader h;
  text_header(lines, i, h);
  std::vector<std::pair<std::string, IorSummary>> rows;
  // Rows up to a blank line or the "Finished : ..." line that follows them.
  for (++i; i < lines.size() && !trim(lines[i]).empty() && !starts_with(trim(lines[i]), "Finished"); ++i) {
    const std::vector<std::string_view> words = split_words(lines[i]);
    if (words[0] != "write" && words[0] != "read") {
      fail_at_line(input, i + 1,
                   "expected a summary row of \"write\" or \"read\", got \"" + std::string(words[0]) + "\"");
    }
    if (words.size() != header.size()) {
      fail_at_line(input, i + 1,
                   "expected " + std::to_string(header.size()) + " columns as the header names, got " +
                       std::to_string(words.size()));
    }
    rows.emplace_back("line " + std::to_string(i + 1), text_row(input, i + 1, column, words));
  }
  if (rows.empty()) fail_at_line(input, i + 1, "expected a summary row of \"write\" or \"read\"");
  return ior_runs(input, rows, h, "text");
}

}  // namespace sluice::analysis
