// One description per config field. Beside each config struct of the core
// stands
//
//   template <class V> void fields(V& v, Config& c);
//
// which calls v(name, c.member, FieldInfo{...}) for every member, once, in
// order: the member's name as documents spell it (its C++ name), its unit,
// its range and a line saying what it is, and whether scripts may set it (a
// `sl.fs.*` field). Every reader of a config goes through that one list:
// the node processes' JSON settings (scenarios/deploy/server_settings_codec)
// for the servers' configs, results.json's settings for a workload's
// (scenarios/runner/result_codec), the Lua builders that read a script's
// table into the config and the field tables they check it against
// (scenarios/lua/config_fields.hpp), and from those the API reference
// (docs/lua-api.md). A new field costs one line
// there; tests/scenarios/lua/config_fields_test.cpp proves each config's
// fields reach all four.
//
// A visitor takes (const char* name, T& value, const FieldInfo& info); nested
// configs (a member that has fields() of its own) are visited as one value.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

namespace sluice {

// How a field's number is read and written.
enum class FieldUnit : std::uint8_t {
  plain,        // a flag, a choice (an enum), a nested config, a list: the type says
  count,        // a whole number of FieldInfo::what
  bytes,        // a size: "4MiB" in scripts, bytes elsewhere
  bytes_per_s,  // a rate: "12.5GB/s" in scripts, bytes per second elsewhere
  ns,           // a duration: "10ms" in scripts, nanoseconds elsewhere
  factor,       // a dimensionless number
};

inline constexpr double k_field_max_unbounded = std::numeric_limits<double>::infinity();

struct FieldInfo {
  FieldUnit unit = FieldUnit::plain;
  std::string_view what = {};  // count: what is counted ("requests", "shards")
  double min = 0;              // count, bytes, bytes_per_s, ns, factor: the range
  double max = k_field_max_unbounded;
  std::string_view doc = {};  // one line
  bool script = false;        // scripts set it (sl.fs.*): the Lua builders and field tables read it
};

// Shorthands for the lists beside the configs.
constexpr FieldInfo count_of(std::string_view what, double min, double max, std::string_view doc, bool script = false) {
  return FieldInfo{FieldUnit::count, what, min, max, doc, script};
}
constexpr FieldInfo bytes_in(double min, double max, std::string_view doc, bool script = false) {
  return FieldInfo{FieldUnit::bytes, {}, min, max, doc, script};
}
constexpr FieldInfo rate_in(double min, double max, std::string_view doc, bool script = false) {
  return FieldInfo{FieldUnit::bytes_per_s, {}, min, max, doc, script};
}
constexpr FieldInfo duration_in(double min, double max, std::string_view doc, bool script = false) {
  return FieldInfo{FieldUnit::ns, {}, min, max, doc, script};
}
constexpr FieldInfo factor_in(double min, double max, std::string_view doc, bool script = false) {
  return FieldInfo{FieldUnit::factor, {}, min, max, doc, script};
}
constexpr FieldInfo plain(std::string_view doc, bool script = false) {
  return FieldInfo{FieldUnit::plain, {}, 0, k_field_max_unbounded, doc, script};
}
// Scripts set it: the last argument of the shorthands above.
inline constexpr bool k_script_field = true;

}  // namespace sluice
