#include "scenarios/deploy/gathered_results.hpp"

#include <filesystem>

#include "scenarios/deploy/spec_deployment.hpp"
#include "scenarios/runner/results_writer.hpp"

namespace sluice::emulate {

std::map<std::string, std::string> point_params(const ClusterConfig& config) {
  const ClusterWorkload& w = config.workload;
  return {
      {"nodes", std::to_string(config.nodes.size())},       {"stripe_count", std::to_string(config.stripe_count())},
      {"chunk_bytes", std::to_string(w.chunk_bytes)},       {"file_bytes", std::to_string(w.sweep.file_bytes)},
      {"block_bytes", std::to_string(w.sweep.block_bytes)}, {"files_per_rank", std::to_string(w.sweep.files_per_rank)},
      {"threads", std::to_string(w.sweep.threads)}};
}

scenario::ScenarioSpec gathered_spec(const ClusterConfig& config, const GatheredRunInfo& info) {
  scenario::ScenarioSpec spec;
  spec.scenario = info.scenario;
  spec.label = info.cluster_description;
  spec.seed = config.seed;
  spec.backends = {info.backend};
  spec.cluster_description = info.cluster_description;
  spec.params = point_params(config);
  for (const auto& [name, value] : info.params) spec.params[name] = value;
  spec.fs.preset = "custom";
  scenario::WorkloadSpec sweep;
  sweep.label = "file_sweep";
  sweep.config = config.workload.sweep;
  for (const NodeSpec& n : config.nodes) {
    if (n.has(Role::mgmt)) spec.fs.mgmt_node = n.id;
    if (n.has(Role::meta)) spec.fs.meta_nodes.push_back(n.id);
    if (n.has(Role::client)) sweep.clients.nodes.push_back(n.id);
    if (n.has(Role::storage)) {
      scenario::StorageServerSpec server;
      server.node = n.id;
      for (TargetId t : n.targets) server.nvme.push_back(static_cast<std::uint32_t>(t));
      spec.fs.storage.push_back(std::move(server));
    }
  }
  spec.fs.meta.default_chunk_bytes = config.workload.chunk_bytes;
  spec.fs.meta.default_stripe_count = config.stripe_count();
  spec.workloads.push_back(std::move(sweep));
  return spec;
}

std::string authenticated_of(const nlohmann::json& gathered) {
  const auto nodes = gathered.find("nodes");
  if (nodes == gathered.end() || !nodes->is_array() || nodes->empty()) return "false";
  for (const auto& node : *nodes) {
    if (!node.is_object() || !node.value("authenticated", false)) return "false";
  }
  return "true";
}

Status write_gathered_results(const std::string& dir, const nlohmann::json& gathered, const ClusterConfig& config,
                              const GatheredRunInfo& info) {
  scenario::RunResult run = SpecDeployment::result_of(gathered_spec(config, info), gathered);
  run.backend = info.backend;
  run.wall_s = info.wall_s;
  // An emulation gives its nodes a storage root of the run's own (the gathered
  // document says which); `node --mpi` uses the config's.
  run.deployment = {{"transport", "tcp"},
                    {"storage_backend", config.storage_backend},
                    {"storage_root", gathered.value("storage_root", config.storage_root)},
                    {"meta_store", SLUICE_HAVE_ROCKSDB ? config.meta_store : std::string("memory")},
                    {"authenticated", authenticated_of(gathered)}};
  if (Status st = scenario::write_results(dir, info.scenario, {run}); !st.ok()) return st;
  return scenario::write_atomically(std::filesystem::path(dir) / "nodes.json", gathered.dump(2) + "\n");
}

}  // namespace sluice::emulate
