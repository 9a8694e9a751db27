// Script values as plain C++ data: what a Lua table passed to a sluice
// function holds, copied out of the Lua state before anything is built.
//
// Why a copy: the builders (spec_builders.hpp) then run as ordinary C++ with
// exceptions and destructors, never between Lua API calls that may longjmp,
// and a sweep can rebuild an object from its arguments with one field
// replaced. ScriptObject is what sl.machines.*, sl.cluster, sl.fabric.*,
// sl.fs.* and sl.workload.* return: its kind, its type ("beeond"), where the
// script made it and the arguments it was made from.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "core/topology/topology.hpp"

namespace sluice::scenario {

// A mistake in a script, as a sentence without the "file:line: " prefix
// (the Lua binding adds the place it knows best).
// `where` ("script.lua:12"), when set, is the place to blame instead of the
// line that is running (e.g. the sl.fs.beeond{} call a sweep point rebuilds).
struct ScriptError : std::runtime_error {
  explicit ScriptError(const std::string& message, std::string where_made = "")
      : std::runtime_error(message), where(std::move(where_made)) {}
  std::string where;
};

struct ScriptTable;
struct ScriptObject;

enum class ObjectKind : std::uint8_t { machine, fabric, cluster, fs, workload };
std::string to_string(ObjectKind kind);

struct ScriptValue {
  std::variant<std::monostate, bool, std::int64_t, double, std::string, std::shared_ptr<const ScriptTable>,
               std::shared_ptr<const ScriptObject>>
      value;

  bool is_nil() const { return value.index() == 0; }
  bool is_number() const { return value.index() == 2 || value.index() == 3; }
  const std::string* string() const { return std::get_if<std::string>(&value); }
  const ScriptTable* table() const;
  const ScriptObject* object() const;
  // "nil", "boolean", "number", "string", "table", or the object's description ("a cluster").
  std::string type_name() const;
  // As a user would type it: 4, 2.5, true, 1MiB, {1, 8}; objects by type.
  std::string text() const;
};

// A Lua table: its sequence part (1..n, as `list`) and its string keys.
struct ScriptTable {
  std::vector<ScriptValue> list;
  std::map<std::string, ScriptValue> fields;

  bool is_list() const { return !list.empty() && fields.empty(); }
};

struct ScriptObject {
  ObjectKind kind = ObjectKind::machine;
  std::string type;   // "dgx_a100", "beeond", "file_sweep", "infiniband", "cluster"
  std::string where;  // "script.lua:12" where the script made it
  ScriptTable args;   // the arguments it was made from
  // Machines: the built machine. Clusters: the cluster built from `args` as
  // given (lists taken at their first value), reused when no sweep changes it.
  std::shared_ptr<const topo::Topology> topology;
  std::string description;  // clusters: "4 x azure_nd40rs_v2, star 100 Gb/s"
  // Read-only values the object reports beside its arguments (obj.<name>):
  // sl.workload.dlio's `dlio` (scenarios/lua/dlio_workload.hpp).
  ScriptTable reported;
};

// Limits on what a script may pass in one call.
inline constexpr int k_max_table_depth = 32;
inline constexpr std::size_t k_max_table_entries = 1'000'000;

}  // namespace sluice::scenario
