#include "scenarios/lua/mlperf_search.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "core/topology/topology.hpp"

#include "scenarios/lua/field_tables.hpp"
#include "scenarios/lua/script_units.hpp"

namespace sluice::scenario {
namespace {

constexpr const char* k_context = "sl.mlperf";

std::string fail_text(const std::string& field, const std::string& problem) {
  return std::string(k_context) + ": " + field + ": " + problem;
}

// "93.21%"
std::string percent_text(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", 100.0 * fraction);
  return buf;
}

std::string number_text(double v, const char* format) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// The DLIO config's metric.au (workload.dlio.au), or nothing.
std::optional<double> dlio_threshold(const ScriptObject& workload) {
  const auto dlio = workload.reported.fields.find("dlio");
  if (dlio == workload.reported.fields.end() || dlio->second.table() == nullptr) return std::nullopt;
  const auto au = dlio->second.table()->fields.find("au");
  if (au == dlio->second.table()->fields.end() || !au->second.is_number()) return std::nullopt;
  if (const double* d = std::get_if<double>(&au->second.value)) return *d;
  return static_cast<double>(std::get<std::int64_t>(au->second.value));
}

}  // namespace

MlperfPlan read_mlperf_fields(ScriptTable& args) {
  ScriptTable own;
  for (const FieldDoc& f : mlperf_fields().fields) {
    if (auto it = args.fields.find(f.name); it != args.fields.end()) {
      own.fields.insert(*it);
      args.fields.erase(it);
    }
  }
  FieldReader r(own, k_context, mlperf_fields());
  MlperfPlan plan;
  const std::optional<std::vector<std::uint64_t>> clients = r.count_list("clients");
  const std::optional<std::uint64_t> max = r.count("max_accelerators");
  const std::optional<double> au = r.number("au");
  const std::optional<std::string> datasize = r.choice("datasize");
  r.finish();
  if (!clients) r.fail("clients", "missing: the client node counts to search, such as clients = {1, 2, 4}");
  if (clients->empty()) r.fail("clients", "the list is empty: give client node counts such as {1, 2, 4}");
  if (clients->size() > k_mlperf_max_client_counts) {
    r.fail("clients", std::to_string(clients->size()) + " counts, more than the limit of " +
                          std::to_string(k_mlperf_max_client_counts));
  }
  if (!max) r.fail("max_accelerators", "missing: the most accelerators per client node to try, such as 16");
  if (au && !(*au > 0)) r.fail("au", ScriptValue{*au}.text() + " is not in (0, 1]: AU is a fraction of the time");
  plan.clients = *clients;
  plan.max_accelerators = *max;
  plan.au_given = au.has_value();
  plan.au_threshold = au.value_or(0);
  plan.datasize = datasize == "require" ? MlperfDatasize::require : MlperfDatasize::report;
  return plan;
}

MlperfDatasizeNeed mlperf_datasize_need(const MlperfPlan& plan, std::uint64_t clients, std::uint64_t accelerators) {
  MlperfDatasizeNeed need;
  for (std::uint64_t i = 0; i < clients && i < plan.node_memory_bytes.size(); ++i)
    need.client_memory_bytes += plan.node_memory_bytes[i];
  const std::uint64_t by_bytes =
      plan.file_bytes == 0 ? 0 : k_mlperf_datasize_memory_factor * need.client_memory_bytes / plan.file_bytes;
  const std::uint64_t by_steps =
      k_mlperf_datasize_min_steps * accelerators * plan.batch_samples / plan.samples_per_file;
  need.min_files = std::max(by_bytes, by_steps);
  need.met = plan.dataset_files >= need.min_files;
  return need;
}

namespace {

// Host memory of each of the plan's client nodes, in the cluster's host_memory vertices.
std::vector<std::uint64_t> client_memory(const std::vector<NodeId>& nodes, const topo::Topology& cluster) {
  std::vector<std::uint64_t> out(nodes.size(), 0);
  for (topo::VertexId v = 0; v < cluster.vertex_count(); ++v) {
    const topo::Vertex& x = cluster.vertex(v);
    if (x.kind != topo::VertexKind::host_memory) continue;
    for (std::size_t i = 0; i < nodes.size(); ++i)
      if (nodes[i] == x.node) out[i] += x.host_memory_bytes;
  }
  return out;
}

// The dataset the rule weighs, from the train_epoch (the mean sample size).
void set_dataset(MlperfPlan& plan, const TrainEpochConfig& train, const topo::Topology& cluster) {
  plan.samples_per_file = std::max<std::uint64_t>(train.samples_per_file, 1);
  plan.batch_samples = std::max<std::uint64_t>(train.batch_samples, 1);
  plan.dataset_files = (train.samples + plan.samples_per_file - 1) / plan.samples_per_file;
  plan.dataset_bytes = train.samples * train.sample_bytes;
  plan.file_bytes = plan.samples_per_file * train.sample_bytes;
  plan.node_memory_bytes = client_memory(plan.nodes, cluster);
}

// With datasize = "require": every client count's dataset meets the rule at max_accelerators per client.
void require_datasize(const MlperfPlan& plan) {
  for (std::size_t i = 0; i < plan.clients.size(); ++i) {
    const MlperfDatasizeNeed need =
        mlperf_datasize_need(plan, plan.clients[i], plan.clients[i] * plan.max_accelerators);
    if (need.met) continue;
    throw ScriptError(fail_text(
        "datasize", "\"require\": at clients[" + std::to_string(i + 1) + "] = " + std::to_string(plan.clients[i]) +
                        " the dataset has " + std::to_string(plan.dataset_files) + " files; MLPerf's rule (5x the " +
                        std::to_string(need.client_memory_bytes) + " bytes of the clients' memory, 500 steps of " +
                        std::to_string(plan.clients[i] * plan.max_accelerators) + " accelerators) needs " +
                        std::to_string(need.min_files) + ": raise dataset.num_files_train"));
  }
}

}  // namespace

void check_mlperf_plan(MlperfPlan& plan, const ScriptObject& workload, const WorkloadSpec& built,
                       const topo::Topology& cluster) {
  const auto* train = std::get_if<TrainEpochConfig>(&built.config);
  if (train == nullptr) {
    throw ScriptError(fail_text("workload", "a " + workload.type +
                                                " has no accelerators; give sl.workload.dlio{...} or "
                                                "sl.workload.train_epoch{...}"));
  }
  if (!plan.au_given) {
    const std::optional<double> au = dlio_threshold(workload);
    if (!au)
      throw ScriptError(fail_text("au", "missing: the workload is no DLIO config with metric.au; give au = 0.9"));
    plan.au_threshold = *au;
  }
  plan.nodes = built.clients.nodes;
  plan.workload = built.label;
  for (std::size_t i = 0; i < plan.clients.size(); ++i) {
    if (plan.clients[i] > plan.nodes.size()) {
      throw ScriptError(fail_text("clients[" + std::to_string(i + 1) + "]",
                                  std::to_string(plan.clients[i]) + " client nodes, but the workload has " +
                                      std::to_string(plan.nodes.size()) +
                                      " (its client_nodes, else the file system's clients)"));
    }
  }
  const std::uint64_t most = *std::max_element(plan.clients.begin(), plan.clients.end()) * plan.max_accelerators;
  const std::uint64_t needed = k_mlperf_min_steps * train->batch_samples * most;
  if (train->samples < needed) {
    throw ScriptError(fail_text(
        "max_accelerators", std::to_string(most) + " accelerators reading " + std::to_string(train->batch_samples) +
                                " samples a step need " + std::to_string(needed) + " samples for " +
                                std::to_string(k_mlperf_min_steps) +
                                " steps (AU leaves out the first), the dataset has " + std::to_string(train->samples) +
                                "; raise the samples (dataset.num_files_train) or lower max_accelerators"));
  }
  set_dataset(plan, *train, cluster);
  if (plan.datasize == MlperfDatasize::require) require_datasize(plan);
}

std::shared_ptr<const ScriptObject> mlperf_workload(const ScriptObject& workload, const MlperfPlan& plan,
                                                    std::uint64_t clients, std::uint64_t per_client,
                                                    std::map<std::string, std::string>& params) {
  auto out = std::make_shared<ScriptObject>(workload);
  auto nodes = std::make_shared<ScriptTable>();
  for (std::uint64_t i = 0; i < clients; ++i) nodes->list.push_back(ScriptValue{std::int64_t{plan.nodes[i]}});
  out->args.fields["client_nodes"] = ScriptValue{std::shared_ptr<const ScriptTable>(nodes)};
  out->args.fields["ranks_per_node"] = ScriptValue{static_cast<std::int64_t>(per_client)};
  params["clients"] = std::to_string(clients);
  params["accelerators"] = std::to_string(clients * per_client);
  return out;
}

MlperfProbe mlperf_probe(const RunResult& run, const MlperfPlan& plan, std::uint64_t clients,
                         std::uint64_t per_client) {
  const std::string at =
      "the probe at clients=" + std::to_string(clients) + " accelerators=" + std::to_string(clients * per_client);
  if (!run.ok) throw ScriptError(std::string(k_context) + ": " + at + " failed: " + run.error);
  for (const PhaseRow& row : run.phases) {
    if (row.workload != plan.workload || row.phase != "epoch") continue;
    const auto au = row.extra.find("au_pct");
    if (au == row.extra.end() || !std::isfinite(au->second)) break;
    MlperfProbe p;
    p.clients = clients;
    p.per_client = per_client;
    p.au = au->second / 100.0;
    p.throughput_mib_per_s = row.last_bytes_per_s / k_bytes_per_mib;
    p.samples_per_s = row.last_ops_per_s;
    p.binding_resource = row.binding_resource;
    p.passed = p.au >= plan.au_threshold;
    return p;
  }
  throw ScriptError(std::string(k_context) + ": " + at + " measured no AU of " + plan.workload + "'s epoch");
}

MlperfRow mlperf_row(const MlperfPlan& plan, std::uint64_t clients, std::uint64_t largest, std::uint64_t least_failing,
                     const std::vector<MlperfProbe>& probes) {
  MlperfRow row;
  row.workload = plan.workload;
  row.clients = clients;
  row.accelerators_per_client = largest;
  row.accelerators = clients * largest;
  row.au_threshold = plan.au_threshold;
  row.probes = probes.size();
  const MlperfDatasizeNeed need = mlperf_datasize_need(plan, clients, std::max<std::uint64_t>(row.accelerators, 1));
  row.dataset_files = plan.dataset_files;
  row.dataset_bytes = plan.dataset_bytes;
  row.client_memory_bytes = need.client_memory_bytes;
  row.datasize_min_files = need.min_files;
  row.meets_datasize = need.met;
  for (const MlperfProbe& p : probes) {
    if (p.per_client != largest) continue;
    row.au = p.au;
    row.throughput_mib_per_s = p.throughput_mib_per_s;
    row.samples_per_s = p.samples_per_s;
    row.binding_resource = p.binding_resource;
  }
  const std::string threshold = percent_text(plan.au_threshold);
  if (least_failing > plan.max_accelerators) {
    row.stopped = "max_accelerators=" + std::to_string(plan.max_accelerators) + " per client kept AU >= " + threshold;
  } else {
    for (const MlperfProbe& p : probes) {
      if (p.per_client != least_failing) continue;
      row.stopped = std::to_string(clients * least_failing) + " accelerators fell to AU " + percent_text(p.au) + " < " +
                    threshold;
    }
  }
  return row;
}

std::string mlperf_probe_text(const MlperfProbe& p, const MlperfPlan& plan) {
  return "mlperf probe: clients=" + std::to_string(p.clients) +
         " accelerators=" + std::to_string(p.clients * p.per_client) + " (" + std::to_string(p.per_client) +
         " per client): AU " + percent_text(p.au) + (p.passed ? " >= " : " < ") + percent_text(plan.au_threshold) +
         ", " + number_text(p.throughput_mib_per_s, "%.1f") + " MiB/s, " + number_text(p.samples_per_s, "%.1f") +
         " samples/s";
}

std::string mlperf_table(const MlperfPlan& plan, const std::vector<MlperfRow>& rows) {
  std::string out =
      "mlperf " + plan.workload + ": the most accelerators with AU >= " + percent_text(plan.au_threshold) + "\n";
  char line[512];
  std::snprintf(line, sizeof line, "%8s %13s %11s %8s %12s %10s  %s\n", "clients", "accelerators", "per_client", "AU_%",
                "MiB/s", "samples/s", "binding / why the search ended");
  out += line;
  for (const MlperfRow& r : rows) {
    const std::string why = r.binding_resource.empty() ? r.stopped : r.binding_resource + "; " + r.stopped;
    std::snprintf(line, sizeof line, "%8llu %13llu %11llu %8.2f %12.1f %10.1f  %s\n",
                  static_cast<unsigned long long>(r.clients), static_cast<unsigned long long>(r.accelerators),
                  static_cast<unsigned long long>(r.accelerators_per_client), 100.0 * r.au, r.throughput_mib_per_s,
                  r.samples_per_s, why.c_str());
    out += line;
  }
  for (const MlperfRow& r : rows) {
    if (r.meets_datasize) continue;
    std::snprintf(line, sizeof line,
                  "  clients=%llu: the dataset (%llu files, %.3g GB) is below MLPerf's closed rule (5x the clients' "
                  "%.3g GB of memory, 500 steps): %llu files; not a closed-division result\n",
                  static_cast<unsigned long long>(r.clients), static_cast<unsigned long long>(r.dataset_files),
                  static_cast<double>(r.dataset_bytes) / 1e9, static_cast<double>(r.client_memory_bytes) / 1e9,
                  static_cast<unsigned long long>(r.datasize_min_files));
    out += line;
  }
  return out;
}

const FieldTable& mlperf_fields() {
  static const FieldTable k{
      "sl.mlperf",
      "the most accelerators each client node count keeps at the AU threshold, as MLPerf Storage reports a training "
      "result (one run per probe: doubling from 1 per client, then bisection); every other field is sl.run's, for "
      "one point of one train_epoch workload (sl.workload.dlio) on one backend",
      {count_list_field("clients", "client nodes", 1, topo::k_max_nodes, "",
                        "client node counts to search, each on the first nodes of the workload's clients (required)"),
       count_field("max_accelerators", "accelerators", 1, k_mlperf_max_accelerators, "",
                   "the most accelerators (ranks) per client node to try (required)"),
       number_field("au", "fraction", 0, 1, "the DLIO config's metric.au",
                    "the AU threshold a count must keep, in (0, 1]"),
       choice_field("datasize", {"report", "require"}, "report",
                    "MLPerf's closed dataset rule (files >= 5x the clients' memory and 500 steps): report it per row "
                    "and warn, or refuse a search whose dataset is smaller at max_accelerators")}};
  return k;
}

}  // namespace sluice::scenario
