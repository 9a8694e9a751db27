// Device discovery through libibverbs, into the plain data of
// ibverbs_capabilities.hpp, and the platform checks (dmabuf in the build, a
// peer-memory client loaded). Without rdma-core in the build every call
// answers unavailable with the build's reason.
#pragma once

#include <vector>

#include "core/common/status.hpp"
#include "transports/ibverbs/ibverbs_capabilities.hpp"

namespace sluice::transport::ibverbs {

// Ports per device examined (ConnectX has 1-2; phys_port_cnt is a u8).
inline constexpr std::uint32_t k_ibv_max_ports_per_device = 8;
// GID table entries examined per port (RoCE tables hold 2 per IP address:
// v1 and v2; 128 is mlx5's default table size).
inline constexpr std::uint32_t k_ibv_max_gids_per_port = 128;

// Every device with its ports and GIDs; an empty list when there is none.
// unavailable: built without rdma-core. A device that cannot be opened or
// queried is skipped (the log line says why).
Result<std::vector<DeviceInfo>> discover_devices();

PlatformSupport detect_platform();

// Why the build has no ibverbs ("" when it has it).
std::string_view build_unavailable_reason();

}  // namespace sluice::transport::ibverbs
