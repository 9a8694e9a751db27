#include "analysis/import_record.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>

#include "analysis/calibration.hpp"
#include "analysis/run_record.hpp"

namespace sluice::analysis {
namespace {

using nlohmann::json;

json metric(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32] = {};
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

json phase_json(const ImportedPhase& p) {
  json extra = json::object();
  for (const auto& [name, value] : p.extra) extra[name] = metric(value);
  return {{"workload", p.workload},
          {"phase", p.phase},
          {"ranks", p.ranks},
          {"bytes", p.bytes},
          {"ops", p.ops},
          {"first_done_s", metric(p.first_done_s)},
          {"last_done_s", metric(p.last_done_s)},
          {"first_bytes_per_s", metric(p.first_bytes_per_s)},
          {"last_bytes_per_s", metric(p.last_bytes_per_s)},
          {"first_ops_per_s", metric(p.first_ops_per_s)},
          {"last_ops_per_s", metric(p.last_ops_per_s)},
          {"latency_us_p50", metric(p.latency_us_p50)},
          {"latency_us_p99", metric(p.latency_us_p99)},
          {"extra", extra},
          // Tools write their totals, not throughput over time.
          {"progress", {{"window_s", nullptr}, {"bytes_per_s", json::array()}}}};
}

std::string tool_of(const ImportedRun& r) {
  return r.source.contains("tool") && r.source["tool"].is_string() ? r.source["tool"].get<std::string>() : "a tool";
}

// results.json "config" (result_codec.hpp run_config): what sluice knows of
// the measured system is what the tool said; the rest is 0 or "" (not said).
json config_json(const ImportedRun& r) {
  return {{"cluster", "measured with " + tool_of(r)},
          {"cluster_nodes", r.nodes},
          {"fs_preset", ""},
          {"meta_policy", ""},
          {"meta_servers", 0},
          {"meta_mirrored", false},
          {"storage_servers", 0},
          {"storage_targets", 0},
          {"storage_mirrored", false},
          {"gds", r.gds ? "on" : "off"},
          {"stripe_count", 0},
          {"chunk_bytes", 0},
          {"stripe_chooser", ""},
          {"client_max_inflight_chunks", r.queue_depth},
          {"egress_limit_bytes_per_s", 0},
          {"workloads", r.workload_kind},
          {"client_ranks", r.client_ranks},
          {"fault_count", 0},
          {"sim_profile", ""},
          {"measured_with", tool_of(r)}};
}

// results.json "spec" (result_codec.hpp spec_summary), as far as a measurement describes it.
json spec_json(const ImportedRun& r) {
  json settings = json::object();
  for (const auto& [name, value] : r.params) settings[name] = value;
  const std::string label = r.phases.empty() ? r.workload_kind : r.phases.front().workload;
  const json workload = {{"label", label},      {"kind", r.workload_kind}, {"client_nodes", json::array()},
                         {"ranks_per_node", 0}, {"ranks", r.client_ranks}, {"settings", settings}};
  return {{"cluster", {{"description", "measured with " + tool_of(r)}, {"nodes", r.nodes}}},
          {"fs",
           {{"preset", ""},
            {"policy", ""},
            {"mgmt_node", 0},
            {"meta_nodes", json::array()},
            {"storage", json::array()},
            {"targets", 0},
            {"gds", r.gds ? "on" : "off"},
            {"chunk_bytes", 0},
            {"stripe_count", 0},
            {"chooser", ""}}},
          {"workloads", json::array({workload})},
          {"sim", {{"profile", ""}, {"coalesce", false}, {"mode", "chunk"}, {"max_events", 0}}}};
}

json run_json(const ImportedRun& r) {
  json phases = json::array();
  for (const ImportedPhase& p : r.phases) phases.push_back(phase_json(p));
  json params = json::object();
  for (const auto& [name, value] : r.params) params[name] = value;
  return {{"scenario", r.scenario},
          {"label", r.label},
          {"params", params},
          {"config", config_json(r)},
          {"seed", 0},
          {"backend", "hw"},
          {"ok", r.ok},
          // The schema wants a failed run to say why.
          {"error", (r.ok || !r.error.empty()) ? r.error : tool_of(r) + " reported an error"},
          {"simulated_s", nullptr},
          {"wall_s", nullptr},
          {"paths_taken", json::object()},
          {"phases", phases},
          {"counters", json::object()},
          {"log_tail", json::array()},
          {"spec", spec_json(r)},
          {"source", r.source}};
}

}  // namespace

nlohmann::json imported_results_document(const std::vector<ImportedRun>& runs, const ImportedDocumentInfo& info) {
  json versions = {{"sluice", std::string(k_import_sluice_version)}};
  for (const auto& [tool, version] : info.versions) versions[tool] = version;
  json doc;
  doc["format"] = "sluice-results";
  doc["version"] = k_max_results_version;
  doc["scenario"] = info.scenario;
  doc["complete"] = true;
  doc["sluice_version"] = std::string(k_import_sluice_version);
  doc["created_utc"] = info.created_utc.empty() ? utc_now() : info.created_utc;
  // The machine that measured is not this one, and the tools do not say which it was: "" and 0, not said.
  doc["machine"] = {{"hostname", ""}, {"cores", 0}, {"os", ""}};
  doc["versions"] = versions;
  doc["runs"] = json::array();
  for (const ImportedRun& r : runs) doc["runs"].push_back(run_json(r));
  doc["headlines"] = info.headlines;
  doc["claims"] = json::array();
  return doc;
}

Status write_imported_results(const std::string& dir, const nlohmann::json& document) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return error(StatusCode::io_error, "import: cannot create " + dir + ": " + ec.message());
  return write_json_file((std::filesystem::path(dir) / "results.json").string(), document);
}

}  // namespace sluice::analysis
