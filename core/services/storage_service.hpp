// Storage server (BeeGFS beegfs-storage, a Lustre OSS): owns storage targets
// and serves chunk requests on them.
//
// ReadChunk:  storage_io(read) target -> staging buffer, then transfer staging
//             -> the client's memory handle along the rail the client chose
//             (RDMA WRITE when the client asked for a direct path, a stream
//             otherwise), then ChunkReply{bytes, crc32c of what was read}.
// WriteChunk: transfer client memory -> staging (RDMA READ or stream),
//             checksum the staging bytes against the client's CRC32C,
//             storage_io(write) staging -> target, then ChunkReply.
//
// Limits, per target: at most max_active requests at the device (the queue
// depth) and max_queued waiting behind them; a request beyond that is answered
// `again` (back-pressure: the client backs off and retries). Staging memory is
// bounded by staging_budget_bytes. Egress (reads leaving this server) can be
// capped by a token bucket from core/sched so that many clients cannot congest
// this server's port (SEEDS.md section 5, NVMesh).
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "core/env.hpp"
#include "core/sched/token_bucket.hpp"
#include "core/services/rpc.hpp"

namespace sluice {

struct StorageServiceConfig {
  Endpoint mgmt;
  std::vector<TargetId> targets;
  std::uint64_t target_capacity_bytes = 1 * k_tib;
  std::uint32_t max_active_per_target = 8;     // requests at the device at once (queue depth)
  std::uint32_t max_queued_per_target = 256;   // waiting requests; more are answered `again`
  std::uint64_t staging_budget_bytes = 512 * k_mib;
  std::uint16_t staging_numa = 0;              // NUMA node of the staging buffers
  std::uint32_t server_nic = k_no_id;          // default NIC when the client names none
  double egress_limit_bytes_per_s = 0;         // 0 = no egress rate limit
  std::uint64_t egress_burst_bytes = 4 * k_mib;
  TimeNs heartbeat_interval_ns = 0;            // 0 = no heartbeats
  RpcLimits rpc;
};

class StorageService final : public Service {
 public:
  StorageService(Env& env, StorageServiceConfig config);

  void start() override;
  void on_event(Event& event) override;
  std::string name() const override;

  bool registered() const { return registered_targets_ == config_.targets.size(); }
  std::uint64_t requests_served() const { return requests_served_; }
  std::uint64_t again_replies() const { return again_replies_; }

 private:
  struct Request {
    Endpoint from;
    proto::Message message;  // ReadChunk or WriteChunk
  };
  struct TargetState {
    std::uint32_t active = 0;
    std::deque<Request> queued;
  };

  void handle(Endpoint from, proto::Message& message);
  void admit(Endpoint from, proto::Message& message, TargetId target);
  void pump(TargetId target);
  void run_read(TargetId target, Endpoint from, const proto::ReadChunk& m, MemHandle staging);
  void run_write(TargetId target, Endpoint from, const proto::WriteChunk& m, MemHandle staging);
  void finish(TargetId target, Endpoint to, proto::ChunkReply reply, std::optional<MemHandle> staging);
  void remove_chunks(Endpoint from, const proto::RemoveChunks& m);
  void heartbeat();
  bool owns(TargetId target) const;

  Env& env_;
  StorageServiceConfig config_;
  OpTable ops_;
  RpcClient rpc_;
  std::map<TargetId, TargetState> targets_;
  std::map<TargetId, std::uint64_t> used_bytes_;                 // sum of object sizes per target
  std::map<std::pair<TargetId, FileId>, std::uint64_t> object_bytes_;
  std::uint64_t staging_in_use_bytes_ = 0;
  std::optional<sched::TokenBucket> egress_;
  Status egress_error_;
  TimeNs egress_reserved_ns_ = 0;  // start of the last reserved egress slot  // why the configured egress limit could not be applied
  std::size_t registered_targets_ = 0;
  std::uint64_t requests_served_ = 0;
  std::uint64_t again_replies_ = 0;
  std::uint64_t heartbeat_sequence_ = 0;
};

}  // namespace sluice
