#include "transports/ibverbs/ibverbs_wire.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "transports/ibverbs/ibverbs_address.hpp"
#include "transports/transport.hpp"

namespace sluice::transport::ibverbs {
namespace {

std::uint64_t read_le(std::span<const std::byte> bytes, std::size_t at, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v |= std::to_integer<std::uint64_t>(bytes[at + i]) << (8 * i);
  return v;
}

TEST(IbverbsControlHeader, RoundTripsEveryKindWithItsFields) {
  for (auto kind : {ControlKind::message_first, ControlKind::message_more, ControlKind::region_query,
                    ControlKind::region_answer, ControlKind::region_revoke, ControlKind::region_revoke_ack}) {
    const ControlHeader h{kind, StatusCode::not_found, 17, 0x1122334455667788ULL, 42, 3, 0xFFFFFFFFFFFFFFFFULL};
    const ControlHeaderBytes bytes = encode_control_header(h);
    Result<ControlHeader> back = decode_control_header(bytes);
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    EXPECT_EQ(*back, h) << to_string(kind);
  }
}

TEST(IbverbsControlHeader, LaysOutFieldsLittleEndianAtDocumentedOffsets) {
  const ControlHeader h{ControlKind::region_answer, StatusCode::invalid_argument, 0x0102, 0xA1, 0xB2, 0xC3, 0xD4};
  const ControlHeaderBytes bytes = encode_control_header(h);
  EXPECT_EQ(read_le(bytes, 0, 4), k_ibv_control_magic);
  EXPECT_EQ(bytes[0], std::byte{'S'});
  EXPECT_EQ(bytes[3], std::byte{'1'});
  EXPECT_EQ(read_le(bytes, 4, 1), 4u);
  EXPECT_EQ(read_le(bytes, 5, 1), static_cast<std::uint64_t>(StatusCode::invalid_argument));
  EXPECT_EQ(read_le(bytes, 6, 2), 0x0102u);
  EXPECT_EQ(read_le(bytes, 8, 8), 0xA1u);
  EXPECT_EQ(read_le(bytes, 16, 8), 0xB2u);
  EXPECT_EQ(read_le(bytes, 24, 8), 0xC3u);
  EXPECT_EQ(read_le(bytes, 32, 8), 0xD4u);
}

TEST(IbverbsControlHeader, RejectsShortBadMagicUnknownKindStatusAndLongText) {
  const ControlHeaderBytes good = encode_control_header(ControlHeader{});
  EXPECT_EQ(decode_control_header(std::span(good).first(39)).status().code(), StatusCode::corrupt);
  auto bad = good;
  bad[0] = std::byte{'X'};
  EXPECT_EQ(decode_control_header(bad).status().code(), StatusCode::corrupt);
  bad = good;
  bad[4] = std::byte{0};
  EXPECT_NE(decode_control_header(bad).status().message().find("unknown kind"), std::string::npos);
  bad[4] = std::byte{7};
  EXPECT_EQ(decode_control_header(bad).status().code(), StatusCode::corrupt);
  bad = good;
  bad[5] = std::byte{200};
  EXPECT_NE(decode_control_header(bad).status().message().find("status"), std::string::npos);
  ControlHeader text;
  text.text_bytes = k_ibv_max_error_text_bytes + 1;
  EXPECT_EQ(decode_control_header(encode_control_header(text)).status().code(), StatusCode::corrupt);
  text.text_bytes = k_ibv_max_error_text_bytes;
  EXPECT_TRUE(decode_control_header(encode_control_header(text)).ok());
}

TEST(IbverbsControlHeader, DecodesWithPayloadFollowing) {
  std::vector<std::byte> packet(k_ibv_control_header_bytes + 100, std::byte{0x77});
  const ControlHeaderBytes head =
      encode_control_header(ControlHeader{ControlKind::message_first, StatusCode::ok, 0, 9, 100, 0, 0});
  std::copy(head.begin(), head.end(), packet.begin());
  Result<ControlHeader> h = decode_control_header(packet);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->key, 9u);
  EXPECT_EQ(h->a, 100u);
}

TEST(IbverbsHello, RoundTripsAndFitsRdmaCmPrivateData) {
  static_assert(k_ibv_hello_bytes <= 56, "a REQ carries at most 56 bytes of private data");
  const Hello h{7, 0xDEADBEEFCAFEULL, 3, 15, 64, 4};
  const HelloBytes bytes = encode_hello(h);
  EXPECT_EQ(read_le(bytes, 0, 4), k_ibv_hello_magic);
  Result<Hello> back = decode_hello(bytes);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(*back, h);
  // rdma_cm may pad private data: trailing bytes are ignored.
  std::vector<std::byte> padded(bytes.begin(), bytes.end());
  padded.resize(56, std::byte{0});
  EXPECT_TRUE(decode_hello(padded).ok());
}

TEST(IbverbsHello, RejectsForeignVersionAndOutOfRangeFields) {
  const Hello good{1, 2, 0, 0, 4, 2};
  const HelloBytes bytes = encode_hello(good);
  EXPECT_EQ(decode_hello(std::span(bytes).first(20)).status().code(), StatusCode::corrupt);
  auto bad = bytes;
  bad[1] = std::byte{0};
  EXPECT_NE(decode_hello(bad).status().message().find("not a sluice"), std::string::npos);
  bad = bytes;
  bad[4] = std::byte{9};
  EXPECT_NE(decode_hello(bad).status().message().find("version 9"), std::string::npos);
  const auto refused = [](Hello h) { return decode_hello(encode_hello(h)).status().code() == StatusCode::corrupt; };
  EXPECT_TRUE(refused(Hello{1, 2, k_max_rails, 0, 4, 0}));
  EXPECT_TRUE(refused(Hello{1, 2, 2, 0, 4, 2}));  // rail 2 of 2 rails
  EXPECT_TRUE(refused(Hello{1, 2, 0, k_max_connections_per_rail, 4, 1}));
  EXPECT_TRUE(refused(Hello{1, 2, 0, 0, 0, 1}));
  EXPECT_TRUE(refused(Hello{1, 2, 0, 0, k_max_rails * k_max_connections_per_rail + 1, 1}));
  EXPECT_TRUE(refused(Hello{1, 2, 0, 0, 1, k_max_rails + 1}));
  EXPECT_FALSE(refused(Hello{1, 2, 0, 0, 1, 0}));  // the acceptor's hello names no rails
}

TEST(IbverbsRemoteRegion, PacksAddressRkeyAndLengthIn20Bytes) {
  const RemoteRegionDesc d{0x00007F0012345000ULL, 0xABCD1234u, 16ULL << 20};
  const PackedRegion packed = pack_remote_region(d);
  EXPECT_EQ(packed.size(), 20u);
  EXPECT_EQ(read_le(packed, 0, 8), d.address);
  EXPECT_EQ(read_le(packed, 8, 4), d.rkey);
  EXPECT_EQ(read_le(packed, 12, 8), d.length);
  Result<RemoteRegionDesc> back = unpack_remote_region(packed);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, d);
}

TEST(IbverbsRemoteRegion, RejectsShortInputAndOverflowingRange) {
  const PackedRegion packed = pack_remote_region(RemoteRegionDesc{1, 2, 3});
  EXPECT_EQ(unpack_remote_region(std::span(packed).first(19)).status().code(), StatusCode::corrupt);
  const PackedRegion overflow =
      pack_remote_region(RemoteRegionDesc{std::numeric_limits<std::uint64_t>::max() - 10, 1, 11});
  EXPECT_EQ(unpack_remote_region(overflow).status().code(), StatusCode::corrupt);
  const PackedRegion edge = pack_remote_region(RemoteRegionDesc{std::numeric_limits<std::uint64_t>::max() - 10, 1, 10});
  EXPECT_TRUE(unpack_remote_region(edge).ok());
}

TEST(IbverbsRemoteRegion, AddressOfChecksTheRangeAndNamesTheRegion) {
  const RemoteRegionDesc d{0x10000, 5, 4096};
  EXPECT_EQ(*remote_address_of(d, 8, 0, 4096), 0x10000u);
  EXPECT_EQ(*remote_address_of(d, 8, 4095, 1), 0x10000u + 4095);
  EXPECT_EQ(*remote_address_of(d, 8, 4096, 0), 0x10000u + 4096);
  Result<std::uint64_t> past = remote_address_of(d, 8, 4000, 97);
  EXPECT_EQ(past.status().code(), StatusCode::invalid_argument);
  EXPECT_NE(past.status().message().find("region 8 of 4096 bytes"), std::string::npos) << past.status().message();
  EXPECT_FALSE(remote_address_of(d, 8, 5000, 1).ok());
  EXPECT_FALSE(remote_address_of(d, 8, 1, std::numeric_limits<std::uint64_t>::max()).ok());
}

TEST(IbverbsAddress, ParsesAndFormatsIpv4WithPort) {
  Result<sockaddr_in> a = parse_rail_address("10.1.2.3:4791");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(format_rail_address(*a), "10.1.2.3:4791");
  EXPECT_EQ(format_rail_address(*parse_rail_address("192.168.0.1:0")), "192.168.0.1:0");
  for (const char* bad : {"10.1.2.3", "10.1.2.3:", "10.1.2.3:70000", "10.1.2.3:12x", "host:1", "::1:5"}) {
    Result<sockaddr_in> r = parse_rail_address(bad);
    EXPECT_EQ(r.status().code(), StatusCode::invalid_argument) << bad;
    EXPECT_NE(r.status().message().find(bad), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace sluice::transport::ibverbs
