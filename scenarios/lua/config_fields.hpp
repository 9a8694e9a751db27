// The script fields of a core config: those its fields() list
// (core/common/field_info.hpp) marks FieldInfo::script. The same list gives
// the field table's entries (their kind from the member's type and unit,
// their range, their default from a config instance, their line) and reads
// a script's table into the config, so the reference, the checks and the
// builder cannot disagree with the config or with each other.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "core/common/field_info.hpp"
#include "core/common/units.hpp"
#include "scenarios/lua/field_reader.hpp"
#include "scenarios/lua/field_tables.hpp"

namespace sluice::scenario {

// As a script writes it (field_tables.cpp): "7", "512KiB", "25GB/s", "500ms".
std::string count_text(std::uint64_t n);
std::string size_text(std::uint64_t bytes);
std::string rate_text(double bytes_per_s);
std::string duration_text(TimeNs ns);

// The script names of an enum a script field holds.
inline const NamedValues<MetaPolicy>& choices_of(MetaPolicy) { return meta_policy_names(); }
inline const NamedValues<DirHashKind>& choices_of(DirHashKind) { return dir_hash_names(); }
inline const NamedValues<MkdirShardRule>& choices_of(MkdirShardRule) { return mkdir_rule_names(); }
inline const NamedValues<SplitShardRule>& choices_of(SplitShardRule) { return split_rule_names(); }
inline const NamedValues<MemKind>& choices_of(MemKind) { return mem_kind_names(); }
inline const NamedValues<StreamDirection>& choices_of(StreamDirection) { return stream_direction_names(); }
inline const NamedValues<SweepPhase>& choices_of(SweepPhase) { return sweep_phase_names(); }
inline const NamedValues<MdPhase>& choices_of(MdPhase) { return md_phase_names(); }
inline const NamedValues<BetweenPhases>& choices_of(BetweenPhases) { return between_phases_names(); }
inline const NamedValues<StripeFlavor>& choices_of(StripeFlavor) { return stripe_flavor_names(); }
inline const NamedValues<proto::ChooserKind>& choices_of(proto::ChooserKind) { return chooser_names(); }

namespace config_fields_detail {

// A declared bound as a FieldDoc's whole-number range (infinite: no limit).
inline std::uint64_t whole(double bound) {
  return std::isinf(bound) ? k_field_no_limit : static_cast<std::uint64_t>(bound);
}

// A list of choices as a script writes it: {"mkdir", "write"}.
template <class E>
std::string choices_text(const std::vector<E>& values) {
  std::string out = "{";
  for (E v : values) out += (out.size() == 1 ? "\"" : ", \"") + name_of(choices_of(E{}), v) + "\"";
  return out + "}";
}

template <class T>
inline constexpr bool is_choice_list = false;
template <class E>
inline constexpr bool is_choice_list<std::vector<E>> = std::is_enum_v<E>;

class DocMaker {
 public:
  explicit DocMaker(std::vector<FieldDoc>& out) : out_(out) {}
  template <class T>
  void operator()(const char* name, const T& value, const FieldInfo& info) {
    if (!info.script) return;
    const std::string doc(info.doc);
    if constexpr (std::is_same_v<T, bool>) {
      out_.push_back(boolean_field(name, value, doc));
    } else if constexpr (std::is_enum_v<T>) {
      out_.push_back(choice_field(name, names_of(choices_of(T{})), name_of(choices_of(T{}), value), doc));
    } else if constexpr (std::is_arithmetic_v<T>) {
      out_.push_back(scalar(name, static_cast<double>(value), info, doc));
    } else if constexpr (std::is_same_v<T, std::string>) {
      out_.push_back(text_field(name, whole(info.max), value, doc));
    } else if constexpr (is_choice_list<T>) {
      using E = typename T::value_type;
      out_.push_back(choice_list_field(name, names_of(choices_of(E{})), choices_text(value), doc));
    } else {
      throw std::logic_error(std::string("internal error: script field ") + name +
                             " is not a flag, a choice or a number");
    }
  }

 private:
  static FieldDoc scalar(const char* name, double value, const FieldInfo& info, const std::string& doc) {
    switch (info.unit) {
      case FieldUnit::bytes:
        return size_field(name, whole(info.min), whole(info.max), size_text(static_cast<std::uint64_t>(value)), doc);
      case FieldUnit::bytes_per_s: return rate_field(name, rate_text(value), doc);
      case FieldUnit::ns: return duration_field(name, duration_text(static_cast<TimeNs>(value)), doc);
      case FieldUnit::factor: return number_field(name, "", info.min, info.max, std::to_string(value), doc);
      case FieldUnit::count:
      case FieldUnit::plain: break;
    }
    return count_field(name, std::string(info.what), whole(info.min), whole(info.max),
                       count_text(static_cast<std::uint64_t>(value)), doc);
  }
  std::vector<FieldDoc>& out_;
};

class ScriptReader {
 public:
  ScriptReader(FieldReader& r, const std::map<std::string, std::function<void()>>& after) : r_(r), after_(after) {}
  template <class T>
  void operator()(const char* name, T& value, const FieldInfo& info) {
    read(name, value, info);
    if (auto it = after_.find(name); it != after_.end()) it->second();
  }

 private:
  template <class T>
  void read(const char* name, T& value, const FieldInfo& info) {
    if (!info.script) return;
    if constexpr (std::is_same_v<T, bool>) {
      if (auto v = r_.boolean(name)) value = *v;
    } else if constexpr (std::is_enum_v<T>) {
      if (auto v = r_.choice(name)) value = value_named(choices_of(T{}), *v);
    } else if constexpr (std::is_arithmetic_v<T>) {
      read_scalar(name, value, info);
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (auto v = r_.text(name)) value = *v;
    } else if constexpr (is_choice_list<T>) {
      if (auto v = r_.choice_list(name)) {
        value.clear();
        for (const std::string& n : *v) value.push_back(value_named(choices_of(typename T::value_type{}), n));
      }
    }
  }

  template <class T>
  void read_scalar(const char* name, T& value, const FieldInfo& info) {
    switch (info.unit) {
      case FieldUnit::bytes:
        if (auto v = r_.size(name)) value = static_cast<T>(*v);
        return;
      case FieldUnit::bytes_per_s:
        if (auto v = r_.rate(name)) value = static_cast<T>(*v);
        return;
      case FieldUnit::ns:
        if (auto v = r_.duration(name)) value = static_cast<T>(*v);
        return;
      case FieldUnit::factor:
        if (auto v = r_.number(name)) value = static_cast<T>(*v);
        return;
      case FieldUnit::count:
      case FieldUnit::plain:
        if (auto v = r_.count(name)) value = static_cast<T>(*v);  // in the table's range, which fits T
        return;
    }
  }
  FieldReader& r_;
  const std::map<std::string, std::function<void()>>& after_;
};

}  // namespace config_fields_detail

// The field table entries of config's script fields, defaults from `defaults`.
template <class Config>
std::vector<FieldDoc> script_field_docs(Config defaults) {
  std::vector<FieldDoc> out;
  config_fields_detail::DocMaker maker(out);
  fields(maker, defaults);
  return out;
}

// Reads the script fields `r`'s table gives into `config` (the others keep
// their values), in the order of its fields() list; after the field named
// by a key of `after`, calls its function (what the list does not describe:
// an alias, a nested table), so fields are read, and sweep axes recorded,
// in the order the table lists them.
template <class Config>
void read_script_fields(FieldReader& r, Config& config,
                        const std::map<std::string, std::function<void()>>& after = {}) {
  config_fields_detail::ScriptReader reader(r, after);
  fields(reader, config);
}

}  // namespace sluice::scenario
