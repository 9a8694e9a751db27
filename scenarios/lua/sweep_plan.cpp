#include "scenarios/lua/sweep_plan.hpp"

#include <algorithm>

#include "scenarios/lua/script_units.hpp"
#include "scenarios/lua/spec_builders.hpp"

namespace sluice::scenario {
namespace {

struct Built {
  ClusterBuild cluster;
  FsBuild fs;
  std::vector<WorkloadBuild> workloads;
};

// Runs `fn`, blaming `object`'s creation for any error it throws.
template <typename Fn>
auto blaming(const ScriptObject& object, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const ScriptError& e) {
    if (!e.where.empty()) throw;
    throw ScriptError(e.what(), object.where);
  }
}

// A DLIO checkpointing config's bytes per rank hold for the ranks it names
// (dlio_workload.hpp: its object's `ranks`, with `checkpoint_bytes`): placed on
// another count, the ranks would write another model's checkpoint.
void check_dlio_ranks(const ScriptObject& w, const WorkloadBuild& built) {
  const auto ranks = w.reported.fields.find("ranks");
  if (w.type != "checkpoint_burst" || ranks == w.reported.fields.end() ||
      w.reported.fields.count("checkpoint_bytes") == 0) {
    return;
  }
  const std::int64_t* want = std::get_if<std::int64_t>(&ranks->second.value);
  const ClientPlacement& c = built.spec.clients;
  const std::uint64_t placed = std::uint64_t{c.ranks_per_node} * c.nodes.size();
  if (want == nullptr || static_cast<std::uint64_t>(*want) == placed) return;
  throw ScriptError("sl.workload.dlio: the config's checkpoint is written by " + std::to_string(*want) +
                        " ranks (its parallelism), the workload places " + std::to_string(placed) + " (" +
                        std::to_string(c.nodes.size()) + " client nodes x ranks_per_node " +
                        std::to_string(c.ranks_per_node) + "): place " + std::to_string(*want) +
                        ", or override model.parallelism for another count",
                    w.where);
}

Built build_all(const RunRequest& req, const std::vector<const ScriptTable*>& args,
                const ClusterBuild* cached_cluster) {
  Built b;
  if (cached_cluster != nullptr) {
    b.cluster = *cached_cluster;
  } else {
    b.cluster = blaming(*req.cluster, [&] { return build_cluster(*args[0]); });
  }
  b.fs = blaming(*req.fs, [&] { return build_fs(req.fs->type, *args[1], b.cluster.topology.get()); });
  for (std::size_t i = 0; i < req.workloads.size(); ++i) {
    const ScriptObject& w = *req.workloads[i];
    b.workloads.push_back(
        blaming(w, [&] { return build_workload(w.type, *args[2 + i], b.cluster.topology.get(), &b.fs); }));
    check_dlio_ranks(w, b.workloads.back());
  }
  return b;
}

const BuildInfo& info_of(const Built& b, std::size_t object) {
  if (object == 0) return b.cluster.info;
  if (object == 1) return b.fs.info;
  return b.workloads[object - 2].info;
}

// What every point of one sl.run shares: its name, label, seed, backends and run options.
ScenarioSpec point_of(const RunRequest& req) {
  ScenarioSpec spec;
  spec.scenario = req.scenario;
  spec.label = req.label;
  spec.seed = req.seed;
  spec.backends = req.backends;
  spec.sim_profile = req.sim_profile;
  spec.sim_coalesce = req.sim_coalesce;
  spec.sim_mode = req.sim_mode;
  spec.max_events = req.max_events;
  spec.faults = req.faults;
  return spec;
}

// The axes of the fields the objects' own tables list several values for (a
// list where one value goes); `all_known` gathers every field they know.
void add_field_axes(const std::vector<const ScriptObject*>& objects, const Built& discovered, PointPlan& plan,
                    std::vector<std::string>& all_known) {
  for (std::size_t o = 0; o < objects.size(); ++o) {
    const BuildInfo& info = info_of(discovered, o);
    all_known.insert(all_known.end(), info.known.begin(), info.known.end());
    for (const SweepAxisUse& use : info.sweeps) {
      SweepAxis axis;
      axis.name = use.key;
      for (const SweepAxis& other : plan.axes) {
        if (other.name == axis.name) axis.name = objects[o]->type + "." + use.key;
      }
      axis.values = use.values;
      axis.targets.emplace_back(o, use.key);
      plan.axes.push_back(std::move(axis));
    }
  }
}

// sl.run's sweep = {key = {values}}: one axis per key, on every object that
// knows the field; a key no object knows, or one an object already sweeps,
// is the script's error.
void add_run_sweep_axes(const RunRequest& req, const std::vector<const ScriptObject*>& objects, const Built& discovered,
                        PointPlan& plan, std::vector<std::string>& all_known) {
  for (const auto& [key, value] : req.sweep) {
    SweepAxis axis;
    axis.name = key;
    if (const ScriptTable* t = value.table(); t != nullptr && t->is_list()) {
      axis.values = t->list;
    } else if (value.table() != nullptr) {
      throw ScriptError("sl.run: sweep." + key + ": expected a list of values like {1, 8, 32}");
    } else {
      axis.values = {value};
    }
    for (std::size_t o = 0; o < objects.size(); ++o) {
      const BuildInfo& info = info_of(discovered, o);
      if (std::find(info.known.begin(), info.known.end(), key) == info.known.end()) continue;
      for (const SweepAxis& other : plan.axes) {
        for (const auto& [other_object, other_key] : other.targets) {
          if (other_object == o && other_key == key) {
            throw ScriptError("sl.run: sweep." + key + ": " + objects[o]->type + " already lists values for " + key +
                              "; give them in one place");
          }
        }
      }
      axis.targets.emplace_back(o, key);
    }
    if (axis.targets.empty()) {
      std::sort(all_known.begin(), all_known.end());
      all_known.erase(std::unique(all_known.begin(), all_known.end()), all_known.end());
      const std::string near = closest_name(key, all_known);
      throw ScriptError("sl.run: sweep." + key + ": no field \"" + key + "\" in the cluster, file system or workloads" +
                        (near.empty() ? "" : "; did you mean \"" + near + "\"?"));
    }
    plan.axes.push_back(std::move(axis));
  }
}

// The number of points the axes make (bounded by k_max_sweep_points), and
// whether one of them sweeps the cluster (object 0).
std::size_t point_count(const PointPlan& plan, bool& cluster_swept) {
  std::size_t total = 1;
  cluster_swept = false;
  for (const SweepAxis& axis : plan.axes) {
    if (axis.values.empty()) throw ScriptError("sl.run: sweep over " + axis.name + ": the list of values is empty");
    if (total > k_max_sweep_points / axis.values.size()) {
      throw ScriptError("sl.run: the sweep has more than " + std::to_string(k_max_sweep_points) + " points");
    }
    total *= axis.values.size();
    for (const auto& target : axis.targets) cluster_swept = cluster_swept || target.first == 0;
  }
  return total;
}

}  // namespace

PointPlan plan_points(const RunRequest& req) {
  std::vector<const ScriptObject*> objects = {req.cluster.get(), req.fs.get()};
  for (const auto& w : req.workloads) objects.push_back(w.get());
  std::vector<const ScriptTable*> original;
  for (const ScriptObject* o : objects) original.push_back(&o->args);
  const Built discovered = build_all(req, original, nullptr);

  PointPlan plan;
  std::vector<std::string> all_known;
  add_field_axes(objects, discovered, plan, all_known);
  add_run_sweep_axes(req, objects, discovered, plan, all_known);
  bool cluster_swept = false;
  const std::size_t total = point_count(plan, cluster_swept);

  for (std::size_t p = 0; p < total; ++p) {
    std::vector<ScriptTable> modified(original.size());
    std::vector<const ScriptTable*> args = original;
    std::map<std::string, std::string> params = req.params;
    std::size_t rest = p;
    for (std::size_t a = plan.axes.size(); a-- > 0;) {
      const SweepAxis& axis = plan.axes[a];
      const ScriptValue& value = axis.values[rest % axis.values.size()];
      rest /= axis.values.size();
      params[axis.name] = value.text();
      for (const auto& [object, key] : axis.targets) {
        if (args[object] != &modified[object]) {
          modified[object] = *original[object];
          args[object] = &modified[object];
        }
        modified[object].fields[key] = value;
      }
    }
    Built b = build_all(req, args, cluster_swept ? nullptr : &discovered.cluster);
    ScenarioSpec spec = point_of(req);
    spec.params = std::move(params);
    spec.cluster = b.cluster.topology;
    spec.cluster_description = b.cluster.description;
    spec.fs = std::move(b.fs.spec);
    for (WorkloadBuild& w : b.workloads) spec.workloads.push_back(std::move(w.spec));
    plan.points.push_back(std::move(spec));
  }
  return plan;
}

}  // namespace sluice::scenario
