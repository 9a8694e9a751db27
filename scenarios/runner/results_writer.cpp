#include "scenarios/runner/results_writer.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include <fmt/core.h>
#include <nlohmann/json.hpp>
#if __has_include(<simgrid/version.h>)
#include <xbt/base.h>  // version.h's declaration macros
#include <simgrid/version.h>
#endif

#include "scenarios/runner/result_codec.hpp"
#include "scenarios/runner/runner.hpp"

namespace sluice::scenario {
namespace {

constexpr double k_bytes_per_mib = 1024.0 * 1024.0;
// Table: a parameter list longer than this is cut (the CSV has them all).
constexpr std::size_t k_table_params_chars = 40;

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string csv_number(double v) {
  if (!std::isfinite(v)) return "";
  return fmt::format("{:.6g}", v);
}

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The parameters whose values differ between the runs (all of them when
// they do not): what tells the rows of a sweep apart.
std::set<std::string> varying_params(const std::vector<RunResult>& runs) {
  std::set<std::string> all, varying;
  for (const RunResult& r : runs) {
    for (const auto& [k, v] : r.spec.params) all.insert(k);
  }
  for (const std::string& k : all) {
    std::set<std::string> values;
    for (const RunResult& r : runs) {
      auto it = r.spec.params.find(k);
      values.insert(it == r.spec.params.end() ? std::string("\x01") : it->second);  // \x01: absent
    }
    if (values.size() > 1) varying.insert(k);
  }
  return varying.empty() ? all : varying;
}

std::string params_text(const RunResult& r, const std::set<std::string>& shown) {
  std::string out;
  for (const auto& [k, v] : r.spec.params) {
    if (shown.count(k) != 0) out += (out.empty() ? "" : " ") + k + "=" + v;
  }
  if (out.size() > k_table_params_chars) out = out.substr(0, k_table_params_chars - 3) + "...";
  return out;
}

}  // namespace

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

nlohmann::json results_document(std::string_view scenario, const std::vector<RunResult>& runs,
                                const ScriptFindings& findings) {
  const MachineInfo m = this_machine();
  nlohmann::json doc;
  doc["format"] = k_results_format;
  doc["version"] = k_results_version;
  doc["scenario"] = scenario;
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
    doc["claims"].push_back(std::move(j));
  }
  return doc;
}

std::string results_csv(const std::vector<RunResult>& runs) {
  std::set<std::string> params, extras;
  for (const RunResult& r : runs) {
    for (const auto& [k, v] : r.spec.params) params.insert(k);
    for (const PhaseRow& p : r.phases) {
      for (const auto& [k, v] : p.extra) extras.insert(k);
    }
  }
  std::string out = "run,scenario,backend,seed,ok,error";
  for (const std::string& p : params) out += "," + csv_field("param_" + p);
  out +=
      ",workload,phase,ranks,bytes,ops,first_done_s,elapsed_s,throughput_MiB_per_s,first_throughput_MiB_per_s,"
      "ops_per_s,first_ops_per_s,latency_us_p50,latency_us_p99";
  for (const std::string& e : extras) out += "," + csv_field(e);
  out += "\n";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RunResult& r = runs[i];
    std::string head = std::to_string(i) + "," + csv_field(r.spec.scenario) + "," + std::string(to_string(r.backend)) +
                       "," + std::to_string(r.spec.seed) + "," + (r.ok ? "true" : "false") + "," + csv_field(r.error);
    for (const std::string& p : params) {
      auto it = r.spec.params.find(p);
      head += "," + (it == r.spec.params.end() ? std::string() : csv_field(it->second));
    }
    if (r.phases.empty()) {
      out += head + std::string(13 + extras.size(), ',') + "\n";
      continue;
    }
    for (const PhaseRow& p : r.phases) {
      out += head + "," + csv_field(p.workload) + "," + csv_field(p.phase) + "," + std::to_string(p.ranks) + "," +
             std::to_string(p.bytes) + "," + std::to_string(p.ops) + "," + csv_number(p.first_done_s) + "," +
             csv_number(p.last_done_s) + "," + csv_number(p.last_bytes_per_s / k_bytes_per_mib) + "," +
             csv_number(p.first_bytes_per_s / k_bytes_per_mib) + "," + csv_number(p.last_ops_per_s) + "," +
             csv_number(p.first_ops_per_s) + "," + csv_number(p.latency_us_p50) + "," + csv_number(p.latency_us_p99);
      for (const std::string& e : extras) {
        auto it = p.extra.find(e);
        out += "," + (it == p.extra.end() ? std::string() : csv_number(it->second));
      }
      out += "\n";
    }
  }
  return out;
}

std::string progress_csv(const std::vector<RunResult>& runs) {
  std::string out = "run,workload,phase,window_start_s,window_s,throughput_MiB_per_s\n";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    for (const PhaseRow& p : runs[i].phases) {
      for (std::size_t w = 0; w < p.progress_bytes_per_s.size(); ++w) {
        out += std::to_string(i) + "," + csv_field(p.workload) + "," + csv_field(p.phase) + "," +
               csv_number(static_cast<double>(w) * p.progress_window_s) + "," + csv_number(p.progress_window_s) + "," +
               csv_number(p.progress_bytes_per_s[w] / k_bytes_per_mib) + "\n";
      }
    }
  }
  return out;
}

std::string results_table(const std::vector<RunResult>& runs) {
  std::string out =
      fmt::format("{:>4} {:<7} {:<40} {:<22} {:>6} {:>12} {:>12} {:>10} {:>10} {:>10}\n", "run", "backend", "params",
                  "workload/phase", "ranks", "MiB/s", "ops/s", "elapsed_s", "p50_us", "p99_us");
  const std::set<std::string> shown = varying_params(runs);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RunResult& r = runs[i];
    const std::string params = params_text(r, shown);
    for (const PhaseRow& p : r.phases) {
      out += fmt::format("{:>4} {:<7} {:<40} {:<22} {:>6} {:>12.1f} {:>12.1f} {:>10.4f} {:>10.1f} {:>10.1f}\n", i,
                         to_string(r.backend), params, p.workload + "/" + p.phase, p.ranks,
                         p.last_bytes_per_s / k_bytes_per_mib, p.last_ops_per_s, p.last_done_s, p.latency_us_p50,
                         p.latency_us_p99);
    }
    if (!r.ok) out += fmt::format("{:>4} {:<7} {:<40} FAILED: {}\n", i, to_string(r.backend), params, r.error);
  }
  std::size_t failed = 0;
  for (const RunResult& r : runs) failed += r.ok ? 0 : 1;
  out += fmt::format("{} run{}, {} failed\n", runs.size(), runs.size() == 1 ? "" : "s", failed);
  return out;
}

Status write_results(const std::string& dir, std::string_view scenario, const std::vector<RunResult>& runs,
                     const ScriptFindings& findings) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return error(StatusCode::io_error, "results: cannot create " + dir + ": " + ec.message());
  const std::filesystem::path base(dir);
  auto write = [](const std::filesystem::path& path, const std::string& text) -> Status {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << text;
    f.close();
    if (!f) return error(StatusCode::io_error, "results: cannot write " + path.string());
    return ok_status();
  };
  if (Status s = write(base / "results.json", results_document(scenario, runs, findings).dump(2) + "\n"); !s.ok())
    return s;
  if (Status s = write(base / "results.csv", results_csv(runs)); !s.ok()) return s;
  return write(base / "progress.csv", progress_csv(runs));
}

}  // namespace sluice::scenario
