// Workload drivers: the programs that run on client nodes and drive the file
// system (elbencho-, mdtest-, DLIO-like and the seed studies' own patterns).
//
// A workload is hosted by a ClientHost service (one per client process/GPU
// rank): the host owns the Client and forwards it events; the workload issues
// client calls and its own Env operations (compute for accelerator steps,
// timers) through the context. Workloads report into the Env's metrics with
// units in the names ("<workload>.<phase>.bytes", "...elapsed_ns").
//
// Ranks: every ClientHost of a run has a rank in [0, ranks); workloads split
// their work by rank, and synchronise phases through the barrier service
// (core/workloads/barrier_service.hpp) as elbencho's master does, so the
// phases of different clients never overlap.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/env.hpp"
#include "core/services/client.hpp"
#include "core/services/rpc.hpp"

namespace sluice {

struct WorkloadContext {
  Env& env;
  Client& client;
  OpTable& ops;
  RpcClient& rpc;          // for barriers and other coordination messages
  std::uint32_t rank = 0;  // this host's rank among the workload's hosts
  std::uint32_t ranks = 1;
  Endpoint barrier;       // the barrier service (invalid: no synchronisation)
  std::uint16_t gpu = 0;  // the GPU this rank feeds, where the workload uses GPU memory
  // The NUMA nodes this rank's threads run on, where its host and pinned
  // buffers live (BufferPool spreads them in turn); empty: NUMA node 0.
  std::vector<std::uint16_t> host_numa;
};

// Where a rank's regions of `kind` live, in turn: its GPU, or its NUMA nodes
// (NUMA node 0 when none is given).
inline std::vector<std::uint16_t> buffer_devices(const WorkloadContext& context, MemKind kind) {
  if (kind == MemKind::gpu) return {context.gpu};
  if (context.host_numa.empty()) return {0};
  return context.host_numa;
}

// Where a rank's single region of `kind` lives: the first of its buffer_devices.
inline std::uint16_t home_device(const WorkloadContext& context, MemKind kind) {
  return buffer_devices(context, kind).front();
}

class Workload {
 public:
  virtual ~Workload() = default;
  // Runs the whole workload; done(status) exactly once at the end.
  virtual void start(WorkloadContext& context, std::function<void(Status)> done) = 0;
  virtual std::string name() const = 0;
};

}  // namespace sluice
