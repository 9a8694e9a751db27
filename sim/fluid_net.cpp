#include "sim/fluid_net.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "core/common/assert.hpp"

namespace sluice::sim {

namespace {

constexpr double k_inf = std::numeric_limits<double>::infinity();

// Times within this many seconds are one instant (SimGrid's timing precision
// is 1e-9 s relative; ours is absolute, far below a nanosecond).
constexpr double k_time_epsilon_s = 1e-12;

// How many times route `links` crosses `link`.
double crossings(const std::vector<std::uint32_t>& links, std::uint32_t link) {
  return static_cast<double>(std::count(links.begin(), links.end(), link));
}

}  // namespace

FluidNet::FluidNet(Config config, OnDone on_done) : config_(config), on_done_(std::move(on_done)) {
  SLUICE_ASSERT(config_.resolve_share >= 0);
}

std::uint32_t FluidNet::add_link(double capacity_bytes_per_s) {
  SLUICE_ASSERT_MSG(capacity_bytes_per_s > 0, "a fluid link has a capacity");
  links_.push_back(Link{});
  links_.back().capacity = capacity_bytes_per_s;
  return static_cast<std::uint32_t>(links_.size() - 1);
}

std::uint32_t FluidNet::add_route(Route route) {
  SLUICE_ASSERT(route.penalty > 0 && route.factor > 0 && route.bound > 0 && route.latency_s >= 0);
  double link_limit = k_inf;
  for (std::uint32_t l : route.links) {
    SLUICE_ASSERT_MSG(l < links_.size(), "a route crosses known links");
    link_limit = std::min(link_limit, links_[l].capacity / crossings(route.links, l));
  }
  route.bound_binds = route.bound < link_limit;
  routes_.push_back(std::move(route));
  return static_cast<std::uint32_t>(routes_.size() - 1);
}

void FluidNet::start(double now, std::uint32_t route, double bytes, std::uint64_t token) {
  SLUICE_ASSERT(route < routes_.size());
  SLUICE_ASSERT_MSG(now + k_time_epsilon_s >= now_, "a flow starts no earlier than the clock");
  now_ = std::max(now_, now);
  std::uint32_t id = 0;
  if (!free_flows_.empty()) {
    id = free_flows_.back();
    free_flows_.pop_back();
  } else {
    id = static_cast<std::uint32_t>(flows_.size());
    flows_.emplace_back();
    active_pos_.push_back(0);
  }
  Flow& f = flows_[id];
  const std::uint32_t version = f.version + 1;
  f = Flow{};
  f.version = version;
  f.route = route;
  f.weight = 1.0 / routes_[route].penalty;
  f.token = token;
  f.seq = next_seq_++;
  f.remaining = std::max(bytes, 0.0);
  f.bytes = f.remaining;
  f.updated = now_;
  f.small = bytes <= config_.small_flow_bytes && routes_[route].small_ok;
  ++in_flight_;
  ++flows_started_;
  const double latency = routes_[route].latency_s;
  if (latency > 0) {
    events_.push(Event{now_ + latency, f.seq, id, f.version, true});
    return;
  }
  activate(id);
  maybe_solve();
}

double FluidNet::next_event() const {
  double next = events_.empty() ? k_inf : events_.top().time;
  if (solve_deadline_ < next) next = solve_deadline_;
  return next;
}

void FluidNet::advance(double now) {
  now_ = std::max(now_, now);
  while (!events_.empty() && events_.top().time <= now_ + k_time_epsilon_s) {
    const Event e = events_.top();
    events_.pop();
    Flow& f = flows_[e.flow];
    if (f.version != e.version) continue;  // stale: the flow ended or its end moved
    if (e.activation) {
      activate(e.flow);
    } else {
      end(e.flow);
    }
  }
  if (solve_deadline_ <= now_ + k_time_epsilon_s) {
    ++deadline_solves_;
    solve();
    return;
  }
  maybe_solve();
}

double FluidNet::small_rate(const Flow& f) const {
  // Its weighted share beside the bulk flows on each link of its route: a
  // lower bound of its max-min rate.
  const Route& r = routes_[f.route];
  const double w = weight(f);
  double rate = r.bound;
  for (std::uint32_t l : r.links) {
    const Link& link = links_[l];
    rate = std::min(rate, link.capacity * w / (link.weights + w));
  }
  return rate;
}

double FluidNet::left_on(const Route& r, bool beside_messages) const {
  double rate = r.bound;
  for (std::uint32_t l : r.links) {
    const Link& link = links_[l];
    const double taken = link.allocated + (beside_messages ? link.small_rates : 0.0);
    rate = std::min(rate, std::max(link.capacity - taken, 0.0) / crossings(r.links, l));
  }
  return rate;
}

void FluidNet::activate(std::uint32_t id) {
  Flow& f = flows_[id];
  f.active = true;
  f.updated = now_;
  f.since = now_;
  const Route& r = routes_[f.route];
  if (r.links.empty()) {
    // No link: it ends once its latency has passed (SimGrid: infinite bandwidth).
    f.remaining = 0;
    schedule_end(id);
    return;
  }
  // A small flow shares beside the others where its route's component is
  // large; where it is small (a metadata phase) it is solved with them, as
  // per chunk.
  f.bulk = !(f.small && routes_[f.route].big && !collect_small(routes_[f.route]));
  (f.bulk ? bulk_bytes_ : small_bytes_) += f.remaining;
  if (!f.bulk) {
    f.rate = small_rate(f);
    // Its share is not taken from the bulk flows beside it: on a link they
    // fill, the part of its bytes its links had no room for runs ahead of
    // the link's capacity, and counts as distortion.
    const double left = std::min(f.rate, left_on(r, true));
    for (std::uint32_t l : r.links) {
      Link& link = links_[l];
      link.small_rates += f.rate;
      ++link.smalls;
    }
    if (left < f.rate) {
      const double ahead = f.remaining * (f.rate - left) / f.rate;
      deviation_bytes_ += ahead;
      net_deviation_bytes_ += ahead;
    }
    schedule_end(id);
    return;
  }
  const double fair = small_rate(f);  // before it joins the links' weights
  const double w = weight(f);
  f.slots.resize(r.links.size());
  for (std::size_t i = 0; i < r.links.size(); ++i) {
    Link& link = links_[r.links[i]];
    f.slots[i] = static_cast<std::uint32_t>(link.flows.size());
    link.flows.push_back(id);
    link.weights += w;
  }
  active_pos_[id] = static_cast<std::uint32_t>(active_bulk_.size());
  active_bulk_.push_back(id);
  set_rate(id, left_on(r));  // what its links have left, at most its bound
  changed(f.route);
  if (f.rate < fair * (1.0 - config_.resolve_share)) {
    // Starved below its fair share: solve before it has lost more than
    // resolve_share of the time it takes at that share.
    const double at_fair = f.remaining / (fair * r.factor);
    solve_deadline_ = std::min(solve_deadline_, now_ + config_.resolve_share * at_fair);
  }
}

void FluidNet::settle(Flow& f) {
  if (!f.active) return;
  const double dt = now_ - f.updated;
  if (dt > 0) {
    const double moved = std::min(f.remaining, f.rate * routes_[f.route].factor * dt);
    f.remaining -= moved;
    f.moved_since_solve += moved;
  }
  f.updated = now_;
}

void FluidNet::set_rate(std::uint32_t id, double rate) {
  Flow& f = flows_[id];
  const Route& r = routes_[f.route];
  const double delta = rate - f.rate;
  if (delta != 0) {
    for (std::uint32_t l : r.links) links_[l].allocated += delta;
  }
  f.rate = rate;
  schedule_end(id);
}

void FluidNet::schedule_end(std::uint32_t id) {
  Flow& f = flows_[id];
  ++f.version;
  const double progress = f.rate * routes_[f.route].factor;
  double at = k_inf;
  if (f.remaining <= 0) {
    at = now_;
  } else if (progress > 0) {
    at = now_ + f.remaining / progress;
  }
  if (at < k_inf) events_.push(Event{at, f.seq, id, f.version, false});
  // Stale entries are skipped when they surface; rebuild when they dominate.
  if (events_.size() > 64 && events_.size() > 4 * in_flight_) {
    std::vector<Event> live;
    live.reserve(in_flight_);
    while (!events_.empty()) {
      const Event& e = events_.top();
      if (flows_[e.flow].version == e.version && (e.activation || flows_[e.flow].active)) live.push_back(e);
      events_.pop();
    }
    for (const Event& e : live) events_.push(e);
  }
}

void FluidNet::release(std::uint32_t id) {
  Flow& f = flows_[id];
  const Route& r = routes_[f.route];
  const double w = weight(f);
  for (std::size_t i = 0; i < r.links.size(); ++i) {
    Link& link = links_[r.links[i]];
    link.allocated -= f.rate;
    link.weights -= w;
    // Swap-remove its entry; the moved flow's slot for this link follows.
    const std::uint32_t slot = f.slots[i];
    const std::uint32_t last = link.flows.back();
    link.flows[slot] = last;
    link.flows.pop_back();
    if (last != id) {
      Flow& moved = flows_[last];
      const Route& mr = routes_[moved.route];
      for (std::size_t j = 0; j < mr.links.size(); ++j) {
        if (mr.links[j] == r.links[i] && moved.slots[j] == link.flows.size()) {
          moved.slots[j] = slot;
          break;
        }
      }
    }
    if (link.flows.empty()) {
      link.allocated = 0;  // no drift once idle
      link.weights = 0;
    }
  }
  const std::uint32_t pos = active_pos_[id];
  const std::uint32_t back = active_bulk_.back();
  active_bulk_[pos] = back;
  active_pos_[back] = pos;
  active_bulk_.pop_back();
}

void FluidNet::end(std::uint32_t id) {
  Flow& f = flows_[id];
  settle(f);
  if (f.bulk) {
    if (!f.solved) unsolved_bytes_ += f.bytes;
    release(id);
    changed(f.route);
  } else {
    for (std::uint32_t l : routes_[f.route].links) {
      Link& link = links_[l];
      link.small_rates = --link.smalls == 0 ? 0.0 : link.small_rates - f.rate;  // no drift once none is left
    }
  }
  const std::uint64_t token = f.token;
  ++f.version;
  f.active = false;
  f.slots.clear();
  free_flows_.push_back(id);
  --in_flight_;
  on_done_(token);
}

bool FluidNet::collect_small(Route& r) {
  if (r.big) {
    // Marked large: collected again only where its links hold few flows
    // now (the data phase that made it large may have drained).
    std::size_t near = 0;
    for (std::uint32_t l : r.links) near += links_[l].flows.size();
    if (near > k_fluid_exact_component_flows) return false;
  }
  r.big = !collect(r.links, k_fluid_exact_component_flows);
  return !r.big;
}

void FluidNet::changed(std::uint32_t route_id) {
  Route& r = routes_[route_id];
  for (std::uint32_t l : r.links) {
    Link& link = links_[l];
    if (!link.pending) {
      link.pending = true;
      pending_links_.push_back(l);
    }
  }
  if (collect_small(r)) {
    // A small component (a drive and its requests): solved now, exactly.
    solve_collected(false);
    return;
  }
  // A large one: its changes wait for the next solve.
  if (changes_ == 0) first_change_ = now_;
  ++changes_;
}

void FluidNet::maybe_solve() {
  if (changes_ == 0) return;
  const double due = std::max(1.0, config_.resolve_share * static_cast<double>(active_bulk_.size()));
  if (static_cast<double>(changes_) >= due) solve();
}

void FluidNet::solve() {
  ++big_solves_;
  changes_ = 0;
  solve_deadline_ = k_inf;
  std::vector<std::uint32_t> seeds;
  seeds.swap(pending_links_);
  collect(seeds, std::numeric_limits<std::size_t>::max());
  if (comp_flows_.size() <= k_fluid_exact_component_flows) {
    // The component shrank (a quiet fabric): its routes' changes are solved
    // at once again.
    for (std::uint32_t id : comp_flows_) routes_[flows_[id].route].big = false;
  }
  solve_collected(true);
  for (std::uint32_t l : seeds) links_[l].pending = false;  // also those left without flows
}

bool FluidNet::collect(const std::vector<std::uint32_t>& seeds, std::size_t max_flows) {
  // Breadth first over links and the active bulk flows on them.
  ++visit_;
  comp_links_.clear();
  comp_flows_.clear();
  for (std::uint32_t l : seeds) {
    if (links_[l].visit != visit_) {
      links_[l].visit = visit_;
      comp_links_.push_back(l);
    }
  }
  for (std::size_t i = 0; i < comp_links_.size(); ++i) {
    for (std::uint32_t id : links_[comp_links_[i]].flows) {
      Flow& f = flows_[id];
      if (f.visit == visit_) continue;
      f.visit = visit_;
      comp_flows_.push_back(id);
      if (comp_flows_.size() > max_flows) return false;
      for (std::uint32_t l : routes_[f.route].links) {
        if (links_[l].visit != visit_) {
          links_[l].visit = visit_;
          comp_links_.push_back(l);
        }
      }
    }
  }
  return true;
}

void FluidNet::solve_collected(bool measure) {
  ++solves_;
  for (std::uint32_t l : comp_links_) {
    Link& link = links_[l];
    link.pending = false;
    link.remaining = link.capacity;
    link.open_weight = 0;
    link.open_count = 0;
  }
  if (comp_flows_.empty()) {
    for (std::uint32_t l : comp_links_) links_[l].allocated = 0;
    return;
  }
  for (std::uint32_t id : comp_flows_) {
    Flow& f = flows_[id];
    settle(f);
    f.frozen = false;
    for (std::uint32_t l : routes_[f.route].links) {
      links_[l].open_weight += weight(f);
      ++links_[l].open_count;
    }
  }
  fill_collected();
  apply_collected(measure);
}

void FluidNet::fill_collected() {
  // Weighted max-min with bounds (progressive filling): the fair level of a
  // link is its capacity left over the weights of its flows not yet fixed;
  // the flows of the link with the lowest level (or a flow whose bound is
  // lower still) are fixed at level x weight, and the links they cross give
  // up that rate. Ties go to the lower link / flow index.
  link_levels_.reset(links_.size());
  for (std::uint32_t l : comp_links_) {
    const Link& link = links_[l];
    if (link.open_count > 0) link_levels_.set(l, link.remaining / link.open_weight);
  }
  // Bounds that can bind before a link saturates (rare: a TCP window over a
  // long route); the others never do.
  std::vector<std::pair<double, std::uint32_t>> bound_levels;
  for (std::uint32_t id : comp_flows_) {
    const Flow& f = flows_[id];
    const Route& r = routes_[f.route];
    if (r.bound_binds) bound_levels.push_back({r.bound / weight(f), id});
  }
  std::sort(bound_levels.begin(), bound_levels.end());
  std::size_t next_bound = 0;
  if (rates_.size() < flows_.size()) rates_.resize(flows_.size());
  open_flows_ = comp_flows_.size();
  while (open_flows_ > 0) {
    while (next_bound < bound_levels.size() && flows_[bound_levels[next_bound].second].frozen) ++next_bound;
    // The lowest link level.
    double link_level = k_inf;
    std::uint32_t link_id = 0;
    if (!link_levels_.empty()) std::tie(link_level, link_id) = link_levels_.top();
    if (next_bound < bound_levels.size() && bound_levels[next_bound].first <= link_level) {
      const std::uint32_t id = bound_levels[next_bound].second;
      fix(id, routes_[flows_[id].route].bound);
      requeue();
      continue;
    }
    SLUICE_ASSERT_MSG(link_level < k_inf, "every open flow crosses a link with open weight");
    link_levels_.pop();
    // Fix every open flow of that link at the level.
    const Link& bottleneck = links_[link_id];
    for (std::size_t i = 0; i < bottleneck.flows.size(); ++i) {
      const std::uint32_t id = bottleneck.flows[i];
      if (!flows_[id].frozen) fix(id, link_level * weight(flows_[id]));
    }
    requeue();
  }
}

void FluidNet::fix(std::uint32_t id, double rate) {
  Flow& f = flows_[id];
  f.frozen = true;
  rates_[id] = rate;
  --open_flows_;
  for (std::uint32_t l : routes_[f.route].links) {
    Link& link = links_[l];
    link.remaining = std::max(link.remaining - rate, 0.0);
    link.open_weight -= weight(f);
    --link.open_count;
    if (!link.dirty) {
      link.dirty = true;
      dirty_.push_back(l);
    }
  }
}

void FluidNet::requeue() {
  for (std::uint32_t l : dirty_) {
    Link& link = links_[l];
    link.dirty = false;
    if (link.open_count == 0) {
      link.open_weight = 0;
      link_levels_.erase(l);
      continue;
    }
    if (link.open_weight <= 0) {
      // Rounding ate the weights left: sum those of its open flows again.
      link.open_weight = 0;
      for (std::uint32_t id : link.flows) {
        if (!flows_[id].frozen) link.open_weight += weight(flows_[id]);
      }
    }
    link_levels_.set(l, link.remaining / link.open_weight);
  }
  dirty_.clear();
}

void FluidNet::apply_collected(bool measure) {
  // The new rates: measure how far the old ones strayed since the flow's last
  // solve (a solve of changes let accumulate; a component solved at each of
  // its changes had exact rates all along), then apply those that moved.
  for (std::uint32_t l : comp_links_) links_[l].allocated = 0;
  for (std::uint32_t id : comp_flows_) {
    Flow& f = flows_[id];
    const double rate = rates_[id];
    if (measure) {
      // Since the first change this solve answers (or the flow's start, if
      // later) the flow ran at its old rate where the solved one was due.
      const double stale_s = std::max(now_ - std::max(first_change_, f.since), 0.0);
      const double strayed = (f.rate - rate) * routes_[f.route].factor * stale_s;
      deviation_bytes_ += std::abs(strayed);
      net_deviation_bytes_ += strayed;
    } else {
      bulk_exact_bytes_ += f.moved_since_solve;
    }
    f.moved_since_solve = 0;
    f.since = now_;
    f.solved = true;
    for (std::uint32_t l : routes_[f.route].links) links_[l].allocated += rate;
    if (rate != f.rate) {
      f.rate = rate;
      schedule_end(id);
    }
  }
}

}  // namespace sluice::sim
