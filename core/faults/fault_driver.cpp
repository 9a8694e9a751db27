#include "core/faults/fault_driver.hpp"

#include <algorithm>

namespace sluice::faults {

Result<FaultDriver> FaultDriver::create(FaultPlan plan) {
  if (Status s = plan.validate(); !s.ok()) return s;
  return FaultDriver(std::move(plan));
}

FaultDriver::FaultDriver(FaultPlan plan) : plan_(std::move(plan)), active_(plan_.faults.size(), false) {
  for (std::size_t i = 0; i < plan_.faults.size(); ++i) {
    const Fault& f = plan_.faults[i];
    steps_.push_back(Step{f.at_ns, true, i});
    if (f.end_ns() >= 0) steps_.push_back(Step{f.end_ns(), false, i});
  }
  // Ends before begins at one instant, so that a fault that ends when
  // another begins (a revive and the next kill of the same service) is
  // applied in the order a reader of the plan expects.
  std::stable_sort(steps_.begin(), steps_.end(), [](const Step& a, const Step& b) {
    if (a.at_ns != b.at_ns) return a.at_ns < b.at_ns;
    if (a.begin != b.begin) return !a.begin;
    return a.fault < b.fault;
  });
}

TimeNs FaultDriver::next_change_ns() const { return next_step_ < steps_.size() ? steps_[next_step_].at_ns : -1; }

Status FaultDriver::note(Status status, std::size_t index, const char* what) {
  if (!status.ok()) {
    errors_.push_back(std::string(what) + " " + plan_.faults[index].to_string() + ": " + status.to_string());
  }
  return status;
}

Status FaultDriver::apply_due(TimeNs now_ns, FaultControl& control) {
  Status first;
  while (next_step_ < steps_.size() && steps_[next_step_].at_ns <= now_ns) {
    const Step step = steps_[next_step_++];
    Status s = step.begin ? begin(step.fault, control) : end(step.fault, control);
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

Status FaultDriver::begin(std::size_t index, FaultControl& control) {
  const Fault& f = plan_.faults[index];
  active_[index] = true;
  ++applied_;
  switch (f.kind) {
    case FaultKind::kill: {
      const std::string key = f.subjects[0].to_string();
      killed_subjects_[key] = f.subjects[0];
      if (kills_[key]++ > 0) return ok_status();  // already dead
      return note(control.kill(f.subjects[0]), index, "begin");
    }
    case FaultKind::slow_disk: return note(push_disk(f.subjects[0], control), index, "begin");
    case FaultKind::partition: {
      std::vector<NodeId> nodes;
      for (const FaultSubject& s : f.subjects) {
        Result<NodeId> n = control.node_of(s);
        if (!n.ok()) return note(n.status(), index, "begin");
        nodes.push_back(*n);
      }
      std::sort(nodes.begin(), nodes.end());
      nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
      partitions_[index] = std::move(nodes);
      return note(push_partitions(control), index, "begin");
    }
    case FaultKind::message_loss: return note(push_messages(control), index, "begin");
  }
  return ok_status();
}

Status FaultDriver::end(std::size_t index, FaultControl& control) {
  if (!active_[index]) return ok_status();
  const Fault& f = plan_.faults[index];
  active_[index] = false;
  ++applied_;
  switch (f.kind) {
    case FaultKind::kill: {
      const std::string key = f.subjects[0].to_string();
      auto it = kills_.find(key);
      if (it == kills_.end() || it->second == 0) return ok_status();
      if (--it->second > 0) return ok_status();  // another kill still holds it down
      kills_.erase(it);
      killed_subjects_.erase(key);
      return note(control.revive(f.subjects[0]), index, "end");
    }
    case FaultKind::slow_disk: return note(push_disk(f.subjects[0], control), index, "end");
    case FaultKind::partition: partitions_.erase(index); return note(push_partitions(control), index, "end");
    case FaultKind::message_loss: return note(push_messages(control), index, "end");
  }
  return ok_status();
}

Status FaultDriver::push_disk(const FaultSubject& subject, FaultControl& control) {
  double factor = 1.0;
  for (std::size_t i = 0; i < plan_.faults.size(); ++i) {
    const Fault& f = plan_.faults[i];
    if (active_[i] && f.kind == FaultKind::slow_disk && f.subjects[0] == subject) factor = std::max(factor, f.factor);
  }
  return control.set_disk_slowdown(subject, factor);
}

Status FaultDriver::push_partitions(FaultControl& control) {
  std::vector<std::vector<NodeId>> all;
  for (const auto& [index, nodes] : partitions_) all.push_back(nodes);
  return control.set_partitions(all);
}

Status FaultDriver::push_messages(FaultControl& control) {
  double keep = 1.0;
  TimeNs delay = 0;
  for (std::size_t i = 0; i < plan_.faults.size(); ++i) {
    const Fault& f = plan_.faults[i];
    if (!active_[i] || f.kind != FaultKind::message_loss) continue;
    keep *= 1.0 - f.loss_probability;
    delay = std::max(delay, f.extra_delay_ns);
  }
  return control.set_message_faults(1.0 - keep, delay);
}

Status FaultDriver::heal_all(FaultControl& control, bool keep_dead) {
  Status first;
  next_step_ = steps_.size();  // nothing of the plan happens after a heal
  for (std::size_t i = 0; i < plan_.faults.size(); ++i) {
    if (!active_[i]) continue;
    if (plan_.faults[i].kind == FaultKind::kill && keep_dead) continue;
    Status s = end(i, control);
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

std::vector<FaultSubject> FaultDriver::dead_services() const {
  std::vector<FaultSubject> out;
  for (const auto& [key, subject] : killed_subjects_) out.push_back(subject);
  return out;
}

}  // namespace sluice::faults
