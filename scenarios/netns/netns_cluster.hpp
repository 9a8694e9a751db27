// NetnsCluster: the namespaces, veth pairs, bridge and shaping of one
// EmulationPlan (emulation_plan.hpp), made on creation and removed when the
// object goes, on every path out. `sluice emulate` puts node processes in
// them; the HwEnv soak over netns (tests/soak) puts the transports of one
// process's nodes in them (TransportConfig::netns), so that what crosses a
// link crosses a real veth and a real qdisc, and LinkFaults (link_faults.hpp)
// can cut and thin it.
//
// Needs root (netns_permitted() in cluster_emulator.hpp says whether).
// A process killed with SIGKILL leaves its namespaces behind; the next
// command sweeps those whose launcher is gone (dead_runs.hpp: the launcher
// pid is part of every name).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.hpp"
#include "scenarios/netns/emulation_plan.hpp"

namespace sluice::emulate {

inline constexpr std::uint32_t k_ip_command_timeout_ms = 10'000;

class NetnsCluster {
 public:
  // Runs the plan's set-up commands; on failure removes what was made and
  // says which command failed (a link latency on a kernel without sch_netem
  // is told apart). stop_fd >= 0: readable means interrupted (checked
  // between commands).
  static Result<std::unique_ptr<NetnsCluster>> create(const EmulationPlan& plan, int stop_fd = -1);
  ~NetnsCluster();
  NetnsCluster(const NetnsCluster&) = delete;
  NetnsCluster& operator=(const NetnsCluster&) = delete;

  const EmulationPlan& plan() const { return plan_; }
  // The namespace file of node i, for TransportConfig::netns.
  std::string netns_path(std::size_t node) const;
  // Every link (both sides of each node's veth) shaped to `rate_bits_per_s`
  // from now on (tbf replaced in place; connections stay up): a soak draws a
  // link rate per run. Latency, if the plan has one, stays. Names the
  // command that failed.
  Status set_link_rate(std::uint64_t rate_bits_per_s);
  // Removes everything (also done by the destructor); returns the names of
  // this plan's namespaces still there afterwards (empty when clean).
  std::vector<std::string> remove();

 private:
  explicit NetnsCluster(EmulationPlan plan) : plan_(std::move(plan)) {}

  EmulationPlan plan_;
  bool removed_ = false;
};

// The file of the network namespace NAME: /run/netns/NAME (made by `ip netns add`).
std::string netns_file(const std::string& name);
// The owner mark (base/run_marker.hpp) of the namespaces of run prefix P:
// <k_netns_owner_root>/P, made before them and removed after them, so that a
// sweep tells a live run's namespaces from a dead one's, pid reuse included
// (tmpfs: gone at a reboot, as the namespaces are).
inline constexpr std::string_view k_netns_owner_root = "/run/sluice";
std::string netns_owner_dir(const std::string& prefix);
// This process joins the network namespace NAME (/run/netns/NAME), keeping
// its other namespaces (mounts among them).
Status enter_network_namespace(const std::string& name);
// The processes inside a namespace (`ip netns pids`), this one excepted.
std::vector<int> namespace_pids(const std::string& netns);
// Kills (SIGKILL) every process inside a namespace, this one excepted.
void kill_namespace_processes(const std::string& netns);

// Namespaces of ours (k_netns_prefix) that exist now.
Result<std::vector<std::string>> our_namespaces();

}  // namespace sluice::emulate
