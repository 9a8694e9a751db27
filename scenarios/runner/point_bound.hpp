// The hardware's ceiling for each bulk phase of a point (issue 48 item 1):
// the point's cluster, file-system placement and workloads turned into flow
// patterns for core/topology/flow_bound.hpp. `sluice bound SCRIPT` prints
// these; a measured or simulated rate reads as a fraction of its bound.
//
// How a phase becomes a pattern
// - A file sweep's write and read phases: every target (one drive of a storage
//   server) takes an equal share of the bytes (files striped over all targets,
//   or placed round-robin over many files); every client rank an equal share.
//   A storage server stages its bytes in its host memory (any of its NUMA
//   nodes); a host buffer may be on any NUMA node of its client; a GPU buffer
//   is the rank's GPU (rank r on GPU r % ranks_per_node), reached peer-to-peer
//   when GDS may be used (gds on or auto) from the NICs within PXB of it alone
//   (GPUDirect's rail rule, FlowStage::peer_to_peer), through a bounce buffer
//   in the client's host memory when GDS is off or no GPU has such a NIC.
// - Buffered writes (StorageServiceConfig::buffered_writes, write-back): the
//   bytes of a write phase end in the servers' page caches (host memory, in
//   their targets' shares, written by a copy across the memory link:
//   FlowTerminal::written_by_copy), not on the drives, which bind only once
//   the dirty budget is full: the bound is the ceiling of the write-back phase.
//   A write durable on completion (sync_writes, a checkpoint's sync) goes to
//   the drives whatever the server buffers.
// - Clients on storage servers' nodes (BeeOND): under the even spread a node
//   with share c of the clients' bytes and s of the targets' sends c(1 - s)
//   of them to other nodes and takes s(1 - c), both through its NIC ports (a
//   cut around the node), which the flow's one commodity alone would not
//   hold: each client could feed its own node's targets.
// - A checkpoint burst's write phase (and its read phase with read_back) is
//   the same flow from (to) every rank's shard in its source_kind memory.
// - A stage-in's ingress is a write of every rank's blocks to every target,
//   capped by the object store's egress (source_bytes_per_s_per_rank x ranks)
//   when the workload sets one.
// - A training epoch is a read of every rank's batches into its GPU, capped by
//   the accelerators: batch_samples x sample_bytes per compute_ns_per_step per
//   rank (reads overlap the compute, so an epoch never beats its compute).
// - A GPU stream's record (playback) phase writes (reads) every rank's buffers
//   from (into) its GPU, capped by one compute step per buffer per rank.
// - What the calculator does not hold yet is said, not guessed: a phase of a
//   mirrored file system's writes gets no bound and a reason, a training
//   epoch's setup none.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/common/status.hpp"
#include "scenarios/scenario_spec.hpp"

namespace sluice::scenario {

struct PhaseBound {
  std::string workload;  // WorkloadSpec::label
  std::string phase;     // "write", "read"
  bool computed = false;
  double bound_bytes_per_s = 0;  // when computed
  std::string binding_kind;      // "nic port", "pcie", ... when computed
  std::string binding_resource;  // the kind with its elements; else why there is no bound
};

// Bytes each storage target moved in a run, by target id (1, 2, ... in
// FsSpec::storage order, each server's drives in order, as FsDeployment
// numbers them), per direction: the run's counters
// storage.write_bytes.target.<id> and storage.read_bytes.target.<id>.
struct TargetBytes {
  std::map<TargetId, double> written;
  std::map<TargetId, double> read;
  // And each server NIC's (storage.<op>_bytes.nic.<node>.<nic>), by (node, NIC).
  std::map<std::pair<NodeId, std::uint32_t>, double> nic_written;
  std::map<std::pair<NodeId, std::uint32_t>, double> nic_read;
  // And each client NIC's (client.<op>_bytes.nic.<node>.<nic>): the bytes of
  // the chunks that client rail carried.
  std::map<std::pair<NodeId, std::uint32_t>, double> client_nic_written;
  std::map<std::pair<NodeId, std::uint32_t>, double> client_nic_read;
};
// The per-target counts of a run's counters (others, and malformed or
// non-positive ones, are skipped).
TargetBytes target_bytes(const std::map<std::string, double>& counters);

// One entry per bulk phase of every workload of the point, in order. Each
// target takes an equal share of a phase's bytes; with `placed`, the bytes it
// moved in the phase's direction (the file system's placement of this run's
// files: a randomized chooser puts few-stripe files unevenly, and the busiest
// drive then sets the phase's end), and a target that moved none drops out.
// With per-NIC counts too, each server NIC carries the share it carried (the
// server's choice of NIC: NUMA-near ones only, sched::place_targets): the flow
// splits at the NICs into the servers' side and the network's, and the
// smaller bound of the two holds. With the clients' per-NIC counts as well,
// each client NIC carries its share too (the client's choice of rail: a
// thread's NUMA-local NICs first, sched::RailSelector), and the network's side
// splits again at them into the fabric's and the clients'.
// Errors: a spec whose placement names nodes or drives the cluster lacks.
Result<std::vector<PhaseBound>> point_bounds(const ScenarioSpec& spec, const TargetBytes* placed = nullptr);

// Sets each phase's bound_bytes_per_s and binding_resource from
// point_bounds(result.spec), on any backend: the phases of a point_bounds
// row get its bound (or its reason), the others none. A spec the calculator
// refuses leaves its reason on every phase. When the run counted bytes per
// target, placed_bound_bytes_per_s and placed_binding_resource come the same
// way from point_bounds(result.spec, &target_bytes(result.counters)).
void attach_bounds(RunResult& result);

}  // namespace sluice::scenario
