// The fields of every table a script passes to the sluice module, as data:
// what FieldReader (field_reader.hpp) checks and what the API reference
// (lua_api.hpp, docs/lua-api.md) prints.
//
// One FieldTable per constructor and nested table: sl.machines.<type>,
// sl.fabric.<type>, sl.cluster, sl.fs.<type> and its stripe and mirror
// tables, sl.workload.<type> and its stripe table, sl.run, sl.peak, the entries of
// sl.run's fault plan, sl.claim, sl.compare, and report:plot's tables.
// Defaults are read off the configuration structs the builders fill
// (FileSweepConfig{}, the presets below), so a changed default changes the
// reference with it.
//
// The tables are statics, built once (thread-safe initialisation) and never
// changed; a reference to one stays valid for the program's life.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/mem_handle.hpp"
#include "core/common/units.hpp"
#include "core/layout/stripe_pattern.hpp"
#include "core/namespace/namespace_config.hpp"
#include "core/proto/wire_enums.hpp"
#include "core/workloads/file_sweep.hpp"
#include "core/workloads/gpu_stream.hpp"
#include "core/workloads/md_bench.hpp"
#include "scenarios/lua/field_reader.hpp"
#include "scenarios/scenario_spec.hpp"

namespace sluice::scenario {

// sl.run's label: a name for a table column, not a document.
inline constexpr std::uint64_t k_max_run_label_chars = 200;
// sl.machines.critical_io_recorder's drives when nvme is not given
// (topo::critical_io_recorder's default).
inline constexpr std::uint32_t k_recorder_default_nvme = 4;
// sl.fs's mirror = {...} defaults: heartbeats every 500 ms, switchover 4 s
// after the primary was last heard from. Far shorter than BeeGFS's defaults
// (sysTargetOfflineTimeoutSecs = 180), so that a failover fits into a
// simulated run of seconds, and inside the clients' retry budget (RPC
// timeouts x ClientConfig::mirror_failovers with maps refreshes).
// mirror = {} mirrors storage, not metadata.
inline constexpr bool k_lua_mirror_storage = true;
inline constexpr bool k_lua_mirror_metadata = false;
inline constexpr TimeNs k_lua_mirror_heartbeat_ns = 500 * k_ns_per_ms;
inline constexpr TimeNs k_lua_mirror_probably_offline_ns = 2 * k_ns_per_s;
inline constexpr TimeNs k_lua_mirror_offline_ns = 4 * k_ns_per_s;

// A choice's name in scripts and the value it stands for.
template <typename E>
struct NamedValue {
  std::string_view name;
  E value;
};
template <typename E>
using NamedValues = std::vector<NamedValue<E>>;

template <typename E>
std::vector<std::string> names_of(const NamedValues<E>& all) {
  std::vector<std::string> out;
  for (const NamedValue<E>& v : all) out.emplace_back(v.name);
  return out;
}

// The value of a name FieldReader has already checked against names_of(all).
template <typename E>
E value_named(const NamedValues<E>& all, const std::string& name) {
  for (const NamedValue<E>& v : all) {
    if (v.name == name) return v.value;
  }
  throw std::logic_error("internal error: no choice \"" + name + "\"");
}

// The name of a value; "" when it has none in scripts.
template <typename E>
std::string name_of(const NamedValues<E>& all, E value) {
  for (const NamedValue<E>& v : all) {
    if (v.value == value) return std::string(v.name);
  }
  return "";
}

const NamedValues<proto::ChooserKind>& chooser_names();  // randomized, roundrobin, ..., default
const NamedValues<MemKind>& mem_kind_names();            // host, pinned, gpu
const NamedValues<MetaPolicy>& meta_policy_names();      // dir_owner, striped_dir, path_hash
const NamedValues<DirHashKind>& dir_hash_names();        // fnv_1a_64, crush, rendezvous
const NamedValues<MkdirShardRule>& mkdir_rule_names();   // with_entry, random, random_near_root
const NamedValues<SplitShardRule>& split_rule_names();   // round_robin, random
const NamedValues<GdsMode>& gds_names();                 // on, off, auto
const NamedValues<SimMode>& sim_mode_names();            // chunk, fluid, auto
const NamedValues<StripeFlavor>& stripe_flavor_names();  // beegfs, lustre
const NamedValues<StreamDirection>& stream_direction_names();
const NamedValues<SweepPhase>& sweep_phase_names();        // mkdir, write, read, stat, delete, rmdir
const NamedValues<MdPhase>& md_phase_names();              // create, stat, readdir, ls_storm, remove, link, rename
const NamedValues<BetweenPhases>& between_phases_names();  // nothing, sync_dropcache
const NamedValues<Backend>& backend_names();               // sim, hw, emulate

// What a file-system preset sets before its fields are read.
struct FsPreset {
  std::uint64_t chunk_bytes = 0;
  std::uint32_t stripe_count = 0;
  proto::ChooserKind chooser = proto::ChooserKind::randomized;
  MetaPolicy policy = MetaPolicy::dir_owner;
  StripeFlavor flavor = StripeFlavor::beegfs;
  // Every node serves (storage on each node's drives, metadata spread over all
  // nodes, every node a client): beeond and gekkofs_like.
  bool every_node = false;
  // Storage servers read through the page cache (StorageServiceConfig::buffered_reads).
  bool buffered_reads = false;
};
// type: one of fs_types() (spec_builders.hpp); std::logic_error otherwise.
FsPreset fs_preset(const std::string& type);

// A fabric's link latency when latency is not given (fabric_types()).
TimeNs fabric_default_latency_ns(const std::string& type);

// The tables; a type that does not exist is std::logic_error (callers check
// the type against machine_types() and the others first).
const FieldTable& machine_fields(const std::string& type);  // incl. import_nvidia_smi's options
const FieldTable& fabric_fields(const std::string& type);
const FieldTable& cluster_fields();
const FieldTable& fs_fields(const std::string& type);
const FieldTable& fs_stripe_fields(const std::string& type);
const FieldTable& fs_mirror_fields();
const FieldTable& workload_fields(const std::string& type);
const FieldTable& workload_stripe_fields();
const FieldTable& run_fields();
const FieldTable& peak_fields();
const FieldTable& fault_fields(const std::string& kind);  // kill, slow_disk, partition, message_loss
const std::vector<std::string>& fault_kinds();
const FieldTable& claim_fields();
const FieldTable& compare_fields();
const FieldTable& plot_fields();        // sl._draw_plot, what report:plot passes
const FieldTable& plot_curve_fields();  // one of its series

}  // namespace sluice::scenario
