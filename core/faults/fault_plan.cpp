#include "core/faults/fault_plan.hpp"

#include <algorithm>
#include <charconv>

namespace sluice::faults {

namespace {

// Times are printed in the largest unit that keeps them whole, so a plan
// printed from a seed reads as it would be written ("2s", "150ms").
std::string time_text(TimeNs ns) {
  if (ns != 0 && ns % k_ns_per_s == 0) return std::to_string(ns / k_ns_per_s) + "s";
  if (ns != 0 && ns % k_ns_per_ms == 0) return std::to_string(ns / k_ns_per_ms) + "ms";
  if (ns != 0 && ns % k_ns_per_us == 0) return std::to_string(ns / k_ns_per_us) + "us";
  return std::to_string(ns) + "ns";
}

Result<std::uint32_t> parse_index(std::string_view digits, std::string_view whole) {
  std::uint32_t value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size()) {
    return error(StatusCode::invalid_argument,
                 "fault subject '" + std::string(whole) + "': '" + std::string(digits) + "' is not an index");
  }
  if (value > k_max_subject_index) {
    return error(StatusCode::invalid_argument,
                 "fault subject '" + std::string(whole) + "': index over " + std::to_string(k_max_subject_index));
  }
  return value;
}

}  // namespace

std::string_view to_string(Role role) {
  switch (role) {
    case Role::mgmt: return "mgmt";
    case Role::meta: return "meta";
    case Role::storage: return "storage";
    case Role::client: return "client";
  }
  return "?";
}

std::string_view to_string(FaultKind kind) {
  switch (kind) {
    case FaultKind::kill: return "kill";
    case FaultKind::slow_disk: return "slow_disk";
    case FaultKind::partition: return "partition";
    case FaultKind::message_loss: return "message_loss";
  }
  return "?";
}

std::string FaultSubject::to_string() const {
  switch (kind) {
    case SubjectKind::service: return std::string(faults::to_string(role)) + ":" + std::to_string(index);
    case SubjectKind::node: return "node" + std::to_string(index);
    case SubjectKind::target: return "target:" + std::to_string(index);
  }
  return "?";
}

Result<FaultSubject> parse_subject(std::string_view text) {
  if (text == "mgmt") return FaultSubject::service(Role::mgmt, 0);
  if (text.starts_with("node")) {
    Result<std::uint32_t> id = parse_index(text.substr(4), text);
    if (!id.ok()) return id.status();
    return FaultSubject::node(*id);
  }
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    return error(StatusCode::invalid_argument,
                 "fault subject '" + std::string(text) +
                     "': expected role:index (mgmt, meta:N, storage:N, client:N), nodeN or target:N");
  }
  const std::string_view head = text.substr(0, colon);
  Result<std::uint32_t> index = parse_index(text.substr(colon + 1), text);
  if (!index.ok()) return index.status();
  if (head == "target") return FaultSubject::target(*index);
  for (Role role : {Role::mgmt, Role::meta, Role::storage, Role::client}) {
    if (head == to_string(role)) return FaultSubject::service(role, *index);
  }
  return error(StatusCode::invalid_argument, "fault subject '" + std::string(text) + "': unknown role '" +
                                                 std::string(head) + "' (mgmt, meta, storage, client, target)");
}

std::string Fault::to_string() const {
  std::string out = std::string(faults::to_string(kind));
  for (std::size_t i = 0; i < subjects.size(); ++i) out += (i == 0 ? " " : ",") + subjects[i].to_string();
  if (kind == FaultKind::slow_disk) out += " x" + std::to_string(factor);
  if (kind == FaultKind::message_loss) {
    out += " p=" + std::to_string(loss_probability);
    if (extra_delay_ns > 0) out += " +" + time_text(extra_delay_ns);
  }
  out += " at " + time_text(at_ns);
  if (duration_ns > 0) {
    out += (kind == FaultKind::kill ? " revive after " : " for ") + time_text(duration_ns);
  } else {
    out += kind == FaultKind::kill ? " (never revived)" : " (until the end)";
  }
  return out;
}

Status FaultPlan::validate() const {
  if (faults.size() > k_max_faults_per_plan) {
    return error(StatusCode::invalid_argument, "fault plan has " + std::to_string(faults.size()) +
                                                   " faults, over the limit of " +
                                                   std::to_string(k_max_faults_per_plan));
  }
  for (std::size_t i = 0; i < faults.size(); ++i) {
    const Fault& f = faults[i];
    const std::string where = "fault " + std::to_string(i + 1) + " (" + std::string(faults::to_string(f.kind)) + "): ";
    auto bad = [&](const std::string& what) { return error(StatusCode::invalid_argument, where + what); };
    if (f.at_ns < 0 || f.at_ns > k_max_plan_time_ns) return bad("at must be in [0, 24h]");
    if (f.duration_ns < 0 || f.duration_ns > k_max_plan_time_ns) return bad("duration must be in [0, 24h]");
    for (const FaultSubject& s : f.subjects) {
      if (s.index > k_max_subject_index) return bad("subject index over " + std::to_string(k_max_subject_index));
    }
    switch (f.kind) {
      case FaultKind::kill:
        if (f.subjects.size() != 1 || f.subjects[0].kind != SubjectKind::service) {
          return bad("needs exactly one service to kill (e.g. storage:3)");
        }
        break;
      case FaultKind::slow_disk:
        if (f.subjects.size() != 1 ||
            (f.subjects[0].kind == SubjectKind::service && f.subjects[0].role != Role::storage) ||
            f.subjects[0].kind == SubjectKind::node) {
          return bad("needs exactly one storage service (storage:N) or target (target:N)");
        }
        if (!(f.factor > 1.0) || !(f.factor <= k_max_disk_slowdown)) {
          return bad("factor " + std::to_string(f.factor) +
                     " must be > 1 and <= " + std::to_string(k_max_disk_slowdown));
        }
        break;
      case FaultKind::partition:
        if (f.subjects.empty()) return bad("needs at least one member");
        if (f.subjects.size() > k_max_partition_members) {
          return bad("more than " + std::to_string(k_max_partition_members) + " members");
        }
        for (const FaultSubject& s : f.subjects) {
          if (s.kind == SubjectKind::target) return bad("members are nodes or services, not targets");
        }
        break;
      case FaultKind::message_loss:
        if (!f.subjects.empty()) return bad("applies to every link: takes no subjects");
        if (!(f.loss_probability >= 0.0 && f.loss_probability <= 1.0)) {
          return bad("loss probability " + std::to_string(f.loss_probability) + " must be in [0, 1]");
        }
        if (f.extra_delay_ns < 0 || f.extra_delay_ns > k_max_plan_time_ns) return bad("delay must be in [0, 24h]");
        if (f.loss_probability == 0.0 && f.extra_delay_ns == 0) return bad("neither loss nor delay: does nothing");
        break;
    }
  }
  return ok_status();
}

TimeNs FaultPlan::last_change_ns() const {
  TimeNs last = 0;
  for (const Fault& f : faults) last = std::max(last, f.end_ns() >= 0 ? f.end_ns() : f.at_ns);
  return last;
}

bool FaultPlan::leaves_service_dead() const {
  for (const Fault& f : faults) {
    if (f.kind == FaultKind::kill && f.duration_ns == 0) return true;
  }
  return false;
}

std::string FaultPlan::to_string() const {
  std::string out;
  for (const Fault& f : faults) out += f.to_string() + "\n";
  return out;
}

}  // namespace sluice::faults
