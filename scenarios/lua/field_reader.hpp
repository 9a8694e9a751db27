// FieldReader: reads the named fields of one table a script passed in
// (sl.fs.beeond{...}, stripe = {...}), checking type, unit and range, and at
// finish() refuses the fields nobody asked for, with the closest known name
// ("unknown field \"chunck\"; did you mean \"chunk\"?").
//
// Sweeps: a scalar field given a list (threads = {1, 8, 32}) is a sweep axis.
// Every element is checked, the first is returned, and the axis is recorded
// (sweeps()) so sl.run can run the cartesian product of all axes. Fields
// that are lists by nature (phases, node lists) are read with the *_list
// getters and are never axes.
//
// Errors are ScriptError sentences "<context>: <field>: <problem>" (the Lua
// binding prefixes "file:line: ").
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/common/units.hpp"
#include "scenarios/lua/script_value.hpp"

namespace sluice::scenario {

// A list-valued scalar field: one sweep axis.
struct SweepAxisUse {
  std::string key;  // the field as written in the table
  std::vector<ScriptValue> values;
};

class FieldReader {
 public:
  // context: how the table is named in messages ("sl.fs.beeond", "sl.fs.beeond stripe").
  FieldReader(const ScriptTable& args, std::string context);

  // The raw value (nullptr when absent); registers the name as known.
  const ScriptValue* get(const std::string& name);

  std::optional<std::uint64_t> size(const std::string& name, std::uint64_t lo = 0,
                                    std::uint64_t hi = std::numeric_limits<std::uint64_t>::max());
  std::optional<std::uint64_t> count(const std::string& name, std::uint64_t lo, std::uint64_t hi);
  std::optional<double> number(const std::string& name, double lo, double hi);
  std::optional<double> rate(const std::string& name);  // bytes per second
  std::optional<TimeNs> duration(const std::string& name);
  std::optional<bool> boolean(const std::string& name);
  std::optional<std::string> text(const std::string& name);
  std::optional<std::string> choice(const std::string& name, const std::vector<std::string>& choices);
  // A nested table of named fields (stripe = {...}); nullptr when absent.
  const ScriptTable* table(const std::string& name);
  // An object of `kind` (node = sl.machines.dgx_a100()); nullptr when absent.
  const ScriptObject* object(const std::string& name, ObjectKind kind);
  // Lists by nature (never sweep axes).
  std::optional<std::vector<std::uint64_t>> count_list(const std::string& name, std::uint64_t lo, std::uint64_t hi);
  std::optional<std::vector<std::string>> choice_list(const std::string& name, const std::vector<std::string>& choices);

  // Throws for fields nobody asked for.
  void finish() const;

  const std::vector<SweepAxisUse>& sweeps() const { return sweeps_; }
  const std::vector<std::string>& known() const { return known_; }
  const std::string& context() const { return context_; }
  // "<context>: <name>: <problem>" as a ScriptError.
  [[noreturn]] void fail(const std::string& name, const std::string& problem) const;

  // Parsers of one scalar, shared with the sweep and params code.
  static std::uint64_t parse_size_value(const ScriptValue& v, const std::function<void(const std::string&)>& fail);

 private:
  template <typename T>
  std::optional<T> scalar(const std::string& name, const std::function<T(const ScriptValue&)>& parse_one);

  const ScriptTable& args_;
  std::string context_;
  std::vector<std::string> known_;
  std::vector<SweepAxisUse> sweeps_;
};

}  // namespace sluice::scenario
