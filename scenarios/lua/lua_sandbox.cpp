#include "scenarios/lua/lua_sandbox.hpp"

#include <lua.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace sluice::scenario {

struct LuaSandbox::Limits {
  std::uint64_t memory_limit_bytes = 0;
  std::uint64_t used_bytes = 0;
  bool memory_hit = false;
  std::uint64_t instruction_limit = 0;
  std::uint64_t instructions = 0;
  std::ostream* out = nullptr;
  std::string script_dir;
  // Where the script last was (for memory errors, which carry no place).
  char last_source[LUA_IDSIZE] = "?";
  int last_line = 0;
};

namespace {

using Limits = LuaSandbox::Limits;

Limits* limits_of(lua_State* L) {
  void* ud = nullptr;
  lua_getallocf(L, &ud);
  return static_cast<Limits*>(ud);
}

void* limited_alloc(void* ud, void* ptr, std::size_t osize, std::size_t nsize) {
  auto* limits = static_cast<Limits*>(ud);
  const std::size_t old_bytes = ptr != nullptr ? osize : 0;
  if (nsize == 0) {
    std::free(ptr);
    limits->used_bytes -= old_bytes;
    return nullptr;
  }
  if (nsize > old_bytes && limits->used_bytes - old_bytes + nsize > limits->memory_limit_bytes) {
    limits->memory_hit = true;
    return nullptr;
  }
  void* p = std::realloc(ptr, nsize);
  if (p == nullptr) return nullptr;
  limits->used_bytes = limits->used_bytes - old_bytes + nsize;
  return p;
}

void count_hook(lua_State* L, lua_Debug* ar) {
  Limits* limits = limits_of(L);
  limits->instructions += k_hook_instructions;
  if (lua_getinfo(L, "Sl", ar) != 0 && ar->currentline > 0) {
    std::snprintf(limits->last_source, sizeof limits->last_source, "%s", ar->short_src);
    limits->last_line = ar->currentline;
  }
  if (limits->instructions > limits->instruction_limit) {
    lua_pushfstring(L,
                    "%s:%d: instruction limit of %I VM instructions reached (instruction_limit); does the script "
                    "loop forever?",
                    limits->last_source, limits->last_line, static_cast<lua_Integer>(limits->instruction_limit));
    lua_error(L);
  }
}

int sandbox_print(lua_State* L) {
  Limits* limits = limits_of(L);
  const int n = lua_gettop(L);
  for (int i = 1; i <= n; ++i) {
    std::size_t len = 0;
    const char* s = luaL_tolstring(L, i, &len);
    if (i > 1) limits->out->put('\t');
    limits->out->write(s, static_cast<std::streamsize>(len));
    lua_pop(L, 1);
  }
  limits->out->put('\n');
  return 0;
}

bool valid_module_name(const char* name) {
  if (*name == '\0' || *name == '.') return false;
  for (const char* c = name; *c != '\0'; ++c) {
    const bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' ||
                    *c == '-' || (*c == '.' && c[1] != '.');
    if (!ok) return false;
  }
  return true;
}

// package.searchers entry: <dir>/<name>.lua for each of module_search_dirs, text only.
int search_lib(lua_State* L) {
  const char* name = luaL_checkstring(L, 1);
  Limits* limits = limits_of(L);
  char searched[2048];
  char chosen[1024];
  searched[0] = '\0';
  chosen[0] = '\0';
  bool found = false;
  bool too_big = false;
  const bool valid = valid_module_name(name);
  if (valid) {
    std::string relative(name);
    for (char& c : relative) c = c == '.' ? '/' : c;
    for (const std::string& dir : module_search_dirs(limits->script_dir)) {
      const std::string candidate = dir + "/" + relative + ".lua";
      std::error_code ec;
      if (std::filesystem::is_regular_file(candidate, ec)) {
        too_big = std::filesystem::file_size(candidate, ec) > k_max_script_bytes;
        std::snprintf(chosen, sizeof chosen, "%s", candidate.c_str());
        found = true;
        break;
      }
      const std::size_t used = std::strlen(searched);
      std::snprintf(searched + used, sizeof searched - used, "%s%s", used == 0 ? "" : ", ", dir.c_str());
    }
  }
  if (!valid) return luaL_error(L, "require '%s': not a module name (letters, digits, _ - and dots)", name);
  if (!found) {
    return luaL_error(L, "module '%s' not found: no %s.lua in %s (add directories with SLUICE_LUA_PATH=dir1:dir2)",
                      name, name, searched);
  }
  if (too_big) return luaL_error(L, "module '%s': %s is larger than %d bytes", name, chosen, int{16 << 20});
  int status = LUA_OK;
  {
    std::ifstream in(chosen, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    const std::string chunk_name = std::string("@") + chosen;
    status = luaL_loadbufferx(L, text.data(), text.size(), chunk_name.c_str(), "t");
  }
  if (status != LUA_OK) return lua_error(L);  // the syntax error names file:line
  lua_pushstring(L, chosen);
  return 2;
}

// Message handler: make every error a string starting with "<file>:<line>: ".
int message_handler(lua_State* L) {
  lua_Debug ar;
  char where[LUA_IDSIZE + 32];
  where[0] = '\0';
  for (int level = 1; level < 8 && lua_getstack(L, level, &ar) != 0; ++level) {
    if (lua_getinfo(L, "Sl", &ar) != 0 && ar.currentline > 0) {
      std::snprintf(where, sizeof where, "%s:%d:", ar.short_src, ar.currentline);
      break;
    }
  }
  if (lua_type(L, 1) == LUA_TSTRING) {
    const char* msg = lua_tostring(L, 1);
    // Already placed ("file:12: ...")?
    const char* colon = std::strchr(msg, ':');
    bool placed = false;
    if (colon != nullptr && colon != msg) {
      const char* p = colon + 1;
      while (*p >= '0' && *p <= '9') ++p;
      placed = p > colon + 1 && *p == ':';
    }
    if (placed || where[0] == '\0') return 1;
    lua_pushfstring(L, "%s %s", where, msg);
    return 1;
  }
  if (lua_type(L, 1) == LUA_TLIGHTUSERDATA) return 1;  // a stop signal of the sluice module
  lua_pushfstring(L, "%s the script raised an error that is not a message (%s)",
                  where[0] ? where : "?:0:", luaL_typename(L, 1));
  return 1;
}

int open_safe_libs(lua_State* S) {
  static const luaL_Reg k_libs[] = {{LUA_GNAME, luaopen_base},          {LUA_LOADLIBNAME, luaopen_package},
                                    {LUA_COLIBNAME, luaopen_coroutine}, {LUA_TABLIBNAME, luaopen_table},
                                    {LUA_STRLIBNAME, luaopen_string},   {LUA_MATHLIBNAME, luaopen_math},
                                    {LUA_UTF8LIBNAME, luaopen_utf8}};
  for (const luaL_Reg& lib : k_libs) {
    luaL_requiref(S, lib.name, lib.func, 1);
    lua_pop(S, 1);
  }
  for (const char* name : {"dofile", "loadfile", "load"}) {
    lua_pushnil(S);
    lua_setglobal(S, name);
  }
  lua_pushcfunction(S, sandbox_print);
  lua_setglobal(S, "print");
  lua_getglobal(S, LUA_STRLIBNAME);
  lua_pushnil(S);
  lua_setfield(S, -2, "dump");
  lua_pop(S, 1);
  lua_getglobal(S, LUA_MATHLIBNAME);
  lua_getfield(S, -1, "randomseed");
  lua_pushinteger(S, 1);
  lua_call(S, 1, 0);
  lua_pop(S, 1);
  lua_getglobal(S, LUA_LOADLIBNAME);
  lua_pushstring(S, "");
  lua_setfield(S, -2, "path");
  lua_pushstring(S, "");
  lua_setfield(S, -2, "cpath");
  lua_pushnil(S);
  lua_setfield(S, -2, "loadlib");
  lua_getfield(S, -1, "searchers");
  lua_createtable(S, 2, 0);
  lua_rawgeti(S, -2, 1);  // the preload searcher
  lua_rawseti(S, -2, 1);
  lua_pushcfunction(S, search_lib);
  lua_rawseti(S, -2, 2);
  lua_setfield(S, -3, "searchers");
  lua_pop(S, 2);
  return 0;
}

}  // namespace

std::vector<std::string> module_search_dirs(const std::string& script_dir) {
  const std::string dir = script_dir.empty() ? std::string(".") : script_dir;
  std::vector<std::string> dirs = {dir + "/lib", dir};
  if (const char* extra = std::getenv(k_lua_path_variable); extra != nullptr) {
    std::string list(extra);
    for (std::size_t start = 0; start <= list.size();) {
      const std::size_t end = std::min(list.find(':', start), list.size());
      if (end > start) dirs.push_back(list.substr(start, end - start));
      start = end + 1;
    }
  }
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back((exe.parent_path().parent_path() / "lua_scripts" / "lib").lexically_normal().string());
  dirs.emplace_back(SLUICE_SOURCE_LUA_LIB);
  std::vector<std::string> unique;
  for (const std::string& d : dirs) {
    if (std::find(unique.begin(), unique.end(), d) == unique.end()) unique.push_back(d);
  }
  return unique;
}

Result<std::string> read_script_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return error(StatusCode::invalid_argument, path + ": cannot read the script: no such file");
  }
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return error(StatusCode::invalid_argument, path + ": cannot read the script: " + ec.message());
  if (size > k_max_script_bytes) {
    return error(StatusCode::invalid_argument, path + ": the script is " + std::to_string(size) +
                                                   " bytes, more than the limit of " +
                                                   std::to_string(k_max_script_bytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return error(StatusCode::invalid_argument, path + ": cannot open the script");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

LuaSandbox::LuaSandbox(std::uint64_t memory_limit_bytes, std::uint64_t instruction_limit, std::ostream& out,
                       std::string script_dir)
    : limits_(new Limits) {
  limits_->memory_limit_bytes = memory_limit_bytes;
  limits_->instruction_limit = instruction_limit;
  limits_->out = &out;
  limits_->script_dir = std::move(script_dir);
  state_ = lua_newstate(limited_alloc, limits_);
  if (state_ == nullptr) return;
  lua_State* L = state_;
  // Opening the libraries can fail only for memory: run it protected.
  lua_pushcfunction(L, open_safe_libs);
  if (lua_pcall(L, 0, 0, 0) != LUA_OK) {
    lua_close(L);
    state_ = nullptr;
    return;
  }
  lua_sethook(L, count_hook, LUA_MASKCOUNT, k_hook_instructions);
}

LuaSandbox::~LuaSandbox() {
  if (state_ != nullptr) lua_close(state_);
  delete limits_;
}

std::uint64_t LuaSandbox::memory_used_bytes() const { return limits_->used_bytes; }
std::uint64_t LuaSandbox::instructions() const { return limits_->instructions; }

Status LuaSandbox::run(const std::string& chunk_name, const std::string& text) {
  auto memory_error = [&] {
    return error(StatusCode::invalid_argument,
                 std::string(limits_->last_source) + ":" + std::to_string(limits_->last_line) + ": memory limit of " +
                     std::to_string(limits_->memory_limit_bytes) + " bytes reached (memory_limit_bytes)");
  };
  if (state_ == nullptr) {
    return error(StatusCode::invalid_argument, chunk_name + ":0: memory limit of " +
                                                   std::to_string(limits_->memory_limit_bytes) +
                                                   " bytes is too small to start Lua (memory_limit_bytes)");
  }
  lua_State* L = state_;
  std::snprintf(limits_->last_source, sizeof limits_->last_source, "%s", chunk_name.c_str());
  limits_->last_line = 0;
  limits_->memory_hit = false;
  lua_settop(L, 0);
  if (!lua_checkstack(L, 4)) return memory_error();
  lua_pushcfunction(L, message_handler);
  const std::string lua_chunk_name = "@" + chunk_name;
  int status = luaL_loadbufferx(L, text.data(), text.size(), lua_chunk_name.c_str(), "t");
  if (status == LUA_OK) status = lua_pcall(L, 0, 0, 1);
  if (status == LUA_OK) {
    lua_settop(L, 0);
    return ok_status();
  }
  if (status == LUA_ERRMEM || limits_->memory_hit) {
    lua_settop(L, 0);
    limits_->memory_hit = false;
    return memory_error();
  }
  std::string message = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : chunk_name + ":0: error";
  lua_settop(L, 0);
  return error(StatusCode::invalid_argument, message);
}

}  // namespace sluice::scenario
