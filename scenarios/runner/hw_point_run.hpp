// HwPointRun: one ScenarioSpec on real hardware in this process
// (`sluice run --backend hw` on one machine): hw_backends' HwWorld with every
// node's services on their own threads, talking over loopback TCP, storage
// targets as directories of real chunk files under a fresh temporary
// directory (removed afterwards), every byte read verified.
//
// The same deployment as in simulation (fs_deployment.hpp), with these
// differences, which the results record:
// - the cluster topology only numbers the nodes: the machine is this one, so
//   the clients' chunk planner runs without a machine model (one loopback
//   rail; GPU buffers need hw_backends/cuda);
// - all client hosts of all workloads are added before the world starts
//   (HwWorld adds services only while stopped) and started workload by
//   workload, after every server registered;
// - metrics: every counter of the client hosts (per workload) and a fixed
//   list of the servers' counters; latency percentiles from the clients'
//   op_latency_ns samples; simulated_s NaN (null: nothing was simulated).
// Limits: a workload that has not finished after k_hw_max_workload_ns fails
// the run (the runner's per-point wall-clock limit also applies).
#pragma once

#include <string>
#include <string_view>

#include "base/run_marker.hpp"
#include "core/common/units.hpp"
#include "hw_backends/gpu_memory_ops.hpp"
#include "scenarios/scenario_spec.hpp"

namespace sluice::scenario {

// What a hardware run's clients' chunks took and where their GPU regions
// went (HwEnv's counters): a run's paths_taken; a cluster's nodes report them.
inline constexpr const char* k_hw_path_counters[] = {
    "client.chunks_direct",          "client.chunks_bounce",     "client.chunks_bounce_unregistered_gpu",
    "memory.gpu_region_peer_memory", "memory.gpu_region_bounce", "memory.gpu_peer_memory_fallback"};
// result.paths_taken ("direct", "bounce") from result.counters.
void set_paths_taken(RunResult& result);

// Server counters a hardware run records (HwWorld sums a counter by name over
// its services; it cannot list them); the cluster path's nodes report them too.
inline constexpr const char* k_hw_server_counters[] = {"storage.read_bytes",
                                                       "storage.write_bytes",
                                                       "storage.requests",
                                                       "storage.again_replies",
                                                       "storage.crc_mismatches",
                                                       "storage.egress_throttled_ns",
                                                       "meta.requests",
                                                       "meta.create_ops",
                                                       "meta.stat_ops",
                                                       "meta.mkdir_ops",
                                                       "meta.unlink_ops",
                                                       "meta.readdir_entries",
                                                       "rpc.retries"};

inline constexpr TimeNs k_hw_max_workload_ns = 3600 * k_ns_per_s;
inline constexpr TimeNs k_hw_max_registration_ns = 60 * k_ns_per_s;

// A hardware run's directory: <temp_root>/sluice-hw-run-XXXXXX, marked with
// its owner (base/run_marker.hpp) so a run that died is swept later.
inline constexpr std::string_view k_hw_run_dir_prefix = "sluice-hw-run-";

// That directory, made under `root` and removed on destruction unless kept;
// path() is empty when it could not be made.
// Why `transport` (a registered transport's name) cannot move chunks straight
// into GPU memory (GPU-direct, GdsMode on/auto), "" when it can.
std::string gpu_unreachable_by(const std::string& transport);

class HwRunDir {
 public:
  HwRunDir(const std::string& root, bool keep);
  const std::string& path() const { return dir_.path(); }

 private:
  base::RunDir dir_;  // kept (and marked so: no sweep removes it) or removed at the end
};

struct HwRunOptions {
  std::string transport = "tcp";
  std::string storage_backend = "posix";
  std::string temp_root = "/tmp";  // where the run's chunk-file directory is made
  // `sluice run --keep`: leave the run's directory (chunk files under
  // storage/) in temp_root for inspection; its path is in the run's log.
  bool keep = false;
  // Authentication of the nodes' connections (docs/reliability.md#security):
  // empty: a fresh random secret per run (transports/shared_secret.hpp);
  // else this one (--shared-secret-file). insecure: none at all (benchmarks
  // of the bare transport; the run's results say so). The shm transport
  // talks over local sockets only and takes no secret.
  std::string shared_secret;
  bool insecure = false;
  // The metadata servers' store: "rocksdb" (durable, under the run's
  // directory, meta/node<N>-shard<S>; every mutation fsynced when
  // meta_sync_writes) or "memory". A build without RocksDB falls back to
  // memory and says so in the run's log.
  std::string meta_store = "rocksdb";
  bool meta_sync_writes = true;
  std::uint64_t node_memory_limit_bytes = 2ULL << 30;
  // GPU memory for workloads' GPU buffers (HwWorldConfig::gpu_memory):
  // hw_backends/cuda's operations in `sluice run`; nullptr: a GPU buffer
  // fails to allocate with the reason.
  const hw::GpuMemoryOps* gpu_memory = nullptr;
};

class HwPointRun {
 public:
  // Never throws; a failure is ok = false with the reason.
  static RunResult run(const ScenarioSpec& spec, const HwRunOptions& options = {});
};

}  // namespace sluice::scenario
