// mgmt: the registry of the file system (BeeGFS's beegfs-mgmtd, Lustre's MGS).
//
// Storage servers register their targets, metadata servers their shards,
// clients themselves. Anyone fetches the maps (targets with reachability,
// consistency, capacity pool and free space; metadata shards; buddy groups)
// with GetMaps; every change bumps the maps' version so caches can tell.
//
// Reachability follows heartbeats (BeeGFS: sysTargetOfflineTimeoutSecs): a
// target not heard from for probably_offline_after_ns is probably_offline,
// after offline_after_ns offline. With heartbeat checking off (interval 0)
// registered targets stay online, which is what short simulations want.
//
// Storage buddy groups (BeeGFS buddy mirroring, mgmtd's MirrorBuddyGroupMapper
// and its switchover in InternodeSyncer): every target also has a consistency
// state, good / needs_resync / bad. mgmt changes it in three cases only:
// - a group member goes offline while its buddy is online: it will miss
//   writes, so it is needs_resync (with both silent, nothing is written alone:
//   it stays good and may take over once heard again);
// - the primary of a group is offline and its secondary is online and good:
//   switchover. The two swap roles, the maps' version is bumped (clients and
//   servers refresh and go to the new primary); the former primary is
//   needs_resync and stays so when it comes back, until its new primary has
//   resynced it. A group whose secondary is not good has no switchover: its
//   data would be stale, so the group waits for its primary;
// - the group's primary reports its secondary's state (SetTargetConsistency):
//   needs_resync before it acknowledges writes alone, good after a resync,
//   bad after resyncs failed. Reports from any other target are refused,
//   which fences a primary that was switched away from while unreachable.
// Switchover needs heartbeat checking (check_interval_ns > 0).
#pragma once

#include <map>
#include <vector>
#include <string>

#include "core/env.hpp"
#include "core/layout/target_info.hpp"
#include "core/services/rpc.hpp"
#include "core/common/field_info.hpp"

namespace sluice {

struct MgmtConfig {
  TimeNs check_interval_ns = 0;  // 0 = no heartbeat monitoring
  TimeNs probably_offline_after_ns = 10 * k_ns_per_s;
  TimeNs offline_after_ns = 30 * k_ns_per_s;
  CapacityPoolLimits pools;  // core/layout: BeeGFS tuneStorageSpace{Low,Emergency}Limit
  // Storage buddy groups, defined by the administrator as with BeeGFS's
  // `beegfs-ctl --addmirrorgroup` (the two targets on different servers).
  // Mirroring is switched on at the storage servers
  // (StorageServiceConfig::mirror) and for new files at the metadata servers
  // (MetaServiceConfig::mirror_file_data); see the top of this file.
  std::vector<proto::BuddyGroupDesc> buddy_groups;
  // Promote the secondary of a group whose primary is offline (BeeGFS does
  // this always; off to study an unmirrored failure).
  bool buddy_switchover = true;
  // Metadata buddy groups (BeeGFS `beegfs-ctl --mirrormd`): each shard is
  // served by the first two servers that register it, the first as primary
  // unless it says it is the shard's second server (MetaMirrorConfig::second).
  // A server that registers again with a new incarnation restarted: it is
  // needs_resync, and if it was the primary and its secondary is good and
  // online, the two switch first. Heartbeats from the two servers decide
  // reachability as for targets; a group whose primary is offline switches to
  // a good, online secondary (if buddy_switchover). An offline secondary is
  // needs_resync only while its primary is online (a silent primary takes
  // nothing its secondary lacks: see check_meta_groups). The primary reports
  // its secondary's state (SetMetaConsistency); see MetaMirrorConfig.
  bool meta_mirror = false;
};

// Its fields, one description each (core/common/field_info.hpp).
template <class V>
void fields(V& v, MgmtConfig& c) {
  v("check_interval_ns", c.check_interval_ns,
    duration_in(0, k_field_max_unbounded, "heartbeat checks of the servers (0: none)"));
  v("probably_offline_after_ns", c.probably_offline_after_ns,
    duration_in(0, k_field_max_unbounded, "a server not heard from this long is probably offline"));
  v("offline_after_ns", c.offline_after_ns,
    duration_in(0, k_field_max_unbounded, "a server not heard from this long is offline (switchover)"));
  v("pools", c.pools, plain("capacity pool limits of the targets"));
  v("buddy_groups", c.buddy_groups, plain("storage buddy groups (group, primary, secondary)"));
  v("buddy_switchover", c.buddy_switchover, plain("promote the secondary of a group whose primary is offline"));
  v("meta_mirror", c.meta_mirror, plain("metadata buddy groups: each shard served by two servers"));
}

class MgmtService final : public Service {
 public:
  MgmtService(Env& env, MgmtConfig config);

  void start() override;
  void on_event(Event& event) override;
  std::string name() const override { return "mgmt"; }

  std::uint64_t version() const { return version_; }
  const std::map<TargetId, proto::TargetInfoDesc>& targets() const { return targets_; }
  const std::map<GroupId, proto::BuddyGroupDesc>& groups() const { return groups_; }
  std::uint64_t switchovers() const { return switchovers_; }
  std::map<ShardId, proto::MetaGroupDesc> meta_groups() const;
  // Metadata buddy mirroring: whether `shards` groups have formed, each with
  // its secondary in sync (good); true when meta_mirror is off. A deployment
  // is up only then (FsDeployment::registered, the cluster path's
  // "servers-up"): a primary that dies before its secondary is good cannot be
  // replaced, so a fault plan's kill timed from before that moment would meet
  // a different file system (the failover study's meta:0 point failed so in
  // some runs on real processes, its kill 40 ms after start racing the
  // initial resync).
  bool meta_mirrors_in_sync(std::size_t shards) const;

 private:
  void handle(Endpoint from, proto::Message& message);
  void reply(Endpoint to, proto::Message message);
  void check_reachability();
  // Switches every group whose primary is offline and whose secondary can take over.
  void check_switchovers();
  void set_consistency(TargetId target, proto::Consistency consistency, const std::string& why);
  void set_target_consistency(Endpoint from, const proto::SetTargetConsistency& m);
  // The group `target` belongs to (nullptr if none).
  proto::BuddyGroupDesc* group_of(TargetId target);
  proto::CapacityPool pool_for(std::uint64_t capacity_bytes, std::uint64_t free_bytes) const;
  // Metadata buddy groups.
  struct MetaGroup {
    proto::MetaGroupDesc desc;
    std::uint64_t primary_incarnation = 0;
    std::uint64_t secondary_incarnation = 0;
    proto::Reachability primary_reachability = proto::Reachability::online;
  };
  void register_meta_member(Endpoint from, const proto::RegisterMetaShard& m);
  void check_meta_groups(TimeNs now);
  void log_meta_reachability(ShardId shard, const char* role, Endpoint server, proto::Reachability was,
                             proto::Reachability now);
  void meta_switchover(MetaGroup& group, const std::string& why);
  void set_meta_consistency(Endpoint from, const proto::SetMetaConsistency& m);
  void publish_meta_shard(const MetaGroup& group);
  proto::Reachability reachability_of(Endpoint server, TimeNs now) const;

  Env& env_;
  MgmtConfig config_;
  OpTable ops_;
  std::uint64_t version_ = 1;
  std::map<TargetId, proto::TargetInfoDesc> targets_;
  std::map<TargetId, TimeNs> last_heard_ns_;
  std::map<ShardId, proto::ShardInfoDesc> shards_;
  std::map<GroupId, proto::BuddyGroupDesc> groups_;
  std::map<Endpoint, NodeId> clients_;
  std::map<ShardId, MetaGroup> meta_groups_;
  std::map<Endpoint, TimeNs> meta_heard_ns_;  // last registration or heartbeat of each mirrored metadata server
  std::uint64_t switchovers_ = 0;
};

}  // namespace sluice
