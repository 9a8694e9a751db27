// The ibverbs transport's registry entry: probe, declared capabilities,
// loopback addresses and the factory. Linked whole-archive through
// sluice_transports, with or without rdma-core in the build.
#include <utility>

#include "transports/ibverbs/ibverbs_device.hpp"
#include "transports/ibverbs/ibverbs_transport.hpp"

namespace sluice::transport::ibverbs {

Status ibverbs_probe() {
  Result<std::vector<DeviceInfo>> devices = discover_devices();
  if (!devices.ok()) return devices.status();
  return devices_usable(*devices);
}

Capabilities ibverbs_capabilities() {
  Result<std::vector<DeviceInfo>> devices = discover_devices();
  const std::vector<DeviceInfo> none;
  return declare_capabilities(devices.ok() ? *devices : none, detect_platform());
}

std::vector<std::string> ibverbs_loopback_rails(std::uint32_t rails) {
  Result<std::vector<DeviceInfo>> devices = discover_devices();
  if (!devices.ok()) return {};
  return loopback_rail_addresses(*devices, rails);
}

namespace {
[[maybe_unused]] const bool k_registered =
    register_transport(TransportEntry{"ibverbs", [] { return ibverbs_probe(); }, [] { return ibverbs_capabilities(); },
                                      [](const TransportConfig& config) -> Result<std::unique_ptr<Transport>> {
                                        Result<std::unique_ptr<IbverbsTransport>> made = make_ibverbs_transport(config);
                                        if (!made.ok()) return made.status();
                                        return std::unique_ptr<Transport>(std::move(made).value());
                                      },
                                      [](std::uint32_t rails) { return ibverbs_loopback_rails(rails); }});
}  // namespace

}  // namespace sluice::transport::ibverbs
