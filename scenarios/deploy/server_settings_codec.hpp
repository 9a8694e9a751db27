// The servers' part of a point's file-system settings (NodeRunOptions::
// FsSettings: mgmt, meta and storage service configs) as JSON, so that a
// node process its rank starts (node_process.hpp: `sluice node
// --fs-settings F`) runs the study's settings, not the core's defaults: the
// namespace policy and shard count of a metadata server, a storage server's
// queue depths and mirroring, mgmt's timeouts.
//
// The document: {"mgmt": {...}, "meta": {...}, "storage": {...}}, each the
// config's fields by their C++ names, nested structs as objects (rpc,
// mirror, ns, pools, op_units: null when unset), durations in ns, enums by
// their to_string names, buddy_groups as [{"group", "primary", "secondary"}].
// Not carried: what run_node sets for the node itself (meta: shard, mgmt,
// open_store; storage: mgmt, targets), the storage targets' places
// (target_places: the modelled machine's NUMA nodes and NICs, applied in
// simulation only; a node process serves from its own machine's) and the
// clients' settings (a node process hosts no client).
//
// Reading: every key may be left out (the core's default); an unknown key, a
// value of the wrong type or out of its type's range, a negative duration or
// rate, or an unknown enum name is refused naming its path
// ("meta.ns.policy: ..."), and the namespace config and capacity pools must
// pass their own validation (validate_config, validate).
#pragma once

#include <nlohmann/json.hpp>

#include "core/common/status.hpp"
#include "scenarios/deploy/node_runner.hpp"

namespace sluice::emulate {

nlohmann::json server_settings_to_json(const NodeRunOptions::FsSettings& fs);

// `fs.client` of the result is empty.
Result<NodeRunOptions::FsSettings> server_settings_from_json(const nlohmann::json& document);

}  // namespace sluice::emulate
