// The bound calculator (core/topology/flow_bound.hpp) against bounds computed
// by hand for small configurations (issue 48: at least twelve). Every machine
// here is built from round figures so that each expected value is written out
// beside its test as the arithmetic a storage engineer would do on paper.
#include "core/topology/flow_bound.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "core/topology/cluster_builders.hpp"
#include "core/topology/machine_assembler.hpp"

namespace sluice::topo {
namespace {

constexpr double G = 1e9;

// A socket with memory at `mem` GB/s, one root port and one switch (uplink
// `uplink`), `drives` drives (link 8, read 7, write 4 GB/s) and `nics` NICs
// (PCIe link `nic_link`, port `port`) on that switch.
struct Box {
  double mem = 100;
  double uplink = 60;
  std::uint32_t drives = 1;
  std::uint32_t nics = 0;
  double nic_link = 30;
  double port = 25;
  std::uint32_t gpus = 0;
  double gpu_link = 16;
};

Topology box(const Box& b) {
  MachineAssembler m("box");
  VertexId socket = m.add_socket(64 * k_gib, b.mem * G);
  VertexId sw = m.add_switch(m.add_root_port(socket, b.uplink * G), b.uplink * G);
  for (std::uint32_t i = 0; i < b.drives; ++i) m.add_nvme(sw, 8 * G, 7 * G, 4 * G, k_tib);
  for (std::uint32_t i = 0; i < b.nics; ++i) m.add_nic(sw, b.nic_link * G, b.port * G);
  for (std::uint32_t i = 0; i < b.gpus; ++i) m.add_gpu(sw, b.gpu_link * G, 40 * k_gib);
  Result<Topology> t = m.finish();
  EXPECT_TRUE(t.ok()) << t.status().to_string();
  return std::move(t).value();
}

VertexId dev(const Topology& t, NodeId node, VertexKind kind, std::uint32_t i) {
  Result<VertexId> v = t.device(node, kind, i);
  EXPECT_TRUE(v.ok()) << v.status().to_string();
  return *v;
}

// One server and `clients` clients on one switch (nodes 0, 1, ...).
Topology star(const Topology& server, const Topology& client, std::size_t clients) {
  std::vector<const Topology*> machines{&server};
  machines.insert(machines.end(), clients, &client);
  return std::move(star_cluster(machines)).value();
}

// Every drive of `node`, one share each.
std::vector<FlowTerminal> drives(const Topology& t, NodeId node) {
  std::vector<FlowTerminal> out;
  for (std::uint32_t d = 0; d < t.count(node, VertexKind::nvme); ++d)
    out.push_back({dev(t, node, VertexKind::nvme, d), 1});
  return out;
}

// Bytes between `from` and `to` inside node 0 alone.
FlowPattern in_node0(std::vector<FlowTerminal> from, std::vector<FlowTerminal> to) {
  return FlowPattern{std::move(from), std::move(to), {{{0}, false}}};
}

FlowBound solve(const Topology& t, const FlowPattern& p) {
  Result<FlowBound> b = flow_bound(t, p);
  EXPECT_TRUE(b.ok()) << b.status().to_string();
  return b.ok() ? *b : FlowBound{};
}

// Reads: every drive of the servers to every client's memory, through the
// servers' memories (stage 0: servers; stage 1: servers, clients, network).
FlowPattern read_to_memory(const Topology& t, const std::vector<NodeId>& servers, const std::vector<NodeId>& clients) {
  FlowPattern p;
  for (NodeId s : servers) {
    for (const FlowTerminal& d : drives(t, s)) p.sources.push_back(d);
  }
  for (NodeId c : clients) p.sinks.push_back({dev(t, c, VertexKind::host_memory, 0), 1.0});
  FlowStage all{servers, true};
  all.nodes.insert(all.nodes.end(), clients.begin(), clients.end());
  p.stages = {FlowStage{servers, false}, all};
  return p;
}

// 1. One drive into its own memory: min(read 7, its PCIe link 8) = 7 GB/s.
TEST(FlowBound, OneDriveIsCappedByItsReadRate) {
  Topology t = box({.drives = 1});
  FlowPattern p{{{dev(t, 0, VertexKind::nvme, 0), 1}}, {{dev(t, 0, VertexKind::host_memory, 0), 1}}, {{{0}, false}}};
  FlowBound b = solve(t, p);
  EXPECT_NEAR(b.bytes_per_s, 7 * G, 7 * G * 1e-5);
  EXPECT_EQ(b.binding_kind, "drive read");
  EXPECT_EQ(b.binding, "drive read: nvme0");
}

// 2. Four drives (4 x 7 = 28) behind a switch whose uplink is 20: 20 GB/s.
TEST(FlowBound, FourDrivesShareTheirSwitchUplink) {
  Topology t = box({.uplink = 20, .drives = 4});
  FlowBound b = solve(t, in_node0(drives(t, 0), {{dev(t, 0, VertexKind::host_memory, 0), 1}}));
  EXPECT_NEAR(b.bytes_per_s, 20 * G, 20 * G * 1e-5);
  EXPECT_EQ(b.binding_kind, "pcie");
}

// 3. Writes from memory to four drives (write 4 each): 16 GB/s, the drives' write rate.
TEST(FlowBound, WritesAreCappedByTheDrivesWriteRate) {
  Topology t = box({.drives = 4});
  FlowBound b = solve(t, in_node0({{dev(t, 0, VertexKind::host_memory, 0), 1}}, drives(t, 0)));
  EXPECT_NEAR(b.bytes_per_s, 16 * G, 16 * G * 1e-5);
  EXPECT_EQ(b.binding_kind, "drive write");
}

// 4. Shares 3:1 over two drives of 7: the first carries 3/4 of T, so T = 7 / 0.75 = 9.33 GB/s.
TEST(FlowBound, UnevenSharesBindAtTheLargestShare) {
  Topology t = box({.drives = 2});
  FlowBound b = solve(t, in_node0({{dev(t, 0, VertexKind::nvme, 0), 3}, {dev(t, 0, VertexKind::nvme, 1), 1}},
                                  {{dev(t, 0, VertexKind::host_memory, 0), 1}}));
  EXPECT_NEAR(b.bytes_per_s, 7 * G / 0.75, 7 * G * 1e-5);
  EXPECT_EQ(b.binding, "drive read: nvme0");
}

// 5. Drives on socket 1, the only sink memory on socket 0, inter-socket link 10: 10 GB/s.
TEST(FlowBound, CrossingSocketsIsCappedByTheInterSocketLink) {
  MachineAssembler m("two_sockets");
  VertexId s0 = m.add_socket(64 * k_gib, 100 * G);
  VertexId s1 = m.add_socket(64 * k_gib, 100 * G);
  m.link_sockets(s0, s1, 10 * G, 100);
  VertexId sw = m.add_switch(m.add_root_port(s1, 60 * G), 60 * G);
  for (int i = 0; i < 4; ++i) m.add_nvme(sw, 8 * G, 7 * G, 4 * G, k_tib);
  Topology t = std::move(m.finish()).value();
  FlowBound b = solve(t, in_node0(drives(t, 0), {{dev(t, 0, VertexKind::host_memory, 0), 1}}));
  EXPECT_NEAR(b.bytes_per_s, 10 * G, 10 * G * 1e-5);
  EXPECT_EQ(b.binding_kind, "inter-socket");
}

// 6. A server with one 25 GB/s NIC and 8 drives (56) serving two clients (25
// each): the server's port, 25 GB/s.
TEST(FlowBound, OneServerNicBindsAReadOfManyDrives) {
  Topology server = box({.drives = 8, .nics = 1});
  Topology client = box({.drives = 0, .nics = 1});
  Topology t = star(server, client, 2);
  FlowBound b = solve(t, read_to_memory(t, {0}, {1, 2}));
  EXPECT_NEAR(b.bytes_per_s, 25 * G, 25 * G * 1e-5);
  EXPECT_EQ(b.binding_kind, "nic port");
  EXPECT_EQ(b.binding, "nic port: node0/nic0->switch");
}

// 6b. The same read with the network's payload share (headers and framing):
// the NIC port carries 0.97 x 25 = 24.25 GB/s of payload; PCIe, drives and
// memory keep their rates. point_bound uses topo::k_network_payload_share,
// as the simulator's default network bandwidth factor does, so a simulated
// NIC-bound read is not counted short by the 3% its wire never carried
// (roofline: a lone 25 Gb/s NIC read at 0.949 of the port rate).
TEST(FlowBound, NetworkLinksCarryTheirPayloadShare) {
  Topology server = box({.drives = 8, .nics = 1});
  Topology client = box({.drives = 0, .nics = 1});
  Topology t = star(server, client, 2);
  FlowPattern p = read_to_memory(t, {0}, {1, 2});
  p.network_payload_share = 0.97;
  FlowBound b = solve(t, p);
  EXPECT_NEAR(b.bytes_per_s, 0.97 * 25 * G, 25 * G * 1e-5);
  EXPECT_EQ(b.binding, "nic port: node0/nic0->switch");
  ASSERT_EQ(b.cut.size(), 1u);
  EXPECT_NEAR(b.cut[0].capacity_bytes_per_s, 0.97 * 25 * G, 1.0);
  // Drives alone (no network link crossed): the share changes nothing.
  FlowPattern local = in_node0(drives(t, 0), {{dev(t, 0, VertexKind::host_memory, 0), 1}});
  local.network_payload_share = 0.5;
  EXPECT_NEAR(solve(t, local).bytes_per_s, 56 * G, 56 * G * 1e-5);
}

// 6c. NICs as terminals (a run's counted share per server NIC,
// point_bound's placed bound): the server side of a read, 8 drives (56) to
// two NICs through the staging memory, the NICs taking 3 : 1 of the bytes.
// Each NIC's PCIe link is 30 and the switch uplink 60 each way: NIC 0 must
// carry 3/4 of T over its 30 GB/s link, so T = 40 (the drives allow 56, the
// uplink 60). The network side, NICs (3 : 1) to four clients: NIC 0's
// 25 GB/s port takes 3/4, so T = 33.3.
TEST(FlowBound, NicTerminalsFixTheBytesThroughEachNic) {
  Topology server = box({.drives = 8, .nics = 2});
  Topology client = box({.drives = 0, .nics = 1});
  Topology t = star(server, client, 4);
  const std::vector<FlowTerminal> nics{{dev(t, 0, VertexKind::nic, 0), 3}, {dev(t, 0, VertexKind::nic, 1), 1}};
  FlowPattern servers_side{drives(t, 0), nics, {{{0}, false}, {{0}, false}}};
  FlowBound a = solve(t, servers_side);
  EXPECT_NEAR(a.bytes_per_s, 40 * G, 40 * G * 1e-5);
  EXPECT_EQ(a.binding, "pcie: node0/sw0->node0/nic0");
  FlowPattern network_side = read_to_memory(t, {0}, {1, 2, 3, 4});
  network_side.stages.erase(network_side.stages.begin());
  network_side.sources = nics;
  FlowBound b = solve(t, network_side);
  EXPECT_NEAR(b.bytes_per_s, 25 * G * 4 / 3, 25 * G * 1e-5);
  EXPECT_EQ(b.binding, "nic port: node0/nic0->switch");
  // Even shares on the network side: both ports, 50 (test 7).
  network_side.sources = {{dev(t, 0, VertexKind::nic, 0), 1}, {dev(t, 0, VertexKind::nic, 1), 1}};
  EXPECT_NEAR(solve(t, network_side).bytes_per_s, 50 * G, 50 * G * 1e-5);
}

// 7. The same server with two NICs and four clients: 2 x 25 = 50 GB/s (drives
// 56, switch uplink 60 each way).
TEST(FlowBound, TwoServerNicsDoubleTheBound) {
  Topology server = box({.drives = 8, .nics = 2});
  Topology client = box({.drives = 0, .nics = 1});
  Topology t = star(server, client, 4);
  FlowBound b = solve(t, read_to_memory(t, {0}, {1, 2, 3, 4}));
  EXPECT_NEAR(b.bytes_per_s, 50 * G, 50 * G * 1e-5);
  EXPECT_EQ(b.binding_kind, "nic port");
}

// 8. Four NICs (100) on one switch whose uplink is 60 each way: the bytes go
// up the uplink into memory and down it again to the NICs (60 each way), but
// the drives' 8 x 7 = 56 bind first.
TEST(FlowBound, FourNicsLeaveTheDrivesBinding) {
  Topology server = box({.drives = 8, .nics = 4});
  Topology client = box({.drives = 0, .nics = 1});
  Topology t = star(server, client, 6);
  FlowBound b = solve(t, read_to_memory(t, {0}, {1, 2, 3, 4, 5, 6}));
  EXPECT_NEAR(b.bytes_per_s, 56 * G, 56 * G * 1e-5);
  EXPECT_EQ(b.binding_kind, "drive read");
}

// 9. As 8 with an uplink of 40: up 40 into memory, down 40 to the NICs: 40 GB/s.
TEST(FlowBound, TheStagingMemoryMakesTheUplinkBindBothWays) {
  Topology server = box({.uplink = 40, .drives = 8, .nics = 4});
  Topology client = box({.drives = 0, .nics = 1});
  Topology t = star(server, client, 6);
  FlowBound b = solve(t, read_to_memory(t, {0}, {1, 2, 3, 4, 5, 6}));
  EXPECT_NEAR(b.bytes_per_s, 40 * G, 40 * G * 1e-5);
  EXPECT_EQ(b.binding_kind, "pcie");
}

// 10. A server whose NIC is on the other socket than its drives (inter-socket
// 16): whichever memory stages the bytes, they cross sockets once: 16 GB/s.
TEST(FlowBound, ANicOnTheOtherSocketIsCappedByTheInterSocketLink) {
  MachineAssembler m("split");
  VertexId s0 = m.add_socket(64 * k_gib, 100 * G);
  VertexId s1 = m.add_socket(64 * k_gib, 100 * G);
  m.link_sockets(s0, s1, 16 * G, 100);
  VertexId sw0 = m.add_switch(m.add_root_port(s0, 60 * G), 60 * G);
  VertexId sw1 = m.add_switch(m.add_root_port(s1, 60 * G), 60 * G);
  for (int i = 0; i < 8; ++i) m.add_nvme(sw0, 8 * G, 7 * G, 4 * G, k_tib);
  m.add_nic(sw1, 30 * G, 25 * G);
  Topology server = std::move(m.finish()).value();
  Topology client = box({.drives = 0, .nics = 1});
  Topology t = star(server, client, 2);
  FlowBound b = solve(t, read_to_memory(t, {0}, {1, 2}));
  EXPECT_NEAR(b.bytes_per_s, 16 * G, 16 * G * 1e-5);
  EXPECT_EQ(b.binding_kind, "inter-socket");
}

// 11. GPU-direct reads into two clients' GPUs (PCIe link 12 each, P2P from
// the NIC through the clients' switch): 2 x 12 = 24 GB/s, under the server's 25.
TEST(FlowBound, GpuDirectReadsAreCappedByTheGpuLinks) {
  Topology server = box({.drives = 8, .nics = 1});
  Topology client = box({.drives = 0, .nics = 1, .gpus = 1, .gpu_link = 12});
  Topology t = star(server, client, 2);
  FlowPattern p = read_to_memory(t, {0}, {1, 2});
  p.sinks = {{dev(t, 1, VertexKind::gpu, 0), 1}, {dev(t, 2, VertexKind::gpu, 0), 1}};
  FlowBound b = solve(t, p);
  EXPECT_NEAR(b.bytes_per_s, 24 * G, 24 * G * 1e-5);
  EXPECT_EQ(b.binding_kind, "pcie");
}

// 12. The same through a bounce buffer in each client's memory, the client's
// switch uplink 10: the bytes cross it up (NIC to memory) and down (memory to
// GPU), 10 per client: 20 GB/s. GPU-direct on the same machines: 24.
TEST(FlowBound, ABounceBufferCrossesTheClientUplinkTwice) {
  Topology server = box({.drives = 8, .nics = 1});
  Topology client = box({.uplink = 10, .drives = 0, .nics = 1, .gpus = 1, .gpu_link = 12});
  Topology t = star(server, client, 2);
  FlowPattern p = read_to_memory(t, {0}, {1, 2});
  p.sinks = {{dev(t, 1, VertexKind::gpu, 0), 1}, {dev(t, 2, VertexKind::gpu, 0), 1}};
  FlowPattern bounce = p;
  bounce.stages.push_back(FlowStage{{1, 2}, false});
  EXPECT_NEAR(solve(t, bounce).bytes_per_s, 20 * G, 20 * G * 1e-5);
  EXPECT_EQ(solve(t, bounce).binding_kind, "pcie");
  EXPECT_NEAR(solve(t, p).bytes_per_s, 24 * G, 24 * G * 1e-5);
}

// 13. A fat tree: 4 servers on leaf 0 (one 25 GB/s NIC, 8 drives each), 4
// clients on leaf 1, oversubscription 4: each leaf's spine links carry
// 4 x 25 / 4 = 25 GB/s, and every byte crosses them: 25 GB/s.
TEST(FlowBound, AnOversubscribedFatTreeBindsAtItsSpineLinks) {
  Topology node = box({.drives = 8, .nics = 1});
  FatTreeOptions o;
  o.nodes_per_leaf = 4;
  o.spines = 2;
  o.oversubscription = 4;
  Topology t = std::move(fat_tree_cluster(node, 8, o)).value();
  FlowBound b = solve(t, read_to_memory(t, {0, 1, 2, 3}, {4, 5, 6, 7}));
  EXPECT_NEAR(b.bytes_per_s, 25 * G, 25 * G * 1e-5);
  EXPECT_EQ(b.binding_kind, "fabric");
}

// 14. A staging memory whose link carries 5 GB/s each way: a drive of 7 and
// a 25 GB/s NIC, but the buffer is written and read at 5: 5 GB/s.
TEST(FlowBound, TheStagingBufferIsWrittenAndReadThroughTheMemoryLink) {
  Topology server = box({.mem = 5, .drives = 1, .nics = 1});
  Topology client = box({.drives = 0, .nics = 1});
  Topology t = star(server, client, 1);
  FlowBound b = solve(t, read_to_memory(t, {0}, {1}));
  EXPECT_NEAR(b.bytes_per_s, 5 * G, 5 * G * 1e-5);
  EXPECT_EQ(b.binding_kind, "memory");
}

// 15. Ten servers, each with one 25 GB/s NIC and two drives, read by five
// clients with one 25 GB/s NIC: the servers' drives allow 10 x 14 = 140 GB/s,
// their ports 250, the clients' five ports 125: 125 GB/s.
TEST(FlowBound, ManyServersAreCappedByTheClientsPorts) {
  Topology server = box({.drives = 2, .nics = 1});
  Topology client = box({.drives = 0, .nics = 1});
  std::vector<const Topology*> machines;
  std::vector<NodeId> servers, clients;
  for (NodeId n = 0; n < 15; ++n) {
    machines.push_back(n < 10 ? &server : &client);
    (n < 10 ? servers : clients).push_back(n);
  }
  Topology t = std::move(star_cluster(machines)).value();
  FlowBound b = solve(t, read_to_memory(t, servers, clients));
  EXPECT_NEAR(b.bytes_per_s, 125 * G, 125 * G * 1e-5);
  EXPECT_EQ(b.binding_kind, "nic port");
  EXPECT_NE(b.binding.find("->node10/nic0"), std::string::npos) << b.binding;
}

// 16. A client with two sockets (inter-socket 5) whose NIC is on socket 1:
// a buffer on socket 0 gets 5 GB/s; one that may be on either socket gets the
// server's 25.
TEST(FlowBound, ABufferOnAnyNumaNodeAvoidsTheInterSocketLink) {
  MachineAssembler m("two_socket_client");
  VertexId s0 = m.add_socket(64 * k_gib, 100 * G);
  VertexId s1 = m.add_socket(64 * k_gib, 100 * G);
  m.link_sockets(s0, s1, 5 * G, 100);
  m.add_nic(m.add_switch(m.add_root_port(s1, 60 * G), 60 * G), 30 * G, 50 * G);
  Topology client = std::move(m.finish()).value();
  Topology server = box({.drives = 8, .nics = 1});
  Topology t = star(server, client, 1);
  FlowPattern p = read_to_memory(t, {0}, {1});
  EXPECT_NEAR(solve(t, p).bytes_per_s, 5 * G, 5 * G * 1e-5);
  p.sinks[0].alternatives = {dev(t, 1, VertexKind::host_memory, 1)};
  EXPECT_NEAR(solve(t, p).bytes_per_s, 25 * G, 25 * G * 1e-5);
  EXPECT_EQ(solve(t, p).binding, "nic port: node0/nic0->switch");
}

// 17. GPUDirect keeps a GPU on the NICs within PXB of it. A client with two
// root ports on one socket: the GPU (link 64) and NIC 0 on switch 0, NIC 1 on
// switch 1, each NIC a 25 GB/s port; the server's two ports give 50. Peer-to-
// peer from any NIC the bound would be 2 x 25 = 50; but NIC 1 reaches the GPU
// only through the root ports (NODE), which GPUDirect does not cross, so the
// GPU reads and writes through NIC 0 alone: 25 GB/s, bound by its port.
TEST(FlowBound, GpuDirectUsesOnlyTheNicsBelowTheGpusRootPort) {
  MachineAssembler m("gpu_client");
  VertexId socket = m.add_socket(64 * k_gib, 100 * G);
  VertexId sw0 = m.add_switch(m.add_root_port(socket, 60 * G), 60 * G);
  VertexId sw1 = m.add_switch(m.add_root_port(socket, 60 * G), 60 * G);
  m.add_gpu(sw0, 64 * G, 40 * k_gib);
  m.add_nic(sw0, 30 * G, 25 * G);
  m.add_nic(sw1, 30 * G, 25 * G);
  Topology client = std::move(m.finish()).value();
  Topology server = box({.drives = 8, .nics = 2});
  Topology t = star(server, client, 1);
  FlowPattern read = read_to_memory(t, {0}, {1});
  read.sinks = {{dev(t, 1, VertexKind::gpu, 0), 1}};
  EXPECT_NEAR(solve(t, read).bytes_per_s, 50 * G, 50 * G * 1e-5);
  read.stages.back().peer_to_peer = {1};
  FlowBound b = solve(t, read);
  EXPECT_NEAR(b.bytes_per_s, 25 * G, 25 * G * 1e-5);
  EXPECT_EQ(b.binding, "nic port: switch->node1/nic0");
  // The write: the same path the other way.
  FlowPattern write = read;
  std::swap(write.sources, write.sinks);
  std::reverse(write.stages.begin(), write.stages.end());
  b = solve(t, write);
  EXPECT_NEAR(b.bytes_per_s, 25 * G, 25 * G * 1e-5);
  EXPECT_EQ(b.binding, "nic port: node1/nic0->switch");
}

// 18. Write-back: the bytes end in the server's page cache, written there by
// a copy across its memory link (written_by_copy). A client on the server's
// own node (BeeOND), memory link 5 GB/s each way: the copy reads the buffer
// out through the link and writes the cache back in: 5 GB/s, the memory
// binding, where without the copy the buffer and the cache meet at one vertex
// and nothing bounds them. A client on another node: its 25 GB/s port binds,
// the server's 100 GB/s memory link does not.
TEST(FlowBound, APageCacheIsWrittenThroughItsMemoryLink) {
  Topology server = box({.mem = 5, .drives = 1, .nics = 1});
  Topology client = box({.drives = 0, .nics = 1});
  Topology t = star(server, client, 1);
  FlowTerminal cache{dev(t, 0, VertexKind::host_memory, 0), 1.0};
  cache.written_by_copy = true;
  FlowBound local = solve(t, in_node0({{dev(t, 0, VertexKind::host_memory, 0), 1.0}}, {cache}));
  EXPECT_NEAR(local.bytes_per_s, 5 * G, 5 * G * 1e-5);
  EXPECT_EQ(local.binding_kind, "memory");
  Topology big = box({.mem = 100, .drives = 1, .nics = 1});
  Topology t2 = star(big, client, 1);
  FlowTerminal cache2{dev(t2, 0, VertexKind::host_memory, 0), 1.0};
  cache2.written_by_copy = true;
  FlowPattern remote{{{dev(t2, 1, VertexKind::host_memory, 0), 1.0}}, {cache2}, {{{0, 1}, true}}};
  FlowBound b = solve(t2, remote);
  EXPECT_NEAR(b.bytes_per_s, 25 * G, 25 * G * 1e-5);
  EXPECT_EQ(b.binding_kind, "nic port");
}

TEST(FlowBound, BadPatternsAreRefusedNamingTheElement) {
  Topology t = box({.drives = 1, .nics = 1});
  const VertexId drive = dev(t, 0, VertexKind::nvme, 0);
  const VertexId mem = dev(t, 0, VertexKind::host_memory, 0);
  const VertexId nic = dev(t, 0, VertexKind::nic, 0);
  auto message = [&](const FlowPattern& p) {
    Result<FlowBound> b = flow_bound(t, p);
    EXPECT_FALSE(b.ok());
    return b.ok() ? std::string() : b.status().message();
  };
  EXPECT_NE(message(FlowPattern{{{drive, 1}}, {{mem, 1}}, {}}).find("at least one stage"), std::string::npos);
  const VertexId sw = dev(t, 0, VertexKind::pcie_switch, 0);
  EXPECT_NE(message(FlowPattern{{{sw, 1}}, {{mem, 1}}, {{{0}, false}}}).find("is a pcie_switch, not an nvme"),
            std::string::npos);
  EXPECT_NE(message(FlowPattern{{{drive, 1}}, {{nic, 0}}, {{{0}, false}}}).find("share"), std::string::npos);
  EXPECT_NE(message(FlowPattern{{{drive, 0}}, {{mem, 1}}, {{{0}, false}}}).find("share"), std::string::npos);
  EXPECT_NE(message(FlowPattern{{{drive, 1}}, {{mem, 1}}, {{{1}, false}}}).find("names node 1"), std::string::npos);
  EXPECT_NE(message(FlowPattern{{{drive, 1}}, {}, {{{0}, false}}}).find("one sink"), std::string::npos);
  EXPECT_NE(message(FlowPattern{{{drive, 1}}, {{mem, 1}}, {{{0}, false, {1}}}}).find("keeps node 1 peer-to-peer"),
            std::string::npos);
  EXPECT_NE(message(FlowPattern{{{drive, 1}}, {{mem, 1}}, {{{0}, false, {0}}}}).find("unreachable"), std::string::npos);
  for (double share : {0.0, -0.5, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
    FlowPattern p{{{drive, 1}}, {{mem, 1}}, {{{0}, false}}};
    p.network_payload_share = share;
    EXPECT_NE(message(p).find("network_payload_share"), std::string::npos) << share;
  }
  FlowPattern nine{{{drive, 1}}, {{mem, 1}}, std::vector<FlowStage>(9, FlowStage{{0}, false})};
  EXPECT_NE(message(nine).find("k_flow_max_stages"), std::string::npos);
  FlowTerminal copied{mem, 1};
  copied.written_by_copy = true;
  EXPECT_NE(message(FlowPattern{{copied}, {{mem, 1}}, {{{0}, false}}}).find("written_by_copy takes a sink"),
            std::string::npos);
  FlowTerminal copied_drive{drive, 1};
  copied_drive.written_by_copy = true;
  EXPECT_NE(message(FlowPattern{{{mem, 1}}, {copied_drive}, {{{0}, false}}}).find("written_by_copy"),
            std::string::npos);
}

}  // namespace
}  // namespace sluice::topo
