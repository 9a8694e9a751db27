#include "scenarios/runner/point_bound.hpp"

#include <algorithm>
#include <limits>
#include <set>

#include <fmt/core.h>

#include "core/sched/data_path.hpp"
#include "core/topology/flow_bound.hpp"
#include "scenarios/runner/fs_deployment.hpp"

namespace sluice::scenario {

namespace {

using topo::FlowPattern;
using topo::FlowStage;
using topo::FlowTerminal;
using topo::VertexKind;

std::vector<topo::VertexId> devices(const topo::Topology& t, NodeId node, VertexKind kind) {
  std::vector<topo::VertexId> out;
  for (std::uint32_t i = 0; i < t.count(node, kind); ++i) {
    if (Result<topo::VertexId> v = t.device(node, kind, i); v.ok()) out.push_back(*v);
  }
  return out;
}

// A buffer of one client rank: its GPU, or any host memory of its node.
Result<FlowTerminal> rank_buffer(const topo::Topology& t, const ClientPlacement& c, std::uint32_t rank, MemKind kind) {
  const NodeId node = c.nodes[rank / c.ranks_per_node];
  if (kind == MemKind::gpu) {
    Result<topo::VertexId> gpu = t.device(node, VertexKind::gpu, rank % c.ranks_per_node);
    if (!gpu.ok()) return gpu.status();
    return FlowTerminal{*gpu, 1.0, {}};
  }
  std::vector<topo::VertexId> mems = devices(t, node, VertexKind::host_memory);
  if (mems.empty()) return error(StatusCode::invalid_argument, "node " + std::to_string(node) + " has no host memory");
  FlowTerminal term{mems.front(), 1.0, {}};
  term.alternatives.assign(mems.begin() + 1, mems.end());
  return term;
}

// Whether GPU `gpu` of `node` has a NIC the client sends its bytes through
// peer-to-peer (GPUDirect: within PXB, core/sched/data_path.hpp); without one,
// its bytes bounce through host memory even with GDS.
bool has_direct_nic(const topo::Topology& t, NodeId node, std::uint32_t gpu) {
  for (std::uint32_t nic = 0; nic < t.count(node, VertexKind::nic); ++nic) {
    Result<sched::PathDecision> d =
        sched::decide_path(t, node, sched::MemoryPlace::gpu(gpu), nic, sched::BackendCaps{true});
    if (d.ok() && d->path == sched::DataPath::direct) return true;
  }
  return false;
}

Result<PhaseBound> solve(const topo::Topology& t, const FlowPattern& p, PhaseBound row) {
  Result<topo::FlowBound> b = topo::flow_bound(t, p);
  if (!b.ok()) return b.status();
  if (b->cut.empty()) {
    // Sources and sinks share a memory (a BeeOND node writing to its own
    // server's page cache): no link of the model carries the bytes.
    row.binding_resource = "no bound: " + b->binding;
    return row;
  }
  row.computed = true;
  row.bound_bytes_per_s = b->bytes_per_s;
  row.binding_kind = b->binding_kind;
  row.binding_resource = b->binding;
  return row;
}

std::uint64_t rank_count(const WorkloadSpec& w) {
  return static_cast<std::uint64_t>(w.clients.nodes.size()) * w.clients.ranks_per_node;
}

// How a phase's GPU buffers are reached. With GDS, a client node whose
// ranks' GPUs all have a NIC within PXB moves their bytes peer-to-peer
// through those NICs alone (the GPUDirect rail rule, flow_bound.hpp;
// core/sched/rail_selector.hpp). A node that is also a server, or holds a GPU
// without such a NIC, stays open (a relaxation); with no such NIC anywhere,
// or GDS off, every byte bounces through the clients' host memory.
struct GpuPaths {
  std::vector<NodeId> peer_to_peer;
  bool bounce = false;
};

GpuPaths gpu_paths(const topo::Topology& t, const WorkloadSpec& w, MemKind kind, GdsMode gds,
                   const std::set<NodeId>& servers) {
  GpuPaths out;
  if (kind != MemKind::gpu) return out;
  std::set<NodeId> open, clients;
  bool any_direct = false;
  for (std::uint64_t r = 0; r < rank_count(w); ++r) {
    const NodeId node = w.clients.nodes[r / w.clients.ranks_per_node];
    clients.insert(node);
    const bool direct =
        gds != GdsMode::off && has_direct_nic(t, node, static_cast<std::uint32_t>(r % w.clients.ranks_per_node));
    any_direct = any_direct || direct;
    if (!direct || servers.count(node) != 0) open.insert(node);
  }
  out.bounce = !any_direct;
  if (out.bounce) return out;
  for (NodeId c : clients) {
    if (open.count(c) == 0) out.peer_to_peer.push_back(c);
  }
  return out;
}

// A phase that writes or reads every rank's buffers of `kind` to or from every target (see the header).
Result<PhaseBound> bulk_bound(const ScenarioSpec& spec, const WorkloadSpec& w, MemKind kind, bool write) {
  const topo::Topology& t = *spec.cluster;
  PhaseBound row{w.label, write ? "write" : "read", false, 0, "", ""};
  if (write && spec.fs.storage_config.mirror.enabled && spec.fs.meta.mirror_file_data) {
    row.binding_resource = "no bound: mirrored writes are not in the calculator yet";
    return row;
  }
  std::vector<FlowTerminal> drives, buffers;
  std::set<NodeId> server_set, client_set;
  for (const StorageServerSpec& s : spec.fs.storage) {
    server_set.insert(s.node);
    for (std::uint32_t n : s.nvme) {
      Result<topo::VertexId> v = t.device(s.node, VertexKind::nvme, n);
      if (!v.ok()) return v.status();
      drives.push_back(FlowTerminal{*v, 1.0, {}});
    }
  }
  const std::uint64_t ranks = rank_count(w);
  for (std::uint64_t r = 0; r < ranks; ++r) {
    Result<FlowTerminal> b = rank_buffer(t, w.clients, static_cast<std::uint32_t>(r), kind);
    if (!b.ok()) return b.status();
    buffers.push_back(*b);
    client_set.insert(w.clients.nodes[r / w.clients.ranks_per_node]);
  }
  if (buffers.empty()) {
    row.binding_resource = "no bound: the workload has no client rank";
    return row;
  }
  const std::vector<NodeId> servers(server_set.begin(), server_set.end());
  const std::vector<NodeId> clients(client_set.begin(), client_set.end());
  std::vector<NodeId> both = servers;
  both.insert(both.end(), clients.begin(), clients.end());
  std::sort(both.begin(), both.end());
  both.erase(std::unique(both.begin(), both.end()), both.end());
  if (write && spec.fs.storage_config.buffered_writes) {
    // Write-back: a write is done once the page cache holds it, so the bytes
    // end in each server's host memory (any NUMA node), in the targets'
    // shares; the drives bind only once the dirty budget is full.
    std::vector<FlowTerminal> caches;
    for (const StorageServerSpec& server : spec.fs.storage) {
      std::vector<topo::VertexId> mems = devices(t, server.node, VertexKind::host_memory);
      if (mems.empty() || server.nvme.empty()) continue;
      FlowTerminal cache{mems.front(), static_cast<double>(server.nvme.size()), {}};
      cache.alternatives.assign(mems.begin() + 1, mems.end());
      caches.push_back(std::move(cache));
    }
    drives = std::move(caches);
  }
  const GpuPaths gpu = gpu_paths(t, w, kind, spec.fs.gds, server_set);
  FlowPattern p;
  p.stages = {FlowStage{servers, false}, FlowStage{both, true, gpu.peer_to_peer}};
  if (gpu.bounce) p.stages.push_back(FlowStage{clients, false});
  p.sources = drives;
  p.sinks = buffers;
  if (write) {
    std::reverse(p.stages.begin(), p.stages.end());
    std::swap(p.sources, p.sinks);
  }
  return solve(t, p, row);
}

// A ceiling the workload's own parameters set beside the hardware's (an
// object store's egress, the accelerators' compute): the lower one binds.
void cap_by(PhaseBound& row, double cap_bytes_per_s, const std::string& kind, const std::string& what) {
  if (!row.computed || !(cap_bytes_per_s > 0) || cap_bytes_per_s >= row.bound_bytes_per_s) return;
  row.bound_bytes_per_s = cap_bytes_per_s;
  row.binding_kind = kind;
  row.binding_resource = kind + ": " + what;
}

std::string rate_text(double bytes_per_s) { return fmt::format("{:.3g} GB/s", bytes_per_s / 1e9); }

// A stage-in's ingress: each rank's blocks written from its buffer to every
// target, and no faster than the object store gives them
// (source_bytes_per_s_per_rank x ranks, when set).
Result<PhaseBound> stage_in_bound(const ScenarioSpec& spec, const WorkloadSpec& w, const StageInConfig& c) {
  Result<PhaseBound> b = bulk_bound(spec, w, c.buffer_kind, true);
  if (!b.ok()) return b;
  b->phase = "ingress";
  const std::uint64_t ranks = rank_count(w);
  cap_by(*b, static_cast<double>(c.source_bytes_per_s_per_rank) * static_cast<double>(ranks), "object store",
         std::to_string(ranks) + " ranks x " + rate_text(static_cast<double>(c.source_bytes_per_s_per_rank)) +
             " (source_bytes_per_s_per_rank)");
  return b;
}

// A training epoch: each rank's batches read from every target into its
// GPU, and no faster than the accelerators consume them: a step's batch per
// compute_ns_per_step per rank (reads overlap the compute, never the other
// way round).
Result<PhaseBound> epoch_bound(const ScenarioSpec& spec, const WorkloadSpec& w, const TrainEpochConfig& c) {
  Result<PhaseBound> b = bulk_bound(spec, w, MemKind::gpu, false);
  if (!b.ok()) return b;
  b->phase = "epoch";
  if (c.compute_ns_per_step > 0) {
    const double step_bytes = static_cast<double>(c.batch_samples) * static_cast<double>(c.sample_bytes);
    const std::uint64_t ranks = rank_count(w);
    cap_by(*b, step_bytes * static_cast<double>(ranks) * 1e9 / static_cast<double>(c.compute_ns_per_step),
           "accelerator compute",
           std::to_string(ranks) + " ranks x " + std::to_string(static_cast<std::uint64_t>(step_bytes)) +
               " bytes per " + std::to_string(c.compute_ns_per_step) + " ns step");
  }
  return b;
}

// A GPU stream: record writes each rank's buffers from its GPU, playback
// reads them into it, and one compute step per buffer runs at a time per
// rank: no faster than buffer_bytes per compute_ns_per_buffer per rank.
Result<PhaseBound> stream_bound(const ScenarioSpec& spec, const WorkloadSpec& w, const StreamConfig& c) {
  const bool record = c.direction == StreamDirection::record;
  Result<PhaseBound> b = bulk_bound(spec, w, MemKind::gpu, record);
  if (!b.ok()) return b;
  b->phase = std::string(to_string(c.direction));
  if (c.compute_ns_per_buffer > 0) {
    const std::uint64_t ranks = rank_count(w);
    cap_by(*b,
           static_cast<double>(c.buffer_bytes) * static_cast<double>(ranks) * 1e9 /
               static_cast<double>(c.compute_ns_per_buffer),
           "accelerator compute",
           std::to_string(ranks) + " ranks x " + std::to_string(c.buffer_bytes) + " bytes per " +
               std::to_string(c.compute_ns_per_buffer) + " ns buffer");
  }
  return b;
}

}  // namespace

Result<std::vector<PhaseBound>> point_bounds(const ScenarioSpec& spec) {
  if (Status s = FsDeployment::validate(spec); !s.ok()) return s;
  std::vector<PhaseBound> rows;
  for (const WorkloadSpec& w : spec.workloads) {
    if (const auto* sweep = std::get_if<FileSweepConfig>(&w.config)) {
      for (SweepPhase phase : sweep->phases) {
        if (phase != SweepPhase::write && phase != SweepPhase::read) continue;
        Result<PhaseBound> b = bulk_bound(spec, w, sweep->buffer_kind, phase == SweepPhase::write);
        if (!b.ok()) return b.status();
        rows.push_back(std::move(b).value());
      }
      continue;
    }
    if (const auto* burst = std::get_if<CheckpointConfig>(&w.config)) {
      for (bool write : {true, false}) {
        if (!write && !burst->read_back) continue;
        Result<PhaseBound> b = bulk_bound(spec, w, burst->source_kind, write);
        if (!b.ok()) return b.status();
        rows.push_back(std::move(b).value());
      }
      continue;
    }
    if (const auto* stage = std::get_if<StageInConfig>(&w.config)) {
      Result<PhaseBound> b = stage_in_bound(spec, w, *stage);
      if (!b.ok()) return b.status();
      rows.push_back(std::move(b).value());
      continue;
    }
    if (const auto* epoch = std::get_if<TrainEpochConfig>(&w.config)) {
      Result<PhaseBound> b = epoch_bound(spec, w, *epoch);
      if (!b.ok()) return b.status();
      rows.push_back(std::move(b).value());
      continue;
    }
    if (const auto* stream = std::get_if<StreamConfig>(&w.config)) {
      Result<PhaseBound> b = stream_bound(spec, w, *stream);
      if (!b.ok()) return b.status();
      rows.push_back(std::move(b).value());
      continue;
    }
    if (std::holds_alternative<MdBenchConfig>(w.config)) continue;  // metadata only: no bulk bytes
    rows.push_back(PhaseBound{w.label, "*", false, 0, "", "no bound: this workload is not in the calculator yet"});
  }
  return rows;
}

void attach_bounds(RunResult& result) {
  if (result.phases.empty()) return;
  Result<std::vector<PhaseBound>> bounds = point_bounds(result.spec);
  for (PhaseRow& row : result.phases) {
    if (!bounds.ok()) {
      row.binding_resource = "no bound: " + bounds.status().message();
      continue;
    }
    for (const PhaseBound& b : *bounds) {
      if (b.workload != row.workload || (b.phase != row.phase && b.phase != "*")) continue;
      row.bound_bytes_per_s = b.computed ? b.bound_bytes_per_s : std::numeric_limits<double>::quiet_NaN();
      row.binding_resource = b.binding_resource;
    }
  }
}

}  // namespace sluice::scenario
