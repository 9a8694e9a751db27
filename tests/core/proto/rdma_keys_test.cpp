// RDMA keys carried in ReadChunk/WriteChunk (wire version 2): their exact
// layout, their limit, truncation inside them, and frames of the version
// before them.
#include <gtest/gtest.h>

#include <string>

#include "core/proto/codec.hpp"
#include "proto_test_support.hpp"

namespace sluice::proto {
namespace {

using testing::ByteBuilder;
using testing::encode_valid;
using testing::make_frame;
using testing::reseal;

::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\"\n does not contain \"" << part << "\"";
}

void expect_error(const std::vector<std::byte>& frame, StatusCode code, const std::string& text) {
  auto result = decode(frame);
  ASSERT_FALSE(result.ok()) << "decoded as " << message_name(*result);
  EXPECT_EQ(result.status().code(), code) << result.status().to_string();
  EXPECT_TRUE(contains(result.status().message(), text));
}

// ReadChunk's payload up to and including `path` (the version-1 layout).
ByteBuilder read_chunk_head() {
  ByteBuilder b;
  b.u64(7).u64(8).u32(9).u64(4096).u64(512);     // request_id, file_id, target, object_offset, length
  b.u32(3).u8(2).u16(1).u32(5).u64(0).u64(512);  // dst: node, kind gpu, device, region, offset, length
  b.u32(1).u32(0).u8(0);                         // rail {1, 0}, path direct
  return b;
}

ReadChunk read_chunk_with(std::vector<RdmaRegionDesc> keys) {
  ReadChunk m{7, 8, 9, 4096, 512, MemHandle{3, MemKind::gpu, 1, 5, 0, 512}, RailDesc{1, 0}, ChunkPath::direct, {}};
  m.dst_keys = std::move(keys);
  return m;
}

TEST(RdmaKeys, ReadChunkCarriesKeysAfterThePathAsDocumented) {
  const RdmaRegionDesc k0{1, 0xA1B2C3D4u, 0x00007F0000001000ull, 1ull << 30};
  const RdmaRegionDesc k1{0, 0x11223344u, 0x00007F0000001000ull, 1ull << 30};
  ByteBuilder payload = read_chunk_head();
  payload.u32(2);
  payload.u32(1).u32(0xA1B2C3D4u).u64(0x00007F0000001000ull).u64(1ull << 30);
  payload.u32(0).u32(0x11223344u).u64(0x00007F0000001000ull).u64(1ull << 30);
  const auto frame = encode_valid(read_chunk_with({k0, k1}));
  EXPECT_EQ(frame, make_frame(0x0301, payload.bytes()));
  auto back = decode(frame);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  const auto& read = std::get<ReadChunk>(*back);
  ASSERT_EQ(read.dst_keys.size(), 2u);
  EXPECT_EQ(read.dst_keys[0], k0);
  EXPECT_EQ(read.dst_keys[1], k1);
  // One RdmaRegionDesc is 24 bytes on the wire: nic 4, rkey 4, address 8, length 8.
  EXPECT_EQ(encoded_size(read_chunk_with({k0})) - encoded_size(read_chunk_with({})), 24u);
}

TEST(RdmaKeys, WriteChunkKeysRoundTripAndNoKeysIsACountOfZero) {
  WriteChunk w{1, 2, 3, 0, 4096, MemHandle{4, MemKind::pinned, 0, 6, 0, 4096}, RailDesc{}, 0xCAFEu, false, {}};
  const auto empty = encode_valid(w);
  ASSERT_FALSE(empty.empty());
  EXPECT_EQ(empty[empty.size() - 4], std::byte{0}) << "src_keys count is the last field";
  w.src_keys.push_back(RdmaRegionDesc{k_no_id, 77, 0x1000, 4096});
  auto back = decode(encode_valid(w));
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_TRUE(*back == Message(w));
}

TEST(RdmaKeys, MoreKeysThanRailsAreRefusedByValidateAndDecode) {
  std::vector<RdmaRegionDesc> keys(k_max_rdma_keys + 1);
  for (std::uint32_t i = 0; i < keys.size(); ++i) keys[i].nic = i;
  const ReadChunk too_many = read_chunk_with(keys);
  const Status v = validate(too_many);
  EXPECT_EQ(v.code(), StatusCode::invalid_argument);
  EXPECT_TRUE(contains(v.message(), "ReadChunk.dst_keys: count 17 exceeds the limit 16"));
  expect_error(encode(too_many), StatusCode::corrupt, "ReadChunk.dst_keys: count 17 exceeds the limit 16");

  WriteChunk w;
  w.src_keys.resize(k_max_rdma_keys + 1);
  EXPECT_TRUE(contains(validate(w).message(), "WriteChunk.src_keys: count 17 exceeds the limit 16"));

  keys.pop_back();  // exactly the limit is fine
  EXPECT_TRUE(validate(read_chunk_with(keys)).ok());
  EXPECT_TRUE(decode(encode_valid(read_chunk_with(keys))).ok());
}

TEST(RdmaKeys, AKeyCutShortIsRefusedNamingTheField) {
  ByteBuilder payload = read_chunk_head();
  payload.u32(1).u32(2).u32(0x55u).u32(0x1000);  // address cut after 4 of its 8 bytes
  expect_error(make_frame(0x0301, payload.bytes()), StatusCode::corrupt,
               "ReadChunk.dst_keys: count 1 needs at least 24 bytes, only 12 remain");

  // A count that fits but the last key's length is cut: found inside the element.
  ByteBuilder two = read_chunk_head();
  two.u32(2).u32(0).u32(1).u64(0x1000).u64(64).u32(1).u32(2).u64(0x2000).u32(0).u32(0);
  ByteBuilder cut = read_chunk_head();
  cut.u32(2).u32(0).u32(1).u64(0x1000).u64(64).u32(1).u32(2).u64(0x2000).u32(0);
  expect_error(make_frame(0x0301, cut.bytes()), StatusCode::corrupt, "ReadChunk.dst_keys");
  EXPECT_TRUE(decode(make_frame(0x0301, two.bytes())).ok());

  // Every truncation of a frame with keys is refused.
  const auto frame = encode_valid(read_chunk_with({RdmaRegionDesc{1, 2, 3, 4}}));
  for (std::size_t length = 0; length < frame.size(); ++length) {
    EXPECT_FALSE(decode(std::span<const std::byte>(frame).first(length)).ok()) << length;
  }
}

TEST(RdmaKeys, AVersionOneFrameIsRefusedAndItsLayoutDoesNotPassAsTheCurrentVersion) {
  // What a version-1 peer sends: the ReadChunk fields without dst_keys.
  const ByteBuilder old_payload = read_chunk_head();
  expect_error(make_frame(0x0301, old_payload.bytes(), 1), StatusCode::invalid_argument,
               "unsupported wire version 1 at byte 4; this build speaks version 12");
  // Relabelled as the current version it is short of the key count.
  expect_error(make_frame(0x0301, old_payload.bytes()), StatusCode::corrupt,
               "ReadChunk.dst_keys: needs 4 bytes, only 0 remain");
  // A current frame whose version field is turned back to 1 is refused too.
  auto frame = encode_valid(read_chunk_with({RdmaRegionDesc{0, 1, 2, 3}}));
  testing::put_le16(frame, 4, 1);
  reseal(frame);
  expect_error(frame, StatusCode::invalid_argument, "unsupported wire version 1");
}

TEST(RdmaKeys, FindRdmaKeyPicksTheFirstKeyOfTheNic) {
  const std::vector<RdmaRegionDesc> keys{{0, 10, 0x1000, 64}, {2, 12, 0x1000, 64}, {2, 99, 0x1000, 64}};
  ASSERT_NE(find_rdma_key(keys, 2), nullptr);
  EXPECT_EQ(find_rdma_key(keys, 2)->rkey, 12u);
  EXPECT_EQ(find_rdma_key(keys, 0)->rkey, 10u);
  EXPECT_EQ(find_rdma_key(keys, 1), nullptr);
  EXPECT_EQ(find_rdma_key({}, k_no_id), nullptr);
}

}  // namespace
}  // namespace sluice::proto
