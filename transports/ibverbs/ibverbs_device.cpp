#include "transports/ibverbs/ibverbs_device.hpp"

#include <filesystem>
#include <memory>

#if SLUICE_HAVE_IBVERBS
#include <infiniband/verbs.h>
#endif

namespace sluice::transport::ibverbs {

std::string_view build_unavailable_reason() {
#if SLUICE_HAVE_IBVERBS
  return "";
#else
  return "built without rdma-core (" SLUICE_IBVERBS_WHY ")";
#endif
}

PlatformSupport detect_platform() {
  PlatformSupport p;
#if SLUICE_HAVE_IBV_REG_DMABUF_MR
  p.dmabuf_registration = true;
#endif
  std::error_code ec;
  p.peer_memory = std::filesystem::exists("/sys/module/nvidia_peermem", ec) ||
                  std::filesystem::exists("/sys/kernel/mm/memory_peers/nv_mem/version", ec);
  return p;
}

#if SLUICE_HAVE_IBVERBS
namespace {

LinkLayer link_layer_of(std::uint8_t layer) {
  switch (layer) {
    case IBV_LINK_LAYER_INFINIBAND: return LinkLayer::infiniband;
    case IBV_LINK_LAYER_ETHERNET: return LinkLayer::ethernet;
    default: return LinkLayer::unknown;
  }
}

std::uint32_t mtu_bytes(ibv_mtu mtu) {
  switch (mtu) {
    case IBV_MTU_256: return 256;
    case IBV_MTU_512: return 512;
    case IBV_MTU_1024: return 1024;
    case IBV_MTU_2048: return 2048;
    case IBV_MTU_4096: return 4096;
  }
  return 0;
}

void read_gids(ibv_context* context, std::uint8_t port_num, const ibv_port_attr& attr, PortInfo& port) {
  const std::uint32_t entries =
      std::min<std::uint32_t>(static_cast<std::uint32_t>(attr.gid_tbl_len), k_ibv_max_gids_per_port);
  for (std::uint32_t i = 0; i < entries; ++i) {
    ibv_gid_entry entry{};
    if (ibv_query_gid_ex(context, port_num, i, &entry, 0) != 0) continue;  // an empty slot (ENODATA)
    GidEntry g;
    g.index = entry.gid_index;
    for (std::size_t b = 0; b < 16; ++b) g.gid[b] = entry.gid.raw[b];
    g.type = entry.gid_type == IBV_GID_TYPE_ROCE_V2   ? GidType::roce_v2
             : entry.gid_type == IBV_GID_TYPE_ROCE_V1 ? GidType::roce_v1
                                                      : GidType::ib;
    if (!g.is_zero()) port.gids.push_back(g);
  }
}

}  // namespace

Result<std::vector<DeviceInfo>> discover_devices() {
  std::vector<DeviceInfo> out;
  int count = 0;
  std::unique_ptr<ibv_device*, decltype(&ibv_free_device_list)> list(ibv_get_device_list(&count),
                                                                     &ibv_free_device_list);
  if (!list) return out;  // no verbs devices (ENOSYS without the kernel modules)
  for (int i = 0; i < count; ++i) {
    ibv_device* device = list.get()[i];
    ibv_context* context = ibv_open_device(device);
    if (context == nullptr) continue;
    DeviceInfo info;
    info.name = ibv_get_device_name(device);
    ibv_device_attr attr{};
    if (ibv_query_device(context, &attr) == 0) {
      info.max_qp_wr = static_cast<std::uint32_t>(attr.max_qp_wr);
      info.max_qp_rd_atom = static_cast<std::uint32_t>(attr.max_qp_rd_atom);
      info.max_mr_bytes = attr.max_mr_size;
      const std::uint32_t ports = std::min<std::uint32_t>(attr.phys_port_cnt, k_ibv_max_ports_per_device);
      for (std::uint32_t p = 1; p <= ports; ++p) {
        ibv_port_attr port_attr{};
        if (ibv_query_port(context, static_cast<std::uint8_t>(p), &port_attr) != 0) continue;
        PortInfo port;
        port.port_num = static_cast<std::uint8_t>(p);
        port.active = port_attr.state == IBV_PORT_ACTIVE;
        port.link_layer = link_layer_of(port_attr.link_layer);
        port.max_msg_bytes = port_attr.max_msg_sz;
        port.active_mtu_bytes = mtu_bytes(port_attr.active_mtu);
        read_gids(context, port.port_num, port_attr, port);
        info.ports.push_back(std::move(port));
      }
    }
    ibv_close_device(context);
    out.push_back(std::move(info));
  }
  return out;
}
#else
Result<std::vector<DeviceInfo>> discover_devices() {
  return error(StatusCode::unavailable, std::string(build_unavailable_reason()));
}
#endif

}  // namespace sluice::transport::ibverbs
