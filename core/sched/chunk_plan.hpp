// Planning one request: for each chunk, the rail (NIC), the data path and its
// place in the rail's pipeline.
//
// plan_chunks combines the pieces of this folder (docs/design.md#chunk-planning):
// 1. Rails: among the node's NICs with spare connections, the ones tied at the
//    best rank for the destination (RailSelector ranking: nvidia-fs peer rank
//    for a GPU, NUMA locality for host memory). E.g. DGX A100 GPU 0 -> mlx5_0
//    and mlx5_1. When the closest NICs are full, the next closest tie class is
//    used (overflow), but never one that would turn a direct GPU path into a
//    bounce (RailSelector::usable_for).
// 2. Path per rail: decide_path (direct when PXB or closer and the backend
//    reaches GPU memory, else bounce via pinned memory on the GPU's NUMA node).
// 3. Window per rail: window_chunks over the rail's bandwidth (the NIC's port
//    rate, or less if the machine route NIC -> destination memory is slower)
//    and params.rtt_ns, using the largest chunk; never more than the rail's
//    spare connections.
// 4. Chunks go round-robin over the rails in preference order; the k-th chunk
//    on a rail takes window slot k % window and wave k / window (a chunk of
//    wave w starts when the chunk of wave w-1 in the same slot completes).
//
// Pure: reads the selector's current load but does not change it; the caller
// acquires one connection per window slot it opens (RailSelector::acquire)
// and releases it when done. The output has one entry per input chunk, in
// input order.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/common/ids.hpp"
#include "core/common/status.hpp"
#include "core/common/units.hpp"
#include "core/sched/data_path.hpp"
#include "core/sched/pipeline_window.hpp"
#include "core/sched/rail_selector.hpp"
#include "core/topology/topology.hpp"

namespace sluice::sched {

// One chunk of a request as core/layout maps it (kept minimal and local here).
struct ChunkRef {
  std::uint64_t length_bytes = 0;
  TargetId target = k_no_id;
  std::uint64_t object_offset_bytes = 0;
};

struct ChunkPlan {
  std::uint32_t nic = k_no_id;  // local NIC index on the destination node
  DataPath path = DataPath::bounce;
  topo::PathClass path_class = topo::PathClass::sys;
  std::uint32_t staging_numa = k_no_id;  // bounce only
  std::uint32_t window_slot = 0;
  std::uint32_t wave = 0;
};

// A round trip inside one InfiniBand/RoCE fabric: request, completion, reply
// (~2 x 0.6 us of NIC and switch time plus software); calibration replaces it.
inline constexpr TimeNs k_default_rtt_ns = 5 * k_ns_per_us;
inline constexpr std::size_t k_max_chunks_per_plan = std::size_t{1} << 20;

struct PlanParams {
  BackendCaps caps;
  WindowLimits window;
  TimeNs rtt_ns = k_default_rtt_ns;
};

// Errors: the selector belongs to another node or topology shape, unknown
// destination, a zero-length chunk, more than k_max_chunks_per_plan chunks;
// again when every usable NIC is at its connection limit.
Result<std::vector<ChunkPlan>> plan_chunks(const topo::Topology& topology, const RailSelector& rails,
                                           MemoryPlace destination, std::span<const ChunkRef> chunks,
                                           const PlanParams& params = {});

}  // namespace sluice::sched
