// Names, helpers and enums of the message set.
#include "core/proto/wire_message.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/proto/wire_enums.hpp"
#include "core/proto/wire_field_path.hpp"
#include "proto_test_support.hpp"

namespace sluice::proto {
namespace {

TEST(WireMessage, NamesAndTypesMatchTheStructs) {
  EXPECT_EQ(message_name(Mkdir{}), "Mkdir");
  EXPECT_EQ(message_name(ChunkSizeReply{}), "ChunkSizeReply");
  EXPECT_EQ(message_type(ReadChunk{}), MessageType::read_chunk);
  EXPECT_EQ(message_type_name(MessageType::maps_reply), "MapsReply");
  EXPECT_EQ(message_type_name(static_cast<MessageType>(0x7777)), "unknown");
  std::set<std::string> names;
  for (const Message& m : testing::sample_messages()) {
    names.insert(std::string(message_name(m)));
    EXPECT_EQ(message_type_name(message_type(m)), message_name(m));
    EXPECT_TRUE(is_known_message_type(static_cast<std::uint16_t>(message_type(m))));
  }
  EXPECT_EQ(names.size(), std::variant_size_v<Message>);
  EXPECT_FALSE(is_known_message_type(0));
  EXPECT_FALSE(is_known_message_type(0xFFFF));
}

TEST(WireMessage, RepliesCarryTheirStatus) {
  static_assert(WireReply<Ack> && WireReply<MapsReply> && WireReply<InodeReply> && WireReply<ReaddirReply> &&
                WireReply<ChunkReply> && WireReply<ChunkSizeReply>);
  static_assert(!WireReply<Mkdir> && !WireReply<Heartbeat> && WireMessage<Heartbeat>);
  const Status failed = status_of(ChunkReply{1, StatusCode::io_error, "target 3: EIO", 0, 0});
  EXPECT_EQ(failed.code(), StatusCode::io_error);
  EXPECT_EQ(failed.message(), "target 3: EIO");
  EXPECT_TRUE(status_of(Ack{1, StatusCode::ok, "ignored"}).ok());
}

TEST(WireEnums, NamesFollowTheEnumerators) {
  EXPECT_EQ(to_string(StripePattern::buddy_mirror), "buddy_mirror");
  EXPECT_EQ(to_string(InodeType::dir), "dir");
  EXPECT_EQ(to_string(Reachability::probably_offline), "probably_offline");
  EXPECT_EQ(to_string(Consistency::needs_resync), "needs_resync");
  EXPECT_EQ(to_string(Consistency::bad), "bad");
  EXPECT_EQ(to_string(static_cast<Consistency>(3)), "unknown");
  EXPECT_EQ(to_string(CapacityPool::emergency), "emergency");
  EXPECT_EQ(to_string(DirPolicy::full_path_hash), "full_path_hash");
  EXPECT_EQ(to_string(HashKind::fnv_1a_64), "fnv_1a_64");
  EXPECT_EQ(to_string(ChooserKind::space_weighted_qos), "space_weighted_qos");
  EXPECT_EQ(to_string(ChunkPath::bounce), "bounce");
  EXPECT_EQ(to_string(static_cast<ChunkPath>(2)), "unknown");
  EXPECT_EQ(to_string(static_cast<HashKind>(200)), "unknown");
}

// WireEnumMax of core/common's enums must follow their last enumerator, or
// codes added there would be refused on the wire. These fail when a value is
// appended in core/common without updating core/proto/wire_traits.hpp.
TEST(WireTraits, CommonEnumMaximaAreTheLastEnumerators) {
  const auto status_max = wire_enum_max<StatusCode>();
  EXPECT_NE(sluice::to_string(static_cast<StatusCode>(status_max)), "unknown");
  EXPECT_EQ(sluice::to_string(static_cast<StatusCode>(status_max + 1)), "unknown");
  const auto kind_max = wire_enum_max<MemKind>();
  EXPECT_NE(sluice::to_string(static_cast<MemKind>(kind_max)), "unknown");
  EXPECT_EQ(sluice::to_string(static_cast<MemKind>(kind_max + 1)), "unknown");
}

TEST(WireFieldPath, RendersNestedFieldsAndIndices) {
  WireFieldPath path;
  EXPECT_EQ(path.render("MapsReply"), "MapsReply");
  path.push("targets");
  path.set_index(3);
  path.push("endpoint");
  path.push("node");
  EXPECT_EQ(path.render("MapsReply"), "MapsReply.targets[3].endpoint.node");
  path.pop();
  path.pop();
  path.pop();
  EXPECT_EQ(path.render("MapsReply"), "MapsReply");
}

TEST(WireFieldPath, ElidesLevelsBeyondTheDepthLimit) {
  WireFieldPath path;
  for (std::size_t i = 0; i < k_max_field_depth + 2; ++i) path.push("f");
  path.set_index(1);  // on an elided level: ignored
  std::string expected = "M";
  for (std::size_t i = 0; i < k_max_field_depth; ++i) expected += ".f";
  EXPECT_EQ(path.render("M"), expected + "...");
  for (std::size_t i = 0; i < k_max_field_depth + 2; ++i) path.pop();
  EXPECT_EQ(path.render("M"), "M");
}

}  // namespace
}  // namespace sluice::proto
