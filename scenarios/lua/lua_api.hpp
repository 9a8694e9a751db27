// The reference of the `sluice` Lua module, docs/lua-api.md, as text
// (`sluice describe --api` prints it).
//
// The fields come from the tables FieldReader validates with
// (field_tables.hpp): name, kind, unit, range, default and description, so
// the reference cannot drift from the checks. The functions and the seed
// studies are lists here, and tests/scenarios/lua/lua_api_test.cpp checks
// them against the module (every name the module exports is listed) and
// against lua_scripts/ (every study is listed), and the committed
// docs/lua-api.md against lua_api_markdown().
#pragma once

#include <string>
#include <vector>

#include "scenarios/lua/field_reader.hpp"

namespace sluice::scenario {

// One function (or method, or object field) of the module.
struct LuaFunctionDoc {
  std::string signature;  // "sl.size(text)"
  std::string returns;    // "bytes (integer)"
  std::string description;
};

// A script of lua_scripts/ and what it reproduces.
struct SeedStudyDoc {
  std::string script;  // "beeond_azure_sweep.lua"
  std::string study;   // "Study 2"
  std::string seed;    // docs/seeds.md anchor, "" when none
  std::string reproduces;
};

const std::vector<LuaFunctionDoc>& lua_api_functions();
const std::vector<SeedStudyDoc>& seed_studies();
// Every field table the module reads with, each type's own (before the
// reference merges the presets of sl.fs.* into one table).
std::vector<const FieldTable*> lua_api_field_tables();

// The range column of a field's row: "1 .. 4096", "64KiB .. 4194240KiB", ">= 0".
std::string field_range_text(const FieldDoc& field);

// The whole of docs/lua-api.md; deterministic (no time, no paths).
std::string lua_api_markdown();

}  // namespace sluice::scenario
