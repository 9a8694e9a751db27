#include "transports/ibverbs/ibverbs_capabilities.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "core/proto/codec.hpp"
#include "core/proto/wire_limits.hpp"

namespace sluice::transport::ibverbs {
namespace {

GidEntry gid(std::uint32_t index, GidType type, std::array<std::uint8_t, 16> raw) { return GidEntry{index, raw, type}; }

std::array<std::uint8_t, 16> ipv4_mapped(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
  return {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, a, b, c, d};
}
constexpr std::array<std::uint8_t, 16> k_link_local{0xFE, 0x80, 0,    0,    0,    0,    0,    0,
                                                    0x02, 0x11, 0x22, 0xFF, 0xFE, 0x33, 0x44, 0x55};
constexpr std::array<std::uint8_t, 16> k_global_v6{0x20, 0x01, 0x0D, 0xB8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};

PortInfo roce_port(bool active, std::uint32_t max_msg, std::vector<GidEntry> gids) {
  PortInfo p;
  p.active = active;
  p.link_layer = LinkLayer::ethernet;
  p.max_msg_bytes = max_msg;
  p.gids = std::move(gids);
  return p;
}

DeviceInfo device(std::string name, std::vector<PortInfo> ports) {
  DeviceInfo d;
  d.name = std::move(name);
  d.ports = std::move(ports);
  return d;
}

TEST(IbverbsCapabilities, DeclaresHostRdmaReadWriteAndNoStream) {
  const Capabilities c = declare_capabilities({}, PlatformSupport{});
  EXPECT_EQ(c.region_kinds, std::vector<RegionKind>{RegionKind::host});
  EXPECT_TRUE(c.rdma_write);
  EXPECT_TRUE(c.rdma_read);
  EXPECT_FALSE(c.stream);
  EXPECT_TRUE(c.can_put());
  EXPECT_TRUE(c.can_get());
  EXPECT_EQ(c.max_message_bytes, proto::k_frame_header_bytes + proto::k_max_message_bytes);
  EXPECT_EQ(c.max_transfer_bytes, k_ibv_max_transfer_bytes);
  EXPECT_EQ(c.max_rails, k_max_rails);
  EXPECT_EQ(c.to_string(),
            "host; max message 16777236 B; max transfer 1 GiB; rdma_write rdma_read; 16 rails x 16 connections");
}

TEST(IbverbsCapabilities, DeclaresGpuKindsOnlyWhenThePlatformReachesThem) {
  EXPECT_EQ(declare_capabilities({}, PlatformSupport{false, true}).region_kinds,
            (std::vector<RegionKind>{RegionKind::host, RegionKind::cuda}));
  EXPECT_EQ(declare_capabilities({}, PlatformSupport{true, false}).region_kinds,
            (std::vector<RegionKind>{RegionKind::host, RegionKind::dmabuf}));
  const Capabilities both = declare_capabilities({}, PlatformSupport{true, true});
  EXPECT_TRUE(both.reaches(RegionKind::cuda));
  EXPECT_TRUE(both.reaches(RegionKind::dmabuf));
}

TEST(IbverbsCapabilities, MaxTransferIsTheSmallestActivePortMessageLimit) {
  const std::vector<DeviceInfo> devices{
      device("mlx5_0", {roce_port(true, 1U << 31, {}), roce_port(false, 4096, {})}),  // a down port does not count
      device("rxe0", {roce_port(true, 1U << 26, {})})};
  EXPECT_EQ(declare_capabilities(devices, {}).max_transfer_bytes, 1ULL << 26);
  DeviceInfo small_mr = device("x", {roce_port(true, 1U << 31, {})});
  small_mr.max_mr_bytes = 1ULL << 20;
  EXPECT_EQ(declare_capabilities(std::vector<DeviceInfo>{small_mr}, {}).max_transfer_bytes, 1ULL << 20);
  // Never above the transport's own cap.
  EXPECT_EQ(declare_capabilities(std::vector<DeviceInfo>{device("y", {roce_port(true, 0xFFFFFFFFu, {})})}, {})
                .max_transfer_bytes,
            k_ibv_max_transfer_bytes);
}

TEST(IbverbsGidSelection, PrefersRoceV2Ipv4ThenGlobalV2ThenAnyV2ThenV1) {
  const GidEntry v1_ip = gid(0, GidType::roce_v1, ipv4_mapped(10, 0, 0, 1));
  const GidEntry v2_ll = gid(1, GidType::roce_v2, k_link_local);
  const GidEntry v2_global = gid(2, GidType::roce_v2, k_global_v6);
  const GidEntry v2_ip = gid(3, GidType::roce_v2, ipv4_mapped(10, 0, 0, 1));
  EXPECT_EQ(select_gid(roce_port(true, 0, {v1_ip, v2_ll, v2_global, v2_ip}))->index, 3u);
  EXPECT_EQ(select_gid(roce_port(true, 0, {v1_ip, v2_ll, v2_global}))->index, 2u);
  EXPECT_EQ(select_gid(roce_port(true, 0, {v1_ip, v2_ll}))->index, 1u);
  EXPECT_EQ(select_gid(roce_port(true, 0, {v1_ip}))->index, 0u);
  EXPECT_FALSE(select_gid(roce_port(true, 0, {})).has_value());
  // Ties go to the lower index.
  const GidEntry v2_ip_b = gid(5, GidType::roce_v2, ipv4_mapped(10, 0, 0, 2));
  EXPECT_EQ(select_gid(roce_port(true, 0, {v2_ip_b, v2_ip}))->index, 3u);
}

TEST(IbverbsGidSelection, InfinibandUsesIndexZero) {
  PortInfo ib;
  ib.link_layer = LinkLayer::infiniband;
  ib.gids = {gid(1, GidType::ib, k_global_v6), gid(0, GidType::ib, k_link_local)};
  EXPECT_EQ(select_gid(ib)->index, 0u);
  ib.gids = {gid(1, GidType::ib, k_global_v6)};
  EXPECT_FALSE(select_gid(ib).has_value());
}

TEST(IbverbsGidSelection, RecognisesIpv4MappedAndLinkLocalGids) {
  const GidEntry ip = gid(0, GidType::roce_v2, ipv4_mapped(192, 168, 7, 9));
  EXPECT_TRUE(ip.is_ipv4_mapped());
  EXPECT_EQ(ip.ipv4_text(), "192.168.7.9");
  EXPECT_FALSE(ip.is_link_local());
  const GidEntry ll = gid(0, GidType::roce_v2, k_link_local);
  EXPECT_TRUE(ll.is_link_local());
  EXPECT_FALSE(ll.is_ipv4_mapped());
  EXPECT_EQ(ll.ipv4_text(), "");
  EXPECT_TRUE(GidEntry{}.is_zero());
}

TEST(IbverbsAvailability, NoDeviceGivesAClearReason) {
  const Status st = devices_usable({});
  EXPECT_EQ(st.code(), StatusCode::unavailable);
  EXPECT_NE(st.message().find("no RDMA device"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("soft-RoCE"), std::string::npos) << st.message();
}

TEST(IbverbsAvailability, DevicesWithoutAnActivePortAreNamed) {
  DeviceInfo portless = device("odd0", {});
  const std::vector<DeviceInfo> down{device("mlx5_0", {roce_port(false, 0, {})}), portless};
  const Status st = devices_usable(down);
  EXPECT_EQ(st.code(), StatusCode::unavailable);
  EXPECT_NE(st.message().find("2 RDMA devices, none with an active port"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("mlx5_0 port 1 down"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("odd0 has no ports"), std::string::npos) << st.message();
  const std::vector<DeviceInfo> one_up{device("mlx5_0", {roce_port(false, 0, {}), roce_port(true, 0, {})})};
  EXPECT_TRUE(devices_usable(one_up).ok());
}

TEST(IbverbsLoopback, SpreadsRailsOverActivePortsWithIpv4Gids) {
  const std::vector<DeviceInfo> devices{
      device("a", {roce_port(true, 0, {gid(3, GidType::roce_v2, ipv4_mapped(10, 0, 0, 1))})}),
      device("b", {roce_port(false, 0, {gid(3, GidType::roce_v2, ipv4_mapped(10, 0, 0, 9))})}),
      device("c", {roce_port(true, 0, {gid(1, GidType::roce_v2, ipv4_mapped(10, 0, 1, 1))})})};
  EXPECT_EQ(loopback_rail_addresses(devices, 3), (std::vector<std::string>{"10.0.0.1:0", "10.0.1.1:0", "10.0.0.1:0"}));
  const std::vector<DeviceInfo> no_ip{device("a", {roce_port(true, 0, {gid(0, GidType::roce_v2, k_link_local)})})};
  EXPECT_TRUE(loopback_rail_addresses(no_ip, 2).empty());
}

TEST(IbverbsDescribe, NamesPortsLinkLayerAndChosenGid) {
  const std::vector<DeviceInfo> devices{
      device("rxe0", {roce_port(true, 0, {gid(1, GidType::roce_v2, ipv4_mapped(10, 0, 0, 5))})})};
  EXPECT_EQ(describe_devices(devices), "rxe0: port 1 ethernet active, gid 1 (RoCE v2 10.0.0.5)");
  EXPECT_EQ(to_string(LinkLayer::infiniband), "infiniband");
  EXPECT_EQ(to_string(LinkLayer::unknown), "unknown");
}

}  // namespace
}  // namespace sluice::transport::ibverbs
