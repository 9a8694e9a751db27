#include "scenarios/lua/script_value.hpp"

#include <cmath>
#include <cstdio>

namespace sluice::scenario {

std::string to_string(ObjectKind kind) {
  switch (kind) {
    case ObjectKind::machine: return "machine";
    case ObjectKind::fabric: return "fabric";
    case ObjectKind::cluster: return "cluster";
    case ObjectKind::fs: return "file system";
    case ObjectKind::workload: return "workload";
  }
  return "object";
}

const ScriptTable* ScriptValue::table() const {
  const auto* t = std::get_if<std::shared_ptr<const ScriptTable>>(&value);
  return t != nullptr ? t->get() : nullptr;
}

const ScriptObject* ScriptValue::object() const {
  const auto* o = std::get_if<std::shared_ptr<const ScriptObject>>(&value);
  return o != nullptr ? o->get() : nullptr;
}

std::string ScriptValue::type_name() const {
  switch (value.index()) {
    case 0: return "nil";
    case 1: return "a boolean";
    case 2:
    case 3: return "a number";
    case 4: return "a string";
    case 5: return "a table";
    default: {
      const ScriptObject* o = object();
      if (o == nullptr) return "an object";
      return "a " + to_string(o->kind) + " (" + o->type + ")";
    }
  }
}

std::string ScriptValue::text() const {
  switch (value.index()) {
    case 0: return "nil";
    case 1: return std::get<bool>(value) ? "true" : "false";
    case 2: return std::to_string(std::get<std::int64_t>(value));
    case 3: {
      const double d = std::get<double>(value);
      char buf[64];
      if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 1e15) {
        std::snprintf(buf, sizeof buf, "%.0f", d);
      } else {
        std::snprintf(buf, sizeof buf, "%.6g", d);
      }
      return buf;
    }
    case 4: return std::get<std::string>(value);
    case 5: {
      const ScriptTable* t = table();
      std::string out = "{";
      for (std::size_t i = 0; i < t->list.size(); ++i) out += (i ? ", " : "") + t->list[i].text();
      for (const auto& [k, v] : t->fields) out += (out.size() > 1 ? ", " : "") + k + "=" + v.text();
      return out + "}";
    }
    default: {
      const ScriptObject* o = object();
      return o == nullptr ? "object" : o->type;
    }
  }
}

}  // namespace sluice::scenario
