// The placed bound (scenarios/runner/point_bound.hpp) with the NICs' counted
// shares: the servers' NICs, and the clients' as well, each held to the
// bytes it carried, computed by hand on a small star.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/topology/cluster_builders.hpp"
#include "core/topology/hardware_figures.hpp"
#include "core/topology/machine_builders.hpp"
#include "scenarios/runner/point_bound.hpp"

namespace sluice::scenario {
namespace {

constexpr double k_port_bytes_per_s = 1.25e9;  // 10 Gb/s NIC ports and switch ports
const double k_port_payload = k_port_bytes_per_s * topo::k_network_payload_share;
// The solver works in 1 kB/s units per arc and bisects to 1e-6 of the bound:
// 2e4 B/s is well within both.

// 4 nodes of 2 sockets, NIC 0 on socket 0 and NIC 1 on socket 1, 2 drives of
// 7 GB/s: 0 mgmt and metadata, 1 and 2 storage (2 targets each), 3 the
// client with one rank (host buffers). The clients' two ports bind: 2 x
// 1.2125 GB/s of payload, against the servers' four and their drives' 28 GB/s.
ScenarioSpec star_spec(double drive_write_bytes_per_s = 3.8e9) {
  topo::GenericMachine m;
  m.nvme_write_bytes_per_s = drive_write_bytes_per_s;
  m.sockets = 2;
  m.gpus = 0;
  m.nics = 2;
  m.nvmes = 2;
  m.nic_port_rate_bytes_per_s = k_port_bytes_per_s;
  Result<topo::Topology> machine = topo::generic_machine(m);
  EXPECT_TRUE(machine.ok()) << machine.status().to_string();
  topo::StarOptions star;
  star.link_bytes_per_s = k_port_bytes_per_s;
  Result<topo::Topology> cluster = topo::star_cluster(*machine, 4, star);
  EXPECT_TRUE(cluster.ok()) << cluster.status().to_string();
  ScenarioSpec spec;
  spec.scenario = "point_bound_test";
  spec.cluster = std::make_shared<const topo::Topology>(std::move(cluster).value());
  spec.fs.preset = "custom";
  spec.fs.mgmt_node = 0;
  spec.fs.meta_nodes = {0};
  spec.fs.storage = {{1, {0, 1}}, {2, {0, 1}}};
  spec.fs.meta.default_chunk_bytes = 1 * k_mib;
  spec.fs.meta.default_stripe_count = 4;
  FileSweepConfig sweep;
  sweep.files_per_rank = 4;
  sweep.file_bytes = 16 * k_mib;
  sweep.block_bytes = 4 * k_mib;
  sweep.threads = 4;
  spec.workloads = {WorkloadSpec{"sweep", sweep, ClientPlacement{{3}, 1}}};
  return spec;
}

// Even shares at the targets and the servers' NICs, in both directions.
TargetBytes even_servers() {
  TargetBytes b;
  for (TargetId t = 1; t <= 4; ++t) b.written[t] = b.read[t] = 1;
  for (NodeId node : {1u, 2u}) {
    for (std::uint32_t nic : {0u, 1u}) b.nic_written[{node, nic}] = b.nic_read[{node, nic}] = 1;
  }
  return b;
}

double read_bound(const ScenarioSpec& spec, const TargetBytes* placed, std::string* binding = nullptr) {
  Result<std::vector<PhaseBound>> rows = point_bounds(spec, placed);
  EXPECT_TRUE(rows.ok()) << rows.status().to_string();
  if (!rows.ok()) return 0;
  for (const PhaseBound& b : *rows) {
    if (b.phase != "read") continue;
    EXPECT_TRUE(b.computed) << b.binding_resource;
    if (binding != nullptr) *binding = b.binding_resource;
    return b.bound_bytes_per_s;
  }
  ADD_FAILURE() << "no read row";
  return 0;
}

TEST(PlacedBound, ClientNicSharesHoldTheBusiestClientNicToItsShare) {
  const ScenarioSpec spec = star_spec();
  std::string binding;
  EXPECT_NEAR(read_bound(spec, nullptr, &binding), 2 * k_port_payload, 2e4) << "the client's two ports";
  EXPECT_NE(binding.find("nic port"), std::string::npos) << binding;
  TargetBytes placed = even_servers();
  EXPECT_NEAR(read_bound(spec, &placed), 2 * k_port_payload, 2e4) << "servers' NICs even: the same";
  // The client's NIC 0 carried 3 of every 4 bytes: it fills first, at 4/3 of its port.
  placed.client_nic_read[{3, 0}] = 3;
  placed.client_nic_read[{3, 1}] = 1;
  EXPECT_NEAR(read_bound(spec, &placed, &binding), k_port_payload * 4 / 3, 2e4);
  EXPECT_NE(binding.find("node3/nic0"), std::string::npos) << binding;
  // The write phase's counts are not the read's.
  placed.client_nic_written[{3, 1}] = 1;
  Result<std::vector<PhaseBound>> rows = point_bounds(spec, &placed);
  ASSERT_TRUE(rows.ok());
  for (const PhaseBound& b : *rows) {
    if (b.phase == "write") {
      EXPECT_NEAR(b.bound_bytes_per_s, k_port_payload, 2e4) << "all written through NIC 1";
    }
  }
}

// Clients on the storage servers' own nodes (BeeOND): nodes 1 and 2 each a
// client and a server of two targets. Each node's client sends half of its
// bytes to the other node and takes half of the other's, so each node's two
// ports carry a quarter of all bytes each way: T / 4 <= 2 x 1.2125 GB/s,
// T = 8 x 1.2125 GB/s. The one-commodity flow alone lets each client feed
// its own node's targets: before the cut around each node, the buffered
// writes had no bound (buffer and page cache at one vertex, "no hardware arc
// separates"), and reads were bound by the drives alone (28 GB/s).
TEST(PlacedBound, ClientsOnTheServersNodesExchangeTheirRemoteShareThroughTheirPorts) {
  ScenarioSpec spec = star_spec();
  spec.workloads[0].clients = ClientPlacement{{1, 2}, 1};
  for (bool buffered : {false, true}) {
    spec.fs.storage_config.buffered_writes = buffered;
    Result<std::vector<PhaseBound>> rows = point_bounds(spec, nullptr);
    ASSERT_TRUE(rows.ok()) << rows.status().to_string();
    ASSERT_EQ(rows->size(), 2u);
    for (const PhaseBound& b : *rows) {
      ASSERT_TRUE(b.computed) << b.phase << ": " << b.binding_resource;
      EXPECT_NEAR(b.bound_bytes_per_s, 8 * k_port_payload, 8e4) << b.phase << " buffered " << buffered;
      EXPECT_EQ(b.binding_kind, "nic port") << b.binding_resource;
    }
  }
}

// Drives writing 0.5 GB/s each: the four targets take 2 GB/s, below the
// client's two ports (2.425 GB/s). A page cache takes a buffered write at its
// memory link, so the ports bind; a write durable on completion (sync_writes,
// a checkpoint's fsync'd blocks) goes to the drive whatever the server
// buffers, so the drives bind. Before, every write to a buffered server was
// bound by the page cache, sync or not (checkpoint_burst's bound ignored its
// drives).
TEST(PlacedBound, ASyncWriteIsBoundByTheDrivesEvenWhereTheServerBuffers) {
  ScenarioSpec spec = star_spec(0.5e9);
  spec.fs.storage_config.buffered_writes = true;
  auto write_row = [&spec]() {
    Result<std::vector<PhaseBound>> rows = point_bounds(spec, nullptr);
    EXPECT_TRUE(rows.ok()) << rows.status().to_string();
    for (const PhaseBound& b : *rows) {
      if (b.phase == "write") return b;
    }
    ADD_FAILURE() << "no write row";
    return PhaseBound{};
  };
  PhaseBound buffered = write_row();
  EXPECT_NEAR(buffered.bound_bytes_per_s, 2 * k_port_payload, 2e4);
  EXPECT_EQ(buffered.binding_kind, "nic port") << buffered.binding_resource;
  std::get<FileSweepConfig>(spec.workloads[0].config).sync_writes = true;
  PhaseBound sync = write_row();
  EXPECT_NEAR(sync.bound_bytes_per_s, 4 * 0.5e9, 2e4);
  EXPECT_EQ(sync.binding_kind, "drive write") << sync.binding_resource;
}

TEST(PlacedBound, CountersNameTheClientsNicsApartFromTheServers) {
  const TargetBytes b = target_bytes({{"storage.read_bytes.nic.1.0", 5},
                                      {"client.read_bytes.nic.3.1", 7},
                                      {"client.write_bytes.nic.3.0", 2},
                                      {"client.read_bytes.nic.x.1", 9},
                                      {"client.read_bytes", 11}});
  EXPECT_EQ(b.nic_read.size(), 1u);
  EXPECT_EQ(b.client_nic_read.size(), 1u);
  EXPECT_DOUBLE_EQ(b.client_nic_read.at({3, 1}), 7);
  EXPECT_DOUBLE_EQ(b.client_nic_written.at({3, 0}), 2);
}

}  // namespace
}  // namespace sluice::scenario
