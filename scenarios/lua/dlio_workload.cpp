#include "scenarios/lua/dlio_workload.hpp"

#include <charconv>
#include <cstdint>
#include <limits>
#include <vector>

#include "scenarios/lua/field_tables.hpp"

namespace sluice::scenario {
namespace {

constexpr const char* k_context = "sl.workload.dlio";

const DlioSetting* setting_in(const std::vector<DlioSetting>& settings, const std::string& field) {
  for (const DlioSetting& s : settings) {
    if (s.field == field) return &s;
  }
  return nullptr;
}

std::int64_t as_count(std::uint64_t v) {
  return static_cast<std::int64_t>(std::min<std::uint64_t>(v, std::numeric_limits<std::int64_t>::max()));
}

FieldDoc config_field() {
  return text_field("config", k_field_no_limit, "",
                    "the DLIO workload YAML (a path; relative: from the working directory, else the script's folder); "
                    "required");
}

FieldDoc overrides_field() {
  return table_field("overrides", "-",
                     "DLIO keys over the file's values: {[\"reader.batch_size\"] = 4, ...}, checked alike");
}

// The fields sl.workload.dlio takes with a training (train_epoch's) or a
// checkpoint-only config (checkpoint_burst's): config, overrides, and the
// workload's fields the config does not set.
FieldTable kind_fields(bool checkpoint) {
  FieldTable t{k_context, "", {config_field(), overrides_field()}};
  const std::vector<DlioSetting>& settings = checkpoint ? dlio_checkpoint_settings() : dlio_settings();
  for (const FieldDoc& f : workload_fields(checkpoint ? "checkpoint_burst" : "train_epoch").fields) {
    if (setting_in(settings, f.name) != nullptr) continue;
    FieldDoc d = f;
    if (d.name == "label") d.default_text = "the config's model.name";
    if (d.name == "setup_dataset") d.default_text = "true";
    t.fields.push_back(std::move(d));
  }
  return t;
}

const FieldTable& fields_of(bool checkpoint) {
  static const FieldTable train = kind_fields(false);
  static const FieldTable ckpt = kind_fields(true);
  return checkpoint ? ckpt : train;
}

// An override's value as DLIO's command line would carry it: "4", "0.323", "true", "npz".
std::string override_text(const std::string& key, const ScriptValue& v) {
  if (const bool* b = std::get_if<bool>(&v.value)) return *b ? "true" : "false";
  if (const std::int64_t* i = std::get_if<std::int64_t>(&v.value)) return std::to_string(*i);
  if (const double* d = std::get_if<double>(&v.value)) {
    char buf[64];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, *d);
    return ec == std::errc{} ? std::string(buf, end) : "nan";
  }
  if (const std::string* s = v.string()) return *s;
  throw ScriptError(std::string(k_context) + ": overrides[\"" + key +
                    "\"]: expected a number, boolean or string, not " + v.type_name() +
                    " (overrides take one value; a loop over sl.workload.dlio sweeps)");
}

std::vector<DlioOverride> read_overrides(const ScriptTable* t) {
  std::vector<DlioOverride> out;
  if (t == nullptr) return out;
  if (!t->list.empty()) {
    throw ScriptError(std::string(k_context) +
                      ": overrides: expected {[\"section.key\"] = value, ...}, not a list (\"reader.batch_size\")");
  }
  for (const auto& [key, value] : t->fields) out.push_back({key, override_text(key, value)});
  return out;
}

ScriptValue value_of(const TrainEpochConfig& c, const std::string& field) {
  const auto count = [](std::uint64_t v) { return ScriptValue{as_count(v)}; };
  if (field == "dataset_dir") return ScriptValue{c.dataset_dir};
  if (field == "samples") return count(c.samples);
  if (field == "sample_bytes") return count(c.sample_bytes);
  if (field == "sample_bytes_stdev") return count(c.sample_bytes_stdev);
  if (field == "samples_per_file") return count(c.samples_per_file);
  if (field == "batch_samples") return count(c.batch_samples);
  if (field == "compute_ns_per_step") return count(static_cast<std::uint64_t>(c.compute_ns_per_step));
  if (field == "compute_time_stdev") return count(static_cast<std::uint64_t>(c.compute_time_stdev));
  if (field == "prefetch_depth") return count(c.prefetch_depth);
  if (field == "read_threads") return count(c.read_threads);
  if (field == "epochs") return count(c.epochs);
  if (field == "shuffle") return ScriptValue{c.shuffle};
  if (field == "shuffle_seed") return count(c.shuffle_seed);
  throw std::logic_error("internal error: dlio sets no train_epoch field \"" + field + "\"");
}

ScriptTable report_of(const DlioWorkload& w, const std::string& config_name) {
  ScriptTable report;
  report.fields["config"] = ScriptValue{config_name};
  report.fields["model"] = ScriptValue{w.model};
  if (w.au_threshold) report.fields["au"] = ScriptValue{*w.au_threshold};
  auto notes = std::make_shared<ScriptTable>();
  auto approximated = std::make_shared<ScriptTable>();
  for (const DlioNote& n : w.notes) {
    const ScriptValue line{n.value + " (" + n.where + "): " + n.effect};
    (n.approximated ? approximated : notes)->fields[n.key] = line;
  }
  report.fields["notes"] = ScriptValue{std::shared_ptr<const ScriptTable>(notes)};
  report.fields["approximated"] = ScriptValue{std::shared_ptr<const ScriptTable>(approximated)};
  return report;
}

// checkpoint_burst's arguments and what the object shows of a checkpoint-only config.
void set_checkpoint(DlioBuild& out, const DlioWorkload& w) {
  const DlioCheckpoint& c = *w.checkpoint;
  ScriptTable& a = out.workload_args;
  a.fields["dir"] = ScriptValue{c.config.dir};
  a.fields["shard_bytes"] = ScriptValue{as_count(c.config.shard_bytes)};
  a.fields["checkpoints"] = ScriptValue{as_count(c.config.checkpoints)};
  a.fields["read_back"] = ScriptValue{c.config.read_back};
  a.fields["read_checkpoints"] = ScriptValue{as_count(c.config.read_checkpoints)};
  a.fields["sync"] = ScriptValue{c.config.sync};
  a.fields.emplace("label", ScriptValue{w.model});
  ScriptTable& x = out.exposed;
  x.fields["model"] = ScriptValue{w.model};
  x.fields["ranks"] = ScriptValue{as_count(c.transformer.ranks())};
  x.fields["checkpoint_bytes"] = ScriptValue{as_count(c.checkpoint_bytes)};
  x.fields["min_rank_bytes"] = ScriptValue{as_count(c.min_rank_bytes)};
  x.fields["max_rank_bytes"] = ScriptValue{as_count(c.max_rank_bytes)};
  x.fields["writes"] = ScriptValue{as_count(c.config.checkpoints)};
  x.fields["reads"] = ScriptValue{as_count(c.reads)};
}

std::vector<DlioOverride> overrides_of(const ScriptTable& args) {
  static const FieldTable k{k_context, "", {overrides_field()}};
  ScriptTable only;
  if (const auto it = args.fields.find("overrides"); it != args.fields.end()) only.fields.insert(*it);
  FieldReader r(only, k_context, k);
  return read_overrides(r.table("overrides"));
}

}  // namespace

DlioBuild build_dlio(const ScriptTable& args, const std::string& config_name, std::string_view text) {
  Result<DlioWorkload> read = read_dlio_config(text, config_name, overrides_of(args));
  if (!read.ok()) throw ScriptError(std::string(k_context) + ": " + read.status().message());
  const bool checkpoint = read->checkpoint.has_value();
  const std::vector<DlioSetting>& settings = checkpoint ? dlio_checkpoint_settings() : dlio_settings();
  for (const auto& [name, value] : args.fields) {
    if (const DlioSetting* s = setting_in(settings, name)) {
      throw ScriptError(std::string(k_context) + ": " + name + " comes from the config's " + s->from +
                        "; change it with overrides = {[\"" + s->from + "\"] = ...}");
    }
  }
  FieldReader r(args, k_context, fields_of(checkpoint));
  r.text("config");
  r.table("overrides");
  DlioBuild out;
  for (const FieldDoc& f : fields_of(checkpoint).fields) {
    if (f.name == "config" || f.name == "overrides") continue;
    if (const ScriptValue* v = r.get(f.name)) out.workload_args.fields[f.name] = *v;
  }
  r.finish();
  out.report = report_of(*read, config_name);
  if (checkpoint) {
    out.type = "checkpoint_burst";
    set_checkpoint(out, *read);
    return out;
  }
  for (const DlioSetting& s : dlio_settings()) out.workload_args.fields[s.field] = value_of(read->train, s.field);
  out.workload_args.fields.emplace("label", ScriptValue{read->model});
  out.workload_args.fields.emplace("setup_dataset", ScriptValue{read->train.setup_dataset});
  return out;
}

// The training fields as before; a checkpoint-only config's own ones added, marked.
const FieldTable& dlio_fields() {
  static const FieldTable k = [] {
    FieldTable t = fields_of(false);
    t.summary =
        "a DLIO or MLPerf Storage workload file as a train_epoch workload, or a checkpoint_burst one for a "
        "checkpoint-only config (scenarios/lua/dlio_config.hpp says which keys map, which are recorded and which "
        "are refused); every field of the workload the config does not set";
    for (const FieldDoc& f : fields_of(true).fields) {
      if (t.find(f.name) != nullptr) continue;
      FieldDoc d = f;
      d.description = "checkpoint-only configs: " + d.description;
      t.fields.push_back(std::move(d));
    }
    return t;
  }();
  return k;
}

}  // namespace sluice::scenario
