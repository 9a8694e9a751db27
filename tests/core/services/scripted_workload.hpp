// A workload that runs a test-provided script against the client, for
// service tests that need a precise sequence of calls.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <variant>

#include "core/workloads/workload.hpp"

namespace sluice::testing {

class Scripted final : public Workload {
 public:
  using Script = std::function<void(WorkloadContext&, std::function<void(Status)>)>;
  explicit Scripted(Script script) : script_(std::move(script)) {}
  std::string name() const override { return "scripted"; }
  void start(WorkloadContext& ctx, std::function<void(Status)> done) override { script_(ctx, std::move(done)); }

 private:
  Script script_;
};

// A fault matcher for one message type.
template <typename M>
std::function<bool(const Endpoint&, const Endpoint&, const proto::Message&)> is_a() {
  return [](const Endpoint&, const Endpoint&, const proto::Message& m) { return std::holds_alternative<M>(m); };
}

}  // namespace sluice::testing
