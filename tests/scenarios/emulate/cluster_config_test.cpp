// The cluster description every node process reads: defaults, JSON round
// trip, strict parsing, and the canonical service plan.
#include "scenarios/deploy/cluster_config.hpp"

#include <gtest/gtest.h>

namespace sluice::emulate {
namespace {

TEST(ClusterConfig, DefaultPutsServersOnNodeZeroAndStorageElsewhere) {
  Result<ClusterConfig> c = default_cluster(3);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(validate(*c).ok()) << validate(*c).to_string();
  EXPECT_TRUE(c->nodes[0].has(Role::mgmt));
  EXPECT_TRUE(c->nodes[0].has(Role::client));
  EXPECT_FALSE(c->nodes[0].has(Role::storage));
  EXPECT_EQ(c->nodes[2].targets, std::vector<TargetId>{2});
  EXPECT_EQ(c->client_count(), 1u);
  EXPECT_EQ(c->storage_target_count(), 2u);
  EXPECT_TRUE(c->workload.sweep.pattern_data);
  EXPECT_FALSE(default_cluster(1).ok());
  EXPECT_FALSE(default_cluster(k_max_cluster_nodes + 1).ok());
}

TEST(ClusterConfig, JsonRoundTripKeepsEveryField) {
  ClusterConfig c = *default_cluster(4);
  c.run_id = "run-7";
  c.seed = 99;
  c.nodes[1].address = "10.0.0.3";
  c.workload.sweep.files_per_rank = 3;
  c.workload.sweep.phases = {SweepPhase::write, SweepPhase::read};
  c.workload.stripe_count = 2;
  c.transport = "tcp+shm";
  Result<ClusterConfig> back = parse_cluster_config(to_json(c));
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(to_json(*back), to_json(c));
  EXPECT_EQ(back->nodes[1].address, "10.0.0.3");
  EXPECT_EQ(back->workload.sweep.phases.size(), 2u);
  EXPECT_EQ(back->node(3)->targets, std::vector<TargetId>{3});
  EXPECT_EQ(back->node(17), nullptr);
  EXPECT_EQ(back->transport, "tcp+shm");
}

TEST(ClusterConfig, UnknownKeysWrongTypesAndBadRolesAreNamed) {
  nlohmann::json j = to_json(*default_cluster(3));
  j["worklaod"] = 1;
  Result<ClusterConfig> r = parse_cluster_config(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("worklaod"), std::string::npos);

  j = to_json(*default_cluster(3));
  j["nodes"][1]["roles"] = {"storage", "gpu"};
  r = parse_cluster_config(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("gpu"), std::string::npos);

  j = to_json(*default_cluster(3));
  j["seed"] = "seven";
  r = parse_cluster_config(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("seed"), std::string::npos);

  j = to_json(*default_cluster(3));
  j["workload"]["phases"] = {"write", "fly"};
  EXPECT_FALSE(parse_cluster_config(j).ok());
  j = to_json(*default_cluster(3));
  j["workload"]["kind"] = "train_epoch";
  EXPECT_FALSE(parse_cluster_config(j).ok());
  j = to_json(*default_cluster(3));
  j["max_wait_s"] = -3;
  EXPECT_FALSE(parse_cluster_config(j).ok());
  EXPECT_FALSE(parse_cluster_config_text("{not json").ok());
  EXPECT_FALSE(parse_cluster_config_text("[1, 2]").ok());
}

TEST(ClusterConfig, ValidationNamesTheBrokenRule) {
  const auto message = [](ClusterConfig c) { return validate(c).message(); };
  ClusterConfig c = *default_cluster(3);
  c.nodes[1].roles = {Role::mgmt, Role::storage};
  EXPECT_NE(message(c).find("2 mgmt nodes"), std::string::npos);
  c = *default_cluster(3);
  c.nodes[2].targets = {1};
  EXPECT_NE(message(c).find("target 1 repeated"), std::string::npos);
  c = *default_cluster(3);
  c.nodes[2].id = 1;
  EXPECT_NE(message(c).find("duplicate"), std::string::npos);
  c = *default_cluster(3);
  c.nodes[0].targets = {9};
  EXPECT_NE(message(c).find("without the storage role"), std::string::npos);
  c = *default_cluster(3);
  c.workload.stripe_count = 3;
  EXPECT_NE(message(c).find("stripe_count"), std::string::npos);
  c = *default_cluster(3);
  c.run_id = "a b";
  EXPECT_NE(message(c).find("run_id"), std::string::npos);
  c = *default_cluster(3);
  c.storage_root = "relative";
  EXPECT_NE(message(c).find("storage_root"), std::string::npos);
  c = *default_cluster(3);
  c.nodes[0].roles = {Role::mgmt, Role::meta};
  EXPECT_NE(message(c).find("client"), std::string::npos);
  c = *default_cluster(3);
  c.workload.sweep.block_bytes = 0;
  EXPECT_FALSE(validate(c).ok());
  c = *default_cluster(3);
  c.transport = "shm";  // node processes may be on several hosts: tcp+shm
  EXPECT_EQ(message(c), "cluster config: transport: \"shm\" is not tcp, tcp+shm or ucx");
}

TEST(ServicePlan, IndicesFollowTheCanonicalOrderOverAllNodes) {
  ClusterConfig c = *default_cluster(4);
  c.nodes[3].roles = {Role::storage, Role::client};  // a second client rank
  std::swap(c.nodes[0], c.nodes[2]);                 // order of the list does not matter
  const ServicePlan p = plan_services(c);
  // node 0: mgmt, barrier, meta, client; nodes 1, 2: storage; node 3: storage, client.
  ASSERT_EQ(p.services.size(), 8u);
  EXPECT_EQ(p.mgmt, (Endpoint{0, 0}));
  EXPECT_EQ(p.barrier, (Endpoint{0, 1}));
  EXPECT_EQ(p.meta_shards, 1u);
  EXPECT_EQ(p.client_ranks, (std::vector<std::uint32_t>{2}));
  EXPECT_EQ(p.services[2].role, Role::meta);
  EXPECT_EQ(p.services[3].role, Role::client);
  EXPECT_EQ(p.services[3].rank, 0u);
  EXPECT_EQ(p.services[5].node, 2u);
  EXPECT_EQ(p.services[7].role, Role::client);
  EXPECT_EQ(p.services[7].rank, 1u);
  for (std::size_t i = 0; i < p.services.size(); ++i) EXPECT_EQ(p.services[i].index, i);
}

TEST(Role, ParsesItsOwnNames) {
  for (Role r : {Role::mgmt, Role::meta, Role::storage, Role::client}) EXPECT_EQ(*parse_role(to_string(r)), r);
  EXPECT_FALSE(parse_role("boss").ok());
}

TEST(ClusterConfig, AMountWorkloadRoundTripsAndItsMistakesAreNamed) {
  ClusterConfig c = *default_cluster(3);
  c.workload.mount.mount_point = "/mnt/sluice";
  c.workload.mount.direct_io = true;
  c.workload.mount.threads = 4;
  Result<ClusterConfig> back = parse_cluster_config(to_json(c));
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_TRUE(back->workload.mounted());
  EXPECT_EQ(back->workload.mount.mount_point, "/mnt/sluice");
  EXPECT_TRUE(back->workload.mount.direct_io);
  EXPECT_EQ(back->workload.mount.threads, 4u);
  EXPECT_EQ(to_json(*back), to_json(c));

  nlohmann::json j = to_json(c);
  j["workload"]["mount_point"] = "relative/dir";
  Result<ClusterConfig> r = parse_cluster_config(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("workload.mount_point"), std::string::npos);
  j = to_json(c);
  j["workload"]["threads"] = 0;
  r = parse_cluster_config(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("workload.threads"), std::string::npos);
  j = to_json(*default_cluster(3));  // a file sweep naming a mount point
  j["workload"]["mount_point"] = "/mnt/x";
  r = parse_cluster_config(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("only for kind"), std::string::npos);
}

TEST(ClusterConfig, MirroringPairsTargetsAcrossNodesAndFaultsNameStorageNodes) {
  ClusterConfig c = *default_cluster(5);  // targets 1..4 on nodes 1..4
  c.mirror.storage = true;
  c.faults.push_back(ClusterFault{3000, 2, Role::storage, 1000});
  ASSERT_TRUE(validate(c).ok()) << validate(c).to_string();
  Result<std::vector<proto::BuddyGroupDesc>> groups = buddy_groups(c);
  ASSERT_TRUE(groups.ok());
  ASSERT_EQ(groups->size(), 2u);
  EXPECT_EQ((*groups)[0], (proto::BuddyGroupDesc{1, 1, 2}));
  EXPECT_EQ((*groups)[1], (proto::BuddyGroupDesc{2, 3, 4}));
  Result<ClusterConfig> back = parse_cluster_config(to_json(c));
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(to_json(*back), to_json(c));

  ClusterConfig odd = *default_cluster(4);  // three targets
  odd.mirror.storage = true;
  EXPECT_NE(validate(odd).message().find("cannot be paired"), std::string::npos);
  ClusterConfig one_node = *default_cluster(2);
  one_node.nodes[1].targets = {1, 2};
  one_node.mirror.storage = true;
  EXPECT_NE(validate(one_node).message().find("different nodes"), std::string::npos);
  ClusterConfig not_storage = *default_cluster(3);
  not_storage.faults.push_back(ClusterFault{0, 0, Role::storage, 0});  // node 0 is mgmt+meta+client
  EXPECT_NE(validate(not_storage).message().find("faults[0].kill_storage_node"), std::string::npos);
  nlohmann::json j = to_json(*default_cluster(3));
  j["faults"] = {{{"at_ms", 5}}};
  Result<ClusterConfig> missing = parse_cluster_config(j);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("kill_storage_node"), std::string::npos);
}

// Metadata buddy mirroring: a meta_mirror node serves its primary's shard
// second; the plan gives it that shard; every shard needs one; faults name
// the killed service's role.
TEST(ClusterConfig, AMetaMirrorNodeServesItsPrimarysShardSecond) {
  ClusterConfig c = *default_cluster(4);  // node 0 mgmt+meta+client, 1..3 storage
  c.mirror.metadata = true;
  c.nodes[2].roles.push_back(Role::meta_mirror);
  c.nodes[2].meta_mirror_of = 0;
  c.faults.push_back(ClusterFault{100, 2, Role::meta_mirror, 50});
  c.faults.push_back(ClusterFault{200, 0, Role::meta, 0});
  ASSERT_TRUE(validate(c).ok()) << validate(c).to_string();
  const ServicePlan plan = plan_services(c);
  EXPECT_EQ(plan.meta_shards, 1u);
  std::vector<std::pair<NodeId, ShardId>> metas;
  for (const PlannedService& s : plan.services) {
    if (s.role == Role::meta || s.role == Role::meta_mirror) metas.emplace_back(s.node, s.shard);
  }
  EXPECT_EQ(metas, (std::vector<std::pair<NodeId, ShardId>>{{0, 0}, {2, 0}}));
  Result<ClusterConfig> back = parse_cluster_config(to_json(c));
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(to_json(*back), to_json(c));
  EXPECT_EQ(back->faults[0].role, Role::meta_mirror);
  EXPECT_EQ(back->faults[1].role, Role::meta);

  ClusterConfig unpaired = c;
  unpaired.nodes[2].roles.pop_back();
  EXPECT_NE(validate(unpaired).message().find("every shard needs one"), std::string::npos)
      << validate(unpaired).to_string();
  ClusterConfig self = c;
  self.nodes[2].meta_mirror_of = 2;
  EXPECT_NE(validate(self).message().find("nodes[2].meta_mirror_of"), std::string::npos) << validate(self).to_string();
  ClusterConfig off = c;
  off.mirror.metadata = false;
  EXPECT_NE(validate(off).message().find("needs mirror.metadata"), std::string::npos) << validate(off).to_string();
  ClusterConfig wrong_role = c;
  wrong_role.faults[1].node = 1;  // storage only
  EXPECT_NE(validate(wrong_role).message().find("faults[1].kill_meta_node"), std::string::npos)
      << validate(wrong_role).to_string();
  nlohmann::json two = to_json(c);
  two["faults"][0]["kill_storage_node"] = 1;
  Result<ClusterConfig> both = parse_cluster_config(two);
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.status().message().find("only one"), std::string::npos) << both.status().to_string();
}

}  // namespace
}  // namespace sluice::emulate
