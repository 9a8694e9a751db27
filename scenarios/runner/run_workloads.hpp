// The one run loop of a point, for every world a point runs in (sim::SimRuntime,
// hw::HwWorld): deploy the spec's file system, bring its servers up, run the
// workloads one after the other with sl.run's faults, read each one's phase
// rows, and say why the point failed ("" when it did not).
//
// What differs between worlds is said by PointSite<World>, specialised beside
// each world's point run (sim_point_run.cpp, hw_point_run.cpp):
//   using FaultWorld = ...;                   // what faults::run_with_faults drives
//   static constexpr TimeNs k_fault_slice_ns;  // how often the fault loop looks at the workload
//   World& world();
//   FaultWorld* fault_world();                // nullptr: this run has no faults
//   Result<FsDeployment> deploy(const ScenarioSpec&);
//   std::string bring_up(const FsDeployment&, std::vector<WorkloadRun>&);
//       every server registered with mgmt; where the world needs its services
//       before it starts (HwWorld), the workloads' ranks are made here too
//   std::vector<ClientHost*> begin(const FsDeployment&, WorkloadRun&, std::size_t index);  // its ranks, running
//   std::string wait(const std::function<bool()>& all_finished);
//       "" once all_finished() holds, else why not (follows "did not finish")
//   void end(const FsDeployment&, WorkloadRun&, std::size_t index, RunResult&);
//       after the wait, finished or not: the workload's phase rows where the
//       world can read them now
//   bool finished(ClientHost&); Status status(ClientHost&); std::string name(ClientHost&);
//   void finish(const FsDeployment&, std::vector<WorkloadRun>&, std::size_t ran, RunResult&);
//       after the last workload that ran (`ran` of them): the world's own
//       counters, rows not read in end(), its log tail
//
// Faults: the plan starts with the first workload, its times from then; the
// changes are applied at their times while workloads run, and what the plan
// still holds after its last change lasts to the end of the run.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/common/assert.hpp"
#include "core/faults/fault_driver.hpp"
#include "core/faults/world_fault_control.hpp"
#include "scenarios/runner/fault_directory.hpp"
#include "scenarios/runner/fs_deployment.hpp"
#include "scenarios/runner/runner.hpp"
#include "scenarios/runner/workload_run.hpp"

namespace sluice::scenario {

template <class World>
class PointSite;

// Ranks of a workload that did not finish or failed, at most this many named.
inline constexpr std::size_t k_ranks_named_in_error = 3;

namespace detail {

// Why the workload failed on its ranks ("" when none did).
template <class Site>
std::string rank_failures(Site& site, const std::vector<ClientHost*>& hosts) {
  std::size_t failed = 0;
  std::string failures;
  for (ClientHost* h : hosts) {
    const Status s = site.status(*h);
    if (!s.ok() && failed++ < k_ranks_named_in_error) failures += "; " + site.name(*h) + ": " + s.to_string();
  }
  if (failed == 0) return "";
  return "failed on " + std::to_string(failed) + " of " + std::to_string(hosts.size()) + " ranks" + failures;
}

template <class Site>
std::string unfinished_ranks(Site& site, const std::vector<ClientHost*>& hosts) {
  std::string named;
  std::size_t listed = 0;
  for (ClientHost* h : hosts) {
    if (!site.finished(*h) && listed++ < k_ranks_named_in_error) named += "; " + site.name(*h) + " not finished";
  }
  return named;
}

// sl.run's faults over the workload at `index` (started with the first).
template <class Site>
class PointFaults {
 public:
  using Control = faults::WorldFaultControl<typename Site::FaultWorld>;

  std::string begin(const ScenarioSpec& spec, Site& site, const FsDeployment& fs, std::size_t index,
                    const std::vector<ClientHost*>& hosts) {
    if (index != 0 || spec.faults.faults.empty()) return "";
    SLUICE_ASSERT_MSG(site.fault_world() != nullptr, "a run with faults has a fault world");
    Result<faults::FaultDriver> created = fault_driver_from(spec.faults, site.world().now());
    if (!created.ok()) return "fault plan: " + created.status().message();
    driver_.emplace(std::move(created).value());
    control_.emplace(*site.fault_world(), fault_directory(fs, site.world(), hosts));
    return "";
  }

  // Runs the plan's changes due while the workload runs; "" or what the plan did wrong.
  std::string run(Site& site, const std::function<bool()>& all_finished, RunResult& result) {
    if (!driver_ || driver_->next_change_ns() < 0) return "";
    faults::run_with_faults(*site.fault_world(), *driver_, *control_, all_finished,
                            driver_->plan().last_change_ns() + 1, Site::k_fault_slice_ns);
    result.counters["faults.changes_applied"] = static_cast<double>(driver_->changes_applied());
    return driver_->errors().empty() ? "" : "fault plan: " + driver_->errors().front();
  }

 private:
  std::optional<faults::FaultDriver> driver_;
  std::optional<Control> control_;
};

// Runs workload `index`; "" or why the point fails.
template <class Site>
std::string run_one(const ScenarioSpec& spec, Site& site, const FsDeployment& fs, std::vector<WorkloadRun>& runs,
                    std::size_t index, PointFaults<Site>& faults, RunResult& result) {
  WorkloadRun& run = runs[index];
  const std::vector<ClientHost*> hosts = site.begin(fs, run, index);
  auto all_finished = [&] {
    for (ClientHost* h : hosts) {
      if (!site.finished(*h)) return false;
    }
    return true;
  };
  if (std::string why = faults.begin(spec, site, fs, index, hosts); !why.empty()) return why;
  if (std::string why = faults.run(site, all_finished, result); !why.empty()) return why;
  const std::string unfinished = site.wait(all_finished);
  site.end(fs, run, index, result);
  const std::string what = "workload \"" + run.spec().label + "\"";
  if (!unfinished.empty()) return what + " did not finish" + unfinished + unfinished_ranks(site, hosts);
  if (std::string failures = rank_failures(site, hosts); !failures.empty()) return what + " " + failures;
  return "";
}

}  // namespace detail

// Runs the point's workloads in `site`'s world; "" or why the point failed.
template <class World>
std::string run_workloads(const ScenarioSpec& spec, PointSite<World>& site, RunResult& result) {
  using Site = PointSite<World>;
  std::vector<WorkloadRun> runs;
  runs.reserve(spec.workloads.size());
  for (std::size_t index = 0; index < spec.workloads.size(); ++index) {
    Result<WorkloadRun> made = WorkloadRun::create(spec.workloads[index], index, *spec.cluster);
    if (!made.ok()) return made.status().message();
    runs.push_back(std::move(made).value());
  }
  Result<FsDeployment> deployed = site.deploy(spec);
  if (!deployed.ok()) return deployed.status().to_string();
  const FsDeployment& fs = *deployed;
  if (std::string why = site.bring_up(fs, runs); !why.empty()) return why;

  detail::PointFaults<Site> faults;
  std::string why;
  std::size_t ran = 0;
  while (ran < runs.size() && why.empty()) {
    why = detail::run_one(spec, site, fs, runs, ran, faults, result);
    ++ran;
  }
  site.finish(fs, runs, ran, result);
  return why;
}

}  // namespace sluice::scenario
