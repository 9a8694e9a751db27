// The client side of a mount inside a multi-process deployment
// (scenarios/deploy/node_runner.cpp, workload kind "mount"): a ClientHost
// whose workload is MountWorkload, and run_mount_client, which serves the
// FUSE mount (fuse_mount.hpp) through that host's Client until the mount
// ends.
#pragma once

#include <atomic>
#include <functional>
#include <string_view>

#include "core/workloads/client_host.hpp"
#include "core/workloads/workload.hpp"
#include "hw/hw_world.hpp"
#include "scenarios/mount/fuse_mount.hpp"

namespace sluice::mount {

// The workload of a mounting client: started once the Client has reached
// its cluster (registered, maps fetched), it does nothing itself and ends
// when the mount does (finish()).
class MountWorkload final : public Workload {
 public:
  void start(WorkloadContext& context, std::function<void(Status)> done) override;
  std::string name() const override { return "mount"; }
  // Any thread: the Client is usable.
  bool ready() const { return ready_.load(); }
  // Loop thread: the context of the running workload (asserted ready).
  WorkloadContext& context();
  // Loop thread: the workload ends with status (once).
  void finish(Status status);

 private:
  std::atomic<bool> ready_{false};
  WorkloadContext* context_ = nullptr;
  std::function<void(Status)> done_;
};

struct MountedClient {
  hw::HwWorld& world;
  ClientHost& host;
  MountWorkload& workload;
  NodeId node = 0;
};

// Waits up to max_wait_ns for the client to reach its cluster (a clear
// error, not a hanging mount point, when it cannot), serves the mount until
// it is unmounted or signalled, then ends the workload.
Status run_mount_client(const MountedClient& client, const MountOptions& options, TimeNs max_wait_ns,
                        const std::function<void(std::string_view)>& log);

}  // namespace sluice::mount
