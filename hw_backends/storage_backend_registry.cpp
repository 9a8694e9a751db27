#include "base/registry.hpp"
#include "hw_backends/storage_backend.hpp"

namespace sluice::hw {
namespace {

// Function-local: registrars in other translation units run in any order.
base::Registry<StorageBackendEntry>& registry() {
  static base::Registry<StorageBackendEntry> r("storage backend");
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

bool register_storage_backend(StorageBackendEntry entry) { return registry().add_or_abort(std::move(entry)); }

std::vector<StorageBackendListing> list_storage_backends() { return registry().list_as<StorageBackendListing>(); }

Result<std::unique_ptr<StorageBackend>> create_storage_backend(std::string_view name,
                                                               const StorageTargetConfig& config) {
  return registry().create(name, config);
}

}  // namespace sluice::hw
