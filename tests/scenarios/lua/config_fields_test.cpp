// One description per config field (core/common/field_info.hpp): every
// field a config's fields() lists reaches all four of its readers. The node
// processes' JSON settings carry each field of the server configs (every
// field set to a value other than its default comes back equal, and each
// one changes the document); each script field is in its sl.fs table with
// its line and range, a script that sets it changes the built config, and
// docs/lua-api.md prints it.
#include <gtest/gtest.h>

#include <cstdint>
#include <cmath>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/assert.hpp"
#include "core/common/field_info.hpp"
#include "scenarios/deploy/server_settings_codec.hpp"
#include "scenarios/lua/config_fields.hpp"
#include "scenarios/lua/field_tables.hpp"
#include "scenarios/lua/spec_builders.hpp"
#include "scenarios/runner/result_codec.hpp"
#include "core/topology/cluster_builders.hpp"
#include "core/topology/machine_builders.hpp"

namespace sluice {
namespace {

using nlohmann::json;

// Moves every field one step from its value, within its declared range:
// numbers up by one (down at the top of the range), flags flipped, enums to
// the neighbouring value, optionals given a value, each element of a list moved.
class Perturber {
 public:
  template <class T>
  void operator()(const char* /*name*/, T& value, const FieldInfo& info = {}) {
    if constexpr (std::is_same_v<T, bool>) {
      value = !value;
    } else if constexpr (std::is_enum_v<T>) {
      using U = std::underlying_type_t<T>;
      const auto u = static_cast<U>(value);
      value = static_cast<T>(u == 0 ? 1 : u - 1);
    } else if constexpr (std::is_arithmetic_v<T>) {
      value = static_cast<double>(value) + 1 <= info.max ? static_cast<T>(value + 1) : static_cast<T>(value - 1);
    } else if constexpr (std::is_same_v<T, std::string>) {
      value += "_moved";
    } else if constexpr (requires { value.has_value(); }) {
      if (!value) value.emplace();
      (*this)("value", *value);
    } else if constexpr (requires { value.emplace_back(); }) {
      for (auto& item : value) (*this)("item", item);  // each element moved (an empty list stays empty)
    } else if constexpr (requires { fields(*this, value); }) {
      fields(*this, value);  // a nested config
    }                        // else: the stripe settings (CreateOptions), written whole
  }
};

// proto::BuddyGroupDesc, an element of MgmtConfig::buddy_groups, lists its
// fields for the wire (io()); the perturber visits them the same way.
template <class V>
void fields(V& v, proto::BuddyGroupDesc& c) {
  c.io(v);
}

// The server configs as a node process gets them, each field moved off its
// default, in a state validate_config and the pool check accept.
emulate::NodeRunOptions::FsSettings perturbed_settings() {
  emulate::NodeRunOptions::FsSettings fs;
  Perturber p;
  fields(p, fs.mgmt);
  fields(p, fs.meta);
  fields(p, fs.storage);
  fs.meta.ns.policy = MetaPolicy::striped_dir;
  return fs;
}

// Every leaf of a JSON document by its path ("meta.ns.policy").
void leaves(const json& j, const std::string& path, std::map<std::string, json>& out) {
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) leaves(value, path.empty() ? key : path + "." + key, out);
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) leaves(j[i], path + "[" + std::to_string(i) + "]", out);
  } else {
    out[path] = j;
  }
}

TEST(ConfigFields, EveryServerFieldTravelsToTheNodeProcessesAndBack) {
  const emulate::NodeRunOptions::FsSettings moved = perturbed_settings();
  const json sent = emulate::server_settings_to_json(moved);
  Result<emulate::NodeRunOptions::FsSettings> back = emulate::server_settings_from_json(sent);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(emulate::server_settings_to_json(*back), sent);

  // Each field, moved, changed the document: none is written from a default.
  std::map<std::string, json> defaults, perturbed;
  leaves(emulate::server_settings_to_json({}), "", defaults);
  leaves(sent, "", perturbed);
  std::size_t compared = 0;
  for (const auto& [path, value] : defaults) {
    if (value.is_null()) continue;  // an optional left unset (op_units), given in `perturbed`
    ASSERT_TRUE(perturbed.contains(path)) << path;
    EXPECT_NE(perturbed.at(path), value) << path << " was not moved, or not carried";
    ++compared;
  }
  EXPECT_GT(compared, 60u);  // the server configs have about 70 number, flag and choice fields
}

TEST(ConfigFields, AValueOutsideItsDeclaredRangeIsRefusedNamingTheField) {
  json doc = emulate::server_settings_to_json({});
  doc["storage"]["max_active_per_target"] = k_max_active_per_target_limit + 1;
  Result<emulate::NodeRunOptions::FsSettings> back = emulate::server_settings_from_json(doc);
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.status().message().find("storage.max_active_per_target: 4097 is outside 1..4096"), std::string::npos)
      << back.status().message();
}

// The script fields of a config, with their descriptions.
struct ScriptField {
  std::string name;
  FieldInfo info;
};
class ScriptFieldLister {
 public:
  std::vector<ScriptField> found;
  template <class T>
  void operator()(const char* name, T& /*value*/, const FieldInfo& info) {
    if (info.script) found.push_back({name, info});
  }
};
template <class Config>
std::vector<ScriptField> script_fields_of() {
  Config c;
  ScriptFieldLister lister;
  fields(lister, c);
  return lister.found;
}

// A value a script would write for the field, other than the default of `c`.
template <class Config>
class ScriptValueMaker {
 public:
  explicit ScriptValueMaker(std::string field) : field_(std::move(field)) {}
  std::optional<scenario::ScriptValue> made;
  template <class T>
  void operator()(const char* name, T& value, const FieldInfo& info) {
    if (name != field_) return;
    if constexpr (std::is_same_v<T, bool>) {
      made = scenario::ScriptValue{!value};
    } else if constexpr (std::is_enum_v<T>) {
      for (const auto& choice : scenario::choices_of(T{})) {
        if (choice.value != value) {
          made = scenario::ScriptValue{std::string(choice.name)};
          break;
        }
      }
    } else if constexpr (std::is_arithmetic_v<T>) {
      const double next =
          static_cast<double>(value) + 1 <= info.max ? static_cast<double>(value) + 1 : static_cast<double>(value) - 1;
      made = scenario::ScriptValue{static_cast<std::int64_t>(next)};
    } else if constexpr (std::is_same_v<T, std::string>) {
      made = scenario::ScriptValue{value.empty() ? std::string("/moved") : value + "_moved"};
    } else if constexpr (requires { scenario::choices_of(typename T::value_type{}); }) {
      // A list of one choice: the first, which no default list is alone.
      auto list = std::make_shared<scenario::ScriptTable>();
      list->list.push_back(
          scenario::ScriptValue{std::string(scenario::choices_of(typename T::value_type{}).front().name)});
      made = scenario::ScriptValue{std::shared_ptr<const scenario::ScriptTable>(list)};
    }
  }

 private:
  std::string field_;
};

// The config's fields as JSON-like text, to see which one a script changed.
class Dumper {
 public:
  std::map<std::string, std::string> values;
  template <class T>
  void operator()(const char* name, T& value, const FieldInfo& /*info*/ = {}) {
    if constexpr (std::is_arithmetic_v<T>) {
      values[name] = std::to_string(value);
    } else if constexpr (std::is_enum_v<T>) {
      values[name] = std::to_string(static_cast<int>(value));
    } else if constexpr (std::is_same_v<T, std::string>) {
      values[name] = value;
    } else if constexpr (requires { scenario::choices_of(typename T::value_type{}); }) {
      for (auto item : value) values[name] += std::to_string(static_cast<int>(item)) + ",";
    } else if constexpr (std::is_same_v<T, std::string>) {
      values[name] = value;
    } else if constexpr (requires { scenario::choices_of(typename T::value_type{}); }) {
      for (auto item : value) values[name] += std::to_string(static_cast<int>(item)) + ",";
    }
  }
};
template <class Config>
std::map<std::string, std::string> dump(Config c) {
  Dumper d;
  fields(d, c);
  return d.values;
}

std::string lua_api_reference() {
  std::ifstream in(std::string(SLUICE_SOURCE_DIR) + "/docs/lua-api.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// `build` makes the config from a script's table (sl.fs.beegfs{...},
// sl.workload.<type>{...}) whose fields `table` lists; `setup` is what a
// field needs beside it (striped_dir for the directory fields).
template <class Config, class Build>
void check_script_fields(Build build, const scenario::FieldTable& table, const scenario::ScriptTable& setup) {
  const std::string reference = lua_api_reference();
  const std::vector<ScriptField> listed = script_fields_of<Config>();
  ASSERT_FALSE(listed.empty());
  const Config defaults = build(setup);
  for (const ScriptField& f : listed) {
    SCOPED_TRACE(table.name + " " + f.name);
    // The table: the field, its line.
    const scenario::FieldDoc* doc = table.find(f.name);
    ASSERT_NE(doc, nullptr) << table.name << " has no field " << f.name;
    EXPECT_EQ(doc->description, std::string(f.info.doc));
    if (f.info.unit == FieldUnit::count) {
      EXPECT_EQ(static_cast<double>(doc->lo), f.info.min);
      if (!std::isinf(f.info.max)) {
        EXPECT_EQ(static_cast<double>(doc->hi), f.info.max);
      }
    }
    // The reference prints it with its line.
    EXPECT_NE(reference.find("`" + f.name + "`"), std::string::npos);
    EXPECT_NE(reference.find(std::string(f.info.doc)), std::string::npos);
    // The builder: a script that sets it changes that field of the config, and only it.
    Config c = defaults;
    ScriptValueMaker<Config> maker(f.name);
    fields(maker, c);
    ASSERT_TRUE(maker.made.has_value()) << "no script value made for " << f.name;
    scenario::ScriptTable args = setup;
    args.fields[f.name] = *maker.made;
    const Config built = build(args);
    std::map<std::string, std::string> before = dump(defaults), after = dump(built);
    ASSERT_NE(before.at(f.name), after.at(f.name)) << "setting " << f.name << " did not reach the config";
    before.erase(f.name);
    after.erase(f.name);
    if (f.name == "policy") {  // the policy decides the directory hash (build_fs): dir_owner none, path_hash fnv
      before.erase("dir_hash");
      after.erase("dir_hash");
    }
    EXPECT_EQ(before, after) << "setting " << f.name << " changed other fields";
  }
}

TEST(ConfigFields, EveryStorageScriptFieldIsInTheTableTheReferenceAndTheBuiltConfig) {
  check_script_fields<StorageServiceConfig>(
      [](const scenario::ScriptTable& args) { return scenario::build_fs("beegfs", args, nullptr).spec.storage_config; },
      scenario::fs_fields("beegfs"), {});
}

TEST(ConfigFields, EveryGenericMachineFieldIsInTheTableTheReferenceAndTheBuiltDescription) {
  check_script_fields<topo::GenericMachine>(
      [](const scenario::ScriptTable& args) { return scenario::read_generic_machine(args); },
      scenario::machine_fields("generic"), {});
}

TEST(ConfigFields, EveryClientScriptFieldIsInTheTableTheReferenceAndTheBuiltConfig) {
  check_script_fields<ClientConfig>(
      [](const scenario::ScriptTable& args) { return scenario::build_fs("beegfs", args, nullptr).spec.client; },
      scenario::fs_fields("beegfs"), {});
}

TEST(ConfigFields, EveryNamespaceScriptFieldIsInTheTableTheReferenceAndTheBuiltConfig) {
  scenario::ScriptTable striped;
  striped.fields["policy"] = scenario::ScriptValue{std::string("striped_dir")};
  striped.fields["meta_servers"] = scenario::ScriptValue{std::int64_t{4}};
  striped.fields["dir_stripe_count"] = scenario::ScriptValue{std::int64_t{2}};
  check_script_fields<NamespaceConfig>(
      [](const scenario::ScriptTable& args) { return scenario::build_fs("beegfs", args, nullptr).spec.meta.ns; },
      scenario::fs_fields("beegfs"), striped);
}

// A small cluster for the workloads' ranks: two DGX A100 nodes.
const topo::Topology& two_nodes() {
  static const topo::Topology cluster = [] {
    Result<topo::Topology> machine = topo::dgx_a100();
    SLUICE_ASSERT(machine.ok());
    Result<topo::Topology> built = topo::star_cluster(*machine, 2);
    SLUICE_ASSERT(built.ok());
    return *built;
  }();
  return cluster;
}

// Every script field of a workload's config reaches its table, the
// reference and the built config; every field of it reaches results.json's
// settings (written from the same list), moved off its default.
template <class Config>
void check_workload(const std::string& type) {
  auto build = [&](const scenario::ScriptTable& args) {
    return std::get<Config>(scenario::build_workload(type, args, &two_nodes(), nullptr).spec.config);
  };
  check_script_fields<Config>(build, scenario::workload_fields(type), {});
  Config moved;
  Perturber p;
  fields(p, moved);
  std::map<std::string, json> defaults, perturbed;
  leaves(scenario::workload_settings(Config{}), "", defaults);
  leaves(scenario::workload_settings(moved), "", perturbed);
  for (const auto& [path, value] : defaults) {
    if (path.rfind("create.", 0) == 0) continue;  // the stripe table's, not listed field by field
    ASSERT_TRUE(perturbed.contains(path)) << path;
    EXPECT_NE(perturbed.at(path), value) << type << " settings: " << path << " not written from the config";
  }
  Dumper listed;
  fields(listed, moved);
  for (const auto& [name, value] : listed.values) {
    EXPECT_TRUE(scenario::workload_settings(moved).contains(name)) << type << ": " << name;
  }
}

TEST(ConfigFields, EveryWorkloadFieldIsInItsTableTheReferenceTheBuiltConfigAndTheResults) {
  check_workload<FileSweepConfig>("file_sweep");
  check_workload<MdBenchConfig>("md_bench");
  check_workload<TrainEpochConfig>("train_epoch");
  check_workload<CheckpointConfig>("checkpoint_burst");
  check_workload<StageInConfig>("stage_in");
  check_workload<StreamConfig>("gpu_stream");
}

}  // namespace
}  // namespace sluice
