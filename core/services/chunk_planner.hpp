// ChunkPlanner: the client's per-chunk use of core/sched.
//
// For each chunk it asks the RailSelector for the best NIC for the chunk's
// destination memory (nvidia-fs rank, then fewest active connections, as
// BeeGFS multirail does; a NIC's connection limit is the per-rail window),
// and decide_path for direct vs bounce on that NIC (cached per destination
// and NIC: the answer depends only on the topology). No decision is made
// here that core/sched does not make; this class only keeps its state.
//
// Without a topology (unit tests, worlds that do not model the machine) every
// chunk goes direct into host/pinned memory; GPU memory goes direct only if
// the backend declares it reachable, else bounces through NUMA node 0; there
// is one rail (k_no_id) and no window beyond the client's in-flight limit.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>

#include "core/common/mem_handle.hpp"
#include "core/proto/wire_enums.hpp"
#include "core/sched/data_path.hpp"
#include "core/sched/rail_selector.hpp"
#include "core/topology/topology.hpp"

namespace sluice {

struct ChunkPlannerConfig {
  std::shared_ptr<const topo::Topology> topology;  // null: no machine model
  NodeId node = 0;                                 // the client's node in the topology
  sched::BackendCaps caps;                         // what the transport/backend can reach
  sched::RailLimits rails;                         // connections (chunks in flight) per NIC
};

struct ChunkPlan {
  proto::ChunkPath path = proto::ChunkPath::direct;
  std::uint32_t client_nic = k_no_id;  // rail; k_no_id when there is no topology
  std::uint16_t bounce_numa = 0;       // bounce only: NUMA node of the pinned buffer
  NodeId server = k_no_id;             // the server the rail connection goes to (its pool)
};

class ChunkPlanner {
 public:
  explicit ChunkPlanner(ChunkPlannerConfig config);

  // A plan for a chunk to server node `server` whose destination (read) or
  // source (write) is `user`; nullopt while every usable rail is at its
  // connection limit to that server (sched::RailSelector: connections are
  // counted per server, as BeeGFS connMaxInternodeNum is).
  // `reachable` false: the transport could not register `user` (a GPU
  // region: Env::transport_reaches), so its chunks bounce whatever the
  // rail's decision for its kind says.
  std::optional<ChunkPlan> plan(const MemHandle& user, NodeId server, bool reachable = true);
  // Returns the rail connection a plan took.
  void release(const ChunkPlan& plan);
  // The server node's NIC for a chunk on client rail `client_nic`
  // (sched::peer_nic: rail matching); k_no_id without a topology or when the
  // topology has no answer (the server then uses its default NIC).
  std::uint32_t server_nic(std::uint32_t client_nic, NodeId server_node) const;

  // Why the planner runs without rails, if it does ("" otherwise).
  const std::string& degraded_reason() const { return degraded_reason_; }
  // The decision (with its reason) for a destination and NIC, for reports.
  const sched::PathDecision* decision(sched::MemoryPlace place, std::uint32_t nic) const;

 private:
  // kind (| k_unreachable_kind_bit for a region the transport refused), device, nic
  using Key = std::tuple<std::uint8_t, std::uint32_t, std::uint32_t>;
  static constexpr std::uint8_t k_unreachable_kind_bit = 0x80;
  ChunkPlannerConfig config_;
  std::optional<sched::RailSelector> rails_;
  std::string degraded_reason_;
  std::map<Key, sched::PathDecision> decisions_;
};

}  // namespace sluice
