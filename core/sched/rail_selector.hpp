// Multirail: which NIC of a node carries the next connection.
//
// Model: BeeGFS multirail (client module NicAddressStats_comparePriority and
// NicAddressStats_usable): a NIC is usable while it has fewer than a maximum
// number of connections; among usable NICs the preferred one is first the
// topologically closest, then the one with fewer established connections,
// then the one used least recently. The closeness measure depends on the
// destination, as in BeeGFS with GDS:
// - GPU memory: the nvidia-fs peer rank of the NIC for that GPU
//   (topology/peer_rank.hpp), which cuFile and BeeGFS ask nvidia-fs for;
// - host / pinned memory: NUMA locality (a NIC on the destination's NUMA node
//   first, as BeeGFS prefers the NIC on the calling thread's NUMA node), then
//   the NIC's port rate.
// So ties between equally close NICs are broken by load, and when all the
// closest NICs are full, connections overflow to the next closest.
// Except out of GPUDirect: when the backend reaches GPU memory and the GPU's
// closest NIC is close enough for a direct transfer (path class <=
// k_max_direct_path_class, data_path.hpp), a GPU destination never overflows to
// a NIC that is not; it waits (again) for a direct rail. With GDS, cuFile takes
// the NIC that nvidia-fs ranks closest to the GPU
// (docs/seeds.md#beegfs-and-gpudirect-storage), and overflowing to a farther
// NIC would turn a GPUDirect read into a bounce through host memory (with GDS
// forced on, a failure).
// A GPU destination whose bytes bounce (the backend cannot reach GPU memory,
// or no NIC of the node is close enough for a direct transfer) is ranked as
// its bounce buffer is: pinned memory on the GPU's NUMA node
// (ranking_place), since the client's NIC choice then sees a host buffer
// (the BeeGFS client ranks by the calling thread's NUMA node); before,
// roofline configuration 15 sent every bounced byte through the one NIC under
// the GPU's switch while the socket's other NIC idled (0.45 of its bound).
// "Least recently used" is a counter of choices, not a clock.
//
// The connection limit is per server (BeeGFS connMaxInternodeNum: "the number
// of connections from a particular client to the same server",
// doc.beegfs.io, Client Node Tuning; a client keeps one connection pool per
// server node), counted per NIC in multirail setups: a client reading from
// eight servers holds up to 8 x 12 requests in flight on one NIC, not 12.
// Calls name the server (`peer`); k_no_id is one pool for callers that ask
// without one (a what-if report).
//
// State: per-server, per-NIC active connection counts. Not thread-safe; one per client
// service (the service is single-threaded, docs/design.md#threading-model).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "core/common/ids.hpp"
#include "core/common/status.hpp"
#include "core/sched/data_path.hpp"
#include "core/topology/topology.hpp"

namespace sluice::sched {

// BeeGFS connMaxInternodeNum default (beegfs-client.conf): 12 connections to
// one server, counted per NIC in multirail setups.
inline constexpr std::uint32_t k_default_max_connections_per_nic = 12;
// Upper bound accepted for the limit above.
inline constexpr std::uint32_t k_max_connections_per_nic_limit = 4096;

struct RailLimits {
  std::uint32_t max_connections_per_nic = k_default_max_connections_per_nic;
};

class RailSelector {
 public:
  // Precomputes the ranks of every NIC of `node` for every GPU and NUMA node.
  // Errors: unknown node, node without NICs, limit out of range, broken topology.
  static Result<RailSelector> create(const topo::Topology& topology, NodeId node, RailLimits limits = {});

  // Takes one connection to server `peer` on the best usable NIC for
  // `destination` and returns its local index. again: every NIC is at
  // max_connections_per_nic to that server, or (caps reach GPU memory) every
  // NIC that keeps a direct GPU path is. invalid_argument: unknown GPU or NUMA node.
  Result<std::uint32_t> choose(MemoryPlace destination, BackendCaps caps = {}, NodeId peer = k_no_id);
  // Whether `nic` may carry a transfer for `destination` under `caps` (the
  // GPUDirect rule above); false for an unknown GPU or NIC.
  bool usable_for(MemoryPlace destination, std::uint32_t nic, BackendCaps caps) const;
  // Takes one connection to `peer` on a given NIC (when the caller already
  // decided, e.g. from plan_chunks). again: that NIC is full to that server.
  Status acquire(std::uint32_t nic, NodeId peer = k_no_id);
  // Gives one connection back. invalid_argument: unknown NIC or none active.
  Status release(std::uint32_t nic, NodeId peer = k_no_id);

  // All NICs in preference order for `destination` (full ones included, in
  // their place): rank, then active connections to `peer`, then least
  // recently chosen, then index.
  Result<std::vector<std::uint32_t>> preference(MemoryPlace destination, NodeId peer = k_no_id) const;
  // Where `destination`'s bytes meet the NIC under `caps`: the GPU itself
  // when they may go to GPU memory directly, else its bounce buffer (pinned
  // memory on the GPU's NUMA node); host and pinned memory as they are.
  MemoryPlace ranking_place(MemoryPlace destination, BackendCaps caps) const;
  // The closeness key of `nic` for `destination` (lower is closer); equal keys tie.
  Result<std::uint64_t> rank_key(MemoryPlace destination, std::uint32_t nic) const;

  std::uint32_t nic_count() const { return nics_; }
  // Connections to `peer` on `nic` (0 for an unknown NIC).
  std::uint32_t active(std::uint32_t nic, NodeId peer = k_no_id) const { return nic < nics_ ? counts(peer)[nic] : 0; }
  std::uint32_t spare(std::uint32_t nic, NodeId peer = k_no_id) const {
    return nic < nics_ ? limits_.max_connections_per_nic - counts(peer)[nic] : 0;
  }
  NodeId node() const { return node_; }
  const RailLimits& limits() const { return limits_; }

 private:
  RailSelector() = default;
  const std::vector<std::uint64_t>* keys_for(MemoryPlace destination) const;
  // Whether GPU `gpu`'s bytes bounce through host memory under `caps` (no
  // GPU memory reach, or no NIC close enough for a direct transfer).
  bool bounces(std::uint32_t gpu, BackendCaps caps) const;
  // The per-NIC connection counts to `peer` (all zero for a server never used).
  const std::vector<std::uint32_t>& counts(NodeId peer) const;

  NodeId node_ = k_no_id;
  RailLimits limits_;
  std::vector<std::vector<std::uint64_t>> gpu_keys_;   // [gpu][nic]
  std::vector<std::vector<bool>> gpu_direct_;          // [gpu][nic]: path class <= k_max_direct_path_class
  std::vector<bool> gpu_any_direct_;                   // [gpu]: some NIC is direct
  std::vector<std::uint16_t> gpu_numa_;                // [gpu]: its NUMA node
  std::vector<std::vector<std::uint64_t>> numa_keys_;  // [numa][nic]
  std::uint32_t nics_ = 0;
  std::vector<std::uint32_t> none_active_;               // [nic]: zeros, for a server never used
  std::map<NodeId, std::vector<std::uint32_t>> active_;  // [peer][nic]
  std::vector<std::uint64_t> last_chosen_;               // [nic]: choice counter value, 0 = never
  std::uint64_t choices_ = 0;
};

}  // namespace sluice::sched
