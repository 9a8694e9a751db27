// FaultControl: what a world lets a FaultDriver do to it. Each world
// implements it over its own mechanism: TestWorld (tests/support) and
// SimRuntime (sim/) directly in their event loops; HwWorld by stopping and
// restarting service loops, its message hook and a fault-injecting storage
// backend (hw_backends/faulty_storage_backend.hpp).
//
// Contract:
// - Calls come from the thread that runs the world (between events in
//   TestEnv/SimEnv), never from inside a service.
// - Every call takes effect for what happens after it; nothing already
//   delivered is undone.
// - The driver composes overlapping faults (fault_driver.hpp): a world sees
//   the current total state (the set of active partitions, the current
//   message loss), never a stack it would have to keep itself.
// - Errors: not_found for a subject the world does not have (naming it),
//   unavailable for a fault the world cannot inject (saying why, e.g. "tc
//   netem: the kernel has no sch_netem"); the driver reports them and the
//   run counts as not injected, never as passed silently.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/common/ids.hpp"
#include "core/common/status.hpp"
#include "core/common/units.hpp"
#include "core/faults/fault_plan.hpp"

namespace sluice::faults {

class FaultControl {
 public:
  virtual ~FaultControl() = default;

  // The node a subject lives on (a service's node, a target's node, or the
  // node itself); not_found when the world has no such subject.
  virtual Result<NodeId> node_of(const FaultSubject& subject) const = 0;

  // The service crashes: it handles nothing more, messages to it are lost,
  // completions of what it started are dropped, its memory is gone.
  [[nodiscard]] virtual Status kill(const FaultSubject& service) = 0;
  // The service restarts as a fresh process: a new instance built from its
  // configuration, on the same endpoint, with its durable storage (chunk
  // objects on its targets) as the crash left it. ok if it is alive already.
  [[nodiscard]] virtual Status revive(const FaultSubject& service) = 0;

  // Storage I/O on the subject's targets (a storage service: all of them)
  // takes `factor` times as long; 1.0 restores the normal speed.
  [[nodiscard]] virtual Status set_disk_slowdown(const FaultSubject& subject, double factor) = 0;

  // The active partitions: each is a set of nodes that cannot exchange
  // messages or transfers with any node outside it. Empty: the network is whole.
  [[nodiscard]] virtual Status set_partitions(const std::vector<std::vector<NodeId>>& partitions) = 0;

  // Every control message is lost with `loss_probability` (drawn from the
  // world's seeded Rng) and otherwise delayed by extra_delay_ns. 0, 0: none.
  [[nodiscard]] virtual Status set_message_faults(double loss_probability, TimeNs extra_delay_ns) = 0;
};

// Whether nodes a and b are on different sides of any of `partitions`
// (FaultControl::set_partitions' meaning): the one rule every world applies.
inline bool partitioned(const std::vector<std::vector<NodeId>>& partitions, NodeId a, NodeId b) {
  if (a == b) return false;
  return std::any_of(partitions.begin(), partitions.end(), [a, b](const std::vector<NodeId>& side) {
    const bool has_a = std::find(side.begin(), side.end(), a) != side.end();
    const bool has_b = std::find(side.begin(), side.end(), b) != side.end();
    return has_a != has_b;
  });
}

}  // namespace sluice::faults
