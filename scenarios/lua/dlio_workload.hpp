// sl.workload.dlio{config = "unet3d_h100.yaml", overrides = {...}, <fields>}:
// a DLIO workload file (dlio_config.hpp) as sl.workload.train_epoch's
// arguments, so the workload runs wherever train_epoch runs.
//
// The object sl.workload.dlio returns is a train_epoch workload (type
// "train_epoch"), labelled with the config's model.name unless label is
// given, with setup_dataset true unless given (sluice's file system starts
// empty). Every sl.workload.train_epoch field the config does not set may
// be given beside config (client_nodes, ranks_per_node, stripe, ...); one it
// sets is refused, naming the DLIO key to override instead. workload.dlio
// reads back {config, model, au, notes, approximated}: the AU threshold
// (metric.au), and each recorded key as "value (where): effect".
//
// A checkpoint-only config (workflow.train false, workflow.checkpoint true:
// MLPerf Storage's llama3_*.yaml) builds a checkpoint_burst workload instead
// (type "checkpoint_burst"): shard_bytes (DLIO's bytes per rank, their mean
// where ranks differ), checkpoints, sync, read_back, read_checkpoints and dir
// come from the config; sl.workload.checkpoint_burst's other fields may be
// given beside it. The object also reads back ranks (tensor x pipeline x
// data: the ranks to place, client_nodes x ranks_per_node), model,
// checkpoint_bytes (one checkpoint, all ranks), writes and reads. In the
// simulator no client caches file data, so the read phase is the read after
// a cache drop that MLPerf Storage asks for; on hardware sluice's client
// keeps no file data either (every read is served by the storage service).
#pragma once

#include <string>
#include <string_view>

#include "scenarios/lua/dlio_config.hpp"
#include "scenarios/lua/field_reader.hpp"
#include "scenarios/lua/script_value.hpp"

namespace sluice::scenario {

struct DlioBuild {
  std::string type = "train_epoch";  // the workload built: train_epoch or checkpoint_burst
  ScriptTable workload_args;         // sl.workload.<type>'s arguments
  ScriptTable report;                // what workload.dlio reads back
  ScriptTable exposed;               // what the object reads back beside its arguments (ranks, model, ...)
};

// args: sl.workload.dlio's table; config_name: the config as the script
// names it (for messages); text: the file's contents. Throws ScriptError.
DlioBuild build_dlio(const ScriptTable& args, const std::string& config_name, std::string_view text);

// The fields of sl.workload.dlio for docs/lua-api.md: config, overrides, and
// those of train_epoch (a training config) and of checkpoint_burst (a
// checkpoint-only config) that the configs do not set.
const FieldTable& dlio_fields();

}  // namespace sluice::scenario
