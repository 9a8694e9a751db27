#include "analysis/run_record.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <stdexcept>

#include "analysis/import_input.hpp"
#include "base/json_text.hpp"
#include "core/common/byte_size.hpp"

namespace sluice::analysis {
namespace {

constexpr double k_nan = std::numeric_limits<double>::quiet_NaN();

// A field of a results document with the wrong type or an out-of-range
// value: thrown by the readers below, turned into invalid_argument by
// parse_runs ("results: runs[0].ok: expected a boolean, got string").
struct BadField : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void bad(const std::string& where, const char* key, const std::string& expected, const nlohmann::json& v) {
  throw BadField(where + "." + key + ": expected " + expected + ", got " + std::string(v.type_name()) +
                 (v.is_primitive() && !v.is_null() ? " " + v.dump().substr(0, 40) : ""));
}

// The field `key` of object j: absent (or null) -> the default.
bool bool_field(const nlohmann::json& j, const char* key, const std::string& where, bool absent = false) {
  if (!j.contains(key) || j[key].is_null()) return absent;
  if (!j[key].is_boolean()) bad(where, key, "a boolean", j[key]);
  return j[key].get<bool>();
}

std::string string_field(const nlohmann::json& j, const char* key, const std::string& where,
                         const std::string& absent = "") {
  if (!j.contains(key) || j[key].is_null()) return absent;
  if (!j[key].is_string()) bad(where, key, "a string", j[key]);
  return j[key].get<std::string>();
}

// A whole number in 0..hi: an unsigned or non-negative integer, or a float
// with no fraction inside the range (JSON writers may print 3.0).
std::uint64_t count_field(const nlohmann::json& j, const char* key, const std::string& where,
                          std::uint64_t hi = std::numeric_limits<std::uint64_t>::max()) {
  if (!j.contains(key) || j[key].is_null()) return 0;
  const nlohmann::json& v = j[key];
  const std::string expected = "a whole number in 0.." + std::to_string(hi);
  if (v.is_number_unsigned()) {
    if (v.get<std::uint64_t>() > hi) bad(where, key, expected, v);
    return v.get<std::uint64_t>();
  }
  if (v.is_number_integer()) {
    if (v.get<std::int64_t>() < 0 || static_cast<std::uint64_t>(v.get<std::int64_t>()) > hi)
      bad(where, key, expected, v);
    return static_cast<std::uint64_t>(v.get<std::int64_t>());
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    // 2^64 is the first double above the range; std::floor rejects fractions.
    if (!std::isfinite(d) || d < 0 || d >= 18446744073709551616.0 || d != std::floor(d) ||
        static_cast<std::uint64_t>(d) > hi) {
      bad(where, key, expected, v);
    }
    return static_cast<std::uint64_t>(d);
  }
  bad(where, key, expected, v);
}

// A measurement: a number, or absent/null for "none" (NaN).
double number_field(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || j[key].is_null()) return k_nan;
  if (!j[key].is_number()) bad(where, key, "a number", j[key]);
  return j[key].get<double>();
}

// A map of named measurements ("extra", "counters"): numbers or null.
std::map<std::string, double> number_map(const nlohmann::json& j, const char* key, const std::string& where) {
  std::map<std::string, double> out;
  if (!j.contains(key) || j[key].is_null()) return out;
  if (!j[key].is_object()) bad(where, key, "an object of numbers", j[key]);
  for (const auto& [k, v] : j[key].items()) out[k] = number_field(j[key], k.c_str(), where + "." + key);
  return out;
}

std::string param_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  return v.dump();
}

// "params" and "config": named scalars (strings, numbers, booleans).
std::map<std::string, std::string> scalar_map(const nlohmann::json& j, const char* key, const std::string& where) {
  std::map<std::string, std::string> out;
  if (!j.contains(key) || j[key].is_null()) return out;
  if (!j[key].is_object()) bad(where, key, "an object of scalars", j[key]);
  for (const auto& [k, v] : j[key].items()) {
    if (!v.is_primitive() || v.is_null()) bad(where + "." + key, k.c_str(), "a string, number or boolean", v);
    out[k] = param_text(v);
  }
  return out;
}

PhaseRecord parse_phase(const nlohmann::json& p, const std::string& where) {
  if (!p.is_object()) throw BadField(where + ": expected an object, got " + std::string(p.type_name()));
  PhaseRecord r;
  r.phase = string_field(p, "phase", where);
  if (r.phase.empty()) throw BadField(where + ": phase without a \"phase\" name");
  r.workload = string_field(p, "workload", where);
  r.ranks = static_cast<std::uint32_t>(count_field(p, "ranks", where, std::numeric_limits<std::uint32_t>::max()));
  r.bytes = count_field(p, "bytes", where);
  r.ops = count_field(p, "ops", where);
  r.last_done_s = number_field(p, "last_done_s", where);
  r.bytes_per_s = number_field(p, "last_bytes_per_s", where);
  r.ops_per_s = number_field(p, "last_ops_per_s", where);
  r.latency_us_p50 = number_field(p, "latency_us_p50", where);
  r.latency_us_p99 = number_field(p, "latency_us_p99", where);
  r.extra = number_map(p, "extra", where);
  if (p.contains("progress") && !p["progress"].is_null()) {
    const nlohmann::json& progress = p["progress"];
    if (!progress.is_object()) bad(where, "progress", "an object", progress);
    r.progress_window_s = number_field(progress, "window_s", where + ".progress");
    if (progress.contains("bytes_per_s") && !progress["bytes_per_s"].is_null()) {
      if (!progress["bytes_per_s"].is_array())
        bad(where + ".progress", "bytes_per_s", "an array", progress["bytes_per_s"]);
      for (const auto& v : progress["bytes_per_s"]) {
        if (!v.is_number() && !v.is_null()) bad(where + ".progress", "bytes_per_s[]", "a number", v);
        r.progress_bytes_per_s.push_back(v.is_number() ? v.get<double>() : k_nan);
      }
    }
  }
  return r;
}

// An object with each of `keys` (a key whose value may be null counts as there).
void require_object(const nlohmann::json& j, const std::string& where, std::initializer_list<const char*> keys) {
  if (!j.is_object()) throw BadField(where + ": expected an object, got " + std::string(j.type_name()));
  for (const char* key : keys) {
    if (!j.contains(key)) throw BadField(where + ": missing \"" + key + "\"");
  }
}

RunRecord parse_run(const nlohmann::json& j, const std::string& where) {
  require_object(j, where, {"scenario", "backend", "phases"});
  if (!j["phases"].is_array()) bad(where, "phases", "an array", j["phases"]);
  RunRecord r;
  r.scenario = string_field(j, "scenario", where);
  r.backend = string_field(j, "backend", where);
  r.seed = count_field(j, "seed", where);
  r.ok = bool_field(j, "ok", where);
  r.error = string_field(j, "error", where);
  r.label = string_field(j, "label", where);
  r.params = scalar_map(j, "params", where);
  r.config = scalar_map(j, "config", where);
  for (std::size_t i = 0; i < j["phases"].size(); ++i) {
    r.phases.push_back(parse_phase(j["phases"][i], where + ".phases[" + std::to_string(i) + "]"));
  }
  r.counters = number_map(j, "counters", where);
  return r;
}

// One node's phases of an emulate results document, added into by_phase (in first-seen order).
void add_emulate_phases(const nlohmann::json& node, const std::string& where,
                        std::map<std::string, PhaseRecord>& by_phase, std::vector<std::string>& order) {
  if (!node.is_object()) throw BadField(where + ": expected an object, got " + std::string(node.type_name()));
  if (!node.contains("phases") || node["phases"].is_null()) return;
  if (!node["phases"].is_array()) bad(where, "phases", "an array", node["phases"]);
  for (std::size_t i = 0; i < node["phases"].size(); ++i) {
    const nlohmann::json& p = node["phases"][i];
    const std::string at = where + ".phases[" + std::to_string(i) + "]";
    if (!p.is_object()) throw BadField(at + ": expected an object, got " + std::string(p.type_name()));
    const std::string name = string_field(p, "phase", at);
    if (name.empty()) throw BadField(at + ": phase without a name");
    if (!by_phase.contains(name)) {
      order.push_back(name);
      PhaseRecord fresh;
      fresh.workload = "file_sweep";
      fresh.phase = name;
      by_phase[name] = fresh;
    }
    PhaseRecord& t = by_phase[name];
    t.ranks += 1;
    t.bytes += count_field(p, "bytes", at);
    t.ops += count_field(p, "ops", at);
    t.last_done_s = std::max(t.last_done_s, static_cast<double>(count_field(p, "elapsed_ns", at)) * 1e-9);
  }
}

RunRecord parse_emulate(const nlohmann::json& j) {
  const std::string where = "emulate results";
  RunRecord r;
  r.scenario = string_field(j, "scenario", where, "emulate_file_sweep");
  r.backend = "emulate";
  r.ok = bool_field(j, "ok", where);
  r.seed = count_field(j, "seed", where);
  const nlohmann::json& e = j["emulation"];
  if (!e.is_object() || !e.contains("rate_bits_per_s")) {
    throw BadField(where + ": \"emulation\" without \"rate_bits_per_s\"");
  }
  r.params["link_bits_per_s"] = param_text(e["rate_bits_per_s"]);
  if (e.contains("latency_ns")) r.params["link_latency_ns"] = param_text(e["latency_ns"]);
  for (const auto& [k, v] : scalar_map(j, "params", where)) r.params[k] = v;
  if (!j["nodes"].is_array()) bad(where, "nodes", "an array", j["nodes"]);
  std::map<std::string, PhaseRecord> by_phase;
  std::vector<std::string> order;
  for (std::size_t i = 0; i < j["nodes"].size(); ++i) {
    add_emulate_phases(j["nodes"][i], where + ".nodes[" + std::to_string(i) + "]", by_phase, order);
  }
  for (const std::string& name : order) {
    PhaseRecord t = by_phase[name];
    t.bytes_per_s = t.last_done_s > 0 ? static_cast<double>(t.bytes) / t.last_done_s : k_nan;
    t.ops_per_s = t.last_done_s > 0 ? static_cast<double>(t.ops) / t.last_done_s : k_nan;
    t.latency_us_p50 = k_nan;
    t.latency_us_p99 = k_nan;
    r.phases.push_back(std::move(t));
  }
  return r;
}

// A number of a claim, absent or null: nullopt. JSON numbers are finite (the parser refuses 1e400).
std::optional<double> claim_number(const nlohmann::json& c, const char* key, const std::string& where) {
  const double v = number_field(c, key, where);
  return std::isnan(v) ? std::nullopt : std::optional<double>(v);
}

ClaimRecord parse_claim(const nlohmann::json& c, const std::string& where) {
  require_object(c, where, {"text", "seed_figure", "holds", "measured"});
  const auto field = [&](const char* key) { return c.contains(key) ? c[key] : nlohmann::json(); };
  ClaimRecord r;
  for (const char* key : {"text", "seed_figure"}) {
    if (!c[key].is_string()) bad(where, key, "a string", c[key]);
  }
  if (!c["holds"].is_boolean()) bad(where, "holds", "a boolean", c["holds"]);
  r.text = c["text"].get<std::string>();
  r.seed_words = c["seed_figure"].get<std::string>();
  r.holds = c["holds"].get<bool>();
  r.measured = number_field(c, "measured", where);
  const std::string kind = string_field(c, "kind", where, "shape");
  if (kind == "seed_figure") {
    r.seed_value = claim_number(c, "seed_value", where);
    if (!r.seed_value || *r.seed_value == 0) bad(where, "seed_value", "a nonzero number", field("seed_value"));
    const std::optional<double> tolerance = claim_number(c, "tolerance", where);
    if (!tolerance || *tolerance < 0 || *tolerance > k_max_claim_tolerance)
      bad(where, "tolerance", "a number in 0..1e6 (relative)", field("tolerance"));
    r.tolerance = *tolerance;
    r.tolerance_why = string_field(c, "tolerance_why", where);
    r.model_input = bool_field(c, "model_input", where);
  } else if (kind == "shape") {
    r.at_least = claim_number(c, "at_least", where);
    r.at_most = claim_number(c, "at_most", where);
    if (!r.at_least && !r.at_most) throw BadField(where + ": a shape claim without \"at_least\" or \"at_most\"");
  } else {
    bad(where, "kind", "\"seed_figure\" or \"shape\"", c["kind"]);
  }
  return r;
}

// A sluice-results document: its format, a version this sluice reads, its runs and claims.
ResultsFile parse_results_document(const nlohmann::json& document) {
  if (string_field(document, "format", "results") != "sluice-results") {
    throw BadField("results: \"format\" is not \"sluice-results\"");
  }
  if (document.contains("version")) {
    const std::uint64_t version = count_field(document, "version", "results");
    if (version == 0 || version > k_max_results_version) {
      throw BadField("results: version " + std::to_string(version) + " is not one this sluice reads (1.." +
                     std::to_string(k_max_results_version) + "); a newer sluice wrote it");
    }
  }
  ResultsFile out;
  out.sluice_results = true;
  out.complete = bool_field(document, "complete", "results", true);
  out.scenario = string_field(document, "scenario", "results");
  if (!document.contains("runs") || !document["runs"].is_array())
    bad("results", "runs", "an array", document.value("runs", nlohmann::json()));
  for (std::size_t i = 0; i < document["runs"].size(); ++i) {
    out.runs.push_back(parse_run(document["runs"][i], "results: runs[" + std::to_string(i) + "]"));
  }
  if (document.contains("claims") && !document["claims"].is_null()) {
    if (!document["claims"].is_array()) bad("results", "claims", "an array", document["claims"]);
    for (std::size_t i = 0; i < document["claims"].size(); ++i) {
      out.claims.push_back(parse_claim(document["claims"][i], "results: claims[" + std::to_string(i) + "]"));
    }
  }
  return out;
}

}  // namespace

double phase_metric(const PhaseRecord& phase, const std::string& metric) {
  if (metric == "bytes_per_s") return phase.bytes_per_s;
  if (metric == "ops_per_s") return phase.ops_per_s;
  if (metric == "last_done_s") return phase.last_done_s;
  if (metric == "latency_us_p50") return phase.latency_us_p50;
  if (metric == "latency_us_p99") return phase.latency_us_p99;
  if (metric.rfind("extra.", 0) == 0) {
    auto it = phase.extra.find(metric.substr(6));
    if (it != phase.extra.end()) return it->second;
  }
  return k_nan;
}

bool is_phase_metric(const std::string& metric) {
  constexpr std::size_t k_extra_prefix_chars = 6;  // "extra."
  if (metric.size() > k_extra_prefix_chars && metric.rfind("extra.", 0) == 0) return true;
  return std::find(k_default_metrics.begin(), k_default_metrics.end(), metric) != k_default_metrics.end();
}

Result<ResultsFile> parse_results(const nlohmann::json& document) {
  if (!document.is_object()) return error(StatusCode::invalid_argument, "results: document is not an object");
  try {
    // A "format" says a sluice-results document even without its runs (then refused for that).
    if (document.contains("runs") || document.contains("format")) return parse_results_document(document);
    ResultsFile out;
    const bool emulate = document.contains("emulation") && document.contains("nodes");
    out.runs.push_back(emulate ? parse_emulate(document) : parse_run(document, "results: run"));
    return out;
  } catch (const BadField& e) {
    return error(StatusCode::invalid_argument, e.what());
  } catch (const nlohmann::json::exception& e) {
    return error(StatusCode::invalid_argument, std::string("results: ") + e.what());
  }
}

Result<std::vector<RunRecord>> parse_runs(const nlohmann::json& document) {
  Result<ResultsFile> file = parse_results(document);
  if (!file.ok()) return file.status();
  return std::move(file->runs);
}

Result<ResultsFile> load_results(const std::string& path) {
  Result<ImportInput> input = read_import_input(path);
  if (!input.ok()) return input.status();
  Result<nlohmann::json> doc = base::parse_json_text(input->text);
  if (!doc.ok()) return error(StatusCode::invalid_argument, path + ": " + doc.status().message());
  Result<ResultsFile> file = parse_results(*doc);
  if (!file.ok()) return error(file.status().code(), path + ": " + file.status().message());
  file->path = path;
  return file;
}

Result<std::vector<RunRecord>> load_runs(const std::string& path) {
  Result<ResultsFile> file = load_results(path);
  if (!file.ok()) return file.status();
  return std::move(file->runs);
}

bool results_complete(const nlohmann::json& document) {
  if (!document.is_object() || !document.contains("complete") || !document["complete"].is_boolean()) return true;
  return document["complete"].get<bool>();
}

std::string incomplete_note(const ResultsFile& file) {
  return file.path + " is incomplete: its run was stopped (or still runs) before every point finished (" +
         std::to_string(file.runs.size()) + " run" + (file.runs.size() == 1 ? "" : "s") + " in it)";
}

std::string point_key(const RunRecord& run, const std::vector<std::string>& ignored) {
  std::string key = run.scenario + "|";
  bool first = true;
  for (const auto& [k, v] : run.params) {
    if (std::find(ignored.begin(), ignored.end(), k) != ignored.end()) continue;
    key += (first ? "" : ",") + k + "=" + v;
    first = false;
  }
  return key;
}

Result<double> parse_quantity(const std::string& text) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    return error(StatusCode::invalid_argument, "quantity: \"" + text + "\" is not a number");
  }
  if (!std::isfinite(v)) return error(StatusCode::invalid_argument, "quantity: \"" + text + "\" not finite");
  if (used == text.size()) return v;  // a plain number: a count, or a value in its unit already
  std::string unit;
  for (std::size_t i = used; i < text.size(); ++i) {
    if (!std::isspace(static_cast<unsigned char>(text[i]))) {
      unit += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
    }
  }
  const bool bits = unit.size() >= 3 && unit.compare(unit.size() - 3, 3, "bit") == 0;
  const bool per_s = unit.size() >= 2 && unit.compare(unit.size() - 2, 2, "/s") == 0;
  if (!bits && !per_s) {
    // A size: the tree's one size grammar (binary units; "4MB" is refused).
    Result<std::uint64_t> bytes = parse_size(text);
    if (!bytes.ok()) return error(StatusCode::invalid_argument, "quantity: " + bytes.status().message());
    return static_cast<double>(*bytes);
  }
  // A rate, decimal as links and storage are quoted (1Gbit, 200mbit, 12.5GB/s)
  // or binary (2GiB/s); a "bit" rate stays in bits.
  unit.resize(unit.size() - (bits ? 3 : 2));
  if (!unit.empty() && unit.back() == 'b') unit.pop_back();
  double m = 1;
  if (unit.empty())
    m = 1;
  else if (unit == "k")
    m = 1e3;
  else if (unit == "m")
    m = 1e6;
  else if (unit == "g")
    m = 1e9;
  else if (unit == "t")
    m = 1e12;
  else if (unit == "ki")
    m = 1024.0;
  else if (unit == "mi")
    m = 1024.0 * 1024;
  else if (unit == "gi")
    m = 1024.0 * 1024 * 1024;
  else
    return error(StatusCode::invalid_argument, "quantity: unknown unit in \"" + text + "\"");
  if (!std::isfinite(v * m)) return error(StatusCode::invalid_argument, "quantity: \"" + text + "\" not finite");
  return v * m;
}

}  // namespace sluice::analysis
