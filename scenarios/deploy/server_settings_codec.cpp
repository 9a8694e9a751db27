#include "scenarios/deploy/server_settings_codec.hpp"

#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "core/common/field_info.hpp"
#include "core/namespace/namespace_config.hpp"

namespace sluice::emulate {
namespace {

using json = nlohmann::json;

// ---- the fields of each config, one list for writing and reading -------------------

// Each config's fields are listed beside it in the core (fields(v, config),
// core/common/field_info.hpp); the wire's buddy group descriptor has its own.
template <class Io>
void fields(Io& io, proto::BuddyGroupDesc& c) {
  c.io(io);  // group, primary, secondary: the wire's own names
}

// A field added to one of these configs changes its size: list it in its
// fields() beside the config (or say there why a node process does not need
// it), then update the size here. (x86-64, libstdc++: the builds this project makes.)
static_assert(sizeof(MgmtConfig) == 72 && sizeof(CapacityPoolLimits) == 16);
static_assert(sizeof(MetaServiceConfig) == 424 && sizeof(NamespaceConfig) == 56 && sizeof(MetaOpUnits) == 32 &&
              sizeof(MetaMirrorConfig) == 128);
static_assert(sizeof(StorageServiceConfig) == 312 && sizeof(StorageMirrorConfig) == 120 && sizeof(RpcLimits) == 64);

// A config with a fields() list.
template <class T>
concept Listed = requires(T& t, int& io) {
  fields(io, t);
};

// ---- enums by name ----------------------------------------------------------------

// The last value of each enum the codec carries (values are 0..last).
constexpr std::uint8_t last_value(MetaPolicy) { return static_cast<std::uint8_t>(MetaPolicy::path_hash); }
constexpr std::uint8_t last_value(DirHashKind) { return static_cast<std::uint8_t>(DirHashKind::rendezvous); }
constexpr std::uint8_t last_value(MkdirShardRule) {
  return static_cast<std::uint8_t>(MkdirShardRule::random_near_root);
}
constexpr std::uint8_t last_value(SplitShardRule) { return static_cast<std::uint8_t>(SplitShardRule::random); }
constexpr std::uint8_t last_value(StripeFlavor) { return static_cast<std::uint8_t>(StripeFlavor::lustre); }
constexpr std::uint8_t last_value(proto::ChooserKind) {
  return static_cast<std::uint8_t>(proto::ChooserKind::space_weighted_qos);
}

template <class E>
std::string names_of() {
  std::string names;
  for (std::uint8_t v = 0; v <= last_value(E{}); ++v) {
    names += (names.empty() ? "" : ", ") + std::string(to_string(static_cast<E>(v)));
  }
  return names;
}

// ---- writing ----------------------------------------------------------------------

class Writer {
 public:
  explicit Writer(json& out) : out_(out) {}
  template <class T>
  void operator()(const char* name, T& value, const FieldInfo& /*info*/ = {}) {
    out_[name] = encode(value);
  }

 private:
  template <class T>
  static json encode(T& value) {
    if constexpr (std::is_enum_v<T>) {
      return std::string(to_string(value));
    } else if constexpr (Listed<T>) {
      json object = json::object();
      Writer nested(object);
      fields(nested, value);
      return object;
    } else if constexpr (requires { value.has_value(); }) {
      return value ? encode(*value) : json(nullptr);
    } else if constexpr (requires { value.begin(); }) {
      json array = json::array();
      for (auto& item : value) array.push_back(encode(item));
      return array;
    } else {
      return value;
    }
  }
  json& out_;
};

// ---- reading ----------------------------------------------------------------------

// "1..4096" (a field's declared range, core/common/field_info.hpp).
std::string range_text(const FieldInfo& info) {
  auto number = [](double v) { return std::isinf(v) ? std::string("any") : fmt::format("{}", v); };
  return number(info.min) + ".." + number(info.max);
}

// Reads an object's keys into a config's fields; the first problem is kept.
class Reader {
 public:
  Reader(const json& object, std::string path, std::string& problem)
      : object_(object), path_(std::move(path)), problem_(problem) {}

  template <class T>
  void operator()(const char* name, T& value, const FieldInfo& info = {}) {
    known_.insert(name);
    if (!problem_.empty() || !object_.contains(name)) return;
    decode(object_.at(name), path_ + name, value);
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      if (problem_.empty() && info.unit != FieldUnit::plain &&
          (static_cast<double>(value) < info.min || static_cast<double>(value) > info.max)) {
        problem_ = path_ + name + ": " + std::to_string(value) + " is outside " + range_text(info);
      }
    }
  }
  // After the fields: a key that names none of them.
  void refuse_unknown_keys() {
    for (const auto& [key, value] : object_.items()) {
      if (problem_.empty() && !known_.contains(key)) problem_ = path_ + key + ": not a setting of this service";
    }
  }

 private:
  void fail(const std::string& path, const std::string& what) {
    if (problem_.empty()) problem_ = path + ": " + what;
  }

  template <class T>
  void decode(const json& j, const std::string& path, T& value) {
    if constexpr (std::is_same_v<T, bool>) {
      if (!j.is_boolean()) return fail(path, "must be true or false");
      value = j.get<bool>();
    } else if constexpr (std::is_enum_v<T>) {
      decode_enum(j, path, value);
    } else if constexpr (std::unsigned_integral<T>) {
      const bool whole = j.is_number_unsigned() || (j.is_number_integer() && j.get<std::int64_t>() >= 0);
      if (!whole || j.get<std::uint64_t>() > std::numeric_limits<T>::max()) {
        return fail(path, "must be a whole number 0.." + std::to_string(std::numeric_limits<T>::max()));
      }
      value = static_cast<T>(j.get<std::uint64_t>());
    } else if constexpr (std::same_as<T, TimeNs>) {
      if (!j.is_number_integer() || j.get<std::int64_t>() < 0) return fail(path, "must be a whole number of ns >= 0");
      value = j.get<std::int64_t>();
    } else if constexpr (std::floating_point<T>) {
      if (!j.is_number() || !std::isfinite(j.get<double>()) || j.get<double>() < 0) {
        return fail(path, "must be a number >= 0");
      }
      value = j.get<double>();
    } else if constexpr (Listed<T>) {
      decode_object(j, path, value);
    } else if constexpr (requires { value.has_value(); }) {
      if (j.is_null()) {
        value.reset();
        return;
      }
      value.emplace();
      decode(j, path, *value);
    } else {
      decode_list(j, path, value);
    }
  }

  template <class T>
  void decode_object(const json& j, const std::string& path, T& value) {
    if (!j.is_object()) return fail(path, "must be an object");
    Reader nested(j, path + ".", problem_);
    fields(nested, value);
    nested.refuse_unknown_keys();
  }

  template <class T>
  void decode_list(const json& j, const std::string& path, std::vector<T>& list) {
    if (!j.is_array()) return fail(path, "must be an array");
    list.assign(j.size(), T{});
    for (std::size_t i = 0; i < j.size() && problem_.empty(); ++i) {
      decode(j[i], path + "[" + std::to_string(i) + "]", list[i]);
    }
  }

  template <class E>
  void decode_enum(const json& j, const std::string& path, E& value) {
    if (j.is_string()) {
      for (std::uint8_t v = 0; v <= last_value(E{}); ++v) {
        if (to_string(static_cast<E>(v)) == j.get<std::string>()) {
          value = static_cast<E>(v);
          return;
        }
      }
    }
    fail(path, "must be one of " + names_of<E>());
  }

  const json& object_;
  const std::string path_;  // "meta.ns." for the keys of meta's ns
  std::string& problem_;
  std::set<std::string> known_;
};

}  // namespace

json server_settings_to_json(const NodeRunOptions::FsSettings& fs) {
  NodeRunOptions::FsSettings copy = fs;  // the field lists take configs by reference
  json out = json::object();
  Writer w(out);
  w("mgmt", copy.mgmt);
  w("meta", copy.meta);
  w("storage", copy.storage);
  return out;
}

Result<NodeRunOptions::FsSettings> server_settings_from_json(const json& document) {
  if (!document.is_object()) return error(StatusCode::invalid_argument, "server settings: must be a JSON object");
  NodeRunOptions::FsSettings fs;
  std::string problem;
  Reader top(document, "", problem);
  top("mgmt", fs.mgmt);
  top("meta", fs.meta);
  top("storage", fs.storage);
  top.refuse_unknown_keys();
  if (problem.empty()) {
    if (Status st = validate_config(fs.meta.ns); !st.ok()) problem = "meta.ns: " + st.message();
  }
  if (problem.empty()) {
    if (Status st = validate(fs.mgmt.pools); !st.ok()) problem = "mgmt.pools: " + st.message();
  }
  if (!problem.empty()) return error(StatusCode::invalid_argument, "server settings: " + problem);
  return fs;
}

}  // namespace sluice::emulate
