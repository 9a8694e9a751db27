#include "scenarios/runner/workload_run.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <type_traits>

#include "core/common/percentile.hpp"
#include "core/workloads/phase_recorder.hpp"
#include "core/workloads/phase_summary.hpp"

namespace sluice::scenario {
namespace {

template <class... Fs>
struct Overload : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
Overload(Fs...) -> Overload<Fs...>;

// The workload class that runs a config type.
template <class Config>
struct WorkloadOf;
template <>
struct WorkloadOf<FileSweepConfig> {
  using type = FileSweep;
};
template <>
struct WorkloadOf<MdBenchConfig> {
  using type = MdBench;
};
template <>
struct WorkloadOf<TrainEpochConfig> {
  using type = TrainEpoch;
};
template <>
struct WorkloadOf<CheckpointConfig> {
  using type = CheckpointBurst;
};
template <>
struct WorkloadOf<StageInConfig> {
  using type = StageIn;
};
template <>
struct WorkloadOf<StreamConfig> {
  using type = GpuStream;
};

// Sets the config's run_tag when the script left it empty.
template <class Config>
void default_run_tag(Config& config, std::size_t index) {
  if (config.run_tag.empty()) config.run_tag = "w" + std::to_string(index);
}

constexpr double k_ns_per_us = 1000.0;

}  // namespace

Result<WorkloadRun> WorkloadRun::create(const WorkloadSpec& spec, std::size_t index, const topo::Topology& cluster) {
  const std::string where = "workload " + std::to_string(index) + " (\"" + spec.label + "\")";
  if (spec.clients.nodes.empty()) return error(StatusCode::invalid_argument, where + ": no client nodes");
  if (spec.clients.ranks_per_node == 0) return error(StatusCode::invalid_argument, where + ": ranks_per_node is 0");
  for (NodeId node : spec.clients.nodes) {
    if (node >= cluster.node_count()) {
      return error(StatusCode::invalid_argument, where + ": client node " + std::to_string(node) +
                                                     " does not exist (the cluster has " +
                                                     std::to_string(cluster.node_count()) + " nodes)");
    }
  }
  WorkloadRun run(spec);
  Status valid = std::visit(
      [&](auto& config) -> Status {
        default_run_tag(config, index);
        return WorkloadOf<std::decay_t<decltype(config)>>::type::validate(config);
      },
      run.spec_.config);
  if (!valid.ok()) return error(StatusCode::invalid_argument, where + ": " + valid.message());
  return run;
}

std::uint32_t WorkloadRun::ranks() const {
  return static_cast<std::uint32_t>(spec_.clients.nodes.size()) * spec_.clients.ranks_per_node;
}

NodeId WorkloadRun::node_of(std::uint32_t rank) const {
  return spec_.clients.nodes[rank / spec_.clients.ranks_per_node];
}

std::uint16_t WorkloadRun::gpu_of(std::uint32_t rank) const {
  return static_cast<std::uint16_t>(rank % spec_.clients.ranks_per_node);
}

std::vector<std::uint16_t> rank_host_numa(const ClientPlacement& clients, std::uint32_t rank,
                                          const topo::Topology& cluster) {
  const std::uint32_t per_node = clients.ranks_per_node;
  const NodeId node = clients.nodes[rank / per_node];
  const std::uint32_t sockets = cluster.count(node, topo::VertexKind::host_memory);
  const std::uint32_t local = rank % per_node;
  std::vector<std::uint16_t> out;
  if (sockets == 0) return out;
  if (per_node > 1 && local < cluster.count(node, topo::VertexKind::gpu)) {
    Result<topo::VertexId> gpu = cluster.device(node, topo::VertexKind::gpu, local);
    if (gpu.ok() && cluster.vertex(*gpu).numa < sockets) {
      out.push_back(static_cast<std::uint16_t>(cluster.vertex(*gpu).numa));
      return out;
    }
  }
  for (std::uint32_t s = 0; s < sockets; ++s) {
    if (s % per_node == local) out.push_back(static_cast<std::uint16_t>(s));
  }
  if (out.empty()) out.push_back(static_cast<std::uint16_t>(local % sockets));
  return out;
}

std::string WorkloadRun::metric_name() const {
  return std::visit(
      [](const auto& config) -> std::string {
        using W = typename WorkloadOf<std::decay_t<decltype(config)>>::type;
        return W(config).name();
      },
      spec_.config);
}

std::unique_ptr<Workload> WorkloadRun::make(std::uint32_t rank) {
  std::unique_ptr<Workload> w = std::visit(
      [](const auto& config) -> std::unique_ptr<Workload> {
        using W = typename WorkloadOf<std::decay_t<decltype(config)>>::type;
        return std::make_unique<W>(config);
      },
      spec_.config);
  if (made_.size() <= rank) made_.resize(rank + 1, nullptr);
  made_[rank] = w.get();
  return w;
}

std::vector<RankPhaseResult> WorkloadRun::rank_results(std::uint32_t rank) const {
  if (rank >= made_.size() || made_[rank] == nullptr) return {};
  return std::visit(
      [&](const auto& config) -> std::vector<RankPhaseResult> {
        using W = typename WorkloadOf<std::decay_t<decltype(config)>>::type;
        return static_cast<const W*>(made_[rank])->results();
      },
      spec_.config);
}

namespace {

constexpr const char* k_progress_counter = "progress_bytes.";

// Merges the ranks' windows into the widest width any rank ended with (every
// width is k_progress_first_width_ns times a power of two, so a window of a
// finer width lies inside exactly one of the widest) and turns them into rates.
void set_progress(PhaseRow& row, const std::map<std::pair<TimeNs, std::uint64_t>, double>& progress) {
  if (progress.empty()) return;
  TimeNs widest = 0;
  for (const auto& [key, bytes] : progress) widest = std::max(widest, key.first);
  std::vector<double> bytes_per_window;
  for (const auto& [key, bytes] : progress) {
    if (key.first <= 0) continue;
    const std::uint64_t window =
        key.second * static_cast<std::uint64_t>(key.first) / static_cast<std::uint64_t>(widest);
    if (window >= 64 * k_max_progress_windows) continue;  // not from a PhaseRecorder
    if (window >= bytes_per_window.size()) bytes_per_window.resize(window + 1, 0.0);
    bytes_per_window[window] += bytes;
  }
  row.progress_window_s = static_cast<double>(widest) / static_cast<double>(k_ns_per_s);
  row.progress_bytes_per_s.clear();
  for (double b : bytes_per_window) row.progress_bytes_per_s.push_back(b / row.progress_window_s);
}

}  // namespace

std::vector<PhaseRow> WorkloadRun::rows(const MetricWindow& window, const std::vector<TargetId>& targets) const {
  // Phases in the order the ranks ran them (a rank that failed early ran fewer).
  std::vector<std::string> order;
  std::map<std::string, std::vector<RankPhaseResult>> by_phase;
  for (std::uint32_t rank = 0; rank < made_.size(); ++rank) {
    for (RankPhaseResult& r : rank_results(rank)) {
      if (by_phase.find(r.phase) == by_phase.end()) order.push_back(r.phase);
      by_phase[r.phase].push_back(std::move(r));
    }
  }
  const std::string name = metric_name();
  std::vector<PhaseRow> rows;
  for (const std::string& phase : order) {
    const PhaseSummary s = summarize_phase(by_phase[phase]);
    PhaseRow row;
    row.workload = spec_.label;
    row.phase = phase;
    row.ranks = s.ranks;
    row.bytes = s.bytes;
    row.ops = s.ops;
    row.first_done_s = static_cast<double>(s.first_done_ns) / static_cast<double>(k_ns_per_s);
    row.last_done_s = static_cast<double>(s.last_done_ns) / static_cast<double>(k_ns_per_s);
    // A rate over no measurable time is not measured (NaN: null, an empty cell), not 0.
    const auto rate = [](double per_s, TimeNs over_ns) {
      return over_ns > 0 ? per_s : std::numeric_limits<double>::quiet_NaN();
    };
    row.first_bytes_per_s = rate(s.first_bytes_per_s, s.first_done_ns);
    row.last_bytes_per_s = rate(s.last_bytes_per_s, s.last_done_ns);
    row.first_ops_per_s = rate(s.first_ops_per_s, s.first_done_ns);
    row.last_ops_per_s = rate(s.last_ops_per_s, s.last_done_ns);
    const std::string prefix = name + "." + phase + ".";
    if (auto it = window.samples.find(prefix + "op_latency_ns"); it != window.samples.end()) {
      // No finite sample: the row keeps NaN (not measured), as for a phase without latencies.
      if (Result<double> p50 = percentile(it->second, 0.50); p50.ok()) row.latency_us_p50 = *p50 / k_ns_per_us;
      if (Result<double> p99 = percentile(it->second, 0.99); p99.ok()) row.latency_us_p99 = *p99 / k_ns_per_us;
    }
    std::map<std::pair<TimeNs, std::uint64_t>, double> progress;  // (width, window) -> bytes
    for (const auto& [metric, value] : window.counters) {
      if (metric.rfind(prefix, 0) != 0) continue;
      const std::string rest = metric.substr(prefix.size());
      if (rest == "bytes" || rest == "ops") continue;  // the row's own columns
      if (rest.rfind(k_progress_counter, 0) == 0) {
        // "progress_bytes.<width_ns>.<window>" (PhaseRecorder)
        const std::string tail = rest.substr(std::string_view(k_progress_counter).size());
        const std::size_t dot = tail.find('.');
        if (dot == std::string::npos) continue;
        progress[{std::stoll(tail.substr(0, dot)), std::stoull(tail.substr(dot + 1))}] += value;
        continue;
      }
      row.extra[rest] = value;
    }
    set_progress(row, progress);
    for (const auto& [metric, values] : window.samples) {
      if (metric.rfind(prefix, 0) != 0 || values.empty()) continue;
      const std::string rest = metric.substr(prefix.size());
      if (rest == "op_latency_ns" || rest == "elapsed_ns") continue;  // in the percentiles and done times
      row.extra[rest + "_mean"] =
          std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
    }
    rows.push_back(std::move(row));
  }
  add_workload_extras(rows, targets);
  return rows;
}

void WorkloadRun::add_workload_extras(std::vector<PhaseRow>& rows, const std::vector<TargetId>& targets) const {
  auto row_of = [&](const std::string& phase) -> PhaseRow* {
    for (PhaseRow& r : rows) {
      if (r.phase == phase) return &r;
    }
    return nullptr;
  };
  std::visit(Overload{
                 [&](const TrainEpochConfig&) {
                   PhaseRow* row = row_of("epoch");
                   double au_sum = 0;
                   std::size_t epochs = 0;
                   for (Workload* w : made_) {
                     if (w == nullptr) continue;
                     for (const EpochResult& e : static_cast<const TrainEpoch*>(w)->epochs()) {
                       au_sum += e.au;
                       ++epochs;
                     }
                   }
                   if (row != nullptr && epochs > 0)
                     row->extra["au_pct"] = 100.0 * au_sum / static_cast<double>(epochs);
                 },
                 [&](const CheckpointConfig&) {
                   PhaseRow* row = row_of("write");
                   TargetBytes all;
                   for (Workload* w : made_) {
                     if (w == nullptr) continue;
                     for (const auto& [target, bytes] : static_cast<const CheckpointBurst*>(w)->target_bytes()) {
                       all[target] += bytes;
                     }
                   }
                   const TargetBalance b =
                       target_balance(all, std::vector<std::uint32_t>(targets.begin(), targets.end()));
                   if (row != nullptr) {
                     row->extra["target_max_over_mean"] = b.max_over_mean;
                     row->extra["target_cv"] = b.cv;
                     row->extra["targets"] = static_cast<double>(b.targets);
                   }
                 },
                 [](const auto&) {},
             },
             spec_.config);
}

}  // namespace sluice::scenario
