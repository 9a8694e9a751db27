#include "transports/ibverbs/ibverbs_capabilities.hpp"

#include <algorithm>

#include "core/proto/codec.hpp"
#include "core/proto/wire_limits.hpp"

namespace sluice::transport::ibverbs {

std::string_view to_string(LinkLayer layer) {
  switch (layer) {
    case LinkLayer::infiniband: return "infiniband";
    case LinkLayer::ethernet: return "ethernet";
    case LinkLayer::unknown: break;
  }
  return "unknown";
}

bool GidEntry::is_ipv4_mapped() const {
  for (std::size_t i = 0; i < 10; ++i) {
    if (gid[i] != 0) return false;
  }
  return gid[10] == 0xFF && gid[11] == 0xFF;
}

bool GidEntry::is_link_local() const { return gid[0] == 0xFE && (gid[1] & 0xC0) == 0x80; }

bool GidEntry::is_zero() const {
  return std::all_of(gid.begin(), gid.end(), [](std::uint8_t b) { return b == 0; });
}

std::string GidEntry::ipv4_text() const {
  if (!is_ipv4_mapped()) return "";
  return std::to_string(gid[12]) + "." + std::to_string(gid[13]) + "." + std::to_string(gid[14]) + "." +
         std::to_string(gid[15]);
}

Capabilities declare_capabilities(std::span<const DeviceInfo> devices, const PlatformSupport& platform) {
  Capabilities c;
  c.region_kinds = {RegionKind::host};
  if (platform.peer_memory) c.region_kinds.push_back(RegionKind::cuda);
  if (platform.dmabuf_registration) c.region_kinds.push_back(RegionKind::dmabuf);
  c.max_message_bytes = proto::k_frame_header_bytes + proto::k_max_message_bytes;
  std::uint64_t transfer = k_ibv_max_transfer_bytes;
  for (const DeviceInfo& d : devices) {
    for (const PortInfo& p : d.ports) {
      if (p.active && p.max_msg_bytes > 0) transfer = std::min<std::uint64_t>(transfer, p.max_msg_bytes);
    }
    if (d.max_mr_bytes > 0) transfer = std::min(transfer, d.max_mr_bytes);
  }
  c.max_transfer_bytes = transfer;
  c.rdma_write = true;
  c.rdma_read = true;
  c.stream = false;
  c.max_rails = k_max_rails;
  c.max_connections_per_rail = k_max_connections_per_rail;
  return c;
}

std::optional<GidEntry> select_gid(const PortInfo& port) {
  if (port.link_layer == LinkLayer::infiniband) {
    for (const GidEntry& g : port.gids) {
      if (g.index == 0 && !g.is_zero()) return g;
    }
    return std::nullopt;
  }
  // Ranked choice; lower is better.
  const auto rank = [](const GidEntry& g) {
    if (g.type == GidType::roce_v2 && g.is_ipv4_mapped()) return 0;
    if (g.type == GidType::roce_v2 && !g.is_link_local()) return 1;
    if (g.type == GidType::roce_v2) return 2;
    if (g.type == GidType::roce_v1) return 3;
    return 4;
  };
  const GidEntry* best = nullptr;
  for (const GidEntry& g : port.gids) {
    if (g.is_zero() || rank(g) == 4) continue;
    if (best == nullptr || rank(g) < rank(*best) || (rank(g) == rank(*best) && g.index < best->index)) best = &g;
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

Status devices_usable(std::span<const DeviceInfo> devices) {
  if (devices.empty()) {
    return error(StatusCode::unavailable,
                 "no RDMA device (ibv_get_device_list found none: no HCA or RoCE NIC, and no soft-RoCE; "
                 "`rdma link add rxe0 type rxe netdev <if>` creates one where the kernel has rdma_rxe)");
  }
  std::string down;
  for (const DeviceInfo& d : devices) {
    for (const PortInfo& p : d.ports) {
      if (p.active) return ok_status();
      down += (down.empty() ? "" : ", ") + d.name + " port " + std::to_string(p.port_num) + " down";
    }
    if (d.ports.empty()) down += (down.empty() ? "" : ", ") + d.name + " has no ports";
  }
  return error(StatusCode::unavailable, std::to_string(devices.size()) + " RDMA device" +
                                            (devices.size() == 1 ? "" : "s") + ", none with an active port (" + down +
                                            ")");
}

std::vector<std::string> loopback_rail_addresses(std::span<const DeviceInfo> devices, std::uint32_t rails) {
  std::vector<std::string> usable;
  for (const DeviceInfo& d : devices) {
    for (const PortInfo& p : d.ports) {
      if (!p.active) continue;
      std::optional<GidEntry> g = select_gid(p);
      if (g && g->is_ipv4_mapped()) usable.push_back(g->ipv4_text() + ":0");
    }
  }
  std::vector<std::string> out;
  if (usable.empty()) return out;
  for (std::uint32_t r = 0; r < rails; ++r) out.push_back(usable[r % usable.size()]);
  return out;
}

std::string describe_devices(std::span<const DeviceInfo> devices) {
  std::string out;
  for (const DeviceInfo& d : devices) {
    for (const PortInfo& p : d.ports) {
      if (!out.empty()) out += "\n";
      out += d.name + ": port " + std::to_string(p.port_num) + " " + std::string(to_string(p.link_layer)) +
             (p.active ? " active" : " down");
      if (std::optional<GidEntry> g = select_gid(p)) {
        const char* type = g->type == GidType::roce_v2 ? "RoCE v2" : g->type == GidType::roce_v1 ? "RoCE v1" : "IB";
        out += ", gid " + std::to_string(g->index) + " (" + type +
               (g->is_ipv4_mapped() ? " " + g->ipv4_text() : std::string()) + ")";
      }
    }
  }
  return out;
}

}  // namespace sluice::transport::ibverbs
