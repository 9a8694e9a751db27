// FluidNet: the network's flows in closed form (issue 50, sim_mode fluid).
//
// Per chunk, every communication is a SimGrid activity, and each one that
// starts or ends makes SimGrid solve the max-min sharing of the whole
// connected set of flows again: in a storage system where every client reads
// from every server that set is every flow in flight, so a terabyte read
// costs one such solve per chunk event (perf on 18 servers + 50 clients:
// lmm::MaxMin::do_solve and update_modified_cnst_set_rec, 49% of the run).
// FluidNet carries the same flows with the same sharing model, solved less
// often:
// - The model is SimGrid's CM02 as SimPlatform configures it (cross-traffic
//   off): a flow crosses the links of its route with consumption weight 1
//   each (a link crossed twice, twice); it first waits its route's latency
//   (times the latency factor), then shares: the max-min fair allocation in
//   which a flow's rate times its penalty (its route's latency, or 1 for a
//   route without latency) is equal at every saturated link, each flow also
//   bounded by its route's slowest link and by tcp_gamma / (2 x latency); its
//   bytes advance at its rate times its route's bandwidth factor.
// - Between two solves every flow keeps its rate, so bytes advance in closed
//   form and a flow's end is known in advance. Each start or end is solved
//   where its component is: the flows reached from its links over shared
//   links. A component of at most k_fluid_exact_component_flows flows (a
//   drive and its requests) is solved at once, exactly. A larger one (the
//   fabric of a storage system in which every client reads from every
//   server) lets changes accumulate: a flow that ends gives its rate back to
//   its links; a flow that starts takes what its links have left (at most its
//   bound), so no link ever carries more than its capacity, between solves
//   as in them; the component is solved again once the changes reach
//   `resolve_share` of the bulk flows in flight (at least one: with a few
//   flows, every change is solved), or before a flow that started below its
//   fair share has lost resolve_share of its time at that share.
//   resolve_share 0 solves at every change: per chunk's answer.
// - Small flows (at most small_flow_bytes: the messages) whose route's
//   component is large do not enter the allocation: each takes, on every
//   link of its route, its weighted share beside the bulk flows there
//   (capacity x weight / (weights there + its own)), without taking it from
//   them. Their bytes are counted (small_bytes()) so that the share of bytes
//   carried this way is known, and where their links have less room left
//   than that share (beside the bulk flows and the other messages), the
//   part of their bytes beyond that room counts in deviation_bytes(): it
//   ran ahead of the links' capacity. Where the component is small (a
//   metadata phase), they are solved with the others, as per chunk.
// - The distortion is measured, not assumed: at each solve of accumulated
//   changes, each flow's old rate is compared with the solved one over the
//   time since the first change it answers (deviation_bytes()); the runner
//   falls back to per chunk when those bytes pass its limit.
// Deterministic: flows, links and routes are indexed in the order they came,
// and simultaneous ends are taken in the order the flows started.
//
// FluidNet knows no SimGrid: the caller registers links (capacity) and routes
// (links, latency, factor, bound), starts flows at a time, asks for the next
// event's time and advances the clock to it (SimRuntime does so from a
// SimGrid kernel timer; tests from a loop).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <utility>
#include <vector>

#include "sim/indexed_heap.hpp"

namespace sluice::sim {

// The default share of the flows in flight whose starts and ends are let
// accumulate before the allocation is solved again (FluidNet::Config). 0.02:
// measured on the coalescing test's cases and issue 50's 18 + 50 read
// (docs/sim.md, "Fluid mode"): per-flow rates stray by less than 1% of the
// bytes, and a solve costs O(flows x route length).
inline constexpr double k_fluid_resolve_share = 0.02;
// Flows of at most this many bytes (messages) share without entering the
// allocation (FluidNet::Config::small_flow_bytes).
inline constexpr double k_fluid_small_flow_bytes = 16 * 1024;
// A change whose component (the flows reached over shared links) holds at
// most this many flows is solved at once, exactly: a drive and its requests.
// Larger components (the fabric of a storage system in which every client
// reads from every server) count toward the next solve.
inline constexpr std::size_t k_fluid_exact_component_flows = 64;

class FluidNet {
 public:
  struct Config {
    double resolve_share = k_fluid_resolve_share;
    double small_flow_bytes = k_fluid_small_flow_bytes;
  };
  // A route: the links a flow crosses (a link may repeat), its latency before
  // the bytes move (s, factors applied), its sharing penalty (s; > 0), the
  // bound of its rate (bytes/s of link capacity; infinity: none) and the
  // factor between that rate and its bytes' progress.
  struct Route {
    std::vector<std::uint32_t> links;
    double latency_s = 0;
    double penalty = 1;
    double bound = std::numeric_limits<double>::infinity();
    double factor = 1;
    // Whether its flows of at most small_flow_bytes share without entering
    // the allocation (messages); false for a drive's, whose small requests
    // are what its bandwidth is shared among.
    bool small_ok = true;
    // Set by add_route: whether `bound` can bind before a link of the route
    // saturates (below every link's capacity over its crossings).
    bool bound_binds = false;
    // Set once a change on it found its component larger than
    // k_fluid_exact_component_flows: its changes then wait for the next solve
    // (while its component is large: collect_small).
    bool big = false;
  };
  // Called for each flow that ends, with the token it was started with.
  using OnDone = std::function<void(std::uint64_t token)>;

  FluidNet(Config config, OnDone on_done);

  std::uint32_t add_link(double capacity_bytes_per_s);
  std::uint32_t add_route(Route route);
  const Route& route(std::uint32_t id) const { return routes_[id]; }

  // A flow of `bytes` over route `route`, starting at `now` (>= the clock).
  void start(double now, std::uint32_t route, double bytes, std::uint64_t token);
  // When the next flow activates or ends (infinity: nothing in flight).
  double next_event() const;
  // Moves the clock to `now` (<= next_event() in normal use), ending and
  // activating what is due by then, and solves again when due.
  void advance(double now);

  // Results and cost drivers.
  std::uint64_t solves() const { return solves_; }
  // Of those, solves of accumulated changes (large components), and those a
  // starved flow's deadline called for.
  std::uint64_t big_solves() const { return big_solves_; }
  std::uint64_t deadline_solves() const { return deadline_solves_; }
  std::uint64_t flows_started() const { return flows_started_; }
  std::size_t flows_in_flight() const { return in_flight_; }
  double bulk_bytes() const { return bulk_bytes_; }
  double small_bytes() const { return small_bytes_; }
  double deviation_bytes() const { return deviation_bytes_; }
  // The same, signed (bytes moved ahead of the solved rates, less those
  // behind): what the strays add to or take from the throughput; flows that
  // strayed both ways (a fairness detail, which averages out over a rank's
  // many chunks) cancel here.
  double net_deviation_bytes() const { return net_deviation_bytes_; }
  // Bulk bytes moved by flows of components solved at each of their changes
  // (exact all along, so outside what deviation_bytes() measures).
  double exact_bytes() const { return bulk_exact_bytes_; }
  // Bulk bytes of flows that started and ended between two solves of their
  // large component: no solve ever set their rate (what they took, their
  // links had left), so deviation_bytes() cannot see how far they strayed.
  double unsolved_bytes() const { return unsolved_bytes_; }
  // A link's rate allocated to flows now (tests: never above its capacity).
  double allocated(std::uint32_t link) const { return links_[link].allocated; }
  double capacity(std::uint32_t link) const { return links_[link].capacity; }

 private:
  struct Link {
    double capacity = 0;
    double allocated = 0;              // sum of the bulk flows' rates x consumption
    double weights = 0;                // sum of the active bulk flows' weights (small flows' share)
    double small_rates = 0;            // the small flows' rates beside the allocation (measure only)
    std::uint32_t smalls = 0;          // active small flows' crossings
    std::vector<std::uint32_t> flows;  // active bulk flows (one entry per crossing)
    // solve() scratch
    double remaining = 0;
    double open_weight = 0;
    std::uint32_t open_count = 0;  // crossings of flows not yet fixed
    std::uint32_t visit = 0;       // collect() stamp
    bool dirty = false;            // solve_collected(): its level moved
    bool pending = false;          // in pending_links_
  };
  struct Flow {
    std::uint32_t route = 0;
    double weight = 1;  // 1 / its route's penalty
    std::uint64_t token = 0;
    std::uint64_t seq = 0;  // start order (ties)
    double remaining = 0;   // bytes at `updated`
    double updated = 0;     // time of `remaining`
    double rate = 0;        // link capacity used (bytes/s); progress = rate x factor
    double moved_since_solve = 0;
    double bytes = 0;                  // its size
    bool solved = false;               // a solve set its rate (or it was exact all along)
    double since = 0;                  // activation or last solve, whichever is later
    bool small = false;                // at most small_flow_bytes, on a route that allows it
    bool bulk = false;                 // in the allocation (set at activation)
    bool active = false;               // past its latency
    std::uint32_t version = 0;         // invalidates its older end events
    std::vector<std::uint32_t> slots;  // its index in each route link's `flows`
    bool frozen = false;               // solve_collected() scratch
    std::uint32_t visit = 0;           // collect() stamp
  };
  struct Event {
    double time = 0;
    std::uint64_t seq = 0;
    std::uint32_t flow = 0;
    std::uint32_t version = 0;
    bool activation = false;
    bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
  };

  static double weight(const Flow& f) { return f.weight; }
  void activate(std::uint32_t id);
  void end(std::uint32_t id);
  void settle(Flow& f);  // bytes moved up to now_
  void set_rate(std::uint32_t id, double rate);
  void schedule_end(std::uint32_t id);
  double small_rate(const Flow& f) const;
  // What a route's links have left for one more flow, at most its bound;
  // beside_messages: less what the messages on them take too.
  double left_on(const Route& r, bool beside_messages = false) const;
  void release(std::uint32_t id);
  // A bulk flow of `route` started or ended: its component is solved now
  // when small, else the change counts toward the next solve.
  void changed(std::uint32_t route);
  // Whether a route's component is small: then it is collected (into
  // comp_links_ and comp_flows_) and the route unmarked; else the route is
  // marked large and its changes wait for the next solve. A marked route is
  // collected again only where its links hold at most
  // k_fluid_exact_component_flows flows (a metadata phase after a data
  // phase drained).
  bool collect_small(Route& r);
  // Solves the components of every link changed since the last solve.
  void solve();
  void maybe_solve();
  // The component reached from `seeds` (links) into comp_links_ and
  // comp_flows_; false once it holds more than max_flows flows.
  bool collect(const std::vector<std::uint32_t>& seeds, std::size_t max_flows);
  // The max-min allocation of comp_flows_ over comp_links_, applied.
  // measure: count how far the flows' rates strayed (deviation_bytes).
  void solve_collected(bool measure);
  // Progressive filling of comp_flows_ into rates_.
  void fill_collected();
  // Fixes a flow's rate; its links lose that rate and its weight, and are
  // queued (dirty_) for a new level once the whole batch is fixed.
  void fix(std::uint32_t id, double rate);
  // The dirty links' new levels into link_levels_.
  void requeue();
  // rates_ onto comp_flows_ (and the stray measured when `measure`).
  void apply_collected(bool measure);

  Config config_;
  OnDone on_done_;
  std::vector<Link> links_;
  std::vector<Route> routes_;
  std::vector<Flow> flows_;
  std::vector<std::uint32_t> free_flows_;
  std::vector<std::uint32_t> active_bulk_;  // ids of active bulk flows (unordered)
  std::vector<std::uint32_t> active_pos_;   // by flow id: its index in active_bulk_
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  double now_ = 0;
  std::uint64_t next_seq_ = 0;
  std::uint64_t changes_ = 0;  // bulk activations and ends since the last solve
  double first_change_ = 0;    // when the first of them happened
  // A starved flow's latest solve (activate()); infinity: none due.
  double solve_deadline_ = std::numeric_limits<double>::infinity();
  std::uint32_t visit_ = 0;
  std::vector<std::uint32_t> pending_links_;  // links of changes not yet solved
  // solve scratch, kept between solves.
  std::vector<std::uint32_t> comp_links_;
  std::vector<std::uint32_t> comp_flows_;
  std::vector<std::uint32_t> dirty_;
  std::vector<double> rates_;
  // The open links' fair levels, lowest (then lowest link id) on top, one
  // entry per link, moved in place when its level moves.
  IndexedMinHeap<double> link_levels_;
  std::size_t open_flows_ = 0;
  std::size_t in_flight_ = 0;
  std::uint64_t solves_ = 0;
  std::uint64_t big_solves_ = 0;
  std::uint64_t deadline_solves_ = 0;
  std::uint64_t flows_started_ = 0;
  double bulk_bytes_ = 0;
  double small_bytes_ = 0;
  double deviation_bytes_ = 0;
  double net_deviation_bytes_ = 0;
  double bulk_exact_bytes_ = 0;  // moved by flows of components solved at each change
  double unsolved_bytes_ = 0;    // unsolved_bytes()
};

}  // namespace sluice::sim
