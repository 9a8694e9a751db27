#include "scenarios/mount/mount_client.hpp"

#include "core/common/assert.hpp"

namespace sluice::mount {

void MountWorkload::start(WorkloadContext& context, std::function<void(Status)> done) {
  context_ = &context;
  done_ = std::move(done);
  ready_.store(true);
}

WorkloadContext& MountWorkload::context() {
  SLUICE_ASSERT(context_ != nullptr);  // used only once the client reached its cluster
  return *context_;
}

void MountWorkload::finish(Status status) {
  if (!done_) return;
  auto done = std::move(done_);
  done_ = nullptr;
  done(std::move(status));
}

Status run_mount_client(const MountedClient& client, const MountOptions& options, TimeNs max_wait_ns,
                        const std::function<void(std::string_view)>& log) {
  hw::HwWorld& world = client.world;
  ClientHost& host = client.host;
  MountWorkload& workload = client.workload;
  world.start_service(host);
  const bool reached = world.wait_until(
      [&] { return workload.ready() || world.call(host, [&host] { return host.finished(); }); }, max_wait_ns);
  if (!workload.ready()) {
    const Status why = world.call(host, [&host] { return host.finished() ? host.result() : Status{}; });
    return error(reached ? why.code() : StatusCode::timed_out,
                 "mount: the client could not reach its cluster" +
                     (reached ? ": " + why.message()
                              : " within " + std::to_string(max_wait_ns / k_ns_per_s) + " s (mgmt unreachable?)") +
                     "; nothing was mounted at " + options.mount_point);
  }
  ClientPort port;
  port.post = [&world, &host, &workload](std::function<void(Client&, Env&)> fn) {
    world.post(host, [&workload, fn = std::move(fn)] { fn(workload.context().client, workload.context().env); });
  };
  port.resolve = [&world, node = client.node](const MemHandle& h) -> Result<std::span<std::byte>> {
    hw::HwNode* n = world.node(node);
    if (n == nullptr) return error(StatusCode::internal, "mount: no node " + std::to_string(node));
    return n->resolve(h, "mount buffer");
  };
  Status served = serve_mount(options, port, [&] {
    if (log) log("mounted at " + options.mount_point);
  });
  if (log) log("mount at " + options.mount_point + " ended: " + served.to_string());
  world.post(host, [&workload, served] { workload.finish(served); });
  world.wait_until([&] { return world.call(host, [&host] { return host.finished(); }); }, 10 * k_ns_per_s);
  return served;
}

}  // namespace sluice::mount
