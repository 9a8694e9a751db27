// Metadata buddy mirroring (BeeGFS metadata mirroring, `beegfs-ctl --mirrormd`):
// the two servers of a mirrored shard, and what the primary sends the
// secondary. See core/services/meta_mirror.hpp for the protocol.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/ids.hpp"
#include "core/common/status.hpp"
#include "core/proto/message_type.hpp"
#include "core/proto/wire_descs.hpp"
#include "core/proto/wire_enums.hpp"
#include "core/proto/wire_limits.hpp"

namespace sluice::proto {

// A metadata buddy group: the two servers of one mirrored shard. Clients and
// other shards send the shard's requests to `primary` (ShardInfoDesc.endpoint
// names it too); `secondary_state` says whether the secondary holds
// everything the primary acknowledged (good) and so may take over, and
// whether mgmt hears from it.
struct MetaGroupDesc {
  ShardId shard = k_no_id;
  Endpoint primary;
  Endpoint secondary;
  Consistency secondary_state = Consistency::needs_resync;
  Reachability secondary_reachability = Reachability::offline;

  template <class Io>
  void io(Io& f) {
    f("shard", shard);
    f("primary", primary);
    f("secondary", secondary);
    f("secondary_state", secondary_state);
    f("secondary_reachability", secondary_reachability);
  }
  bool operator==(const MetaGroupDesc&) const = default;
};

struct MetaRecordDesc {
  MetaRecordKind kind = MetaRecordKind::reset;
  std::string path;
  std::string name;
  InodeDesc inode;
  std::uint64_t value = 0;
  Endpoint client;
  std::string frame;  // an encoded reply message (reply records only)

  template <class Io>
  void io(Io& f) {
    f("kind", kind);
    f("path", path, k_max_path_bytes);
    f("name", name, k_max_name_bytes);
    f("inode", inode);
    f("value", value);
    f("client", client);
    f("frame", frame, k_max_mirror_reply_bytes);
  }
  bool operator==(const MetaRecordDesc&) const = default;
};

// Primary -> secondary: records first_sequence, first_sequence + 1, ... of
// stream `epoch`. The secondary applies them in order once (a resent batch's
// records it already has are skipped), refuses a batch that leaves a gap or
// belongs to another epoch unless it starts with `reset`, and refuses any
// batch from a server that its maps do not name as its primary. Reply: Ack
// (unavailable: not this shard's secondary; invalid_argument: gap or epoch).
struct MetaMirror {
  static constexpr MessageType k_type = MessageType::meta_mirror;
  static constexpr std::string_view k_name = "MetaMirror";
  RequestId request_id = 0;
  ShardId shard = k_no_id;
  std::uint64_t epoch = 0;
  std::uint64_t first_sequence = 0;
  std::vector<MetaRecordDesc> records;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("shard", shard);
    f("epoch", epoch);
    f("first_sequence", first_sequence);
    f("records", records, k_max_mirror_records);
  }
  bool operator==(const MetaMirror&) const = default;
};

// The primary of a mirrored shard reports its secondary's state to mgmt
// (as SetTargetConsistency does for storage): needs_resync before it answers
// requests alone, good when a resync completed. mgmt accepts it only from the
// group's current primary, which fences a primary that was switched away
// from. Reply: Ack (invalid_argument when refused).
struct SetMetaConsistency {
  static constexpr MessageType k_type = MessageType::set_meta_consistency;
  static constexpr std::string_view k_name = "SetMetaConsistency";
  RequestId request_id = 0;
  ShardId shard = k_no_id;
  Endpoint reporter;
  Consistency consistency = Consistency::good;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("shard", shard);
    f("reporter", reporter);
    f("consistency", consistency);
  }
  bool operator==(const SetMetaConsistency&) const = default;
};

}  // namespace sluice::proto
