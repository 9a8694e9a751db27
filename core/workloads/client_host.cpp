#include "core/workloads/client_host.hpp"

namespace sluice {

ClientHost::ClientHost(Env& env, ClientHostConfig config, std::unique_ptr<Workload> workload)
    : env_(env), config_(std::move(config)), client_(env_, ops_, config_.client), workload_(std::move(workload)) {}

std::string ClientHost::name() const {
  return "client:" + std::to_string(config_.rank) + (workload_ ? "/" + workload_->name() : std::string());
}

void ClientHost::start() {
  client_.start([this](Status ready) {
    if (!ready.ok()) return finish(ready);
    if (!workload_) return finish(ok_status());
    context_ = std::make_unique<WorkloadContext>(WorkloadContext{env_, client_, ops_, client_.rpc(), config_.rank,
                                                                 config_.ranks, config_.barrier, config_.gpu,
                                                                 config_.host_numa});
    workload_->start(*context_, [this](Status s) { finish(std::move(s)); });
  });
}

void ClientHost::on_event(Event& event) {
  // Every completion and reply of the host goes through the client's op table
  // and request channel; anything else addressed to a client host is dropped.
  client_.handle(event);
}

void ClientHost::finish(Status status) {
  if (result_) return;
  if (!status.ok()) env_.log(LogLevel::error, name() + " failed: " + status.to_string());
  result_ = std::move(status);
  finished_at_ns_ = env_.now();
  env_.metrics().count(result_->ok() ? "host.finished_ok" : "host.finished_failed", 1);
}

}  // namespace sluice
