// The API reference (docs/lua-api.md) against the code: current (the
// committed file is what lua_api_markdown() prints), complete (every field of
// every table with its unit, range and default; every name the module
// exports; every study script), and the field tables as the only way to
// read a field (an undeclared one is an internal error naming it).
//
// SLUICE_UPDATE_LUA_API=1 makes LuaApi.CommittedReferenceIsCurrent write
// docs/lua-api.md instead of failing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include <unistd.h>

#include "scenarios/lua/field_reader.hpp"
#include "scenarios/lua/lua_api.hpp"
#include "scenarios/lua/lua_script.hpp"

namespace sluice::scenario {
namespace {

const std::string k_source = SLUICE_SOURCE_DIR;
const std::string k_reference = k_source + "/docs/lua-api.md";
// Lines of a difference printed when the reference is out of date.
constexpr std::size_t k_diff_lines_max = 20;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The lines that differ, as "-committed" / "+generated" pairs, at most k_diff_lines_max.
std::string difference(const std::string& committed, const std::string& generated) {
  const std::vector<std::string> a = lines_of(committed);
  const std::vector<std::string> b = lines_of(generated);
  std::string out;
  std::size_t shown = 0;
  for (std::size_t i = 0; i < std::max(a.size(), b.size()) && shown < k_diff_lines_max; ++i) {
    const std::string* x = i < a.size() ? &a[i] : nullptr;
    const std::string* y = i < b.size() ? &b[i] : nullptr;
    if (x != nullptr && y != nullptr && *x == *y) continue;
    out += "line " + std::to_string(i + 1) + ":\n";
    if (x != nullptr) out += "  -" + *x + "\n";
    if (y != nullptr) out += "  +" + *y + "\n";
    ++shown;
  }
  return out;
}

std::vector<std::string> scripts_in(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".lua") out.push_back(entry.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(LuaApi, CommittedReferenceIsCurrent) {
  const std::string generated = lua_api_markdown();
  const char* update = std::getenv("SLUICE_UPDATE_LUA_API");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(k_reference, std::ios::binary | std::ios::trunc) << generated;
  }
  const std::string committed = read_file(k_reference);
  EXPECT_TRUE(committed == generated) << "docs/lua-api.md is out of date; regenerate it with\n"
                                      << "  SLUICE_UPDATE_LUA_API=1 build/tests/test_scenario_lua "
                                      << "--gtest_filter='LuaApi.*'\n"
                                      << difference(committed, generated);
}

TEST(LuaApi, ReferenceIsDeterministic) { EXPECT_EQ(lua_api_markdown(), lua_api_markdown()); }

TEST(LuaApi, EveryFieldIsListedWithItsKindUnitRangeAndDefault) {
  const std::vector<std::string> rows = lines_of(lua_api_markdown());
  for (const FieldTable* table : lua_api_field_tables()) {
    for (const FieldDoc& f : table->fields) {
      const std::string head = "| `" + f.name + "` | ";
      const bool found = std::any_of(rows.begin(), rows.end(), [&](const std::string& row) {
        return row.rfind(head, 0) == 0 && row.find(f.unit) != std::string::npos &&
               row.find(field_range_text(f)) != std::string::npos && row.find(f.default_text) != std::string::npos &&
               row.find(f.description) != std::string::npos;
      });
      EXPECT_TRUE(found) << table->name << ": field " << f.name << " has no row with its unit \"" << f.unit
                         << "\", range \"" << field_range_text(f) << "\" and default \"" << f.default_text << "\"";
      EXPECT_FALSE(f.description.empty()) << table->name << ": field " << f.name << " says nothing about itself";
    }
  }
}

TEST(LuaApi, EveryTableHasItsOwnSection) {
  const std::string md = lua_api_markdown();
  for (const FieldTable* table : lua_api_field_tables()) {
    const bool preset = table->name.rfind("sl.fs.", 0) == 0;  // the presets share "sl.fs.*" sections
    if (preset) continue;
    EXPECT_NE(md.find("### `" + table->name + "`"), std::string::npos) << table->name;
  }
  EXPECT_NE(md.find("### `sl.fs.*`"), std::string::npos);
  EXPECT_NE(md.find("### `sl.fs.* stripe`"), std::string::npos);
  EXPECT_NE(md.find("### `sl.fs.* mirror`"), std::string::npos);
}

TEST(LuaApi, EveryNameTheModuleExportsIsListed) {
  // One file per process: the test runs in test_scenario_lua and test_scenario_lua_asan, maybe at once.
  const std::filesystem::path script =
      std::filesystem::temp_directory_path() / ("sluice_lua_api_names_" + std::to_string(::getpid()) + ".lua");
  std::ofstream(script) << "local sl = require \"sluice\"\n"
                           "for k, v in pairs(sl) do\n"
                           "  if type(v) == \"table\" then\n"
                           "    for t in pairs(v) do print(\"sl.\" .. k .. \".\" .. t) end\n"
                           "  else print(\"sl.\" .. k) end\n"
                           "end\n";
  std::ostringstream out;
  ScriptOptions options;
  options.out = &out;
  Result<ScriptOutcome> run = run_script(script.string(), options);
  std::filesystem::remove(script);
  ASSERT_TRUE(run.ok()) << run.status().message();
  const std::string md = lua_api_markdown();
  std::size_t names = 0;
  for (const std::string& name : lines_of(out.str())) {
    ++names;
    EXPECT_NE(md.find("`" + name), std::string::npos) << name << " is not in the reference";
  }
  EXPECT_GT(names, 20u);
}

TEST(LuaApi, EveryStudyScriptIsListed) {
  std::set<std::string> listed;
  for (const SeedStudyDoc& s : seed_studies()) {
    listed.insert(s.script);
    EXPECT_TRUE(std::filesystem::exists(k_source + "/lua_scripts/" + s.script)) << s.script << " is listed but gone";
    EXPECT_FALSE(s.reproduces.empty()) << s.script;
  }
  for (const std::string& script : scripts_in(k_source + "/lua_scripts")) {
    EXPECT_EQ(listed.count(script), 1u) << script << " is not in the reference's seed studies";
  }
}

// Every field an example script sets is declared (an undeclared read would be an internal error).
TEST(LuaApi, ExampleScriptsDescribeWithoutAnUndeclaredField) {
  for (const std::string& dir : {k_source + "/lua_scripts/", k_source + "/tests/scenarios/lua/good_scripts/"}) {
    for (const std::string& script : scripts_in(dir)) {
      Result<std::vector<ParamDecl>> params = describe_script(dir + script);
      EXPECT_TRUE(params.ok()) << script << ": " << params.status().message();
      if (!params.ok()) {
        EXPECT_EQ(params.status().message().find("internal error"), std::string::npos) << script;
      }
    }
  }
}

FieldTable one_count_table() {
  return FieldTable{"test table", "a table for tests", {count_field("threads", "files", 1, 8, "4", "files in flight")}};
}

TEST(FieldReader, ReadingAnUndeclaredFieldIsAnInternalErrorNamingIt) {
  const FieldTable table = one_count_table();
  ScriptTable args;
  FieldReader r(args, "sl.test", table);
  try {
    (void)r.count("thread_count");
    FAIL() << "an undeclared field was read";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("\"thread_count\""), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("test table"), std::string::npos) << e.what();
  }
}

TEST(FieldReader, ReadingAFieldAsAnotherKindIsAnInternalError) {
  const FieldTable table = one_count_table();
  ScriptTable args;
  FieldReader r(args, "sl.test", table);
  EXPECT_THROW((void)r.size("threads"), std::logic_error);
}

TEST(FieldReader, FinishingWithoutReadingADeclaredFieldIsAnInternalError) {
  const FieldTable table = one_count_table();
  ScriptTable args;
  FieldReader r(args, "sl.test", table);
  EXPECT_THROW(r.finish(), std::logic_error);
}

TEST(FieldReader, TheRangeComesFromTheTable) {
  const FieldTable table = one_count_table();
  ScriptTable args;
  args.fields["threads"] = ScriptValue{std::int64_t{9}};
  FieldReader r(args, "sl.test", table);
  try {
    (void)r.count("threads");
    FAIL() << "9 is above the table's 8";
  } catch (const ScriptError& e) {
    EXPECT_EQ(std::string(e.what()), "sl.test: threads: 9 is out of range (1 .. 8)");
  }
}

}  // namespace
}  // namespace sluice::scenario
