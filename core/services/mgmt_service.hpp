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
#pragma once

#include <map>
#include <vector>
#include <string>

#include "core/env.hpp"
#include "core/layout/target_info.hpp"
#include "core/services/rpc.hpp"

namespace sluice {

struct MgmtConfig {
  TimeNs check_interval_ns = 0;                    // 0 = no heartbeat monitoring
  TimeNs probably_offline_after_ns = 10 * k_ns_per_s;
  TimeNs offline_after_ns = 30 * k_ns_per_s;
  CapacityPoolLimits pools;  // core/layout: BeeGFS tuneStorageSpace{Low,Emergency}Limit
  // Storage buddy groups, defined by the administrator as with BeeGFS's
  // `beegfs-ctl --addmirrorgroup`; mirroring itself is the reliability issue's.
  std::vector<proto::BuddyGroupDesc> buddy_groups;
};

class MgmtService final : public Service {
 public:
  MgmtService(Env& env, MgmtConfig config);

  void start() override;
  void on_event(Event& event) override;
  std::string name() const override { return "mgmt"; }

  std::uint64_t version() const { return version_; }
  const std::map<TargetId, proto::TargetInfoDesc>& targets() const { return targets_; }

 private:
  void handle(Endpoint from, proto::Message& message);
  void reply(Endpoint to, proto::Message message);
  void check_reachability();
  proto::CapacityPool pool_for(std::uint64_t capacity_bytes, std::uint64_t free_bytes) const;

  Env& env_;
  MgmtConfig config_;
  OpTable ops_;
  std::uint64_t version_ = 1;
  std::map<TargetId, proto::TargetInfoDesc> targets_;
  std::map<TargetId, TimeNs> last_heard_ns_;
  std::map<ShardId, proto::ShardInfoDesc> shards_;
  std::map<GroupId, proto::BuddyGroupDesc> groups_;
  std::map<Endpoint, NodeId> clients_;
};

}  // namespace sluice
