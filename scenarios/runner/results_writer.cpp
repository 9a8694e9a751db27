#include "scenarios/runner/results_writer.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include <fmt/core.h>
#include <nlohmann/json.hpp>
#if __has_include(<simgrid/version.h>)
#include <xbt/base.h>  // version.h's declaration macros
#include <simgrid/version.h>
#endif

#include "core/common/byte_size.hpp"
#include "core/common/quantity.hpp"
#include "scenarios/runner/result_codec.hpp"
#include "scenarios/runner/runner.hpp"

namespace sluice::scenario {
namespace {

// Table: the parameter/configuration list of a row is cut to this (the CSV has them all), and so is a label.
constexpr std::size_t k_table_params_chars = 40;
constexpr std::size_t k_table_label_chars = 24;
// results.csv's columns from workload to placed_binding_resource (a run without phases leaves them empty).
constexpr std::size_t k_csv_phase_columns = 19;

using Values = std::map<std::string, std::string>;

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// A measured number: six significant digits; empty when not measured (NaN) or not finite.
std::string csv_number(double v) {
  if (!std::isfinite(v)) return "";
  return fmt::format("{:.6g}", v);
}

// A parameter's value: whole numbers in full (4194304, not 4.1943e+06), others as they round-trip.
std::string csv_number_exact(double v) {
  if (!std::isfinite(v)) return "";
  if (v == std::floor(v) && std::fabs(v) < 9e15) return fmt::format("{:.0f}", v);
  return fmt::format("{}", v);
}

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// A run_config value as text: strings as they are, booleans true/false, numbers as in the CSV.
std::string config_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer()) return v.dump();
  if (v.is_number()) return csv_number(v.get<double>());
  return v.dump();
}

Values config_values(const ScenarioSpec& spec) {
  Values out;
  const nlohmann::json config = run_config(spec);  // alive through the loop (items() refers to it)
  for (const auto& [name, value] : config.items()) out[name] = config_text(value);
  return out;
}

// A run's parameters and configuration values; a parameter wins over a configuration value of its name.
Values point_values(const RunResult& r) {
  Values v = r.spec.params;
  for (auto& [name, value] : config_values(r.spec)) v.emplace(name, std::move(value));
  return v;
}

// The keys whose values differ between the runs (an absent key counts as a value).
std::set<std::string> varying_keys(const std::vector<Values>& runs) {
  std::set<std::string> all, varying;
  for (const Values& r : runs) {
    for (const auto& [k, v] : r) all.insert(k);
  }
  for (const std::string& k : all) {
    std::set<std::string> values;
    for (const Values& r : runs) {
      auto it = r.find(k);
      values.insert(it == r.end() ? std::string("\x01") : it->second);  // \x01: absent
    }
    if (values.size() > 1) varying.insert(k);
  }
  return varying;
}

std::string values_text(const Values& values, const std::set<std::string>& shown) {
  std::string out;
  for (const auto& [k, v] : values) {
    if (shown.count(k) != 0) out += (out.empty() ? "" : " ") + k + "=" + v;
  }
  if (out.size() > k_table_params_chars) out = out.substr(0, k_table_params_chars - 3) + "...";
  return out;
}

// A latency cell of the table: "-" when it was not measured.
std::string table_latency(double us) { return std::isfinite(us) ? fmt::format("{:.1f}", us) : std::string("-"); }

std::string cut(const std::string& text, std::size_t chars) {
  return text.size() <= chars ? text : text.substr(0, chars - 3) + "...";
}

// A param_ or config_ column of results.csv, and the numeric column that follows it where every
// value of the column is a quantity with a unit ("256KiB" -> param_block_bytes = 262144).
enum class QuantityKind : std::uint8_t { none, bytes, bytes_per_s, seconds };

struct ValueColumn {
  std::string name;  // "param_block", "config_cluster"
  bool is_param = true;
  std::string key;
  QuantityKind quantity = QuantityKind::none;
};

bool has_letter(const std::string& text) {
  return std::any_of(text.begin(), text.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; });
}

// A script parameter's whole list ("{4MiB, 12MiB}"): the script's axis, not one point's value.
bool is_list(const std::string& text) {
  return text.size() >= 2 &&
         ((text.front() == '{' && text.back() == '}') || (text.front() == '[' && text.back() == ']'));
}

// The numeric value of a quantity of `kind`, in bytes, bytes/s or seconds; nullopt when it is not one.
std::optional<double> quantity_value(const std::string& text, QuantityKind kind) {
  switch (kind) {
    case QuantityKind::bytes:
      if (Result<std::uint64_t> b = parse_size(text); b.ok()) return static_cast<double>(*b);
      return std::nullopt;
    case QuantityKind::bytes_per_s:
      if (Result<double> r = parse_rate(text); r.ok()) return *r;
      return std::nullopt;
    case QuantityKind::seconds:
      if (Result<TimeNs> d = parse_duration(text); d.ok())
        return static_cast<double>(*d) / static_cast<double>(k_ns_per_s);
      return std::nullopt;
    case QuantityKind::none: break;
  }
  return std::nullopt;
}

// The kind every value is a quantity of, with a unit in at least one (plain numbers need no second column).
QuantityKind quantity_kind(const std::vector<std::string>& values) {
  if (std::none_of(values.begin(), values.end(), has_letter)) return QuantityKind::none;
  for (QuantityKind kind : {QuantityKind::bytes, QuantityKind::bytes_per_s, QuantityKind::seconds}) {
    if (std::all_of(values.begin(), values.end(), [&](const std::string& v) { return quantity_value(v, kind); })) {
      return kind;
    }
  }
  return QuantityKind::none;
}

std::string_view quantity_suffix(QuantityKind kind) {
  switch (kind) {
    case QuantityKind::bytes: return "_bytes";
    case QuantityKind::bytes_per_s: return "_bytes_per_s";
    case QuantityKind::seconds: return "_s";
    case QuantityKind::none: break;
  }
  return "";
}

// The param_ and config_ columns: every key of any run, sorted, less those whose values are all lists.
std::vector<ValueColumn> value_columns(const std::vector<RunResult>& runs, const std::vector<Values>& configs) {
  std::map<std::string, std::vector<std::string>> params_seen, configs_seen;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    for (const auto& [k, v] : runs[i].spec.params) params_seen[k].push_back(v);
    for (const auto& [k, v] : configs[i]) configs_seen[k].push_back(v);
  }
  std::vector<ValueColumn> columns;
  for (bool is_param : {true, false}) {
    for (auto& [key, values] : is_param ? params_seen : configs_seen) {
      std::erase_if(values, [](const std::string& v) { return v.empty(); });
      if (!values.empty() && std::all_of(values.begin(), values.end(), is_list)) continue;
      columns.push_back({(is_param ? "param_" : "config_") + key, is_param, key, quantity_kind(values)});
    }
  }
  return columns;
}

std::string csv_header(const std::vector<ValueColumn>& columns, const std::set<std::string>& extras) {
  std::string out = "run,scenario,label,backend,seed,ok,error";
  for (const ValueColumn& c : columns) {
    out += "," + csv_field(c.name);
    if (c.quantity != QuantityKind::none) out += "," + csv_field(c.name + std::string(quantity_suffix(c.quantity)));
  }
  out +=
      ",workload,phase,ranks,bytes,ops,first_done_s,elapsed_s,throughput_GB_per_s,first_throughput_GB_per_s,"
      "ops_per_s,first_ops_per_s,latency_us_p50,latency_us_p99,bound_GB_per_s,of_bound,binding_resource,"
      "placed_bound_GB_per_s,of_placed_bound,placed_binding_resource";
  for (const std::string& e : extras) out += "," + csv_field(e);
  return out + "\n";
}

// The columns of run i up to its last config_ column (and its numeric twin).
std::string csv_run_head(std::size_t i, const RunResult& r, const Values& config,
                         const std::vector<ValueColumn>& columns) {
  std::string head = std::to_string(i) + "," + csv_field(r.spec.scenario) + "," + csv_field(r.spec.label) + "," +
                     std::string(to_string(r.backend)) + "," + std::to_string(r.spec.seed) + "," +
                     (r.ok ? "true" : "false") + "," + csv_field(r.error);
  for (const ValueColumn& c : columns) {
    const Values& values = c.is_param ? r.spec.params : config;
    auto it = values.find(c.key);
    const std::string text = it == values.end() ? std::string() : it->second;
    head += "," + csv_field(text);
    if (c.quantity == QuantityKind::none) continue;
    const std::optional<double> v = text.empty() ? std::nullopt : quantity_value(text, c.quantity);
    head += "," + (v ? csv_number_exact(*v) : std::string());
  }
  return head;
}

// The phase's rate as a fraction of a bound (NaN without one).
double of_bound(const PhaseRow& p, double bound_bytes_per_s) {
  return bound_bytes_per_s > 0 ? p.last_bytes_per_s / bound_bytes_per_s : std::numeric_limits<double>::quiet_NaN();
}

std::string csv_phase(const PhaseRow& p, const std::set<std::string>& extras) {
  std::string out = "," + csv_field(p.workload) + "," + csv_field(p.phase) + "," + std::to_string(p.ranks) + "," +
                    std::to_string(p.bytes) + "," + std::to_string(p.ops) + "," + csv_number(p.first_done_s) + "," +
                    csv_number(p.last_done_s) + "," + csv_number(p.last_bytes_per_s / k_bytes_per_gb) + "," +
                    csv_number(p.first_bytes_per_s / k_bytes_per_gb) + "," + csv_number(p.last_ops_per_s) + "," +
                    csv_number(p.first_ops_per_s) + "," + csv_number(p.latency_us_p50) + "," +
                    csv_number(p.latency_us_p99) + "," + csv_number(p.bound_bytes_per_s / k_bytes_per_gb) + "," +
                    csv_number(of_bound(p, p.bound_bytes_per_s)) + "," + csv_field(p.binding_resource) + "," +
                    csv_number(p.placed_bound_bytes_per_s / k_bytes_per_gb) + "," +
                    csv_number(of_bound(p, p.placed_bound_bytes_per_s)) + "," + csv_field(p.placed_binding_resource);
  for (const std::string& e : extras) {
    auto it = p.extra.find(e);
    out += "," + (it == p.extra.end() ? std::string() : csv_number(it->second));
  }
  return out;
}

}  // namespace

Status write_atomically(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::path temporary = path;
  temporary += ".tmp";
  std::ofstream f(temporary, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  std::error_code ec;
  if (!f) {
    std::filesystem::remove(temporary, ec);
    return error(StatusCode::io_error, "results: cannot write " + temporary.string());
  }
  std::filesystem::rename(temporary, path, ec);
  if (ec) return error(StatusCode::io_error, "results: cannot replace " + path.string() + ": " + ec.message());
  return ok_status();
}

nlohmann::json build_versions() {
  nlohmann::json v;
  v["sluice"] = k_sluice_version;
#ifdef SIMGRID_VERSION_MAJOR
  v["simgrid"] = fmt::format("{}.{}.{}", SIMGRID_VERSION_MAJOR, SIMGRID_VERSION_MINOR, SIMGRID_VERSION_PATCH);
#endif
  v["nlohmann_json"] =
      fmt::format("{}.{}.{}", NLOHMANN_JSON_VERSION_MAJOR, NLOHMANN_JSON_VERSION_MINOR, NLOHMANN_JSON_VERSION_PATCH);
  v["compiler"] = __VERSION__;
  return v;
}

MachineInfo this_machine() {
  MachineInfo m;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) m.hostname = host;
  m.cores = std::thread::hardware_concurrency();
  utsname u{};
  if (::uname(&u) == 0) m.os = std::string(u.sysname) + " " + u.release + " " + u.machine;
  return m;
}

// A number of an sl.mlperf row: null when not measured.
nlohmann::json measured_json(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

nlohmann::json mlperf_json(const MlperfRow& m) {
  return {{"workload", m.workload},
          {"clients", m.clients},
          {"accelerators", m.accelerators},
          {"accelerators_per_client", m.accelerators_per_client},
          {"au_threshold", m.au_threshold},
          {"au", measured_json(m.au)},
          {"throughput_mib_per_s", measured_json(m.throughput_mib_per_s)},
          {"samples_per_s", measured_json(m.samples_per_s)},
          {"binding_resource", m.binding_resource},
          {"probes", m.probes},
          {"stopped", m.stopped},
          {"dataset_files", m.dataset_files},
          {"dataset_bytes", m.dataset_bytes},
          {"client_memory_bytes", m.client_memory_bytes},
          {"datasize_min_files", m.datasize_min_files},
          {"meets_datasize", m.meets_datasize}};
}

nlohmann::json results_document(std::string_view scenario, const std::vector<RunResult>& runs,
                                const ScriptFindings& findings, Completeness completeness) {
  const MachineInfo m = this_machine();
  nlohmann::json doc;
  doc["format"] = k_results_format;
  doc["version"] = k_results_version;
  doc["scenario"] = scenario;
  doc["complete"] = completeness == Completeness::complete;
  doc["sluice_version"] = k_sluice_version;
  doc["created_utc"] = utc_now();
  doc["machine"] = {{"hostname", m.hostname}, {"cores", m.cores}, {"os", m.os}};
  doc["versions"] = build_versions();
  doc["runs"] = nlohmann::json::array();
  for (const RunResult& r : runs) doc["runs"].push_back(to_json(r));
  doc["headlines"] = findings.headlines;
  doc["claims"] = nlohmann::json::array();
  for (const Claim& c : findings.claims) {
    nlohmann::json j{{"text", c.text}, {"where", c.where}, {"seed_figure", c.seed_figure}, {"holds", c.holds}};
    // A non-finite measurement is written as null (the schema's metric).
    j["measured"] = std::isfinite(c.measured) ? nlohmann::json(c.measured) : nlohmann::json(nullptr);
    if (c.at_least) j["at_least"] = *c.at_least;
    if (c.at_most) j["at_most"] = *c.at_most;
    j["kind"] = c.is_seed_figure() ? "seed_figure" : "shape";
    if (c.seed_value) {
      j["seed_value"] = *c.seed_value;
      j["tolerance"] = c.tolerance;
      if (!c.tolerance_why.empty()) j["tolerance_why"] = c.tolerance_why;
      if (c.model_input) j["model_input"] = true;
      const double e = c.relative_error();
      j["relative_error"] = std::isfinite(e) ? nlohmann::json(e) : nlohmann::json(nullptr);
    }
    doc["claims"].push_back(std::move(j));
  }
  if (!findings.mlperf.empty()) {
    doc["mlperf"] = nlohmann::json::array();
    for (const MlperfRow& row : findings.mlperf) doc["mlperf"].push_back(mlperf_json(row));
  }
  return doc;
}

std::string results_csv(const std::vector<RunResult>& runs) {
  std::vector<Values> configs;
  std::set<std::string> extras;
  for (const RunResult& r : runs) {
    configs.push_back(config_values(r.spec));
    for (const PhaseRow& p : r.phases) {
      for (const auto& [k, v] : p.extra) extras.insert(k);
    }
  }
  const std::vector<ValueColumn> columns = value_columns(runs, configs);
  std::string out = csv_header(columns, extras);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RunResult& r = runs[i];
    const std::string head = csv_run_head(i, r, configs[i], columns);
    if (r.phases.empty()) {
      out += head + std::string(k_csv_phase_columns + extras.size(), ',') + "\n";
      continue;
    }
    for (const PhaseRow& p : r.phases) out += head + csv_phase(p, extras) + "\n";
  }
  return out;
}

std::string progress_csv(const std::vector<RunResult>& runs) {
  std::string out = "run,workload,phase,window_start_s,window_s,throughput_GB_per_s\n";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    for (const PhaseRow& p : runs[i].phases) {
      for (std::size_t w = 0; w < p.progress_bytes_per_s.size(); ++w) {
        out += std::to_string(i) + "," + csv_field(p.workload) + "," + csv_field(p.phase) + "," +
               csv_number(static_cast<double>(w) * p.progress_window_s) + "," + csv_number(p.progress_window_s) + "," +
               csv_number(p.progress_bytes_per_s[w] / k_bytes_per_gb) + "\n";
      }
    }
  }
  return out;
}

std::string results_table(const std::vector<RunResult>& runs) {
  std::vector<Values> values;
  std::size_t label_chars = 0;
  for (const RunResult& r : runs) {
    values.push_back(point_values(r));
    label_chars = std::max(label_chars, std::min(r.spec.label.size(), k_table_label_chars));
  }
  if (label_chars > 0) label_chars = std::max(label_chars, std::string_view("label").size());
  // What tells the rows apart: the parameters and configuration values that vary; when none does, the parameters.
  std::set<std::string> shown = varying_keys(values);
  if (shown.empty()) {
    for (const RunResult& r : runs) {
      for (const auto& [k, v] : r.spec.params) shown.insert(k);
    }
  }
  const auto label_column = [&](const std::string& label) {
    return label_chars == 0 ? std::string() : fmt::format("{:<{}} ", cut(label, k_table_label_chars), label_chars);
  };
  std::string out =
      fmt::format("{:>4} {:<7} {}{:<{}} {:<22} {:>6} {:>10} {:>8} {:>12} {:>10} {:>10} {:>10}\n", "run", "backend",
                  label_column("label"), "params/config", k_table_params_chars, "workload/phase", "ranks", "GB/s",
                  "of_bound", "ops/s", "elapsed_s", "p50_us", "p99_us");
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RunResult& r = runs[i];
    const std::string lead = fmt::format("{:>4} {:<7} {}{:<{}}", i, to_string(r.backend), label_column(r.spec.label),
                                         values_text(values[i], shown), k_table_params_chars);
    for (const PhaseRow& p : r.phases) {
      const double fraction = of_bound(p, p.bound_bytes_per_s);
      out += fmt::format("{} {:<22} {:>6} {:>10.3f} {:>8} {:>12.1f} {:>10.4f} {:>10} {:>10}\n", lead,
                         p.workload + "/" + p.phase, p.ranks, p.last_bytes_per_s / k_bytes_per_gb,
                         std::isfinite(fraction) ? fmt::format("{:.2f}", fraction) : std::string("-"), p.last_ops_per_s,
                         p.last_done_s, table_latency(p.latency_us_p50), table_latency(p.latency_us_p99));
    }
    if (!r.ok) out += fmt::format("{} FAILED: {}\n", lead, r.error);
  }
  std::size_t failed = 0;
  for (const RunResult& r : runs) failed += r.ok ? 0 : 1;
  out += fmt::format("{} run{}, {} failed\n", runs.size(), runs.size() == 1 ? "" : "s", failed);
  return out;
}

std::string mlperf_csv(const std::vector<MlperfRow>& rows) {
  std::string out =
      "workload,clients,accelerators,accelerators_per_client,au_threshold,au,throughput_mib_per_s,samples_per_s,"
      "binding_resource,probes,stopped,dataset_files,dataset_bytes,client_memory_bytes,datasize_min_files,"
      "meets_datasize\n";
  for (const MlperfRow& m : rows) {
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_field(m.workload), m.clients,
                       m.accelerators, m.accelerators_per_client, csv_number(m.au_threshold), csv_number(m.au),
                       csv_number(m.throughput_mib_per_s), csv_number(m.samples_per_s), csv_field(m.binding_resource),
                       m.probes, csv_field(m.stopped), m.dataset_files, m.dataset_bytes, m.client_memory_bytes,
                       m.datasize_min_files, m.meets_datasize ? "true" : "false");
  }
  return out;
}

Status write_results(const std::string& dir, std::string_view scenario, const std::vector<RunResult>& runs,
                     const ScriptFindings& findings, Completeness completeness) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return error(StatusCode::io_error, "results: cannot create " + dir + ": " + ec.message());
  const std::filesystem::path base(dir);
  const std::string json = results_document(scenario, runs, findings, completeness).dump(2) + "\n";
  if (Status s = write_atomically(base / "results.json", json); !s.ok()) return s;
  if (Status s = write_atomically(base / "results.csv", results_csv(runs)); !s.ok()) return s;
  if (!findings.mlperf.empty()) {
    if (Status s = write_atomically(base / "mlperf.csv", mlperf_csv(findings.mlperf)); !s.ok()) return s;
  }
  return write_atomically(base / "progress.csv", progress_csv(runs));
}

}  // namespace sluice::scenario
