// FaultDriver: applies a FaultPlan to a world through its FaultControl, at
// the plan's times.
//
// The driver is pure bookkeeping (no clock): the world's runner asks when the
// next change is due (next_change_ns), runs its world up to that time (virtual
// time in TestEnv/SimEnv, real time in HwEnv), then calls apply_due(now). This
// keeps the driver out of every service's event loop, so that a fault never
// lands in the middle of an event and the same seed gives the same run.
//
// Overlapping faults are composed here, and the world is told the total:
// - kill: a service killed by two overlapping faults is revived when the
//   last of them ends;
// - slow_disk: the largest factor of the active faults on a subject;
// - partition: the list of active partitions (members resolved to nodes when
//   the partition begins);
// - message_loss: loss 1 - prod(1 - p_i) (independent losses), the largest
//   extra delay.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/faults/fault_control.hpp"
#include "core/faults/fault_plan.hpp"

namespace sluice::faults {

class FaultDriver {
 public:
  // invalid_argument when the plan does not validate.
  static Result<FaultDriver> create(FaultPlan plan);

  // When the next fault begins or ends, or -1 when nothing is left to do.
  TimeNs next_change_ns() const;
  // Applies every change due at or before now_ns, in plan order at equal
  // times (ends before begins). Returns the first error of this call (every
  // change is still attempted); all errors are kept in errors().
  [[nodiscard]] Status apply_due(TimeNs now_ns, FaultControl& control);
  // Ends every active fault now: restores disks, heals partitions, clears
  // message faults, and revives killed services unless keep_dead (a run with
  // mirroring may leave a primary dead for its final check).
  [[nodiscard]] Status heal_all(FaultControl& control, bool keep_dead);

  const FaultPlan& plan() const { return plan_; }
  // Changes applied so far (begins and ends).
  std::size_t changes_applied() const { return applied_; }
  const std::vector<std::string>& errors() const { return errors_; }
  // Services currently dead because of this plan.
  std::vector<FaultSubject> dead_services() const;

 private:
  struct Step {
    TimeNs at_ns = 0;
    bool begin = true;
    std::size_t fault = 0;
  };
  explicit FaultDriver(FaultPlan plan);

  Status begin(std::size_t index, FaultControl& control);
  Status end(std::size_t index, FaultControl& control);
  Status push_partitions(FaultControl& control);
  Status push_messages(FaultControl& control);
  Status push_disk(const FaultSubject& subject, FaultControl& control);
  Status note(Status status, std::size_t index, const char* what);

  FaultPlan plan_;
  std::vector<Step> steps_;  // sorted by (time, ends first, plan order)
  std::size_t next_step_ = 0;
  std::vector<bool> active_;
  std::map<std::size_t, std::vector<NodeId>> partitions_;  // by fault index
  std::map<std::string, std::uint32_t> kills_;             // service -> active kills
  std::map<std::string, FaultSubject> killed_subjects_;
  std::size_t applied_ = 0;
  std::vector<std::string> errors_;
};

}  // namespace sluice::faults
