// The faults' view of a deployed file system (core/faults/world_fault_control.hpp):
// which endpoint is "storage:3", which node holds "target:5", who the clients
// are. One function for every world the runner deploys on (SimRuntime,
// HwWorld): each has endpoint_of(service) and node_of_target(target).
#pragma once

#include <vector>

#include "core/faults/fault_driver.hpp"
#include "core/faults/world_fault_control.hpp"
#include "scenarios/runner/fs_deployment.hpp"

namespace sluice::scenario {

// Clients are the ranks of the workload the plan starts with (`hosts`).
template <class World>
faults::FaultDirectory fault_directory(const FsDeployment& fs, World& world, const std::vector<ClientHost*>& hosts) {
  faults::FaultDirectory d;
  d.mgmt.push_back(fs.mgmt());
  for (const MetaService* m : fs.metas()) d.meta.push_back(world.endpoint_of(*m));
  for (const StorageService* s : fs.storages()) d.storage.push_back(world.endpoint_of(*s));
  for (const ClientHost* h : hosts) d.client.push_back(world.endpoint_of(*h));
  for (TargetId t : fs.targets()) {
    d.target_node[t] = world.node_of_target(t);
    for (const Endpoint& ep : d.storage) {
      if (ep.node == d.target_node[t]) d.target_server[t] = ep;
    }
  }
  return d;
}

// sl.run's plan, its times made absolute from t0_ns (when the first workload
// starts), as a driver; invalid_argument when the plan does not validate.
inline Result<faults::FaultDriver> fault_driver_from(faults::FaultPlan plan, TimeNs t0_ns) {
  for (faults::Fault& f : plan.faults) f.at_ns += t0_ns;
  return faults::FaultDriver::create(std::move(plan));
}

}  // namespace sluice::scenario
