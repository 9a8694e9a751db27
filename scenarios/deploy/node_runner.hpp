// run_node: one process's share of a multi-process deployment. It hosts the
// services of ONE node of a ClusterConfig on an HwWorld (each service on its
// own event-loop thread), reaches the other nodes' processes over the TCP
// transport, and runs the cluster through its start-up in step with them:
//
//   1. open the node's TCP transport on its address (free ports)
//   2. all_gather the listen addresses: the endpoint table node -> a.b.c.d:port
//   3. build the world: every service of the plan in the canonical order
//      (cluster_config.hpp), idle placeholders for other nodes' services;
//      start mgmt and the barrier service                    barrier "mgmt-up"
//   4. start meta and storage servers, wait until they have registered with
//      mgmt                                                  barrier "servers-up"
//   5. start the clients (FileSweep with pattern data, every byte read
//      verified, or the launcher's workload), wait until they finish; with
//      later workloads (ClusterConfig::later_workloads), each in turn once
//      the one before finished everywhere (all_gather "workload-<i>-done",
//      which says which nodes failed: then no later one starts)
//                                                            barrier "clients-done"
//   6. quiet the transport's log (peers lost from here on are nodes
//      shutting down)                                        barrier "stopping"
//      stop the world, gather every node's results document to the root
//
// A node whose own step fails (a server that never registers, a client
// error, a timeout) still takes part in every later collective, so the
// others stop at once and the failure is reported in its results rather than
// as a hang. Bootstrap failures end the run with the error.
//
// The results document of a node:
//   {"node", "rank", "roles", "ok", "status", "addresses": [...],
//    "phases": [{"workload","phase","rank","bytes","ops","elapsed_ns","bytes_per_s"}],
//    "counters": {"storage.read_bytes": ..., ...}}
// and run_node returns, at the root, {"run_id", "ok", "nodes": [documents]}
// (elsewhere {"ok"} of its own node).
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/services/meta_service.hpp"
#include "core/services/mgmt_service.hpp"
#include "core/services/storage_service.hpp"
#include "core/workloads/client_host.hpp"
#include "core/workloads/phase_recorder.hpp"
#include "hw_backends/gpu_memory_ops.hpp"
#include "core/workloads/workload.hpp"
#include "scenarios/deploy/bootstrap.hpp"
#include "scenarios/deploy/cluster_config.hpp"

namespace sluice::emulate {

struct NodeRunOptions {
  ClusterConfig config;
  // Log lines of the node's world and transport; may be empty.
  std::function<void(std::string_view)> log;
  // Asked while the servers register and the clients run: true ends that
  // wait (the node's status says it was stopped); the node still takes part
  // in every later collective, so every node ends. May be empty.
  std::function<bool()> stop_requested;
  // The client ranks' workload ((workload, rank) -> its Workload; workload
  // 0 is the first, then ClusterConfig::later_workloads) and, once it
  // finished, that rank's phase results: what `--backend cluster` gives from
  // the study's own WorkloadSpecs (any kind). Both or neither; empty: the
  // config's FileSweep (or mount), and no later workloads. Called on the
  // client's event loop.
  std::function<std::unique_ptr<Workload>(std::uint32_t workload, std::uint32_t rank)> make_workload;
  std::function<std::vector<RankPhaseResult>(std::uint32_t workload, std::uint32_t rank)> rank_results;
  // The study's file-system settings (the cluster path gives them from its
  // ScenarioSpec: FsDeployment::*_of), the base of each service's config
  // before the deployment's own fields are set (endpoints, shard, targets,
  // rank, buddy groups and heartbeats of storage mirroring, the metadata
  // store), so that the servers and clients run as the simulation of the same
  // spec models them. Unset: the core's defaults with the config's chunk size
  // and stripe count (`sluice mount`, `sluice node --mpi`, and a storage node run
  // as a child process of its rank, which gets its config as a file).
  struct FsSettings {
    MgmtConfig mgmt;
    MetaServiceConfig meta;  // shard and mgmt are the node's
    StorageServiceConfig storage;
    // (workload, rank) -> its client's config; mgmt, barrier, rank, ranks are the node's.
    std::function<ClientHostConfig(std::uint32_t workload, std::uint32_t rank)> client;
  };
  std::optional<FsSettings> fs;
  // GPU memory for the client ranks' GPU buffers (HwWorldConfig::gpu_memory:
  // hw_backends/cuda's ops in `sluice run`); nullptr: none (a GPU buffer
  // fails to allocate, naming why).
  const hw::GpuMemoryOps* gpu_memory = nullptr;
  // Called once every server of the cluster has registered ("servers-up",
  // the moment the fault plan's times count from); may be empty.
  std::function<void()> servers_up;
  // Where the node's rails listen, "a.b.c.d:port" each (rails_per_node of
  // them): a node process started again after a crash takes the ports its
  // peers know (node_process.hpp). Empty: the node's address, free ports.
  std::vector<std::string> listen_rails;
};

// The collectives run_node makes for `config`, in this order, each once
// ("op name"): "all_gather ", "barrier mgmt-up", "barrier servers-up", one
// "all_gather workload-<i>-done" after each workload but the last (i from 0),
// "barrier clients-done", "barrier stopping", "gather ". A relay that stands
// in for a node process (node_process.hpp) replays and completes this
// sequence.
std::vector<std::string> node_collectives(const ClusterConfig& config);
// Whether `step` of node_collectives is the all_gather after a workload.
bool is_workload_done_step(std::string_view step);

// The node is config.nodes (sorted by id)[bootstrap.rank()]; bootstrap.size()
// must equal the number of nodes.
Result<nlohmann::json> run_node(const NodeRunOptions& options, Bootstrap& bootstrap);

// {"run_id", "ok" (every node ok), "nodes": [documents]}; corrupt when one is not JSON.
Result<nlohmann::json> combine_node_results(const std::string& run_id, const std::vector<std::string>& documents);

// Sums a phase over the client ranks of a gathered run: bytes, and the
// throughput of the phase as all clients' bytes over the slowest rank's time.
struct PhaseTotal {
  std::uint64_t bytes = 0;
  // Bytes checked against the workload's pattern after they were read (the
  // node counters "<workload>.<phase>.verified_bytes"); 0 for writes.
  std::uint64_t verified_bytes = 0;
  TimeNs elapsed_ns = 0;
  double bytes_per_s = 0;
};
PhaseTotal phase_total(const nlohmann::json& run, std::string_view phase);
// One line of a deployment's summary (`sluice mount`, `sluice node --mpi`) for a phase ("" when it moved no
// bytes). It says "verified" only for what was (issue 26): a read phase whose
// every byte was checked against the pattern, a write phase of a run that
// succeeded (each chunk's CRC32C was checked by its server; a mismatch fails
// the run); a failed run is said to be failed and not verified.
std::string phase_summary_line(const nlohmann::json& run, std::string_view phase);

}  // namespace sluice::emulate
