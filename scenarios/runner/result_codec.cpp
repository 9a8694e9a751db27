#include "scenarios/runner/result_codec.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <type_traits>

#include "core/proto/wire_enums.hpp"
#include "scenarios/runner/runner.hpp"

namespace sluice::scenario {
namespace {

using nlohmann::json;

json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

double read_number(const json& j) {
  if (j.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (!j.is_number()) throw json::type_error::create(302, "a number or null is expected", &j);
  return j.get<double>();
}

json create_json(const CreateOptions& c) {
  return {{"chunk_bytes", c.chunk_bytes},
          {"stripe_count", c.stripe_count},
          {"chooser", std::string(proto::to_string(c.chooser))}};
}

// A workload config's fields as its fields() list gives them (core/common/field_info.hpp):
// enums by name, lists as arrays, the stripe settings as create_json.
class SettingsWriter {
 public:
  explicit SettingsWriter(json& out) : out_(out) {}
  template <class T>
  void operator()(const char* name, const T& value, const FieldInfo& /*info*/ = {}) {
    out_[name] = encode(value);
  }

 private:
  static json encode(const CreateOptions& c) { return create_json(c); }
  template <class T>
  static json encode(const T& value) {
    if constexpr (std::is_enum_v<T>) {
      return std::string(to_string(value));
    } else if constexpr (requires { value.begin(); } && !std::is_same_v<T, std::string>) {
      json array = json::array();
      for (const auto& item : value) array.push_back(encode(item));
      return array;
    } else {
      return value;
    }
  }
  json& out_;
};

template <class Config>
json settings_of(Config c) {
  json out = json::object();
  SettingsWriter writer(out);
  fields(writer, c);
  return out;
}

const char* workload_kind(const WorkloadConfig& config) {
  static constexpr const char* k_kinds[] = {"file_sweep", "md_bench", "train_epoch",
                                            "checkpoint", "stage_in", "stream"};
  static_assert(std::size(k_kinds) == std::variant_size_v<WorkloadConfig>);
  return k_kinds[config.index()];
}

// The cluster's nodes: its topology's, or where a launcher ran the spec
// without a topology model (node --mpi --config), the distinct nodes
// the file system and the clients are placed on.
std::size_t cluster_node_count(const ScenarioSpec& spec) {
  if (spec.cluster) return spec.cluster->node_count();
  std::set<NodeId> placed = {spec.fs.mgmt_node};
  placed.insert(spec.fs.meta_nodes.begin(), spec.fs.meta_nodes.end());
  placed.insert(spec.fs.meta_mirror_nodes.begin(), spec.fs.meta_mirror_nodes.end());
  for (const StorageServerSpec& s : spec.fs.storage) placed.insert(s.node);
  for (const WorkloadSpec& w : spec.workloads) placed.insert(w.clients.nodes.begin(), w.clients.nodes.end());
  return placed.size();
}

}  // namespace

json workload_settings(const WorkloadConfig& config) {
  return std::visit([](const auto& c) { return settings_of(c); }, config);
}

json spec_summary(const ScenarioSpec& spec) {
  json cluster = {{"description", spec.cluster_description}, {"nodes", cluster_node_count(spec)}};
  const FsSpec& fs = spec.fs;
  json storage = json::array();
  std::size_t targets = 0;
  for (const StorageServerSpec& s : fs.storage) {
    storage.push_back({{"node", s.node}, {"nvme", s.nvme}});
    targets += s.nvme.size();
  }
  json fs_json = {{"preset", fs.preset},
                  {"policy", std::string(to_string(fs.policy))},
                  {"mgmt_node", fs.mgmt_node},
                  {"meta_nodes", fs.meta_nodes},
                  {"meta_mirror_nodes", fs.meta_mirror_nodes},
                  {"storage", storage},
                  {"targets", targets},
                  {"gds", std::string(to_string(fs.gds))},
                  {"chunk_bytes", fs.meta.default_chunk_bytes},
                  {"stripe_count", fs.meta.default_stripe_count},
                  {"chooser", std::string(proto::to_string(fs.meta.default_chooser))},
                  {"stripe_flavor", std::string(to_string(fs.meta.stripe_flavor))},
                  {"egress_limit_bytes_per_s", fs.storage_config.egress_limit_bytes_per_s},
                  {"client_max_inflight_chunks", fs.client.max_inflight_chunks},
                  {"verify_reads", fs.client.verify_reads},
                  {"buffered_writes", fs.storage_config.buffered_writes},
                  {"buffered_reads", fs.storage_config.buffered_reads}};
  json workloads = json::array();
  for (const WorkloadSpec& w : spec.workloads) {
    workloads.push_back({{"label", w.label},
                         {"kind", workload_kind(w.config)},
                         {"client_nodes", w.clients.nodes},
                         {"ranks_per_node", w.clients.ranks_per_node},
                         {"ranks", w.clients.nodes.size() * w.clients.ranks_per_node},
                         {"settings", workload_settings(w.config)}});
  }
  return {{"cluster", cluster},
          {"fs", fs_json},
          {"workloads", workloads},
          {"sim",
           {{"profile", spec.sim_profile},
            {"coalesce", spec.sim_coalesce},
            {"mode", sim_mode_name(spec.sim_mode)},
            {"max_events", spec.max_events}}}};
}

json run_config(const ScenarioSpec& spec) {
  const FsSpec& fs = spec.fs;
  std::size_t targets = 0;
  for (const StorageServerSpec& s : fs.storage) targets += s.nvme.size();
  std::string kinds;
  std::size_t ranks = 0;
  for (const WorkloadSpec& w : spec.workloads) {
    kinds += (kinds.empty() ? "" : "+") + std::string(workload_kind(w.config));
    ranks = std::max(ranks, w.clients.nodes.size() * w.clients.ranks_per_node);
  }
  json config = {{"cluster", spec.cluster_description},
                 {"cluster_nodes", cluster_node_count(spec)},
                 {"fs_preset", fs.preset},
                 {"meta_policy", std::string(to_string(fs.policy))},
                 {"meta_servers", fs.meta_nodes.size()},
                 {"meta_mirrored", !fs.meta_mirror_nodes.empty()},
                 {"storage_servers", fs.storage.size()},
                 {"storage_targets", targets},
                 {"storage_mirrored", fs.storage_config.mirror.enabled},
                 {"gds", std::string(to_string(fs.gds))},
                 {"stripe_count", fs.meta.default_stripe_count},
                 {"chunk_bytes", fs.meta.default_chunk_bytes},
                 {"stripe_chooser", std::string(proto::to_string(fs.meta.default_chooser))},
                 {"client_max_inflight_chunks", fs.client.max_inflight_chunks},
                 {"egress_limit_bytes_per_s", fs.storage_config.egress_limit_bytes_per_s},
                 {"workloads", kinds},
                 {"client_ranks", ranks},
                 {"fault_count", spec.faults.faults.size()},
                 {"sim_profile", spec.sim_profile}};
  return config;
}

json to_json(const PhaseRow& row) {
  json extra = json::object();
  for (const auto& [name, value] : row.extra) extra[name] = number(value);
  json progress = json::array();
  for (double v : row.progress_bytes_per_s) progress.push_back(number(v));
  return {{"workload", row.workload},
          {"phase", row.phase},
          {"ranks", row.ranks},
          {"bytes", row.bytes},
          {"ops", row.ops},
          {"first_done_s", number(row.first_done_s)},
          {"last_done_s", number(row.last_done_s)},
          {"first_bytes_per_s", number(row.first_bytes_per_s)},
          {"last_bytes_per_s", number(row.last_bytes_per_s)},
          {"first_ops_per_s", number(row.first_ops_per_s)},
          {"last_ops_per_s", number(row.last_ops_per_s)},
          {"latency_us_p50", number(row.latency_us_p50)},
          {"latency_us_p99", number(row.latency_us_p99)},
          {"bound_bytes_per_s", number(row.bound_bytes_per_s)},
          {"binding_resource", row.binding_resource},
          {"placed_bound_bytes_per_s", number(row.placed_bound_bytes_per_s)},
          {"placed_binding_resource", row.placed_binding_resource},
          {"extra", extra},
          {"progress", {{"window_s", number(row.progress_window_s)}, {"bytes_per_s", progress}}}};
}

json to_json(const RunResult& result) {
  json phases = json::array();
  for (const PhaseRow& row : result.phases) phases.push_back(to_json(row));
  json counters = json::object();
  for (const auto& [name, value] : result.counters) counters[name] = number(value);
  json params = json::object();
  for (const auto& [name, value] : result.spec.params) params[name] = value;
  json out = {{"scenario", result.spec.scenario},
              {"label", result.spec.label},
              {"params", params},
              {"config", run_config(result.spec)},
              {"seed", result.spec.seed},
              {"backend", std::string(to_string(result.backend))},
              {"ok", result.ok},
              {"error", result.error},
              {"simulated_s", number(result.simulated_s)},
              {"wall_s", number(result.wall_s)},
              {"paths_taken", result.paths_taken},
              {"phases", phases},
              {"counters", counters},
              {"log_tail", result.log_tail},
              {"spec", spec_summary(result.spec)}};
  if (!result.deployment.empty()) out["deployment"] = result.deployment;
  return out;
}

Result<PhaseRow> phase_row_from_json(const json& j) {
  try {
    PhaseRow row;
    row.workload = j.at("workload").get<std::string>();
    row.phase = j.at("phase").get<std::string>();
    row.ranks = j.at("ranks").get<std::uint32_t>();
    row.bytes = j.at("bytes").get<std::uint64_t>();
    row.ops = j.at("ops").get<std::uint64_t>();
    row.first_done_s = read_number(j.at("first_done_s"));
    row.last_done_s = read_number(j.at("last_done_s"));
    row.first_bytes_per_s = read_number(j.at("first_bytes_per_s"));
    row.last_bytes_per_s = read_number(j.at("last_bytes_per_s"));
    row.first_ops_per_s = read_number(j.at("first_ops_per_s"));
    row.last_ops_per_s = read_number(j.at("last_ops_per_s"));
    row.latency_us_p50 = read_number(j.at("latency_us_p50"));
    row.latency_us_p99 = read_number(j.at("latency_us_p99"));
    for (const auto& [name, value] : j.at("extra").items()) row.extra[name] = read_number(value);
    if (j.contains("bound_bytes_per_s")) {  // results written before bounds had none
      row.bound_bytes_per_s = read_number(j.at("bound_bytes_per_s"));
      row.binding_resource = j.at("binding_resource").get<std::string>();
    }
    if (j.contains("placed_bound_bytes_per_s")) {  // results written before placed bounds had none
      row.placed_bound_bytes_per_s = read_number(j.at("placed_bound_bytes_per_s"));
      row.placed_binding_resource = j.at("placed_binding_resource").get<std::string>();
    }
    if (j.contains("progress")) {  // results written before it had none
      row.progress_window_s = read_number(j.at("progress").at("window_s"));
      for (const auto& v : j.at("progress").at("bytes_per_s")) row.progress_bytes_per_s.push_back(read_number(v));
    }
    return row;
  } catch (const json::exception& e) {
    return error(StatusCode::invalid_argument, std::string("phase row: ") + e.what());
  }
}

Result<RunResult> run_result_from_json(const json& j, const ScenarioSpec* ran) {
  try {
    RunResult r;
    if (ran != nullptr) {
      r.spec = *ran;
    } else {
      r.spec.scenario = j.at("scenario").get<std::string>();
      // Results written before labels have none.
      if (const auto it = j.find("label"); it != j.end() && it->is_string()) r.spec.label = it->get<std::string>();
      r.spec.params = j.at("params").get<std::map<std::string, std::string>>();
      r.spec.seed = j.at("seed").get<std::uint64_t>();
    }
    Result<Backend> backend = parse_backend(j.at("backend").get<std::string>());
    if (!backend.ok()) return backend.status();
    r.backend = *backend;
    r.ok = j.at("ok").get<bool>();
    r.error = j.at("error").get<std::string>();
    r.simulated_s = read_number(j.at("simulated_s"));
    r.wall_s = read_number(j.at("wall_s"));
    r.paths_taken = j.at("paths_taken").get<std::map<std::string, std::uint64_t>>();
    for (const json& p : j.at("phases")) {
      Result<PhaseRow> row = phase_row_from_json(p);
      if (!row.ok()) return row.status();
      r.phases.push_back(std::move(row).value());
    }
    for (const auto& [name, value] : j.at("counters").items()) r.counters[name] = read_number(value);
    r.log_tail = j.at("log_tail").get<std::vector<std::string>>();
    if (const auto it = j.find("deployment"); it != j.end()) {
      r.deployment = it->get<std::map<std::string, std::string>>();
    }
    return r;
  } catch (const json::exception& e) {
    return error(StatusCode::invalid_argument, std::string("run result: ") + e.what());
  }
}

RunResult run_result_of_child(const ChildJobResult& job, const ScenarioSpec& spec, Backend backend) {
  RunResult r;
  if (job.ok) {
    try {
      Result<RunResult> decoded = run_result_from_json(nlohmann::json::parse(job.payload), &spec);
      if (decoded.ok()) return std::move(decoded).value();
      r.error = "the point's result could not be read: " + decoded.status().message();
    } catch (const std::exception& e) {
      r.error = std::string("the point's result is not JSON: ") + e.what();
    }
  } else {
    r.error = job.error;
    r.log_tail = job.log_tail;
  }
  r.spec = spec;
  r.backend = backend;
  r.ok = false;
  return r;
}

}  // namespace sluice::scenario
