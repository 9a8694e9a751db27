#include "scenarios/lua/field_tables.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>

#include "core/common/byte_size.hpp"
#include "core/layout/stripe_pattern.hpp"
#include "core/namespace/dir_placement.hpp"
#include "core/sched/rail_selector.hpp"
#include "core/topology/cluster_builders.hpp"
#include "core/topology/hardware_figures.hpp"
#include "core/topology/machine_builders.hpp"
#include "core/topology/nvidia_smi_import.hpp"
#include "core/workloads/workload_limits.hpp"
#include "scenarios/lua/config_fields.hpp"
#include "scenarios/lua/lua_script.hpp"
#include "scenarios/lua/peak_search.hpp"
#include "scenarios/lua/sweep_plan.hpp"

namespace sluice::scenario {

// A size default longer than this ("3750000000KiB") is printed in bytes.
constexpr std::size_t k_size_text_chars_max = 8;

std::string count_text(std::uint64_t n) { return std::to_string(n); }
// As a script writes it: "512KiB"; a size binary units would spell long (3.84 TB) in bytes.
std::string size_text(std::uint64_t bytes) {
  const std::string text = format_size(bytes);
  return text.size() > k_size_text_chars_max ? std::to_string(bytes) : text;
}

// As a script writes it: "25GB/s", "204.8GB/s", "0".
std::string rate_text(double bytes_per_s) {
  char buf[48];
  if (bytes_per_s >= 1e9) {
    std::snprintf(buf, sizeof buf, "%.6gGB/s", bytes_per_s / 1e9);
  } else if (bytes_per_s >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.6gMB/s", bytes_per_s / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%.6g", bytes_per_s);
  }
  return buf;
}

// As a script writes it: "500ms", "1h" is "3600s", "0".
std::string duration_text(TimeNs ns) {
  if (ns == 0) return "0";
  if (ns % k_ns_per_s == 0) return std::to_string(ns / k_ns_per_s) + "s";
  if (ns % k_ns_per_ms == 0) return std::to_string(ns / k_ns_per_ms) + "ms";
  if (ns % k_ns_per_us == 0) return std::to_string(ns / k_ns_per_us) + "us";
  return std::to_string(ns) + "ns";
}

namespace {

// Ethernet (RoCE/TCP) NIC + switch per link: slower than InfiniBand's
// ~0.3 us per link (hardware_figures.hpp); 1 us until calibrated.
constexpr TimeNs k_ethernet_link_latency_ns = 1000;
// A link of more than 100 Tb/s is surely a unit mistake.
constexpr double k_max_fabric_gbps = 100'000;
constexpr double k_min_fabric_gbps = 0.001;
// Storage targets one node may serve (drives per node).
constexpr std::uint64_t k_max_targets_per_node = 256;
// sl.machines.import_nvidia_smi: PCIe generations 1..5 (as sl.machines.generic).
constexpr std::uint64_t k_max_pcie_gen = topo::k_generic_max_pcie_gen;
// sl.cluster's fat tree: leaf downlink : uplink capacity.
constexpr double k_max_oversubscription = 1000.0;
constexpr std::uint64_t k_max_seed = std::numeric_limits<std::int64_t>::max();
const std::string k_node_unit = "node index";

std::string gbps_text(double bytes_per_s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", bytes_per_s * 8 / 1e9);
  return buf;
}

FieldTable table(std::string name, std::string summary, std::vector<FieldDoc> fields) {
  return FieldTable{std::move(name), std::move(summary), std::move(fields)};
}

void append(std::vector<FieldDoc>& to, std::vector<FieldDoc> more) {
  for (FieldDoc& f : more) to.push_back(std::move(f));
}

// ---- machines ----

// Puts `docs` right after the field named `after` of `f` (the fields a
// config's fields() does not describe: aliases, nested tables).
void insert_after(std::vector<FieldDoc>& f, const std::string& after, std::vector<FieldDoc> docs) {
  auto at = std::find_if(f.begin(), f.end(), [&](const FieldDoc& d) { return d.name == after; });
  if (at == f.end()) throw std::logic_error("internal error: no field \"" + after + "\" to insert after");
  f.insert(at + 1, std::make_move_iterator(docs.begin()), std::make_move_iterator(docs.end()));
}

std::vector<FieldDoc> generic_fields() {
  const topo::GenericMachine g;
  std::vector<FieldDoc> f = script_field_docs(g);
  insert_after(
      f, "nic_port_rate_bytes_per_s",
      {number_field("nic_gbps", "Gb/s", k_min_fabric_gbps, k_max_fabric_gbps, gbps_text(g.nic_port_rate_bytes_per_s),
                    "the same in Gb/s (wins over nic_port_rate_bytes_per_s)")});
  return f;
}

std::vector<FieldDoc> import_options() {
  const topo::NvidiaSmiImportOptions o;
  return {
      count_field("pcie_gen", "generation", 1, k_max_pcie_gen, count_text(static_cast<std::uint64_t>(o.pcie_gen)),
                  "PCIe generation of every link (x16)"),
      rate_field("nic_port_rate_bytes_per_s", rate_text(o.nic_port_rate_bytes_per_s), "line rate of each NIC port"),
      number_field("nic_gbps", "Gb/s", k_min_fabric_gbps, k_max_fabric_gbps, gbps_text(o.nic_port_rate_bytes_per_s),
                   "the same in Gb/s (wins over nic_port_rate_bytes_per_s)"),
      size_field("gpu_memory_bytes", 0, k_field_no_limit, size_text(o.gpu_memory_bytes),
                 "memory of each GPU (0: the importer's figure)"),
      size_field("memory_bytes_per_socket", 0, k_field_no_limit, size_text(o.memory_bytes_per_socket),
                 "host memory of each socket (0: the importer's figure)"),
      rate_field("memory_bytes_per_s", rate_text(o.memory_bytes_per_s), "host memory bandwidth of each socket"),
      rate_field("inter_socket_bytes_per_s", rate_text(o.inter_socket_bytes_per_s), "link between two sockets"),
  };
}

std::map<std::string, FieldTable> make_machine_tables() {
  std::map<std::string, FieldTable> out;
  out["dgx_a100"] = table("sl.machines.dgx_a100",
                          "NVIDIA DGX A100: 2 sockets, 8 A100 GPUs, 8 HDR 200 Gb/s compute NICs and a dual-port "
                          "storage NIC, 8 NVMe drives in 4 PCIe gen4 switch complexes",
                          {});
  out["azure_nd40rs_v2"] = table("sl.machines.azure_nd40rs_v2",
                                 "Azure ND40rs_v2: 2 sockets, 8 V100 GPUs, one 100 Gb/s EDR InfiniBand NIC, ~3 TB "
                                 "local NVMe",
                                 {});
  out["critical_io_gpu_host"] = table("sl.machines.critical_io_gpu_host",
                                      "the Critical I/O GPU host: one GPU and a dual-port 25 GbE RoCE NIC under one "
                                      "PCIe switch, the ports sharing a gen3 x8 link",
                                      {});
  out["dgx2_like"] = table("sl.machines.dgx2_like",
                           "a DGX-2-like box: 2 sockets, 16 V100 GPUs, 8 EDR 100 Gb/s NICs, 8 NVMe drives behind "
                           "PCIe switches",
                           {});
  out["critical_io_recorder"] =
      table("sl.machines.critical_io_recorder",
            "the Critical I/O StoreEngine recorder: the GPU host's NIC on gen3 x8 plus gen3 x4 NVMe drives",
            {count_field("nvme", "drives", 1, topo::k_generic_max_devices, count_text(k_recorder_default_nvme),
                         "NVMe drives of the recorder")});
  out["generic"] = table("sl.machines.generic", "a machine described by its device counts and rates", generic_fields());
  out["import_nvidia_smi"] = table("sl.machines.import_nvidia_smi(path, {...})",
                                   "the options of a machine read from `nvidia-smi topo -m` output", import_options());
  return out;
}

// ---- fabric and cluster ----

FieldTable fabric_table(const std::string& type) {
  return table("sl.fabric." + type,
               type == "ethernet" ? "an Ethernet (RoCE/TCP) network joining the machines"
                                  : "an InfiniBand network joining the machines",
               {
                   number_field("gbps", "Gb/s", k_min_fabric_gbps, k_max_fabric_gbps, "each NIC's port rate",
                                "rate of every node link"),
                   rate_field("rate", "each NIC's port rate", "the same as a rate (give gbps or rate, not both)"),
                   duration_field("latency", duration_text(fabric_default_latency_ns(type)),
                                  "latency of every network link (NIC + switch), at most 1 s"),
               });
}

FieldTable make_cluster_table() {
  const topo::FatTreeOptions fat_tree;
  return table(
      "sl.cluster", "machines joined by a fabric into one cluster (node = one machine copied, or machines = a list)",
      {
          count_field("nodes", "nodes", 1, topo::k_max_cluster_nodes, "1 (machines: the list's length)",
                      "how many copies of node"),
          object_field("node", ObjectKind::machine, "", "the machine every node is (with nodes)"),
          value_field("machines", "list of machines", "", "one machine per node, in node order (instead of node)"),
          object_field("fabric", ObjectKind::fabric, "links at each NIC's port rate, InfiniBand latency",
                       "the network (sl.fabric.*)"),
          choice_field("topology", {"star", "fat_tree"}, "star", "one switch, or leaves and spines"),
          count_field("nodes_per_leaf", "nodes", 1, topo::k_max_cluster_nodes, count_text(fat_tree.nodes_per_leaf),
                      "fat_tree: nodes under each leaf switch"),
          count_field("spines", "switches", 1, topo::k_max_spines, count_text(fat_tree.spines),
                      "fat_tree: spine switches"),
          number_field("oversubscription", "ratio", 1.0, k_max_oversubscription,
                       ScriptValue{fat_tree.oversubscription}.text(), "fat_tree: leaf downlink : uplink capacity"),
      });
}

// ---- file systems ----

std::vector<FieldDoc> fs_placement_fields(const FsPreset& p) {
  const std::string shards = p.every_node && p.policy == MetaPolicy::path_hash ? "every node" : "1";
  return {
      count_field("mgmt_node", k_node_unit, 0, topo::k_max_nodes - 1, p.every_node ? "0" : "the first storage server",
                  "node of the management service"),
      count_field("meta_servers", "shards", 1, k_shard_count_max, shards,
                  "metadata servers (shards), shard i on the i-th candidate node (wrapping)"),
      count_list_field("meta_nodes", k_node_unit, 0, topo::k_max_nodes - 1,
                       p.every_node ? "nodes 0, 1, ..." : "the storage servers in turn",
                       "one metadata server per entry, shard = position (instead of meta_servers)"),
      count_list_field("storage_nodes", k_node_unit, 0, topo::k_max_nodes - 1,
                       p.every_node ? "every node with NVMe" : "the GPU-less nodes with NVMe",
                       "nodes running a storage server"),
      count_field("targets_per_node", "targets", 1, k_max_targets_per_node, "every NVMe drive",
                  "storage targets per server, its first drives"),
      count_list_field("client_nodes", k_node_unit, 0, topo::k_max_nodes - 1,
                       p.every_node ? "every node" : "the nodes serving nothing (else every node)",
                       "nodes mounting the file system (workloads' default clients)"),
  };
}

std::vector<FieldDoc> fs_namespace_fields(const FsPreset& p) {
  NamespaceConfig ns;
  ns.policy = p.policy;
  std::vector<FieldDoc> fields = {
      choice_field("flavor", names_of(stripe_flavor_names()), name_of(stripe_flavor_names(), p.flavor),
                   "chunk-size rules: BeeGFS (powers of two) or Lustre (multiples of 64 KiB)"),
  };
  append(fields, script_field_docs(ns));
  // The hash is the policy's own unless striped_dir (build_fs).
  const std::string hash = p.policy == MetaPolicy::striped_dir ? name_of(dir_hash_names(), ns.dir_hash)
                           : p.policy == MetaPolicy::path_hash ? "fnv_1a_64"
                                                               : "none";
  for (FieldDoc& f : fields) {
    if (f.name == "dir_hash") f.default_text = hash;
  }
  return fields;
}

std::vector<FieldDoc> fs_tunable_fields(const FsPreset& p) {
  const FsSpec fs;
  StorageServiceConfig storage = fs.storage_config;
  storage.buffered_reads = p.buffered_reads;
  std::vector<FieldDoc> fields = {
      choice_field("gds", names_of(gds_names()), name_of(gds_names(), fs.gds),
                   "GPUDirect Storage: on (direct or fail), off (bounce), auto (direct where possible)"),
  };
  append(fields, script_field_docs(storage));
  append(fields, script_field_docs(fs.client));
  insert_after(fields, "max_inflight_chunks",
               {count_field("rail_connections", "connections", 1, sched::k_max_connections_per_nic_limit,
                            count_text(fs.client.planner.rails.max_connections_per_nic),
                            "connections per NIC before a client's chunks overflow to other rails")});
  return fields;
}

FieldTable fs_table(const std::string& type) {
  const FsPreset p = fs_preset(type);
  std::vector<FieldDoc> fields = fs_placement_fields(p);
  fields.push_back(table_field("stripe", "", "default layout of new files (sl.fs.* stripe)"));
  append(fields, fs_namespace_fields(p));
  append(fields, fs_tunable_fields(p));
  fields.push_back(table_field("mirror", "no mirroring", "buddy mirroring of storage and metadata (sl.fs.* mirror)"));
  return table("sl.fs." + type, "a file system deployed on the cluster's nodes", fields);
}

FieldTable fs_stripe_table(const std::string& type) {
  const FsPreset p = fs_preset(type);
  std::vector<std::string> choosers = names_of(chooser_names());
  choosers.pop_back();  // "default": the file system's default is what this sets
  return table(
      "sl.fs.* stripe", "`stripe = {...}` of a file system: the default layout of new files",
      {
          size_field("chunk", k_min_chunk_bytes, k_max_chunk_bytes_lustre, size_text(p.chunk_bytes),
                     "chunk (stripe unit) size"),
          count_field("count", "targets", 1, k_max_stripe_count,
                      type == "gekkofs_like" ? "every target" : count_text(p.stripe_count),
                      "targets a file is striped over"),
          choice_field("chooser", choosers, name_of(chooser_names(), p.chooser), "how a new file's targets are chosen"),
      });
}

FieldTable make_mirror_table() {
  return table(
      "sl.fs.* mirror", "`mirror = {...}` of a file system: BeeGFS buddy mirroring, and its failure detector",
      {
          boolean_field("storage", k_lua_mirror_storage, "storage buddy groups: every target paired on another server"),
          boolean_field("metadata", k_lua_mirror_metadata, "a second server for every metadata shard"),
          duration_field("heartbeat", duration_text(k_lua_mirror_heartbeat_ns), "how often services report to mgmt"),
          duration_field("probably_offline_after", duration_text(k_lua_mirror_probably_offline_ns),
                         "silence after which mgmt suspects a server (longer than heartbeat)"),
          duration_field("offline_after", duration_text(k_lua_mirror_offline_ns),
                         "silence after which mgmt switches its groups over (>= probably_offline_after)"),
      });
}

// ---- workloads ----

// Every workload's first fields: its label and where its ranks run.
std::vector<FieldDoc> workload_head(const std::string& type, bool gpu_ranks) {
  return {
      text_field("label", k_field_no_limit, type, "prefixes the workload's phase and metric names"),
      count_list_field("client_nodes", k_node_unit, 0, topo::k_max_nodes - 1, "the file system's clients",
                       "nodes running the workload's ranks"),
      count_field("ranks_per_node", "ranks", 1, k_workload_max_inflight, gpu_ranks ? "\"gpus\"" : "1",
                  "ranks on each client node, or \"gpus\": one per GPU (the fewest of the client nodes)"),
  };
}

FieldDoc workload_stripe() {
  return table_field("stripe", "the file system's", "layout of the files it creates (sl.workload.* stripe)");
}

std::vector<FieldDoc> file_sweep_fields() {
  const FileSweepConfig c;
  std::vector<FieldDoc> f = script_field_docs(c);
  insert_after(f, "files_per_rank",
               {count_field("files", "files", 0, k_workload_max_items_per_rank, "files_per_rank x ranks",
                            "files of all ranks together, split over the ranks (instead of files_per_rank)")});
  insert_after(
      f, "file_bytes",
      {size_field("size", 0, k_workload_max_bytes_per_rank, size_text(c.file_bytes), "the same as file_bytes")});
  insert_after(
      f, "block_bytes",
      {size_field("block", 1, k_workload_max_block_bytes, size_text(c.block_bytes), "the same as block_bytes")});
  insert_after(f, "phases",
               {choice_list_field("op", {"write", "read", "stat", "delete"}, "",
                                  "the measured operations; mkdir, delete and rmdir around them (instead of phases)"),
                workload_stripe()});
  return f;
}

std::vector<FieldDoc> md_bench_fields() {
  const MdBenchConfig c;
  std::vector<FieldDoc> f = script_field_docs(c);
  insert_after(f, "files_per_rank",
               {count_field("files", "files", 0, k_workload_max_items_per_rank, "files_per_rank x ranks",
                            "files of all ranks together, split over the ranks (instead of files_per_rank)")});
  insert_after(f, "remove_dirs", {workload_stripe()});
  for (FieldDoc& d : f) {
    if (d.name == "storm_dir") d.default_text = "the shared directory";
  }
  return f;
}

std::vector<FieldDoc> train_epoch_fields() {
  std::vector<FieldDoc> f = script_field_docs(TrainEpochConfig{});
  insert_after(f, "pattern_seed", {workload_stripe()});
  return f;
}

std::vector<FieldDoc> checkpoint_burst_fields() {
  std::vector<FieldDoc> f = script_field_docs(CheckpointConfig{});
  insert_after(f, "pattern_seed",
               {workload_stripe(),
                choice_field("stripe_flavor", names_of(stripe_flavor_names()), "the file system's flavor",
                             "how to read the files' stripe patterns"),
                count_list_field("known_targets", "target ids", 0, k_no_id - 1, "the targets in the client's maps",
                                 "every target, for the balance of bytes per target")});
  return f;
}

std::vector<FieldDoc> stage_in_fields() {
  std::vector<FieldDoc> f = script_field_docs(StageInConfig{});
  insert_after(f, "pattern_seed", {workload_stripe()});
  return f;
}

std::vector<FieldDoc> gpu_stream_fields() {
  std::vector<FieldDoc> f = script_field_docs(StreamConfig{});
  insert_after(f, "pattern_seed", {workload_stripe()});
  return f;
}

FieldTable workload_table(const std::string& type) {
  const bool gpu_ranks = type == "train_epoch" || type == "checkpoint_burst" || type == "gpu_stream";
  std::vector<FieldDoc> f = workload_head(type, gpu_ranks);
  auto add = [&](std::vector<FieldDoc> body) { append(f, std::move(body)); };
  std::string summary;
  if (type == "file_sweep") {
    add(file_sweep_fields());
    summary = "an elbencho-like sweep: every rank makes, writes, reads, stats and deletes its files";
  } else if (type == "md_bench") {
    add(md_bench_fields());
    summary = "an mdtest-like metadata benchmark (create, stat, readdir, ls_storm, link, rename, remove)";
  } else if (type == "train_epoch") {
    add(train_epoch_fields());
    summary = "a DLIO-like training epoch: batches of samples read while the GPUs compute";
  } else if (type == "checkpoint_burst") {
    add(checkpoint_burst_fields());
    summary = "periodic checkpoints: every rank writes its shard at once";
  } else if (type == "stage_in") {
    add(stage_in_fields());
    summary = "staging: every rank pulls its share of a dataset from an object store into the file system";
  } else if (type == "gpu_stream") {
    add(gpu_stream_fields());
    summary = "GPU buffers recorded to or played back from one file per rank, GPU-direct";
  } else {
    throw std::logic_error("internal error: no field table for workload \"" + type + "\"");
  }
  return table("sl.workload." + type, summary, f);
}

FieldTable make_workload_stripe_table() {
  const CreateOptions c;
  return table(
      "sl.workload.* stripe", "`stripe = {...}` of a workload: the layout of the files it creates",
      {
          size_field("chunk", k_min_chunk_bytes, k_max_chunk_bytes_lustre, "the file system's",
                     "chunk (stripe unit) size"),
          count_field("count", "targets", 1, k_max_stripe_count, "the file system's", "targets a file is striped over"),
          choice_field("chooser", names_of(chooser_names()), name_of(chooser_names(), c.chooser),
                       "how a new file's targets are chosen (default: the file system's)"),
      });
}

// ---- sl.run and what it holds ----

FieldTable make_run_table() {
  const RunRequest req;
  const std::vector<std::string> backends = names_of(backend_names());
  return table(
      "sl.run", "runs a scenario (every sweep point) and returns one result table per point",
      {
          object_field("cluster", ObjectKind::cluster, "", "the cluster (required)"),
          object_field("fs", ObjectKind::fs, "", "the file system (required)"),
          object_field("workload", ObjectKind::workload, "", "the workload (this or workloads)"),
          value_field("workloads", "list of workloads", "", "workloads run one after the other on one file system"),
          choice_field("backend", backends, name_of(backend_names(), req.backends.front()),
                       "where it runs (--backend overrides)"),
          choice_list_field("backends", backends, "", "several backends, each running every point"),
          count_field("seed", "seed", 0, k_max_seed, count_text(req.seed), "seed of the run (--seed overrides)"),
          table_field("sweep", "", "sweep axes over fields of every object: { threads = {1, 8}, ... }"),
          text_field("label", k_max_run_label_chars, "", "a name for the run's rows"),
          table_field("params", "",
                      "what the script's own loop chose, recorded on each point as parameter values "
                      "(numbers, strings or booleans)"),
          text_field("sim_profile", k_field_no_limit, req.sim_profile, "simulator model profile (sim/profiles/)"),
          boolean_field("sim_coalesce", req.sim_coalesce,
                        "simulator: merge a request's chunk pieces on one target (fewer events); where the merged "
                        "run measures that it strays from per chunk (pieces beyond the targets' request slots, or "
                        "merged writes, past 2%), the point runs per chunk and deployment.sim_coalesce says why "
                        "(docs/sim.md); sluice run --sim-coalesce overrides"),
          choice_field("sim_mode", names_of(sim_mode_names()), name_of(sim_mode_names(), req.sim_mode),
                       "simulator: chunk (every communication a SimGrid activity), fluid (communications as "
                       "flows solved less often: bulk reads and writes at data scale) or auto (fluid where the "
                       "fluid run measures its rates within 2% of the solved sharing, per chunk otherwise; "
                       "deployment.sim_mode says which and why; docs/sim.md); sluice run --sim-mode overrides"),
          count_field("max_events", "events", 1, k_max_seed, count_text(req.max_events),
                      "simulator: most events before the run stops"),
          value_field("faults", "list of fault entries", "no faults", "the fault plan (sl.run faults entries)"),
      });
}

FieldTable make_peak_table() {
  return table("sl.peak",
               "raises one concurrency axis of one point x2 per step until its bulk rate grows by less than 2%, "
               "and reports the knee with its bound",
               {
                   table_field("run", "", "the sl.run fields of one point, without sweeps (required)"),
                   choice_field("axis", peak_axes(), peak_axes().front(),
                                "threads: a file_sweep's (files_per_rank raised with it); iodepth: a file_sweep's "
                                "blocks in flight per file (files and bytes kept); inflight_blocks: a "
                                "checkpoint_burst's"),
                   text_field("phase", k_field_no_limit, "the first bulk phase",
                              "the measured phase: one of the workload's write and read phases"),
                   count_field("max_steps", "points", 2, k_peak_max_steps, count_text(k_peak_max_steps),
                               "points run at most, the start included"),
               });
}

FieldDoc fault_at() { return duration_field("at", "0", "when the fault starts, from the start of the run"); }
FieldDoc fault_for() { return duration_field("for_", "until the end", "how long it lasts (`for` is reserved in Lua)"); }
const std::string k_subject_unit = "service, node or target";

FieldTable fault_table(const std::string& kind) {
  std::vector<FieldDoc> f = {fault_at()};
  std::string summary;
  if (kind == "kill") {
    summary = "a service killed";
    f.push_back(text_field("kill", k_field_no_limit, "", "the service killed: \"storage:3\", \"meta:0\", \"mgmt\""));
    f.push_back(duration_field("revive_after", "never", "when it comes back, after the kill"));
  } else if (kind == "slow_disk") {
    summary = "a storage target's disk made slower";
    f.push_back(text_field("slow_disk", k_field_no_limit, "", "the target or server: \"target:5\", \"storage:1\""));
    f.push_back(number_field("factor", "times", 1.0, faults::k_max_disk_slowdown, "",
                             "how many times slower (required, more than 1)"));
  } else if (kind == "partition") {
    summary = "a group of nodes or services cut off from the rest";
    f.push_back(value_field("partition", "list of " + k_subject_unit + " names", "",
                            "the members: {\"node1\", \"storage:0\"}"));
  } else if (kind == "message_loss") {
    summary = "messages lost (and delayed) at random";
    f.push_back(number_field("message_loss", "probability", 0.0, 1.0, "", "probability that a message is lost"));
    f.push_back(duration_field("delay", "0", "extra delay of every message"));
  } else {
    throw std::logic_error("internal error: no fault kind \"" + kind + "\"");
  }
  f.push_back(fault_for());
  return table("sl.run faults entry: " + kind, summary, f);
}

FieldTable make_claim_table() {
  const double any = std::numeric_limits<double>::max();
  return table("sl.claim",
               "`sl.claim{\"text\", ...}`: a claim checked against a measured number: a seed figure (seed_value, "
               "tolerance) where the seed publishes a value, else a shape (at_least, at_most)",
               {
                   number_field("measured", "", -any, any, "", "the measured number (required)"),
                   number_field("seed_value", "", -any, any, "",
                                "the value the seed publishes; the claim holds within tolerance of it"),
                   number_field("tolerance", "fraction", 0.0, 10.0, "0.15",
                                "relative tolerance around seed_value; another than 0.15 needs tolerance_why"),
                   text_field("tolerance_why", k_field_no_limit, "", "why the tolerance is not the default 15%"),
                   boolean_field("input", false,
                                 "the seed figure is also a parameter of the run (the study sets it): shown, "
                                 "not counted in F3"),
                   number_field("at_least", "", -any, any, "", "shape: lowest value for which the claim holds"),
                   number_field("at_most", "", -any, any, "", "shape: highest value for which the claim holds"),
                   text_field("seed", k_field_no_limit, "", "the seed's own words for the figure"),
               });
}

FieldTable make_compare_table() {
  return table(
      "sl.compare", "`sl.compare{results, ...}`: the script's runs (predictions) next to results measured elsewhere",
      {
          value_field("measured", "path or list of paths", "",
                      "results files: the results.json of `sluice import`, `sluice run` or `sluice node --mpi`, "
                      "tried as given, then in the script's folder; at most " +
                          std::to_string(k_max_compare_files) + " (required)"),
          value_field("match", "list of param names", "every param of the measured run",
                      "the params that place a measured run; a run of the script is at its point when it has an "
                      "equal value of each (the same text, or the same quantity: \"4KiB\" and \"4096\")"),
          value_field("metrics", "list of metric names", "those of `sluice compare`",
                      "what to compare per phase: bytes_per_s, ops_per_s, last_done_s, latency_us_p50, "
                      "latency_us_p99, extra.<name>"),
          text_field("title", k_field_no_limit, "", "a line printed above the table"),
      });
}

FieldTable make_plot_table() {
  return table(
      "sl._draw_plot", "what report:plot passes to the C side (scripts call report:plot)",
      {
          text_field("file", k_field_no_limit, "", "plain file name in --out, \"sweep.svg\" (required)"),
          text_field("title", k_field_no_limit, "the file name without extension", "plot title"),
          text_field("x_label", k_field_no_limit, "", "x axis label"),
          text_field("y_label", k_field_no_limit, "", "y axis label"),
          boolean_field("log_x", false, "logarithmic x axis"),
          table_field("series", "",
                      "the curves (sl._draw_plot series), a list of at most " + std::to_string(k_max_plot_series)),
      });
}

FieldTable make_plot_curve_table() {
  return table("sl._draw_plot series", "one curve of a plot",
               {
                   text_field("title", k_field_no_limit, "", "the curve's name"),
                   table_field("x", "", "x values (numbers, at most " + std::to_string(k_max_plot_points) + ")"),
                   table_field("y", "", "y values, as many as x"),
               });
}

}  // namespace

const NamedValues<proto::ChooserKind>& chooser_names() {
  static const NamedValues<proto::ChooserKind> k{{"randomized", proto::ChooserKind::randomized},
                                                 {"roundrobin", proto::ChooserKind::round_robin},
                                                 {"randomrobin", proto::ChooserKind::random_robin},
                                                 {"randominternode", proto::ChooserKind::random_inter_node},
                                                 {"lustre_qos", proto::ChooserKind::space_weighted_qos},
                                                 {"default", proto::ChooserKind::server_default}};
  return k;
}
const NamedValues<MemKind>& mem_kind_names() {
  static const NamedValues<MemKind> k{{"host", MemKind::host}, {"pinned", MemKind::pinned}, {"gpu", MemKind::gpu}};
  return k;
}
const NamedValues<MetaPolicy>& meta_policy_names() {
  static const NamedValues<MetaPolicy> k{{"dir_owner", MetaPolicy::dir_owner},
                                         {"striped_dir", MetaPolicy::striped_dir},
                                         {"path_hash", MetaPolicy::path_hash}};
  return k;
}
const NamedValues<DirHashKind>& dir_hash_names() {
  static const NamedValues<DirHashKind> k{
      {"fnv_1a_64", DirHashKind::fnv_1a_64}, {"crush", DirHashKind::crush}, {"rendezvous", DirHashKind::rendezvous}};
  return k;
}
const NamedValues<MkdirShardRule>& mkdir_rule_names() {
  static const NamedValues<MkdirShardRule> k{{"with_entry", MkdirShardRule::with_entry},
                                             {"random", MkdirShardRule::random},
                                             {"random_near_root", MkdirShardRule::random_near_root}};
  return k;
}
const NamedValues<SplitShardRule>& split_rule_names() {
  static const NamedValues<SplitShardRule> k{{"round_robin", SplitShardRule::round_robin},
                                             {"random", SplitShardRule::random}};
  return k;
}
const NamedValues<GdsMode>& gds_names() {
  static const NamedValues<GdsMode> k{{"on", GdsMode::on}, {"off", GdsMode::off}, {"auto", GdsMode::automatic}};
  return k;
}
const NamedValues<SimMode>& sim_mode_names() {
  static const NamedValues<SimMode> k = [] {
    NamedValues<SimMode> all;
    for (SimMode m : k_sim_modes) all.push_back({sim_mode_name(m), m});
    return all;
  }();
  return k;
}
const NamedValues<StripeFlavor>& stripe_flavor_names() {
  static const NamedValues<StripeFlavor> k{{"beegfs", StripeFlavor::beegfs}, {"lustre", StripeFlavor::lustre}};
  return k;
}
const NamedValues<StreamDirection>& stream_direction_names() {
  static const NamedValues<StreamDirection> k{{"record", StreamDirection::record},
                                              {"playback", StreamDirection::playback}};
  return k;
}
const NamedValues<SweepPhase>& sweep_phase_names() {
  static const NamedValues<SweepPhase> k{{"mkdir", SweepPhase::mkdir},         {"write", SweepPhase::write},
                                         {"read", SweepPhase::read},           {"stat", SweepPhase::stat},
                                         {"delete", SweepPhase::delete_files}, {"rmdir", SweepPhase::rmdir}};
  return k;
}
const NamedValues<BetweenPhases>& between_phases_names() {
  static const NamedValues<BetweenPhases> k{{"nothing", BetweenPhases::nothing},
                                            {"sync_dropcache", BetweenPhases::sync_dropcache}};
  return k;
}
const NamedValues<MdPhase>& md_phase_names() {
  static const NamedValues<MdPhase> k{{"create", MdPhase::create},   {"stat", MdPhase::stat},
                                      {"readdir", MdPhase::readdir}, {"ls_storm", MdPhase::ls_storm},
                                      {"remove", MdPhase::remove},   {"link", MdPhase::link},
                                      {"rename", MdPhase::rename}};
  return k;
}
const NamedValues<Backend>& backend_names() {
  static const NamedValues<Backend> k{
      {"sim", Backend::sim}, {"hw", Backend::hw}, {"emulate", Backend::emulate}, {"cluster", Backend::cluster}};
  return k;
}

FsPreset fs_preset(const std::string& type) {
  FsPreset p;
  if (type == "lustre_like") {
    // Lustre's default layout: 1 MiB stripes over 1 OST, the lod_qos allocator, DNE.
    p.chunk_bytes = 1 * k_mib;
    p.stripe_count = 1;
    p.chooser = proto::ChooserKind::space_weighted_qos;
    p.policy = MetaPolicy::striped_dir;
    p.flavor = StripeFlavor::lustre;
    return p;
  }
  if (type != "beeond" && type != "beegfs" && type != "gekkofs_like") {
    throw std::logic_error("internal error: no file system preset \"" + type + "\"");
  }
  // BeeGFS defaults (beegfs-meta.conf): 512 KiB chunks over 4 targets, chooser randomized.
  p.chunk_bytes = 512 * k_kib;
  p.stripe_count = 4;
  p.chooser = proto::ChooserKind::randomized;
  p.policy = type == "gekkofs_like" ? MetaPolicy::path_hash : MetaPolicy::dir_owner;
  p.every_node = type == "beeond" || type == "gekkofs_like";
  // beegfs-storage reads chunk files with buffered I/O (no O_DIRECT): the
  // kernel's read-ahead, tuneFileReadAheadSize beside it (beegfs-storage.conf).
  p.buffered_reads = type != "gekkofs_like";
  return p;
}

TimeNs fabric_default_latency_ns(const std::string& type) {
  return type == "ethernet" ? k_ethernet_link_latency_ns : topo::k_network_link_latency_ns;
}

const FieldTable& machine_fields(const std::string& type) {
  static const std::map<std::string, FieldTable> k = make_machine_tables();
  const auto it = k.find(type);
  if (it == k.end()) throw std::logic_error("internal error: no field table for machine \"" + type + "\"");
  return it->second;
}

const FieldTable& fabric_fields(const std::string& type) {
  static const FieldTable k_infiniband = fabric_table("infiniband");
  static const FieldTable k_ethernet = fabric_table("ethernet");
  if (type == "infiniband") return k_infiniband;
  if (type == "ethernet") return k_ethernet;
  throw std::logic_error("internal error: no field table for fabric \"" + type + "\"");
}

const FieldTable& cluster_fields() {
  static const FieldTable k = make_cluster_table();
  return k;
}

const FieldTable& fs_fields(const std::string& type) {
  static const std::map<std::string, FieldTable> k = [] {
    std::map<std::string, FieldTable> out;
    for (const char* t : {"beeond", "beegfs", "lustre_like", "gekkofs_like"}) out[t] = fs_table(t);
    return out;
  }();
  const auto it = k.find(type);
  if (it == k.end()) throw std::logic_error("internal error: no field table for file system \"" + type + "\"");
  return it->second;
}

const FieldTable& fs_stripe_fields(const std::string& type) {
  static const std::map<std::string, FieldTable> k = [] {
    std::map<std::string, FieldTable> out;
    for (const char* t : {"beeond", "beegfs", "lustre_like", "gekkofs_like"}) out[t] = fs_stripe_table(t);
    return out;
  }();
  const auto it = k.find(type);
  if (it == k.end()) throw std::logic_error("internal error: no stripe table for file system \"" + type + "\"");
  return it->second;
}

const FieldTable& fs_mirror_fields() {
  static const FieldTable k = make_mirror_table();
  return k;
}

const FieldTable& workload_fields(const std::string& type) {
  static const std::map<std::string, FieldTable> k = [] {
    std::map<std::string, FieldTable> out;
    for (const char* t : {"file_sweep", "md_bench", "train_epoch", "checkpoint_burst", "stage_in", "gpu_stream"}) {
      out[t] = workload_table(t);
    }
    return out;
  }();
  const auto it = k.find(type);
  if (it == k.end()) throw std::logic_error("internal error: no field table for workload \"" + type + "\"");
  return it->second;
}

const FieldTable& workload_stripe_fields() {
  static const FieldTable k = make_workload_stripe_table();
  return k;
}

const FieldTable& run_fields() {
  static const FieldTable k = make_run_table();
  return k;
}

const FieldTable& peak_fields() {
  static const FieldTable k = make_peak_table();
  return k;
}

const std::vector<std::string>& fault_kinds() {
  static const std::vector<std::string> k = {"kill", "slow_disk", "partition", "message_loss"};
  return k;
}

const FieldTable& fault_fields(const std::string& kind) {
  static const std::map<std::string, FieldTable> k = [] {
    std::map<std::string, FieldTable> out;
    for (const std::string& kind_name : fault_kinds()) out[kind_name] = fault_table(kind_name);
    return out;
  }();
  const auto it = k.find(kind);
  if (it == k.end()) throw std::logic_error("internal error: no field table for fault \"" + kind + "\"");
  return it->second;
}

const FieldTable& claim_fields() {
  static const FieldTable k = make_claim_table();
  return k;
}

const FieldTable& compare_fields() {
  static const FieldTable k = make_compare_table();
  return k;
}

const FieldTable& plot_fields() {
  static const FieldTable k = make_plot_table();
  return k;
}

const FieldTable& plot_curve_fields() {
  static const FieldTable k = make_plot_curve_table();
  return k;
}

}  // namespace sluice::scenario
