#include "analysis/import_mdtest.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <optional>

namespace sluice::analysis {
namespace {

using nlohmann::json;

// One row of a SUMMARY table.
struct MdtestRow {
  std::string name;  // "File creation"
  double max = 0, min = 0, mean = 0, stddev = 0;
};

// What the lines above a SUMMARY table say.
struct MdtestHeader {
  std::string version;
  std::string command;
  std::optional<std::uint64_t> tasks, nodes, items;
  std::map<std::string, std::string> params;
};

std::string unquoted(std::string_view word) {
  std::string out(word);
  std::erase(out, '\'');
  std::erase(out, '"');
  return out;
}

// The params of mdtest's command line ("Command line used: mdtest '-n' '1000' '-u' ...").
void command_params(std::string_view command, MdtestHeader& h) {
  static const std::map<std::string, std::string> k_valued = {
      {"-n", "files_per_rank"}, {"-i", "iterations"}, {"-w", "write_bytes"}, {"-e", "read_bytes"},
      {"-I", "items_per_dir"},  {"-z", "depth"},      {"-b", "branch"}};
  h.params["iterations"] = "1";
  h.params["unique_dir"] = "0";
  std::vector<std::string> words;
  for (std::string_view w : split_words(command)) words.push_back(unquoted(w));
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (words[i] == "-u") h.params["unique_dir"] = "1";
    if (words[i].size() < 2 || words[i][0] != '-') continue;
    const auto it = k_valued.find(words[i].substr(0, 2));
    if (it == k_valued.end()) continue;
    // "-n 1000" or "-n1000"
    const std::string value = words[i].size() > 2 ? words[i].substr(2) : (i + 1 < words.size() ? words[i + 1] : "");
    if (!value.empty()) h.params[it->second] = value;
  }
}

// A header line: the version/task line, the command line, or the tasks/items line.
void header_line(std::string_view line, MdtestHeader& h) {
  const std::vector<std::string_view> w = split_words(line);
  // "mdtest-3.3.0 was launched with 4 total task(s) on 1 node(s)"
  if (w.size() >= 10 && starts_with(w[0], "mdtest-") && w[1] == "was" && w[2] == "launched") {
    h = MdtestHeader{};
    h.version = std::string(w[0]);
    h.tasks = parse_whole(w[4]);
    h.nodes = parse_whole(w[8]);
  } else if (starts_with(line, "Command line used:")) {
    h.command = std::string(trim(line.substr(std::string_view("Command line used:").size())));
    command_params(h.command, h);
  } else if (w.size() == 4 && w[1] == "tasks," &&
             (w[3] == "files/directories" || w[3] == "files" || w[3] == "directories")) {
    // "4 tasks, 4000 files/directories" ("files" with -F, "directories" with -D)
    if (!h.tasks) h.tasks = parse_whole(w[0]);
    h.items = parse_whole(w[2]);
  }
}

MdtestRow table_row(const ImportInput& input, std::size_t line_no, std::string_view line) {
  const std::vector<std::string_view> w = split_words(line);
  const std::string expected = "expected \"OPERATION [:] MAX MIN MEAN STDDEV\" (an mdtest SUMMARY row), got \"" +
                               std::string(line.substr(0, 80)) + "\"";
  if (w.size() < 5) fail_at_line(input, line_no, expected);
  double values[4] = {};
  for (std::size_t k = 0; k < 4; ++k) {
    const std::optional<double> v = parse_decimal(w[w.size() - 4 + k]);
    if (!v || *v < 0) fail_at_line(input, line_no, expected);
    values[k] = *v;
  }
  MdtestRow row;
  for (std::size_t k = 0; k + 4 < w.size(); ++k) {
    if (w[k] == ":") continue;
    row.name += (row.name.empty() ? "" : " ") + std::string(w[k]);
  }
  if (!row.name.empty() && row.name.back() == ':') row.name.pop_back();
  row.name = std::string(trim(row.name));
  if (row.name.empty()) fail_at_line(input, line_no, expected);
  row.max = values[0];
  row.min = values[1];
  row.mean = values[2];
  row.stddev = values[3];
  return row;
}

// The rows of the table whose "SUMMARY" line is lines[i]; i ends on the line after the table.
std::vector<MdtestRow> table_rows(const ImportInput& input, const std::vector<std::string_view>& lines,
                                  std::size_t& i) {
  const std::size_t summary = i++;
  if (i >= lines.size() || !starts_with(trim(lines[i]), "Operation")) {
    fail_at_line(
        input, i + 1,
        "expected the table header \"Operation  Max  Min  Mean  Std Dev\" after line " + std::to_string(summary + 1));
  }
  ++i;
  if (i < lines.size() && starts_with(trim(lines[i]), "---------")) ++i;
  std::vector<MdtestRow> rows;
  for (; i < lines.size(); ++i) {
    const std::string_view t = trim(lines[i]);
    if (t.empty() || starts_with(t, "--") || starts_with(t, "SUMMARY")) break;
    rows.push_back(table_row(input, i + 1, t));
  }
  if (rows.empty())
    fail_at_line(input, i + 1, "expected at least one row in the table of line " + std::to_string(summary + 1));
  return rows;
}

ImportedPhase mdtest_phase(const MdtestRow& row, const MdtestHeader& h, std::uint32_t ranks) {
  ImportedPhase p;
  p.workload = "md_bench";
  p.phase = mdtest_phase_name(row.name);
  p.ranks = ranks;
  p.last_ops_per_s = row.mean;
  p.extra = {{"ops_per_s_max", row.max}, {"ops_per_s_min", row.min}, {"ops_per_s_stddev", row.stddev}};
  if (!starts_with(row.name, "Tree") && h.items) p.ops = *h.items;  // mdtest counts no tree entries
  if (p.ops > 0 && row.mean > 0) p.last_done_s = static_cast<double>(p.ops) / row.mean;
  const char* per_item = p.phase == "create" ? "write_bytes" : (p.phase == "read" ? "read_bytes" : nullptr);
  if (per_item != nullptr && h.params.contains(per_item)) {
    const std::uint64_t bytes = parse_whole(h.params.at(per_item)).value_or(0);
    if (bytes > 0 && p.ops <= std::numeric_limits<std::uint64_t>::max() / bytes) {
      p.bytes = p.ops * bytes;
      p.last_bytes_per_s = row.mean * static_cast<double>(bytes);
    }
  }
  return p;
}

ImportedRun mdtest_run(const ImportInput& input, const MdtestHeader& h, const std::vector<MdtestRow>& rows,
                       std::size_t line_no) {
  ImportedRun r;
  r.workload_kind = "md_bench";
  r.params = h.params;
  constexpr std::uint64_t k_most = std::numeric_limits<std::uint32_t>::max();
  if (h.tasks) r.params["ranks"] = std::to_string(*h.tasks);
  r.client_ranks = static_cast<std::uint32_t>(std::min(k_most, h.tasks.value_or(0)));
  r.nodes = static_cast<std::uint32_t>(std::min(k_most, h.nodes.value_or(0)));
  r.source = {{"tool", "mdtest"},     {"file", input.path},   {"format", "text"},
              {"version", h.version}, {"command", h.command}, {"line", line_no}};
  for (const MdtestRow& row : rows) {
    if (row.max == 0 && row.mean == 0) continue;  // an operation this run did not do (mdtest prints 0)
    if (r.phases.size() == k_import_max_phases_per_run)
      fail_at_line(input, line_no, "more than k_import_max_phases_per_run rows");
    r.phases.push_back(mdtest_phase(row, h, r.client_ranks));
  }
  return r;
}

// A "SUMMARY time:" table: each operation's mean time replaces the derived one
// (a mean printed as 0.000 s is below mdtest's resolution: not a duration).
void apply_times(const std::vector<MdtestRow>& rows, ImportedRun& r) {
  for (const MdtestRow& row : rows) {
    if (!(row.mean > 0)) continue;
    const std::string name = mdtest_phase_name(row.name);
    for (ImportedPhase& p : r.phases) {
      if (p.phase != name) continue;
      p.last_done_s = row.mean;
      p.extra["done_s_max"] = row.max;
      p.extra["done_s_min"] = row.min;
    }
  }
}

}  // namespace

std::vector<ImportedRun> import_mdtest_text(const ImportInput& input) {
  const std::vector<std::string_view> lines = split_lines(input.text);
  MdtestHeader h;
  std::vector<ImportedRun> runs;
  std::size_t i = 0;
  while (i < lines.size()) {
    const std::string_view t = trim(lines[i]);
    if (starts_with(t, "SUMMARY rate") || starts_with(t, "SUMMARY:")) {  // "SUMMARY:" before mdtest 3
      const std::size_t line_no = i + 1;
      runs.push_back(mdtest_run(input, h, table_rows(input, lines, i), line_no));
    } else if (starts_with(t, "SUMMARY time")) {
      if (runs.empty()) fail_at_line(input, i + 1, "a \"SUMMARY time:\" table before any \"SUMMARY rate:\" table");
      apply_times(table_rows(input, lines, i), runs.back());
    } else {
      header_line(t, h);
      ++i;
    }
  }
  if (runs.empty()) fail_at_line(input, 1, "no \"SUMMARY rate:\" table: expected mdtest's output");
  return runs;
}

std::string mdtest_phase_name(std::string_view operation) {
  static const std::map<std::string, std::string, std::less<>> k_names = {{"File creation", "create"},
                                                                          {"File stat", "stat"},
                                                                          {"File read", "read"},
                                                                          {"File removal", "remove"},
                                                                          {"Directory creation", "dir_create"},
                                                                          {"Directory stat", "dir_stat"},
                                                                          {"Directory rename", "dir_rename"},
                                                                          {"Directory removal", "dir_remove"},
                                                                          {"Tree creation", "tree_create"},
                                                                          {"Tree removal", "tree_remove"}};
  const std::string_view name = trim(operation);
  if (const auto it = k_names.find(name); it != k_names.end()) return it->second;
  std::string out;
  for (char c : name) out += c == ' ' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace sluice::analysis
