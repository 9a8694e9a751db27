// FieldReader: reads the named fields of one table a script passed in
// (sl.fs.beeond{...}, stripe = {...}), checking type, unit and range, and at
// finish() refuses the fields nobody asked for, with the closest known name
// ("unknown field \"chunck\"; did you mean \"chunk\"?").
//
// What a table may hold is data, a FieldTable (field_tables.hpp): every
// field's name, kind, unit, range, default and a line saying what it is. The
// reader takes its ranges and choices from that table, and the API reference
// (lua_api.hpp, docs/lua-api.md) is printed from the same tables, so the
// reference and the checks cannot disagree. Reading a field the table does
// not declare, or as another kind, is an internal error (std::logic_error),
// as is finishing without having asked for every declared field: the table
// and the code that reads it are complete by construction.
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

// What a field holds, and so which getter reads it.
enum class FieldKind : std::uint8_t {
  size,         // bytes: "1MiB" or a whole number; lo..hi
  count,        // a whole number; lo..hi
  number,       // any number; number_lo..number_hi
  rate,         // bytes per second: "100Gb/s", "12.5GB/s" or a number
  duration,     // "10ms" or whole nanoseconds
  boolean,      // true or false
  text,         // a string of at most hi characters
  choice,       // one of choices
  table,        // a nested table of named fields, documented on its own
  object,       // an object made by sl.* (object_kind)
  count_list,   // a list of whole numbers, each lo..hi
  choice_list,  // a list of choices (a single name is a list of one)
  value,        // anything: the caller checks it (get())
};
std::string to_string(FieldKind kind);

// No upper bound (a size, count or text length).
inline constexpr std::uint64_t k_field_no_limit = std::numeric_limits<std::uint64_t>::max();

// One field of a table a script passes to the sluice module.
struct FieldDoc {
  std::string name;
  FieldKind kind = FieldKind::value;
  std::string unit;      // "bytes", "nodes", "Gb/s"; "" where the kind says it
  std::uint64_t lo = 0;  // size, count, count_list: the range; text: hi = most characters
  std::uint64_t hi = k_field_no_limit;
  double number_lo = 0;  // number
  double number_hi = 0;
  std::vector<std::string> choices;              // choice, choice_list
  ObjectKind object_kind = ObjectKind::machine;  // object
  std::string default_text;  // the value when the field is absent, as written in a script; "" = none
  std::string description;   // one line
};

// The fields one table may hold: sl.fs.beeond{...}, its stripe = {...}, ...
struct FieldTable {
  std::string name;     // how the reference heads it: "sl.fs.beeond", "sl.fs.* stripe"
  std::string summary;  // one line: what the table is
  std::vector<FieldDoc> fields;

  // nullptr when the table has no such field.
  const FieldDoc* find(const std::string& field) const;
};

// Fields of each kind, for the tables (field_tables.cpp): name, range,
// default as a script would write it, description.
FieldDoc size_field(std::string name, std::uint64_t lo, std::uint64_t hi, std::string default_text,
                    std::string description);
FieldDoc count_field(std::string name, std::string unit, std::uint64_t lo, std::uint64_t hi, std::string default_text,
                     std::string description);
FieldDoc number_field(std::string name, std::string unit, double lo, double hi, std::string default_text,
                      std::string description);
FieldDoc rate_field(std::string name, std::string default_text, std::string description);
FieldDoc duration_field(std::string name, std::string default_text, std::string description);
FieldDoc boolean_field(std::string name, bool default_value, std::string description);
FieldDoc text_field(std::string name, std::uint64_t max_chars, std::string default_text, std::string description);
FieldDoc choice_field(std::string name, std::vector<std::string> choices, std::string default_text,
                      std::string description);
FieldDoc choice_list_field(std::string name, std::vector<std::string> choices, std::string default_text,
                           std::string description);
FieldDoc count_list_field(std::string name, std::string unit, std::uint64_t lo, std::uint64_t hi,
                          std::string default_text, std::string description);
FieldDoc table_field(std::string name, std::string default_text, std::string description);
FieldDoc object_field(std::string name, ObjectKind kind, std::string default_text, std::string description);
FieldDoc value_field(std::string name, std::string unit, std::string default_text, std::string description);

// A list-valued scalar field: one sweep axis.
struct SweepAxisUse {
  std::string key;  // the field as written in the table
  std::vector<ScriptValue> values;
};

class FieldReader {
 public:
  // context: how the table is named in messages ("sl.fs.beeond", "sl.fs.beeond stripe");
  // table: what it may hold (a static of field_tables.cpp: it must outlive the reader).
  FieldReader(const ScriptTable& args, std::string context, const FieldTable& table);

  // The raw value (nullptr when absent) of a declared field of any kind; registers the name as known.
  const ScriptValue* get(const std::string& name);

  // Each getter reads a field its table declares with that kind, in the table's range.
  std::optional<std::uint64_t> size(const std::string& name);
  std::optional<std::uint64_t> count(const std::string& name);
  std::optional<double> number(const std::string& name);
  std::optional<double> rate(const std::string& name);  // bytes per second
  std::optional<TimeNs> duration(const std::string& name);
  std::optional<bool> boolean(const std::string& name);
  std::optional<std::string> text(const std::string& name);
  std::optional<std::string> choice(const std::string& name);
  // A nested table of named fields (stripe = {...}); nullptr when absent.
  const ScriptTable* table(const std::string& name);
  // An object of the declared kind (node = sl.machines.dgx_a100()); nullptr when absent.
  const ScriptObject* object(const std::string& name);
  // Lists by nature (never sweep axes).
  std::optional<std::vector<std::uint64_t>> count_list(const std::string& name);
  std::optional<std::vector<std::string>> choice_list(const std::string& name);

  // Throws ScriptError for fields nobody asked for; std::logic_error when a
  // declared field was never asked for (the table and the code disagree).
  void finish() const;

  const std::vector<SweepAxisUse>& sweeps() const { return sweeps_; }
  const std::vector<std::string>& known() const { return known_; }
  const std::string& context() const { return context_; }
  const FieldTable& fields() const { return table_; }
  // "<context>: <name>: <problem>" as a ScriptError.
  [[noreturn]] void fail(const std::string& name, const std::string& problem) const;

  // Parsers of one scalar, shared with the sweep and params code.
  static std::uint64_t parse_size_value(const ScriptValue& v, const std::function<void(const std::string&)>& fail);

 private:
  // The declaration of `name` as `kind` (any kind: std::nullopt); std::logic_error when there is none.
  const FieldDoc& declared(const std::string& name, std::optional<FieldKind> kind) const;
  template <typename T>
  std::optional<T> scalar(const std::string& name, const std::function<T(const ScriptValue&)>& parse_one);

  const ScriptTable& args_;
  std::string context_;
  const FieldTable& table_;
  std::vector<std::string> known_;
  std::vector<SweepAxisUse> sweeps_;
};

}  // namespace sluice::scenario
