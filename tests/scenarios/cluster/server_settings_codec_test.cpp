// The servers' settings a rank writes for its node process
// (scenarios/deploy/server_settings_codec.hpp): every field carried comes
// back as written, and a bad document is refused naming the key.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "scenarios/deploy/server_settings_codec.hpp"

namespace sluice::emulate {
namespace {

using json = nlohmann::json;

// Every carried field away from its default.
NodeRunOptions::FsSettings unusual() {
  NodeRunOptions::FsSettings fs;
  MgmtConfig& m = fs.mgmt;
  m.check_interval_ns = 7;
  m.probably_offline_after_ns = 8;
  m.offline_after_ns = 9;
  m.pools = {.low_free_bytes = 1000, .emergency_free_bytes = 10};
  m.buddy_groups = {proto::BuddyGroupDesc{.group = 1, .primary = 2, .secondary = 3},
                    proto::BuddyGroupDesc{.group = 4, .primary = 5, .secondary = 6}};
  m.buddy_switchover = false;
  m.meta_mirror = true;

  MetaServiceConfig& meta = fs.meta;
  NamespaceConfig& ns = meta.ns;
  ns.policy = MetaPolicy::striped_dir;
  ns.shard_count = 6;
  ns.root_shard = 2;
  ns.dir_stripe_count = 3;
  ns.dir_hash = DirHashKind::rendezvous;
  ns.mkdir_rule = MkdirShardRule::random_near_root;
  ns.mkdir_spread_depth_max = 4;
  ns.dir_auto_split = false;
  ns.dir_split_count = 77;
  ns.dir_split_delta = 2;
  ns.dir_stripes_max = 5;
  ns.split_rule = SplitShardRule::random;
  meta.stripe_flavor = StripeFlavor::lustre;
  meta.default_chunk_bytes = 1 << 20;
  meta.default_stripe_count = 3;
  meta.default_chooser = proto::ChooserKind::space_weighted_qos;
  meta.mirror_file_data = true;
  meta.maps_max_age_ns = 11;
  meta.readdir_page_max_entries = 12;
  meta.reply_cache_entries = 13;
  meta.kept_reply_prune_batch = 17;
  meta.max_waiting_for_maps = 14;
  meta.file_id_range = 15;
  meta.op_units = MetaOpUnits{2, 3, 4, 5, 6, 7, 8, 9};
  meta.rpc = RpcLimits{.timeout_ns = 21,
                       .max_attempts = 22,
                       .timeout_backoff = 23,
                       .timeout_max_ns = 24,
                       .again_backoff_ns = 25,
                       .again_backoff_max_ns = 26,
                       .max_again_replies = 27,
                       .max_outstanding = 28,
                       .max_in_progress_replies = 29};
  MetaMirrorConfig& mm = meta.mirror;
  mm.enabled = true;
  mm.second = true;
  mm.heartbeat_interval_ns = 31;
  mm.maps_refresh_interval_ns = 32;
  mm.forward_rpc.timeout_ns = 33;
  mm.max_log_records = 34;
  mm.max_batch_records = 35;
  mm.max_batch_bytes = 36;
  mm.resync_page_entries = 37;
  mm.max_held_replies = 38;

  StorageServiceConfig& s = fs.storage;
  s.target_capacity_bytes = 41;
  s.max_active_per_target = 42;
  s.max_queued_per_target = 43;
  s.staging_budget_bytes = 44;
  s.staging_numa = 1;
  s.server_nic = 2;
  s.egress_limit_bytes_per_s = 1.5e9;
  s.egress_burst_bytes = 45;
  s.heartbeat_interval_ns = 46;
  s.rpc.max_attempts = 5;
  StorageMirrorConfig& sm = s.mirror;
  sm.enabled = true;
  sm.maps_refresh_interval_ns = 51;
  sm.forward_rpc.max_attempts = 4;
  sm.resync_log_max_files = 52;
  sm.resync_piece_bytes = 53;
  sm.max_resync_failures = 54;
  sm.staging_budget_bytes = 55;
  sm.buddy_register_wait_ns = 56;
  return fs;
}

void expect_same_rpc(const RpcLimits& a, const RpcLimits& b) {
  EXPECT_EQ(a.timeout_ns, b.timeout_ns);
  EXPECT_EQ(a.max_attempts, b.max_attempts);
  EXPECT_EQ(a.timeout_backoff, b.timeout_backoff);
  EXPECT_EQ(a.timeout_max_ns, b.timeout_max_ns);
  EXPECT_EQ(a.again_backoff_ns, b.again_backoff_ns);
  EXPECT_EQ(a.again_backoff_max_ns, b.again_backoff_max_ns);
  EXPECT_EQ(a.max_again_replies, b.max_again_replies);
  EXPECT_EQ(a.max_outstanding, b.max_outstanding);
  EXPECT_EQ(a.max_in_progress_replies, b.max_in_progress_replies);
}

TEST(ServerSettings, EveryCarriedFieldComesBackAsWritten) {
  const NodeRunOptions::FsSettings want = unusual();
  // Through text, as the node process reads its file.
  const json written = json::parse(server_settings_to_json(want).dump());
  Result<NodeRunOptions::FsSettings> got = server_settings_from_json(written);
  ASSERT_TRUE(got.ok()) << got.status().message();
  const MgmtConfig& m = got->mgmt;
  EXPECT_EQ(m.check_interval_ns, 7);
  EXPECT_EQ(m.probably_offline_after_ns, 8);
  EXPECT_EQ(m.offline_after_ns, 9);
  EXPECT_EQ(m.pools.low_free_bytes, 1000u);
  EXPECT_EQ(m.pools.emergency_free_bytes, 10u);
  ASSERT_EQ(m.buddy_groups.size(), 2u);
  EXPECT_EQ(m.buddy_groups[1].group, 4u);
  EXPECT_EQ(m.buddy_groups[1].primary, 5u);
  EXPECT_EQ(m.buddy_groups[1].secondary, 6u);
  EXPECT_FALSE(m.buddy_switchover);
  EXPECT_TRUE(m.meta_mirror);

  const MetaServiceConfig& meta = got->meta;
  EXPECT_EQ(meta.ns, want.meta.ns);
  EXPECT_EQ(meta.stripe_flavor, StripeFlavor::lustre);
  EXPECT_EQ(meta.default_chunk_bytes, 1u << 20);
  EXPECT_EQ(meta.default_stripe_count, 3u);
  EXPECT_EQ(meta.default_chooser, proto::ChooserKind::space_weighted_qos);
  EXPECT_TRUE(meta.mirror_file_data);
  EXPECT_EQ(meta.maps_max_age_ns, 11);
  EXPECT_EQ(meta.readdir_page_max_entries, 12u);
  EXPECT_EQ(meta.reply_cache_entries, 13u);
  EXPECT_EQ(meta.kept_reply_prune_batch, 17u);
  EXPECT_EQ(meta.max_waiting_for_maps, 14u);
  EXPECT_EQ(meta.file_id_range, 15u);
  EXPECT_EQ(meta.op_units, want.meta.op_units);
  expect_same_rpc(meta.rpc, want.meta.rpc);
  const MetaMirrorConfig& mm = meta.mirror;
  EXPECT_TRUE(mm.enabled);
  EXPECT_TRUE(mm.second);
  EXPECT_EQ(mm.heartbeat_interval_ns, 31);
  EXPECT_EQ(mm.maps_refresh_interval_ns, 32);
  expect_same_rpc(mm.forward_rpc, want.meta.mirror.forward_rpc);
  EXPECT_EQ(mm.max_log_records, 34u);
  EXPECT_EQ(mm.max_batch_records, 35u);
  EXPECT_EQ(mm.max_batch_bytes, 36u);
  EXPECT_EQ(mm.resync_page_entries, 37u);
  EXPECT_EQ(mm.max_held_replies, 38u);

  const StorageServiceConfig& s = got->storage;
  EXPECT_EQ(s.target_capacity_bytes, 41u);
  EXPECT_EQ(s.max_active_per_target, 42u);
  EXPECT_EQ(s.max_queued_per_target, 43u);
  EXPECT_EQ(s.staging_budget_bytes, 44u);
  EXPECT_EQ(s.staging_numa, 1u);
  EXPECT_EQ(s.server_nic, 2u);
  EXPECT_EQ(s.egress_limit_bytes_per_s, 1.5e9);
  EXPECT_EQ(s.egress_burst_bytes, 45u);
  EXPECT_EQ(s.heartbeat_interval_ns, 46);
  expect_same_rpc(s.rpc, want.storage.rpc);
  const StorageMirrorConfig& sm = s.mirror;
  EXPECT_TRUE(sm.enabled);
  EXPECT_EQ(sm.maps_refresh_interval_ns, 51);
  expect_same_rpc(sm.forward_rpc, want.storage.mirror.forward_rpc);
  EXPECT_EQ(sm.resync_log_max_files, 52u);
  EXPECT_EQ(sm.resync_piece_bytes, 53u);
  EXPECT_EQ(sm.max_resync_failures, 54u);
  EXPECT_EQ(sm.staging_budget_bytes, 55u);
  EXPECT_EQ(sm.buddy_register_wait_ns, 56);

  EXPECT_EQ(server_settings_to_json(*got), written) << "written again, the same document";
}

TEST(ServerSettings, LeftOutKeysAreTheCoresDefaultsAndUnsetUnitsStayUnset) {
  Result<NodeRunOptions::FsSettings> got = server_settings_from_json(json::parse(R"({"meta": {"op_units": null}})"));
  ASSERT_TRUE(got.ok()) << got.status().message();
  const NodeRunOptions::FsSettings defaults;
  EXPECT_EQ(got->meta.ns, defaults.meta.ns);
  EXPECT_FALSE(got->meta.op_units.has_value());
  EXPECT_EQ(got->storage.max_queued_per_target, defaults.storage.max_queued_per_target);
  EXPECT_EQ(got->mgmt.offline_after_ns, defaults.mgmt.offline_after_ns);
  EXPECT_TRUE(server_settings_from_json(json::object()).ok());
}

// The document with `key` (a path of object keys) set to `value`; the refusal's text.
std::string refusal(const std::vector<std::string>& key, const json& value) {
  json doc = server_settings_to_json(NodeRunOptions::FsSettings{});
  json* at = &doc;
  for (const std::string& k : key) at = &(*at)[k];
  *at = value;
  Result<NodeRunOptions::FsSettings> got = server_settings_from_json(doc);
  return got.ok() ? std::string("accepted") : got.status().message();
}

TEST(ServerSettings, ABadDocumentIsRefusedNamingTheKeyAndTheProblem) {
  EXPECT_EQ(refusal({"meta", "ns", "policy"}, "dir_hash"),
            "server settings: meta.ns.policy: must be one of dir_owner, striped_dir, path_hash");
  EXPECT_EQ(refusal({"storage", "max_active_per_target"}, -1),
            "server settings: storage.max_active_per_target: must be a whole number 0..4294967295");
  EXPECT_EQ(refusal({"storage", "staging_numa"}, 70000),
            "server settings: storage.staging_numa: must be a whole number 0..65535");
  EXPECT_EQ(refusal({"storage", "max_active_per_target"}, 1.5),
            "server settings: storage.max_active_per_target: must be a whole number 0..4294967295");
  EXPECT_EQ(refusal({"mgmt", "offline_after_ns"}, -5),
            "server settings: mgmt.offline_after_ns: must be a whole number of ns >= 0");
  EXPECT_EQ(refusal({"storage", "egress_limit_bytes_per_s"}, "fast"),
            "server settings: storage.egress_limit_bytes_per_s: must be a number >= 0");
  EXPECT_EQ(refusal({"meta", "mirror", "enabled"}, 1), "server settings: meta.mirror.enabled: must be true or false");
  EXPECT_EQ(refusal({"meta", "mirror", "forward_rpc", "max_attempt"}, 2),
            "server settings: meta.mirror.forward_rpc.max_attempt: not a setting of this service");
  EXPECT_EQ(refusal({"client"}, json::object()), "server settings: client: not a setting of this service");
  EXPECT_EQ(refusal({"mgmt", "buddy_groups"}, json::array({json{{"group", 1}, {"primary", "a"}}})),
            "server settings: mgmt.buddy_groups[0].primary: must be a whole number 0..4294967295");
  EXPECT_EQ(refusal({"mgmt", "pools"}, 3), "server settings: mgmt.pools: must be an object");
  // A field's declared range (its fields() list beside the config), then the configs' own checks.
  EXPECT_EQ(refusal({"meta", "ns", "shard_count"}, 0), "server settings: meta.ns.shard_count: 0 is outside 1..65536");
  EXPECT_EQ(refusal({"meta", "ns", "root_shard"}, 3),
            "server settings: meta.ns: namespace config: root_shard 3 is not below shard_count 1");
  EXPECT_NE(refusal({"mgmt", "pools", "emergency_free_bytes"}, std::uint64_t{1} << 60).find("mgmt.pools: "),
            std::string::npos);
  EXPECT_EQ(server_settings_from_json(json::array()).status().message(), "server settings: must be a JSON object");
}

}  // namespace
}  // namespace sluice::emulate
