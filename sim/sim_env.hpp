// SimEnv: the Env of one service in a simulated run (core/env.hpp).
//
// Every operation becomes SimGrid work on the modelled machine; no bytes
// exist, only sizes (docs/design.md#the-three-worlds):
// - send: a communication of proto::encoded_size(message) +
//   profile.message_overhead_bytes bytes from the sender's node to the
//   receiver's (host memory of NUMA 0, the node's first cabled NIC); between
//   two services of one node, profile.local_message_latency_ns and no link.
// - transfer: a communication on the route between the two memories the
//   handles name (GPU N -> that GPU, host/pinned on NUMA n -> that socket's
//   host memory) through the chosen NICs (src_nic/dst_nic; k_no_id = the
//   node's first cabled NIC); on one node, a copy on the machine's own route
//   (no NIC); within one memory, bytes / same_location_copy_bytes_per_s.
// - storage_io: the profile's per-request latency (a delay that does not
//   occupy the drive), then a disk read/write on the target's NVMe of the
//   bytes plus the per-request occupancy expressed as bytes at the drive's
//   rate (sim_profile.hpp says why and where the numbers come from). Object
//   sizes are tracked so reads past the end and stat answer as on hardware.
//   remove/stat take the metadata latency.
// - compute: an execution of cost_ns_per_unit[kind] x units flops on the
//   node's CPU host (1 flop = 1 ns); a service's computes run one at a time
//   (FIFO), services of one node share its cores. workload_step is
//   accelerator time: a delay, no CPU.
// - timer: a kernel timer.
// - checksum / fill / verify: range checked, then bytes /
//   memory_op_bytes_per_s; Completion.crc_valid is false, and verify cannot
//   find corruption (there are no bytes).
// - alloc/free: bookkeeping per node against node_memory_limit_bytes.
// Errors found at once (bad range, unknown target) still complete later as
// a Completion, as the contract requires.
#pragma once

#include <string>
#include <string_view>

#include "core/env.hpp"

namespace sluice::sim {

class SimRuntime;
struct ServiceSlot;

class SimEnv final : public Env, public Metrics {
 public:
  SimEnv(SimRuntime& runtime, ServiceSlot& slot, Endpoint self, Rng rng)
      : runtime_(runtime), slot_(slot), self_(self), rng_(rng) {}

  Endpoint self() const override { return self_; }
  TimeNs now() const override;
  TimeNs wall_ns() const override { return k_virtual_wall_epoch_ns + now(); }
  Rng& rng() override { return rng_; }
  Metrics& metrics() override { return *this; }
  void log(LogLevel level, std::string_view message) override;

  [[nodiscard]] Status send(Endpoint to, proto::Message message) override;
  OpId transfer(const TransferSpec& spec) override;
  OpId storage_io(const StorageIoSpec& spec) override;
  OpId compute(CostKind kind, std::uint64_t units) override;
  OpId timer(TimeNs delay_ns) override;
  OpId checksum(const MemHandle& range) override;
  OpId fill(const MemHandle& range, const PatternSpec& pattern) override;
  OpId verify(const MemHandle& range, const PatternSpec& pattern) override;
  Result<MemHandle> alloc(MemKind kind, std::uint16_t device, std::uint64_t bytes) override;
  void free(const MemHandle& region) override;
  Result<MemHandle> open_window(const MemHandle& range) override;
  void close_window(const MemHandle& window) override;

  void count(std::string_view name, double delta) override;
  void sample(std::string_view name, double value) override;

 private:
  SimRuntime& runtime_;
  ServiceSlot& slot_;
  Endpoint self_;
  Rng rng_;
};

}  // namespace sluice::sim
