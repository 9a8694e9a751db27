#include "analysis/import_elbencho.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

namespace sluice::analysis {
namespace {

using nlohmann::json;

constexpr double k_bytes_per_mib = 1024.0 * 1024.0;

// One elbencho result line: its configuration and its phase.
struct ElbenchoRow {
  std::size_t line = 0;
  std::map<std::string, std::string> config;  // sluice param name -> value
  json options = json::object();              // the configuration as elbencho wrote it
  std::string label;
  std::string version;
  ImportedPhase phase;
};

// The measured values of one phase, in elbencho's units, whichever file they came from.
struct ElbenchoValues {
  std::optional<double> first_ms, last_ms;
  std::optional<double> first_bytes_per_s, last_bytes_per_s;
  std::optional<double> first_iops, last_iops, first_entries_per_s, last_entries_per_s;
  std::optional<double> bytes, entries, cpu_pct;
  std::optional<double> latency_mean_us, latency_min_us, latency_max_us;
};

std::string lower(std::string_view text) {
  std::string out;
  for (char c : text) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// elbencho writes booleans as 0/1 (CSV) or true/false (JSON); params say 0/1 as fio does.
std::string flag_text(const std::string& value) {
  if (value == "true") return "1";
  if (value == "false") return "0";
  return value;
}

// Params and the point's size from elbencho's configuration (sluice name -> value).
void fill_run_config(const std::map<std::string, std::string>& config, ImportedRun& r) {
  for (const char* name :
       {"threads", "hosts", "bs_bytes", "size_bytes", "direct", "random", "iodepth", "files", "dirs"}) {
    if (const auto it = config.find(name); it != config.end() && !it->second.empty()) r.params[name] = it->second;
  }
  constexpr std::uint64_t k_most = std::numeric_limits<std::uint32_t>::max();
  const auto number = [&](const char* name, std::uint64_t absent) {
    const auto it = config.find(name);
    return std::min(k_most, it == config.end() ? absent : parse_whole(it->second).value_or(absent));
  };
  r.client_ranks = static_cast<std::uint32_t>(std::min(k_most, number("threads", 0) * number("hosts", 1)));
  r.nodes = static_cast<std::uint32_t>(number("hosts", 1));
  r.queue_depth = static_cast<std::uint32_t>(number("iodepth", 0));
}

void set_phase_values(const ImportInput& input, const std::string& where, const ElbenchoValues& v, ImportedPhase& p) {
  if (v.first_ms) p.first_done_s = *v.first_ms / 1000.0;
  if (v.last_ms) p.last_done_s = *v.last_ms / 1000.0;
  if (v.first_bytes_per_s) p.first_bytes_per_s = *v.first_bytes_per_s;
  if (v.last_bytes_per_s) p.last_bytes_per_s = *v.last_bytes_per_s;
  const bool io_phase = v.last_iops.has_value();
  const std::optional<double> first_ops = io_phase ? v.first_iops : v.first_entries_per_s;
  const std::optional<double> last_ops = io_phase ? v.last_iops : v.last_entries_per_s;
  if (first_ops) p.first_ops_per_s = *first_ops;
  if (last_ops) p.last_ops_per_s = *last_ops;
  if (v.bytes) p.bytes = whole_count(input, where, *v.bytes);
  if (io_phase && v.last_ms) {
    p.ops = whole_count(input, where, *v.last_iops * *v.last_ms / 1000.0);
  } else if (v.entries) {
    p.ops = whole_count(input, where, *v.entries);
  }
  const std::pair<const char*, std::optional<double>> extras[] = {
      {"latency_us_mean", v.latency_mean_us},
      {"latency_us_min", v.latency_min_us},
      {"latency_us_max", v.latency_max_us},
      {"entries", v.entries},
      {"entries_per_s", io_phase ? v.last_entries_per_s : std::nullopt},
      {"cpu_pct", v.cpu_pct}};
  for (const auto& [name, value] : extras) {
    if (value) p.extra[name] = *value;
  }
}

// Rows into runs: a run holds consecutive rows of one configuration, each phase once.
std::vector<ImportedRun> group_rows(const ImportInput& input, std::vector<ElbenchoRow>& rows, const char* format) {
  std::vector<ImportedRun> runs;
  std::string current;
  for (ElbenchoRow& row : rows) {
    const std::string key = row.options.dump() + "|" + row.label;
    const bool repeated =
        !runs.empty() && std::any_of(runs.back().phases.begin(), runs.back().phases.end(),
                                     [&](const ImportedPhase& p) { return p.phase == row.phase.phase; });
    if (runs.empty() || key != current || repeated) {
      ImportedRun r;
      r.label = row.label;
      fill_run_config(row.config, r);
      r.source = {{"tool", "elbencho"},     {"file", input.path},     {"format", format},
                  {"version", row.version}, {"options", row.options}, {"lines", json::array()}};
      runs.push_back(std::move(r));
      current = key;
    }
    ImportedRun& r = runs.back();
    if (r.phases.size() == k_import_max_phases_per_run) {
      fail_at_line(input, row.line, "more than k_import_max_phases_per_run phases of one configuration");
    }
    row.phase.ranks = r.client_ranks;
    r.phases.push_back(std::move(row.phase));
    r.source["lines"].push_back(row.line);
  }
  return runs;
}

// ---- CSV ----

// One CSV line's fields. elbencho quotes nothing: it writes the label without
// commas and replaces the commas of the command line by spaces, so a comma
// always separates fields (its command field holds '"' of its own).
std::vector<std::string> csv_fields(std::string_view line) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    fields.emplace_back(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) return fields;
    start = comma + 1;
  }
}

struct CsvTable {
  std::map<std::string, std::size_t> column;  // header label -> index
  std::vector<std::string> header;
};

std::optional<double> cell(const ImportInput& input, std::size_t line, const CsvTable& t,
                           const std::vector<std::string>& fields, const char* label) {
  const auto it = t.column.find(label);
  if (it == t.column.end()) return std::nullopt;
  const std::string_view text = trim(fields[it->second]);
  if (text.empty()) return std::nullopt;
  const std::optional<double> v = parse_decimal(text);
  if (!v || *v < 0) {
    fail_at_line(input, line,
                 std::string("column \"") + label + "\": expected a number >= 0, got \"" + std::string(text) + "\"");
  }
  return v;
}

ElbenchoValues csv_values(const ImportInput& input, std::size_t line, const CsvTable& t,
                          const std::vector<std::string>& f) {
  const auto c = [&](const char* label) { return cell(input, line, t, f, label); };
  const auto mib = [](std::optional<double> v) { return v ? std::optional<double>(*v * k_bytes_per_mib) : v; };
  ElbenchoValues v;
  v.first_ms = c("time ms [first]");
  v.last_ms = c("time ms [last]");
  if (!v.last_ms) fail_at_line(input, line, "column \"time ms [last]\": expected a number, got an empty cell");
  v.first_bytes_per_s = mib(c("MiB/s [first]"));
  v.last_bytes_per_s = mib(c("MiB/s [last]"));
  v.first_iops = c("IOPS [first]");
  v.last_iops = c("IOPS [last]");
  v.first_entries_per_s = c("entries/s [first]");
  v.last_entries_per_s = c("entries/s [last]");
  v.bytes = mib(c("MiB [last]"));
  v.entries = c("entries [last]");
  v.cpu_pct = c("CPU% [last]");
  const bool io = c("IO lat us [avg]").has_value();
  v.latency_mean_us = io ? c("IO lat us [avg]") : c("Ent lat us [avg]");
  v.latency_min_us = io ? c("IO lat us [min]") : c("Ent lat us [min]");
  v.latency_max_us = io ? c("IO lat us [max]") : c("Ent lat us [max]");
  return v;
}

ElbenchoRow csv_row(const ImportInput& input, std::size_t line, const CsvTable& t, const std::vector<std::string>& f) {
  ElbenchoRow row;
  row.line = line;
  const std::size_t operation = t.column.at("operation");
  const std::pair<const char*, const char*> names[] = {
      {"threads", "threads"},      {"hosts", "hosts"},      {"block size", "bs_bytes"},
      {"file size", "size_bytes"}, {"direct IO", "direct"}, {"random", "random"},
      {"IO depth", "iodepth"},     {"files", "files"},      {"dirs", "dirs"}};
  for (const auto& [label, param] : names) {
    if (const auto it = t.column.find(label); it != t.column.end()) row.config[param] = flag_text(f[it->second]);
  }
  for (std::size_t i = 0; i < t.header.size(); ++i) {
    const std::string& name = t.header[i];
    if ((i < operation && name != "ISO date") || name == "command") row.options[name] = f[i];
  }
  if (const auto it = t.column.find("label"); it != t.column.end()) row.label = f[it->second];
  if (const auto it = t.column.find("version"); it != t.column.end()) row.version = f[it->second];
  row.phase.workload = "file_sweep";
  row.phase.phase = elbencho_phase_name(trim(f[operation]));
  if (row.phase.phase.empty()) fail_at_line(input, line, "column \"operation\": expected a phase name, got \"\"");
  const ImportInput record{input.path + ":" + std::to_string(line), std::string()};  // names the line in errors
  set_phase_values(record, "", csv_values(input, line, t, f), row.phase);
  return row;
}

// ---- JSON ----

// elbencho's latency subtree: last_done.latency.IO (I/O) or .entries (metadata).
void json_latency(const ImportInput& record, const json& last, ElbenchoValues& v) {
  if (!last.contains("latency")) return;
  const json& latency = json_object_field(record, last, "last_done", "latency");
  const char* kind = latency.contains("IO") ? "IO" : (latency.contains("entries") ? "entries" : nullptr);
  if (kind == nullptr) return;
  const json& lat = json_object_field(record, latency, "last_done.latency", kind);
  const std::string at = std::string("last_done.latency.") + kind;
  v.latency_mean_us = json_optional_amount(record, lat, at, "avg_us", QuotedNumbers::accepted);
  v.latency_min_us = json_optional_amount(record, lat, at, "min_us", QuotedNumbers::accepted);
  v.latency_max_us = json_optional_amount(record, lat, at, "max_us", QuotedNumbers::accepted);
}

ElbenchoValues json_values(const ImportInput& record, const json& obj) {
  constexpr QuotedNumbers q = QuotedNumbers::accepted;
  const json& last = json_object_field(record, obj, "", "last_done");
  ElbenchoValues v;
  v.last_ms = json_amount_field(record, last, "last_done", "elapsed_time_ms", q);
  v.last_bytes_per_s = json_optional_amount(record, last, "last_done", "bytes/s", q);
  v.last_iops = json_optional_amount(record, last, "last_done", "iops", q);
  v.last_entries_per_s = json_optional_amount(record, last, "last_done", "entries/s", q);
  v.bytes = json_optional_amount(record, last, "last_done", "bytes", q);
  v.entries = json_optional_amount(record, last, "last_done", "entries", q);
  v.cpu_pct = json_optional_amount(record, last, "last_done", "cpu%", q);
  if (obj.contains("first_done")) {
    const json& first = json_object_field(record, obj, "", "first_done");
    v.first_ms = json_optional_amount(record, first, "first_done", "elapsed_time_ms", q);
    v.first_bytes_per_s = json_optional_amount(record, first, "first_done", "bytes/s", q);
    v.first_iops = json_optional_amount(record, first, "first_done", "iops", q);
    v.first_entries_per_s = json_optional_amount(record, first, "first_done", "entries/s", q);
  }
  json_latency(record, last, v);
  return v;
}

ElbenchoRow json_row(const ImportInput& record, std::size_t line, const json& obj) {
  if (!obj.is_object()) fail_at_field(record, "", "expected an object, got " + std::string(obj.type_name()));
  ElbenchoRow row;
  row.line = line;
  const json& config = json_object_field(record, obj, "", "config");
  const std::pair<const char*, const char*> names[] = {
      {"threads", "threads"},      {"hosts", "hosts"},      {"block_size", "bs_bytes"},
      {"file_size", "size_bytes"}, {"direct_io", "direct"}, {"random_offsets", "random"},
      {"io_depth", "iodepth"},     {"files", "files"},      {"dirs", "dirs"}};
  for (const auto& [field, param] : names) {
    if (!config.contains(field)) continue;
    if (!config[field].is_primitive() || config[field].is_null()) {
      fail_at_field(record, field_path("config", field),
                    "expected a scalar, got " + std::string(config[field].type_name()));
    }
    row.config[param] = flag_text(scalar_text(config[field]));
  }
  row.options = config;
  if (obj.contains("label")) row.label = json_text_field(record, obj, "", "label");
  if (config.contains("version")) row.version = scalar_text(config["version"]);
  row.phase.workload = "file_sweep";
  row.phase.phase = elbencho_phase_name(json_text_field(record, obj, "", "phase_type"));
  set_phase_values(record, "last_done", json_values(record, obj), row.phase);
  return row;
}

}  // namespace

std::vector<ImportedRun> import_elbencho_csv(const ImportInput& input) {
  const std::vector<std::string_view> lines = split_lines(input.text);
  std::size_t first = 0;
  while (first < lines.size() && trim(lines[first]).empty()) ++first;
  CsvTable t;
  if (first < lines.size()) t.header = csv_fields(lines[first]);
  for (std::size_t i = 0; i < t.header.size(); ++i) t.column.emplace(std::string(trim(t.header[i])), i);
  for (const char* label : {"operation", "time ms [first]", "time ms [last]"}) {
    if (!t.column.contains(label)) {
      fail_at_line(input, first + 1,
                   std::string("expected elbencho's CSV header naming \"") + label +
                       "\" (elbencho --csvfile writes it unless --nocsvlabels)");
    }
  }
  std::vector<ElbenchoRow> rows;
  for (std::size_t i = first + 1; i < lines.size(); ++i) {
    if (trim(lines[i]).empty() || lines[i] == lines[first]) continue;  // a header again: another run appended
    const std::vector<std::string> fields = csv_fields(lines[i]);
    if (fields.size() != t.header.size()) {
      fail_at_line(input, i + 1,
                   "expected " + std::to_string(t.header.size()) + " fields as the header names, got " +
                       std::to_string(fields.size()));
    }
    rows.push_back(csv_row(input, i + 1, t, fields));
  }
  if (rows.empty()) fail_at_line(input, first + 1, "a header and no result row: expected one row per phase");
  return group_rows(input, rows, "csv");
}

std::vector<ImportedRun> import_elbencho_json(const ImportInput& input) {
  std::vector<ElbenchoRow> rows;
  std::size_t pos = 0;
  std::size_t line = 0;
  while (pos < input.text.size()) {
    std::size_t end = input.text.find('\n', pos);
    if (end == std::string::npos) end = input.text.size();
    ++line;
    if (!trim(std::string_view(input.text).substr(pos, end - pos)).empty()) {
      const json obj = parse_json_at(input, pos, end);
      // Field errors name the line: the record's own "file:line".
      const ImportInput record{input.path + ":" + std::to_string(line), std::string()};
      rows.push_back(json_row(record, line, obj));
    }
    pos = end + 1;
  }
  if (rows.empty()) fail_at_line(input, 1, "no result: expected one JSON object per phase (elbencho --jsonfile)");
  return group_rows(input, rows, "json");
}

std::string elbencho_phase_name(std::string_view operation) {
  static const std::map<std::string, std::string, std::less<>> k_names = {{"WRITE", "write"},    {"READ", "read"},
                                                                          {"MKDIRS", "mkdir"},   {"RMDIRS", "rmdir"},
                                                                          {"RMFILES", "delete"}, {"STAT", "stat"}};
  const std::string_view name = trim(operation);
  if (const auto it = k_names.find(name); it != k_names.end()) return it->second;
  return lower(name);
}

}  // namespace sluice::analysis
