#include "scenarios/lua/lua_api.hpp"

#include <limits>
#include <sstream>
#include <stdexcept>

#include "core/common/byte_size.hpp"
#include "scenarios/lua/dlio_workload.hpp"
#include "scenarios/lua/mlperf_search.hpp"
#include "scenarios/lua/field_tables.hpp"
#include "scenarios/lua/spec_builders.hpp"

namespace sluice::scenario {
namespace {

constexpr const char* k_not_given = "-";

// A cell of a Markdown table: '|' would end it.
std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out.empty() ? k_not_given : out;
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

std::string kind_text(const FieldDoc& f) {
  if (f.kind == FieldKind::object) return "object (" + to_string(f.object_kind) + ")";
  return to_string(f.kind);
}

std::string number_text(double d) {
  if (d == std::numeric_limits<double>::max()) return "any";
  if (d == -std::numeric_limits<double>::max()) return "any";
  return ScriptValue{d}.text();
}

// The default of a field over several presets: one text when they agree,
// else "beeond, beegfs: 512KiB; lustre_like: 1MiB".
std::string merged_default(const std::vector<std::string>& types, const std::vector<const FieldTable*>& tables,
                           std::size_t field) {
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;  // default, its types
  for (std::size_t t = 0; t < tables.size(); ++t) {
    const std::string& d = tables[t]->fields[field].default_text;
    auto it = groups.begin();
    while (it != groups.end() && it->first != d) ++it;
    if (it == groups.end()) {
      groups.push_back({d, {types[t]}});
    } else {
      it->second.push_back(types[t]);
    }
  }
  if (groups.size() == 1) return groups.front().first;
  std::vector<std::string> parts;
  for (const auto& [d, of] : groups) parts.push_back(join(of, ", ") + ": " + (d.empty() ? k_not_given : d));
  return join(parts, "; ");
}

// One table for the presets of sl.fs.* (the same fields, defaults per preset).
FieldTable merged(const std::string& name, const std::string& summary, const std::vector<std::string>& types,
                  const std::vector<const FieldTable*>& tables) {
  FieldTable out{name, summary, tables.front()->fields};
  for (const FieldTable* t : tables) {
    if (t->fields.size() != out.fields.size()) throw std::logic_error("internal error: " + t->name + " differs");
    for (std::size_t i = 0; i < out.fields.size(); ++i) {
      if (t->fields[i].name != out.fields[i].name) throw std::logic_error("internal error: " + t->name + " differs");
    }
  }
  for (std::size_t i = 0; i < out.fields.size(); ++i) out.fields[i].default_text = merged_default(types, tables, i);
  return out;
}

void write_table(std::ostringstream& md, const FieldTable& t) {
  std::string summary = t.summary;
  if (!summary.empty() && summary[0] >= 'a' && summary[0] <= 'z')
    summary[0] = static_cast<char>(summary[0] - 'a' + 'A');
  md << "### `" << t.name << "`\n\n" << summary << ".\n\n";
  if (t.fields.empty()) {
    md << "No fields.\n\n";
    return;
  }
  md << "| field | kind | unit | range | default | what |\n|---|---|---|---|---|---|\n";
  for (const FieldDoc& f : t.fields) {
    md << "| `" << f.name << "` | " << kind_text(f) << " | " << cell(f.unit) << " | " << cell(field_range_text(f))
       << " | " << cell(f.default_text) << " | " << cell(f.description) << " |\n";
  }
  md << "\n";
}

void write_intro(std::ostringstream& md) {
  md << "# The `sluice` Lua API\n\n"
        "Generated from the field tables the module validates with (`scenarios/lua/field_tables.cpp`) by\n"
        "`lua_api_markdown()` (`scenarios/lua/lua_api.cpp`; `sluice describe --api` prints it). Do not edit it\n"
        "by hand: `tests/scenarios/lua/lua_api_test.cpp` fails when this file and the code disagree, and\n"
        "`SLUICE_UPDATE_LUA_API=1 build/tests/test_scenario_lua --gtest_filter='LuaApi.*'` rewrites it.\n\n"
        "A script starts with `local sl = require \"sluice\"`, declares its parameters (`sl.params`), builds\n"
        "machines, a cluster, a file system and workloads, and runs them (`sl.run`).\n\n"
        "## Values\n\n"
        "- **size**: `\"64KiB\"`, `\"1.5MiB\"`, `\"4GiB\"` (binary units, spelled exactly so) or a whole number "
        "of bytes; `\"64KB\"`, `\"64k\"` and `\"1M\"` are refused with the spelling to use.\n"
        "- **rate**: `\"100Gb/s\"` (decimal bits, as links are quoted), `\"12.5GB/s\"` or `\"750MB/s\"` "
        "(decimal bytes, as storage is quoted), `\"2GiB/s\"`, or a number of bytes per second.\n"
        "- **duration**: `\"10ms\"`, `\"5us\"`, `\"1.5s\"`, `\"200ns\"` or a whole number of nanoseconds.\n"
        "- **count**: a whole number (`1e6` is accepted when whole); **number**: any finite number.\n"
        "- **choice**: one of the names listed under range; a misspelt name is refused with the closest one.\n"
        "- **sweeps**: a scalar field of `sl.cluster`, `sl.fs.*` or `sl.workload.*` given a list "
        "(`threads = {1, 8, 32}`) is a sweep axis; `sl.run` runs the cartesian product of all axes, and "
        "`sl.run{sweep = {threads = {...}}}` sweeps a field of every object that has it. Lists by nature "
        "(kind `list of ...`) are never axes.\n"
        "- A field a table does not list is refused (`unknown field \"chunck\"; did you mean \"chunk\"?`); "
        "a default `-` means the field is absent unless given.\n\n";
}

void write_functions(std::ostringstream& md) {
  md << "## Functions\n\n| call | returns | what |\n|---|---|---|\n";
  for (const LuaFunctionDoc& f : lua_api_functions()) {
    md << "| `" << f.signature << "` | " << cell(f.returns) << " | " << cell(f.description) << " |\n";
  }
  md << "\n";
}

void write_fs_tables(std::ostringstream& md) {
  std::vector<const FieldTable*> fs;
  std::vector<const FieldTable*> stripes;
  for (const std::string& type : fs_types()) {
    fs.push_back(&fs_fields(type));
    stripes.push_back(&fs_stripe_fields(type));
  }
  md << "### File-system presets\n\n"
        "- `beeond`: BeeOND (`beeond start`): node 0 runs mgmt and the metadata server(s), every node's NVMe "
        "drives are storage targets and every node is a client.\n"
        "- `beegfs`: a BeeGFS building block: servers are the GPU-less nodes with NVMe (or storage_nodes), mgmt "
        "and metadata on the first server(s), clients the other nodes.\n"
        "- `lustre_like`: Lustre: servers as beegfs; striped directories (DNE), 1 MiB stripes over 1 OST, the "
        "lod_qos allocator, Lustre chunk rules.\n"
        "- `gekkofs_like`: GekkoFS: every node a daemon holding metadata (full-path hashing) and data; chunks "
        "spread over every target.\n\n";
  std::vector<std::string> names;
  for (const std::string& type : fs_types()) names.push_back("`sl.fs." + type + "`");
  write_table(md, merged("sl.fs.*",
                         "a file system deployed on the cluster's nodes: " + join(names, ", ") +
                             " (the defaults differ by preset)",
                         fs_types(), fs));
  write_table(md, merged("sl.fs.* stripe", stripes.front()->summary, fs_types(), stripes));
  write_table(md, fs_mirror_fields());
}

void write_tables(std::ostringstream& md) {
  md << "## Machines, fabrics, clusters\n\n";
  for (const std::string& type : machine_types()) write_table(md, machine_fields(type));
  for (const std::string& type : fabric_types()) write_table(md, fabric_fields(type));
  write_table(md, cluster_fields());
  md << "## File systems\n\n";
  write_fs_tables(md);
  md << "## Workloads\n\n";
  for (const std::string& type : workload_types()) write_table(md, workload_fields(type));
  write_table(md, dlio_fields());
  write_table(md, workload_stripe_fields());
  md << "## Running\n\n";
  write_table(md, run_fields());
  md << "`faults` is a list of entries, each naming exactly one of " << join(fault_kinds(), ", ")
     << "; subjects are services (`\"storage:3\"`, `\"meta:0\"`, `\"mgmt\"`, `\"client:1\"`), nodes "
        "(`\"node2\"`) or targets (`\"target:5\"`).\n\n";
  for (const std::string& kind : fault_kinds()) write_table(md, fault_fields(kind));
  write_table(md, peak_fields());
  write_table(md, mlperf_fields());
  md << "## Reporting\n\n";
  write_table(md, claim_fields());
  write_table(md, compare_fields());
  write_table(md, plot_fields());
  write_table(md, plot_curve_fields());
}

void write_studies(std::ostringstream& md) {
  md << "## Seed studies\n\nThe scripts in `lua_scripts/` (`docs/seeds.md` says what each seed system and "
        "figure is).\n\n| script | study | reproduces |\n|---|---|---|\n";
  for (const SeedStudyDoc& s : seed_studies()) {
    const std::string study = s.seed.empty() ? s.study : "[" + s.study + "](seeds.md#" + s.seed + ")";
    md << "| [`" << s.script << "`](../lua_scripts/" << s.script << ") | " << study << " | " << cell(s.reproduces)
       << " |\n";
  }
}

// sl.params .. sl.workload.*: declaring and building (lua_api_functions, first).
std::vector<LuaFunctionDoc> building_function_docs() {
  return {
      {"sl.params{name = {\"description\", default}, ...}", "table of values",
       "declares the script's parameters (`sluice describe SCRIPT` lists them); `--set name=value` overrides a "
       "default; a list default is a list of values to loop or sweep over"},
      {"sl.machines.<type>{fields}", "machine",
       "a machine: dgx_a100, azure_nd40rs_v2, critical_io_gpu_host, critical_io_recorder, dgx2_like, generic "
       "(fields: sl.machines.<type>)"},
      {"sl.machines.import_nvidia_smi(path, {options})", "machine",
       "a machine read from a file of `nvidia-smi topo -m` output (path relative to the script's folder)"},
      {"machine:describe([node])", "string",
       "the text `sluice topo show` prints for node (default 0) of a machine or cluster"},
      {"object.type, object.kind", "string", "what an object is: \"generic\" and \"machine\", \"beeond\" and \"fs\""},
      {"machine.gpus, .nics, .nvmes, .node_count", "integer", "device counts of node 0, and the nodes"},
      {"object.<field>", "value", "the arguments the object was made from (fs.gds, workload.threads)"},
      {"sl.fabric.<type>{fields}", "fabric", "a network: infiniband, ethernet (fields: sl.fabric.<type>)"},
      {"sl.cluster{fields}", "cluster", "machines joined by a fabric (fields: sl.cluster)"},
      {"sl.fs.<type>{fields}", "fs",
       "a file system: beeond, beegfs, lustre_like, gekkofs_like (fields: sl.fs.*); placed on the cluster at sl.run"},
      {"sl.workload.<type>{fields}", "workload",
       "a workload: file_sweep, md_bench, train_epoch, checkpoint_burst, stage_in, gpu_stream (fields: "
       "sl.workload.<type>)"},
      {"sl.workload.dlio{config =, overrides = {...}, fields}", "workload (train_epoch or checkpoint_burst)",
       "a DLIO or MLPerf Storage workload YAML: a training config as a train_epoch workload, a checkpoint-only "
       "config (workflow.checkpoint, MLPerf Storage v2.0's llama3) as a checkpoint_burst that writes with fsync "
       "and reads back (fields: sl.workload.dlio; MLPerf Storage's configs: lua_scripts/mlperf/); a key it cannot "
       "model is refused with file:line: key; workload.dlio reads back {config, model, au (metric.au), notes, "
       "approximated}, a checkpoint config also {ranks, shard_bytes, checkpoint_bytes, writes, reads}"},
  };
}

// sl.run .. sl._draw_plot: running, reporting and helpers (lua_api_functions, after the builders).
std::vector<LuaFunctionDoc> running_function_docs() {
  return {
      {"sl.run{fields}", "list of points",
       "runs every sweep point (fields: sl.run); each point is {index, params, ok, error, backend, seed, cluster, "
       "simulated_s, wall_s, phases, counters, paths_taken, log_tail}, each phase {workload, phase, ranks, bytes, "
       "ops, first_done_s, last_done_s, first_bytes_per_s, last_bytes_per_s, first_ops_per_s, last_ops_per_s, "
       "latency_us_p50, latency_us_p99, bound_bytes_per_s, binding_resource, placed_bound_bytes_per_s, "
       "placed_binding_resource, extra}; bound_bytes_per_s is the hardware's ceiling of the phase (NaN: none; "
       "binding_resource says what binds, or why there is none), placed_bound_bytes_per_s the same with this run's "
       "placement of bytes over targets, server NICs and client NICs; index numbers the script's runs 1, 2, ... in the "
       "order "
       "made"},
      {"sl.peak{run = {fields}, axis =, phase =, max_steps =}", "table",
       "the peak of one point (fields: sl.peak): its concurrency axis doubled per step from the workload's value "
       "until the phase's aggregate rate grows by less than 2%; prints a line per step and \"peak: threads=64 read "
       "95.1 GB/s = 0.95 of bound 100 GB/s (nic port: ...)\"; returns {knee, axis, value, workload, phase, rate, "
       "bound_bytes_per_s, binding_resource, of_bound, steps, stopped, points}: knee false when no step flattened "
       "(value is then the last run), stopped says why the search ended (a step whose point fails ends it at the step "
       "before); every step is a point of results.json "
       "with the axis (and files_per_rank) in its params"},
      {"sl.mlperf{clients =, max_accelerators =, au =, datasize =, sl.run fields}", "table",
       "MLPerf Storage's training answer (fields: sl.mlperf): for each client node count, the most accelerators "
       "(ranks_per_node x clients) of the one train_epoch workload that keep AU >= the threshold (the DLIO config's "
       "metric.au unless au is given), one run per probe (doubling from 1 per client, then bisection); prints a line "
       "per probe and the answers as a table; returns {workload, au_threshold, rows = {{clients, accelerators, "
       "accelerators_per_client, au, throughput_mib_per_s, samples_per_s, binding_resource, probes, stopped, "
       "dataset_files, datasize_min_files, client_memory_bytes, meets_datasize}}, "
       "probes = {{clients, accelerators, au, throughput_mib_per_s, samples_per_s, passed}}, points}; the rows go to "
       "results.json's mlperf and mlperf.csv, every probe is a point of results.json with clients and accelerators in "
       "its params"},
      {"search:plot(file [, {title =}])", "the search",
       "sl.mlperf's AU (%) of every probe against the accelerators, one curve per client count, with the threshold; "
       "SVG and PNG in --out"},
      {"sl.run_all{ {fields}, {fields}, ... }", "list of lists of points",
       "the runs of a loop at once: each entry is a table of sl.run fields; their points run together (--jobs, "
       "and the ranks of `mpirun ... sluice run`) and the result is one list per entry, as sl.run gives; every "
       "entry runs on the same backends"},
      {"sl.phase(point, phase [, workload])", "phase or nil", "the first phase row of a point with that name"},
      {"sl.report{results, ..., title =, phases = {...}, columns = {...}}", "report",
       "prints the points as a table, one row per phase, the parameters that differ as columns"},
      {"report:plot(file [, {x =, y = \"GB/s\" or \"kops/s\", title =}])", "report",
       "one curve per workload/phase of its rate against a numeric parameter; SVG and PNG in --out"},
      {"report:table()", "report", "the report itself (rows, header, points, keys)"},
      {"sl.compare{results, ..., measured =, match = {...}, metrics = {...}, title =}", "comparison",
       "the points of sl.run or sl.run_all (predictions) next to runs measured elsewhere (fields: sl.compare); "
       "prints the table and returns {rows = {{point, workload, phase, metric, predicted_backend, "
       "measured_backend, predicted, measured, rel_err}, ...}, median_rel_err, p90_rel_err, unmatched}; rel_err is "
       "abs(predicted - measured) / measured"},
      {"sl.headlines([note])", "nothing",
       "prints the heading \"Headlines (backends, note):\", the backends being those the script's runs so far "
       "came from (\"simulated\" for sim; \"hw\", \"emulate\", \"cluster\")"},
      {"sl.headline(text, measured [, seed_figure [, row]])", "nothing",
       "prints \"text: measured (seed: seed_figure)\" and records it as a headline figure; row, the phase row "
       "the figure comes from, adds its aggregate rate as a fraction of its bound (\"(0.95 of bound 100 GB/s, "
       "drive read)\") where the phase has a bound, nothing where it has none"},
      {"sl.claim{\"text\", measured =, seed_value = [, tolerance =, tolerance_why =] | at_least =, at_most =, seed =}",
       "boolean",
       "checks and records a seed-figure or shape claim (fields: sl.claim); `--check-claims` fails the run if one does "
       "not "
       "hold"},
      {"sl.size(size)", "integer", "bytes of a size (\"1MiB\" -> 1048576); a number is returned as it is"},
      {"sl.rate(rate)", "number", "bytes per second of a rate (\"100Gb/s\" -> 1.25e10)"},
      {"sl.format_size(bytes)", "string", "\"64KiB\", \"1.5MiB\""},
      {"sl.format_rate(bytes_per_s)", "string", "\"12.5 GB/s\" (decimal)"},
      {"sl._draw_plot{fields}", "nothing",
       "the C side of report:plot (fields: sl._draw_plot); scripts call report:plot"},
  };
}

}  // namespace

const std::vector<LuaFunctionDoc>& lua_api_functions() {
  static const std::vector<LuaFunctionDoc> k = [] {
    std::vector<LuaFunctionDoc> all = building_function_docs();
    for (LuaFunctionDoc& f : running_function_docs()) all.push_back(std::move(f));
    return all;
  }();
  return k;
}

const std::vector<SeedStudyDoc>& seed_studies() {
  static const std::vector<SeedStudyDoc> k{
      {"beegfs_gds_vs_bounce.lua", "Study 1", "beegfs-and-gpudirect-storage",
       "BeeGFS + GPUDirect Storage on 2 DGX A100 and a BeeGFS building block over 200 Gb/s InfiniBand: reads "
       "into GPU memory with GDS vs through a pinned bounce buffer, by GPU count and I/O size (seed: GDS ~2x)"},
      {"beeond_azure_sweep.lua", "Study 2", "beeond-for-cosmoflow-on-azure",
       "BeeOND on 4 Azure ND40rs_v2 nodes, an elbencho sweep of file sizes and threads: small files stall at "
       "~8 threads on one metadata server and more metadata servers help; large files reach > 10 GB/s"},
      {"dne_metadata_sharding.lua", "Study 3", "sharded-metadata",
       "Lustre DNE: one directory striped over 1, 4 or 16 MDTs, mdtest create and stat, then an `ls -l` storm "
       "(seed: one MDT ~200,000 ops/s, 16 MDTs ~3.2 M ops/s)"},
      {"gpu_rdma_recorder.lua", "Study 4", "gpu-rdma-recording-over-roce",
       "GPU RDMA recording over 25 GbE RoCE (Critical I/O): record and playback of 1 MiB GPU buffers, one port "
       "vs two (seed: ~3 GB/s per port, ~6 GB/s both)"},
      {"nvmesh_bandwidth_sharing.lua", "Study 5", "nvmesh-remote-nvme",
       "16 GPUs of a DGX-2-like box with 8 x 100 Gb NICs reading remote NVMe: pinned vs dynamic rail sharing, "
       "bursting, and egress congestion with and without the storage servers' rate limiter"},
      {"beeond_stage_in.lua", "Study 6", "beeond-staging",
       "BeeOND staging from an object store at 4 .. 100 nodes (weak scaling): ingress scales linearly, "
       "500 GB/s at 100 nodes"},
      {"cosmoflow_epoch.lua", "Study 7", "beeond-for-cosmoflow-on-azure",
       "a CosmoFlow training epoch on 512 V100s reading from BeeOND vs a shared file system: accelerator "
       "utilisation (seed: 300 MB/s per GPU; shared storage starves the GPUs)"},
      {"checkpoint_burst.lua", "Study 8", "checkpoints",
       "periodic checkpoints over 128 targets with 64 MiB stripes: round-robin vs Lustre's QoS allocator vs "
       "randomized, imbalance per target and burst time (seed: round-robin still 10-15% off uniform)"},
      {"storage_failover.lua", "Study 9", "",
       "a storage (and metadata) server failure with and without BeeGFS buddy mirroring: outage, switchover, "
       "every byte read back (issue 9)"},
      {"mlperf_published.lua", "Study 10", "mlperf-storage-v10-published-results",
       "three MLPerf Storage v1.0 closed unet3d (H100) results: one local Micron 9550 Gen5 drive, one 9400 Gen4 "
       "drive, an HPE Cray C500 Lustre appliance with one client; sl.mlperf at the published client count against "
       "the published accelerators and MiB/s (issue 52)"},
      {"calibrate_links.lua", "Calibration", "",
       "`sluice calibrate` on shaped links: fit the sim profile on some link rates, stripe counts and file "
       "sizes, predict held-out ones (issue 8, F1)"},
      {"calibrate_disk.lua", "Calibration", "",
       "`sluice calibrate --backend fio`: fit the drive model to fio on this machine's drive (block sizes, "
       "queue depths, sequential and random, read and write), predict held-out sizes and depths (issue 22, F4)"},
      {"file_sweep.lua", "Tool", "",
       "a plain file sweep on N nodes (node 0: mgmt, metadata, the client; the rest storage), every byte read "
       "back checked: the multi-process path's smoke run, on netns hosts (`--backend emulate`, the links at "
       "`link_gbps`) or one rank a node under mpirun (`--backend cluster`) (issue 49)"},
      {"mlperf_unet3d.lua", "Tool", "",
       "MLPerf Storage's training question for unet3d (H100): sl.mlperf finds, per client node count, the most "
       "accelerators one BeeGFS server keeps at AU >= 0.90, reported as MLPerf does (accelerators, MiB/s, AU, "
       "clients; results.json's mlperf, mlperf.csv) with AU against accelerators plotted (issue 52)"},
  };
  return k;
}

std::string field_range_text(const FieldDoc& f) {
  const bool bounded = f.hi != k_field_no_limit;
  switch (f.kind) {
    case FieldKind::size: return bounded ? format_size(f.lo) + " .. " + format_size(f.hi) : ">= " + format_size(f.lo);
    case FieldKind::count:
    case FieldKind::count_list:
      return bounded ? std::to_string(f.lo) + " .. " + std::to_string(f.hi) : ">= " + std::to_string(f.lo);
    case FieldKind::number:
      if (number_text(f.number_lo) == "any" && number_text(f.number_hi) == "any") return "any";
      return number_text(f.number_lo) + " .. " + number_text(f.number_hi);
    case FieldKind::rate:
    case FieldKind::duration: return ">= 0";
    case FieldKind::text: return bounded ? "at most " + std::to_string(f.hi) + " characters" : "";
    case FieldKind::choice:
    case FieldKind::choice_list: return join(f.choices, ", ");
    case FieldKind::boolean:
    case FieldKind::table:
    case FieldKind::object:
    case FieldKind::value: return "";
  }
  return "";
}

std::vector<const FieldTable*> lua_api_field_tables() {
  std::vector<const FieldTable*> out;
  for (const std::string& type : machine_types()) out.push_back(&machine_fields(type));
  for (const std::string& type : fabric_types()) out.push_back(&fabric_fields(type));
  out.push_back(&cluster_fields());
  for (const std::string& type : fs_types()) {
    out.push_back(&fs_fields(type));
    out.push_back(&fs_stripe_fields(type));
  }
  out.push_back(&fs_mirror_fields());
  for (const std::string& type : workload_types()) out.push_back(&workload_fields(type));
  out.push_back(&dlio_fields());
  out.push_back(&workload_stripe_fields());
  out.push_back(&run_fields());
  out.push_back(&peak_fields());
  out.push_back(&mlperf_fields());
  for (const std::string& kind : fault_kinds()) out.push_back(&fault_fields(kind));
  out.push_back(&claim_fields());
  out.push_back(&compare_fields());
  out.push_back(&plot_fields());
  out.push_back(&plot_curve_fields());
  return out;
}

std::string lua_api_markdown() {
  std::ostringstream md;
  write_intro(md);
  write_functions(md);
  write_tables(md);
  write_studies(md);
  return md.str();
}

}  // namespace sluice::scenario
