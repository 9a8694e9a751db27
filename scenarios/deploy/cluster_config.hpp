// ClusterConfig: the description of a multi-process deployment that every
// node process reads (`sluice node`, `sluice mount`, `mpirun ... sluice node
// --mpi --config`): which nodes exist, what roles each hosts, where each listens, and
// the workload the clients run. It travels as JSON (to_json/parse_cluster_config).
//
// Roles and the services they become (the canonical order, see plan_services):
//   mgmt     MgmtService, then BarrierService (workload phase barriers)
//   meta     MetaService (one shard per meta node, in node order)
//   meta_mirror  the second MetaService of the shard of node `meta_mirror_of`
//            (mirror.metadata: BeeGFS metadata buddy mirroring)
//   storage  StorageService over the node's targets (`targets`)
//   client   ClientHosts running the workloads (workload.ranks_per_client
//            on each of workload.client_nodes, ranks consecutive in that
//            order; then those of each later workload, one after the other)
// Every process adds the services of *all* nodes in this order, the ones of
// other nodes as idle placeholders, so that a service's Endpoint (node,
// index) is the same in every process without any exchange.
//
// Exactly one mgmt node, at least one meta, storage and client node.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/ids.hpp"
#include "core/common/status.hpp"
#include "core/common/units.hpp"
#include "core/proto/wire_descs.hpp"
#include "core/workloads/file_sweep.hpp"

namespace sluice::emulate {

// Limits on what a cluster description may ask for.
inline constexpr std::uint32_t k_max_cluster_nodes = 64;  // namespaces one emulation creates
inline constexpr std::uint32_t k_max_targets_per_node = 16;
inline constexpr std::uint32_t k_max_node_rails = 16;       // transport::k_max_rails
inline constexpr std::uint32_t k_default_max_wait_s = 300;  // every bootstrap/run wait
inline constexpr std::uint32_t k_max_wait_limit_s = 24 * 3600;

enum class Role : std::uint8_t { mgmt, meta, storage, client, meta_mirror };
std::string_view to_string(Role role);
Result<Role> parse_role(std::string_view text);

struct NodeSpec {
  NodeId id = 0;
  std::vector<Role> roles;
  // The IPv4 address the node's transport listens on; its rails_per_node
  // rails share it, each on a free port learned at bootstrap.
  std::string address = "127.0.0.1";
  std::vector<TargetId> targets;  // storage role: its targets (ids unique in the cluster)
  NodeId meta_mirror_of = 0;      // meta_mirror role: the meta node whose shard it serves second

  bool has(Role role) const;
};

// A mount lives until it is unmounted; this bounds it (the other nodes wait
// for it at the "clients-done" barrier that long).
inline constexpr std::uint32_t k_default_max_mount_s = 7 * 24 * 3600;

// workload.kind "mount": the client node serves a FUSE mount of the
// deployment (scenarios/mount, `sluice mount`) instead of running a sweep,
// until it is unmounted. The other fields are scenarios/mount's MountOptions.
struct ClusterMount {
  std::string mount_point;  // empty: no mount (the kind is file_sweep)
  bool direct_io = false;
  bool sync_writes = false;
  std::uint32_t entry_timeout_ms = 1000;
  std::uint32_t attr_timeout_ms = 1000;
  std::uint32_t threads = 16;
  std::uint32_t max_mount_s = k_default_max_mount_s;
};

// The workload of the client nodes: FileSweep (core/workloads/file_sweep.hpp)
// with pattern data, so every byte read is verified; or a mount.
struct ClusterWorkload {
  FileSweepConfig sweep;
  ClusterMount mount;
  bool mounted() const { return !mount.mount_point.empty(); }
  std::uint64_t chunk_bytes = 1 * k_mib;  // default chunk size of the metadata server
  std::uint32_t stripe_count = 0;         // 0: every storage target
  // Client ranks on each client node (ClientPlacement::ranks_per_node): a
  // node's ranks are consecutive, rank r on client_nodes[r / ranks_per_client]
  // (plan_services).
  std::uint32_t ranks_per_client = 1;
  // The nodes that run it, in rank order (ClientPlacement::nodes); empty:
  // every node with the client role, in id order.
  std::vector<NodeId> client_nodes;
};
inline constexpr std::uint32_t k_max_ranks_per_client = 256;

// A point's workload after the first (ScenarioSpec::workloads run one after
// the other on the same deployment, as a simulated run does): its client
// nodes in rank order and ranks per node, as ClusterWorkload's. Its ranks
// start once every rank of the one before has finished, everywhere (the
// barrier "workload-<i>-done" of node_runner.hpp); the workload itself is
// the launcher's (NodeRunOptions::make_workload), so a config with later
// workloads runs only on the cluster path, not as a cluster JSON's own
// file sweep (`sluice node --mpi --config`).
struct ClusterLaterWorkload {
  std::vector<NodeId> client_nodes;
  std::uint32_t ranks_per_client = 1;
};
// Workloads of one point, the first among them.
inline constexpr std::size_t k_max_cluster_workloads = 16;

// Storage buddy mirroring (BeeGFS buddy groups) of a multi-process
// deployment: the targets are paired across storage nodes (each target with
// one on another node, in node order), mgmt watches heartbeats and switches a
// group whose primary goes silent, and new files are mirrored.
struct ClusterMirror {
  bool storage = false;
  // Metadata buddy mirroring: every shard has a second server (a node with
  // the meta_mirror role); mgmt watches the two and switches a shard whose
  // primary goes silent (MgmtConfig::meta_mirror).
  bool metadata = false;
  std::uint32_t heartbeat_ms = 500;
  std::uint32_t probably_offline_ms = 1000;
  std::uint32_t offline_ms = 2000;
};

// A fault of the run, timed from the moment every server has registered
// ("servers-up"): the service of role `role` (storage, meta or meta_mirror)
// on node `node` crashes (its events and timers stop; its process and
// transport stay, as a crashed daemon on a live host) and, when
// restart_after_ms > 0, comes back as a fresh instance that registers again
// (HwWorld::kill / restart). A node that hosts storage only runs as a child
// process of its rank instead, and its storage kills are SIGKILLs of that
// process (node_process.hpp). JSON: {"at_ms", "kill_storage_node" |
// "kill_meta_node" | "kill_meta_mirror_node", "restart_after_ms"}.
struct ClusterFault {
  std::uint32_t at_ms = 0;
  NodeId node = 0;
  Role role = Role::storage;
  std::uint32_t restart_after_ms = 0;  // 0: stays dead
};
inline constexpr std::size_t k_max_cluster_faults = 64;

// The transports a node process may use: their rail addresses are
// "a.b.c.d:port", the node's address with a free port.
inline constexpr std::array<std::string_view, 3> k_cluster_transports = {"tcp", "tcp+shm", "ucx"};

struct ClusterConfig {
  std::string run_id = "local";  // names files and barriers of the run
  std::uint64_t seed = 1;
  std::uint32_t rails_per_node = 1;
  std::uint32_t connections_per_rail = 4;
  std::string storage_backend = "posix";
  std::string storage_root = "/tmp/sluice-node-storage";  // <root>/node<N>/target<T>
  std::uint64_t node_memory_limit_bytes = 2ULL << 30;
  std::uint32_t max_wait_s = k_default_max_wait_s;
  std::vector<NodeSpec> nodes;
  ClusterWorkload workload;
  std::vector<ClusterLaterWorkload> later_workloads;
  ClusterMirror mirror;
  std::vector<ClusterFault> faults;
  // Authentication of the nodes' connections (docs/reliability.md#security):
  // the cluster's secret is the first line of shared_secret_file (not
  // readable by other users: transports/shared_secret.hpp). A node refuses to
  // run with neither a secret nor insecure = true; `sluice mount` and
  // `sluice node --mpi` make a fresh secret per run unless given one.
  std::string shared_secret_file;
  bool insecure = false;  // no authentication (benchmarks); said in the results
  // The secret itself, once read or made (never written to JSON).
  std::string shared_secret;
  // The metadata servers' store: "rocksdb" (<storage_root>/<run_id>/node<N>/
  // meta-shard<S>, every mutation fsynced) or "memory".
  std::string meta_store = "rocksdb";
  // How the node processes reach each other (k_cluster_transports): "tcp";
  // "tcp+shm" (shared memory to the processes of the same host, namespace
  // and user, tcp to the rest: transports/host_routed); "ucx" (UCX picks
  // the wire: RDMA verbs where the hosts have RDMA NICs, shared memory,
  // tcp: transports/ucx).
  std::string transport = "tcp";

  const NodeSpec* node(NodeId id) const;
  std::uint32_t client_count() const;
  // 1 + later_workloads.
  std::size_t workload_count() const { return 1 + later_workloads.size(); }
  // Workload w's client nodes in rank order (workload.client_nodes, or every
  // client node by id when that is empty) and its ranks per node.
  std::vector<NodeId> client_nodes_of(std::size_t w) const;
  std::uint32_t ranks_per_client_of(std::size_t w) const;
  std::uint32_t storage_target_count() const;
  // The stripe count files get: workload.stripe_count, or every target when it is 0.
  std::uint32_t stripe_count() const;
};

// Node 0: mgmt, meta and client; nodes 1..N-1: storage, one target each
// (target id = node id). The client reads and writes files striped over
// every other node. nodes >= 2. Addresses 127.0.0.1 (set them per node for
// other networks).
Result<ClusterConfig> default_cluster(std::uint32_t nodes);

// Errors name the field (invalid_argument).
Status validate(const ClusterConfig& config);

nlohmann::json to_json(const ClusterConfig& config);
// Unknown keys are errors (a misspelt option must not silently do nothing).
Result<ClusterConfig> parse_cluster_config(const nlohmann::json& json);
Result<ClusterConfig> parse_cluster_config_text(std::string_view text);

// One service of the deployment, in the canonical order.
struct PlannedService {
  NodeId node = 0;
  ServiceIndex index = 0;  // HwWorld's index: the position in the canonical order
  Role role = Role::mgmt;
  bool barrier = false;        // the BarrierService that follows MgmtService
  ShardId shard = 0;           // meta, meta_mirror: its shard
  std::uint32_t rank = 0;      // client: its rank in its workload
  std::uint32_t workload = 0;  // client: which of the config's workloads (0: the first)
};

struct ServicePlan {
  std::vector<PlannedService> services;
  Endpoint mgmt;
  Endpoint barrier;
  std::uint32_t meta_shards = 0;
  std::vector<std::uint32_t> client_ranks;  // per workload: its rank count
};

ServicePlan plan_services(const ClusterConfig& config);

// mirror.storage: the buddy groups (group ids from 1), each pairing targets
// on two storage nodes; empty when mirroring is off. invalid_argument when
// the targets cannot be paired (an odd number, or all on one node).
Result<std::vector<proto::BuddyGroupDesc>> buddy_groups(const ClusterConfig& config);

}  // namespace sluice::emulate
