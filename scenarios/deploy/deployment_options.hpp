// DeploymentOptions: how the nodes of a multi-process deployment keep their
// data, authenticate and reach GPU memory, as `sluice run` takes them for
// --backend cluster (cluster_point_run.hpp) and --backend emulate
// (emulated_point_run.hpp): one set of options for the one path.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/common/status.hpp"
#include "hw_backends/gpu_memory_ops.hpp"
#include "scenarios/deploy/cluster_config.hpp"

namespace sluice::emulate {

struct DeploymentOptions {
  std::string storage_backend = "posix";
  std::string meta_store = "rocksdb";
  std::string transport = "tcp";                                                    // ClusterConfig::transport
  std::uint64_t node_memory_limit_bytes = ClusterConfig{}.node_memory_limit_bytes;  // each node's buffers
  bool insecure = false;           // no authentication (said in the results)
  std::string shared_secret_file;  // empty: rank 0 makes one per point and hands it out
  bool keep = false;               // keep each node's storage directory after the point
  // GPU memory for GPU buffers (NodeRunOptions::gpu_memory) and whether this
  // host can give it (ok, or why not: cuda::cuda_available). A point whose
  // workload puts its buffers in GPU memory fails on every rank, saying why,
  // when a client host has none. Empty: no GPU.
  const hw::GpuMemoryOps* gpu_memory = nullptr;
  std::function<Status()> gpu_available;
};

}  // namespace sluice::emulate
