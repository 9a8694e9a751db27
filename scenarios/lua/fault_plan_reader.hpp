// Reads a scenario's fault plan (issue 9) from sl.run's `faults` field:
//
//   faults = {
//     { at = "2s", kill = "storage:3", revive_after = "4s" },   -- revive_after: optional (never)
//     { at = "5s", slow_disk = "storage:1", factor = 10, for_ = "2s" },
//     { partition = {"node1", "node2"}, for_ = "3s" },          -- at defaults to 0
//     { at = "1s", message_loss = 0.05, delay = "2ms", for_ = "1s" },
//   }
//
// Each entry names exactly one of kill, slow_disk, partition, message_loss;
// `for_` (Lua reserves `for`) is how long it lasts, until the end when
// absent. Subjects are service names ("storage:3", "meta:0", "mgmt",
// "client:1"), nodes ("node2") or targets ("target:5"), as
// core/faults/fault_plan.hpp parses them. Errors are ScriptError sentences
// naming the entry and the field: "sl.run: faults[2] (slow_disk): factor:
// 0.5 is out of range (1 .. 1000)".
#pragma once

#include <string>

#include "core/faults/fault_plan.hpp"
#include "scenarios/lua/script_value.hpp"

namespace sluice::scenario {

// At most this many entries in one script's plan (the plan's own limit).
inline constexpr std::size_t k_max_script_faults = faults::k_max_faults_per_plan;

// Throws ScriptError; `context` names the field ("sl.run: faults").
faults::FaultPlan read_fault_plan(const ScriptValue& value, const std::string& context);

}  // namespace sluice::scenario
