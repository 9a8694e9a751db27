// The `sluice` Lua module (`local sl = require "sluice"`): the functions a
// scenario script calls, bound with the Lua 5.4 C API.
//
//   sl.params{ name = {"description", default}, ... } -> values after --set
//   sl.machines.dgx_a100() / azure_nd40rs_v2() / critical_io_gpu_host() /
//     dgx2_like() / critical_io_recorder{nvme = 4} / generic{...} /
//     import_nvidia_smi(path, {options})
//   sl.fabric.infiniband{gbps =, latency =} / ethernet{gbps =, latency =}
//   sl.cluster{nodes =, node = | machines = {...}, fabric =, topology = "star"|"fat_tree", ...}
//   sl.fs.beeond / beegfs / lustre_like / gekkofs_like {...}     (spec_builders.hpp)
//   sl.workload.file_sweep / md_bench / train_epoch / checkpoint_burst /
//     stage_in / gpu_stream {...}
//   sl.workload.dlio{config = "x.yaml", overrides = {...}, ...} -> a train_epoch
//     workload from a DLIO workload file (dlio_workload.hpp)
//   sl.run{cluster =, fs =, workload = | workloads = {...}, backend = | backends =,
//          seed =, sweep = {field = {values}}, sim_profile =, sim_coalesce =, max_events =}
//     -> list of point results {index, params, ok, error, backend, seed, simulated_s,
//        wall_s, phases = {{workload, phase, ranks, bytes, ops, ..., extra}},
//        counters, paths_taken, log_tail, cluster}
//   sl.report{results..., title =, phases = {...}} prints a table -> report object
//   sl.headline(text, measured, seed_figure) prints and records a headline
//   sl.claim{"text", measured =, seed_value = | at_least =, at_most =, seed =} checks, prints
//     and records a shape claim -> holds (results.json "claims"; `sluice run
//     --check-claims` fails when one does not hold)
//   sl.compare{results..., measured = "fio.json" | {...}, match = {...},
//     metrics = {...}, title =} prints the script's runs next to measured
//     ones (ScriptOptions::compare) -> {rows, median_rel_err, p90_rel_err, unmatched}
//   sl.phase(point, phase [, workload]) -> the phase row or nil
//   sl.size(text), sl.rate(text), sl.format_size(bytes), sl.format_rate(bytes_per_s)
// Objects (machines, fabrics, clusters, file systems, workloads) are userdata;
// obj.field reads back an argument, obj.type / obj.kind say what it is.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/common/status.hpp"
#include "scenarios/lua/lua_script.hpp"

struct lua_State;

namespace sluice::scenario {

// What the module knows of the script it serves and what it collects.
struct ScriptContext {
  const ScriptOptions* options = nullptr;
  std::string path;       // as given
  std::string dir;        // the script's directory
  std::string scenario;   // file name without .lua
  bool describe = false;  // stop at the first sl.run
  std::ostream* out = nullptr;
  std::vector<ParamDecl> params;
  std::map<std::string, std::string> param_values;
  std::string params_where;  // "file:line" of the last sl.params
  std::vector<RunResult> results;
  std::vector<ScriptMachine> machines;  // every machine built, in order
  std::vector<std::string> headlines;
  std::vector<Claim> claims;
  std::vector<MlperfRow> mlperf;      // sl.mlperf's answers, in order
  std::optional<Status> run_failure;  // the runner failed (not the script)
  bool stopped = false;               // describe mode reached sl.run
};

// Registers package.preload["sluice"]; ctx must outlive the state.
void open_sluice_module(lua_State* L, ScriptContext* ctx);

// "" if every --set names a declared parameter, else the sentence.
std::string check_sets(const ScriptContext& ctx);

}  // namespace sluice::scenario
