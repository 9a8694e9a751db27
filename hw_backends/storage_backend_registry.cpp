#include <cassert>
#include <map>
#include <mutex>

#include "hw_backends/storage_backend.hpp"

namespace sluice::hw {
namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, StorageBackendEntry, std::less<>> entries;
};

// Function-local: registrars in other translation units run in any order.
Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

std::string_view to_string(DirectIoMode mode) {
  switch (mode) {
    case DirectIoMode::off: return "off";
    case DirectIoMode::on: return "on";
    case DirectIoMode::auto_: return "auto";
  }
  return "unknown";
}

bool register_storage_backend(StorageBackendEntry entry) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  assert(!r.entries.contains(entry.name) && "storage backend registered twice");
  std::string name = entry.name;
  r.entries.emplace(std::move(name), std::move(entry));
  return true;
}

std::vector<StorageBackendListing> list_storage_backends() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  std::vector<StorageBackendListing> out;
  for (const auto& [name, entry] : r.entries) {
    StorageBackendListing listing;
    listing.name = name;
    const Status probe = entry.probe ? entry.probe() : ok_status();
    listing.available = probe.ok();
    listing.why_unavailable = probe.ok() ? "" : probe.message();
    if (entry.capabilities) listing.capabilities = entry.capabilities();
    out.push_back(std::move(listing));
  }
  return out;
}

Result<std::unique_ptr<StorageBackend>> create_storage_backend(std::string_view name,
                                                               const StorageTargetConfig& config) {
  std::function<Result<std::unique_ptr<StorageBackend>>(const StorageTargetConfig&)> create;
  {
    Registry& r = registry();
    std::lock_guard lock(r.mu);
    auto it = r.entries.find(name);
    if (it == r.entries.end()) {
      std::string names;
      for (const auto& [known, entry] : r.entries) names += (names.empty() ? "" : ", ") + known;
      return error(StatusCode::not_found, "storage backend registry: no backend named '" + std::string(name) +
                                              "' (registered: " + (names.empty() ? "none" : names) + ")");
    }
    if (it->second.probe) {
      const Status probe = it->second.probe();
      if (!probe.ok()) {
        return error(StatusCode::unavailable,
                     "storage backend '" + std::string(name) + "' unavailable: " + probe.message());
      }
    }
    create = it->second.create;
  }
  return create(config);
}

}  // namespace sluice::hw
