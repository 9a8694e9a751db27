// From one sl.run{...} to the ScenarioSpec of every sweep point.
//
// Axes: every scalar field given a list in the cluster, file system or
// workloads (threads = {1, 8, 32}), in that order, then the entries of
// sl.run's sweep table in name order (sweep = { threads = {...} } applies to
// every object that has the field). Points are the cartesian product, the
// last axis varying fastest; each point rebuilds the objects an axis touches
// with that axis's value and reuses the others. Each point's params are the
// script's parameter values plus one entry per axis.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "scenarios/lua/script_value.hpp"
#include "scenarios/scenario_spec.hpp"

namespace sluice::scenario {

// Points one sl.run may produce.
inline constexpr std::size_t k_max_sweep_points = 100'000;

struct RunRequest {
  std::string scenario;
  std::map<std::string, std::string> params;  // sl.params values, then sl.run's params = {...}
  std::string label;                          // sl.run's label
  std::shared_ptr<const ScriptObject> cluster;
  std::shared_ptr<const ScriptObject> fs;
  std::vector<std::shared_ptr<const ScriptObject>> workloads;
  std::vector<std::pair<std::string, ScriptValue>> sweep;  // sl.run's sweep table, by name
  std::uint64_t seed = 1;
  std::vector<Backend> backends = {Backend::sim};
  std::string sim_profile = "default";
  bool sim_coalesce = false;
  SimMode sim_mode = SimMode::chunk;
  std::uint64_t max_events = 2'000'000'000;
  faults::FaultPlan faults;  // sl.run's faults (fault_plan_reader.hpp)
};

struct SweepAxis {
  std::string name;
  std::vector<ScriptValue> values;
  std::vector<std::pair<std::size_t, std::string>> targets;  // (object: 0 cluster, 1 fs, 2+i workload i; field)
};

struct PointPlan {
  std::vector<SweepAxis> axes;
  std::vector<ScenarioSpec> points;
};

// Throws ScriptError; errors in an object carry the place it was made.
PointPlan plan_points(const RunRequest& request);

}  // namespace sluice::scenario
