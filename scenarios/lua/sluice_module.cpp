#include "scenarios/lua/sluice_module.hpp"

#include <lua.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <new>
#include <set>

#include "core/common/assert.hpp"
#include "core/topology/nvidia_smi_import.hpp"
#include "scenarios/lua/dlio_workload.hpp"
#include "scenarios/lua/fault_plan_reader.hpp"
#include "scenarios/lua/field_reader.hpp"
#include "scenarios/lua/field_tables.hpp"
#include "scenarios/lua/lua_sandbox.hpp"
#include "scenarios/lua/prelude_lua.hpp"  // generated from scenarios/lua/prelude.lua (scenarios/CMakeLists.txt)
#include "scenarios/lua/script_units.hpp"
#include "scenarios/lua/spec_builders.hpp"
#include "scenarios/lua/machine_report.hpp"
#include "scenarios/lua/mlperf_search.hpp"
#include "scenarios/lua/peak_search.hpp"
#include "scenarios/lua/sweep_plan.hpp"

namespace sluice::scenario {
namespace {

constexpr const char* k_object_metatable = "sluice.object";
constexpr std::size_t k_error_bytes = 4096;
// The light userdata raised to stop a script in describe mode.
char k_stop_signal = 0;

// Control flow out of a binding (not script mistakes).
struct StopForDescribe {};
struct RunFailed {
  std::string message;
};

struct ObjectBox {
  std::shared_ptr<const ScriptObject> object;
};

// lua_tostring as a std::string ("" when not a string or number).
std::string string_at(lua_State* L, int index) {
  std::size_t len = 0;
  const char* s = lua_tolstring(L, index, &len);
  return s == nullptr ? std::string() : std::string(s, len);
}

ScriptContext* context_of(lua_State* L) { return static_cast<ScriptContext*>(lua_touserdata(L, lua_upvalueindex(1))); }

// "file.lua:12" of the Lua code calling the running C function (no allocation).
// The prelude's frames ("sluice", prelude.lua: sl.mlperf's wrapper) are
// skipped, so an error names the script's line that called the module.
void caller_where(lua_State* L, char* out, std::size_t size) {
  lua_Debug ar;
  for (int level = 1; level < 6; ++level) {
    if (lua_getstack(L, level, &ar) == 0) break;
    if (lua_getinfo(L, "Sl", &ar) != 0 && ar.currentline > 0 && std::strcmp(ar.short_src, "sluice") != 0) {
      std::snprintf(out, size, "%s:%d", ar.short_src, ar.currentline);
      return;
    }
  }
  std::snprintf(out, size, "?:0");
}

std::string caller_where(lua_State* L) {
  char buf[LUA_IDSIZE + 32];
  caller_where(L, buf, sizeof buf);
  return buf;
}

// Runs a binding body: C++ exceptions become Lua errors "file:line: message",
// raised only after every C++ object of the body is destroyed.
template <typename Fn>
int guarded(lua_State* L, Fn&& body) {
  char message[k_error_bytes];
  bool stop = false;
  {
    try {
      return body();
    } catch (const StopForDescribe&) {
      stop = true;
    } catch (const ScriptError& e) {
      char where[LUA_IDSIZE + 32];
      if (e.where.empty()) {
        caller_where(L, where, sizeof where);
      } else {
        std::snprintf(where, sizeof where, "%s", e.where.c_str());
      }
      std::snprintf(message, sizeof message, "%s: %s", where, e.what());
    } catch (const RunFailed& e) {
      std::snprintf(message, sizeof message, "%s", e.message.c_str());
    } catch (const std::bad_alloc&) {
      char where[LUA_IDSIZE + 32];
      caller_where(L, where, sizeof where);
      std::snprintf(message, sizeof message, "%s: out of memory", where);
    } catch (const std::exception& e) {
      char where[LUA_IDSIZE + 32];
      caller_where(L, where, sizeof where);
      std::snprintf(message, sizeof message, "%s: %s", where, e.what());
    }
  }
  if (stop) {
    lua_pushlightuserdata(L, &k_stop_signal);
  } else {
    lua_pushstring(L, message);
  }
  return lua_error(L);
}

// ---- Lua -> ScriptValue ----

ScriptValue read_value(lua_State* L, int index, int depth, std::size_t& budget);

std::shared_ptr<const ScriptTable> read_table(lua_State* L, int index, int depth, std::size_t& budget) {
  if (depth > k_max_table_depth) {
    throw ScriptError("tables nested deeper than " + std::to_string(k_max_table_depth) + " levels (a cycle?)");
  }
  if (!lua_checkstack(L, 4)) throw ScriptError("tables nested too deeply");
  index = lua_absindex(L, index);
  auto table = std::make_shared<ScriptTable>();
  std::map<lua_Integer, ScriptValue> positions;
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    if (budget-- == 0) {
      lua_pop(L, 2);
      throw ScriptError("more than " + std::to_string(k_max_table_entries) + " table entries in one call");
    }
    const int key_type = lua_type(L, -2);
    if (key_type == LUA_TSTRING) {
      std::size_t len = 0;
      const char* key = lua_tolstring(L, -2, &len);
      std::string name = key == nullptr ? std::string() : std::string(key, len);
      try {
        table->fields[name] = read_value(L, -1, depth + 1, budget);
      } catch (...) {
        lua_pop(L, 2);
        throw;
      }
    } else if (key_type == LUA_TNUMBER && lua_isinteger(L, -2) != 0 && lua_tointeger(L, -2) >= 1) {
      const lua_Integer position = lua_tointeger(L, -2);
      try {
        positions[position] = read_value(L, -1, depth + 1, budget);
      } catch (...) {
        lua_pop(L, 2);
        throw;
      }
    } else {
      const std::string type = luaL_typename(L, -2);
      lua_pop(L, 2);
      throw ScriptError("a table key must be a name or a list position 1, 2, ..., not a " + type);
    }
    lua_pop(L, 1);
  }
  lua_Integer expected = 1;
  for (auto& [position, value] : positions) {
    if (position != expected) {
      throw ScriptError("a list has a hole: no value at position " + std::to_string(expected) + " but one at " +
                        std::to_string(position));
    }
    table->list.push_back(std::move(value));
    ++expected;
  }
  return table;
}

ScriptValue read_value(lua_State* L, int index, int depth, std::size_t& budget) {
  switch (lua_type(L, index)) {
    case LUA_TNIL: return {};
    case LUA_TBOOLEAN: return ScriptValue{lua_toboolean(L, index) != 0};
    case LUA_TNUMBER:
      if (lua_isinteger(L, index) != 0) return ScriptValue{static_cast<std::int64_t>(lua_tointeger(L, index))};
      return ScriptValue{static_cast<double>(lua_tonumber(L, index))};
    case LUA_TSTRING: {
      std::size_t len = 0;
      const char* s = lua_tolstring(L, index, &len);
      return ScriptValue{s == nullptr ? std::string() : std::string(s, len)};
    }
    case LUA_TTABLE: return ScriptValue{read_table(L, index, depth, budget)};
    case LUA_TUSERDATA: {
      auto* box = static_cast<ObjectBox*>(luaL_testudata(L, index, k_object_metatable));
      if (box != nullptr && box->object) return ScriptValue{box->object};
      break;
    }
    default: break;
  }
  throw ScriptError(std::string("a ") + luaL_typename(L, index) + " cannot be passed to sluice here");
}

ScriptTable read_args(lua_State* L, int index, const std::string& function) {
  if (lua_isnoneornil(L, index)) return {};
  if (lua_type(L, index) != LUA_TTABLE) {
    throw ScriptError(function + " takes a table {name = value, ...}, not a " + luaL_typename(L, index));
  }
  std::size_t budget = k_max_table_entries;
  try {
    return *read_table(L, index, 0, budget);
  } catch (const ScriptError& e) {
    throw ScriptError(function + ": " + e.what());
  }
}

// ---- ScriptValue -> Lua ----

void push_value(lua_State* L, const ScriptValue& v);

void push_object(lua_State* L, std::shared_ptr<const ScriptObject> object) {
  void* memory = lua_newuserdatauv(L, sizeof(ObjectBox), 0);
  new (memory) ObjectBox{std::move(object)};
  luaL_setmetatable(L, k_object_metatable);
}

void push_value(lua_State* L, const ScriptValue& v) {
  luaL_checkstack(L, 4, "sluice: values nested too deeply");
  switch (v.value.index()) {
    case 0: lua_pushnil(L); break;
    case 1: lua_pushboolean(L, std::get<bool>(v.value) ? 1 : 0); break;
    case 2: lua_pushinteger(L, static_cast<lua_Integer>(std::get<std::int64_t>(v.value))); break;
    case 3: lua_pushnumber(L, std::get<double>(v.value)); break;
    case 4: {
      const std::string& s = std::get<std::string>(v.value);
      lua_pushlstring(L, s.data(), s.size());
      break;
    }
    case 5: {
      const ScriptTable* t = v.table();
      lua_createtable(L, static_cast<int>(t->list.size()), static_cast<int>(t->fields.size()));
      for (std::size_t i = 0; i < t->list.size(); ++i) {
        push_value(L, t->list[i]);
        lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
      }
      for (const auto& [k, e] : t->fields) {
        push_value(L, e);
        lua_setfield(L, -2, k.c_str());
      }
      break;
    }
    default: push_object(L, std::get<std::shared_ptr<const ScriptObject>>(v.value)); break;
  }
}

// ---- objects ----

int object_gc(lua_State* L) {
  auto* box = static_cast<ObjectBox*>(luaL_checkudata(L, 1, k_object_metatable));
  box->~ObjectBox();
  return 0;
}

// machine:describe([node]) -> the text `sluice topo show` prints for it.
int machine_describe(lua_State* L) {
  return guarded(L, [&] {
    const auto* box = static_cast<ObjectBox*>(luaL_checkudata(L, 1, k_object_metatable));
    if (!box->object || !box->object->topology) throw ScriptError("describe: expected machine:describe([node])");
    const lua_Integer node = lua_isnoneornil(L, 2) ? 0 : lua_tointeger(L, 2);
    if (node < 0 || static_cast<std::uint64_t>(node) >= box->object->topology->node_count()) {
      throw ScriptError("describe: node " + std::to_string(node) + " does not exist (the machine has " +
                        std::to_string(box->object->topology->node_count()) + " node(s))");
    }
    const std::string text = machine_report(*box->object->topology, static_cast<NodeId>(node),
                                            box->object->type + " (" + box->object->where + ")")
                                 .text;
    lua_pushlstring(L, text.data(), text.size());
    return 1;
  });
}

int object_index(lua_State* L) {
  auto* box = static_cast<ObjectBox*>(luaL_checkudata(L, 1, k_object_metatable));
  if (lua_type(L, 2) != LUA_TSTRING || !box->object) return 0;
  const char* key = lua_tostring(L, 2);
  const ScriptObject& o = *box->object;
  if (std::strcmp(key, "type") == 0) {
    lua_pushstring(L, o.type.c_str());
    return 1;
  }
  if (std::strcmp(key, "kind") == 0) {
    lua_pushstring(L, o.kind == ObjectKind::fs ? "fs" : to_string(o.kind).c_str());
    return 1;
  }
  if (o.topology && std::strcmp(key, "describe") == 0) {
    lua_pushcfunction(L, machine_describe);
    return 1;
  }
  if (o.topology && (std::strcmp(key, "gpus") == 0 || std::strcmp(key, "nics") == 0 || std::strcmp(key, "nvmes") == 0 ||
                     std::strcmp(key, "node_count") == 0)) {
    if (std::strcmp(key, "node_count") == 0) {
      lua_pushinteger(L, o.topology->node_count());
      return 1;
    }
    const topo::VertexKind kind = key[0] == 'g'   ? topo::VertexKind::gpu
                                  : key[1] == 'i' ? topo::VertexKind::nic
                                                  : topo::VertexKind::nvme;
    lua_pushinteger(L, o.topology->count(0, kind));
    return 1;
  }
  auto it = o.args.fields.find(key);
  if (it == o.args.fields.end()) it = o.reported.fields.find(key);
  if (it == o.reported.fields.end()) return 0;
  push_value(L, it->second);
  return 1;
}

int object_tostring(lua_State* L) {
  auto* box = static_cast<ObjectBox*>(luaL_checkudata(L, 1, k_object_metatable));
  if (!box->object) return 0;
  const ScriptObject& o = *box->object;
  lua_pushfstring(L, "sluice %s %s%s%s", o.kind == ObjectKind::fs ? "fs" : to_string(o.kind).c_str(), o.type.c_str(),
                  o.description.empty() ? "" : ": ", o.description.c_str());
  return 1;
}

std::shared_ptr<const ScriptObject> shared(const ScriptValue* v) {
  if (v == nullptr) return nullptr;
  const auto* o = std::get_if<std::shared_ptr<const ScriptObject>>(&v->value);
  return o == nullptr ? nullptr : *o;
}

// ---- constructors ----

int make_machine(lua_State* L) {
  return guarded(L, [&] {
    const std::string type = string_at(L, lua_upvalueindex(2));
    auto object = std::make_shared<ScriptObject>();
    object->kind = ObjectKind::machine;
    object->type = type;
    object->where = caller_where(L);
    object->args = read_args(L, 1, "sl.machines." + type);
    object->topology = build_machine(type, object->args);
    context_of(L)->machines.push_back({type, object->where, object->topology});
    push_object(L, std::move(object));
    return 1;
  });
}

// A file a script names: as given (from the working directory), else in the script's folder.
std::string script_relative_path(const ScriptContext& ctx, const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec) || ctx.dir.empty()) return path;
  return ctx.dir + "/" + path;
}

int import_nvidia_smi(lua_State* L) {
  ScriptContext* ctx = context_of(L);
  return guarded(L, [&] {
    if (lua_type(L, 1) != LUA_TSTRING) {
      throw ScriptError(
          "sl.machines.import_nvidia_smi(path): path must be a string (a file with `nvidia-smi topo -m` output)");
    }
    const std::string path = string_at(L, 1);
    auto object = std::make_shared<ScriptObject>();
    object->kind = ObjectKind::machine;
    object->type = "import_nvidia_smi";
    object->where = caller_where(L);
    object->args = read_args(L, 2, "sl.machines.import_nvidia_smi");
    const std::string resolved = script_relative_path(*ctx, path);
    std::error_code ec;
    if (std::filesystem::exists(resolved, ec) &&
        std::filesystem::file_size(resolved, ec) > topo::k_max_topo_text_bytes) {
      throw ScriptError("sl.machines.import_nvidia_smi: " + path + " is larger than " +
                        std::to_string(topo::k_max_topo_text_bytes) + " bytes");
    }
    Result<std::string> text = read_script_file(resolved);
    if (!text.ok()) throw ScriptError("sl.machines.import_nvidia_smi: cannot read " + path);
    object->topology = build_imported_machine(*text, object->args);
    object->args.fields["path"] = ScriptValue{path};
    ctx->machines.push_back({object->type, object->where, object->topology});
    push_object(L, std::move(object));
    return 1;
  });
}

int make_fabric(lua_State* L) {
  return guarded(L, [&] {
    const std::string type = string_at(L, lua_upvalueindex(2));
    auto object = std::make_shared<ScriptObject>();
    object->kind = ObjectKind::fabric;
    object->type = type;
    object->where = caller_where(L);
    object->args = read_args(L, 1, "sl.fabric." + type);
    build_fabric(type, object->args);
    push_object(L, std::move(object));
    return 1;
  });
}

int make_cluster(lua_State* L) {
  return guarded(L, [&] {
    auto object = std::make_shared<ScriptObject>();
    object->kind = ObjectKind::cluster;
    object->type = "cluster";
    object->where = caller_where(L);
    object->args = read_args(L, 1, "sl.cluster");
    ClusterBuild built = build_cluster(object->args);
    object->topology = built.topology;
    object->description = built.description;
    push_object(L, std::move(object));
    return 1;
  });
}

int make_fs(lua_State* L) {
  return guarded(L, [&] {
    const std::string type = string_at(L, lua_upvalueindex(2));
    auto object = std::make_shared<ScriptObject>();
    object->kind = ObjectKind::fs;
    object->type = type;
    object->where = caller_where(L);
    object->args = read_args(L, 1, "sl.fs." + type);
    build_fs(type, object->args, nullptr);
    push_object(L, std::move(object));
    return 1;
  });
}

int make_workload(lua_State* L) {
  return guarded(L, [&] {
    const std::string type = string_at(L, lua_upvalueindex(2));
    auto object = std::make_shared<ScriptObject>();
    object->kind = ObjectKind::workload;
    object->type = type;
    object->where = caller_where(L);
    object->args = read_args(L, 1, "sl.workload." + type);
    build_workload(type, object->args, nullptr, nullptr);
    push_object(L, std::move(object));
    return 1;
  });
}

// sl.workload.dlio{config = "unet3d_h100.yaml", overrides = {...}, <workload fields>}: a train_epoch workload,
// or a checkpoint_burst one for a checkpoint-only config (dlio_workload.hpp).
int make_dlio(lua_State* L) {
  ScriptContext* ctx = context_of(L);
  return guarded(L, [&] {
    const std::string context = "sl.workload.dlio";
    ScriptTable args = read_args(L, 1, context);
    const auto config = args.fields.find("config");
    if (config == args.fields.end() || config->second.string() == nullptr) {
      throw ScriptError(context +
                        ": config: expected the path of a DLIO workload YAML file (config = \"unet3d_h100.yaml\")");
    }
    const std::string path = *config->second.string();
    const std::string resolved = script_relative_path(*ctx, path);
    std::error_code ec;
    if (std::filesystem::exists(resolved, ec) && std::filesystem::file_size(resolved, ec) > k_dlio_max_config_bytes) {
      throw ScriptError(context + ": " + path + " is larger than " + std::to_string(k_dlio_max_config_bytes) +
                        " bytes");
    }
    Result<std::string> text = read_script_file(resolved);
    if (!text.ok()) throw ScriptError(context + ": cannot read " + path);
    DlioBuild built = build_dlio(args, path, *text);
    auto object = std::make_shared<ScriptObject>();
    object->kind = ObjectKind::workload;
    object->type = built.type;
    object->where = caller_where(L);
    object->args = std::move(built.workload_args);
    object->reported = std::move(built.exposed);
    object->reported.fields["dlio"] = ScriptValue{std::make_shared<const ScriptTable>(std::move(built.report))};
    build_workload(object->type, object->args, nullptr, nullptr);
    push_object(L, std::move(object));
    return 1;
  });
}

// ---- params ----

std::string param_type(const ScriptValue& v) {
  if (std::get_if<bool>(&v.value) != nullptr) return "boolean";
  if (v.is_number()) return "number";
  if (const std::string* s = v.string()) return parse_size(*s).ok() ? "size" : "string";
  return "list";
}

ScriptValue parse_set(const std::string& name, const std::string& type, const std::string& text,
                      const ScriptValue& default_value) {
  auto bad = [&](const std::string& what) {
    return ScriptError("--set " + name + "=" + text + ": " + what + " (" + name + " is a " + type + ", default " +
                       default_value.text() + ")");
  };
  if (type == "boolean") {
    if (text == "true") return ScriptValue{true};
    if (text == "false") return ScriptValue{false};
    throw bad("expected true or false");
  }
  auto number = [&](const std::string& t) -> ScriptValue {
    if (t.empty()) throw bad("expected a number");
    char* end = nullptr;
    const long long i = std::strtoll(t.c_str(), &end, 10);
    if (end == t.c_str() + t.size()) return ScriptValue{static_cast<std::int64_t>(i)};
    const double d = std::strtod(t.c_str(), &end);
    if (end != t.c_str() + t.size() || !std::isfinite(d)) throw bad("\"" + t + "\" is not a number");
    return ScriptValue{d};
  };
  if (type == "number") return number(text);
  if (type == "size") {
    Result<std::uint64_t> s = parse_size(text);
    if (!s.ok()) throw bad(s.status().message());
    return ScriptValue{text};
  }
  if (type == "string") return ScriptValue{text};
  // list: comma-separated; numbers where the default's elements are numbers.
  const ScriptTable* d = default_value.table();
  const bool numbers = d != nullptr && !d->list.empty() && d->list.front().is_number();
  auto list = std::make_shared<ScriptTable>();
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(start, comma - start);
    if (item.empty()) throw bad("an empty element in the list (write a,b,c)");
    list->list.push_back(numbers ? number(item) : ScriptValue{item});
    start = comma + 1;
  }
  return ScriptValue{std::shared_ptr<const ScriptTable>(list)};
}

int sl_params(lua_State* L) {
  ScriptContext* ctx = context_of(L);
  return guarded(L, [&] {
    const ScriptTable decls = read_args(L, 1, "sl.params");
    ctx->params_where = caller_where(L);
    auto values = std::make_shared<ScriptTable>();
    for (const auto& [name, decl] : decls.fields) {
      const ScriptTable* t = decl.table();
      if (t == nullptr || t->list.size() != 2 || !t->fields.empty() || t->list[0].string() == nullptr ||
          t->list[1].is_nil()) {
        throw ScriptError("sl.params: " + name + ": declare it as {\"description\", default}, not " + decl.text());
      }
      const ScriptValue& default_value = t->list[1];
      if (default_value.object() != nullptr) throw ScriptError("sl.params: " + name + ": a default must be plain data");
      if (const ScriptTable* list = default_value.table(); list != nullptr) {
        if (!list->fields.empty() || list->list.empty()) {
          throw ScriptError("sl.params: " + name + ": a list default must be a non-empty list like {1, 8}");
        }
        for (const ScriptValue& e : list->list) {
          if (!e.is_number() && e.string() == nullptr) {
            throw ScriptError("sl.params: " + name + ": list elements must be numbers or strings");
          }
        }
      }
      for (const ParamDecl& p : ctx->params) {
        if (p.name == name) throw ScriptError("sl.params: " + name + " is declared twice");
      }
      const std::string& description = std::get<std::string>(t->list[0].value);
      ParamDecl p{name, description, default_value.text(), param_type(default_value)};
      ScriptValue value = default_value;
      if (auto it = ctx->options->sets.find(name); it != ctx->options->sets.end()) {
        value = parse_set(name, p.type, it->second, default_value);
      }
      ctx->param_values[name] = value.text();
      ctx->params.push_back(std::move(p));
      values->fields[name] = std::move(value);
    }
    push_value(L, ScriptValue{std::shared_ptr<const ScriptTable>(values)});
    return 1;
  });
}

// ---- run ----

struct PushRange {
  const std::vector<RunResult>* results;
  std::size_t begin;
  std::size_t end;
};

void set_number(lua_State* L, const char* key, double value) {
  lua_pushnumber(L, value);
  lua_setfield(L, -2, key);
}

void set_string(lua_State* L, const char* key, const std::string& value) {
  lua_pushlstring(L, value.data(), value.size());
  lua_setfield(L, -2, key);
}

const char* backend_name(Backend b) {
  switch (b) {
    case Backend::sim: return "sim";
    case Backend::hw: return "hw";
    case Backend::emulate: return "emulate";
    case Backend::cluster: return "cluster";
  }
  return "?";
}

// Runs under lua_pcall so a memory error while building the tables unwinds
// only this frame, which holds no C++ objects.
int push_results(lua_State* L) {
  const auto* range = static_cast<const PushRange*>(lua_touserdata(L, 1));
  lua_createtable(L, static_cast<int>(range->end - range->begin), 0);
  for (std::size_t i = range->begin; i < range->end; ++i) {
    const RunResult& r = (*range->results)[i];
    lua_createtable(L, 0, 16);
    lua_pushinteger(L, static_cast<lua_Integer>(i + 1));  // the run's number: sl.compare finds it by this
    lua_setfield(L, -2, "index");
    lua_createtable(L, 0, static_cast<int>(r.spec.params.size()));
    for (const auto& [k, v] : r.spec.params) set_string(L, k.c_str(), v);
    lua_setfield(L, -2, "params");
    lua_pushboolean(L, r.ok ? 1 : 0);
    lua_setfield(L, -2, "ok");
    set_string(L, "error", r.error);
    lua_pushstring(L, backend_name(r.backend));
    lua_setfield(L, -2, "backend");
    lua_pushinteger(L, static_cast<lua_Integer>(r.spec.seed));
    lua_setfield(L, -2, "seed");
    set_string(L, "cluster", r.spec.cluster_description);
    set_number(L, "simulated_s", r.simulated_s);
    set_number(L, "wall_s", r.wall_s);
    lua_createtable(L, static_cast<int>(r.phases.size()), 0);
    for (std::size_t p = 0; p < r.phases.size(); ++p) {
      const PhaseRow& row = r.phases[p];
      lua_createtable(L, 0, 18);
      set_string(L, "workload", row.workload);
      set_string(L, "phase", row.phase);
      set_number(L, "ranks", row.ranks);
      set_number(L, "bytes", static_cast<double>(row.bytes));
      set_number(L, "ops", static_cast<double>(row.ops));
      set_number(L, "first_done_s", row.first_done_s);
      set_number(L, "last_done_s", row.last_done_s);
      set_number(L, "first_bytes_per_s", row.first_bytes_per_s);
      set_number(L, "last_bytes_per_s", row.last_bytes_per_s);
      set_number(L, "first_ops_per_s", row.first_ops_per_s);
      set_number(L, "last_ops_per_s", row.last_ops_per_s);
      set_number(L, "latency_us_p50", row.latency_us_p50);
      set_number(L, "latency_us_p99", row.latency_us_p99);
      set_number(L, "bound_bytes_per_s", row.bound_bytes_per_s);
      set_string(L, "binding_resource", row.binding_resource);
      set_number(L, "placed_bound_bytes_per_s", row.placed_bound_bytes_per_s);
      set_string(L, "placed_binding_resource", row.placed_binding_resource);
      lua_createtable(L, 0, static_cast<int>(row.extra.size()));
      for (const auto& [k, v] : row.extra) set_number(L, k.c_str(), v);
      lua_setfield(L, -2, "extra");
      lua_rawseti(L, -2, static_cast<lua_Integer>(p + 1));
    }
    lua_setfield(L, -2, "phases");
    lua_createtable(L, 0, static_cast<int>(r.counters.size()));
    for (const auto& [k, v] : r.counters) set_number(L, k.c_str(), v);
    lua_setfield(L, -2, "counters");
    lua_createtable(L, 0, static_cast<int>(r.paths_taken.size()));
    for (const auto& [k, v] : r.paths_taken) set_number(L, k.c_str(), static_cast<double>(v));
    lua_setfield(L, -2, "paths_taken");
    lua_createtable(L, static_cast<int>(r.log_tail.size()), 0);
    for (std::size_t l = 0; l < r.log_tail.size(); ++l) {
      lua_pushlstring(L, r.log_tail[l].data(), r.log_tail[l].size());
      lua_rawseti(L, -2, static_cast<lua_Integer>(l + 1));
    }
    lua_setfield(L, -2, "log_tail");
    lua_rawseti(L, -2, static_cast<lua_Integer>(i - range->begin + 1));
  }
  return 1;
}

Backend backend_of(const std::string& name) {
  if (name == "hw") return Backend::hw;
  if (name == "emulate") return Backend::emulate;
  if (name == "cluster") return Backend::cluster;
  return Backend::sim;
}

// sl.run's params = { gds = "on", meta_servers = 4 }: what the script's own
// loop chose for this call, recorded on each of its points as scalars (over
// the sl.params value of the same name, e.g. the list {on, off} it loops over).
void read_point_params(const FieldReader& r, const ScriptTable& t, std::map<std::string, std::string>& params) {
  if (!t.list.empty()) r.fail("params", "expected named values like { gds = \"on\", meta_servers = 4 }");
  for (const auto& [name, value] : t.fields) {
    if (value.table() != nullptr || value.object() != nullptr) {
      r.fail("params." + name, "expected a number, a string or a boolean, not " + value.type_name());
    }
    params[name] = value.text();
  }
}

// sl.run's sweep = { threads = {1, 8}, ... }: the axes by name (sweep_plan.hpp finds their objects).
void read_sweep_axes(const FieldReader& r, const ScriptTable& t,
                     std::vector<std::pair<std::string, ScriptValue>>& sweep) {
  if (!t.list.empty()) r.fail("sweep", "expected named lists like { threads = {1, 8} }");
  for (const auto& [k, v] : t.fields) sweep.emplace_back(k, v);
}

// One table of sl.run fields read into a request; `where` names it in
// errors ("sl.run", "sl.run_all[2]"). In describe mode it stops the script.
RunRequest read_run_request(ScriptContext* ctx, const ScriptTable& args, const std::string& where) {
  FieldReader r(args, where, run_fields());
  RunRequest req;
  req.scenario = ctx->scenario;
  req.params = ctx->param_values;
  if (r.object("cluster") != nullptr) req.cluster = shared(r.get("cluster"));
  if (r.object("fs") != nullptr) req.fs = shared(r.get("fs"));
  if (r.object("workload") != nullptr) req.workloads.push_back(shared(r.get("workload")));
  if (const ScriptValue* list = r.get("workloads")) {
    if (!req.workloads.empty()) r.fail("workloads", "give workload (one) or workloads (a list), not both");
    const ScriptTable* t = list->table();
    if (t == nullptr || !t->fields.empty() || t->list.empty())
      r.fail("workloads", "expected a non-empty list of workloads");
    for (std::size_t i = 0; i < t->list.size(); ++i) {
      const ScriptObject* o = t->list[i].object();
      if (o == nullptr || o->kind != ObjectKind::workload) {
        r.fail("workloads[" + std::to_string(i + 1) + "]", "expected a workload, not " + t->list[i].type_name());
      }
      req.workloads.push_back(std::get<std::shared_ptr<const ScriptObject>>(t->list[i].value));
    }
  }
  if (auto v = r.choice("backend")) req.backends = {backend_of(*v)};
  if (auto v = r.choice_list("backends")) {
    if (r.get("backend") != nullptr) r.fail("backends", "give backend or backends, not both");
    if (v->empty()) r.fail("backends", "the list is empty");
    req.backends.clear();
    for (const std::string& b : *v) req.backends.push_back(backend_of(b));
  }
  if (auto v = r.count("seed")) req.seed = *v;
  if (const ScriptTable* t = r.table("sweep")) read_sweep_axes(r, *t, req.sweep);
  if (auto v = r.text("label")) req.label = *v;
  if (const ScriptTable* t = r.table("params")) read_point_params(r, *t, req.params);
  if (auto v = r.text("sim_profile")) req.sim_profile = *v;
  if (auto v = r.boolean("sim_coalesce")) req.sim_coalesce = *v;
  if (auto v = r.choice("sim_mode")) req.sim_mode = value_named(sim_mode_names(), *v);
  if (auto v = r.count("max_events")) req.max_events = *v;
  if (const ScriptValue* v = r.get("faults")) req.faults = read_fault_plan(*v, where + ": faults");
  r.finish();
  if (!r.sweeps().empty()) {
    r.fail(r.sweeps().front().key, "one value, not a list (sweeps go in sweep = { field = {...} })");
  }
  if (!req.cluster) r.fail("cluster", "missing (cluster = sl.cluster{...})");
  if (!req.fs) r.fail("fs", "missing (fs = sl.fs.beeond{...} or another file system)");
  if (req.workloads.empty()) r.fail("workload", "missing (workload = sl.workload.file_sweep{...})");
  if (const std::string bad = check_sets(*ctx); !bad.empty()) throw ScriptError(bad);
  if (ctx->describe) {
    ctx->stopped = true;
    throw StopForDescribe{};
  }
  if (ctx->options->seed) req.seed = *ctx->options->seed;
  if (ctx->options->backend) req.backends = {*ctx->options->backend};
  return req;
}

// Every point on `backend`, through the runner in one call (so the points
// run in parallel: --jobs, and the ranks of an MPI launch). `what` names
// the Lua call in errors. Throws RunFailed.
std::vector<RunResult> run_points_on(lua_State* L, ScriptContext* ctx, const std::vector<ScenarioSpec>& points,
                                     Backend backend, const char* what) {
  if (!ctx->options->run)
    throw ScriptError(std::string(what) + ": this program was given no runner, so it cannot run scenarios");
  Result<std::vector<RunResult>> results = ctx->options->run(points, backend);
  if (!results.ok()) {
    ctx->run_failure = results.status();
    throw RunFailed{caller_where(L) + ": " + what + " failed: " + results.status().message()};
  }
  if (results->size() != points.size()) {
    ctx->run_failure = error(StatusCode::internal, "the runner returned " + std::to_string(results->size()) +
                                                       " results for " + std::to_string(points.size()) + " points");
    throw RunFailed{caller_where(L) + ": " + what + " failed: " + ctx->run_failure->message()};
  }
  return std::move(results).value();
}

// Pushes the results in [begin, end) of ctx->results as sl.run's list.
int push_result_range(lua_State* L, ScriptContext* ctx, std::size_t begin, std::size_t end) {
  PushRange range{&ctx->results, begin, end};
  lua_pushcfunction(L, push_results);
  lua_pushlightuserdata(L, &range);
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) return lua_error(L);
  return 1;
}

int sl_run(lua_State* L) {
  ScriptContext* ctx = context_of(L);
  std::size_t begin = 0;
  std::size_t end = 0;
  guarded(L, [&] {
    const ScriptTable args = read_args(L, 1, "sl.run");
    const RunRequest req = read_run_request(ctx, args, "sl.run");
    PointPlan plan = plan_points(req);
    begin = ctx->results.size();
    for (Backend backend : req.backends) {
      for (RunResult& result : run_points_on(L, ctx, plan.points, backend, "sl.run")) {
        ctx->results.push_back(std::move(result));
      }
    }
    end = ctx->results.size();
    return 0;
  });
  return push_result_range(L, ctx, begin, end);
}

// sl.run_all{ {sl.run fields}, {sl.run fields}, ... }: the runs of a loop
// given at once, so that their points run together (--jobs here, the ranks
// of an MPI launch) rather than one sl.run after the other. Returns one
// result list per entry, as sl.run would have; results.json holds them in
// the entries' order. Every entry runs on the same backends.
int sl_run_all(lua_State* L) {
  ScriptContext* ctx = context_of(L);
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  guarded(L, [&] {
    const ScriptTable args = read_args(L, 1, "sl.run_all");
    if (!args.fields.empty() || args.list.empty()) {
      throw ScriptError(
          "sl.run_all: expected a non-empty list of sl.run tables: sl.run_all{ {cluster = ..., "
          "fs = ..., workload = ...}, {...} }");
    }
    std::vector<RunRequest> requests;
    std::vector<ScenarioSpec> points;
    std::vector<std::pair<std::size_t, std::size_t>> slices;  // (first point, count) of each entry
    for (std::size_t i = 0; i < args.list.size(); ++i) {
      const std::string where = "sl.run_all[" + std::to_string(i + 1) + "]";
      const ScriptTable* t = args.list[i].table();
      if (t == nullptr)
        throw ScriptError(where + ": expected a table of sl.run fields, not " + args.list[i].type_name());
      requests.push_back(read_run_request(ctx, *t, where));
      if (requests.back().backends != requests.front().backends) {
        throw ScriptError(where + ": runs on other backends than sl.run_all[1] (give each group its own sl.run_all)");
      }
      PointPlan plan = plan_points(requests.back());
      slices.emplace_back(points.size(), plan.points.size());
      for (ScenarioSpec& p : plan.points) points.push_back(std::move(p));
    }
    std::vector<std::vector<RunResult>> by_backend;
    for (Backend backend : requests.front().backends) {
      by_backend.push_back(run_points_on(L, ctx, points, backend, "sl.run_all"));
    }
    for (const auto& [first, count] : slices) {
      const std::size_t begin = ctx->results.size();
      for (std::vector<RunResult>& results : by_backend) {
        for (std::size_t k = first; k < first + count; ++k) ctx->results.push_back(std::move(results[k]));
      }
      ranges.emplace_back(begin, ctx->results.size());
    }
    return 0;
  });
  lua_createtable(L, static_cast<int>(ranges.size()), 0);
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    push_result_range(L, ctx, ranges[i].first, ranges[i].second);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  return 1;
}

// ---- searches over runs: sl.peak and sl.mlperf (peak_search.hpp) ----

// One point of a search: `req` with its workload replaced and the step's
// params, run on its backend and kept in ctx->results (whatever its outcome).
const RunResult& run_search_point(lua_State* L, ScriptContext* ctx, const RunRequest& req,
                                  std::shared_ptr<const ScriptObject> workload,
                                  std::map<std::string, std::string> params, const char* what) {
  RunRequest at = req;
  at.workloads = {std::move(workload)};
  at.params = std::move(params);
  std::vector<RunResult> results = run_points_on(L, ctx, plan_points(at).points, at.backends.front(), what);
  ctx->results.push_back(std::move(results.front()));
  return ctx->results.back();
}

struct PeakStep {
  std::uint64_t value = 0;
  double rate = 0;  // the phase's last_bytes_per_s
  double bound_bytes_per_s = 0;
  std::string binding_resource;
};

struct PeakOutcome {
  PeakPlan plan;
  std::vector<PeakStep> steps;
  std::size_t knee = 0;  // in steps: the knee, or the last step when none was found
  bool found = false;
  std::string stopped;  // why the search ended
  std::size_t begin = 0;
  std::size_t end = 0;  // its points in ctx->results
};

// The row of the measured phase in a step's point with its rate; nullptr
// when the point failed or measured no rate of it (why: peak_no_rate).
const PhaseRow* peak_row(const RunResult& r, const PeakPlan& plan) {
  for (const PhaseRow& row : r.phases) {
    if (!r.ok || row.workload != plan.workload || row.phase != plan.phase) continue;
    if (std::isfinite(row.last_bytes_per_s) && row.last_bytes_per_s > 0) return &row;
  }
  return nullptr;
}

std::string peak_no_rate(const RunResult& r, const PeakPlan& plan, std::uint64_t value) {
  const std::string at = "the point at " + plan.axis + "=" + std::to_string(value);
  return r.ok ? at + " measured no rate of " + plan.workload + " " + plan.phase : at + " failed: " + r.error;
}

// sl.peak's fields, and the request of its start point: sl.run's fields of
// one point with one workload, on one backend.
RunRequest read_peak_request(ScriptContext* ctx, const ScriptTable& args, PeakPlan& plan, std::uint64_t& max_steps) {
  FieldReader r(args, "sl.peak", peak_fields());
  const ScriptTable* run = r.table("run");
  const std::string axis = r.choice("axis").value_or(peak_axes().front());
  const std::string phase = r.text("phase").value_or("");
  max_steps = r.count("max_steps").value_or(k_peak_max_steps);
  r.finish();
  if (run == nullptr) r.fail("run", "missing (run = {cluster = ..., fs = ..., workload = ...}, the fields of sl.run)");
  RunRequest req = read_run_request(ctx, *run, "sl.peak: run");
  if (req.workloads.size() != 1)
    throw ScriptError("sl.peak: run.workloads: give one workload (sl.peak raises its concurrency)");
  if (req.backends.size() != 1)
    throw ScriptError("sl.peak: run.backends: give one backend (a peak is searched on one)");
  const PointPlan start = plan_points(req);
  if (start.points.size() != 1) {
    std::vector<std::string> axes;
    for (const SweepAxis& a : start.axes) axes.push_back(a.name);
    throw ScriptError("sl.peak: run: " + std::to_string(start.points.size()) + " points (a sweep over " +
                      join_names(axes) + "); a peak starts from one point: give each field one value");
  }
  plan = plan_peak(*req.workloads.front(), start.points.front().workloads.front(), axis, phase);
  if (const std::string stop = peak_stop(plan, 0); !stop.empty()) throw ScriptError("sl.peak: run.workload: " + stop);
  return req;
}

// "threads=8 read 45.2 GB/s"
std::string peak_point_text(const PeakPlan& plan, std::uint64_t value, double rate) {
  return plan.axis + "=" + std::to_string(value) + " " + plan.phase + " " + format_rate(rate);
}

// "+7.2%": the growth from one step's rate to the next.
std::string growth_text(double before, double after) {
  char growth[32];
  std::snprintf(growth, sizeof growth, "%+.1f%%", 100.0 * (after / before - 1.0));
  return growth;
}

void print_peak_step(ScriptContext* ctx, const PeakOutcome& out, std::uint64_t max_steps) {
  const PeakStep& s = out.steps.back();
  *ctx->out << "peak step " << out.steps.size() << "/" << max_steps << ": "
            << peak_point_text(out.plan, s.value, s.rate);
  if (out.steps.size() > 1) *ctx->out << " (" << growth_text(out.steps[out.steps.size() - 2].rate, s.rate) << ")";
  const std::string of_bound = of_bound_text(s.rate, s.bound_bytes_per_s);
  *ctx->out << (of_bound.empty() ? "" : " = " + of_bound) << '\n';
}

// The final line: the knee with its bound and what binds it (or why there is no bound).
void print_peak(ScriptContext* ctx, const PeakOutcome& out) {
  const PeakStep& s = out.steps[out.knee];
  const std::string of_bound = of_bound_text(s.rate, s.bound_bytes_per_s);
  *ctx->out << "peak: " << (out.found ? "" : "no knee (" + out.stopped + "); the last step: ")
            << peak_point_text(out.plan, s.value, s.rate) << (of_bound.empty() ? "" : " = " + of_bound)
            << (s.binding_resource.empty() ? "" : " (" + s.binding_resource + ")") << '\n';
}

PeakOutcome search_peak(lua_State* L, ScriptContext* ctx, const ScriptTable& args) {
  PeakOutcome out;
  std::uint64_t max_steps = 0;
  const RunRequest req = read_peak_request(ctx, args, out.plan, max_steps);
  out.begin = ctx->results.size();
  for (std::uint64_t step = 0; step < max_steps && !out.found; ++step) {
    out.stopped = peak_stop(out.plan, step);
    if (!out.stopped.empty()) break;
    std::map<std::string, std::string> params = req.params;
    auto workload = peak_workload(*req.workloads.front(), out.plan, step, params);
    run_search_point(L, ctx, req, std::move(workload), std::move(params), "sl.peak");
    const std::uint64_t value = peak_value(out.plan, step);
    const PhaseRow* row = peak_row(ctx->results.back(), out.plan);
    if (row == nullptr) {  // the search stops at the last step that measured (the point stays in the results)
      out.stopped = peak_no_rate(ctx->results.back(), out.plan, value);
      if (out.steps.empty()) throw ScriptError("sl.peak: " + out.stopped);
      break;
    }
    out.steps.push_back({value, row->last_bytes_per_s, row->bound_bytes_per_s, row->binding_resource});
    print_peak_step(ctx, out, max_steps);
    if (step > 0 && peak_flat(out.steps[step - 1].rate, out.steps[step].rate)) {
      out.found = true;
      out.knee = step - 1;
      out.stopped = out.plan.axis + "=" + std::to_string(value) + " raised the rate by " +
                    growth_text(out.steps[step - 1].rate, out.steps[step].rate) + ", less than " +
                    growth_text(1.0, 1.0 + k_peak_min_growth);
    }
  }
  if (!out.found) {
    out.knee = out.steps.size() - 1;
    if (out.stopped.empty()) out.stopped = std::to_string(max_steps) + " steps (max_steps) and the rate still grew";
  }
  out.end = ctx->results.size();
  print_peak(ctx, out);
  return out;
}

// Runs under lua_pcall (as push_results): sl.peak's table from a PeakOutcome (1) of a ScriptContext (2).
int push_peak(lua_State* L) {
  const auto* out = static_cast<const PeakOutcome*>(lua_touserdata(L, 1));
  auto* ctx = static_cast<ScriptContext*>(lua_touserdata(L, 2));
  const PeakStep& s = out->steps[out->knee];
  lua_createtable(L, 0, 13);
  lua_pushboolean(L, out->found ? 1 : 0);
  lua_setfield(L, -2, "knee");
  set_string(L, "axis", out->plan.axis);
  lua_pushinteger(L, static_cast<lua_Integer>(s.value));
  lua_setfield(L, -2, "value");
  set_string(L, "workload", out->plan.workload);
  set_string(L, "phase", out->plan.phase);
  set_number(L, "rate", s.rate);
  set_number(L, "bound_bytes_per_s", s.bound_bytes_per_s);
  set_string(L, "binding_resource", s.binding_resource);
  set_number(L, "of_bound", s.rate / s.bound_bytes_per_s);
  lua_pushinteger(L, static_cast<lua_Integer>(out->steps.size()));
  lua_setfield(L, -2, "steps");
  set_string(L, "stopped", out->stopped);
  push_result_range(L, ctx, out->begin, out->end);
  lua_setfield(L, -2, "points");
  return 1;
}

// sl.peak{ run = {sl.run fields}, axis = "threads", phase = "read", max_steps = 8 }
int sl_peak(lua_State* L) {
  ScriptContext* ctx = context_of(L);
  return guarded(L, [&] {
    const ScriptTable args = read_args(L, 1, "sl.peak");
    const PeakOutcome out = search_peak(L, ctx, args);
    lua_pushcfunction(L, push_peak);
    lua_pushlightuserdata(L, const_cast<PeakOutcome*>(&out));
    lua_pushlightuserdata(L, ctx);
    if (lua_pcall(L, 2, 1, 0) != LUA_OK) {
      const std::string message = string_at(L, -1);
      lua_pop(L, 1);
      throw ScriptError("sl.peak: " + message);
    }
    return 1;
  });
}

// ---- sl.mlperf (mlperf_search.hpp) ----

struct MlperfOutcome {
  MlperfPlan plan;
  std::vector<MlperfProbe> probes;  // every probe, in run order
  std::vector<MlperfRow> rows;      // one per client count
  std::size_t begin = 0;
  std::size_t end = 0;  // its points in ctx->results
};

// sl.mlperf's fields: its own, then sl.run's for one point of one workload on one backend.
RunRequest read_mlperf_request(ScriptContext* ctx, const ScriptTable& args, MlperfPlan& plan) {
  ScriptTable run = args;
  plan = read_mlperf_fields(run);
  RunRequest req = read_run_request(ctx, run, "sl.mlperf");
  if (req.workloads.size() != 1) throw ScriptError("sl.mlperf: workloads: give one workload (its accelerators)");
  if (req.backends.size() != 1) throw ScriptError("sl.mlperf: backends: give one backend (a search runs on one)");
  const PointPlan start = plan_points(req);
  if (start.points.size() != 1) {
    throw ScriptError("sl.mlperf: sweep: " + std::to_string(start.points.size()) +
                      " points; the search starts from one: give each field one value");
  }
  const ScenarioSpec& first = start.points.front();
  SLUICE_ASSERT_MSG(first.cluster != nullptr, "a planned point has its cluster");
  check_mlperf_plan(plan, *req.workloads.front(), first.workloads.front(), *first.cluster);
  return req;
}

MlperfOutcome search_mlperf(lua_State* L, ScriptContext* ctx, const ScriptTable& args) {
  MlperfOutcome out;
  const RunRequest req = read_mlperf_request(ctx, args, out.plan);
  out.begin = ctx->results.size();
  for (std::uint64_t clients : out.plan.clients) {
    LargestPassing search(out.plan.max_accelerators);
    std::vector<MlperfProbe> probes;
    while (!search.done()) {
      const std::uint64_t per_client = search.next();
      std::map<std::string, std::string> params = req.params;
      auto workload = mlperf_workload(*req.workloads.front(), out.plan, clients, per_client, params);
      const RunResult& run = run_search_point(L, ctx, req, std::move(workload), std::move(params), "sl.mlperf");
      probes.push_back(mlperf_probe(run, out.plan, clients, per_client));
      search.record(per_client, probes.back().passed);
      *ctx->out << mlperf_probe_text(probes.back(), out.plan) << '\n';
    }
    out.rows.push_back(mlperf_row(out.plan, clients, search.largest(), search.least_failing(), probes));
    ctx->mlperf.push_back(out.rows.back());
    out.probes.insert(out.probes.end(), probes.begin(), probes.end());
  }
  out.end = ctx->results.size();
  *ctx->out << mlperf_table(out.plan, out.rows);
  return out;
}

void push_mlperf_row(lua_State* L, const MlperfRow& r) {
  lua_createtable(L, 0, 10);
  lua_pushinteger(L, static_cast<lua_Integer>(r.clients));
  lua_setfield(L, -2, "clients");
  lua_pushinteger(L, static_cast<lua_Integer>(r.accelerators));
  lua_setfield(L, -2, "accelerators");
  lua_pushinteger(L, static_cast<lua_Integer>(r.accelerators_per_client));
  lua_setfield(L, -2, "accelerators_per_client");
  set_number(L, "au", r.au);
  set_number(L, "throughput_mib_per_s", r.throughput_mib_per_s);
  set_number(L, "samples_per_s", r.samples_per_s);
  set_string(L, "binding_resource", r.binding_resource);
  lua_pushinteger(L, static_cast<lua_Integer>(r.probes));
  lua_setfield(L, -2, "probes");
  set_string(L, "stopped", r.stopped);
  lua_pushinteger(L, static_cast<lua_Integer>(r.dataset_files));
  lua_setfield(L, -2, "dataset_files");
  lua_pushinteger(L, static_cast<lua_Integer>(r.datasize_min_files));
  lua_setfield(L, -2, "datasize_min_files");
  set_number(L, "client_memory_bytes", static_cast<double>(r.client_memory_bytes));
  lua_pushboolean(L, r.meets_datasize ? 1 : 0);
  lua_setfield(L, -2, "meets_datasize");
}

void push_mlperf_probe(lua_State* L, const MlperfProbe& p) {
  lua_createtable(L, 0, 6);
  lua_pushinteger(L, static_cast<lua_Integer>(p.clients));
  lua_setfield(L, -2, "clients");
  lua_pushinteger(L, static_cast<lua_Integer>(p.clients * p.per_client));
  lua_setfield(L, -2, "accelerators");
  set_number(L, "au", p.au);
  set_number(L, "throughput_mib_per_s", p.throughput_mib_per_s);
  set_number(L, "samples_per_s", p.samples_per_s);
  lua_pushboolean(L, p.passed ? 1 : 0);
  lua_setfield(L, -2, "passed");
}

// Runs under lua_pcall: sl.mlperf's table from an MlperfOutcome (1) of a ScriptContext (2).
int push_mlperf(lua_State* L) {
  const auto* out = static_cast<const MlperfOutcome*>(lua_touserdata(L, 1));
  auto* ctx = static_cast<ScriptContext*>(lua_touserdata(L, 2));
  lua_createtable(L, 0, 5);
  set_string(L, "workload", out->plan.workload);
  set_number(L, "au_threshold", out->plan.au_threshold);
  lua_createtable(L, static_cast<int>(out->rows.size()), 0);
  for (std::size_t i = 0; i < out->rows.size(); ++i) {
    push_mlperf_row(L, out->rows[i]);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setfield(L, -2, "rows");
  lua_createtable(L, static_cast<int>(out->probes.size()), 0);
  for (std::size_t i = 0; i < out->probes.size(); ++i) {
    push_mlperf_probe(L, out->probes[i]);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setfield(L, -2, "probes");
  push_result_range(L, ctx, out->begin, out->end);
  lua_setfield(L, -2, "points");
  return 1;
}

// sl.mlperf{ clients = {1, 2}, max_accelerators = 16, [au = 0.9,] <sl.run fields> }; the
// prelude passes its methods table (search:plot) as a second argument, set as the result's metatable.
int sl_mlperf(lua_State* L) {
  ScriptContext* ctx = context_of(L);
  return guarded(L, [&] {
    const ScriptTable args = read_args(L, 1, "sl.mlperf");
    const MlperfOutcome out = search_mlperf(L, ctx, args);
    lua_pushcfunction(L, push_mlperf);
    lua_pushlightuserdata(L, const_cast<MlperfOutcome*>(&out));
    lua_pushlightuserdata(L, ctx);
    if (lua_pcall(L, 2, 1, 0) != LUA_OK) {
      const std::string message = string_at(L, -1);
      lua_pop(L, 1);
      throw ScriptError("sl.mlperf: " + message);
    }
    if (lua_istable(L, 2)) {
      lua_pushvalue(L, 2);
      lua_setmetatable(L, -2);
    }
    return 1;
  });
}

// ---- reporting and helpers ----

// A number of a table read by read_args (NaN when absent or not a number).
double number_field(const ScriptTable& t, const std::string& key) {
  const auto it = t.fields.find(key);
  if (it == t.fields.end()) return std::numeric_limits<double>::quiet_NaN();
  if (const auto* i = std::get_if<std::int64_t>(&it->second.value)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&it->second.value)) return *d;
  return std::numeric_limits<double>::quiet_NaN();
}

// sl.headline's row (argument `index`): " (0.95 of bound 12 GB/s, drive read)"
// when the phase row has a bound, "" when it has none or is nil.
std::string headline_bound(lua_State* L, int index) {
  if (lua_isnoneornil(L, index)) return "";
  const ScriptTable row = read_args(L, index, "sl.headline: row");
  if (row.fields.find("last_bytes_per_s") == row.fields.end())
    throw ScriptError("sl.headline: row: expected a phase row (sl.phase(point, \"read\")) with last_bytes_per_s");
  const std::string of_bound =
      of_bound_text(number_field(row, "last_bytes_per_s"), number_field(row, "bound_bytes_per_s"));
  if (of_bound.empty()) return "";
  const auto binding = row.fields.find("binding_resource");
  const std::string* text = binding == row.fields.end() ? nullptr : binding->second.string();
  const std::string kind = text == nullptr ? "" : text->substr(0, text->find(':'));
  return " (" + of_bound + (kind.empty() ? "" : ", " + kind) + ")";
}

int sl_headline(lua_State* L) {
  ScriptContext* ctx = context_of(L);
  return guarded(L, [&] {
    if (lua_type(L, 1) != LUA_TSTRING)
      throw ScriptError("sl.headline(text, measured, seed_figure): text must be a string");
    auto as_text = [&](int i) -> std::string {
      if (lua_type(L, i) == LUA_TNUMBER) {
        char buf[64];
        if (lua_isinteger(L, i) != 0) {
          std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(lua_tointeger(L, i)));
        } else {
          std::snprintf(buf, sizeof buf, "%.4g", static_cast<double>(lua_tonumber(L, i)));
        }
        return buf;
      }
      if (lua_type(L, i) == LUA_TSTRING) return string_at(L, i);
      if (lua_isnoneornil(L, i)) return "";
      throw ScriptError(std::string("sl.headline: expected a number or a string, not a ") + luaL_typename(L, i));
    };
    std::string line = string_at(L, 1) + ": " + as_text(2) + headline_bound(L, 4);
    const std::string seed = as_text(3);
    if (!seed.empty()) line += " (seed: " + seed + ")";
    *ctx->out << line << '\n';
    ctx->headlines.push_back(line);
    return 0;
  });
}

// sl.headlines([note]) prints "Headlines (<backends>[, note]):", the backends
// being those the script's runs so far came from ("simulated" for sim), so
// that figures measured on hardware are never headed as simulated.
int sl_headlines(lua_State* L) {
  ScriptContext* ctx = context_of(L);
  return guarded(L, [&] {
    if (!lua_isnoneornil(L, 1) && lua_type(L, 1) != LUA_TSTRING)
      throw ScriptError("sl.headlines([note]): note must be a string");
    std::vector<std::string> backends;
    for (const RunResult& r : ctx->results) {
      const std::string name = r.backend == Backend::sim ? "simulated" : backend_name(r.backend);
      if (std::find(backends.begin(), backends.end(), name) == backends.end()) backends.push_back(name);
    }
    std::string heading = backends.empty() ? "no runs" : backends.front();
    for (std::size_t i = 1; i < backends.size(); ++i) heading += " and " + backends[i];
    if (!lua_isnoneornil(L, 1)) heading += ", " + string_at(L, 1);
    *ctx->out << "Headlines (" << heading << "):\n";
    return 0;
  });
}

// The bounds of a claim from its fields: a seed figure (seed_value, with
// tolerance and tolerance_why) or a shape (at_least, at_most), never both.
void read_claim_bounds(FieldReader& fields, Claim& claim) {
  claim.seed_value = fields.number("seed_value");
  claim.at_least = fields.number("at_least");
  claim.at_most = fields.number("at_most");
  const std::optional<double> tolerance = fields.number("tolerance");
  claim.tolerance_why = fields.text("tolerance_why").value_or("");
  claim.model_input = fields.boolean("input").value_or(false);
  if (claim.model_input && !claim.seed_value) fields.fail("input", "is for a seed figure: give seed_value too");
  if (claim.seed_value) {
    if (claim.at_least || claim.at_most) {
      fields.fail("seed_value", "give seed_value (a seed figure) or at_least/at_most (a shape), not both");
    }
    if (*claim.seed_value == 0) fields.fail("seed_value", "is 0: a relative tolerance around 0 cannot hold");
    claim.tolerance = tolerance.value_or(Claim::k_default_tolerance);
    if (claim.tolerance != Claim::k_default_tolerance && claim.tolerance_why.empty()) {
      fields.fail("tolerance", "is not the default 0.15: say why in tolerance_why");
    }
    return;
  }
  if (tolerance || !claim.tolerance_why.empty()) {
    fields.fail(tolerance ? "tolerance" : "tolerance_why", "is for a seed figure: give seed_value too");
  }
  if (!claim.at_least && !claim.at_most) fields.fail("at_least", "give seed_value, or at_least, at_most or both");
  if (claim.at_least && claim.at_most && *claim.at_least > *claim.at_most) {
    fields.fail("at_most", "is below at_least: no value could hold");
  }
}

// sl.claim{"text", measured = x, seed_value = v [, tolerance = t, tolerance_why = "..."], seed = "~2x"}
// sl.claim{"text", measured = x, at_least = a, at_most = b, seed = "stalls"}
// -> holds (boolean). Prints the verdict and records the claim; a
// non-finite measurement (a ratio over a failed run) does not hold.
int sl_claim(lua_State* L) {
  ScriptContext* ctx = context_of(L);
  return guarded(L, [&] {
    const ScriptTable args = read_args(L, 1, "sl.claim");
    if (args.list.size() != 1 || args.list[0].string() == nullptr || args.list[0].string()->empty()) {
      throw ScriptError(
          "sl.claim{\"what is claimed\", measured = x, seed_value = v} or {..., at_least = a, at_most = b}: "
          "give the claim's text first, once");
    }
    ScriptTable named = args;  // the text is positional; the rest are named fields
    named.list.clear();
    FieldReader fields(named, "sl.claim", claim_fields());
    Claim claim;
    claim.text = *args.list[0].string();
    claim.where = caller_where(L);
    const ScriptValue* measured = fields.get("measured");
    if (measured == nullptr || !measured->is_number()) {
      fields.fail("measured", "expected the measured number, not " +
                                  (measured == nullptr ? std::string("nothing") : measured->type_name()));
    }
    if (const auto* i = std::get_if<std::int64_t>(&measured->value)) {
      claim.measured = static_cast<double>(*i);
    } else {
      claim.measured = std::get<double>(measured->value);
    }
    read_claim_bounds(fields, claim);
    claim.seed_figure = fields.text("seed").value_or("");
    fields.finish();
    claim.judge();
    char measured_text[96];
    if (claim.is_seed_figure() && std::isfinite(claim.relative_error())) {
      std::snprintf(measured_text, sizeof measured_text, "%.4g (%+.1f%%)", claim.measured,
                    claim.relative_error() * 100);
    } else {
      std::snprintf(measured_text, sizeof measured_text, "%.4g", claim.measured);
    }
    *ctx->out << (claim.holds ? "claim holds: " : "CLAIM DOES NOT HOLD: ") << claim.text << ": " << measured_text
              << " (expected " << claim.expectation()
              << (claim.seed_figure.empty() ? std::string() : "; seed: " + claim.seed_figure) << ")\n";
    lua_pushboolean(L, claim.holds ? 1 : 0);
    ctx->claims.push_back(std::move(claim));
    return 1;
  });
}

// "sweep.svg" -> "sweep": the plotter adds each format's extension.
std::string plot_base_name(const std::string& file) {
  std::string base = file;
  for (const char* ext : {".svg", ".png"}) {
    const std::string e = ext;
    if (base.size() > e.size() && base.compare(base.size() - e.size(), e.size(), e) == 0) {
      base.resize(base.size() - e.size());
    }
  }
  return base;
}

// A curve's x or y list (what: "x" or "y") as numbers; empty when absent.
std::vector<double> plot_numbers(const FieldReader& fields, const ScriptTable* t, const char* what) {
  std::vector<double> out;
  if (t == nullptr) return out;
  if (t->list.size() > k_max_plot_points) {
    fields.fail("series", std::string(what) + ": more than k_max_plot_points = " + std::to_string(k_max_plot_points));
  }
  for (const ScriptValue& v : t->list) {
    if (const auto* i = std::get_if<std::int64_t>(&v.value)) {
      out.push_back(static_cast<double>(*i));
    } else if (const auto* d = std::get_if<double>(&v.value)) {
      out.push_back(*d);
    } else {
      fields.fail("series", std::string(what) + ": expected numbers, not " + v.type_name());
    }
  }
  return out;
}

// series = {{title =, x = {...}, y = {...}}, ...}: the curves, each checked.
std::vector<ScriptPlotSeries> plot_series(const FieldReader& fields, const ScriptTable* series) {
  if (series == nullptr || series->list.empty()) fields.fail("series", "nothing to draw");
  if (series->list.size() > k_max_plot_series) {
    fields.fail("series", "more than k_max_plot_series = " + std::to_string(k_max_plot_series) + " curves");
  }
  std::vector<ScriptPlotSeries> out;
  for (const ScriptValue& v : series->list) {
    const ScriptTable* t = v.table();
    if (t == nullptr) fields.fail("series", "each curve is a table {title =, x =, y =}");
    FieldReader curve(*t, "report:plot series", plot_curve_fields());
    ScriptPlotSeries one;
    one.title = curve.text("title").value_or("");
    one.x = plot_numbers(fields, curve.table("x"), "x");
    one.y = plot_numbers(fields, curve.table("y"), "y");
    curve.finish();
    if (one.x.size() != one.y.size() || one.x.empty()) {
      fields.fail("series", "curve \"" + one.title + "\": x and y must be non-empty lists of the same length");
    }
    out.push_back(std::move(one));
  }
  return out;
}

// Draws the plot if this run draws plots; the line that says what became of it.
std::string draw_script_plot(const ScriptOptions& options, const ScriptPlot& plot, const std::string& file) {
  if (!options.draw_plot) return "(plot " + file + " not drawn: this run draws no plots)";
  Result<std::vector<std::string>> files = options.draw_plot(plot);
  if (!files.ok()) return "(plot " + file + " not drawn: " + files.status().message() + ")";
  std::string said = "plot:";
  for (const std::string& f : *files) said += " " + f;
  return said;
}

// sl._draw_plot{file =, title =, x_label =, y_label =, log_x =, series =
// {{title =, x = {...}, y = {...}}, ...}}: the C side of report:plot().
int sl_draw_plot(lua_State* L) {
  ScriptContext* ctx = context_of(L);
  return guarded(L, [&] {
    const ScriptTable args = read_args(L, 1, "report:plot");
    FieldReader fields(args, "report:plot", plot_fields());
    ScriptPlot plot;
    const std::string file = fields.text("file").value_or("");
    if (file.empty() || file.find('/') != std::string::npos || file.find("..") != std::string::npos) {
      fields.fail("file", "give a plain file name such as \"sweep.svg\" (it goes into --out)");
    }
    const std::string base = plot_base_name(file);
    plot.out_base = (std::filesystem::path(ctx->options->out_dir) / base).string();
    plot.title = fields.text("title").value_or(base);
    plot.x_label = fields.text("x_label").value_or("");
    plot.y_label = fields.text("y_label").value_or("");
    plot.log_x = fields.boolean("log_x").value_or(false);
    const ScriptTable* series = fields.table("series");
    fields.finish();
    plot.series = plot_series(fields, series);
    *ctx->out << draw_script_plot(*ctx->options, plot, file) << '\n';
    return 0;
  });
}

// ---- sl.compare ----

// sl.compare's list part nests results at most this deep: a point, sl.run's
// list of points, sl.run_all's list of those lists.
constexpr int k_max_compare_nesting = 3;

// The runs that the value at stack `index` of sl.compare's list part holds
// (`where` names it in messages: "[2][1]"), added to `runs` as positions in
// ctx->results: every point table sl.run returns carries its run's number.
void collect_compared_runs(lua_State* L, int index, std::size_t made, const std::string& where, int depth,
                           std::set<std::size_t>& runs) {
  index = lua_absindex(L, index);
  if (lua_type(L, index) != LUA_TTABLE) {
    throw ScriptError("sl.compare: " + where + ": expected what sl.run or sl.run_all returned, not a " +
                      luaL_typename(L, index));
  }
  lua_pushliteral(L, "index");
  if (lua_rawget(L, index) != LUA_TNIL) {
    const lua_Integer number = lua_isinteger(L, -1) != 0 ? lua_tointeger(L, -1) : 0;
    lua_pop(L, 1);
    if (number < 1 || static_cast<std::uint64_t>(number) > made) {
      throw ScriptError("sl.compare: " + where + ": its index is not the number of a run of this script (1 .. " +
                        std::to_string(made) + ")");
    }
    runs.insert(static_cast<std::size_t>(number - 1));
    return;
  }
  lua_pop(L, 1);
  const lua_Unsigned n = lua_rawlen(L, index);
  bool other_things = false;  // a table with no list part: empty, or not results at all
  if (n == 0) {
    lua_pushnil(L);
    other_things = lua_next(L, index) != 0;
  }
  if (other_things || (n > 0 && depth >= k_max_compare_nesting)) {
    throw ScriptError("sl.compare: " + where +
                      ": expected a point sl.run returned (it has an index), a list of them or a list of those lists");
  }
  for (lua_Unsigned k = 1; k <= n; ++k) {
    lua_rawgeti(L, index, static_cast<lua_Integer>(k));
    collect_compared_runs(L, -1, made, where + "[" + std::to_string(k) + "]", depth + 1, runs);
    lua_pop(L, 1);
  }
}

// sl.compare's named fields, read as values (its list part, the results, is
// read in place by collect_compared_runs rather than copied).
ScriptTable compare_named_fields(lua_State* L, int index) {
  ScriptTable named;
  std::size_t budget = k_max_table_entries;
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    if (lua_type(L, -2) == LUA_TSTRING) {
      const std::string key = string_at(L, -2);
      try {
        named.fields[key] = read_value(L, -1, 1, budget);
      } catch (const ScriptError& e) {
        throw ScriptError("sl.compare: " + key + ": " + e.what());
      }
    } else if (lua_type(L, -2) != LUA_TNUMBER || lua_isinteger(L, -2) == 0 || lua_tointeger(L, -2) < 1) {
      throw ScriptError(std::string("sl.compare: a table key must be a name or a list position, not a ") +
                        luaL_typename(L, -2));
    }
    lua_pop(L, 1);
  }
  return named;
}

// match = {"rw", "bs_bytes"}, metrics = {...}: a non-empty list of names (one name is a list of one).
std::vector<std::string> compare_names(const FieldReader& fields, const ScriptValue* value, const std::string& field) {
  std::vector<std::string> out;
  if (value == nullptr) return out;
  if (const std::string* name = value->string()) {
    if (name->empty()) fields.fail(field, "an empty name");
    return {*name};
  }
  const ScriptTable* t = value->table();
  if (t == nullptr || !t->fields.empty() || t->list.empty()) {
    fields.fail(field, "expected a name or a non-empty list of names like {\"rw\", \"bs_bytes\"}, not " +
                           (t == nullptr ? value->type_name() : std::string("another table")));
  }
  for (std::size_t i = 0; i < t->list.size(); ++i) {
    const std::string* name = t->list[i].string();
    if (name == nullptr || name->empty()) {
      fields.fail(field + "[" + std::to_string(i + 1) + "]", "expected a name, not " + t->list[i].type_name());
    }
    out.push_back(*name);
  }
  return out;
}

// measured = "fio.json" or {"a.json", "b.json"}: (how messages name each, the path as written).
std::vector<std::pair<std::string, std::string>> compare_paths(const FieldReader& fields, const ScriptValue* measured) {
  if (measured == nullptr) fields.fail("measured", "missing: the results file(s) to compare with");
  if (const std::string* path = measured->string()) return {{"measured", *path}};
  const ScriptTable* t = measured->table();
  if (t == nullptr || !t->fields.empty() || t->list.empty()) {
    fields.fail("measured", "expected a path or a non-empty list of paths, not " + measured->type_name());
  }
  if (t->list.size() > k_max_compare_files) {
    fields.fail("measured", std::to_string(t->list.size()) +
                                " files, more than k_max_compare_files = " + std::to_string(k_max_compare_files));
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t i = 0; i < t->list.size(); ++i) {
    const std::string argument = "measured[" + std::to_string(i + 1) + "]";
    const std::string* path = t->list[i].string();
    if (path == nullptr) fields.fail(argument, "expected a path (a string), not " + t->list[i].type_name());
    out.emplace_back(argument, *path);
  }
  return out;
}

// Each path found (as given, else in the script's folder), or a script error naming it.
std::vector<ScriptMeasuredFile> find_measured_files(const ScriptContext& ctx, const FieldReader& fields,
                                                    const std::vector<std::pair<std::string, std::string>>& paths) {
  std::vector<ScriptMeasuredFile> out;
  for (const auto& [argument, path] : paths) {
    const std::string found = script_relative_path(ctx, path);
    std::error_code ec;
    if (path.empty() || !std::filesystem::is_regular_file(found, ec)) {
      fields.fail(argument, "cannot read \"" + path + "\": no such file" +
                                (ctx.dir.empty() || found == path ? "" : " (here or in " + ctx.dir + ")"));
    }
    out.push_back({argument, path, found});
  }
  return out;
}

// What sl.compare returns: {rows = {{point, ...}, ...}, median_rel_err, p90_rel_err, unmatched}.
ScriptValue comparison_value(const ScriptComparison& c) {
  const auto table = [](std::shared_ptr<ScriptTable> t) { return ScriptValue{std::shared_ptr<const ScriptTable>(t)}; };
  auto rows = std::make_shared<ScriptTable>();
  for (const ScriptComparisonRow& r : c.rows) {
    auto row = std::make_shared<ScriptTable>();
    row->fields["point"] = ScriptValue{r.point};
    row->fields["workload"] = ScriptValue{r.workload};
    row->fields["phase"] = ScriptValue{r.phase};
    row->fields["metric"] = ScriptValue{r.metric};
    row->fields["predicted_backend"] = ScriptValue{r.predicted_backend};
    row->fields["measured_backend"] = ScriptValue{r.measured_backend};
    row->fields["predicted"] = ScriptValue{r.predicted};
    row->fields["measured"] = ScriptValue{r.measured};
    row->fields["rel_err"] = ScriptValue{r.rel_err};
    rows->list.push_back(table(row));
  }
  auto unmatched = std::make_shared<ScriptTable>();
  for (const std::string& point : c.unmatched) unmatched->list.push_back(ScriptValue{point});
  auto out = std::make_shared<ScriptTable>();
  out->fields["rows"] = table(rows);
  out->fields["median_rel_err"] = ScriptValue{c.median_rel_err};
  out->fields["p90_rel_err"] = ScriptValue{c.p90_rel_err};
  out->fields["unmatched"] = table(unmatched);
  return table(out);
}

// Runs under lua_pcall (as push_results does), so a memory error while
// building the tables unwinds only this frame, which holds no C++ objects.
int push_value_protected(lua_State* L) {
  push_value(L, *static_cast<const ScriptValue*>(lua_touserdata(L, 1)));
  return 1;
}

// sl.compare{results, ..., measured = "fio.json" | {...}, match = {...},
// metrics = {...}, title = "..."}: the script's runs (the predictions) next to
// the files' runs (the measurements), through ScriptOptions::compare.
int sl_compare(lua_State* L) {
  ScriptContext* ctx = context_of(L);
  return guarded(L, [&] {
    if (lua_type(L, 1) != LUA_TTABLE) {
      throw ScriptError(std::string("sl.compare takes a table {results, measured = \"fio.json\"}, not a ") +
                        luaL_typename(L, 1));
    }
    const ScriptTable named = compare_named_fields(L, 1);
    FieldReader fields(named, "sl.compare", compare_fields());
    const ScriptValue* measured = fields.get("measured");
    ScriptCompareRequest request;
    request.match = compare_names(fields, fields.get("match"), "match");
    request.metrics = compare_names(fields, fields.get("metrics"), "metrics");
    const std::string title = fields.text("title").value_or("");
    fields.finish();
    const std::vector<std::pair<std::string, std::string>> paths = compare_paths(fields, measured);
    std::set<std::size_t> runs;
    const lua_Unsigned entries = lua_rawlen(L, 1);
    for (lua_Unsigned k = 1; k <= entries; ++k) {
      lua_rawgeti(L, 1, static_cast<lua_Integer>(k));
      collect_compared_runs(L, -1, ctx->results.size(), "[" + std::to_string(k) + "]", 1, runs);
      lua_pop(L, 1);
    }
    if (runs.empty()) {
      throw ScriptError(
          "sl.compare: no runs to compare: give what sl.run or sl.run_all returned first, "
          "sl.compare{results, measured = ...}");
    }
    request.measured = find_measured_files(*ctx, fields, paths);
    if (!ctx->options->compare) {
      throw ScriptError("sl.compare: not available here: this program compares no results (sluice run does)");
    }
    std::vector<RunResult> predicted;
    for (std::size_t position : runs) predicted.push_back(ctx->results[position]);
    Result<ScriptComparison> comparison = ctx->options->compare(predicted, request);
    if (!comparison.ok()) throw ScriptError("sl.compare: " + comparison.status().message());
    if (!title.empty()) *ctx->out << title << '\n';
    *ctx->out << comparison->text;
    ScriptValue value = comparison_value(*comparison);
    lua_pushcfunction(L, push_value_protected);
    lua_pushlightuserdata(L, &value);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK)
      throw ScriptError("sl.compare: cannot return the comparison: " + string_at(L, -1));
    return 1;
  });
}

int sl_size(lua_State* L) {
  return guarded(L, [&] {
    if (lua_type(L, 1) == LUA_TNUMBER) {
      lua_pushvalue(L, 1);
      return 1;
    }
    if (lua_type(L, 1) != LUA_TSTRING) throw ScriptError("sl.size: expected a size like \"1MiB\"");
    Result<std::uint64_t> s = parse_size(string_at(L, 1));
    if (!s.ok()) throw ScriptError("sl.size: " + s.status().message());
    lua_pushinteger(L, static_cast<lua_Integer>(*s));
    return 1;
  });
}

int sl_rate(lua_State* L) {
  return guarded(L, [&] {
    if (lua_type(L, 1) == LUA_TNUMBER) {
      lua_pushvalue(L, 1);
      return 1;
    }
    if (lua_type(L, 1) != LUA_TSTRING) throw ScriptError("sl.rate: expected a rate like \"100Gb/s\"");
    Result<double> s = parse_rate(string_at(L, 1));
    if (!s.ok()) throw ScriptError("sl.rate: " + s.status().message());
    lua_pushnumber(L, *s);
    return 1;
  });
}

int sl_format_size(lua_State* L) {
  return guarded(L, [&] {
    const lua_Number n = luaL_checknumber(L, 1);
    if (!(n >= 0) || n > 1.8e19) throw ScriptError("sl.format_size: expected bytes >= 0");
    const std::string s = format_size(static_cast<std::uint64_t>(n));
    lua_pushstring(L, s.c_str());
    return 1;
  });
}

int sl_format_rate(lua_State* L) {
  return guarded(L, [&] {
    const std::string s = format_rate(luaL_checknumber(L, 1));
    lua_pushstring(L, s.c_str());
    return 1;
  });
}

// sl.machines.nope, sl.fs.beond: say what exists.
int strict_index(lua_State* L) {
  return guarded(L, [&] {
    std::vector<std::string> names;
    lua_pushnil(L);
    while (lua_next(L, 1) != 0) {
      if (lua_type(L, -2) == LUA_TSTRING) names.push_back(string_at(L, -2));
      lua_pop(L, 1);
    }
    std::sort(names.begin(), names.end());
    const std::string key = lua_type(L, 2) == LUA_TSTRING ? string_at(L, 2) : "?";
    lua_getfield(L, lua_upvalueindex(1), "__name");
    const std::string table_name = lua_type(L, -1) == LUA_TSTRING ? string_at(L, -1) : "sl";
    lua_pop(L, 1);
    const std::string near = closest_name(key, names);
    std::string all;
    for (const std::string& n : names) all += (all.empty() ? "" : ", ") + n;
    throw ScriptError(table_name + " has no \"" + key + "\"" +
                      (near.empty() ? " (it has " + all + ")" : "; did you mean \"" + near + "\"?"));
    return 0;
  });
}

// Makes the table on top strict, named `name` in messages.
void make_strict(lua_State* L, const char* name) {
  lua_createtable(L, 0, 2);
  lua_pushstring(L, name);
  lua_setfield(L, -2, "__name");
  lua_pushvalue(L, -1);
  lua_pushcclosure(L, strict_index, 1);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
}

void add_typed(lua_State* L, ScriptContext* ctx, const std::vector<std::string>& types, lua_CFunction fn,
               const char* field, const char* name) {
  lua_createtable(L, 0, static_cast<int>(types.size()));
  for (const std::string& type : types) {
    if (type == "import_nvidia_smi") {
      lua_pushlightuserdata(L, ctx);
      lua_pushcclosure(L, import_nvidia_smi, 1);
    } else {
      lua_pushlightuserdata(L, ctx);
      lua_pushstring(L, type.c_str());
      lua_pushcclosure(L, fn, 2);
    }
    lua_setfield(L, -2, type.c_str());
  }
  if (std::strcmp(field, "workload") == 0) {
    lua_pushlightuserdata(L, ctx);
    lua_pushcclosure(L, make_dlio, 1);
    lua_setfield(L, -2, "dlio");
  }
  make_strict(L, name);
  lua_setfield(L, -2, field);
}

int open_module(lua_State* L) {
  auto* ctx = static_cast<ScriptContext*>(lua_touserdata(L, lua_upvalueindex(1)));
  lua_createtable(L, 0, 24);
  add_typed(L, ctx, machine_types(), make_machine, "machines", "sl.machines");
  add_typed(L, ctx, fabric_types(), make_fabric, "fabric", "sl.fabric");
  add_typed(L, ctx, fs_types(), make_fs, "fs", "sl.fs");
  add_typed(L, ctx, workload_types(), make_workload, "workload", "sl.workload");
  const luaL_Reg functions[] = {{"cluster", make_cluster},
                                {"params", sl_params},
                                {"run", sl_run},
                                {"run_all", sl_run_all},
                                {"peak", sl_peak},
                                {"mlperf", sl_mlperf},
                                {"headline", sl_headline},
                                {"claim", sl_claim},
                                {"compare", sl_compare},
                                {"_draw_plot", sl_draw_plot},
                                {"size", sl_size},
                                {"rate", sl_rate},
                                {"format_size", sl_format_size},
                                {"format_rate", sl_format_rate},
                                {"headlines", sl_headlines},
                                {nullptr, nullptr}};
  lua_pushlightuserdata(L, ctx);
  luaL_setfuncs(L, functions, 1);
  // The parts written in Lua (scenarios/lua/prelude.lua, embedded at build time).
  if (luaL_loadbufferx(L, k_prelude_lua, sizeof k_prelude_lua - 1, "=sluice", "t") != LUA_OK) return lua_error(L);
  lua_pushvalue(L, -2);
  lua_call(L, 1, 1);
  make_strict(L, "sl");
  return 1;
}

}  // namespace

void open_sluice_module(lua_State* L, ScriptContext* ctx) {
  if (luaL_newmetatable(L, k_object_metatable) != 0) {
    lua_pushcfunction(L, object_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, object_index);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, object_tostring);
    lua_setfield(L, -2, "__tostring");
  }
  lua_pop(L, 1);
  lua_getglobal(L, LUA_LOADLIBNAME);
  lua_getfield(L, -1, "preload");
  lua_pushlightuserdata(L, ctx);
  lua_pushcclosure(L, open_module, 1);
  lua_setfield(L, -2, "sluice");
  lua_pop(L, 2);
}

std::string check_sets(const ScriptContext& ctx) {
  for (const auto& [name, value] : ctx.options->sets) {
    const bool declared =
        std::any_of(ctx.params.begin(), ctx.params.end(), [&](const ParamDecl& p) { return p.name == name; });
    if (declared) continue;
    std::vector<std::string> names;
    for (const ParamDecl& p : ctx.params) names.push_back(p.name);
    std::sort(names.begin(), names.end());
    std::string all;
    for (const std::string& n : names) all += (all.empty() ? "" : ", ") + n;
    const std::string near = closest_name(name, names);
    return "--set " + name + "=" + value + ": the script declares no parameter \"" + name + "\"" +
           (near.empty() ? "" : "; did you mean \"" + near + "\"?") +
           (names.empty() ? " (it declares none)" : " (declared: " + all + ")");
  }
  return "";
}

}  // namespace sluice::scenario
