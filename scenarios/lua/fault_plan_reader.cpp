#include "scenarios/lua/fault_plan_reader.hpp"

#include <vector>

#include "scenarios/lua/field_reader.hpp"
#include "scenarios/lua/field_tables.hpp"

namespace sluice::scenario {
namespace {

faults::FaultSubject subject_of(const ScriptValue& v, const FieldReader& r, const std::string& field) {
  const std::string* s = v.string();
  if (s == nullptr) {
    r.fail(field, "expected a name like \"storage:3\", \"node2\" or \"target:5\", not " + v.type_name());
  }
  Result<faults::FaultSubject> parsed = faults::parse_subject(*s);
  if (!parsed.ok()) r.fail(field, parsed.status().message());
  return *parsed;
}

faults::Fault read_entry(const ScriptTable& entry, const std::string& where) {
  // Which kind: exactly one of the kind fields.
  std::string kind;
  for (const std::string& k : fault_kinds()) {
    if (entry.fields.count(k) == 0) continue;
    if (!kind.empty()) {
      throw ScriptError(where + ": names both " + kind + " and " + k + "; one fault per entry");
    }
    kind = k;
  }
  if (kind.empty()) {
    throw ScriptError(where + ": names no fault; give one of kill, slow_disk, partition, message_loss");
  }
  FieldReader r(entry, where + " (" + kind + ")", fault_fields(kind));
  faults::Fault f;
  if (auto at = r.duration("at")) f.at_ns = *at;
  if (kind == "kill") {
    f.kind = faults::FaultKind::kill;
    f.subjects.push_back(subject_of(*r.get("kill"), r, "kill"));
    if (auto after = r.duration("revive_after")) {
      if (*after == 0) r.fail("revive_after", "0 would revive at once; leave it out to keep the service dead");
      f.duration_ns = *after;
    }
  } else if (kind == "slow_disk") {
    f.kind = faults::FaultKind::slow_disk;
    f.subjects.push_back(subject_of(*r.get("slow_disk"), r, "slow_disk"));
    const std::optional<double> factor = r.number("factor");
    if (!factor) r.fail("factor", "missing (how many times slower, e.g. factor = 10)");
    if (*factor <= 1.0) r.fail("factor", "must be more than 1 (1 is the normal speed)");
    f.factor = *factor;
  } else if (kind == "partition") {
    f.kind = faults::FaultKind::partition;
    const ScriptValue* members = r.get("partition");
    const ScriptTable* list = members->table();
    if (list == nullptr || !list->fields.empty() || list->list.empty()) {
      r.fail("partition", "expected a list of nodes or services like {\"node1\", \"storage:0\"}");
    }
    if (list->list.size() > faults::k_max_partition_members) {
      r.fail("partition", "more than " + std::to_string(faults::k_max_partition_members) + " members");
    }
    for (std::size_t i = 0; i < list->list.size(); ++i) {
      f.subjects.push_back(subject_of(list->list[i], r, "partition[" + std::to_string(i + 1) + "]"));
    }
  } else {
    f.kind = faults::FaultKind::message_loss;
    const std::optional<double> p = r.number("message_loss");
    f.loss_probability = *p;
    if (auto delay = r.duration("delay")) f.extra_delay_ns = *delay;
  }
  if (auto lasts = r.duration("for_")) {
    if (kind == "kill") r.fail("for_", "a kill lasts until revive_after; use revive_after = \"...\"");
    if (*lasts == 0) r.fail("for_", "0 would end the fault at once; leave it out to last until the end");
    f.duration_ns = *lasts;
  }
  r.finish();
  if (!r.sweeps().empty()) r.fail(r.sweeps().front().key, "one value, not a list");
  return f;
}

}  // namespace

faults::FaultPlan read_fault_plan(const ScriptValue& value, const std::string& context) {
  const ScriptTable* table = value.table();
  if (table == nullptr || !table->fields.empty()) {
    throw ScriptError(context + ": expected a list of faults like { {at = \"2s\", kill = \"storage:3\"} }, not " +
                      value.type_name());
  }
  if (table->list.size() > k_max_script_faults) {
    throw ScriptError(context + ": more than " + std::to_string(k_max_script_faults) + " faults");
  }
  faults::FaultPlan plan;
  for (std::size_t i = 0; i < table->list.size(); ++i) {
    const std::string where = context + "[" + std::to_string(i + 1) + "]";
    const ScriptTable* entry = table->list[i].table();
    if (entry == nullptr || !entry->list.empty()) {
      throw ScriptError(where + ": expected a table of named fields like {at = \"2s\", kill = \"storage:3\"}, not " +
                        table->list[i].type_name());
    }
    plan.faults.push_back(read_entry(*entry, where));
  }
  if (Status s = plan.validate(); !s.ok()) throw ScriptError(context + ": " + s.message());
  return plan;
}

}  // namespace sluice::scenario
