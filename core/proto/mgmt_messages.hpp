// Messages of the management service (registration, heartbeats, the cluster
// maps), after BeeGFS's management daemon: storage and metadata servers and
// clients register, servers send heartbeats with their targets' state, and
// everyone pulls versioned maps of targets, shards and buddy groups.
// Also Ack, the generic reply carrying only a status.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/ids.hpp"
#include "core/common/status.hpp"
#include "core/proto/message_type.hpp"
#include "core/proto/meta_mirror_messages.hpp"
#include "core/proto/wire_descs.hpp"
#include "core/proto/wire_limits.hpp"

namespace sluice::proto {

// The reply to any request that returns nothing but success or an error
// (registrations, Unlink, Rmdir, Rename, LinkEntry, UnlinkEntry, AttachDir,
// DetachDir, RemoveChunks).
struct Ack {
  static constexpr MessageType k_type = MessageType::ack;
  static constexpr std::string_view k_name = "Ack";
  RequestId request_id = 0;
  StatusCode status = StatusCode::ok;
  std::string error;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("status", status);
    f("error", error, k_max_error_bytes);
  }
  bool operator==(const Ack&) const = default;
};

// A storage server announces one of its targets. Reply: Ack.
struct RegisterTarget {
  static constexpr MessageType k_type = MessageType::register_target;
  static constexpr std::string_view k_name = "RegisterTarget";
  RequestId request_id = 0;
  TargetId target = k_no_id;
  NodeId node = k_no_id;
  Endpoint endpoint;
  std::uint64_t capacity_bytes = 0;
  std::uint64_t free_bytes = 0;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("target", target);
    f("node", node);
    f("endpoint", endpoint);
    f("capacity_bytes", capacity_bytes);
    f("free_bytes", free_bytes);
  }
  bool operator==(const RegisterTarget&) const = default;
};

// A metadata server announces the shard it serves. `incarnation` is drawn
// anew each time a server starts, so mgmt tells a restarted server (which may
// have lost what it held) from a resent registration. `second`: the server
// is configured as the shard's second (mirror) server, so it takes the
// secondary's place of a new group (as `beegfs-ctl --addmirrorgroup` names
// primary and secondary). Reply: Ack (invalid_argument: a mirrored shard that
// has two other servers already).
struct RegisterMetaShard {
  static constexpr MessageType k_type = MessageType::register_meta_shard;
  static constexpr std::string_view k_name = "RegisterMetaShard";
  RequestId request_id = 0;
  ShardId shard = k_no_id;
  Endpoint endpoint;
  std::uint64_t incarnation = 0;
  bool second = false;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("shard", shard);
    f("endpoint", endpoint);
    f("incarnation", incarnation);
    f("second", second);
  }
  bool operator==(const RegisterMetaShard&) const = default;
};

// A client announces itself. Reply: Ack.
struct RegisterClient {
  static constexpr MessageType k_type = MessageType::register_client;
  static constexpr std::string_view k_name = "RegisterClient";
  RequestId request_id = 0;
  NodeId node = k_no_id;
  Endpoint endpoint;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("node", node);
    f("endpoint", endpoint);
  }
  bool operator==(const RegisterClient&) const = default;
};

// Periodic liveness and free-space report of a server; no reply. `sequence`
// increases by one per heartbeat so mgmt can see losses and reordering.
struct Heartbeat {
  static constexpr MessageType k_type = MessageType::heartbeat;
  static constexpr std::string_view k_name = "Heartbeat";
  Endpoint from;
  std::uint64_t sequence = 0;
  std::vector<TargetInfoDesc> targets;

  template <class Io>
  void io(Io& f) {
    f("from", from);
    f("sequence", sequence);
    f("targets", targets, k_max_targets_per_node);
  }
  bool operator==(const Heartbeat&) const = default;
};

// Asks for the maps if they are newer than `known_version` (0: always). Reply: MapsReply.
struct GetMaps {
  static constexpr MessageType k_type = MessageType::get_maps;
  static constexpr std::string_view k_name = "GetMaps";
  RequestId request_id = 0;
  std::uint64_t known_version = 0;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("known_version", known_version);
  }
  bool operator==(const GetMaps&) const = default;
};

// The cluster maps at `version`; empty vectors with version == known_version
// mean "unchanged".
struct MapsReply {
  static constexpr MessageType k_type = MessageType::maps_reply;
  static constexpr std::string_view k_name = "MapsReply";
  RequestId request_id = 0;
  StatusCode status = StatusCode::ok;
  std::string error;
  std::uint64_t version = 0;
  std::vector<TargetInfoDesc> targets;
  std::vector<ShardInfoDesc> shards;
  std::vector<BuddyGroupDesc> groups;
  std::vector<MetaGroupDesc> meta_groups;  // mirrored metadata shards

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("status", status);
    f("error", error, k_max_error_bytes);
    f("version", version);
    f("targets", targets, k_max_map_targets);
    f("shards", shards, k_max_map_shards);
    f("groups", groups, k_max_map_groups);
    f("meta_groups", meta_groups, k_max_map_meta_groups);
  }
  bool operator==(const MapsReply&) const = default;
};

// A workload rank arrives at the named barrier; the coordinator answers Ack
// once `participants` ranks have arrived (elbencho's master synchronises its
// services' phases the same way). Reply: Ack.
struct Barrier {
  static constexpr MessageType k_type = MessageType::barrier;
  static constexpr std::string_view k_name = "Barrier";
  RequestId request_id = 0;
  std::string name;
  std::uint32_t participants = 0;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("name", name, k_max_name_bytes);
    f("participants", participants);
  }
  bool operator==(const Barrier&) const = default;
};

// The primary of a buddy group reports the consistency of its secondary
// `target` (BeeGFS SetTargetConsistencyStatesMsg): needs_resync when a
// forwarded write failed (before it acknowledges writes alone), good when a
// resync completed, bad when resyncs keep failing. mgmt accepts it only from
// `reporter`, the group's current primary, so a stale primary (one switched
// away from while it was unreachable) learns that it is one and cannot
// acknowledge writes alone. Reply: Ack (invalid_argument when refused).
struct SetTargetConsistency {
  static constexpr MessageType k_type = MessageType::set_target_consistency;
  static constexpr std::string_view k_name = "SetTargetConsistency";
  RequestId request_id = 0;
  TargetId reporter = k_no_id;
  TargetId target = k_no_id;
  Consistency consistency = Consistency::good;

  template <class Io>
  void io(Io& f) {
    f("request_id", request_id);
    f("reporter", reporter);
    f("target", target);
    f("consistency", consistency);
  }
  bool operator==(const SetTargetConsistency&) const = default;
};

}  // namespace sluice::proto
