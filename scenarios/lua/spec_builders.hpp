// Builders: script arguments (ScriptTable) -> the core's configurations.
//
// One builder per kind of object a script makes. Each reads its fields with
// a FieldReader (type, unit and range checks, unknown-field refusal, sweep
// axes) and throws ScriptError with a sentence naming the field. Builders are
// pure: the same arguments give the same result, so sl.run can rebuild an
// object for every sweep point with one field replaced.
//
// File-system presets (placement on the cluster's nodes):
//   beeond        BeeOND (`beeond start`): node 0 runs mgmt and the metadata
//                 server(s); every node's NVMe drives become storage targets
//                 (nodes without NVMe are clients only)
//                 and every node is a client. meta_servers = N puts shard i on
//                 node i mod nodes. BeeGFS defaults: 512 KiB chunks over 4
//                 targets, chooser randomized (beegfs-meta.conf).
//   beegfs        A BeeGFS building block: servers are storage_nodes (default:
//                 the GPU-less nodes with NVMe), mgmt and metadata on the
//                 first server(s); clients are the other nodes.
//   lustre_like   Lustre: servers as beegfs; striped directories (DNE), 1 MiB
//                 stripes over 1 OST (Lustre's default layout), the lod_qos
//                 allocator, Lustre chunk rules.
//   gekkofs_like  GekkoFS: every node a daemon holding metadata (full-path
//                 hashing) and data; chunks of 512 KiB (GekkoFS default)
//                 spread over every target.
// Workloads run on client_nodes (default: the file system's clients) with
// ranks_per_node ranks each (default 1; "gpus" = the node's GPU count, the
// default of train_epoch, checkpoint_burst and gpu_stream).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "scenarios/lua/field_reader.hpp"
#include "core/topology/machine_builders.hpp"
#include "scenarios/lua/script_value.hpp"
#include "scenarios/scenario_spec.hpp"

namespace sluice::scenario {

// Names of what can be built, for sl.* tables and did-you-mean.
const std::vector<std::string>& machine_types();   // dgx_a100, azure_nd40rs_v2, ...
const std::vector<std::string>& fabric_types();    // infiniband, ethernet
const std::vector<std::string>& fs_types();        // beeond, beegfs, lustre_like, gekkofs_like
const std::vector<std::string>& workload_types();  // file_sweep, md_bench, train_epoch, ...

// What a build also reports: the sweep axes found and the fields known.
struct BuildInfo {
  std::vector<SweepAxisUse> sweeps;
  std::vector<std::string> known;
};

// sl.machines.<type>{...} (not import_nvidia_smi: see build_imported_machine).
std::shared_ptr<const topo::Topology> build_machine(const std::string& type, const ScriptTable& args);
// sl.machines.generic's table as the machine description build_machine builds.
topo::GenericMachine read_generic_machine(const ScriptTable& args);
// sl.machines.import_nvidia_smi(path, {options}) given the file's text.
std::shared_ptr<const topo::Topology> build_imported_machine(const std::string& text, const ScriptTable& options);

struct FabricSpec {
  std::string type;
  double link_bytes_per_s = 0;  // 0: every NIC's port rate
  TimeNs link_latency_ns = 0;
};
FabricSpec build_fabric(const std::string& type, const ScriptTable& args);

struct ClusterBuild {
  std::shared_ptr<const topo::Topology> topology;
  std::string description;
  BuildInfo info;
};
ClusterBuild build_cluster(const ScriptTable& args);

struct FsBuild {
  FsSpec spec;
  std::vector<NodeId> client_nodes;
  BuildInfo info;
};
// cluster == nullptr: checks the fields only (at sl.fs.*{} time); placement
// needs the cluster and is checked at sl.run.
FsBuild build_fs(const std::string& type, const ScriptTable& args, const topo::Topology* cluster);

struct WorkloadBuild {
  WorkloadSpec spec;
  BuildInfo info;
};
// cluster/fs == nullptr: fields only.
WorkloadBuild build_workload(const std::string& type, const ScriptTable& args, const topo::Topology* cluster,
                             const FsBuild* fs);

}  // namespace sluice::scenario
