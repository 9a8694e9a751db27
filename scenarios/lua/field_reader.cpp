#include "scenarios/lua/field_reader.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "scenarios/lua/script_units.hpp"

namespace sluice::scenario {
namespace {

// A number that must be whole (Lua gives 1e6 as a float).
bool whole_number(const ScriptValue& v, std::int64_t& out) {
  if (const auto* i = std::get_if<std::int64_t>(&v.value)) {
    out = *i;
    return true;
  }
  if (const auto* d = std::get_if<double>(&v.value)) {
    if (std::isfinite(*d) && *d == std::floor(*d) && std::fabs(*d) < 9.0e18) {
      out = static_cast<std::int64_t>(*d);
      return true;
    }
  }
  return false;
}

double as_double(const ScriptValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v.value)) return static_cast<double>(*i);
  return std::get<double>(v.value);
}

}  // namespace

std::string to_string(FieldKind kind) {
  switch (kind) {
    case FieldKind::size: return "size";
    case FieldKind::count: return "count";
    case FieldKind::number: return "number";
    case FieldKind::rate: return "rate";
    case FieldKind::duration: return "duration";
    case FieldKind::boolean: return "boolean";
    case FieldKind::text: return "text";
    case FieldKind::choice: return "choice";
    case FieldKind::table: return "table";
    case FieldKind::object: return "object";
    case FieldKind::count_list: return "list of counts";
    case FieldKind::choice_list: return "list of choices";
    case FieldKind::value: return "value";
  }
  return "?";
}

const FieldDoc* FieldTable::find(const std::string& field) const {
  for (const FieldDoc& f : fields) {
    if (f.name == field) return &f;
  }
  return nullptr;
}

namespace {

FieldDoc field(std::string name, FieldKind kind, std::string unit, std::string default_text, std::string description) {
  FieldDoc f;
  f.name = std::move(name);
  f.kind = kind;
  f.unit = std::move(unit);
  f.default_text = std::move(default_text);
  f.description = std::move(description);
  return f;
}

}  // namespace

FieldDoc size_field(std::string name, std::uint64_t lo, std::uint64_t hi, std::string default_text,
                    std::string description) {
  FieldDoc f = field(std::move(name), FieldKind::size, "bytes", std::move(default_text), std::move(description));
  f.lo = lo;
  f.hi = hi;
  return f;
}

FieldDoc count_field(std::string name, std::string unit, std::uint64_t lo, std::uint64_t hi, std::string default_text,
                     std::string description) {
  FieldDoc f =
      field(std::move(name), FieldKind::count, std::move(unit), std::move(default_text), std::move(description));
  f.lo = lo;
  f.hi = hi;
  return f;
}

FieldDoc number_field(std::string name, std::string unit, double lo, double hi, std::string default_text,
                      std::string description) {
  FieldDoc f =
      field(std::move(name), FieldKind::number, std::move(unit), std::move(default_text), std::move(description));
  f.number_lo = lo;
  f.number_hi = hi;
  return f;
}

FieldDoc rate_field(std::string name, std::string default_text, std::string description) {
  return field(std::move(name), FieldKind::rate, "bytes/s", std::move(default_text), std::move(description));
}

FieldDoc duration_field(std::string name, std::string default_text, std::string description) {
  return field(std::move(name), FieldKind::duration, "ns", std::move(default_text), std::move(description));
}

FieldDoc boolean_field(std::string name, bool default_value, std::string description) {
  return field(std::move(name), FieldKind::boolean, "", default_value ? "true" : "false", std::move(description));
}

FieldDoc text_field(std::string name, std::uint64_t max_chars, std::string default_text, std::string description) {
  FieldDoc f = field(std::move(name), FieldKind::text, "", std::move(default_text), std::move(description));
  f.hi = max_chars;
  return f;
}

FieldDoc choice_field(std::string name, std::vector<std::string> choices, std::string default_text,
                      std::string description) {
  FieldDoc f = field(std::move(name), FieldKind::choice, "", std::move(default_text), std::move(description));
  f.choices = std::move(choices);
  return f;
}

FieldDoc choice_list_field(std::string name, std::vector<std::string> choices, std::string default_text,
                           std::string description) {
  FieldDoc f = choice_field(std::move(name), std::move(choices), std::move(default_text), std::move(description));
  f.kind = FieldKind::choice_list;
  return f;
}

FieldDoc count_list_field(std::string name, std::string unit, std::uint64_t lo, std::uint64_t hi,
                          std::string default_text, std::string description) {
  FieldDoc f = count_field(std::move(name), std::move(unit), lo, hi, std::move(default_text), std::move(description));
  f.kind = FieldKind::count_list;
  return f;
}

FieldDoc table_field(std::string name, std::string default_text, std::string description) {
  return field(std::move(name), FieldKind::table, "", std::move(default_text), std::move(description));
}

FieldDoc object_field(std::string name, ObjectKind kind, std::string default_text, std::string description) {
  FieldDoc f = field(std::move(name), FieldKind::object, "", std::move(default_text), std::move(description));
  f.object_kind = kind;
  return f;
}

FieldDoc value_field(std::string name, std::string unit, std::string default_text, std::string description) {
  return field(std::move(name), FieldKind::value, std::move(unit), std::move(default_text), std::move(description));
}

FieldReader::FieldReader(const ScriptTable& args, std::string context, const FieldTable& table)
    : args_(args), context_(std::move(context)), table_(table) {
  if (!args_.list.empty()) {
    throw ScriptError(context_ + ": takes named fields (name = value), not a list of " +
                      std::to_string(args_.list.size()) + " values");
  }
}

void FieldReader::fail(const std::string& name, const std::string& problem) const {
  throw ScriptError(context_ + ": " + name + ": " + problem);
}

const FieldDoc& FieldReader::declared(const std::string& name, std::optional<FieldKind> kind) const {
  const FieldDoc* doc = table_.find(name);
  if (doc == nullptr) {
    throw std::logic_error("internal error: " + context_ + " reads field \"" + name + "\", which its field table " +
                           table_.name + " does not declare (scenarios/lua/field_tables.cpp)");
  }
  if (kind && doc->kind != *kind) {
    throw std::logic_error("internal error: " + context_ + " reads field \"" + name + "\" as a " + to_string(*kind) +
                           ", but its field table " + table_.name + " declares a " + to_string(doc->kind));
  }
  return *doc;
}

const ScriptValue* FieldReader::get(const std::string& name) {
  declared(name, std::nullopt);
  if (std::find(known_.begin(), known_.end(), name) == known_.end()) known_.push_back(name);
  const auto it = args_.fields.find(name);
  if (it == args_.fields.end() || it->second.is_nil()) return nullptr;
  return &it->second;
}

template <typename T>
std::optional<T> FieldReader::scalar(const std::string& name, const std::function<T(const ScriptValue&)>& parse_one) {
  const ScriptValue* v = get(name);
  if (v == nullptr) return std::nullopt;
  if (const ScriptTable* t = v->table()) {
    if (!t->is_list())
      fail(name, "expected one value or a list of values to sweep over, not a table with named fields");
    std::optional<T> first;
    for (const ScriptValue& element : t->list) {
      T parsed = parse_one(element);
      if (!first) first = parsed;
    }
    sweeps_.push_back(SweepAxisUse{name, t->list});
    return first;
  }
  return parse_one(*v);
}

std::uint64_t FieldReader::parse_size_value(const ScriptValue& v, const std::function<void(const std::string&)>& fail) {
  std::int64_t whole = 0;
  if (whole_number(v, whole)) {
    if (whole < 0) fail(v.text() + " is negative; a size is 0 or more bytes");
    return static_cast<std::uint64_t>(whole);
  }
  if (v.is_number()) fail(v.text() + " is not a whole number of bytes");
  const std::string* s = v.string();
  if (s == nullptr) {
    fail("expected a size like \"1MiB\" or a number of bytes, not " + v.type_name());
    return 0;
  }
  Result<std::uint64_t> parsed = parse_size(*s);
  if (!parsed.ok()) {
    fail(parsed.status().message());
    return 0;
  }
  return *parsed;
}

std::optional<std::uint64_t> FieldReader::size(const std::string& name) {
  const FieldDoc& doc = declared(name, FieldKind::size);
  const std::uint64_t lo = doc.lo;
  const std::uint64_t hi = doc.hi;
  return scalar<std::uint64_t>(name, [&](const ScriptValue& v) {
    const std::uint64_t bytes = parse_size_value(v, [&](const std::string& problem) { fail(name, problem); });
    if (bytes < lo || bytes > hi) {
      fail(name, v.text() + " is out of range (" + format_size(lo) + " .. " + format_size(hi) + ")");
    }
    return bytes;
  });
}

std::optional<std::uint64_t> FieldReader::count(const std::string& name) {
  const FieldDoc& doc = declared(name, FieldKind::count);
  const std::uint64_t lo = doc.lo;
  const std::uint64_t hi = doc.hi;
  return scalar<std::uint64_t>(name, [&](const ScriptValue& v) -> std::uint64_t {
    std::int64_t whole = 0;
    if (!v.is_number()) fail(name, "expected a whole number, not " + v.type_name());
    if (!whole_number(v, whole)) fail(name, v.text() + " is not a whole number");
    if (whole < 0 || static_cast<std::uint64_t>(whole) < lo || static_cast<std::uint64_t>(whole) > hi) {
      fail(name, v.text() + " is out of range (" + std::to_string(lo) + " .. " + std::to_string(hi) + ")");
    }
    return static_cast<std::uint64_t>(whole);
  });
}

std::optional<double> FieldReader::number(const std::string& name) {
  const FieldDoc& doc = declared(name, FieldKind::number);
  const double lo = doc.number_lo;
  const double hi = doc.number_hi;
  return scalar<double>(name, [&](const ScriptValue& v) {
    if (!v.is_number()) fail(name, "expected a number, not " + v.type_name());
    const double d = as_double(v);
    if (!std::isfinite(d) || d < lo || d > hi) {
      fail(name, v.text() + " is out of range (" + ScriptValue{lo}.text() + " .. " + ScriptValue{hi}.text() + ")");
    }
    return d;
  });
}

std::optional<double> FieldReader::rate(const std::string& name) {
  declared(name, FieldKind::rate);
  return scalar<double>(name, [&](const ScriptValue& v) -> double {
    if (v.is_number()) {
      const double d = as_double(v);
      if (!std::isfinite(d) || d < 0) fail(name, v.text() + " is not a rate (bytes per second, 0 or more)");
      return d;
    }
    const std::string* s = v.string();
    if (s == nullptr) fail(name, "expected a rate like \"100Gb/s\" or \"12.5GB/s\", not " + v.type_name());
    Result<double> parsed = parse_rate(*s);
    if (!parsed.ok()) fail(name, parsed.status().message());
    return *parsed;
  });
}

std::optional<TimeNs> FieldReader::duration(const std::string& name) {
  declared(name, FieldKind::duration);
  return scalar<TimeNs>(name, [&](const ScriptValue& v) -> TimeNs {
    std::int64_t whole = 0;
    if (whole_number(v, whole)) {
      if (whole < 0) fail(name, v.text() + " is negative; a duration is 0 or more");
      return whole;
    }
    if (v.is_number()) fail(name, v.text() + " is not a whole number of nanoseconds; write e.g. \"2.5us\"");
    const std::string* s = v.string();
    if (s == nullptr) fail(name, "expected a duration like \"10ms\", not " + v.type_name());
    Result<TimeNs> parsed = parse_duration(*s);
    if (!parsed.ok()) fail(name, parsed.status().message());
    return *parsed;
  });
}

std::optional<bool> FieldReader::boolean(const std::string& name) {
  declared(name, FieldKind::boolean);
  return scalar<bool>(name, [&](const ScriptValue& v) {
    const bool* b = std::get_if<bool>(&v.value);
    if (b == nullptr) fail(name, "expected true or false, not " + v.type_name());
    return *b;
  });
}

std::optional<std::string> FieldReader::text(const std::string& name) {
  const std::uint64_t max_chars = declared(name, FieldKind::text).hi;
  return scalar<std::string>(name, [&](const ScriptValue& v) {
    const std::string* s = v.string();
    if (s == nullptr) fail(name, "expected a string, not " + v.type_name());
    if (s->size() > max_chars) fail(name, "longer than " + std::to_string(max_chars) + " characters");
    return *s;
  });
}

std::optional<std::string> FieldReader::choice(const std::string& name) {
  const std::vector<std::string>& choices = declared(name, FieldKind::choice).choices;
  return scalar<std::string>(name, [&](const ScriptValue& v) {
    const std::string* s = v.string();
    if (s == nullptr) fail(name, "expected one of " + join_names(choices) + ", not " + v.type_name());
    if (std::find(choices.begin(), choices.end(), *s) == choices.end()) {
      const std::string near = closest_name(*s, choices);
      fail(name, "\"" + *s + "\" is not one of " + join_names(choices) +
                     (near.empty() ? "" : "; did you mean \"" + near + "\"?"));
    }
    return *s;
  });
}

const ScriptTable* FieldReader::table(const std::string& name) {
  declared(name, FieldKind::table);
  const ScriptValue* v = get(name);
  if (v == nullptr) return nullptr;
  const ScriptTable* t = v->table();
  if (t == nullptr) fail(name, "expected a table { name = value, ... }, not " + v->type_name());
  return t;
}

const ScriptObject* FieldReader::object(const std::string& name) {
  const ObjectKind kind = declared(name, FieldKind::object).object_kind;
  const ScriptValue* v = get(name);
  if (v == nullptr) return nullptr;
  const ScriptObject* o = v->object();
  if (o == nullptr || o->kind != kind) fail(name, "expected a " + to_string(kind) + ", not " + v->type_name());
  return o;
}

std::optional<std::vector<std::uint64_t>> FieldReader::count_list(const std::string& name) {
  const FieldDoc& doc = declared(name, FieldKind::count_list);
  const std::uint64_t lo = doc.lo;
  const std::uint64_t hi = doc.hi;
  const ScriptValue* v = get(name);
  if (v == nullptr) return std::nullopt;
  const ScriptTable* t = v->table();
  if (t == nullptr || !t->fields.empty()) fail(name, "expected a list like {0, 1, 2}, not " + v->type_name());
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i < t->list.size(); ++i) {
    std::int64_t whole = 0;
    const ScriptValue& e = t->list[i];
    const std::string where = name + "[" + std::to_string(i + 1) + "]";
    if (!whole_number(e, whole)) fail(where, "expected a whole number, not " + e.type_name() + " " + e.text());
    if (whole < 0 || static_cast<std::uint64_t>(whole) < lo || static_cast<std::uint64_t>(whole) > hi) {
      fail(where, e.text() + " is out of range (" + std::to_string(lo) + " .. " + std::to_string(hi) + ")");
    }
    out.push_back(static_cast<std::uint64_t>(whole));
  }
  return out;
}

std::optional<std::vector<std::string>> FieldReader::choice_list(const std::string& name) {
  const std::vector<std::string>& choices = declared(name, FieldKind::choice_list).choices;
  const ScriptValue* v = get(name);
  if (v == nullptr) return std::nullopt;
  std::vector<ScriptValue> items;
  if (v->string() != nullptr) {
    items.push_back(*v);
  } else if (const ScriptTable* t = v->table(); t != nullptr && t->fields.empty()) {
    items = t->list;
  } else {
    fail(name, "expected a list like {\"" + choices.front() + "\"}, not " + v->type_name());
  }
  std::vector<std::string> out;
  for (const ScriptValue& e : items) {
    const std::string* s = e.string();
    if (s == nullptr) fail(name, "expected names among " + join_names(choices) + ", not " + e.type_name());
    if (std::find(choices.begin(), choices.end(), *s) == choices.end()) {
      const std::string near = closest_name(*s, choices);
      fail(name, "\"" + *s + "\" is not one of " + join_names(choices) +
                     (near.empty() ? "" : "; did you mean \"" + near + "\"?"));
    }
    out.push_back(*s);
  }
  return out;
}

void FieldReader::finish() const {
  for (const FieldDoc& f : table_.fields) {
    if (std::find(known_.begin(), known_.end(), f.name) != known_.end()) continue;
    throw std::logic_error("internal error: " + context_ + " never reads field \"" + f.name +
                           "\", which its field table " + table_.name + " declares (scenarios/lua/field_tables.cpp)");
  }
  for (const auto& [key, value] : args_.fields) {
    if (std::find(known_.begin(), known_.end(), key) != known_.end()) continue;
    const std::string near = closest_name(key, known_);
    std::vector<std::string> sorted = known_;
    std::sort(sorted.begin(), sorted.end());
    throw ScriptError(
        context_ + ": unknown field \"" + key + "\"" +
        (near.empty() ? " (known fields: " + join_names(sorted) + ")" : "; did you mean \"" + near + "\"?"));
  }
}

}  // namespace sluice::scenario
