// FaultControl over a world's own fault primitives, and the loop that runs a
// world while a FaultDriver applies its plan.
//
// A deployment (tests/soak's cluster, scenarios/runner's FsDeployment) knows
// which endpoint is "storage:3" and which targets it serves; it writes that
// into a FaultDirectory. WorldFaultControl<World> then resolves subjects
// through the directory and calls the world's primitives: the
// FaultPrimitives concept of core/world.hpp, which TestWorld, sim::SimRuntime
// and the hardware run's HwFaultWorld satisfy. A setter that refuses a fault
// (HwWorld cannot slow a real disk) returns the refusal, which reaches the
// driver's errors. This header includes no world: the dependency rule holds
// (core/ names no other folder).
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "core/common/ids.hpp"
#include "core/faults/fault_control.hpp"
#include "core/faults/fault_driver.hpp"
#include "core/faults/random_fault_plan.hpp"
#include "core/world.hpp"

namespace sluice::faults {

// Who is who in a deployment, for resolving fault subjects.
struct FaultDirectory {
  std::vector<Endpoint> mgmt;  // index 0 is "mgmt"
  std::vector<Endpoint> meta;  // by shard: "meta:N"; mirrored shards: "meta:S+N" is shard N's second server (S shards)
  std::vector<Endpoint> storage;               // in deployment order: "storage:N"
  std::vector<Endpoint> client;                // by rank: "client:N"
  std::map<TargetId, Endpoint> target_server;  // every target and the storage service serving it
  std::map<TargetId, NodeId> target_node;

  Result<Endpoint> service(const FaultSubject& subject) const {
    if (subject.kind != SubjectKind::service) {
      return error(StatusCode::invalid_argument, subject.to_string() + " is not a service");
    }
    const std::vector<Endpoint>* list = &mgmt;
    switch (subject.role) {
      case Role::mgmt: break;
      case Role::meta: list = &meta; break;
      case Role::storage: list = &storage; break;
      case Role::client: list = &client; break;
    }
    if (subject.index >= list->size()) {
      return error(StatusCode::not_found, subject.to_string() + ": the deployment has " + std::to_string(list->size()) +
                                              " " + std::string(to_string(subject.role)) + " service(s)");
    }
    const Endpoint ep = (*list)[subject.index];
    if (!ep.valid()) {
      return error(StatusCode::unavailable, subject.to_string() + ": its service is not known yet (only its node)");
    }
    return ep;
  }

  Result<NodeId> node_of(const FaultSubject& subject) const {
    switch (subject.kind) {
      case SubjectKind::node: {
        for (NodeId n : nodes()) {
          if (n == subject.index) return n;
        }
        return error(StatusCode::not_found, subject.to_string() + ": no service of the deployment is on that node");
      }
      case SubjectKind::target: {
        auto it = target_node.find(subject.index);
        if (it == target_node.end()) return error(StatusCode::not_found, subject.to_string() + ": no such target");
        return it->second;
      }
      case SubjectKind::service: {
        const std::vector<Endpoint>* lists[] = {&mgmt, &meta, &storage, &client};
        const auto& list = *lists[static_cast<std::size_t>(subject.role)];
        if (subject.index >= list.size()) return service(subject).status();
        return list[subject.index].node;  // known even where the endpoint is not (a client before launch)
      }
    }
    return error(StatusCode::internal, "fault subject of unknown kind");
  }

  // The targets a slow_disk subject names: one target, or all of a storage service's.
  Result<std::vector<TargetId>> targets(const FaultSubject& subject) const {
    if (subject.kind == SubjectKind::target) {
      if (target_node.count(subject.index) == 0) {
        return error(StatusCode::not_found, subject.to_string() + ": no such target");
      }
      return std::vector<TargetId>{subject.index};
    }
    Result<Endpoint> ep = service(subject);
    if (!ep.ok()) return ep.status();
    std::vector<TargetId> out;
    for (const auto& [t, server] : target_server) {
      if (server == *ep) out.push_back(t);
    }
    if (out.empty()) return error(StatusCode::not_found, subject.to_string() + " serves no target");
    return out;
  }

  // Every node that runs a service or holds a target, ascending.
  std::vector<NodeId> nodes() const {
    std::vector<NodeId> out;
    auto add = [&out](NodeId n) {
      for (NodeId o : out) {
        if (o == n) return;
      }
      out.push_back(n);
    };
    for (const auto* list : {&mgmt, &meta, &storage, &client}) {
      for (const Endpoint& ep : *list) add(ep.node);
    }
    for (const auto& [t, n] : target_node) add(n);
    std::sort(out.begin(), out.end());
    return out;
  }

  ClusterShape shape() const {
    ClusterShape s;
    s.meta_services = static_cast<std::uint32_t>(meta.size());
    s.storage_services = static_cast<std::uint32_t>(storage.size());
    s.client_services = static_cast<std::uint32_t>(client.size());
    s.nodes = nodes();
    for (const auto& [t, n] : target_node) s.targets.push_back(t);
    return s;
  }
};

// A primitive's result as a Status: ok for one that returns nothing.
template <class F>
Status status_of(F&& call) {
  if constexpr (std::is_same_v<decltype(call()), void>) {
    call();
    return ok_status();
  } else {
    return call();
  }
}

template <FaultPrimitives W>
class WorldFaultControl final : public FaultControl {
 public:
  WorldFaultControl(W& world, FaultDirectory directory) : world_(world), dir_(std::move(directory)) {}

  const FaultDirectory& directory() const { return dir_; }

  Result<NodeId> node_of(const FaultSubject& subject) const override { return dir_.node_of(subject); }

  Status kill(const FaultSubject& subject) override {
    Result<Endpoint> ep = dir_.service(subject);
    if (!ep.ok()) return ep.status();
    world_.kill(*ep);
    return ok_status();
  }

  Status revive(const FaultSubject& subject) override {
    Result<Endpoint> ep = dir_.service(subject);
    if (!ep.ok()) return ep.status();
    return world_.restart(*ep);
  }

  Status set_disk_slowdown(const FaultSubject& subject, double factor) override {
    Result<std::vector<TargetId>> targets = dir_.targets(subject);
    if (!targets.ok()) return targets.status();
    for (TargetId t : *targets) {
      if (Status s = status_of([&] { return world_.set_disk_slowdown(t, factor); }); !s.ok()) return s;
    }
    return ok_status();
  }

  Status set_partitions(const std::vector<std::vector<NodeId>>& partitions) override {
    return status_of([&] { return world_.set_partitions(partitions); });
  }

  Status set_message_faults(double loss_probability, TimeNs extra_delay_ns) override {
    return status_of([&] { return world_.set_message_faults(loss_probability, extra_delay_ns); });
  }

 private:
  W& world_;
  FaultDirectory dir_;
};

// Runs `world` until done() holds or the clock reaches deadline_ns, applying
// the driver's changes at their times (the world runs exactly up to each
// change, then the change is applied between events). done() is checked
// between slices of at most slice_ns. Returns done(). Errors of the driver
// are kept in driver.errors().
template <FaultPrimitives W>
bool run_with_faults(W& world, FaultDriver& driver, FaultControl& control, const std::function<bool()>& done,
                     TimeNs deadline_ns, TimeNs slice_ns) {
  // Bounded by time: every round advances the clock by > 0 or applies a change.
  while (!done() && world.now() < deadline_ns) {
    const TimeNs next = driver.next_change_ns();
    if (next >= 0 && next <= world.now()) {
      driver.apply_due(world.now(), control).ignore();  // kept in driver.errors()
      continue;
    }
    TimeNs until = std::min(deadline_ns, world.now() + slice_ns);
    if (next >= 0) until = std::min(until, next);
    world.run_for(until - world.now());
  }
  // A real-time world (HwEnv) sleeps past `until`: a change due just before
  // the deadline would be skipped by the loop's test. Apply what fell due
  // before the deadline.
  const TimeNs next = driver.next_change_ns();
  if (!done() && next >= 0 && next < deadline_ns) driver.apply_due(deadline_ns - 1, control).ignore();
  return done();
}

}  // namespace sluice::faults
