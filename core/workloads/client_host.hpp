// ClientHost: the service that runs one workload rank on a client node.
// It owns the Client (the file-system library) and the Workload, starts the
// client, then the workload, and records when and how the workload ended.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/env.hpp"
#include "core/services/client.hpp"
#include "core/workloads/workload.hpp"

namespace sluice {

struct ClientHostConfig {
  ClientConfig client;
  std::uint32_t rank = 0;
  std::uint32_t ranks = 1;
  Endpoint barrier;
  std::uint16_t gpu = 0;
  std::vector<std::uint16_t> host_numa;  // WorkloadContext::host_numa
};

class ClientHost final : public Service {
 public:
  ClientHost(Env& env, ClientHostConfig config, std::unique_ptr<Workload> workload);

  void start() override;
  void on_event(Event& event) override;
  std::string name() const override;

  bool finished() const { return result_.has_value(); }
  // The workload's final status (valid once finished()).
  const Status& result() const { return *result_; }
  TimeNs finished_at_ns() const { return finished_at_ns_; }
  Client& client() { return client_; }

 private:
  void finish(Status status);

  Env& env_;
  ClientHostConfig config_;
  OpTable ops_;
  Client client_;
  std::unique_ptr<Workload> workload_;
  std::unique_ptr<WorkloadContext> context_;
  std::optional<Status> result_;
  TimeNs finished_at_ns_ = 0;
};

}  // namespace sluice
