// A fault plan: what goes wrong in a run, and when, as plain data.
//
// FoundationDB's simulator injects kills, clogs and disconnects from a logged
// seed so that a failing run can be replayed; a FaultPlan is that schedule
// made explicit, so it can be written by hand (a Lua scenario's `faults = {...}`),
// drawn from a seed (random_fault_plan.hpp), printed, and applied unchanged in
// every world (TestEnv, SimEnv, HwEnv) through FaultControl (fault_control.hpp)
// by a FaultDriver (fault_driver.hpp).
//
// Times are nanoseconds since the start of the run (the world's now()).
// Subjects are named by role, as a deployment names its services ("storage:3"
// = the storage server of index 3 in deployment order), by node ("node2"), or
// by storage target ("target:5"); the world resolves names to endpoints.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.hpp"
#include "core/common/units.hpp"

namespace sluice::faults {

// Limits a plan must respect (a plan is data from scripts and seeds: every
// count and size has a bound, and exceeding it is an error naming the entry).
inline constexpr std::size_t k_max_faults_per_plan = 1024;
inline constexpr std::size_t k_max_partition_members = 1024;
inline constexpr std::uint32_t k_max_subject_index = 1'000'000;
// A disk slowed beyond this factor is a dead disk: use kill instead.
inline constexpr double k_max_disk_slowdown = 1000.0;
// The longest time a plan may name (one simulated or measured day).
inline constexpr TimeNs k_max_plan_time_ns = 24 * 3600 * k_ns_per_s;

// Which services a role names, in the order a deployment adds them.
enum class Role : std::uint8_t { mgmt = 0, meta, storage, client };
std::string_view to_string(Role role);

enum class SubjectKind : std::uint8_t {
  service = 0,  // role:index ("storage:3", "meta:0", "client:1", "mgmt")
  node,         // a node id ("node2")
  target,       // a storage target id ("target:5")
};

struct FaultSubject {
  SubjectKind kind = SubjectKind::service;
  Role role = Role::storage;  // kind == service
  std::uint32_t index = 0;    // service index within its role, node id or target id

  static FaultSubject service(Role role, std::uint32_t index) { return {SubjectKind::service, role, index}; }
  static FaultSubject node(std::uint32_t id) { return {SubjectKind::node, Role::mgmt, id}; }
  static FaultSubject target(std::uint32_t id) { return {SubjectKind::target, Role::mgmt, id}; }

  std::string to_string() const;
  friend bool operator==(const FaultSubject&, const FaultSubject&) = default;
};

// "storage:3", "meta:0", "client:1", "mgmt" (= "mgmt:0"), "node2", "target:5".
// invalid_argument naming the text and what is wrong.
Result<FaultSubject> parse_subject(std::string_view text);

enum class FaultKind : std::uint8_t {
  kill = 0,      // a service crashes; revived (restarted) after duration_ns, or never when 0
  slow_disk,     // a storage server's targets (or one target) serve I/O `factor` times slower
  partition,     // the members' nodes cannot reach any node outside the set (both directions)
  message_loss,  // every control message is lost with loss_probability and delayed by extra_delay_ns
};
std::string_view to_string(FaultKind kind);

struct Fault {
  FaultKind kind = FaultKind::kill;
  TimeNs at_ns = 0;
  // How long the fault lasts. kill: 0 = the service stays dead (only where
  // mirroring covers it); every other kind: 0 = until the end of the run.
  TimeNs duration_ns = 0;
  // kill: one service; slow_disk: one storage service or one target;
  // partition: nodes or services (their nodes); message_loss: none (all links).
  std::vector<FaultSubject> subjects;
  double factor = 1.0;            // slow_disk: > 1
  double loss_probability = 0.0;  // message_loss: [0, 1]
  TimeNs extra_delay_ns = 0;      // message_loss: added to every message

  // When the fault ends (at_ns + duration_ns), or -1 when it never does.
  TimeNs end_ns() const { return duration_ns > 0 ? at_ns + duration_ns : -1; }
  // "kill storage:3 at 2s for 3s" style, for logs and reports.
  std::string to_string() const;
};

struct FaultPlan {
  std::vector<Fault> faults;

  // ok, or invalid_argument naming the entry ("fault 3 (slow_disk): factor 0.5 must be > 1").
  Status validate() const;
  // The last time any fault begins or ends (0 for an empty plan).
  TimeNs last_change_ns() const;
  // True when a kill has no revive (duration_ns == 0).
  bool leaves_service_dead() const;
  std::string to_string() const;  // one fault per line
};

}  // namespace sluice::faults
