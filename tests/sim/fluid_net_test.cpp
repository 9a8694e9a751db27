// FluidNet (sim/fluid_net.hpp, issue 50) against the sharing it stands for:
// single flows take latency + bytes / (rate x factor); flows share a link in
// proportion to their weights (1 / penalty) and are bounded by the link they
// saturate first (max-min); small flows pass beside bulk flows without taking
// their rate, and what that lets run ahead of a full link is measured; a component solved at every change ends every
// flow when a from-scratch max-min reference does; and with changes let accumulate, no link ever carries more than its
// capacity while every byte still arrives.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <vector>

#include "core/common/rng.hpp"
#include "sim/fluid_net.hpp"

namespace sluice::testing {
namespace {

using sim::FluidNet;

constexpr double k_inf = std::numeric_limits<double>::infinity();

// Runs a net to its end: each flow's end time by token.
struct Driver {
  explicit Driver(FluidNet::Config config = {})
      : net(config, [this](std::uint64_t token) { ended[token] = net_now; }) {}
  void run(const std::function<void()>& after_each = {}) {
    for (int guard = 0; guard < 10'000'000; ++guard) {
      const double next = net.next_event();
      if (next == k_inf) return;
      net_now = next;
      net.advance(next);
      if (after_each) after_each();
    }
    FAIL() << "the net did not drain";
  }
  // The time the last flow that ended so far ended.
  double last_end() const {
    double last = 0;
    for (const auto& [token, at] : ended) last = std::max(last, at);
    return last;
  }
  // A route of `shape` (its bound, penalty, ...) over one new link of `capacity`.
  std::uint32_t route_over_new_link(double capacity, FluidNet::Route shape = {}) {
    shape.links = {net.add_link(capacity)};
    return net.add_route(shape);
  }
  double net_now = 0;
  std::map<std::uint64_t, double> ended;
  FluidNet net;
};

TEST(FluidNet, OneFlowTakesLatencyPlusBytesOverRateTimesFactor) {
  Driver d;
  const std::uint32_t link = d.net.add_link(1e9);
  FluidNet::Route r;
  r.links = {link};
  r.latency_s = 2e-6;
  r.penalty = 2e-6;
  r.factor = 0.97;
  const std::uint32_t route = d.net.add_route(r);
  d.net.start(0, route, 1e6, 7);
  d.run();
  ASSERT_EQ(d.ended.count(7), 1u);
  EXPECT_NEAR(d.ended[7], 2e-6 + 1e6 / (1e9 * 0.97), 1e-12);
}

TEST(FluidNet, EqualFlowsShareALinkAndTheLastSpeedsUpWhenTheFirstEnds) {
  Driver d;
  const std::uint32_t route = d.route_over_new_link(1e9);
  d.net.start(0, route, 1e6, 1);
  d.net.start(0, route, 3e6, 2);
  d.run();
  EXPECT_NEAR(d.ended[1], 2e-3, 1e-12);         // 1 MB at 0.5 GB/s
  EXPECT_NEAR(d.ended[2], 2e-3 + 2e-3, 1e-12);  // then the 2 MB left at 1 GB/s
}

TEST(FluidNet, FlowsShareInProportionToTheInverseOfTheirPenalty) {
  Driver d;
  const std::uint32_t link = d.net.add_link(3e9);
  FluidNet::Route fast;
  fast.links = {link};
  fast.penalty = 1;
  FluidNet::Route slow = fast;
  slow.penalty = 2;  // CM02: a longer route gets half the share
  const std::uint32_t a = d.net.add_route(fast);
  const std::uint32_t b = d.net.add_route(slow);
  d.net.start(0, a, 2e9, 1);  // 2 GB/s while both run
  d.net.start(0, b, 1e9, 2);  // 1 GB/s while both run
  d.run();
  EXPECT_NEAR(d.ended[1], 1.0, 1e-9);
  EXPECT_NEAR(d.ended[2], 1.0, 1e-9);
}

TEST(FluidNet, AFlowBoundElsewhereLeavesTheRestOfASharedLinkToTheOthers) {
  Driver d;
  const std::uint32_t shared = d.net.add_link(10e9);
  const std::uint32_t narrow = d.net.add_link(1e9);
  FluidNet::Route wide_route;
  wide_route.links = {shared};
  FluidNet::Route narrow_route;
  narrow_route.links = {shared, narrow};
  d.net.start(0, d.net.add_route(wide_route), 9e9, 1);    // 9 GB/s: what the narrow flow leaves
  d.net.start(0, d.net.add_route(narrow_route), 1e9, 2);  // 1 GB/s: its own narrow link
  d.run();
  EXPECT_NEAR(d.ended[1], 1.0, 1e-9);
  EXPECT_NEAR(d.ended[2], 1.0, 1e-9);
}

TEST(FluidNet, ARouteBoundCapsTheRateBelowTheLink) {
  Driver d;
  FluidNet::Route r;
  r.bound = 2e9;  // a TCP window over a long route
  const std::uint32_t route = d.route_over_new_link(10e9, r);
  d.net.start(0, route, 2e9, 1);
  d.net.start(0, route, 2e9, 2);
  d.run();
  EXPECT_NEAR(d.ended[1], 1.0, 1e-9);
  EXPECT_NEAR(d.ended[2], 1.0, 1e-9);
}

TEST(FluidNet, ALinkCrossedTwiceCountsTwice) {
  Driver d;
  const std::uint32_t memory = d.net.add_link(10e9);
  FluidNet::Route copy;
  copy.links = {memory, memory};  // a CPU copy reads and writes one memory
  d.net.start(0, d.net.add_route(copy), 5e9, 1);
  d.run();
  EXPECT_NEAR(d.ended[1], 1.0, 1e-9);
}

TEST(FluidNet, SmallFlowsPassBesideBulkFlowsOfALargeComponentWithoutTakingTheirRate) {
  Driver d;
  const std::uint32_t route = d.route_over_new_link(1e9);
  const int bulk = static_cast<int>(sim::k_fluid_exact_component_flows) + 16;  // a large component
  for (int i = 0; i < bulk; ++i) d.net.start(0, route, 1e7, static_cast<std::uint64_t>(i));
  d.net.start(0, route, 1000, 1000);  // a message: its weighted share beside them
  d.run();
  for (int i = 0; i < bulk; ++i) EXPECT_NEAR(d.ended[static_cast<std::uint64_t>(i)], bulk * 1e7 / 1e9, 1e-9);
  EXPECT_NEAR(d.ended[1000], 1000 / (1e9 / (bulk + 1)), 1e-12);
  EXPECT_DOUBLE_EQ(d.net.small_bytes(), 1000);
  EXPECT_DOUBLE_EQ(d.net.bulk_bytes(), bulk * 1e7);
}

TEST(FluidNet, SmallFlowsOfASmallComponentAreSolvedWithTheOthers) {
  Driver d;
  const std::uint32_t route = d.route_over_new_link(1e9);
  d.net.start(0, route, 1000, 1);  // three messages at once share the link, as per chunk
  d.net.start(0, route, 1000, 2);
  d.net.start(0, route, 1000, 3);
  d.run();
  for (std::uint64_t t = 1; t <= 3; ++t) EXPECT_NEAR(d.ended[t], 3000 / 1e9, 1e-15);
  EXPECT_DOUBLE_EQ(d.net.small_bytes(), 0);
}

// A route whose component was large (a data phase) and has drained is
// solved at each change again: a metadata phase's messages after it share
// the link as per chunk. Before, the route stayed marked large once no flow
// of it was left in flight, and three messages at once each took the whole
// link (ending at 1 us instead of 3).
TEST(FluidNet, MessagesAfterADrainedDataPhaseAreSolvedWithTheOthersAgain) {
  Driver d;
  const std::uint32_t route = d.route_over_new_link(1e9);
  const int bulk = static_cast<int>(sim::k_fluid_exact_component_flows) + 16;  // a large component
  for (int i = 0; i < bulk; ++i) d.net.start(0, route, 1e6, static_cast<std::uint64_t>(i));
  d.run();
  ASSERT_EQ(d.ended.size(), static_cast<std::size_t>(bulk));
  const double after = d.last_end();  // the data phase's last end
  for (std::uint64_t t = 1001; t <= 1003; ++t) d.net.start(after, route, 1000, t);
  d.run();
  for (std::uint64_t t = 1001; t <= 1003; ++t) EXPECT_NEAR(d.ended[t] - after, 3000 / 1e9, 1e-15) << t;
}

TEST(FluidNet, ADrivesSmallRequestsShareItsRate) {
  Driver d;
  FluidNet::Route r;
  r.small_ok = false;  // a drive
  const std::uint32_t route = d.route_over_new_link(1e9, r);
  d.net.start(0, route, 4096, 1);
  d.net.start(0, route, 4096, 2);
  d.run();
  EXPECT_NEAR(d.ended[1], 8192 / 1e9, 1e-15);
  EXPECT_NEAR(d.ended[2], 8192 / 1e9, 1e-15);
}

// A from-scratch reference: weighted max-min of the flows alive, solved again
// at every start and end, bytes advanced between.
struct RefFlow {
  std::vector<std::uint32_t> links;
  double weight = 1;
  double bound = k_inf;
  double start = 0;
  double bytes = 0;
};
std::vector<double> reference_ends(const std::vector<double>& capacity, const std::vector<RefFlow>& flows) {
  const std::size_t n = flows.size();
  std::vector<double> left(n), end(n, -1);
  for (std::size_t i = 0; i < n; ++i) left[i] = flows[i].bytes;
  double now = 0;
  for (;;) {
    std::vector<std::size_t> alive;
    double next_start = k_inf;
    for (std::size_t i = 0; i < n; ++i) {
      if (end[i] >= 0) continue;
      if (flows[i].start <= now + 1e-15) {
        alive.push_back(i);
      } else {
        next_start = std::min(next_start, flows[i].start);
      }
    }
    if (alive.empty() && next_start == k_inf) break;
    // Progressive filling.
    std::vector<double> rate(n, 0), rem = capacity;
    std::vector<bool> fixed(n, false);
    std::size_t open = alive.size();
    while (open > 0) {
      double best = k_inf;
      for (std::size_t l = 0; l < capacity.size(); ++l) {
        double w = 0;
        for (std::size_t i : alive) {
          if (!fixed[i])
            w += flows[i].weight * static_cast<double>(std::count(flows[i].links.begin(), flows[i].links.end(), l));
        }
        if (w > 0) best = std::min(best, rem[l] / w);
      }
      for (std::size_t i : alive) {
        if (!fixed[i]) best = std::min(best, flows[i].bound / flows[i].weight);
      }
      std::vector<std::size_t> at;
      for (std::size_t i : alive) {
        if (fixed[i]) continue;
        bool at_level = flows[i].bound / flows[i].weight <= best * (1 + 1e-12);
        for (std::uint32_t l : flows[i].links) {
          double w = 0;
          for (std::size_t j : alive) {
            if (!fixed[j])
              w += flows[j].weight * static_cast<double>(std::count(flows[j].links.begin(), flows[j].links.end(), l));
          }
          if (rem[l] / w <= best * (1 + 1e-12)) at_level = true;
        }
        if (!at_level) continue;
        rate[i] = std::min(best * flows[i].weight, flows[i].bound);
        at.push_back(i);
      }
      for (std::size_t i : at) {
        fixed[i] = true;
        --open;
        for (std::uint32_t l : flows[i].links) rem[l] = std::max(rem[l] - rate[i], 0.0);
      }
    }
    double next_end = k_inf;
    for (std::size_t i : alive) next_end = std::min(next_end, now + left[i] / rate[i]);
    const double next = std::min(next_end, next_start);
    for (std::size_t i : alive) {
      left[i] -= rate[i] * (next - now);
      if (left[i] <= 1e-6 * flows[i].bytes) end[i] = next;
    }
    now = next;
  }
  return end;
}

TEST(FluidNet, SolvedAtEveryChangeItEndsEveryFlowWhenAFromScratchMaxMinDoes) {
  Rng rng(11);
  const std::vector<double> capacity = {10e9, 10e9, 4e9, 25e9, 7e9, 12e9};
  std::vector<RefFlow> flows;
  for (int i = 0; i < 120; ++i) {  // past k_fluid_exact_component_flows: one big component
    RefFlow f;
    const auto first = static_cast<std::uint32_t>(rng.uniform(3));
    f.links = {first, static_cast<std::uint32_t>(3 + rng.uniform(3))};
    if (rng.uniform01() < 0.3) f.links.push_back(2);
    f.weight = rng.uniform01() < 0.5 ? 1.0 : 0.5;
    f.bound = rng.uniform01() < 0.2 ? 1e9 : k_inf;
    f.start = rng.uniform01() * 0.01;
    f.bytes = 1e6 + rng.uniform01() * 5e7;
    flows.push_back(f);
  }
  const std::vector<double> expected = reference_ends(capacity, flows);

  FluidNet::Config config;
  config.resolve_share = 0;  // every change solved: the per-chunk answer
  Driver d(config);
  for (double c : capacity) d.net.add_link(c);
  std::vector<std::uint32_t> routes;
  for (const RefFlow& f : flows) {
    FluidNet::Route r;
    r.links = f.links;
    r.penalty = 1 / f.weight;
    r.bound = f.bound;
    routes.push_back(d.net.add_route(r));
  }
  // Start each flow at its time, in time order (the driver advances between).
  std::vector<std::size_t> order(flows.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return flows[a].start < flows[b].start; });
  for (std::size_t i : order) {
    while (d.net.next_event() <= flows[i].start) {
      d.net_now = d.net.next_event();
      d.net.advance(d.net_now);
    }
    d.net_now = flows[i].start;
    d.net.advance(flows[i].start);
    d.net.start(flows[i].start, routes[i], flows[i].bytes, i);
  }
  d.run();
  ASSERT_EQ(d.ended.size(), flows.size());
  for (std::size_t i = 0; i < flows.size(); ++i) {
    EXPECT_NEAR(d.ended[i], expected[i], 1e-6 * expected[i]) << "flow " << i;
  }
  EXPECT_GT(d.net.solves(), flows.size());
  EXPECT_LT(d.net.deviation_bytes(), 1e-6 * d.net.bulk_bytes());
}

TEST(FluidNet, LetChangesAccumulateNoLinkCarriesMoreThanItsCapacityAndEveryByteArrives) {
  Rng rng(5);
  FluidNet::Config config;
  config.resolve_share = 0.25;
  Driver d(config);
  const std::vector<double> capacity = {10e9, 10e9, 10e9, 25e9, 25e9};
  for (double c : capacity) d.net.add_link(c);
  std::vector<std::uint32_t> routes;
  for (std::uint32_t a = 0; a < 3; ++a) {
    for (std::uint32_t b = 3; b < 5; ++b) {
      FluidNet::Route r;
      r.links = {a, b};
      r.latency_s = 1e-6;
      r.penalty = 1e-6;
      routes.push_back(d.net.add_route(r));
    }
  }
  double bytes = 0;
  for (std::uint64_t i = 0; i < 400; ++i) {
    const double b = 1e6 + rng.uniform01() * 4e6;
    bytes += b;
    d.net.start(0, routes[rng.uniform(routes.size())], b, i);
  }
  bool over = false;
  d.run([&] {
    for (std::uint32_t l = 0; l < capacity.size(); ++l) over = over || d.net.allocated(l) > capacity[l] * (1 + 1e-9);
  });
  EXPECT_FALSE(over) << "a link carried more than its capacity between solves";
  ASSERT_EQ(d.ended.size(), 400u);
  const double last = d.last_end();
  // Never faster than the three 10 GB/s links allow.
  EXPECT_GE(last, bytes / 30e9);
  EXPECT_LT(d.net.solves(), 400u) << "changes were let accumulate";
}

// Messages beside bulk flows take their share without taking it from them,
// so a link full of bulk flows carries the messages on top: where messages
// carry a real share of the bytes, the flows end before the link could
// carry them. The distortion measure counts what ran ahead, so auto mode
// runs such a point per chunk. Here 4,096 transfers of 1-64 KiB over one
// link end 5.5% before the link allows. Before, the measure saw 1.9% of the
// bytes stray, net -1.9% (slower, the wrong sign, and within auto mode's 2%:
// fluid was kept); now 8.5%, net +4.7%.
TEST(FluidNet, MessagesThatRunAheadOfAFullLinkCountAsDistortion) {
  Rng rng(11);
  Driver d;
  const double capacity = 1e9;
  const std::uint32_t route = d.route_over_new_link(capacity);
  double bytes = 0;
  for (std::uint64_t i = 0; i < 4096; ++i) {
    const double b = std::floor(1024 + rng.uniform01() * 63 * 1024);
    bytes += b;
    d.net.start(0, route, b, i);
  }
  d.run();
  ASSERT_EQ(d.ended.size(), 4096u);
  EXPECT_GT(d.net.small_bytes(), 0.0);
  const double last = d.last_end();
  // What ended early is within what the measure counts, and the net share
  // (what auto mode compares with its limit) is over that limit.
  EXPECT_GE(last + d.net.deviation_bytes() / capacity, bytes / capacity);
  const double measured = d.net.bulk_bytes() - d.net.exact_bytes();  // as sim_point_run.cpp's share
  EXPECT_GT(std::abs(d.net.net_deviation_bytes()) / measured, 0.02);
}

// A flow that starts and ends between two solves of its large component
// never had its rate set by a solve: its bytes are counted apart
// (unsolved_bytes), since deviation_bytes cannot see how far it strayed.
TEST(FluidNet, FlowsThatNoSolveSawAreCountedApart) {
  FluidNet::Config config;
  config.resolve_share = 0.5;  // a solve after half the flows in flight changed
  Driver d(config);
  const std::uint32_t link = d.net.add_link(100e9);
  FluidNet::Route bounded;  // the long flows: each bound to 0.5 GB/s, half the link in all
  bounded.links = {link};
  bounded.bound = 0.5e9;
  const std::uint32_t long_route = d.net.add_route(bounded);
  FluidNet::Route open;
  open.links = {link};
  const std::uint32_t short_route = d.net.add_route(open);
  // 100 long flows make the component large (over 64: changes accumulate).
  for (std::uint64_t i = 0; i < 100; ++i) d.net.start(0, long_route, 1e9, i);
  EXPECT_EQ(d.net.unsolved_bytes(), 0.0);
  // A short flow takes what the link has left (50 GB/s, above its fair
  // share: not starved) and ends long before 50 changes call a solve.
  d.net.start(0, short_route, 1e3, 1000);
  d.run();
  ASSERT_EQ(d.ended.size(), 101u);
  EXPECT_GE(d.net.unsolved_bytes(), 1e3);
  EXPECT_LE(d.net.unsolved_bytes(), d.net.bulk_bytes());
}

TEST(FluidNet, TheSameFlowsGiveTheSameEnds) {
  auto once = [] {
    Rng rng(3);
    FluidNet::Config config;
    config.resolve_share = 0.1;
    Driver d(config);
    for (int l = 0; l < 4; ++l) d.net.add_link(5e9);
    std::vector<std::uint32_t> routes;
    for (std::uint32_t a = 0; a < 2; ++a) {
      for (std::uint32_t b = 2; b < 4; ++b) {
        FluidNet::Route r;
        r.links = {a, b};
        routes.push_back(d.net.add_route(r));
      }
    }
    for (std::uint64_t i = 0; i < 200; ++i) d.net.start(0, routes[i % routes.size()], 1e5 + rng.uniform01() * 1e6, i);
    d.run();
    return d.ended;
  };
  EXPECT_EQ(once(), once());
}

}  // namespace
}  // namespace sluice::testing
