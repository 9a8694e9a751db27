// LuaSandbox: one lua_State for one script, with limits and only safe libraries.
//
// - Memory: a custom allocator counts every byte the state holds; past
//   memory_limit_bytes an allocation fails, Lua collects garbage and, if
//   still short, the script stops with "memory limit of N bytes reached".
// - Time: a count hook every k_hook_instructions VM instructions; past
//   instruction_limit the script stops with "instruction limit of N reached"
//   at the line that was running.
// - Libraries: base (without dofile, loadfile, load), table, string (without
//   dump), math (seeded with 1, so math.random is reproducible), utf8,
//   coroutine and package. No io, os or debug, no C modules: `print` writes
//   to the given stream and `require` finds only package.preload (the sluice
//   module) and text files <dir>/<name>.lua in module_search_dirs.
// - Errors: every error message starts with "<file>:<line>: " (a message
//   handler adds the place for errors raised without one).
//
// Lua is C: its errors longjmp. Callers must not leave C++ objects with
// destructors on the stack across Lua API calls that may raise (see
// sluice_module.cpp for how the bindings keep to that).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "core/common/status.hpp"

struct lua_State;

namespace sluice::scenario {

// VM instructions between two checks of the instruction limit.
inline constexpr int k_hook_instructions = 1000;
// Colon-separated directories `require` also searches (module_search_dirs).
inline constexpr const char* k_lua_path_variable = "SLUICE_LUA_PATH";
// Largest script or library file read.
inline constexpr std::uint64_t k_max_script_bytes = 16ULL << 20;

// Where `require "name"` looks, in order: the script's lib/ and its
// directory, each directory of $SLUICE_LUA_PATH, lua_scripts/lib next to the
// binary's directory (a build inside the repository, or a copy of both), and
// the source tree's lua_scripts/lib (so `require "study"` works from any script).
std::vector<std::string> module_search_dirs(const std::string& script_dir);

class LuaSandbox {
 public:
  LuaSandbox(std::uint64_t memory_limit_bytes, std::uint64_t instruction_limit, std::ostream& out,
             std::string script_dir);
  ~LuaSandbox();
  LuaSandbox(const LuaSandbox&) = delete;
  LuaSandbox& operator=(const LuaSandbox&) = delete;

  // Null when the state could not be made within the memory limit.
  lua_State* state() { return state_; }

  // Compiles `text` (as file `chunk_name`, text only) and runs it.
  // invalid_argument "<file>:<line>: ..." for any error.
  Status run(const std::string& chunk_name, const std::string& text);

  std::uint64_t memory_used_bytes() const;
  std::uint64_t instructions() const;

  struct Limits;  // allocator and hook state (lua_sandbox.cpp)

 private:
  Limits* limits_;
  lua_State* state_ = nullptr;
};

// Reads a file of at most k_max_script_bytes; invalid_argument naming it.
Result<std::string> read_script_file(const std::string& path);

}  // namespace sluice::scenario
