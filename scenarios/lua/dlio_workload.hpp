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
#pragma once

#include <string>
#include <string_view>

#include "scenarios/lua/dlio_config.hpp"
#include "scenarios/lua/field_reader.hpp"
#include "scenarios/lua/script_value.hpp"

namespace sluice::scenario {

struct DlioBuild {
  ScriptTable train_args;  // sl.workload.train_epoch's arguments
  ScriptTable report;      // what workload.dlio reads back
};

// args: sl.workload.dlio's table; config_name: the config as the script
// names it (for messages); text: the file's contents. Throws ScriptError.
DlioBuild build_dlio(const ScriptTable& args, const std::string& config_name, std::string_view text);

// The fields of sl.workload.dlio (config, overrides, and train_epoch's that
// the config does not set), for FieldReader's checks and docs/lua-api.md.
const FieldTable& dlio_fields();

}  // namespace sluice::scenario
