#include "core/services/chunk_planner.hpp"

#include "core/sched/peer_rail.hpp"

namespace sluice {

ChunkPlanner::ChunkPlanner(ChunkPlannerConfig config) : config_(std::move(config)) {
  if (!config_.topology) {
    degraded_reason_ = "no topology: one default rail";
    return;
  }
  Result<sched::RailSelector> rails = sched::RailSelector::create(*config_.topology, config_.node, config_.rails);
  if (!rails.ok()) {
    degraded_reason_ = "no rails for node " + std::to_string(config_.node) + ": " + rails.status().to_string();
    return;
  }
  rails_.emplace(std::move(rails).value());
}

std::optional<ChunkPlan> ChunkPlanner::plan(const MemHandle& user, NodeId server, bool reachable) {
  ChunkPlan plan;
  plan.server = server;
  const sched::MemoryPlace place = sched::MemoryPlace::of(user);
  // A GPU region the transport refused: decided as for a transport that reaches no GPU memory.
  sched::BackendCaps caps = config_.caps;
  const bool refused = user.kind == MemKind::gpu && !reachable;
  if (refused) caps.gpu_memory_reachable = false;
  if (!rails_) {
    if (user.kind == MemKind::gpu && !caps.gpu_memory_reachable) plan.path = proto::ChunkPath::bounce;
    return plan;
  }
  Result<std::uint32_t> nic = rails_->choose(place, caps, server);
  if (!nic.ok()) return std::nullopt;  // `again`: every rail is full (an unknown GPU is a config bug caught below)
  plan.client_nic = *nic;
  const auto kind =
      static_cast<std::uint8_t>(static_cast<std::uint8_t>(place.kind) | (refused ? k_unreachable_kind_bit : 0));
  const Key key{kind, place.device, *nic};
  auto it = decisions_.find(key);
  if (it == decisions_.end()) {
    Result<sched::PathDecision> d = sched::decide_path(*config_.topology, config_.node, place, *nic, caps);
    sched::PathDecision decision;
    if (d.ok()) {
      decision = std::move(d).value();
      if (refused) decision.reason += " (the transport could not register this GPU region)";
    } else {
      // An unplannable destination still moves, the safe way, and says why.
      decision.path = user.kind == MemKind::gpu ? sched::DataPath::bounce : sched::DataPath::direct;
      decision.staging_numa = 0;
      decision.reason = "no path decision (" + d.status().to_string() + ")";
    }
    it = decisions_.emplace(key, std::move(decision)).first;
  }
  const sched::PathDecision& decision = it->second;
  plan.path = decision.path == sched::DataPath::direct ? proto::ChunkPath::direct : proto::ChunkPath::bounce;
  if (decision.staging_numa != k_no_id) plan.bounce_numa = static_cast<std::uint16_t>(decision.staging_numa);
  return plan;
}

void ChunkPlanner::release(const ChunkPlan& plan) {
  if (rails_ && plan.client_nic != k_no_id)
    rails_->release(plan.client_nic, plan.server).ignore();  // we took it in plan()
}

std::uint32_t ChunkPlanner::server_nic(std::uint32_t client_nic, NodeId server_node) const {
  if (!rails_ || client_nic == k_no_id) return k_no_id;
  Result<std::uint32_t> nic = sched::peer_nic(*config_.topology, config_.node, client_nic, server_node);
  return nic.ok() ? *nic : k_no_id;
}

const sched::PathDecision* ChunkPlanner::decision(sched::MemoryPlace place, std::uint32_t nic) const {
  auto it = decisions_.find(Key{static_cast<std::uint8_t>(place.kind), place.device, nic});
  return it == decisions_.end() ? nullptr : &it->second;
}

}  // namespace sluice
