#include "analysis/run_record.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/common/byte_size.hpp"

namespace sluice::analysis {
namespace {

constexpr double k_nan = std::numeric_limits<double>::quiet_NaN();

double number_or_nan(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_number()) return k_nan;
  return j[key].get<double>();
}

std::string param_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  return v.dump();
}

Result<PhaseRecord> parse_phase(const nlohmann::json& p, const std::string& where) {
  if (!p.is_object() || !p.contains("phase") || !p["phase"].is_string()) {
    return error(StatusCode::invalid_argument, where + ": phase without a \"phase\" name");
  }
  PhaseRecord r;
  r.phase = p["phase"].get<std::string>();
  r.workload = p.value("workload", std::string{});
  r.ranks = p.value("ranks", 0U);
  r.bytes = p.value("bytes", std::uint64_t{0});
  r.ops = p.value("ops", std::uint64_t{0});
  r.last_done_s = number_or_nan(p, "last_done_s");
  r.bytes_per_s = number_or_nan(p, "last_bytes_per_s");
  r.ops_per_s = number_or_nan(p, "last_ops_per_s");
  r.latency_us_p50 = number_or_nan(p, "latency_us_p50");
  r.latency_us_p99 = number_or_nan(p, "latency_us_p99");
  if (p.contains("extra") && p["extra"].is_object()) {
    for (const auto& [k, v] : p["extra"].items()) r.extra[k] = v.is_number() ? v.get<double>() : k_nan;
  }
  if (p.contains("progress") && p["progress"].is_object()) {
    const auto& progress = p["progress"];
    r.progress_window_s = number_or_nan(progress, "window_s");
    if (progress.contains("bytes_per_s") && progress["bytes_per_s"].is_array()) {
      for (const auto& v : progress["bytes_per_s"])
        r.progress_bytes_per_s.push_back(v.is_number() ? v.get<double>() : k_nan);
    }
  }
  return r;
}

Result<RunRecord> parse_run(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) return error(StatusCode::invalid_argument, where + ": not an object");
  for (const char* key : {"scenario", "backend", "phases"}) {
    if (!j.contains(key)) return error(StatusCode::invalid_argument, where + ": missing \"" + key + "\"");
  }
  if (!j["phases"].is_array()) return error(StatusCode::invalid_argument, where + ": \"phases\" is not an array");
  RunRecord r;
  r.scenario = j["scenario"].is_string() ? j["scenario"].get<std::string>() : "";
  r.backend = j["backend"].is_string() ? j["backend"].get<std::string>() : "";
  r.seed = j.value("seed", std::uint64_t{0});
  r.ok = j.value("ok", false);
  r.error = j.value("error", std::string{});
  if (j.contains("params") && j["params"].is_object()) {
    for (const auto& [k, v] : j["params"].items()) r.params[k] = param_text(v);
  }
  for (std::size_t i = 0; i < j["phases"].size(); ++i) {
    Result<PhaseRecord> p = parse_phase(j["phases"][i], where + ".phases[" + std::to_string(i) + "]");
    if (!p.ok()) return p.status();
    r.phases.push_back(std::move(*p));
  }
  if (j.contains("counters") && j["counters"].is_object()) {
    for (const auto& [k, v] : j["counters"].items()) r.counters[k] = v.is_number() ? v.get<double>() : k_nan;
  }
  return r;
}

Result<RunRecord> parse_emulate(const nlohmann::json& j) {
  RunRecord r;
  r.scenario = j.value("scenario", std::string{"emulate_file_sweep"});
  r.backend = "emulate";
  r.ok = j.value("ok", false);
  r.seed = j.value("seed", std::uint64_t{0});
  const nlohmann::json& e = j["emulation"];
  if (!e.is_object() || !e.contains("rate_bits_per_s")) {
    return error(StatusCode::invalid_argument, "emulate results: \"emulation\" without \"rate_bits_per_s\"");
  }
  r.params["link_bits_per_s"] = param_text(e["rate_bits_per_s"]);
  if (e.contains("latency_ns")) r.params["link_latency_ns"] = param_text(e["latency_ns"]);
  if (j.contains("params") && j["params"].is_object()) {
    for (const auto& [k, v] : j["params"].items()) r.params[k] = param_text(v);
  }
  std::map<std::string, PhaseRecord> by_phase;
  std::vector<std::string> order;
  for (const auto& node : j["nodes"]) {
    if (!node.contains("phases")) continue;
    for (const auto& p : node["phases"]) {
      const std::string name = p.value("phase", std::string{});
      if (name.empty()) return error(StatusCode::invalid_argument, "emulate results: phase without a name");
      if (!by_phase.contains(name)) {
        order.push_back(name);
        PhaseRecord fresh;
        fresh.workload = "file_sweep";
        fresh.phase = name;
        by_phase[name] = fresh;
      }
      PhaseRecord& t = by_phase[name];
      t.ranks += 1;
      t.bytes += p.value("bytes", std::uint64_t{0});
      t.ops += p.value("ops", std::uint64_t{0});
      t.last_done_s = std::max(t.last_done_s, static_cast<double>(p.value("elapsed_ns", std::uint64_t{0})) * 1e-9);
    }
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

Result<std::vector<RunRecord>> parse_runs(const nlohmann::json& document) {
  std::vector<RunRecord> out;
  if (!document.is_object()) return error(StatusCode::invalid_argument, "results: document is not an object");
  if (document.contains("runs")) {
    if (document.value("format", std::string{}) != "sluice-results") {
      return error(StatusCode::invalid_argument, "results: \"format\" is not \"sluice-results\"");
    }
    if (!document["runs"].is_array()) return error(StatusCode::invalid_argument, "results: \"runs\" is not an array");
    for (std::size_t i = 0; i < document["runs"].size(); ++i) {
      Result<RunRecord> r = parse_run(document["runs"][i], "results: runs[" + std::to_string(i) + "]");
      if (!r.ok()) return r.status();
      out.push_back(std::move(*r));
    }
    return out;
  }
  if (document.contains("emulation") && document.contains("nodes")) {
    Result<RunRecord> r = parse_emulate(document);
    if (!r.ok()) return r.status();
    out.push_back(std::move(*r));
    return out;
  }
  Result<RunRecord> r = parse_run(document, "results: run");
  if (!r.ok()) return r.status();
  out.push_back(std::move(*r));
  return out;
}

Result<std::vector<RunRecord>> load_runs(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return error(StatusCode::io_error, "results: cannot open " + path);
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().size() > k_max_results_file_bytes) {
    return error(StatusCode::invalid_argument, "results: " + path + " is larger than k_max_results_file_bytes");
  }
  const nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, false);
  if (doc.is_discarded()) return error(StatusCode::invalid_argument, "results: " + path + " is not valid JSON");
  Result<std::vector<RunRecord>> runs = parse_runs(doc);
  if (!runs.ok()) return error(runs.status().code(), path + ": " + runs.status().message());
  return runs;
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
