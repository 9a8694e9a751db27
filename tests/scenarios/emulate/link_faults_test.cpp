// LinkFaults and NetnsCluster: the nft scripts and counter parsing as pure
// functions, then (label netns; needs root and nft, else skipped with the
// reason) two TCP transports in two namespaces of a NetnsCluster
// (TransportConfig::netns) exchanging messages while a partition and total
// loss cut them and after the heal, with the drops counted.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <memory>

#include "scenarios/netns/cluster_emulator.hpp"
#include "scenarios/netns/link_faults.hpp"
#include "scenarios/netns/netns_cluster.hpp"
#include "tests/transports/transport_test_util.hpp"
#include "transports/transport.hpp"

namespace sluice::emulate {
namespace {

using transport::testing::EventPump;

TEST(LinkFaultsScript, TableScriptEmptiesAnOldTableAndMakesCountersAndChains) {
  const std::string s = nft_table_script();
  EXPECT_NE(s.find("delete table inet sluice_faults"), std::string::npos);
  EXPECT_NE(s.find("counter partition_drops"), std::string::npos);
  EXPECT_NE(s.find("counter loss_drops"), std::string::npos);
  EXPECT_NE(s.find("hook output"), std::string::npos);
  EXPECT_NE(s.find("hook input"), std::string::npos);
}

TEST(LinkFaultsScript, RulesDropBothWaysForACutAndByChanceForLoss) {
  NodeLinkFaults f;
  EXPECT_EQ(nft_rules_script(f).find("add rule"), std::string::npos) << "no fault, no rule";
  f.cut_from = {"10.1.0.3", "10.1.0.4"};
  f.loss_ppm = 25'000;
  const std::string s = nft_rules_script(f);
  EXPECT_NE(s.find("output ip daddr { 10.1.0.3, 10.1.0.4 } counter name partition_drops drop"), std::string::npos) << s;
  EXPECT_NE(s.find("input ip saddr { 10.1.0.3, 10.1.0.4 } counter name partition_drops drop"), std::string::npos) << s;
  EXPECT_NE(s.find("numgen random mod 1000000 < 25000 counter name loss_drops drop"), std::string::npos) << s;
  EXPECT_LT(s.find("flush chain inet sluice_faults output"), s.find("add rule")) << "the old rules go first";
  // Certain loss has no numgen match (its values stop at k_loss_scale - 1): every packet goes.
  f.loss_ppm = k_loss_scale;
  EXPECT_NE(nft_rules_script(f).find("add rule inet sluice_faults output counter name loss_drops drop"),
            std::string::npos);
}

TEST(LinkFaultsScript, PartitionRulesCutExactlyAcrossEverySide) {
  const std::vector<std::string> addresses = {"a0", "a1", "a2", "a3"};
  const std::vector<NodeLinkFaults> rules = partition_rules({{0, 1}}, addresses, 7);
  ASSERT_EQ(rules.size(), 4u);
  EXPECT_EQ(rules[0].cut_from, (std::vector<std::string>{"a2", "a3"}));
  EXPECT_EQ(rules[1].cut_from, (std::vector<std::string>{"a2", "a3"}));
  EXPECT_EQ(rules[2].cut_from, (std::vector<std::string>{"a0", "a1"}));
  EXPECT_EQ(rules[3].cut_from, (std::vector<std::string>{"a0", "a1"}));
  for (const NodeLinkFaults& r : rules) EXPECT_EQ(r.loss_ppm, 7u);
  // Two partitions: a node is cut from everyone on the other side of either.
  const std::vector<NodeLinkFaults> two = partition_rules({{0}, {3}}, addresses, 0);
  EXPECT_EQ(two[0].cut_from, (std::vector<std::string>{"a1", "a2", "a3"}));
  EXPECT_EQ(two[1].cut_from, (std::vector<std::string>{"a0", "a3"}));
  EXPECT_TRUE(partition_rules({}, addresses, 0)[2].cut_from.empty());
}

TEST(LinkFaultsScript, LossIsAProbabilityInPartsPerMillion) {
  EXPECT_EQ(*loss_to_ppm(0.0), 0u);
  EXPECT_EQ(*loss_to_ppm(0.3), 300'000u);
  EXPECT_EQ(*loss_to_ppm(1.0), k_loss_scale);
  EXPECT_EQ(loss_to_ppm(-0.1).status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(loss_to_ppm(1.5).status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(loss_to_ppm(std::numeric_limits<double>::quiet_NaN()).status().code(), StatusCode::invalid_argument);
}

TEST(LinkFaultsScript, CountersAreReadFromNftJsonAndBadJsonIsAnError) {
  const std::string json = R"({"nftables": [{"metainfo": {"version": "1.0.6"}},
    {"counter": {"family": "inet", "name": "partition_drops", "table": "sluice_faults", "handle": 1, "packets": 12, "bytes": 900}},
    {"counter": {"family": "inet", "name": "loss_drops", "table": "sluice_faults", "handle": 2, "packets": 3, "bytes": 180}}]})";
  Result<LinkDropCounts> c = parse_nft_counters(json);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->partition_packets, 12u);
  EXPECT_EQ(c->loss_packets, 3u);
  EXPECT_EQ(parse_nft_counters("not json").status().code(), StatusCode::corrupt);
  EXPECT_EQ(parse_nft_counters(R"({"nftables": []})").status().code(), StatusCode::not_found);
  EXPECT_EQ(parse_nft_counters(R"({"nftables": [{"counter": {"name": "loss_drops", "packets": -1}}]})").status().code(),
            StatusCode::corrupt);
}

TEST(LinkFaultsScript, DelayIsRefusedSayingWhy) {
  LinkFaults faults(EmulationPlan{});
  EXPECT_TRUE(faults.set_delay(0).ok());
  const Status st = faults.set_delay(1'000'000);
  EXPECT_EQ(st.code(), StatusCode::unavailable);
  EXPECT_NE(st.message().find("netem"), std::string::npos) << st.message();
  EXPECT_EQ(faults.set_loss(0.5).code(), StatusCode::invalid_argument) << "rules before install()";
}

// ---- in namespaces (root) ----------------------------------------------------

struct TwoNodes {
  std::unique_ptr<NetnsCluster> cluster;
  std::unique_ptr<LinkFaults> faults;
  std::unique_ptr<transport::Transport> a;
  std::unique_ptr<transport::Transport> b;
};

Result<TwoNodes> two_nodes(std::string& skip) {
  if (std::string why = netns_permitted(); !why.empty()) {
    skip = why;
    return error(StatusCode::unavailable, why);
  }
  PlanOptions po;
  po.nodes = 2;
  po.link = *parse_link_spec("1gbit");
  po.subnet = "10.215.0.0/24";
  po.launcher_pid = ::getpid();
  po.tag = "lf";
  Result<EmulationPlan> plan = plan_emulation(po);
  if (!plan.ok()) return plan.status();
  Result<std::unique_ptr<NetnsCluster>> cluster = NetnsCluster::create(*plan);
  if (!cluster.ok()) return cluster.status();
  TwoNodes n;
  n.cluster = std::move(cluster).value();
  n.faults = std::make_unique<LinkFaults>(*plan);
  if (Status st = n.faults->install(); !st.ok()) {
    skip = st.message();
    return st;
  }
  for (std::size_t i = 0; i < 2; ++i) {
    transport::TransportConfig tc;
    tc.local_id = 10 + i;
    tc.rail_addresses = {plan->nodes[i].address + ":0"};
    tc.connections_per_rail = 1;
    tc.netns = n.cluster->netns_path(i);
    Result<std::unique_ptr<transport::Transport>> t = transport::create_transport("tcp", tc);
    if (!t.ok()) return t.status();
    (i == 0 ? n.a : n.b) = std::move(t).value();
  }
  return n;
}

bool message_arrives(transport::Transport& from, transport::PeerId peer, EventPump& to_pump, std::uint64_t tag) {
  if (!from.send_message(peer, 1, transport::testing::make_frame(64, tag)).ok()) return false;
  return to_pump.wait_kind<transport::MessageReceived>().has_value();
}

TEST(LinkFaultsNetns, TcpBetweenNamespacesIsCutByAPartitionAndHealsAfterIt) {
  std::string skip;
  Result<TwoNodes> nodes = two_nodes(skip);
  if (!skip.empty()) GTEST_SKIP() << skip;
  ASSERT_TRUE(nodes.ok()) << nodes.status().to_string();
  // The listen address is the node's own, inside its namespace.
  EXPECT_EQ(nodes->b->listen_address().rails.at(0).rfind(nodes->cluster->plan().nodes[1].address + ":", 0), 0u);
  EventPump pa(*nodes->a);
  EventPump pb(*nodes->b);
  Result<transport::PeerId> peer = nodes->a->connect(nodes->b->listen_address());
  ASSERT_TRUE(peer.ok()) << peer.status().to_string();
  ASSERT_TRUE(pa.wait_kind<transport::PeerUp>());
  ASSERT_TRUE(message_arrives(*nodes->a, *peer, pb, 1));

  ASSERT_TRUE(nodes->faults->set_partitions({{0}}).ok());
  ASSERT_TRUE(nodes->a->send_message(*peer, 1, transport::testing::make_frame(64, 2)).ok());
  // Bounded wait (EventPump: 50 rounds of 200 ms) that must see nothing.
  EXPECT_FALSE(pb.wait_kind<transport::MessageReceived>().has_value()) << "a message crossed the partition";
  Result<LinkDropCounts> cut = nodes->faults->drops();
  ASSERT_TRUE(cut.ok()) << cut.status().to_string();
  EXPECT_GT(cut->partition_packets, 0u);
  EXPECT_EQ(cut->loss_packets, 0u);

  // Healed: TCP resends what the partition dropped, in order.
  ASSERT_TRUE(nodes->faults->heal().ok());
  auto healed = pb.wait_kind<transport::MessageReceived>();
  ASSERT_TRUE(healed.has_value()) << "the dropped message did not arrive after the heal";
  ASSERT_TRUE(message_arrives(*nodes->a, *peer, pb, 3));

  // Total loss cuts too, and is counted as loss.
  const Status loss = nodes->faults->set_loss(1.0);
  ASSERT_TRUE(loss.ok()) << loss.to_string();
  ASSERT_TRUE(nodes->a->send_message(*peer, 1, transport::testing::make_frame(64, 4)).ok());
  EXPECT_FALSE(pb.wait_kind<transport::MessageReceived>().has_value());
  Result<LinkDropCounts> lost = nodes->faults->drops();
  ASSERT_TRUE(lost.ok());
  EXPECT_GT(lost->loss_packets, 0u);
  ASSERT_TRUE(nodes->faults->heal().ok());
  EXPECT_TRUE(pb.wait_kind<transport::MessageReceived>().has_value());

  nodes->a.reset();
  nodes->b.reset();
  EXPECT_TRUE(nodes->cluster->remove().empty()) << "namespaces left behind";
}

TEST(LinkFaultsNetns, ABadNamespacePathIsRefusedNamingIt) {
  transport::TransportConfig tc;
  tc.local_id = 1;
  tc.rail_addresses = {"127.0.0.1:0"};
  tc.netns = "/run/netns/sluice-no-such-namespace";
  Result<std::unique_ptr<transport::Transport>> t = transport::create_transport("tcp", tc);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::invalid_argument);
  EXPECT_NE(t.status().message().find("sluice-no-such-namespace"), std::string::npos) << t.status().message();
  tc.netns = "/proc/self/status";  // a file, not a namespace
  t = transport::create_transport("tcp", tc);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("not a network namespace"), std::string::npos) << t.status().message();
  tc.netns = "/proc/self/ns/net";  // this process's own: fine
  t = transport::create_transport("tcp", tc);
  EXPECT_TRUE(t.ok()) << t.status().to_string();
}

}  // namespace
}  // namespace sluice::emulate
