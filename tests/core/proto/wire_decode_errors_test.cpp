// Malformed frames: every one must give a clear error, never a crash, and
// never an allocation the frame cannot justify.
#include <gtest/gtest.h>

#include <string>

#include "alloc_tracker.hpp"
#include "core/proto/codec.hpp"
#include "proto_test_support.hpp"

namespace sluice::proto {
namespace {

using testing::ByteBuilder;
using testing::encode_valid;
using testing::make_frame;
using testing::reseal;
using testing::sample_messages;

// Whether `text` contains `part`; the failure message shows both.
::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\"\n does not contain \"" << part << "\"";
}

// Expects decode(frame) to fail with `code` and a message containing `text`.
void expect_error(const std::vector<std::byte>& frame, StatusCode code, const std::string& text) {
  auto result = decode(frame);
  ASSERT_FALSE(result.ok()) << "decoded as " << message_name(*result);
  EXPECT_EQ(result.status().code(), code) << result.status().to_string();
  EXPECT_TRUE(contains(result.status().message(), text));
}

TEST(WireDecodeErrors, TruncationAtEveryOffsetIsCorrupt) {
  for (const Message& m : sample_messages()) {
    const auto frame = encode_valid(m);
    for (std::size_t length = 0; length < frame.size(); ++length) {
      auto result = decode(std::span<const std::byte>(frame).first(length));
      ASSERT_FALSE(result.ok()) << message_name(m) << " cut to " << length;
      EXPECT_EQ(result.status().code(), StatusCode::corrupt);
    }
  }
}

TEST(WireDecodeErrors, TruncationMessagesSayHowManyBytesArrived) {
  const auto frame = encode_valid(Lookup{1, "/abc"});
  expect_error(std::vector<std::byte>(frame.begin(), frame.begin() + 7), StatusCode::corrupt,
               "frame header truncated: 7 of 20 bytes");
  expect_error(std::vector<std::byte>(frame.begin(), frame.end() - 1), StatusCode::corrupt,
               "Lookup: frame truncated: " + std::to_string(frame.size() - 1) + " of " + std::to_string(frame.size()) +
                   " bytes");
}

TEST(WireDecodeErrors, EverySingleBitFlipIsDetected) {
  for (const Message& m : sample_messages()) {
    auto frame = encode_valid(m);
    for (std::size_t bit = 0; bit < frame.size() * 8; ++bit) {
      const auto mask = static_cast<std::byte>(1u << (bit % 8));
      frame[bit / 8] ^= mask;
      auto result = decode(frame);
      EXPECT_FALSE(result.ok()) << message_name(m) << " bit " << bit;
      if (!result.ok()) {
        EXPECT_EQ(result.status().code(), StatusCode::corrupt) << result.status().to_string();
      }
      frame[bit / 8] ^= mask;
    }
    EXPECT_TRUE(decode(frame).ok());
  }
}

TEST(WireDecodeErrors, PayloadCrcMismatchIsCorrupt) {
  auto frame = encode_valid(Mkdir{1, "/abc", 0755});
  frame.back() ^= std::byte{0x40};
  expect_error(frame, StatusCode::corrupt, "Mkdir: payload CRC32C mismatch");
}

TEST(WireDecodeErrors, BadMagicIsCorrupt) {
  auto frame = encode_valid(GetMaps{1, 2});
  frame[0] = std::byte{'X'};
  reseal(frame);
  expect_error(frame, StatusCode::corrupt, "bad frame magic");
}

TEST(WireDecodeErrors, OtherWireVersionIsRefusedClearly) {
  ByteBuilder payload;
  payload.u64(1).u64(2);
  const auto frame = make_frame(0x0105, payload.bytes(), 13);
  expect_error(frame, StatusCode::invalid_argument,
               "unsupported wire version 13 at byte 4; this build speaks version 12");
  auto header = parse_header(frame);
  EXPECT_EQ(header.status().code(), StatusCode::invalid_argument);
  // Version 1 (before ReadChunk/WriteChunk carried RDMA keys) and version 2
  // (before metadata mirroring), version 3 (before StatusCode in_progress),
  // version 4 (before StatusCode permission_denied), version 5 (before
  // symbolic and hard links), version 6 (before special files), version 7
  // (before POSIX times, xattrs and orphans), version 8 (before a listing's
  // attributes), version 9 (before opens held by the metadata server),
  // version 10 (before renewed opens) and version 11 (before fallocate) are
  // refused as well.
  for (std::uint16_t old = 1; old <= 11; ++old) {
    expect_error(make_frame(0x0105, payload.bytes(), old), StatusCode::invalid_argument,
                 "unsupported wire version " + std::to_string(old) + " at byte 4; this build speaks version 12");
  }
}

TEST(WireDecodeErrors, VersionFieldIsReportedWhenTheHeaderCrcFails) {
  ByteBuilder payload;
  payload.u64(1).u64(2);
  auto frame = make_frame(0x0105, payload.bytes(), 13);
  frame[16] ^= std::byte{1};  // header CRC
  expect_error(frame, StatusCode::corrupt, "version field reads 13, this build speaks 12");
}

TEST(WireDecodeErrors, UnknownMessageTypeIsRefusedClearly) {
  ByteBuilder payload;
  payload.u64(1);
  expect_error(make_frame(0x7777, payload.bytes()), StatusCode::invalid_argument, "unknown message type 0x7777");
  expect_error(make_frame(0, payload.bytes()), StatusCode::invalid_argument, "unknown message type 0x0");
}

TEST(WireDecodeErrors, PayloadLargerThanTheLimitIsRefusedFromTheHeaderAlone) {
  std::vector<std::byte> header = make_frame(0x0205, {});
  testing::put_le32(header, 8, k_max_message_bytes + 1);
  testing::put_le32(header, 16, crc32c(std::span<const std::byte>(header).first(16)));
  auto parsed = parse_header(header);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::corrupt);
  EXPECT_TRUE(contains(parsed.status().message(), "Readdir: payload_bytes 16777217 exceeds k_max_message_bytes"));

  testing::put_le32(header, 8, k_max_message_bytes);
  testing::put_le32(header, 16, crc32c(std::span<const std::byte>(header).first(16)));
  EXPECT_TRUE(parse_header(header).ok());
}

TEST(WireDecodeErrors, TrailingGarbageAfterTheFrameIsCorrupt) {
  auto frame = encode_valid(Stat{1, "/x"});
  frame.push_back(std::byte{0});
  expect_error(frame, StatusCode::corrupt, "1 trailing bytes after the frame end");

  auto two = encode_valid(Stat{1, "/x"});
  const auto second = encode_valid(Stat{2, "/y"});
  two.insert(two.end(), second.begin(), second.end());
  expect_error(two, StatusCode::corrupt, "trailing bytes");
}

TEST(WireDecodeErrors, BytesLeftOverAfterTheLastFieldAreCorrupt) {
  auto frame = encode_valid(Lookup{1, "/x"});
  frame.push_back(std::byte{0});
  frame.push_back(std::byte{0});
  reseal(frame);
  expect_error(frame, StatusCode::corrupt, "Lookup: 2 bytes left over after the last field (at byte 34 of the frame)");
}

TEST(WireDecodeErrors, StringsLongerThanTheirLimitAreRefused) {
  ByteBuilder mkdir;
  mkdir.u64(1).u32(k_max_path_bytes + 1).raw(k_max_path_bytes + 1, 'a').u32(0755);
  expect_error(make_frame(0x0201, mkdir.bytes()), StatusCode::corrupt,
               "Mkdir.path: string length 4097 exceeds the limit 4096 (at byte 28 of the frame)");

  ByteBuilder unlink_entry;
  unlink_entry.u64(1).str("/d").u32(k_max_name_bytes + 1).raw(k_max_name_bytes + 1, 'n');
  expect_error(make_frame(0x020D, unlink_entry.bytes()), StatusCode::corrupt,
               "UnlinkEntry.name: string length 256 exceeds the limit 255");

  ByteBuilder ack;
  ack.u64(1).u8(0).u32(k_max_error_bytes + 1).raw(k_max_error_bytes + 1, 'e');
  expect_error(make_frame(0x0001, ack.bytes()), StatusCode::corrupt,
               "Ack.error: string length 1025 exceeds the limit 1024");
}

TEST(WireDecodeErrors, StringRunningPastThePayloadEndIsRefused) {
  ByteBuilder lookup;
  lookup.u64(1).u32(100).raw(3, 'x');
  expect_error(make_frame(0x0203, lookup.bytes()), StatusCode::corrupt,
               "Lookup.path: string length 100 runs past the end of the payload (3 bytes remain)");
}

TEST(WireDecodeErrors, FieldsCutShortInsideThePayloadAreRefused) {
  ByteBuilder lookup;
  lookup.u32(1).u8(0);
  expect_error(make_frame(0x0203, lookup.bytes()), StatusCode::corrupt,
               "Lookup.request_id: needs 8 bytes, only 5 remain (at byte 20 of the frame)");
}

TEST(WireDecodeErrors, VectorCountAboveItsLimitIsRefused) {
  ByteBuilder remove;
  remove.u64(1).u64(2).u32(k_max_stripe_targets + 1);
  expect_error(make_frame(0x0304, remove.bytes()), StatusCode::corrupt,
               "RemoveChunks.targets: count 2001 exceeds the limit 2000 (at byte 36 of the frame)");
}

TEST(WireDecodeErrors, VectorCountBeyondTheRemainingBytesIsRefusedBeforeAllocating) {
  // MapsReply claiming k_max_map_targets targets in a 33-byte payload: reserving
  // them would take megabytes.
  ByteBuilder maps;
  maps.u64(1).u8(0).u32(0).u64(5).u32(k_max_map_targets).raw(8, 0);
  const auto frame = make_frame(0x0106, maps.bytes());
  testing::AllocTracker tracker;
  auto result = decode(frame);
  const std::size_t largest = tracker.largest_bytes();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::corrupt);
  EXPECT_TRUE(contains(result.status().message(),
                       "MapsReply.targets: count 65536 needs at least 2293760 bytes, only 8 remain"));
  EXPECT_LT(largest, 1024u) << "decode allocated " << largest << " bytes for a " << frame.size() << "-byte frame";
}

TEST(AllocTracker, SeesTheLargestAllocationInItsScope) {
  // Guards the allocation bounds above against a tracker that sees nothing.
  testing::AllocTracker tracker;
  std::vector<std::byte> block(10'000);
  EXPECT_GE(tracker.largest_bytes(), block.size());
  EXPECT_GE(tracker.count(), 1u);
}

TEST(WireDecodeErrors, EnumValuesAboveTheLargestKnownAreRefused) {
  ByteBuilder create;
  create.u64(1).str("/f").u32(0644).u64(0).u32(0).u8(9);
  expect_error(make_frame(0x0202, create.bytes()), StatusCode::corrupt,
               "Create.chooser: enum value 9 is above the largest known value 5");

  ByteBuilder ack;
  ack.u64(1).u8(200).u32(0);
  expect_error(make_frame(0x0001, ack.bytes()), StatusCode::corrupt, "Ack.status: enum value 200");
}

TEST(WireDecodeErrors, MirrorMessagesAreDecodedStrictly) {
  // SetTargetConsistency: request_id 8, reporter 4, target 4, consistency 1.
  ByteBuilder state;
  state.u64(1).u32(100).u32(101).u8(3);
  expect_error(make_frame(0x0108, state.bytes()), StatusCode::corrupt,
               "SetTargetConsistency.consistency: enum value 3 is above the largest known value 2");
  // MirrorWrite cut short after its file id: the offset is missing.
  ByteBuilder mirror;
  mirror.u64(1).u32(7).u32(100).u32(101).u64(55);
  expect_error(make_frame(0x0320, mirror.bytes()), StatusCode::corrupt, "MirrorWrite.object_offset");
  // MirrorRemove with a byte left over after its last field.
  ByteBuilder remove;
  remove.u64(1).u32(7).u32(100).u32(101).u64(55).u8(0);
  expect_error(make_frame(0x0321, remove.bytes()), StatusCode::corrupt, "MirrorRemove: 1 bytes left over");
}

TEST(WireDecodeErrors, ErrorsInNestedFieldsNameTheWholePath) {
  MapsReply maps;
  maps.targets = {TargetInfoDesc{}, TargetInfoDesc{}};
  auto frame = encode_valid(maps);
  // request_id 8, status 1, error 4, version 8, count 4, targets[0] 35, then
  // targets[1]: target 4, node 4, endpoint 8 -> reachability at payload byte 76.
  const std::size_t at = k_frame_header_bytes + 76;
  ASSERT_EQ(frame[at], std::byte{0});
  frame[at] = std::byte{9};
  reseal(frame);
  expect_error(frame, StatusCode::corrupt,
               "MapsReply.targets[1].reachability: enum value 9 is above the largest known value 2 (at byte 96 of "
               "the frame)");

  ReadChunk read;
  auto read_frame = encode_valid(read);
  // request_id 8, file_id 8, target 4, object_offset 8, length 8, dst.node 4 -> dst.kind at 40.
  read_frame[k_frame_header_bytes + 40] = std::byte{3};
  reseal(read_frame);
  expect_error(read_frame, StatusCode::corrupt, "ReadChunk.dst.kind: enum value 3");
}

TEST(WireDecodeErrors, BoolOtherThanZeroOrOneIsRefused) {
  ByteBuilder readdir;
  readdir.u64(1).str("/").u64(0).u32(10).u8(2);
  expect_error(make_frame(0x0205, readdir.bytes()), StatusCode::corrupt,
               "Readdir.with_attrs: bool byte is 2, must be 0 or 1");
}

TEST(WireEncodeErrors, ValidateRefusesFieldsBeyondTheirLimits) {
  const Mkdir long_path{1, std::string(k_max_path_bytes + 1, 'a'), 0};
  Status status = validate(long_path);
  EXPECT_EQ(status.code(), StatusCode::invalid_argument);
  EXPECT_TRUE(contains(status.message(), "Mkdir.path: string length 4097 exceeds the limit 4096"));

  ReaddirReply entries;
  entries.entries.resize(3);
  entries.entries[2].name = std::string(k_max_name_bytes + 1, 'n');
  EXPECT_TRUE(contains(validate(entries).message(), "ReaddirReply.entries[2].name: string length 256"));

  ReaddirReply too_many;
  too_many.entries.resize(k_max_readdir_entries + 1);
  EXPECT_TRUE(contains(validate(too_many).message(), "ReaddirReply.entries: count 4097 exceeds the limit 4096"));

  LinkEntry wide;
  wide.inode.stripe.targets.resize(k_max_stripe_targets + 1);
  EXPECT_TRUE(contains(validate(wide).message(), "LinkEntry.inode.stripe.targets: count 2001 exceeds the limit 2000"));

  InodeReply bad_enum;
  bad_enum.inode.type = static_cast<InodeType>(8);
  EXPECT_TRUE(contains(validate(bad_enum).message(), "InodeReply.inode.type: enum value 8"));

  MapsReply bad_element;
  bad_element.targets.resize(2);
  bad_element.targets[1].pool = static_cast<CapacityPool>(3);
  EXPECT_TRUE(contains(validate(bad_element).message(), "MapsReply.targets[1].pool: enum value 3"));

  for (const Message& m : sample_messages()) EXPECT_TRUE(validate(m).ok()) << message_name(m);
}

TEST(WireEncodeErrors, EncodeRefusesInvalidMessagesAndLeavesTheBufferAlone) {
  const Mkdir long_path{1, std::string(k_max_path_bytes + 1, 'a'), 0};
  std::vector<std::byte> out = encode_valid(Stat{1, "/"});
  const auto before = out;
  EXPECT_EQ(encode_into(long_path, out).code(), StatusCode::invalid_argument);
  EXPECT_EQ(out, before);
  // Sizing still works on an invalid message; it is what the frame would take.
  // request id, path length and bytes, mode, uid, gid.
  EXPECT_EQ(encoded_size(long_path), k_frame_header_bytes + 8 + 4 + k_max_path_bytes + 1 + 4 + 4 + 4);
}

TEST(WireEncodeErrors, UncheckedEncodeOfAnInvalidMessageGivesAFrameDecodeRefuses) {
  const Mkdir long_path{1, std::string(k_max_path_bytes + 1, 'a'), 0};
  const auto frame = encode(long_path);
  EXPECT_EQ(frame.size(), encoded_size(long_path));
  expect_error(frame, StatusCode::corrupt, "Mkdir.path: string length 4097 exceeds the limit 4096");

  Create bad_chooser{1, "/f", 0644, 0, 0, static_cast<ChooserKind>(6)};
  expect_error(encode(bad_chooser), StatusCode::corrupt, "Create.chooser: enum value 6");
}

}  // namespace
}  // namespace sluice::proto
