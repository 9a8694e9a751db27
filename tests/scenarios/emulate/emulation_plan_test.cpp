// Naming, address planning, link parsing and the exact ip/tc command lines
// of an emulation (`sluice mount`, `--backend emulate`), without running any of them.
#include "scenarios/netns/emulation_plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace sluice::emulate {
namespace {

bool contains(const std::vector<CommandLine>& commands, const CommandLine& wanted) {
  return std::find(commands.begin(), commands.end(), wanted) != commands.end();
}

PlanOptions three_nodes() {
  PlanOptions o;
  o.nodes = 3;
  o.link = *parse_link_spec("1gbit,2ms");
  o.launcher_pid = 4242;
  o.tag = "t1";
  return o;
}

TEST(LinkSpec, ParsesRateAndLatencyInTcUnits) {
  Result<LinkSpec> a = parse_link_spec("1gbit");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->rate_bits_per_s, 1'000'000'000u);
  EXPECT_EQ(a->latency_ns, 0u);
  Result<LinkSpec> b = parse_link_spec("1.5gbit,250us");
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ(b->rate_bits_per_s, 1'500'000'000u);
  EXPECT_EQ(b->latency_ns, 250'000u);
  Result<LinkSpec> c = parse_link_spec("500mbit,0.5ms");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->rate_bits_per_s, 500'000'000u);
  EXPECT_EQ(c->latency_ns, 500'000u);
  EXPECT_EQ(c->to_string(), "500mbit,500us");
  EXPECT_DOUBLE_EQ(a->rate_bytes_per_s(), 125e6);
}

TEST(LinkSpec, RejectsMissingUnitsAndAbsurdValues) {
  EXPECT_FALSE(parse_link_spec("1000").ok());
  EXPECT_FALSE(parse_link_spec("1gbps").ok());
  EXPECT_FALSE(parse_link_spec("fastgbit").ok());
  EXPECT_FALSE(parse_link_spec("1gbit,2").ok());
  EXPECT_FALSE(parse_link_spec("1gbit,-1ms").ok());
  EXPECT_FALSE(parse_link_spec("10bit").ok());
  EXPECT_FALSE(parse_link_spec("1gbit,20s").ok());
  EXPECT_NE(parse_link_spec("1gbit,2").status().message().find("ns, us, ms, s"), std::string::npos);
}

TEST(Subnet, AcceptsOnlyPrivateSlash24) {
  EXPECT_EQ(*parse_subnet24("10.213.0.0/24"), "10.213.0");
  EXPECT_EQ(*parse_subnet24("192.168.77.0/24"), "192.168.77");
  EXPECT_EQ(*parse_subnet24("172.20.1.0/24"), "172.20.1");
  EXPECT_FALSE(parse_subnet24("8.8.8.0/24").ok());
  EXPECT_FALSE(parse_subnet24("172.32.0.0/24").ok());
  EXPECT_FALSE(parse_subnet24("10.0.0.0/16").ok());
  EXPECT_FALSE(parse_subnet24("10.0.0.5/24").ok());
  EXPECT_FALSE(parse_subnet24("10.0.0/24").ok());
}

TEST(EmulationPlan, NamesCarryLauncherPidAndTagAndAddressesAreDistinct) {
  Result<EmulationPlan> p = plan_emulation(three_nodes());
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->prefix, "sluice-emu-4242-t1");
  EXPECT_EQ(p->bridge_netns, "sluice-emu-4242-t1-br");
  ASSERT_EQ(p->nodes.size(), 3u);
  EXPECT_EQ(p->nodes[0].netns, "sluice-emu-4242-t1-n0");
  EXPECT_EQ(p->nodes[2].address, "10.213.0.4");
  EXPECT_EQ(p->nodes[1].bridge_port, "v1");
  EXPECT_EQ(launcher_pid_of(p->nodes[1].netns), 4242);
  EXPECT_EQ(launcher_pid_of(p->bridge_netns), 4242);
}

TEST(EmulationPlan, RejectsBadOptions) {
  PlanOptions o = three_nodes();
  o.tag = "Bad_Tag";
  EXPECT_FALSE(plan_emulation(o).ok());
  o = three_nodes();
  o.nodes = 0;
  EXPECT_FALSE(plan_emulation(o).ok());
  o = three_nodes();
  o.nodes = k_max_emulated_nodes + 1;
  EXPECT_FALSE(plan_emulation(o).ok());
  o = three_nodes();
  o.launcher_pid = 0;
  EXPECT_FALSE(plan_emulation(o).ok());
  o = three_nodes();
  o.mtu_bytes = 100;
  EXPECT_FALSE(plan_emulation(o).ok());
  o = three_nodes();
  o.link = LinkSpec{};
  EXPECT_FALSE(plan_emulation(o).ok());
  o = three_nodes();
  o.subnet = "1.2.3.0/24";
  EXPECT_FALSE(plan_emulation(o).ok());
}

TEST(SetupCommands, CreateEverythingInsideTheRunsNamespacesAndShapeBothDirections) {
  const EmulationPlan p = *plan_emulation(three_nodes());
  const std::vector<CommandLine> c = setup_commands(p);
  EXPECT_EQ(c.front(), (CommandLine{"ip", "netns", "add", "sluice-emu-4242-t1-br"}));
  EXPECT_TRUE(contains(c, {"ip", "-n", "sluice-emu-4242-t1-br", "link", "add", "v2", "mtu", "1500", "type", "veth",
                           "peer", "name", "eth0", "mtu", "1500", "netns", "sluice-emu-4242-t1-n2"}));
  EXPECT_TRUE(contains(c, {"ip", "-n", "sluice-emu-4242-t1-n1", "addr", "add", "10.213.0.3/24", "dev", "eth0"}));
  // Every ip command names one of the run's namespaces: nothing lands in the caller's.
  for (const CommandLine& cmd : c) {
    const std::string line = join_command(cmd);
    EXPECT_NE(line.find("sluice-emu-4242-t1"), std::string::npos) << line;
  }
  // tbf on both ends of every link, netem under it for the latency.
  for (std::size_t i = 0; i < 3; ++i) {
    const std::string node_ns = p.nodes[i].netns;
    const auto shaped = [&](const std::string& ns, const std::string& dev) {
      return std::count_if(c.begin(), c.end(), [&](const CommandLine& cmd) {
        return cmd.size() > 10 && cmd[0] == "tc" && cmd[2] == ns && cmd[6] == dev;
      });
    };
    EXPECT_EQ(shaped(node_ns, "eth0"), 2) << node_ns;
    EXPECT_EQ(shaped(p.bridge_netns, p.nodes[i].bridge_port), 2) << p.nodes[i].bridge_port;
  }
}

TEST(ShapingCommands, UseTbfBurstOfRateOverHzAndNetemOnlyWithLatency) {
  const LinkSpec fast{1'000'000'000, 0};
  const std::vector<CommandLine> no_delay = shaping_commands("ns", "eth0", fast);
  ASSERT_EQ(no_delay.size(), 1u);
  EXPECT_EQ(no_delay[0], (CommandLine{"tc", "-n", "ns", "qdisc", "replace", "dev", "eth0", "root", "handle",
                                      "1:", "tbf", "rate", "1000000000bit", "burst", "500000", "latency", "100ms"}));
  const LinkSpec slow{8'000'000, 5'000'000};  // burst floor applies; 5 ms delay
  const std::vector<CommandLine> delayed = shaping_commands("ns", "v0", slow);
  ASSERT_EQ(delayed.size(), 2u);
  EXPECT_EQ(delayed[0][14], std::to_string(k_tbf_min_burst_bytes));
  EXPECT_EQ(delayed[1], (CommandLine{"tc", "-n", "ns", "qdisc", "add", "dev", "v0", "parent", "1:1", "handle",
                                     "10:", "netem", "delay", "5ms", "limit", "1000"}));
}

TEST(CleanupCommands, DeleteEveryNamespaceOfTheRunAndNothingElse) {
  const EmulationPlan p = *plan_emulation(three_nodes());
  const std::vector<CommandLine> c = cleanup_commands(p);
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0], (CommandLine{"ip", "netns", "delete", "sluice-emu-4242-t1-n0"}));
  EXPECT_EQ(c[3], (CommandLine{"ip", "netns", "delete", "sluice-emu-4242-t1-br"}));
  for (const CommandLine& cmd : c) EXPECT_EQ(cmd[3].rfind(p.prefix, 0), 0u);
}

TEST(StaleNamespaces, PicksOnlyOursWhoseLauncherIsDead) {
  const std::vector<std::string> names = parse_netns_list(
      "sluice-emu-100-a-n0 (id: 3)\nsluice-emu-100-a-br\nsluice-emu-200-b-n0\nother-ns\nsluice-emu-x-n0\n"
      "sluice-emu-300\n\n");
  ASSERT_EQ(names.size(), 6u);
  EXPECT_EQ(names[0], "sluice-emu-100-a-n0");
  const auto stale = stale_namespaces(names, [](const std::string&, int pid) { return pid == 200; });
  EXPECT_EQ(stale, (std::vector<std::string>{"sluice-emu-100-a-br", "sluice-emu-100-a-n0"}));
  EXPECT_EQ(launcher_pid_of("other-ns"), 0);
  EXPECT_EQ(launcher_pid_of("sluice-emu-300"), 0);
  EXPECT_EQ(run_prefix_of("sluice-emu-100-a-n0"), "sluice-emu-100-a");
  EXPECT_EQ(run_prefix_of("sluice-emu-100-a-br"), "sluice-emu-100-a");
  EXPECT_EQ(run_prefix_of("other-ns"), "");
  EXPECT_EQ(in_netns("n", {"iperf3", "-s"}), (CommandLine{"ip", "netns", "exec", "n", "iperf3", "-s"}));
}

}  // namespace
}  // namespace sluice::emulate
