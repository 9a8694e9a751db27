#include "core/sched/chunk_plan.hpp"

#include <algorithm>
#include <string>

namespace sluice::sched {

using topo::VertexKind;

namespace {

struct Rail {
  std::uint32_t nic = 0;
  PathDecision decision;
  std::uint32_t window = 1;
  std::uint32_t assigned = 0;
};

// The memory a rail's DMA reaches: the GPU for direct GPU transfers, else host memory.
Result<topo::VertexId> dma_end(const topo::Topology& topology, NodeId node, MemoryPlace destination,
                               const PathDecision& decision) {
  if (destination.kind == MemKind::gpu && decision.path == DataPath::direct) {
    return topology.device(node, VertexKind::gpu, destination.device);
  }
  const std::uint32_t numa = destination.kind == MemKind::gpu ? decision.staging_numa : destination.device;
  return topology.device(node, VertexKind::host_memory, numa);
}

// The best tie class among the NICs with spare connections that may carry
// `destination`'s bytes, ranked where those bytes meet the NIC.
Result<std::vector<Rail>> best_rails(const RailSelector& rails, MemoryPlace destination, BackendCaps caps) {
  const MemoryPlace ranked = rails.ranking_place(destination, caps);
  auto order = rails.preference(ranked);
  if (!order.ok()) return order.status();
  std::vector<Rail> chosen;
  std::uint64_t best_key = 0;
  for (std::uint32_t nic : *order) {
    if (rails.spare(nic) == 0 || !rails.usable_for(destination, nic, caps)) continue;
    const std::uint64_t key = *rails.rank_key(ranked, nic);
    if (!chosen.empty() && key != best_key) break;
    best_key = key;
    chosen.push_back(Rail{nic, {}, 1, 0});
  }
  return chosen;
}

}  // namespace

Result<std::vector<ChunkPlan>> plan_chunks(const topo::Topology& topology, const RailSelector& rails,
                                           MemoryPlace destination, std::span<const ChunkRef> chunks,
                                           const PlanParams& params) {
  const NodeId node = rails.node();
  if (topology.count(node, VertexKind::nic) != rails.nic_count()) {
    return error(StatusCode::invalid_argument,
                 "plan_chunks: the rail selector does not match node " + std::to_string(node) + " of this topology");
  }
  if (chunks.size() > k_max_chunks_per_plan) {
    return error(StatusCode::invalid_argument,
                 "plan_chunks: " + std::to_string(chunks.size()) + " chunks exceed k_max_chunks_per_plan");
  }
  std::uint64_t largest = 0;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    if (chunks[i].length_bytes == 0) {
      return error(StatusCode::invalid_argument, "plan_chunks: chunk " + std::to_string(i) + " has length 0");
    }
    largest = std::max(largest, chunks[i].length_bytes);
  }
  auto best = best_rails(rails, destination, params.caps);
  if (!best.ok()) return best.status();
  std::vector<Rail> chosen = std::move(best).value();
  if (chosen.empty()) {
    return error(StatusCode::again,
                 "plan_chunks: every NIC of node " + std::to_string(node) + " is at its connection limit");
  }
  if (chunks.empty()) return std::vector<ChunkPlan>{};

  for (Rail& rail : chosen) {
    auto decision = decide_path(topology, node, destination, rail.nic, params.caps);
    if (!decision.ok()) return decision.status();
    rail.decision = std::move(*decision);
    const topo::VertexId nic_v = *topology.device(node, VertexKind::nic, rail.nic);
    auto end = dma_end(topology, node, destination, rail.decision);
    if (!end.ok()) return end.status();
    auto route = topology.machine_route(nic_v, *end);
    if (!route.ok()) return route.status();
    const double bandwidth =
        std::min(topology.vertex(nic_v).nic_port_rate_bytes_per_s, topology.bottleneck_bytes_per_s(*route));
    auto window = window_chunks(bandwidth, params.rtt_ns, largest, params.window);
    if (!window.ok()) return window.status();
    rail.window = std::min(*window, rails.spare(rail.nic));
  }

  std::vector<ChunkPlan> plan;
  plan.reserve(chunks.size());
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    Rail& rail = chosen[i % chosen.size()];
    ChunkPlan p;
    p.nic = rail.nic;
    p.path = rail.decision.path;
    p.path_class = rail.decision.path_class;
    p.staging_numa = rail.decision.staging_numa;
    p.window_slot = rail.assigned % rail.window;
    p.wave = rail.assigned / rail.window;
    ++rail.assigned;
    plan.push_back(p);
  }
  return plan;
}

}  // namespace sluice::sched
