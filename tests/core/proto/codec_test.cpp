// Round trips, sizes and the exact byte layout of frames.
#include "core/proto/codec.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "alloc_tracker.hpp"
#include "proto_test_support.hpp"

namespace sluice::proto {
namespace {

using testing::encode_valid;
using testing::sample_messages;

TEST(WireFrame, SamplesCoverEveryMessageType) {
  std::set<std::size_t> indices;
  for (const Message& m : sample_messages()) indices.insert(m.index());
  EXPECT_EQ(indices.size(), std::variant_size_v<Message>);
}

TEST(WireFrame, EveryMessageRoundTrips) {
  for (const Message& original : sample_messages()) {
    SCOPED_TRACE(std::string(message_name(original)));
    std::vector<std::byte> frame;
    const Status encoded = encode_into(original, frame);
    ASSERT_TRUE(encoded.ok()) << encoded.to_string();
    EXPECT_EQ(encode(original), frame);  // the unchecked path writes the same bytes
    auto decoded = decode(frame);
    ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
    EXPECT_EQ(decoded->index(), original.index());
    EXPECT_TRUE(*decoded == original);
  }
}

TEST(WireFrame, DefaultConstructedMessagesRoundTrip) {
  // Empty strings and vectors, zero ids: the smallest encodings.
  for (const Message& sample : sample_messages()) {
    Message original = std::visit([](const auto& m) -> Message { return std::decay_t<decltype(m)>{}; }, sample);
    auto decoded = decode(encode_valid(original));
    ASSERT_TRUE(decoded.ok()) << message_name(original) << ": " << decoded.status().to_string();
    EXPECT_TRUE(*decoded == original) << message_name(original);
  }
}

TEST(WireFrame, EncodedSizeEqualsTheEncodedBytes) {
  for (const Message& m : sample_messages()) {
    const auto frame = encode_valid(m);
    ASSERT_FALSE(frame.empty());
    EXPECT_EQ(encoded_size(m), frame.size()) << message_name(m);
  }
}

TEST(WireFrame, SizingAndValidatingDoNotAllocate) {
  // SimEnv sizes every message it sends; that must stay allocation-free.
  for (const Message& m : sample_messages()) {
    testing::AllocTracker tracker;
    const std::size_t bytes = encoded_size(m);
    const bool valid = validate(m).ok();
    EXPECT_EQ(tracker.count(), 0u) << message_name(m);
    EXPECT_GT(bytes, k_frame_header_bytes);
    EXPECT_TRUE(valid);
  }
}

TEST(WireFrame, DistinctValuesGiveDistinctFrames) {
  // Guards the round-trip test against an encoder that drops fields: changing
  // any one field of the sample must change the bytes.
  Mkdir a{7, "/x", 0755};
  Mkdir b = a;
  b.mode = 0700;
  Mkdir c = a;
  c.request_id = 8;
  Mkdir d = a;
  d.path = "/y";
  const auto fa = encode_valid(a);
  EXPECT_NE(fa, encode_valid(b));
  EXPECT_NE(fa, encode_valid(c));
  EXPECT_NE(fa, encode_valid(d));
}

TEST(WireFrame, LaysOutHeaderAndPayloadAsDocumented) {
  const GetMaps m{0x0102030405060708ull, 9};
  const auto frame = encode_valid(m);
  testing::ByteBuilder payload;
  payload.u64(0x0102030405060708ull).u64(9);
  const auto expected = testing::make_frame(0x0105, payload.bytes());
  EXPECT_EQ(frame, expected);
  ASSERT_EQ(frame.size(), 36u);
  EXPECT_EQ(frame[0], std::byte{'S'});
  EXPECT_EQ(frame[1], std::byte{'L'});
  EXPECT_EQ(frame[2], std::byte{'U'});
  EXPECT_EQ(frame[3], std::byte{'I'});
  EXPECT_EQ(frame[4], std::byte{12});    // version 12, little-endian
  EXPECT_EQ(frame[6], std::byte{0x05});  // type 0x0105
  EXPECT_EQ(frame[7], std::byte{0x01});
  EXPECT_EQ(frame[8], std::byte{16});     // payload_bytes
  EXPECT_EQ(frame[20], std::byte{0x08});  // request_id, least significant byte first
  EXPECT_EQ(frame[27], std::byte{0x01});
}

TEST(WireFrame, EncodesStringsAndVectorsWithU32Prefixes) {
  const RemoveChunks m{1, 2, {0xAABBCCDDu, 5}};
  testing::ByteBuilder payload;
  payload.u64(1).u64(2).u32(2).u32(0xAABBCCDDu).u32(5);
  EXPECT_EQ(encode_valid(m), testing::make_frame(0x0304, payload.bytes()));

  const Readdir r{3, "/d", 4, 5, true};
  testing::ByteBuilder rp;
  rp.u64(3).str("/d").u64(4).u32(5).u8(1);
  EXPECT_EQ(encode_valid(r), testing::make_frame(0x0205, rp.bytes()));
}

TEST(WireFrame, ParseHeaderTellsAStreamReaderTheFrameLength) {
  for (const Message& m : sample_messages()) {
    const auto frame = encode_valid(m);
    auto header = parse_header(std::span<const std::byte>(frame).first(k_frame_header_bytes));
    ASSERT_TRUE(header.ok()) << header.status().to_string();
    EXPECT_EQ(header->frame_bytes(), frame.size());
    EXPECT_EQ(header->type, message_type(m));
    EXPECT_EQ(header->version, k_wire_version);
  }
}

TEST(WireFrame, EncodeIntoAppendsFramesBackToBack) {
  std::vector<std::byte> stream;
  const auto samples = sample_messages();
  for (const Message& m : samples) ASSERT_TRUE(encode_into(m, stream).ok());
  // Read them back the way a stream transport does: header, then the whole frame.
  std::span<const std::byte> rest(stream);
  for (const Message& expected : samples) {
    auto header = parse_header(rest);
    ASSERT_TRUE(header.ok()) << header.status().to_string();
    ASSERT_LE(header->frame_bytes(), rest.size());
    auto decoded = decode(rest.first(header->frame_bytes()));
    ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
    EXPECT_TRUE(*decoded == expected) << message_name(expected);
    rest = rest.subspan(header->frame_bytes());
  }
  EXPECT_TRUE(rest.empty());
}

TEST(WireFrame, LargestAllowedFieldsEncodeAndDecode) {
  ReaddirReply big;
  big.entries.resize(k_max_readdir_entries,
                     DirEntryDesc{std::string(k_max_name_bytes, 'n'), InodeType::file, 1, 2, {}});
  big.attrs.resize(k_max_readdir_entries, EntryAttrs{0644, 1, 2, 3, 4, 5, 6, 7, 8});
  big.error = std::string(k_max_error_bytes, 'e');
  std::vector<std::byte> frame;
  const Status encoded = encode_into(big, frame);
  ASSERT_TRUE(encoded.ok()) << encoded.to_string();
  auto decoded = decode(frame);
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_TRUE(*decoded == Message(big));

  Mkdir m{1, std::string(k_max_path_bytes, 'p'), 0};
  EXPECT_TRUE(validate(m).ok());
  EXPECT_TRUE(decode(encode_valid(m)).ok());
}

TEST(WireFrame, SymlinkTargetsAndInodesCarryUpToAPathAndNoMore) {
  // The wire carries a target of k_max_path_bytes, so that the metadata
  // server, not the codec, names k_max_symlink_target_bytes (one less).
  Symlink fits{1, "/l", std::string(k_max_path_bytes, 't'), 0, 0};
  EXPECT_TRUE(validate(fits).ok());
  Symlink over = fits;
  over.target.push_back('t');
  const Status refused = validate(over);
  EXPECT_EQ(refused.code(), StatusCode::invalid_argument);
  EXPECT_NE(refused.message().find("Symlink.target"), std::string::npos) << refused.to_string();
  InodeReply reply;
  reply.inode.type = InodeType::symlink;
  reply.inode.symlink_target = over.target;
  EXPECT_NE(validate(reply).message().find("InodeReply.inode.symlink_target"), std::string::npos);
  static_assert(k_max_symlink_target_bytes == k_max_path_bytes - 1, "Linux PATH_MAX counts the NUL");
}

}  // namespace
}  // namespace sluice::proto
