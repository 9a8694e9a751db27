#include "scenarios/runner/point_bound.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include <fmt/core.h>

#include "core/sched/data_path.hpp"
#include "core/topology/flow_bound.hpp"
#include "core/topology/hardware_figures.hpp"
#include "scenarios/runner/fs_deployment.hpp"
#include "scenarios/runner/workload_run.hpp"

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

// A buffer of one client rank: its GPU, or any host memory of the NUMA nodes
// its threads run on (rank_host_numa, workload_run.hpp: the buffers spread
// over them, the flow may take any split).
Result<FlowTerminal> rank_buffer(const topo::Topology& t, const ClientPlacement& c, std::uint32_t rank, MemKind kind) {
  const NodeId node = c.nodes[rank / c.ranks_per_node];
  if (kind == MemKind::gpu) {
    Result<topo::VertexId> gpu = t.device(node, VertexKind::gpu, rank % c.ranks_per_node);
    if (!gpu.ok()) return gpu.status();
    return FlowTerminal{*gpu, 1.0, {}};
  }
  std::vector<topo::VertexId> mems;
  for (std::uint16_t numa : rank_host_numa(c, rank, t)) {
    if (Result<topo::VertexId> v = t.device(node, VertexKind::host_memory, numa); v.ok()) mems.push_back(*v);
  }
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

// Each target's drive (or, for buffered writes, each server's page cache) as
// a terminal: an equal share per target, or with `placed` the bytes each
// target moved in this direction (a target that moved none drops out). A
// write durable on completion (`sync`) goes to the drive whatever the server
// buffers (StorageService: io.buffered = buffered_writes && !sync).
Result<std::vector<FlowTerminal>> target_terminals(const ScenarioSpec& spec, bool write, bool sync,
                                                   const TargetBytes* placed) {
  const topo::Topology& t = *spec.cluster;
  const bool cache = write && !sync && spec.fs.storage_config.buffered_writes;
  const std::map<TargetId, double>* bytes = placed == nullptr ? nullptr : write ? &placed->written : &placed->read;
  std::vector<FlowTerminal> out;
  TargetId id = 1;  // FsDeployment numbers targets 1, 2, ... in this order
  for (const StorageServerSpec& s : spec.fs.storage) {
    std::vector<topo::VertexId> mems = devices(t, s.node, VertexKind::host_memory);
    double server_share = 0;
    for (std::uint32_t n : s.nvme) {
      Result<topo::VertexId> v = t.device(s.node, VertexKind::nvme, n);
      if (!v.ok()) return v.status();
      double share = 1.0;
      if (bytes != nullptr) {
        auto it = bytes->find(id);
        share = it == bytes->end() ? 0.0 : it->second;
      }
      ++id;
      server_share += share;
      if (!cache && share > 0) out.push_back(FlowTerminal{*v, share, {}});
    }
    if (cache && server_share > 0 && !mems.empty()) {
      // Write-back: a write is done once the page cache holds it, so the bytes
      // end in each server's host memory (any NUMA node), in its targets'
      // shares, written there by a copy across its memory link (so a client
      // on the server's node still crosses a link); the drives bind only once
      // the dirty budget is full.
      FlowTerminal page_cache{mems.front(), server_share, {}};
      page_cache.alternatives.assign(mems.begin() + 1, mems.end());
      page_cache.written_by_copy = true;  // a worker's copy writes each byte into it
      out.push_back(std::move(page_cache));
    }
  }
  return out;
}

// The server NICs that moved bytes, each as a terminal with its count as its share.
std::vector<FlowTerminal> nic_terminals(const topo::Topology& t,
                                        const std::map<std::pair<NodeId, std::uint32_t>, double>& bytes) {
  std::vector<FlowTerminal> out;
  for (const auto& [where, count] : bytes) {
    Result<topo::VertexId> v = t.device(where.first, VertexKind::nic, where.second);
    if (v.ok() && count > 0) out.push_back(FlowTerminal{*v, count, {}});
  }
  return out;
}

// A read pattern (stages servers, network, ...; drives to buffers) whose
// server NICs each carry a fixed share (`nics`): the flow splits at them into
// the servers' side (drives to NICs through the staging memory: two server
// stages meeting at a host memory) and the network's (NICs to the buffers,
// the pattern's later stages), each NIC taking its share in both. A flow of
// the whole with those NIC shares is a flow of each side and the other way
// round (one commodity), so the bound is the smaller side's. With
// `client_nics` (each client NIC's share) the network's side splits again, by
// the same argument: the fabric's (server NICs to client NICs, their ports
// alone) and the clients' (client NICs to the buffers through the clients'
// machines: `clients_stages`, the pattern's client stages without the fabric).
Result<PhaseBound> split_at_nics(const topo::Topology& t, FlowPattern whole, const std::vector<FlowTerminal>& nics,
                                 const std::vector<FlowTerminal>& client_nics,
                                 const std::vector<FlowStage>& clients_stages, bool write, PhaseBound row) {
  std::vector<FlowPattern> sides(1);
  FlowPattern& servers_side = sides.front();
  servers_side.network_payload_share = whole.network_payload_share;
  servers_side.stages = {whole.stages.front(), whole.stages.front()};
  servers_side.sources = std::move(whole.sources);
  servers_side.sinks = nics;
  if (client_nics.empty()) {
    FlowPattern network_side = std::move(whole);
    network_side.stages.erase(network_side.stages.begin());
    network_side.sources = nics;
    sides.push_back(std::move(network_side));
  } else {
    FlowPattern fabric_side;
    fabric_side.network_payload_share = whole.network_payload_share;
    fabric_side.stages = {whole.stages[1]};
    fabric_side.stages.front().peer_to_peer.clear();
    fabric_side.sources = nics;
    fabric_side.sinks = client_nics;
    FlowPattern clients_side;
    clients_side.network_payload_share = whole.network_payload_share;
    clients_side.stages = clients_stages;
    clients_side.sources = client_nics;
    clients_side.sinks = std::move(whole.sinks);
    sides.push_back(std::move(fabric_side));
    sides.push_back(std::move(clients_side));
  }
  std::optional<PhaseBound> least;
  for (FlowPattern& side : sides) {
    if (write) {
      std::reverse(side.stages.begin(), side.stages.end());
      std::swap(side.sources, side.sinks);
    }
    Result<PhaseBound> b = solve(t, side, row);
    if (!b.ok()) return b;
    if (b->computed && (!least || b->bound_bytes_per_s < least->bound_bytes_per_s)) least = *b;
  }
  return least ? *least : row;
}

// A ceiling the workload's own parameters set beside the hardware's (an
// object store's egress, the accelerators' compute): the lower one binds.
void cap_by(PhaseBound& row, double cap_bytes_per_s, const std::string& kind, const std::string& what) {
  if (!row.computed || !(cap_bytes_per_s > 0) || cap_bytes_per_s >= row.bound_bytes_per_s) return;
  row.bound_bytes_per_s = cap_bytes_per_s;
  row.binding_kind = kind;
  row.binding_resource = kind + ": " + what;
}

// Each node's part of its side's bytes (shares summed at the terminals' nodes).
std::map<NodeId, double> node_shares(const topo::Topology& t, const std::vector<FlowTerminal>& side) {
  std::map<NodeId, double> out;
  double total = 0;
  for (const FlowTerminal& term : side) total += term.share;
  for (const FlowTerminal& term : side) out[t.vertex(term.vertex).node] += term.share / total;
  return out;
}

// A node's NIC ports' payload rate in one direction (out: from the node).
double port_rate(const topo::Topology& t, NodeId node, bool out) {
  double sum = 0;
  for (std::uint32_t i = 0; i < t.count(node, VertexKind::nic); ++i) {
    Result<topo::VertexId> nic = t.device(node, VertexKind::nic, i);
    if (!nic.ok()) continue;
    for (topo::EdgeId e : t.links_of(*nic)) {
      const topo::Link& l = t.link(e);
      if (l.spec.link_class != topo::LinkClass::network) continue;
      const bool from_a = l.a == *nic;
      sum += (from_a == out ? l.spec.bandwidth_ab_bytes_per_s : l.spec.bandwidth_ba_bytes_per_s) *
             topo::k_network_payload_share;
    }
  }
  return sum;
}

// Clients on storage servers' nodes (BeeOND). The bound's one commodity lets
// each such node's clients feed its own targets alone, but under the even
// spread (every client's bytes to every target in its share) a client node
// holding share c of the clients' bytes and s of the targets' sends c(1 - s)
// of them to other nodes and takes s(1 - c) from them: both cross its NIC
// ports, a cut around the node that no path avoids.
void cap_by_colocated_ports(const topo::Topology& t, const std::vector<FlowTerminal>& servers,
                            const std::vector<FlowTerminal>& clients, bool write, PhaseBound& row) {
  const std::map<NodeId, double> s = node_shares(t, servers);
  for (const auto& [node, c] : node_shares(t, clients)) {
    auto it = s.find(node);
    if (it == s.end()) continue;
    // Out of the node: a write's client bytes for other nodes, a read's server bytes for them.
    const double out = write ? c * (1 - it->second) : it->second * (1 - c);
    const double in = write ? it->second * (1 - c) : c * (1 - it->second);
    for (const auto& [need, rate] :
         {std::pair{out, port_rate(t, node, true)}, std::pair{in, port_rate(t, node, false)}}) {
      if (!(need > 0)) continue;
      cap_by(
          row, rate / need, "nic port",
          "node" + std::to_string(node) + "'s ports, the bytes its clients and its targets exchange with other nodes");
    }
  }
}

// A phase that writes or reads every rank's buffers of `kind` to or from every
// target (see the header); `sync`: its writes are durable on completion.
Result<PhaseBound> bulk_bound(const ScenarioSpec& spec, const WorkloadSpec& w, MemKind kind, bool write, bool sync,
                              const TargetBytes* placed) {
  const topo::Topology& t = *spec.cluster;
  PhaseBound row{w.label, write ? "write" : "read", false, 0, "", ""};
  if (write && spec.fs.storage_config.mirror.enabled && spec.fs.meta.mirror_file_data) {
    row.binding_resource = "no bound: mirrored writes are not in the calculator yet";
    return row;
  }
  Result<std::vector<FlowTerminal>> drives = target_terminals(spec, write, sync, placed);
  if (!drives.ok()) return drives.status();
  if (drives->empty()) {
    row.binding_resource = placed != nullptr ? "no bound: no target moved a byte in this direction"
                                             : "no bound: the file system has no storage target";
    return row;
  }
  std::vector<FlowTerminal> buffers;
  std::set<NodeId> server_set, client_set;
  for (const StorageServerSpec& s : spec.fs.storage) server_set.insert(s.node);
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
  const GpuPaths gpu = gpu_paths(t, w, kind, spec.fs.gds, server_set);
  FlowPattern p;
  // A NIC port or fabric link carries its payload share of its rate (hardware_figures.hpp).
  p.network_payload_share = topo::k_network_payload_share;
  p.stages = {FlowStage{servers, false}, FlowStage{both, true, gpu.peer_to_peer}};
  if (gpu.bounce) p.stages.push_back(FlowStage{clients, false});
  p.sources = *drives;
  p.sinks = buffers;
  const std::vector<FlowTerminal> nics = placed != nullptr
                                             ? nic_terminals(t, write ? placed->nic_written : placed->nic_read)
                                             : std::vector<FlowTerminal>{};
  Result<PhaseBound> out = row;
  if (!nics.empty()) {
    const std::vector<FlowTerminal> client_nics =
        nic_terminals(t, write ? placed->client_nic_written : placed->client_nic_read);
    std::vector<FlowStage> clients_stages = {FlowStage{clients, false, gpu.peer_to_peer}};
    if (gpu.bounce) clients_stages.push_back(FlowStage{clients, false});
    out = split_at_nics(t, std::move(p), nics, client_nics, clients_stages, write, std::move(row));
  } else {
    if (write) {
      std::reverse(p.stages.begin(), p.stages.end());
      std::swap(p.sources, p.sinks);
    }
    out = solve(t, p, std::move(row));
  }
  if (out.ok()) cap_by_colocated_ports(t, *drives, buffers, write, *out);
  return out;
}

std::string rate_text(double bytes_per_s) { return fmt::format("{:.3g} GB/s", bytes_per_s / 1e9); }

// A stage-in's ingress: each rank's blocks written from its buffer to every
// target, and no faster than the object store gives them
// (source_bytes_per_s_per_rank x ranks, when set).
Result<PhaseBound> stage_in_bound(const ScenarioSpec& spec, const WorkloadSpec& w, const StageInConfig& c,
                                  const TargetBytes* placed) {
  Result<PhaseBound> b = bulk_bound(spec, w, c.buffer_kind, true, false, placed);
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
Result<PhaseBound> epoch_bound(const ScenarioSpec& spec, const WorkloadSpec& w, const TrainEpochConfig& c,
                               const TargetBytes* placed) {
  Result<PhaseBound> b = bulk_bound(spec, w, MemKind::gpu, false, false, placed);
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
Result<PhaseBound> stream_bound(const ScenarioSpec& spec, const WorkloadSpec& w, const StreamConfig& c,
                                const TargetBytes* placed) {
  const bool record = c.direction == StreamDirection::record;
  Result<PhaseBound> b = bulk_bound(spec, w, MemKind::gpu, record, c.sync_writes, placed);
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

Result<std::vector<PhaseBound>> point_bounds(const ScenarioSpec& spec, const TargetBytes* placed) {
  if (Status s = FsDeployment::validate(spec); !s.ok()) return s;
  std::vector<PhaseBound> rows;
  for (const WorkloadSpec& w : spec.workloads) {
    if (const auto* sweep = std::get_if<FileSweepConfig>(&w.config)) {
      for (SweepPhase phase : sweep->phases) {
        if (phase != SweepPhase::write && phase != SweepPhase::read) continue;
        Result<PhaseBound> b =
            bulk_bound(spec, w, sweep->buffer_kind, phase == SweepPhase::write, sweep->sync_writes, placed);
        if (!b.ok()) return b.status();
        rows.push_back(std::move(b).value());
      }
      continue;
    }
    if (const auto* burst = std::get_if<CheckpointConfig>(&w.config)) {
      for (bool write : {true, false}) {
        if (!write && !burst->read_back) continue;
        Result<PhaseBound> b = bulk_bound(spec, w, burst->source_kind, write, burst->sync, placed);
        if (!b.ok()) return b.status();
        rows.push_back(std::move(b).value());
      }
      continue;
    }
    if (const auto* stage = std::get_if<StageInConfig>(&w.config)) {
      Result<PhaseBound> b = stage_in_bound(spec, w, *stage, placed);
      if (!b.ok()) return b.status();
      rows.push_back(std::move(b).value());
      continue;
    }
    if (const auto* epoch = std::get_if<TrainEpochConfig>(&w.config)) {
      Result<PhaseBound> b = epoch_bound(spec, w, *epoch, placed);
      if (!b.ok()) return b.status();
      rows.push_back(std::move(b).value());
      continue;
    }
    if (const auto* stream = std::get_if<StreamConfig>(&w.config)) {
      Result<PhaseBound> b = stream_bound(spec, w, *stream, placed);
      if (!b.ok()) return b.status();
      rows.push_back(std::move(b).value());
      continue;
    }
    if (std::holds_alternative<MdBenchConfig>(w.config)) continue;  // metadata only: no bulk bytes
    rows.push_back(PhaseBound{w.label, "*", false, 0, "", "no bound: this workload is not in the calculator yet"});
  }
  return rows;
}

namespace {

// The decimal number `text` (at most 9 digits), or nothing.
std::optional<std::uint32_t> small_number(std::string_view text) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string_view::npos) return {};
  return static_cast<std::uint32_t>(std::stoul(std::string(text)));
}

// Every counter under `prefix` with a positive finite value, by the rest of its name.
std::map<std::string_view, double> counted(const std::map<std::string, double>& counters, std::string_view prefix) {
  std::map<std::string_view, double> out;
  for (auto it = counters.lower_bound(std::string(prefix)); it != counters.end(); ++it) {
    const std::string_view name = it->first;
    if (name.substr(0, prefix.size()) != prefix) break;
    if (std::isfinite(it->second) && it->second > 0) out[name.substr(prefix.size())] = it->second;
  }
  return out;
}

// Adds each <prefix><node>.<nic> counter to into[{node, nic}].
void add_nic_counts(const std::map<std::string, double>& counters, const std::string& prefix,
                    std::map<std::pair<NodeId, std::uint32_t>, double>& into) {
  for (const auto& [rest, bytes] : counted(counters, prefix)) {
    const std::size_t dot = rest.find('.');
    if (dot == std::string_view::npos) continue;
    std::optional<std::uint32_t> node = small_number(rest.substr(0, dot));
    std::optional<std::uint32_t> nic = small_number(rest.substr(dot + 1));
    if (node && nic) into[{*node, *nic}] += bytes;
  }
}

}  // namespace

TargetBytes target_bytes(const std::map<std::string, double>& counters) {
  TargetBytes out;
  for (const bool write : {true, false}) {
    const std::string op = write ? "storage.write_bytes." : "storage.read_bytes.";
    for (const auto& [rest, bytes] : counted(counters, op + "target.")) {
      if (std::optional<std::uint32_t> id = small_number(rest)) (write ? out.written : out.read)[*id] += bytes;
    }
    add_nic_counts(counters, op + "nic.", write ? out.nic_written : out.nic_read);
    add_nic_counts(counters, std::string(write ? "client.write_bytes." : "client.read_bytes.") + "nic.",
                   write ? out.client_nic_written : out.client_nic_read);
  }
  return out;
}

void attach_bounds(RunResult& result) {
  if (result.phases.empty()) return;
  const TargetBytes placed = target_bytes(result.counters);
  const bool counted = !placed.written.empty() || !placed.read.empty();
  Result<std::vector<PhaseBound>> bounds = point_bounds(result.spec);
  Result<std::vector<PhaseBound>> placed_bounds =
      counted ? point_bounds(result.spec, &placed) : Result<std::vector<PhaseBound>>(std::vector<PhaseBound>{});
  const auto apply = [&result](const Result<std::vector<PhaseBound>>& rows, double PhaseRow::*bound,
                               std::string PhaseRow::*binding) {
    for (PhaseRow& row : result.phases) {
      if (!rows.ok()) {
        row.*binding = "no bound: " + rows.status().message();
        continue;
      }
      for (const PhaseBound& b : *rows) {
        if (b.workload != row.workload || (b.phase != row.phase && b.phase != "*")) continue;
        row.*bound = b.computed ? b.bound_bytes_per_s : std::numeric_limits<double>::quiet_NaN();
        row.*binding = b.binding_resource;
      }
    }
  };
  apply(bounds, &PhaseRow::bound_bytes_per_s, &PhaseRow::binding_resource);
  if (counted) apply(placed_bounds, &PhaseRow::placed_bound_bytes_per_s, &PhaseRow::placed_binding_resource);
}

}  // namespace sluice::scenario
