#include "scenarios/netns/emulated_point_run.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <cmath>
#include <exception>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "base/run_marker.hpp"
#include "core/workloads/phase_summary.hpp"
#include "core/faults/fault_control.hpp"
#include "core/faults/fault_driver.hpp"
#include "scenarios/netns/cluster_emulator.hpp"
#include "scenarios/netns/link_faults.hpp"
#include "scenarios/netns/netns_cluster.hpp"
#include "scenarios/netns/netns_ranks.hpp"
#include "scenarios/deploy/deploy.hpp"

namespace sluice::emulate {
namespace {

Status bad(const std::string& what) { return error(StatusCode::invalid_argument, "emulate: " + what); }

// The one rate and latency of the cluster's network links.
Result<LinkSpec> network_link(const topo::Topology& t) {
  bool found = false;
  double rate_bytes_per_s = 0;
  TimeNs latency_ns = 0;
  for (topo::EdgeId e = 0; e < t.link_count(); ++e) {
    const topo::LinkSpec& s = t.link(e).spec;
    if (s.link_class != topo::LinkClass::network) continue;
    if (s.bandwidth_ab_bytes_per_s != s.bandwidth_ba_bytes_per_s) {
      return bad("a network link has different rates in its two directions; only symmetric links are emulated");
    }
    if (!found) {
      rate_bytes_per_s = s.bandwidth_ab_bytes_per_s;
      latency_ns = s.latency_ns;
      found = true;
    } else if (s.bandwidth_ab_bytes_per_s != rate_bytes_per_s || s.latency_ns != latency_ns) {
      return bad("the cluster's network links differ in rate or latency; every node gets one link of one kind here");
    }
  }
  if (!found) return bad("the cluster has no network link to emulate");
  LinkSpec link;
  link.rate_bits_per_s = static_cast<std::uint64_t>(std::llround(rate_bytes_per_s * 8));
  link.latency_ns = latency_ns >= k_min_emulated_latency_ns ? static_cast<std::uint64_t>(latency_ns) : 0;
  return link;
}

// The fault plan's partitions and message loss, which the launcher makes
// in the namespaces' kernels (LinkFaults: nftables drops, for every packet
// that crosses a link); kills stay the ranks'. Nodes are the plan's: node i
// of the cluster is namespace i (cluster_of keeps every node, in id order).
class LinkFaultControl final : public faults::FaultControl {
 public:
  LinkFaultControl(const scenario::ScenarioSpec& spec, LinkFaults& links) : spec_(spec), links_(links) {}

  Result<NodeId> node_of(const faults::FaultSubject& s) const override {
    const auto& fs = spec_.fs;
    const auto in = [](std::uint32_t i, std::size_t n) { return i < n; };
    if (s.kind == faults::SubjectKind::node && in(s.index, spec_.cluster->node_count())) return NodeId{s.index};
    if (s.kind == faults::SubjectKind::service) {
      switch (s.role) {
        case faults::Role::mgmt: return fs.mgmt_node;
        case faults::Role::storage:
        case faults::Role::meta:
          if (auto server = SpecDeployment::server_of(fs, s.role, s.index)) return server->first;
          break;
        case faults::Role::client: {
          const auto& nodes = spec_.workloads.front().clients.nodes;
          const std::uint32_t per = std::max<std::uint32_t>(1, spec_.workloads.front().clients.ranks_per_node);
          if (in(s.index / per, nodes.size())) return nodes[s.index / per];
          break;
        }
      }
    }
    return error(StatusCode::not_found, "emulate: no " + s.to_string() + " in the cluster");
  }
  Status kill(const faults::FaultSubject& s) override { return refused("kill " + s.to_string()); }
  Status revive(const faults::FaultSubject& s) override { return refused("revive " + s.to_string()); }
  Status set_disk_slowdown(const faults::FaultSubject& s, double) override {
    return refused("slow disk " + s.to_string());
  }
  Status set_partitions(const std::vector<std::vector<NodeId>>& partitions) override {
    std::vector<std::vector<std::uint32_t>> sets;
    for (const auto& p : partitions) sets.emplace_back(p.begin(), p.end());
    return links_.set_partitions(sets);
  }
  Status set_message_faults(double loss, TimeNs extra_delay_ns) override {
    if (Status st = links_.set_delay(static_cast<std::uint64_t>(extra_delay_ns)); !st.ok()) return st;
    return links_.set_loss(loss);
  }

 private:
  static Status refused(const std::string& what) {
    return error(StatusCode::internal, "emulate: the launcher's link faults got \"" + what + "\" (the ranks' own)");
  }
  const scenario::ScenarioSpec& spec_;
  LinkFaults& links_;
};

bool is_link_fault(const faults::Fault& f) {
  return f.kind == faults::FaultKind::partition || f.kind == faults::FaultKind::message_loss;
}

// The point's partitions and loss, applied from servers-up at their times
// (run_netns_ranks' on_servers_up / on_tick), healed at the end; what was
// applied and dropped goes into the result's counters.
class LinkFaultTimeline {
 public:
  LinkFaultTimeline(const scenario::ScenarioSpec& spec, const EmulationPlan& net)
      : links_(net), control_(spec, links_) {
    faults::FaultPlan plan;
    for (const faults::Fault& f : spec.faults.faults) {
      if (is_link_fault(f)) plan.faults.push_back(f);
    }
    if (plan.faults.empty()) return;
    Result<faults::FaultDriver> driver = faults::FaultDriver::create(std::move(plan));
    if (!driver.ok()) {
      error_ = "fault plan: " + driver.status().message();
      return;
    }
    driver_.emplace(std::move(driver).value());
    if (Status st = links_.install(); !st.ok()) error_ = "link faults: " + st.message();
  }
  bool active() const { return driver_.has_value() && error_.empty(); }
  const std::string& error() const { return error_; }

  void servers_up() { up_ = std::chrono::steady_clock::now(); }
  void tick() {
    if (!active() || !up_) return;
    const TimeNs now =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - *up_).count();
    driver_->apply_due(now, control_).ignore();  // every error is kept in the driver's errors()
  }
  // Heals what is still active; the counters of what happened.
  void finish(scenario::RunResult& r) {
    if (!driver_) return;
    driver_->heal_all(control_, /*keep_dead=*/true).ignore();
    r.counters["faults.link_changes_applied"] = static_cast<double>(driver_->changes_applied());
    if (Result<LinkDropCounts> drops = links_.drops(); drops.ok()) {
      r.counters["faults.link_partition_packets"] = static_cast<double>(drops->partition_packets);
      r.counters["faults.link_loss_packets"] = static_cast<double>(drops->loss_packets);
    }
    if (!driver_->errors().empty() && r.ok) {
      r.ok = false;
      r.error = "emulate: link fault: " + driver_->errors().front();
    }
  }

 private:
  LinkFaults links_;
  LinkFaultControl control_;
  std::optional<faults::FaultDriver> driver_;
  std::optional<std::chrono::steady_clock::time_point> up_;
  std::string error_;
};

// The launcher's options for the point's ranks: one per namespace of `net`, their data under `dir`.
NetnsRanksOptions netns_ranks_options(const EmulationPlan& net, const std::string& dir,
                                      const EmulatedPointOptions& options) {
  NetnsRanksOptions ro;
  for (const EmulatedNode& n : net.nodes) {
    ro.netns.push_back(n.netns);
    ro.addresses.push_back(n.address);
  }
  ro.point.storage_root = dir;
  ro.point.deployment = options.deployment;
  ro.point.max_wait_s = options.max_wait_s;
  ro.point.launcher = "netns";
  ro.point.backend = scenario::Backend::emulate;
  ro.point.node_command = options.node_command;
  ro.point.log = options.log;
  ro.deadline_s = 2 * options.max_wait_s + 60;
  ro.stop_fd = options.stop_fd;
  return ro;
}

}  // namespace

Result<EmulatedPointSetup> EmulatedPointRun::plan(const scenario::ScenarioSpec& spec) {
  Result<ClusterConfig> c = SpecDeployment::cluster_of(spec);
  if (!c.ok()) return c.status();
  Result<LinkSpec> link = network_link(*spec.cluster);
  if (!link.ok()) return link.status();
  return EmulatedPointSetup{std::move(c).value(), *link};
}

scenario::RunResult EmulatedPointRun::run(const scenario::ScenarioSpec& spec, const EmulatedPointOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  // Partitions and loss are the launcher's (LinkFaultTimeline); the ranks run the rest of the plan.
  scenario::ScenarioSpec ranks_spec = spec;
  ranks_spec.faults.faults.clear();
  for (const faults::Fault& f : spec.faults.faults) {
    if (!is_link_fault(f)) ranks_spec.faults.faults.push_back(f);
  }
  Result<EmulatedPointSetup> setup = plan(ranks_spec);
  if (!setup.ok()) return SpecDeployment::failed(spec, setup.status().message());
  if (std::string why = netns_permitted(); !why.empty())
    return SpecDeployment::failed(spec, "emulate: cannot emulate here: " + why);
  PlanOptions po;
  po.nodes = static_cast<std::uint32_t>(setup->cluster.nodes.size());
  po.link = setup->link;
  po.subnet = options.subnet;
  po.mtu_bytes = options.mtu_bytes;
  po.launcher_pid = ::getpid();
  po.tag = default_run_tag();
  Result<EmulationPlan> planned = plan_emulation(po);
  if (!planned.ok()) return SpecDeployment::failed(spec, "emulate: " + planned.status().message());
  const EmulationPlan& net = *planned;
  // The run's directory (the ranks' chunk files and metadata stores), marked
  // as this process's so that the next command sweeps it if this process dies.
  const std::string root = options.storage_root.empty() ? std::string("/tmp") : options.storage_root;
  const std::string dir = options.work_dir.empty() ? root + "/" + net.prefix : options.work_dir;
  if (Status st = make_marked_work_dir(dir); !st.ok()) return SpecDeployment::failed(spec, st.message());
  // Removed at the end, or marked kept (--keep): no later sweep removes it then.
  const base::RunDir run_dir(options.work_dir.empty() ? dir : std::string(), options.deployment.keep);
  if (options.log)
    options.log("emulate " + net.prefix + ": " + std::to_string(net.nodes.size()) + " nodes, link " +
                net.link.to_string() + ", work dir " + dir);
  Result<std::unique_ptr<NetnsCluster>> network = NetnsCluster::create(net, options.stop_fd);
  if (!network.ok()) return SpecDeployment::failed(spec, "emulate: " + network.status().message());

  NetnsRanksOptions ro = netns_ranks_options(net, dir, options);
  LinkFaultTimeline links(spec, net);
  if (!links.error().empty()) return SpecDeployment::failed(spec, "emulate: " + links.error());
  if (links.active()) {
    ro.on_servers_up = [&links] { links.servers_up(); };
    ro.on_tick = [&links] { links.tick(); };
    ro.tick_ms = k_link_fault_tick_ms;
  }
  scenario::RunResult r = run_netns_ranks(ranks_spec, ro);
  r.spec = spec;  // with its whole fault plan
  links.finish(r);
  // What the links were shaped to, beside what the nodes measured.
  r.counters["emulate.link_bits_per_s"] = static_cast<double>(net.link.rate_bits_per_s);
  r.counters["emulate.link_latency_ns"] = static_cast<double>(net.link.latency_ns);
  r.deployment["link"] = net.link.to_string();
  r.deployment["mtu_bytes"] = std::to_string(net.mtu_bytes);
  const std::vector<std::string> left = (*network)->remove();
  if (!left.empty() && r.ok) {
    r.ok = false;
    r.error = "emulate: namespaces left behind: " + left.front();
  }
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace sluice::emulate
