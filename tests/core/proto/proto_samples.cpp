#include <cstdint>
#include <limits>
#include <string>

#include "proto_test_support.hpp"

namespace sluice::proto::testing {

namespace {

using namespace std::string_literals;

constexpr std::uint64_t k_u64_max = std::numeric_limits<std::uint64_t>::max();
constexpr std::int64_t k_i64_min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t k_i64_max = std::numeric_limits<std::int64_t>::max();

StripeDesc sample_stripe() { return StripeDesc{StripePattern::buddy_mirror, 512 * 1024, {7, 3, 0xFFFFFFFEu, 12}}; }

DirLayoutDesc sample_dir_layout() {
  return DirLayoutDesc{DirPolicy::hashed_striped, 4, {4, 9, 1}, HashKind::crush, 17};
}

InodeDesc sample_inode() {
  InodeDesc inode;
  inode.file_id = 0x0123456789ABCDEFull;
  inode.type = InodeType::file;
  inode.mode = 0100644;
  inode.size_bytes = k_u64_max - 5;
  inode.mtime_ns = -1'234'567'890'123ll;
  inode.atime_ns = 1'767'225'600'000'000'001ll;
  inode.ctime_ns = k_i64_max;
  inode.owner_shard = 3;
  inode.stripe = sample_stripe();
  inode.dir_layout = sample_dir_layout();
  inode.entries = 42;
  inode.uid = 65534;
  inode.gid = 4294967295u;
  return inode;
}

TargetInfoDesc sample_target(std::uint32_t i) {
  return TargetInfoDesc{100 + i,
                        i / 2,
                        Endpoint{i / 2, 1},
                        static_cast<Reachability>(i % 3),
                        static_cast<Consistency>(i % 2),
                        static_cast<CapacityPool>((i + 1) % 3),
                        (i + 1) * 1'000'000'000'000ull,
                        i * 333'333'333ull};
}

}  // namespace

std::vector<Message> sample_messages() {
  std::vector<Message> out;
  out.push_back(Ack{1, StatusCode::no_space, "target 7: pool emergency"});
  out.push_back(RegisterTarget{2, 101, 5, Endpoint{5, 2}, 3'840'000'000'000ull, 1'000'000ull});
  out.push_back(RegisterMetaShard{3, 2, Endpoint{9, 0}, 0x0123456789ABCDEFull, true});
  out.push_back(RegisterClient{k_u64_max, 77, Endpoint{77, 4}});
  out.push_back(Heartbeat{Endpoint{5, 2}, 99, {sample_target(0), sample_target(1), sample_target(2)}});
  out.push_back(GetMaps{5, 123456});
  out.push_back(
      MapsReply{6,
                StatusCode::ok,
                "",
                124000,
                {sample_target(3), sample_target(4)},
                {ShardInfoDesc{0, Endpoint{1, 1}, Reachability::online},
                 ShardInfoDesc{1, Endpoint{2, 1}, Reachability::probably_offline}},
                {BuddyGroupDesc{1, 100, 101}, BuddyGroupDesc{2, 102, 103}},
                {MetaGroupDesc{0, Endpoint{1, 1}, Endpoint{3, 1}, Consistency::good, Reachability::online},
                 MetaGroupDesc{1, Endpoint{2, 1}, Endpoint{}, Consistency::needs_resync, Reachability::offline}}});
  out.push_back(Barrier{30, "file_sweep.write.begin", 128});
  out.push_back(Mkdir{7, "/data/train/shard-0001", 0755});
  out.push_back(Mkdir{7, "/data/train/shard-0002", 01777, 65534, 100});
  out.push_back(Create{8, "/data/train/f\xC3\xA9\x00x"s, 0644, 1 << 20, 4, ChooserKind::random_inter_node});
  out.push_back(Lookup{9, "/data/f123"});
  out.push_back(Stat{10, "/"});
  out.push_back(Stat{10, "/data/open", 0x8000'0000'0000'0001ull});
  out.push_back(Create{8, "/data/new", 0600, 0, 0, ChooserKind::server_default, 1000, 1000, 42});
  out.push_back(Readdir{11, "/data", 0xDEADBEEFull, 4096, true});
  out.push_back(Unlink{12, "/data/old"});
  out.push_back(Unlink{12, "/data/open", true});
  out.push_back(ReleaseOrphan{35, 0xFFFF'FFFF'FFFF'FFFFull});
  out.push_back(ReleaseOrphan{35, 7, 0xFFFF'FFFF'FFFF'FFFEull});
  out.push_back(RenewOpens{});
  out.push_back(RenewOpens{{HeldOpenDesc{1, 2}, HeldOpenDesc{0xFFFF'FFFF'FFFF'FFFFull, 0xFFFF'FFFF'FFFF'FFFEull}}});
  out.push_back(Rmdir{13, "/data/empty"});
  out.push_back(Rename{14, "/a/b", "/c/d/e"});
  out.push_back(Rename{14, "/a/b", "/a/open", true});
  out.push_back(SetAttr{15, "/data/f", k_set_attr_size | k_set_attr_mtime, 1ull << 40, k_i64_min, 0});
  out.push_back(SetAttr{15, "/data/g", k_set_attr_mode, 0, 0, 04755});
  out.push_back(SetAttr{15, "/data/h", k_set_attr_uid | k_set_attr_gid, 0, 0, 0, 65534, 4294967295u});
  out.push_back(
      SetAttr{15, "/data/i", k_set_attr_atime | k_set_attr_mtime | k_set_attr_written, 0, 7, 0, 0, 0, k_i64_min});
  out.push_back(SetAttr{15, "/data/j", k_set_attr_accessed, 0, 0, 0, 0, 0, 1'767'225'600'000'000'000ll});
  out.push_back(SetAttr{15, "/data/k", k_set_attr_accessed | k_set_attr_close, 0, 0, 0, 0, 0, 1, 1ull << 63});
  out.push_back(InodeReply{16, StatusCode::ok, "", sample_inode()});
  out.push_back(
      ReaddirReply{17,
                   StatusCode::ok,
                   "",
                   {DirEntryDesc{"a", InodeType::file, 1, 10, {}}, DirEntryDesc{"", InodeType::none, 0, 0, {}},
                    DirEntryDesc{std::string(255, 'z'), InodeType::dir, 3, 0, {}}},
                   77,
                   true,
                   {EntryAttrs{0640, 1234, 5678, 2, -5, 1'700'000'000'000'000'000, 7, 0x0801, 1 << 20}, EntryAttrs{},
                    EntryAttrs{07777, ~0u, ~0u, ~0u, INT64_MIN, INT64_MAX, 0, ~0ull, ~0ull}}});
  out.push_back(LinkEntry{18, "/data/striped", "f-0007", sample_inode()});
  out.push_back(UnlinkEntry{19, "/data/striped", "f-0007"});
  InodeDesc dir = sample_inode();
  dir.type = InodeType::dir;
  out.push_back(AttachDir{26, "/data/striped/sub", dir});
  out.push_back(DetachDir{27, "/data/striped/sub", true});
  out.push_back(Xattr{36, "/data/f", XattrOp::set, "user.mime_type", std::string("text/\0plain", 11), k_xattr_create});
  out.push_back(Xattr{37, "/", XattrOp::list, "", "", 0});
  out.push_back(XattrReply{38, StatusCode::ok, "", true, std::string(k_max_xattr_value_bytes, 'x'), {}});
  out.push_back(XattrReply{39, StatusCode::ok, "", false, "", {XattrDesc{"user.a", ""}, XattrDesc{"trusted.b", ""}}});
  InodeDesc with_xattrs = sample_inode();
  with_xattrs.xattrs = {XattrDesc{"security.selinux", "system_u:object_r:x"}, XattrDesc{"user.e", ""}};
  out.push_back(InodeReply{40, StatusCode::ok, "", with_xattrs});
  out.push_back(DirTimes{33, "/data/striped", false, 0});
  out.push_back(DirTimes{34, "/data/striped/sub", true, -5});
  out.push_back(Symlink{28, "/data/latest", "../runs/r-0042/\xC3\xA9 out", 65534, 100});
  out.push_back(Symlink{28, "/data/long", std::string(k_max_path_bytes, 't'), 0, 0});
  out.push_back(Link{29, "/data/f", "/data/f.hardlink"});
  InodeDesc link = sample_inode();
  link.type = InodeType::symlink;
  link.nlink = 3;
  link.symlink_target = "/abs/target";
  out.push_back(InodeReply{16, StatusCode::ok, "", link});
  out.push_back(Mknod{30, "/dev/fifo", InodeType::fifo, 0640, 0, 1000, 100});
  out.push_back(Mknod{31, "/dev/sda", InodeType::block_device, 0660, 0x0800, 0, 6});
  InodeDesc device = sample_inode();
  device.type = InodeType::char_device;
  device.rdev = (4ull << 8) | 64;
  out.push_back(InodeReply{32, StatusCode::ok, "", device});
  out.push_back(ReadChunk{20,
                          0x0123456789ABCDEFull,
                          101,
                          3 * (1ull << 20),
                          1 << 20,
                          MemHandle{7, MemKind::gpu, 3, 12, 4096, 1 << 20},
                          RailDesc{2, 1},
                          ChunkPath::bounce,
                          {RdmaRegionDesc{2, 0xABCD1234u, 0x00007F0012345000ull, 64ull << 20},
                           RdmaRegionDesc{3, 0xFFFFFFFFu, k_u64_max - (1 << 20), 1 << 20}}});
  out.push_back(WriteChunk{21,
                           55,
                           102,
                           0,
                           65536,
                           MemHandle{8, MemKind::pinned, 1, 2, 0, 65536},
                           RailDesc{0, 3},
                           0xE3069283u,
                           true,
                           {RdmaRegionDesc{0xFFFFFFFFu, 0, 0x1000, 65536}}});
  out.push_back(ChunkReply{22, StatusCode::io_error, "target 102: EIO at 4096", 4096, 0xCAFEF00Du});
  out.push_back(RemoveChunks{23, 55, {101, 102, 103}});
  out.push_back(ChunkSize{24, 55, 103});
  out.push_back(ChunkSizeReply{25, StatusCode::not_found, "no object 55 on target 103", 0});
  out.push_back(FlushStorage{26});
  out.push_back(AllocateChunk{27, 102, 55, 1ull << 30, 3ull << 20, AllocMode::zero});
  // buddy mirroring
  out.push_back(SetTargetConsistency{40, 100, 101, Consistency::bad});
  out.push_back(MirrorWrite{41, 7, 100, 101, 55, 3ull << 40, 1 << 20, MemHandle{5, MemKind::pinned, 0, 9, 0, 1 << 20},
                            RailDesc{1, 0}, 0xE3069283u, true, true});
  out.push_back(MirrorRemove{42, 7, 100, 101, k_u64_max});
  out.push_back(MirrorAllocate{44, 7, 100, 101, 55, 4096, k_u64_max, AllocMode::punch});
  // metadata buddy mirroring
  const std::vector<std::byte> reply_frame = encode(Ack{16, StatusCode::ok, ""});
  MetaMirror batch{43, 1, 0xFEEDFACEull, 1, {}};
  batch.records.push_back(MetaRecordDesc{MetaRecordKind::reset, "", "", InodeDesc{}, 0, Endpoint{}, ""});
  batch.records.push_back(
      MetaRecordDesc{MetaRecordKind::put_entry, "/data", "f-0001", sample_inode(), 0, Endpoint{}, ""});
  batch.records.push_back(MetaRecordDesc{MetaRecordKind::counter, "", "", InodeDesc{}, 1 << 20, Endpoint{}, ""});
  batch.records.push_back(
      MetaRecordDesc{MetaRecordKind::reply, "", "", InodeDesc{}, 16, Endpoint{77, 4},
                     std::string(reinterpret_cast<const char*>(reply_frame.data()), reply_frame.size())});
  out.push_back(batch);
  out.push_back(SetMetaConsistency{44, 1, Endpoint{1, 1}, Consistency::needs_resync});
  return out;
}

}  // namespace sluice::proto::testing
