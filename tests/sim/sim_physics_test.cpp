// SimEnv against physics: transfers take bytes / bottleneck rate + route
// latency, flows share the links they have in common, link-class factors
// stay on their class, a bounce read crosses host memory where a direct read
// does not, a disk-bound read goes at the drive's rate, and the profile's
// disk request rates and bandwidth factors cost what they say. Expectations are
// computed from the topology itself, not from the platform under test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "core/common/rng.hpp"
#include "core/topology/cluster_builders.hpp"
#include "core/topology/hardware_figures.hpp"
#include "core/topology/machine_builders.hpp"
#include "sim/sim_runtime.hpp"
#include "tests/sim/sim_test_support.hpp"

namespace sluice::testing {
namespace {

using sim::SimProfile;
using sim::SimRuntime;
using sim::SimRuntimeConfig;
using topo::VertexKind;

// A route as (edge, direction a->b) pairs.
using Directed = std::vector<std::pair<topo::EdgeId, bool>>;

Directed directed(const topo::Topology& t, const topo::Route& r) {
  Directed out;
  topo::VertexId at = r.source;
  for (topo::EdgeId e : r.edges) {
    const bool forward = t.link(e).a == at;
    out.emplace_back(e, forward);
    at = forward ? t.link(e).b : t.link(e).a;
  }
  return out;
}

topo::VertexId dev(const topo::Topology& t, NodeId node, VertexKind kind, std::uint32_t i = 0) {
  return t.device(node, kind, i).value();
}

topo::EdgeId uplink(const topo::Topology& t, topo::VertexId nic) {
  for (topo::EdgeId e : t.links_of(nic)) {
    if (t.link(e).spec.link_class == topo::LinkClass::network) return e;
  }
  return topo::k_no_edge;
}

// memory(src node) -> its NIC 0 -> switch -> NIC 0 -> memory(dst node).
Directed network_path(const topo::Topology& t, topo::VertexId from, topo::VertexId to) {
  const NodeId a = t.vertex(from).node;
  const NodeId b = t.vertex(to).node;
  const topo::VertexId nic_a = dev(t, a, VertexKind::nic);
  const topo::VertexId nic_b = dev(t, b, VertexKind::nic);
  Directed path = directed(t, t.machine_route(from, nic_a).value());
  path.emplace_back(uplink(t, nic_a), t.link(uplink(t, nic_a)).a == nic_a);
  path.emplace_back(uplink(t, nic_b), t.link(uplink(t, nic_b)).a != nic_b);
  const Directed tail = directed(t, t.machine_route(nic_b, to).value());
  path.insert(path.end(), tail.begin(), tail.end());
  return path;
}

// Latency x class factor summed, plus bytes over (bottleneck x lowest class factor).
double expected_ns(const topo::Topology& t, const Directed& path, double bytes, const SimProfile& p) {
  double latency_ns = 0;
  double rate = std::numeric_limits<double>::infinity();
  double factor = std::numeric_limits<double>::infinity();
  for (auto [e, forward] : path) {
    const topo::LinkSpec& s = t.link(e).spec;
    latency_ns += static_cast<double>(s.latency_ns) * p.factors(s.link_class).latency_factor;
    rate = std::min(rate, forward ? s.bandwidth_ab_bytes_per_s : s.bandwidth_ba_bytes_per_s);
    factor = std::min(factor, p.factors(s.link_class).bandwidth_factor);
  }
  return latency_ns + bytes / (rate * factor) * 1e9;
}

SimRuntimeConfig exact_network() {
  SimRuntimeConfig c;
  c.profile.link_classes[static_cast<std::size_t>(topo::LinkClass::network)] = {1.0, 1.0};
  return c;
}

TEST(SimPhysics, OneFlowOverA10GbpsLinkTakesSizeOverRatePlusLatency) {
  in_child([] {
    auto cluster = small_cluster({.nodes = 2});
    auto rt = SimRuntime::create(cluster, test_config(exact_network())).value();
    constexpr std::uint64_t k_bytes = 10'000'000;
    Probe& receiver = rt->add_service<Probe>(1, nullptr);
    const MemHandle dst = receiver.env().alloc(MemKind::gpu, 0, k_bytes).value();
    OpId op = 0;
    Probe& sender = rt->add_service<Probe>(0, [&](Probe& p) {
      const MemHandle src = p.env().alloc(MemKind::pinned, 0, k_bytes).value();
      op = p.env().transfer(TransferSpec{src, dst, k_no_id, k_no_id, TransferMode::rdma_write});
    });
    rt->run_until_idle();
    const topo::Topology& t = *cluster;
    const Directed path = network_path(t, dev(t, 0, VertexKind::host_memory), dev(t, 1, VertexKind::gpu));
    // The 10 Gb/s network links are the bottleneck: size / rate + route latency.
    double latency_ns = 0;
    for (auto [e, fwd] : path) latency_ns += static_cast<double>(t.link(e).spec.latency_ns);
    const double expected = latency_ns + k_bytes / 1.25e9 * 1e9;
    EXPECT_NEAR(expected, expected_ns(t, path, k_bytes, rt->profile()), 1e-6);
    ASSERT_EQ(sender.completions.count(op), 1u);
    EXPECT_TRUE(sender.completions[op].status.ok()) << sender.completions[op].status.to_string();
    EXPECT_EQ(sender.completions[op].bytes, k_bytes);
    EXPECT_FALSE(sender.completions[op].crc_valid);
    EXPECT_NEAR(static_cast<double>(sender.done_at_ns[op]), expected, 2.0);
    // The platform routes it over exactly these links.
    const auto route = rt->transfer_route(TransferSpec{MemHandle{0, MemKind::pinned, 0, 1, 0, k_bytes}, dst}).value();
    ASSERT_EQ(route.size(), path.size());
    for (std::size_t i = 0; i < path.size(); ++i) {
      EXPECT_EQ(route[i].edge, path[i].first) << "hop " << i;
      EXPECT_EQ(route[i].a_to_b, path[i].second) << "hop " << i;
    }
  });
}

TEST(SimPhysics, TwoFlowsShareTheLinkTheyHaveInCommon) {
  in_child([] {
    auto cluster = small_cluster({.nodes = 3});
    auto rt = SimRuntime::create(cluster, test_config(exact_network())).value();
    constexpr std::uint64_t k_bytes = 5'000'000;
    Probe& receiver = rt->add_service<Probe>(2, nullptr);
    const MemHandle dst_a = receiver.env().alloc(MemKind::gpu, 0, k_bytes).value();
    const MemHandle dst_b = receiver.env().alloc(MemKind::gpu, 0, k_bytes).value();
    OpId a = 0;
    OpId b = 0;
    Probe& sa = rt->add_service<Probe>(0, [&](Probe& p) {
      a = p.env().transfer(TransferSpec{p.env().alloc(MemKind::pinned, 0, k_bytes).value(), dst_a});
    });
    Probe& sb = rt->add_service<Probe>(1, [&](Probe& p) {
      b = p.env().transfer(TransferSpec{p.env().alloc(MemKind::pinned, 0, k_bytes).value(), dst_b});
    });
    rt->run_until_idle();
    const topo::Topology& t = *cluster;
    // Both go down node 2's 10 Gb/s link into its GPU, starting together
    // (equal route latencies): each gets half of it.
    const Directed pa = network_path(t, dev(t, 0, VertexKind::host_memory), dev(t, 2, VertexKind::gpu));
    const Directed pb = network_path(t, dev(t, 1, VertexKind::host_memory), dev(t, 2, VertexKind::gpu));
    const double alone_a = expected_ns(t, pa, k_bytes, rt->profile());
    const double alone_b = expected_ns(t, pb, k_bytes, rt->profile());
    const double transfer_ns = k_bytes / 1.25e9 * 1e9;
    EXPECT_NEAR(static_cast<double>(sa.done_at_ns[a]), alone_a + transfer_ns, 2.0);
    EXPECT_NEAR(static_cast<double>(sb.done_at_ns[b]), alone_b + transfer_ns, 2.0);
  });
}

TEST(SimPhysics, AThousandFlowsOverFourRoutesAllEndAndTheLinkStaysFull) {
  // 1,024 transfers of unequal sizes (32 to 96 KiB, drawn from a fixed seed)
  // start together from node 0 to node 1, over four routes of unequal
  // latencies (host memory or GPU at each end): their sharing penalties
  // differ, mixed on the PCIe links, all on the network link. Each ends;
  // together they take their bytes over the network link's rate, plus at
  // most the longest route's time for the largest alone. The links carry
  // k_sim_latency_scale times their latency (the penalties near 1, undone by
  // the latency factor): the shares and times are those of the latencies
  // themselves (physics.roofline_many_flows runs the configuration whose
  // solver crashed with penalties near 1e-7).
  in_child([] {
    auto cluster = small_cluster({.nodes = 2});
    auto rt = SimRuntime::create(cluster, test_config(exact_network())).value();
    constexpr std::uint32_t k_flows = 1024;
    Probe& receiver = rt->add_service<Probe>(1, nullptr);
    std::vector<OpId> ops;
    double bytes = 0;
    std::uint64_t largest = 0;
    Probe& sender = rt->add_service<Probe>(0, [&](Probe& p) {
      Rng rng(7);
      for (std::uint32_t i = 0; i < k_flows; ++i) {
        const std::uint64_t n = 32 * k_kib + rng.uniform(64 * k_kib);
        bytes += static_cast<double>(n);
        largest = std::max(largest, n);
        // Four routes of unequal latencies (host memory or GPU at each end),
        // mixed on the PCIe links and sharing the network link.
        const MemKind from = i % 2 == 0 ? MemKind::pinned : MemKind::gpu;
        const MemKind to = (i / 2) % 2 == 0 ? MemKind::host : MemKind::gpu;
        const MemHandle src = p.env().alloc(from, 0, n).value();
        const MemHandle dst = receiver.env().alloc(to, 0, n).value();
        ops.push_back(p.env().transfer(TransferSpec{src, dst}));
      }
    });
    rt->run_until_idle();
    ASSERT_EQ(sender.completions.size(), std::size_t{k_flows});
    TimeNs last = 0;
    for (OpId op : ops) {
      ASSERT_TRUE(sender.completions.at(op).status.ok()) << sender.completions.at(op).status.message();
      last = std::max(last, sender.done_at_ns.at(op));
    }
    const topo::Topology& t = *cluster;
    const Directed path = network_path(t, dev(t, 0, VertexKind::gpu), dev(t, 1, VertexKind::gpu));  // the longest
    const double rate_ns = 1.25e9 / 1e9;  // small_cluster's 10 Gb/s link, bytes per ns
    EXPECT_GE(static_cast<double>(last), bytes / rate_ns);
    // Fluid mode lets changes accumulate up to k_fluid_resolve_share before
    // it solves again (an ending flow's rate waits for that solve): that
    // much more (docs/sim.md, fluid mode).
    const double slack = test_config().fluid ? 1.0 + sim::k_fluid_resolve_share : 1.0;
    EXPECT_LE(static_cast<double>(last), slack * (bytes / rate_ns + expected_ns(t, path, largest, rt->profile())));
  });
}

TEST(SimPhysics, PcieCopyTakesExactlySizeOverBandwidthPlusLatencyWhileTheNetworkCarriesTcpFactors) {
  in_child([] {
    auto cluster = small_cluster({.nodes = 3});
    SimRuntimeConfig config;
    // LV08's TCP factors on the network class only.
    config.profile.link_classes[static_cast<std::size_t>(topo::LinkClass::network)] = {0.97, 13.01};
    // The PCIe DMA alone (the CPU copies of staging are tests/sim/sim_datapath_test.cpp's).
    config.profile.staging_cpu_copies = 0;
    auto rt = SimRuntime::create(cluster, test_config(config)).value();
    constexpr std::uint64_t k_bytes = 64 * k_mib;
    OpId copy = 0;
    OpId net = 0;
    Probe& receiver = rt->add_service<Probe>(2, nullptr);
    const MemHandle remote = receiver.env().alloc(MemKind::gpu, 0, k_bytes).value();
    Probe& local = rt->add_service<Probe>(0, [&](Probe& p) {
      const MemHandle pinned = p.env().alloc(MemKind::pinned, 0, k_bytes).value();
      const MemHandle gpu = p.env().alloc(MemKind::gpu, 0, k_bytes).value();
      copy = p.env().transfer(TransferSpec{pinned, gpu, k_no_id, k_no_id, TransferMode::local_copy});
    });
    Probe& sender = rt->add_service<Probe>(1, [&](Probe& p) {
      net = p.env().transfer(TransferSpec{p.env().alloc(MemKind::pinned, 0, k_bytes).value(), remote});
    });
    rt->run_until_idle();
    const topo::Topology& t = *cluster;
    const Directed pcie =
        directed(t, t.machine_route(dev(t, 0, VertexKind::host_memory), dev(t, 0, VertexKind::gpu)).value());
    double latency_ns = 0;
    double bandwidth = std::numeric_limits<double>::infinity();
    for (auto [e, fwd] : pcie) {
      EXPECT_NE(t.link(e).spec.link_class, topo::LinkClass::network);
      latency_ns += static_cast<double>(t.link(e).spec.latency_ns);
      bandwidth =
          std::min(bandwidth, fwd ? t.link(e).spec.bandwidth_ab_bytes_per_s : t.link(e).spec.bandwidth_ba_bytes_per_s);
    }
    EXPECT_NEAR(static_cast<double>(local.done_at_ns[copy]), latency_ns + k_bytes / bandwidth * 1e9, 2.0);
    // The network route pays 13.01 x its network latency and runs at 0.97 of 10 Gb/s.
    const Directed path = network_path(t, dev(t, 1, VertexKind::host_memory), dev(t, 2, VertexKind::gpu));
    const double with_factors = expected_ns(t, path, k_bytes, rt->profile());
    EXPECT_NEAR(static_cast<double>(sender.done_at_ns[net]), with_factors, 2.0);
    SimProfile plain;
    plain.link_classes.fill(sim::LinkClassFactors{1.0, 1.0});
    EXPECT_GT(with_factors, expected_ns(t, path, k_bytes, plain) * 1.02);
  });
}

TEST(SimPhysics, ABounceReadCrossesHostMemoryAndADirectReadDoesNot) {
  in_child([] {
    auto cluster = small_cluster({.nodes = 2});
    SimRuntimeConfig config = exact_network();
    config.account_link_bytes = true;
    auto rt = SimRuntime::create(cluster, test_config(config)).value();
    constexpr std::uint64_t k_bytes = 16 * k_mib;
    const topo::Topology& t = *cluster;
    const topo::EdgeId client_memory = t.links_of(dev(t, 1, VertexKind::host_memory)).front();
    ASSERT_EQ(t.link(client_memory).spec.link_class, topo::LinkClass::memory);
    Probe& client = rt->add_service<Probe>(1, nullptr);
    const MemHandle gpu = client.env().alloc(MemKind::gpu, 0, k_bytes).value();
    const MemHandle bounce = client.env().alloc(MemKind::pinned, 0, k_bytes).value();
    Probe& server = rt->add_service<Probe>(0, nullptr);
    const MemHandle staging = server.env().alloc(MemKind::pinned, 0, k_bytes).value();

    const TransferSpec direct{staging, gpu, 0, 0, TransferMode::rdma_write};
    const TransferSpec to_bounce{staging, bounce, 0, 0, TransferMode::stream};
    const TransferSpec copy{bounce, gpu, k_no_id, k_no_id, TransferMode::local_copy};
    auto crosses_client_memory = [&](const TransferSpec& s) {
      const auto route = rt->transfer_route(s).value();
      return std::any_of(route.begin(), route.end(), [&](const sim::LinkInfo& l) { return l.edge == client_memory; });
    };
    EXPECT_FALSE(crosses_client_memory(direct));
    EXPECT_TRUE(crosses_client_memory(to_bounce));
    EXPECT_TRUE(crosses_client_memory(copy));

    // And the bytes really go there: a direct read first, then a bounce read.
    OpId direct_op = 0;
    OpId bounce_op = 0;
    OpId copy_op = 0;
    double memory_bytes_after_direct = -1;
    server.on_completion = [&](Probe& p, const Completion& c) {
      if (c.op == direct_op) {
        memory_bytes_after_direct = rt->link_bytes(client_memory, true) + rt->link_bytes(client_memory, false);
        bounce_op = p.env().transfer(to_bounce);
      }
    };
    client.on_completion = [&](Probe&, const Completion&) {};
    direct_op = server.env().transfer(direct);
    rt->run_until([&] { return server.completions.count(bounce_op) != 0 && bounce_op != 0; });
    copy_op = client.env().transfer(copy);
    rt->run_until_idle();
    EXPECT_TRUE(client.completions.at(copy_op).status.ok());
    EXPECT_EQ(memory_bytes_after_direct, 0.0);
    // Into host memory (NIC -> socket -> memory), then out of it (memory ->
    // GPU); the CPU copies of the staging model (SimProfile staging_*) read
    // and write it once more each.
    const double copies = config.profile.staging_cpu_copies;
    const double socket_to_memory =
        rt->link_bytes(client_memory, t.link(client_memory).a != dev(t, 1, VertexKind::host_memory));
    const double memory_to_socket =
        rt->link_bytes(client_memory, t.link(client_memory).a == dev(t, 1, VertexKind::host_memory));
    EXPECT_EQ(socket_to_memory, (1 + copies) * static_cast<double>(k_bytes));
    EXPECT_EQ(memory_to_socket, (1 + copies) * static_cast<double>(k_bytes));
    // The direct path ends below the PCIe switch: the GPU's link carried both reads' bytes.
    const topo::EdgeId gpu_link = t.links_of(dev(t, 1, VertexKind::gpu)).front();
    EXPECT_EQ(rt->link_bytes(gpu_link, true) + rt->link_bytes(gpu_link, false), 2.0 * k_bytes);
  });
}

TEST(SimPhysics, ADiskBoundReadGoesAtTheDrivesRate) {
  in_child([] {
    auto cluster = small_cluster({.nodes = 2, .network_bytes_per_s = 12.5e9});
    auto rt = SimRuntime::create(cluster, test_config(exact_network())).value();
    ASSERT_TRUE(rt->add_target(1, 0).ok());
    constexpr std::uint64_t k_chunk = 1 * k_mib;
    constexpr std::uint32_t k_chunks = 64;
    constexpr std::uint32_t k_window = 4;
    ASSERT_TRUE(rt->preload_object(1, 7, k_chunk * k_chunks).ok());
    // One read alone: latency, then (bytes + per-request occupancy) at 3.2 GB/s.
    OpId single = 0;
    Probe& one = rt->add_service<Probe>(0, [&](Probe& p) {
      StorageIoSpec io{StorageOp::read, 1, 7, 0, p.env().alloc(MemKind::pinned, 0, 8 * k_mib).value(), false};
      single = p.env().storage_io(io);
    });
    rt->run_until_idle();
    const SimProfile& prof = rt->profile();
    const double occupancy_bytes = static_cast<double>(prof.disk_request_occupancy_ns) * 1e-9 * 3.2e9;
    EXPECT_NEAR(static_cast<double>(one.done_at_ns[single]),
                static_cast<double>(rt->profile().disk_read_latency_ns) + (8.0 * k_mib + occupancy_bytes) / 3.2e9 * 1e9,
                2.0);
    EXPECT_EQ(one.completions[single].bytes, 8 * k_mib);

    // A stream of chunk reads, each sent on to another node over 100 Gb/s,
    // k_window in flight: the drive (3.2 GB/s) sets the pace, not the network.
    Probe& reader = rt->add_service<Probe>(1, nullptr);
    const MemHandle landing = reader.env().alloc(MemKind::gpu, 0, k_chunk * k_chunks).value();
    const TimeNs start = rt->now();
    std::uint32_t issued = 0;
    std::uint32_t delivered = 0;
    std::map<OpId, std::pair<std::uint32_t, MemHandle>> reads;
    std::set<OpId> sends;
    auto issue = [&](Probe& p) {
      const std::uint32_t i = issued++;
      const MemHandle staging = p.env().alloc(MemKind::pinned, 0, k_chunk).value();
      reads[p.env().storage_io(StorageIoSpec{StorageOp::read, 1, 7, i * k_chunk, staging, false})] = {i, staging};
    };
    Probe& server = rt->add_service<Probe>(0, [&](Probe& p) {
      for (std::uint32_t w = 0; w < k_window; ++w) issue(p);
    });
    server.on_completion = [&](Probe& p, const Completion& c) {
      if (auto it = reads.find(c.op); it != reads.end()) {
        const auto [i, staging] = it->second;
        sends.insert(p.env().transfer(TransferSpec{staging, landing.slice(i * k_chunk, k_chunk)}));
        if (issued < k_chunks) issue(p);
      } else if (sends.count(c.op) != 0) {
        ++delivered;
      }
    };
    rt->run_until_idle();
    ASSERT_EQ(delivered, k_chunks);
    const double seconds = static_cast<double>(rt->now() - start) * 1e-9;
    const double rate = static_cast<double>(k_chunk * k_chunks) / seconds;
    EXPECT_LT(rate, 3.2e9);
    EXPECT_GT(rate, 0.90 * 3.2e9) << "the drive should be busy all the time";
  });
}

// Issue 48 (roofline): a drive's bytes cross its own PCIe link and its
// switch's uplink to the host memory, beside the drive's work. Before, the
// drive was a resource alone: eight gen3 drives on one switch read at eight
// times their data sheet rate, over their x4 links and the x16 uplink both.
TEST(SimPhysics, ADrivesBytesCrossItsPcieLinkAndItsSwitchUplink) {
  in_child([] {
    topo::GenericMachine m;
    m.gpus = 0;
    m.nvmes = 8;
    m.pcie_gen = 3;
    m.nvme_read_bytes_per_s = 7e9;
    const topo::Topology machine = topo::generic_machine(m).value();
    auto cluster = std::make_shared<const topo::Topology>(topo::star_cluster(machine, 1).value());
    auto rt = SimRuntime::create(cluster, test_config(exact_network())).value();
    constexpr std::uint64_t k_bytes = 256 * k_mib;
    for (TargetId target = 1; target <= 8; ++target) {
      ASSERT_TRUE(rt->add_target(target, 0).ok());
      ASSERT_TRUE(rt->preload_object(target, 7, k_bytes).ok());
    }
    const double drive_link = topo::pcie_bytes_per_s(3, 4);
    const double uplink = topo::pcie_bytes_per_s(3, 16);
    ASSERT_LT(drive_link, 7e9);
    ASSERT_LT(uplink, 8 * drive_link);
    std::vector<OpId> reads;
    Probe& one = rt->add_service<Probe>(0, [&](Probe& p) {
      reads.push_back(p.env().storage_io(
          StorageIoSpec{StorageOp::read, 1, 7, 0, p.env().alloc(MemKind::pinned, 0, k_bytes).value(), false}));
    });
    rt->run_until_idle();
    const double alone_s = static_cast<double>(one.done_at_ns[reads[0]]) * 1e-9;
    EXPECT_NEAR(static_cast<double>(k_bytes) / alone_s, drive_link, 0.01 * drive_link) << "the x4 link binds";
    // All eight at once: the switch's x16 uplink binds.
    std::vector<OpId> all;
    const TimeNs start = rt->now();
    Probe& eight = rt->add_service<Probe>(0, [&](Probe& p) {
      for (TargetId target = 1; target <= 8; ++target) {
        all.push_back(p.env().storage_io(
            StorageIoSpec{StorageOp::read, target, 7, 0, p.env().alloc(MemKind::pinned, 0, k_bytes).value(), false}));
      }
    });
    rt->run_until_idle();
    TimeNs last = 0;
    for (OpId op : all) {
      ASSERT_TRUE(eight.completions[op].status.ok());
      last = std::max(last, eight.done_at_ns[op]);
    }
    const double rate = 8.0 * static_cast<double>(k_bytes) / (static_cast<double>(last - start) * 1e-9);
    EXPECT_NEAR(rate, uplink, 0.01 * uplink) << "the x16 uplink binds";
  });
}

// Issue 22 (F4), fitting a real drive: the part of a request's time a lone
// request cannot overlap (disk_read/write_request_bytes_per_s) is latency,
// paid by each request in parallel, not drive work.
TEST(SimPhysics, ALoneRequestAlsoTakesItsBytesAtTheRequestRate) {
  in_child([] {
    auto cluster = small_cluster({.nodes = 2, .network_bytes_per_s = 12.5e9});
    SimRuntimeConfig config = exact_network();
    config.profile.disk_read_request_bytes_per_s = 1e9;
    config.profile.disk_write_request_bytes_per_s = 5e8;
    auto rt = SimRuntime::create(cluster, test_config(config)).value();
    ASSERT_TRUE(rt->add_target(1, 0).ok());
    constexpr std::uint64_t k_bytes = 8 * k_mib;
    ASSERT_TRUE(rt->preload_object(1, 7, 2 * k_bytes).ok());
    const SimProfile& prof = rt->profile();
    const double read_occupancy_bytes = static_cast<double>(prof.disk_request_occupancy_ns) * 1e-9 * 3.2e9;
    const double write_occupancy_bytes = static_cast<double>(prof.disk_request_occupancy_ns) * 1e-9 * 2.0e9;
    // One read alone: latency + bytes / request rate, then (bytes + occupancy) at 3.2 GB/s.
    OpId single = 0;
    Probe& one = rt->add_service<Probe>(0, [&](Probe& p) {
      StorageIoSpec io{StorageOp::read, 1, 7, 0, p.env().alloc(MemKind::pinned, 0, k_bytes).value(), false};
      single = p.env().storage_io(io);
    });
    rt->run_until_idle();
    const double lone_read_ns = static_cast<double>(prof.disk_read_latency_ns) + k_bytes / 1e9 * 1e9 +
                                (k_bytes + read_occupancy_bytes) / 3.2e9 * 1e9;
    EXPECT_NEAR(static_cast<double>(one.done_at_ns[single]), lone_read_ns, 2.0);
    EXPECT_EQ(one.completions[single].bytes, k_bytes);

    // Two reads at once pay their request time side by side, then share the drive.
    TimeNs start = 0;
    std::vector<OpId> pair;
    Probe& two = rt->add_service<Probe>(0, [&](Probe& p) {
      start = p.env().now();
      for (std::uint64_t i = 0; i < 2; ++i) {
        const MemHandle buffer = p.env().alloc(MemKind::pinned, 0, k_bytes).value();
        pair.push_back(p.env().storage_io(StorageIoSpec{StorageOp::read, 1, 7, i * k_bytes, buffer, false}));
      }
    });
    rt->run_until_idle();
    ASSERT_EQ(pair.size(), 2u);
    const TimeNs last = std::max(two.done_at_ns[pair[0]], two.done_at_ns[pair[1]]);
    EXPECT_NEAR(static_cast<double>(last - start),
                static_cast<double>(prof.disk_read_latency_ns) + k_bytes / 1e9 * 1e9 +
                    2 * (k_bytes + read_occupancy_bytes) / 3.2e9 * 1e9,
                2.0);

    // A write: its buffer's bytes at the write request rate, then at 2 GB/s.
    OpId write = 0;
    Probe& writer = rt->add_service<Probe>(0, [&](Probe& p) {
      start = p.env().now();
      const MemHandle buffer = p.env().alloc(MemKind::pinned, 0, k_bytes).value();
      write = p.env().storage_io(StorageIoSpec{StorageOp::write, 1, 8, 0, buffer, false});
    });
    rt->run_until_idle();
    EXPECT_TRUE(writer.completions[write].status.ok()) << writer.completions[write].status.to_string();
    EXPECT_NEAR(static_cast<double>(writer.done_at_ns[write] - start),
                static_cast<double>(prof.disk_write_latency_ns) + k_bytes / 5e8 * 1e9 +
                    (k_bytes + write_occupancy_bytes) / 2.0e9 * 1e9,
                2.0);
  });
}

// Issue 22 (F4): a batch's fixed drive time (disk_batch_occupancy_ns) is
// shared by the requests at the drive, so a request gets cheaper as the depth
// grows: a closed loop keeping `depth` small reads in flight pays
// batch / depth of drive time per request (plus its bytes).
TEST(SimPhysics, ABatchsDriveTimeIsSharedByTheRequestsAtTheDrive) {
  in_child([] {
    auto cluster = small_cluster({.nodes = 2, .network_bytes_per_s = 12.5e9});
    SimRuntimeConfig config = exact_network();
    config.profile.disk_read_latency_ns = 0;
    config.profile.disk_request_occupancy_ns = 0;
    config.profile.disk_batch_occupancy_ns = 100 * k_ns_per_us;
    auto rt = SimRuntime::create(cluster, test_config(config)).value();
    ASSERT_TRUE(rt->add_target(1, 0).ok());
    constexpr std::uint64_t k_block = 4096;
    constexpr std::uint32_t k_reads = 400;
    ASSERT_TRUE(rt->preload_object(1, 7, k_block * k_reads).ok());
    auto loop_seconds = [&](std::uint32_t depth) {
      const TimeNs start = rt->now();
      std::uint32_t issued = 0;
      std::uint32_t done = 0;
      auto issue = [&](Probe& p) {
        const MemHandle buffer = p.env().alloc(MemKind::pinned, 0, k_block).value();
        p.env().storage_io(StorageIoSpec{StorageOp::read, 1, 7, (issued++) * k_block, buffer, false});
      };
      Probe& reader = rt->add_service<Probe>(0, [&](Probe& p) {
        for (std::uint32_t i = 0; i < depth; ++i) issue(p);
      });
      reader.on_completion = [&](Probe& p, const Completion& c) {
        EXPECT_TRUE(c.status.ok()) << c.status.to_string();
        ++done;
        if (issued < k_reads) issue(p);
      };
      rt->run_until_idle();
      EXPECT_EQ(done, k_reads);
      return static_cast<double>(rt->now() - start) * 1e-9;
    };
    const double bytes_s = k_block / 3.2e9;
    // Depth 1: every request is a batch of its own.
    EXPECT_NEAR(loop_seconds(1), k_reads * (100e-6 + bytes_s), 1e-3 * k_reads * 100e-6);
    // Depth 4: after the first requests each finds three others at the drive.
    // The start (shares 1, 1/2, 1/3 instead of 1/4) adds about 1.1 batches.
    const double expected = k_reads * (25e-6 + bytes_s) + 1.1 * 100e-6;
    EXPECT_NEAR(loop_seconds(4), expected, 0.02 * expected);
  });
}

// Issue 22 (F4): a drive of disk_channels channels (each 1/channels of the
// drive's rate). A small request takes one channel, so two that map to
// different channels run side by side and two on the same channel share it;
// a request of several stripes takes that many channels at once, so a lone
// large request still gets the whole drive's rate.
TEST(SimPhysics, ADrivesChannelsServeSmallRequestsApartAndLargeOnesTogether) {
  in_child([] {
    auto cluster = small_cluster({.nodes = 2, .network_bytes_per_s = 12.5e9});
    SimRuntimeConfig config = exact_network();
    config.profile.disk_read_latency_ns = 0;
    config.profile.disk_request_occupancy_ns = 10 * k_ns_per_us;
    config.profile.disk_channels = 4;
    config.profile.disk_channel_stripe_bytes = 16 * 1024;
    auto rt = SimRuntime::create(cluster, test_config(config)).value();
    ASSERT_TRUE(rt->add_target(1, 0).ok());
    constexpr std::uint64_t k_stripe = 16 * 1024;
    ASSERT_TRUE(rt->preload_object(1, 7, 64 * k_stripe).ok());
    // Reads of `length` bytes at `offsets`, issued together: each one's time.
    auto read_seconds = [&](std::vector<std::uint64_t> offsets, std::uint64_t length) {
      const TimeNs start = rt->now();
      std::vector<double> seconds;
      Probe& reader = rt->add_service<Probe>(0, [&](Probe& p) {
        for (std::uint64_t offset : offsets) {
          const MemHandle buffer = p.env().alloc(MemKind::pinned, 0, length).value();
          p.env().storage_io(StorageIoSpec{StorageOp::read, 1, 7, offset, buffer, false});
        }
      });
      reader.on_completion = [&](Probe&, const Completion& c) {
        EXPECT_TRUE(c.status.ok()) << c.status.to_string();
        seconds.push_back(static_cast<double>(rt->now() - start) * 1e-9);
      };
      rt->run_until_idle();
      EXPECT_EQ(seconds.size(), offsets.size());
      return seconds;
    };
    const double channel_bytes_per_s = 3.2e9 / 4;
    const double small_s = 10e-6 + 4096 / channel_bytes_per_s;
    // A lone 4 KiB read: one channel's rate, not the drive's.
    EXPECT_NEAR(read_seconds({0}, 4096).at(0), small_s, 1e-7);
    // Stripes 0 and 1 of the file map to neighbouring channels: side by side.
    for (double s : read_seconds({0, k_stripe}, 4096)) EXPECT_NEAR(s, small_s, 1e-7);
    // Stripes 0 and 4 map to the same channel of four: they share it.
    for (double s : read_seconds({0, 4 * k_stripe}, 4096)) EXPECT_NEAR(s, 2 * small_s, 1e-7);
    // A lone 64 KiB read takes all four channels, with a quarter of its
    // bytes and of its occupancy (device time per request) on each.
    EXPECT_NEAR(read_seconds({0}, 4 * k_stripe).at(0), 10e-6 / 4 + k_stripe / channel_bytes_per_s, 1e-7);
  });
}

// Issue 19 item 3 (study 2's writes "helped by caching"): a buffered write
// (a storage server writing through the page cache) completes after one
// thread's copy into the cache, while the node's dirty bytes fit its budget
// (page_cache_dirty_ratio x host memory); its drive work follows as a
// write-back. A write that would pass the budget waits for write-back to
// make room, so a long run of writes goes at the drive's rate.
TEST(SimPhysics, BufferedWritesFillTheDirtyBudgetThenWaitForWriteBack) {
  in_child([] {
    auto cluster = small_cluster({.nodes = 2, .network_bytes_per_s = 12.5e9, .nvme_write_bytes_per_s = 2.0e9});
    std::uint64_t memory_bytes = 0;
    for (std::uint32_t i = 0; i < cluster->count(0, VertexKind::host_memory); ++i) {
      memory_bytes += cluster->vertex(dev(*cluster, 0, VertexKind::host_memory, i)).host_memory_bytes;
    }
    ASSERT_GT(memory_bytes, 0u);
    constexpr std::uint64_t k_budget = 16 * k_mib;
    constexpr std::uint64_t k_write = 4 * k_mib;
    SimRuntimeConfig config = exact_network();
    config.profile.disk_write_latency_ns = 0;
    config.profile.disk_request_occupancy_ns = 0;
    config.profile.page_cache_copy_bytes_per_s = 8e9;
    // A little over the budget, so that rounding down still holds 4 writes.
    config.profile.page_cache_dirty_ratio = (static_cast<double>(k_budget) + 0.5) / static_cast<double>(memory_bytes);
    auto rt = SimRuntime::create(cluster, test_config(config)).value();
    ASSERT_TRUE(rt->add_target(1, 0).ok());
    std::vector<OpId> writes;
    Probe& writer = rt->add_service<Probe>(0, [&](Probe& p) {
      for (std::uint32_t i = 0; i < 8; ++i) {
        const MemHandle buffer = p.env().alloc(MemKind::pinned, 0, k_write).value();
        StorageIoSpec spec{StorageOp::write, 1, 7, i * k_write, buffer, false};
        spec.buffered = true;
        writes.push_back(p.env().storage_io(spec));
      }
    });
    rt->run_until_idle();
    ASSERT_EQ(writes.size(), 8u);
    EXPECT_EQ(rt->buffered_writes(), 8u);
    EXPECT_EQ(rt->throttled_writes(), 4u);
    EXPECT_EQ(rt->dirty_bytes(0), 0u);  // all written back by the end
    const double copy_s = k_write / 8e9;
    const double drain_s = 4 * k_write / 2.0e9;  // four write-backs share the drive
    for (std::uint32_t i = 0; i < 8; ++i) {
      ASSERT_EQ(writer.completions.count(writes[i]), 1u);
      EXPECT_TRUE(writer.completions[writes[i]].status.ok());
      EXPECT_EQ(writer.completions[writes[i]].bytes, k_write);
      // The first four fit: a copy each. The next four wait for the first
      // four write-backs, which end together.
      const double expected = i < 4 ? copy_s : drain_s + copy_s;
      EXPECT_NEAR(static_cast<double>(writer.done_at_ns[writes[i]]) * 1e-9, expected, 1e-6) << "write " << i;
    }
    // Read back: the object holds all eight writes.
    OpId read = 0;
    Probe& reader = rt->add_service<Probe>(0, [&](Probe& p) {
      const MemHandle buffer = p.env().alloc(MemKind::pinned, 0, 8 * k_write).value();
      read = p.env().storage_io(StorageIoSpec{StorageOp::read, 1, 7, 0, buffer, false});
    });
    rt->run_until_idle();
    EXPECT_EQ(reader.completions[read].bytes, 8 * k_write);
  });
}

TEST(SimPhysics, UnbufferedAndSyncWritesWaitForTheDrive) {
  in_child([] {
    auto cluster = small_cluster({.nodes = 2, .network_bytes_per_s = 12.5e9, .nvme_write_bytes_per_s = 2.0e9});
    SimRuntimeConfig config = exact_network();
    config.profile.disk_write_latency_ns = 0;
    config.profile.disk_sync_latency_ns = 0;
    config.profile.disk_request_occupancy_ns = 0;
    auto rt = SimRuntime::create(cluster, test_config(config)).value();
    ASSERT_TRUE(rt->add_target(1, 0).ok());
    constexpr std::uint64_t k_write = 4 * k_mib;
    std::vector<OpId> writes;
    Probe& writer = rt->add_service<Probe>(0, [&](Probe& p) {
      for (std::uint32_t i = 0; i < 2; ++i) {
        const MemHandle buffer = p.env().alloc(MemKind::pinned, 0, k_write).value();
        StorageIoSpec spec{StorageOp::write, 1, 7, i * k_write, buffer, i == 1};
        spec.buffered = i == 1;  // buffered but sync: still the drive
        writes.push_back(p.env().storage_io(spec));
      }
    });
    rt->run_until_idle();
    EXPECT_EQ(rt->buffered_writes(), 0u);
    for (OpId w : writes) {
      EXPECT_NEAR(static_cast<double>(writer.done_at_ns[w]) * 1e-9, 2 * k_write / 2.0e9, 1e-5);
    }
  });
}

TEST(SimPhysics, ADiskBandwidthFactorScalesTheDrivesRate) {
  in_child([] {
    auto cluster = small_cluster({.nodes = 2, .network_bytes_per_s = 12.5e9});
    SimRuntimeConfig config = exact_network();
    config.profile.disk_read_bandwidth_factor = 0.5;
    config.profile.disk_write_bandwidth_factor = 0.25;
    auto rt = SimRuntime::create(cluster, test_config(config)).value();
    ASSERT_TRUE(rt->add_target(1, 0).ok());
    constexpr std::uint64_t k_bytes = 8 * k_mib;
    constexpr std::uint32_t k_reads = 4;
    ASSERT_TRUE(rt->preload_object(1, 7, k_reads * k_bytes).ok());
    const SimProfile& prof = rt->profile();
    const double occupancy_s = static_cast<double>(prof.disk_request_occupancy_ns) * 1e-9;
    // The drive of 3.2 GB/s reads at 1.6 GB/s: four large reads at once end
    // together after latency + 4 x (occupancy + bytes / 1.6 GB/s).
    std::vector<OpId> reads;
    Probe& reader = rt->add_service<Probe>(0, [&](Probe& p) {
      for (std::uint32_t i = 0; i < k_reads; ++i) {
        const MemHandle buffer = p.env().alloc(MemKind::pinned, 0, k_bytes).value();
        reads.push_back(p.env().storage_io(StorageIoSpec{StorageOp::read, 1, 7, i * k_bytes, buffer, false}));
      }
    });
    rt->run_until_idle();
    ASSERT_EQ(reads.size(), k_reads);
    for (OpId op : reads) {
      EXPECT_EQ(reader.completions[op].bytes, k_bytes);
      EXPECT_NEAR(static_cast<double>(reader.done_at_ns[op]),
                  static_cast<double>(prof.disk_read_latency_ns) + k_reads * (occupancy_s + k_bytes / 1.6e9) * 1e9,
                  4.0);
    }
    // Writes at a quarter of 2 GB/s.
    TimeNs start = 0;
    OpId write = 0;
    Probe& writer = rt->add_service<Probe>(0, [&](Probe& p) {
      start = p.env().now();
      const MemHandle buffer = p.env().alloc(MemKind::pinned, 0, k_bytes).value();
      write = p.env().storage_io(StorageIoSpec{StorageOp::write, 1, 8, 0, buffer, false});
    });
    rt->run_until_idle();
    EXPECT_NEAR(static_cast<double>(writer.done_at_ns[write] - start),
                static_cast<double>(prof.disk_write_latency_ns) + (occupancy_s + k_bytes / 0.5e9) * 1e9, 2.0);
  });
}

TEST(SimPhysics, AStreamedReadsFirstSegmentWaitsOnlyForItsOwnRequestTime) {
  in_child([] {
    auto cluster = small_cluster({.nodes = 2, .network_bytes_per_s = 12.5e9});
    SimRuntimeConfig config = exact_network();
    config.profile.disk_read_request_bytes_per_s = 1e9;
    config.stream_read_segment_bytes = 1 * k_mib;
    auto rt = SimRuntime::create(cluster, test_config(config)).value();
    ASSERT_TRUE(rt->add_target(1, 0).ok());
    constexpr std::uint64_t k_bytes = 8 * k_mib;
    ASSERT_TRUE(rt->preload_object(1, 7, k_bytes).ok());
    OpId read = 0;
    Probe& reader = rt->add_service<Probe>(0, [&](Probe& p) {
      StorageIoSpec io{StorageOp::read, 1, 7, 0, p.env().alloc(MemKind::pinned, 0, k_bytes).value(), false};
      read = p.env().storage_io(io);
    });
    rt->run_until_idle();
    EXPECT_EQ(rt->streamed_reads(), 1u);
    EXPECT_EQ(reader.completions[read].bytes, k_bytes);
    // Latency + one segment at the request rate (1 MiB / 1 GB/s) and at the drive's (3.2 GB/s).
    EXPECT_NEAR(static_cast<double>(reader.done_at_ns[read]),
                static_cast<double>(rt->profile().disk_read_latency_ns) + k_mib / 1e9 * 1e9 + k_mib / 3.2e9 * 1e9, 2.0);
  });
}

}  // namespace
}  // namespace sluice::testing
