// What the ibverbs transport knows about this machine's RDMA devices, as plain
// data (no verbs types, so the decisions below are unit-tested without a
// device), and the decisions taken from it: which capabilities to declare,
// which GID a port uses, and why the transport is unavailable.
//
// Filled by discover_devices() (ibverbs_device.cpp) from ibv_get_device_list,
// ibv_query_device, ibv_query_port and ibv_query_gid_ex, as NCCL's
// net_ib init does (src/transport/net_ib/init.cc: ncclIbInitDevices).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.hpp"
#include "transports/transport.hpp"

namespace sluice::transport::ibverbs {

enum class LinkLayer : std::uint8_t { unknown = 0, infiniband = 1, ethernet = 2 };
std::string_view to_string(LinkLayer layer);

// IBV_GID_TYPE_IB / _ROCE_V1 / _ROCE_V2.
enum class GidType : std::uint8_t { ib = 0, roce_v1 = 1, roce_v2 = 2 };

struct GidEntry {
  std::uint32_t index = 0;
  std::array<std::uint8_t, 16> gid{};
  GidType type = GidType::ib;

  // ::ffff:a.b.c.d, the form RoCE v2 GIDs of IPv4 addresses take.
  bool is_ipv4_mapped() const;
  // fe80::/10: the GID derived from the MAC, present on every RoCE port.
  bool is_link_local() const;
  bool is_zero() const;
  std::string ipv4_text() const;  // "a.b.c.d" for an IPv4-mapped GID, else ""
};

struct PortInfo {
  std::uint8_t port_num = 1;
  bool active = false;  // IBV_PORT_ACTIVE
  LinkLayer link_layer = LinkLayer::unknown;
  std::uint32_t max_msg_bytes = 0;  // ibv_port_attr::max_msg_sz
  std::uint32_t active_mtu_bytes = 0;
  std::vector<GidEntry> gids;  // the non-zero entries of the GID table
};

struct DeviceInfo {
  std::string name;  // "mlx5_0", "rxe0"
  std::uint32_t max_qp_wr = 0;
  std::uint32_t max_qp_rd_atom = 0;  // RDMA READs in flight per QP (responder resources)
  std::uint64_t max_mr_bytes = 0;
  std::vector<PortInfo> ports;
};

// What the platform offers beyond the devices.
struct PlatformSupport {
  // ibv_reg_dmabuf_mr was in the rdma-core this was built with (rdma-core >= 34).
  bool dmabuf_registration = false;
  // A peer-memory client lets ibv_reg_mr pin CUDA memory: nvidia-peermem
  // (/sys/module/nvidia_peermem) or the older nv_peer_mem
  // (/sys/kernel/mm/memory_peers/nv_mem/version), the files NCCL checks in
  // ncclIbGdrSupport (net_ib/gdr.cc).
  bool peer_memory = false;
};

// The transport's own limits.
// One put/get (BeeGFS and Lustre cap chunks at 4 GiB; scenarios use <= 64 MiB;
// many HCAs' max_msg_sz is 2 GiB).
inline constexpr std::uint64_t k_ibv_max_transfer_bytes = 1ULL << 30;

// The capabilities declared for these devices: host memory always; cuda when
// a peer-memory client is loaded; dmabuf when the build has
// ibv_reg_dmabuf_mr; RDMA write and read (one-sided); max transfer the
// smallest max_msg_sz over active ports, capped at k_ibv_max_transfer_bytes;
// max message as TCP (a proto frame at its limit, fragmented over SENDs). With
// no devices the same declaration is made as for a device with the defaults,
// so `sluice backends` can show what the transport would offer.
Capabilities declare_capabilities(std::span<const DeviceInfo> devices, const PlatformSupport& platform);

// The GID a port's queue pairs use, as NCCL's ncclIbGetGidIndex chooses
// (net_ib/common.cc; NCCL_IB_ROCE_VERSION_NUM=2, NCCL_IB_ADDR_FAMILY=AF_INET):
// InfiniBand: index 0. RoCE: a RoCE v2 IPv4-mapped GID first, then a RoCE v2
// global (not link-local) GID, then any RoCE v2, then RoCE v1. nullopt when
// the port has none. rdma_cm makes the same choice from the rail's IP address;
// this one is for discovery, listing and the loopback addresses.
std::optional<GidEntry> select_gid(const PortInfo& port);

// ok when at least one device has an active port; otherwise unavailable with
// the reason ("no RDMA device: ..." or "2 RDMA devices, none with an active
// port (mlx5_0 port 1 down, ...)").
Status devices_usable(std::span<const DeviceInfo> devices);

// Local rail addresses for running on one host: rail r on the IPv4 address of
// the r-th usable port (round-robin over them), port 0: "a.b.c.d:0". Empty
// when no port has an IPv4-mapped GID (an IB port without IPoIB address).
std::vector<std::string> loopback_rail_addresses(std::span<const DeviceInfo> devices, std::uint32_t rails);

// One line per device for logs: "mlx5_0: port 1 ethernet active, gid 3 (RoCE v2 10.0.0.1)".
std::string describe_devices(std::span<const DeviceInfo> devices);

}  // namespace sluice::transport::ibverbs
